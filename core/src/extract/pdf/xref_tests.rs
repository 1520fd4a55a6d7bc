//! Cross-reference sections read by ranges, and the pages and words of a PDF read so: tables,
//! cross-reference and object streams, incremental updates of either kind, broken and looping
//! sections, and how little of a file is read.

use std::fmt::Write as _;

use super::super::super::samples;
use super::super::super::{Counts, Limits, ReadAt};
use super::super::{large, read_pdf};
use super::{Entry, Objects};

/// A file in memory that counts what is read of it.
struct Counting<'a> {
    bytes: &'a [u8],
    read: u64,
    largest: usize,
}

impl<'a> Counting<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Counting {
            bytes,
            read: 0,
            largest: 0,
        }
    }
}

impl ReadAt for Counting<'_> {
    fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&mut self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let got = (&mut &self.bytes[..]).read_at(offset, len)?;
        self.read += got.len() as u64;
        self.largest = self.largest.max(got.len());
        Ok(got)
    }
}

/// [`samples::pdf`] with a cross-reference table (lopdf writes a stream by default).
fn table_pdf(pages: usize, words: usize) -> Vec<u8> {
    let mut doc = samples::build_pdf(pages, words);
    doc.reference_table.cross_reference_type = lopdf::xref::XrefType::CrossReferenceTable;
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save");
    assert!(out.windows(7).any(|w| w == b"trailer"), "a table");
    out
}

fn large(bytes: &[u8]) -> Counts {
    large::read_large(&mut Counting::new(bytes), &Limits::default())
}

fn counts(pages: u64, words: u64) -> Counts {
    Counts {
        pages: Some(pages),
        words: Some(words),
        text: None,
    }
}

/// A PDF of `objects` (`(number, body)`, in that order) with a cross-reference table and a
/// trailer of `trailer` entries.
fn handmade(objects: &[(u32, &str)], trailer: &str) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (number, body) in objects {
        offsets.push((*number, out.len()));
        out.extend_from_slice(format!("{number} 0 obj\n{body}\nendobj\n").as_bytes());
    }
    let size = objects.iter().map(|(n, _)| n + 1).max().unwrap_or(1);
    let xref = out.len();
    let mut table = format!("xref\n0 {size}\n0000000000 65535 f \n");
    for n in 1..size {
        match offsets.iter().find(|(m, _)| *m == n) {
            Some((_, at)) => writeln!(table, "{at:010} 00000 n ").expect("write"),
            None => table.push_str("0000000000 65535 f \n"),
        }
    }
    write!(
        table,
        "trailer\n<< /Size {size} {trailer} >>\nstartxref\n{xref}\n%%EOF\n"
    )
    .expect("write");
    out.extend_from_slice(table.as_bytes());
    out
}

