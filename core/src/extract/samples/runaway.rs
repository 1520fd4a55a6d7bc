//! PDFs that are small files and huge pages: each is a valid one-page PDF that passes the
//! pre-scan, and whose page takes a renderer minutes or gigabytes to draw unless its render
//! is bounded (see `extract::PdfRenderer`). The shapes outside checks sent.

use std::io::Write as _;

use flate2::Compression;
use flate2::write::ZlibEncoder;

use super::hostile::pdf_of_objects;

/// `content` compressed, as the body of a stream object with `dict` entries besides its
/// length and filter.
fn flate_stream(dict: &str, content: &[u8]) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::best());
    // Writing to a vector cannot fail.
    let _ = encoder.write_all(content);
    let packed = encoder.finish().unwrap_or_default();
    let mut body = format!(
        "<< /Length {} /Filter /FlateDecode{dict} >>\nstream\n",
        packed.len()
    )
    .into_bytes();
    body.extend_from_slice(&packed);
    body.extend_from_slice(b"\nendstream");
    body
}

/// A US Letter page drawn by `content` with `resources`, and the objects after it
/// (`extra`, from object 5 on): catalog, page tree, page, content.
fn page_of(resources: &str, content: &[u8], extra: Vec<Vec<u8>>) -> Vec<u8> {
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources {resources} \
             /Contents 4 0 R >>"
        )
        .into_bytes(),
        flate_stream("", content),
    ];
    objects.extend(extra);
    pdf_of_objects(&objects)
}

/// `levels` form XObjects, each drawing the next `fanout` times and the last a small square:
/// `fanout ^ levels` squares from a file of a few kilobytes (40 levels of 4 never end).
///
/// ```
/// let pdf = assetlib_core::extract::samples::pdf_nested_forms(40, 4);
/// assert!(pdf.len() < 16 * 1024);
/// ```
pub fn pdf_nested_forms(levels: usize, fanout: usize) -> Vec<u8> {
    let levels = levels.max(1);
    let calls = "/X Do ".repeat(fanout.max(1));
    let forms = (0..levels)
        .map(|i| {
            let last = i + 1 == levels;
            let (resources, content) = if last {
                (String::new(), "0 0 10 10 re f".to_owned())
            } else {
                (
                    format!(" /Resources << /XObject << /X {} 0 R >> >>", 6 + i),
                    calls.clone(),
                )
            };
            flate_stream(
                &format!(" /Type /XObject /Subtype /Form /BBox [0 0 612 792]{resources}"),
                content.as_bytes(),
            )
        })
        .collect();
    page_of("<< /XObject << /X 5 0 R >> >>", b"/X Do", forms)
}

/// `fills` full-page fills, each blended (`Multiply`) and half transparent.
pub fn pdf_blended_fills(fills: usize) -> Vec<u8> {
    let content = format!("/G gs {}", "0.5 0.2 0.9 rg 0 0 612 792 re f ".repeat(fills));
    page_of(
        "<< /ExtGState << /G << /BM /Multiply /ca 0.5 /CA 0.5 >> >> >>",
        content.as_bytes(),
        Vec::new(),
    )
}

/// One diagonal line stroked with a dash `dash` points long: millions of dashes.
pub fn pdf_fine_dash(dash: f64) -> Vec<u8> {
    let content = format!("[{dash}] 0 d 2 w 0 0 m 612 792 l S");
    page_of("<< >>", content.as_bytes(), Vec::new())
}

/// `count` graphics states saved and never restored.
pub fn pdf_saved_states(count: usize) -> Vec<u8> {
    page_of("<< >>", "q ".repeat(count).as_bytes(), Vec::new())
}

/// One path of `count` Bézier curves across the page, filled.
pub fn pdf_many_curves(count: usize) -> Vec<u8> {
    let mut content = String::from("0 0 m ");
    for i in 0..count {
        let x = (i * 37) % 612;
        let y = (i * 53) % 792;
        content.push_str(&format!("{x} {y} {} {} {} {} c ", 612 - x, y, x, 792 - y));
    }
    content.push('f');
    page_of("<< >>", content.as_bytes(), Vec::new())
}

/// Every runaway shape above at the size outside checks sent, named.
pub fn runaway_pdfs() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("nested forms", pdf_nested_forms(40, 4)),
        ("blended fills", pdf_blended_fills(5_000)),
        ("fine dash", pdf_fine_dash(0.0001)),
        ("saved states", pdf_saved_states(2_000_000)),
        ("many curves", pdf_many_curves(400_000)),
    ]
}