/// `base` with an incremental update appended: a third page showing page 1's content, and
/// the page tree (the same object number) listing it; its section a table, or a
/// cross-reference stream.
fn updated(base: &[u8], as_stream: bool) -> Vec<u8> {
    let doc = lopdf::Document::load_mem(base).expect("a sample");
    let root = doc
        .trailer
        .get(b"Root")
        .and_then(lopdf::Object::as_reference)
        .expect("root");
    let tree = doc
        .catalog()
        .and_then(|c| c.get(b"Pages"))
        .and_then(lopdf::Object::as_reference)
        .expect("pages");
    let pages: Vec<_> = doc.get_pages().values().copied().collect();
    let content = doc.get_page_contents(pages[0])[0];
    let resources = doc
        .get_dictionary(tree)
        .and_then(|d| d.get(b"Resources"))
        .and_then(lopdf::Object::as_reference)
        .expect("resources");
    let prev = base
        .windows(9)
        .rposition(|w| w == b"startxref")
        .map(|at| {
            let digits: String = base[at + 9..]
                .iter()
                .skip_while(|c| c.is_ascii_whitespace())
                .take_while(|c| c.is_ascii_digit())
                .map(|&c| char::from(c))
                .collect();
            digits
        })
        .expect("startxref");
    let new_page = doc.max_id + 1;
    let kids: String = pages.iter().map(|p| format!("{} 0 R ", p.0)).collect();
    let mut out = base.to_vec();
    out.push(b'\n');
    let page_at = out.len();
    out.extend_from_slice(
        format!(
            "{new_page} 0 obj\n<< /Type /Page /Parent {} 0 R /Contents {} 0 R >>\nendobj\n",
            tree.0, content.0
        )
        .as_bytes(),
    );
    let tree_at = out.len();
    out.extend_from_slice(
        format!(
            "{} 0 obj\n<< /Type /Pages /Kids [{kids}{new_page} 0 R] /Count 3 /Resources {} 0 R \
             /MediaBox [0 0 612 792] >>\nendobj\n",
            tree.0, resources.0
        )
        .as_bytes(),
    );
    let section_at = out.len();
    if as_stream {
        let own = new_page + 1;
        let mut data = Vec::new();
        for at in [tree_at, page_at, section_at] {
            data.push(1u8);
            data.extend_from_slice(&u32::try_from(at).expect("small").to_be_bytes());
            data.extend_from_slice(&[0, 0]);
        }
        out.extend_from_slice(
            format!(
                "{own} 0 obj\n<< /Type /XRef /Size {} /W [1 4 2] /Index [{} 1 {new_page} 2] \
                 /Root {} 0 R /Prev {prev} /Length {} >>\nstream\n",
                own + 1,
                tree.0,
                root.0,
                data.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(&data);
        out.extend_from_slice(b"\nendstream\nendobj\n");
    } else {
        out.extend_from_slice(
            format!(
                "xref\n{} 1\n{tree_at:010} 00000 n \n{new_page} 1\n{page_at:010} 00000 n \n\
                 trailer\n<< /Size {} /Root {} 0 R /Prev {prev} >>\n",
                tree.0,
                new_page + 1,
                root.0
            )
            .as_bytes(),
        );
    }
    out.extend_from_slice(format!("startxref\n{section_at}\n%%EOF\n").as_bytes());
    out
}

#[test]
fn tables_and_streams_give_the_counts_a_whole_read_gives() {
    for (pages, words) in [(1, 5), (3, 57), (40, 300)] {
        for pdf in [table_pdf(pages, words), samples::pdf(pages, words)] {
            let whole = read_pdf(&pdf, &Limits::default()).counts;
            assert_eq!(large(&pdf), whole, "{pages} pages");
            assert_eq!(whole, counts(pages as u64, (pages * words) as u64));
        }
    }
}

#[test]
fn cross_reference_and_object_streams_are_read() {
    let mut doc = samples::build_pdf(4, 25);
    let mut pdf = Vec::new();
    doc.save_modern(&mut pdf).expect("save");
    let mut file = Counting::new(&pdf);
    let mut objects = Objects::open(&mut file, &Limits::default()).expect("sections");
    let root = objects.root.expect("a catalog");
    assert!(
        matches!(objects.entry(root), Entry::InStream { .. }),
        "the catalog is in an object stream"
    );
    assert_eq!(large(&pdf), counts(4, 100));
}

#[test]
fn the_newest_incremental_update_wins() {
    let table = table_pdf(2, 10);
    let stream = samples::pdf(2, 10);
    let mut modern = Vec::new();
    samples::build_pdf(2, 10)
        .save_modern(&mut modern)
        .expect("save");
    for (name, base) in [
        ("table", &table),
        ("xref stream", &stream),
        ("object streams", &modern),
    ] {
        assert_eq!(large(base), counts(2, 20), "{name} before");
        for as_stream in [false, true] {
            let pdf = updated(base, as_stream);
            assert_eq!(
                lopdf::Document::load_mem(&pdf)
                    .expect("lopdf reads it")
                    .get_pages()
                    .len(),
                3,
                "{name}, update as stream: {as_stream}"
            );
            assert_eq!(
                large(&pdf),
                counts(3, 30),
                "{name}, update as stream: {as_stream}"
            );
        }
    }
}

#[test]
fn little_of_a_large_file_is_read() {
    // Eight MiB no page shows, say the pictures of a print catalogue.
    let pdf = samples::pdf_with_filler(3, 20, 8 << 20);
    assert!(pdf.len() > 8 << 20);
    let mut file = Counting::new(&pdf);
    let got = large::read_large(&mut file, &Limits::default());
    assert_eq!(got, counts(3, 60));
    assert!(file.read < 256 * 1024, "read {} bytes", file.read);
    assert!(file.largest <= 1024 * 1024, "largest read {}", file.largest);
}

#[test]
fn fonts_are_read_once_for_all_pages() {
    let pdf = samples::pdf(40, 10);
    let found = large::pages_and_fonts(&mut Counting::new(&pdf), &Limits::default());
    assert_eq!(found, Some((40, 1)));
}

#[test]
fn words_past_the_limits_are_null_and_pages_stay() {
    let pdf = samples::pdf(5, 200);
    let limits = Limits {
        max_pdf_decoded: 1000,
        ..Limits::default()
    };
    let got = large::read_large(&mut Counting::new(&pdf), &limits);
    assert_eq!(got.pages, Some(5));
    assert_eq!(got.words, None);
}

#[test]
fn a_count_by_reference_and_a_looping_tree() {
    let count_by_reference = handmade(
        &[
            (1, "<< /Type /Catalog /Pages 2 0 R >>"),
            (2, "<< /Type /Pages /Kids [3 0 R] /Count 4 0 R >>"),
            (3, "<< /Type /Page /Parent 2 0 R >>"),
            (4, "1"),
        ],
        "/Root 1 0 R",
    );
    assert_eq!(large(&count_by_reference), counts(1, 0));
    // A node listed below itself: the page count stands, the walk for words stops.
    let looping = handmade(
        &[
            (1, "<< /Type /Catalog /Pages 2 0 R >>"),
            (2, "<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>"),
            (3, "<< /Type /Page /Parent 2 0 R >>"),
            (5, "<< /Type /Pages /Kids [5 0 R 3 0 R] /Count 1 >>"),
        ],
        "/Root 1 0 R",
    );
    assert_eq!(
        large(&looping),
        Counts {
            pages: Some(2),
            words: None,
            text: None,
        }
    );
}

#[test]
fn broken_files_give_null_counts() {
    let pdf = samples::pdf(2, 10);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "garbage",
            b"%PDF-1.7\n\x00\x01 not a PDF \xFF\n%%EOF\n".to_vec(),
        ),
        ("truncated", pdf[..pdf.len() / 2].to_vec()),
        (
            "no pages",
            handmade(&[(1, "<< /Type /Catalog >>")], "/Root 1 0 R"),
        ),
        (
            "offset past the end",
            [&pdf[..pdf.len() - 30], b"startxref\n99999999\n%%EOF\n"].concat(),
        ),
        (
            "a page tree without /Count",
            handmade(
                &[
                    (1, "<< /Type /Catalog /Pages 2 0 R >>"),
                    (2, "<< /Type /Pages >>"),
                ],
                "/Root 1 0 R",
            ),
        ),
    ];
    for (name, bytes) in cases {
        assert_eq!(large(&bytes), Counts::default(), "{name}");
    }
}

#[test]
fn a_prev_that_loops_ends_the_chain() {
    let pdf = table_pdf(2, 10);
    let at = pdf
        .windows(9)
        .rposition(|w| w == b"startxref")
        .expect("startxref");
    let offset: String = pdf[at + 9..]
        .iter()
        .skip_while(|c| c.is_ascii_whitespace())
        .take_while(|c| c.is_ascii_digit())
        .map(|&c| char::from(c))
        .collect();
    // The trailer names its own section as the one before it.
    let trailer = pdf
        .windows(7)
        .rposition(|w| w == b"trailer")
        .expect("trailer");
    let open = trailer
        + pdf[trailer..]
            .windows(2)
            .position(|w| w == b"<<")
            .expect("<<")
        + 2;
    let looped = [
        &pdf[..open],
        format!("/Prev {offset} ").as_bytes(),
        &pdf[open..],
    ]
    .concat();
    assert!(looped.windows(5).any(|w| w == b"/Prev"));
    assert_eq!(large(&looped).pages, Some(2));
}

#[test]
fn encrypted_files_count_pages_only() {
    let pdf = handmade(
        &[
            (1, "<< /Type /Catalog /Pages 2 0 R >>"),
            (2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
            (3, "<< /Type /Page /Parent 2 0 R >>"),
        ],
        "/Root 1 0 R /Encrypt << /Filter /Standard >>",
    );
    assert_eq!(
        large(&pdf),
        Counts {
            pages: Some(1),
            words: None,
            text: None,
        }
    );
}
