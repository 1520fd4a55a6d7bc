//! Hostile PDFs: deep or looping page trees, outlines, arrays, dictionaries and `/Length`
//! chains, each a small complete file whose one page still carries words.

use super::sentence;

/// The words on the one page of each hostile PDF below.
const HOSTILE_WORDS: usize = 4;

/// A PDF's header and `objects` (object `n` is `objects[n - 1]`), each where the returned
/// offsets say.
fn objects_written(objects: &[Vec<u8>]) -> (Vec<u8>, Vec<usize>) {
    let mut out = b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    (out, offsets)
}

/// A PDF of the given objects, written as they are (object `n` is `objects[n - 1]`, object 1
/// the catalog) with a correct cross-reference table, so a reader parses every object: the
/// shapes below are ones `lopdf`'s writer would not make.
pub(super) fn pdf_of_objects(objects: &[Vec<u8>]) -> Vec<u8> {
    let (mut out, offsets) = objects_written(objects);
    let xref = out.len();
    let size = objects.len() + 1;
    out.extend_from_slice(format!("xref\n0 {size}\n0000000000 65535 f \n").as_bytes());
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
    );
    out
}

/// Objects 1 to 5 of a one-page PDF whose page tree `pdf_with_tree` adds from object 6 on:
/// the catalog (its page tree at object 6, and `catalog_extra` entries), a font, the resources
/// naming it, the page's content, and the page (its parent at `page_parent`).
fn one_page(page_parent: usize, catalog_extra: &str) -> Vec<Vec<u8>> {
    let text = format!("BT /F1 11 Tf 72 700 Td ({}) Tj ET", sentence(HOSTILE_WORDS));
    vec![
        format!("<< /Type /Catalog /Pages 6 0 R{catalog_extra} >>").into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
        b"<< /Font << /F1 2 0 R >> >>".to_vec(),
        format!("<< /Length {} >>\nstream\n{text}\nendstream", text.len()).into_bytes(),
        format!("<< /Type /Page /Parent {page_parent} 0 R /Contents 4 0 R >>").into_bytes(),
    ]
}

/// The root of a page tree (object 6): `kids`, the resources at object 3 and a page size.
fn tree_root(kids: &str, extra: &str) -> Vec<u8> {
    format!(
        "<< /Type /Pages /Kids [{kids}] /Count 1 /Resources 3 0 R \
         /MediaBox [0 0 612 792]{extra} >>"
    )
    .into_bytes()
}

/// A one-page PDF whose page sits `levels` page-tree nodes deep (at least one): each node
/// has the next as its only kid, and the page inherits its resources from the root, so a
/// reader walks the whole `/Parent` chain to find its font. Four words.
///
/// ```
/// use assetlib_core::extract::{self, samples, Limits};
/// let pdf = samples::pdf_deep_page_tree(3);
/// let info = extract::extract(&pdf, "deep.pdf", None, &Limits::default())?;
/// assert_eq!((info.page_count, info.word_count), (Some(1), Some(4)));
/// # Ok::<(), extract::ExtractError>(())
/// ```
pub fn pdf_deep_page_tree(levels: usize) -> Vec<u8> {
    let levels = levels.max(1);
    let last = 6 + levels - 1;
    let mut objects = one_page(last, "");
    for node in 6..=last {
        let kid = if node == last { 5 } else { node + 1 };
        if node == 6 {
            objects.push(tree_root(&format!("{kid} 0 R"), ""));
        } else {
            objects.push(
                format!(
                    "<< /Type /Pages /Kids [{kid} 0 R] /Count 1 /Parent {} 0 R >>",
                    node - 1
                )
                .into_bytes(),
            );
        }
    }
    pdf_of_objects(&objects)
}

/// A one-page PDF whose page tree is one level deep, but whose page's `/Parent` chain is
/// `levels` nodes long (at least one): it runs through `levels - 1` nodes that are in no
/// `/Kids` before it reaches the root, which holds the resources. Four words.
pub fn pdf_deep_parent_chain(levels: usize) -> Vec<u8> {
    let levels = levels.max(1);
    let first = if levels == 1 { 6 } else { 7 };
    let mut objects = one_page(first, "");
    objects.push(tree_root("5 0 R", ""));
    let last = 7 + levels - 2;
    for node in 7..=last {
        let parent = if node == last { 6 } else { node + 1 };
        objects.push(
            format!("<< /Type /Pages /Kids [] /Count 0 /Parent {parent} 0 R >>").into_bytes(),
        );
    }
    pdf_of_objects(&objects)
}

/// A one-page PDF whose page tree loops: the root's second kid is a node whose only kid is
/// the root again, and whose parent is the root, whose parent is that node.
pub fn pdf_page_tree_loop() -> Vec<u8> {
    let mut objects = one_page(6, "");
    objects.push(tree_root("5 0 R 7 0 R", " /Parent 7 0 R"));
    objects.push(b"<< /Type /Pages /Kids [6 0 R] /Count 1 /Parent 6 0 R >>".to_vec());
    pdf_of_objects(&objects)
}

/// A one-page PDF with an outline (bookmarks) `levels` items deep (at least one), each the
/// only child of the one before. Four words.
pub fn pdf_deep_outlines(levels: usize) -> Vec<u8> {
    let levels = levels.max(1);
    let mut objects = one_page(6, " /Outlines 7 0 R /PageMode /UseOutlines");
    objects.push(tree_root("5 0 R", ""));
    objects.push(
        format!("<< /Type /Outlines /First 8 0 R /Last 8 0 R /Count {levels} >>").into_bytes(),
    );
    let last = 8 + levels - 1;
    for item in 8..=last {
        let children = if item == last {
            String::new()
        } else {
            format!(
                " /First {0} 0 R /Last {0} 0 R /Count {1}",
                item + 1,
                last - item
            )
        };
        objects.push(
            format!(
                "<< /Title (Level {}) /Parent {} 0 R /Dest [5 0 R /Fit]{children} >>",
                item - 7,
                item - 1
            )
            .into_bytes(),
        );
    }
    pdf_of_objects(&objects)
}

/// A one-page PDF with one more object, not referenced: an array nested `levels` deep
/// (at least one), `[[[...]]]`. Four words.
pub fn pdf_deep_arrays(levels: usize) -> Vec<u8> {
    let levels = levels.max(1);
    let nested = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    pdf_with_extra_object(nested.into_bytes())
}

/// A one-page PDF with one more object, not referenced: a dictionary nested `levels` deep
/// (at least one), `<< /A << /A << >> >> >>`. Four words.
pub fn pdf_deep_dictionaries(levels: usize) -> Vec<u8> {
    let levels = levels.max(1);
    let nested = format!(
        "{}<< >>{}",
        "<< /A ".repeat(levels - 1),
        " >>".repeat(levels - 1)
    );
    pdf_with_extra_object(nested.into_bytes())
}

/// A one-page PDF with `extra` as object 7.
fn pdf_with_extra_object(extra: Vec<u8>) -> Vec<u8> {
    let mut objects = one_page(6, "");
    objects.push(tree_root("5 0 R", ""));
    objects.push(extra);
    pdf_of_objects(&objects)
}

/// A one-page PDF with `levels` more streams (at least one), each of whose `/Length` is a
/// reference to the next stream, the last one's to an integer. Four words.
pub fn pdf_length_chain(levels: usize) -> Vec<u8> {
    let levels = levels.max(1);
    let mut objects = one_page(6, "");
    objects.push(tree_root("5 0 R", ""));
    let last = 7 + levels - 1;
    for stream in 7..=last {
        objects
            .push(format!("<< /Length {} 0 R >>\nstream\nx\nendstream", stream + 1).into_bytes());
    }
    objects.push(b"1".to_vec());
    pdf_of_objects(&objects)
}

/// A one-page PDF with a cross-reference stream, and an object stream whose `/Length` is a
/// reference to an object the cross-reference stream says is stored inside that same object
/// stream: a reader that parses the container to find the length parses it again. Four
/// words.
pub fn pdf_length_loop() -> Vec<u8> {
    let mut objects = one_page(6, "");
    objects.push(tree_root("5 0 R", ""));
    objects.push(
        b"<< /Type /ObjStm /N 1 /First 4 /Length 8 0 R >>\nstream\n8 0 5\nendstream".to_vec(),
    );
    pdf_with_xref_stream(&objects, &[(8, 7, 0)])
}

/// What [`pdf_length_loop`] gets wrong, done right: the page's content has its `/Length` in
/// an object stream, whose own length is direct. Four words.
#[cfg(test)]
pub(in crate::extract) fn pdf_length_in_object_stream() -> Vec<u8> {
    let mut objects = one_page(6, "");
    let text = format!("BT /F1 11 Tf 72 700 Td ({}) Tj ET", sentence(HOSTILE_WORDS));
    objects[3] = format!("<< /Length 8 0 R >>\nstream\n{text}\nendstream").into_bytes();
    objects.push(tree_root("5 0 R", ""));
    let stored = format!("8 0 {}", text.len());
    objects.push(
        format!(
            "<< /Type /ObjStm /N 1 /First 4 /Length {} >>\nstream\n{stored}\nendstream",
            stored.len()
        )
        .into_bytes(),
    );
    pdf_with_xref_stream(&objects, &[(8, 7, 0)])
}

/// A PDF of `objects` (as [`pdf_of_objects`] writes them) whose cross-reference section is a
/// stream, the object after them, and which says each `(object, container, index)` of
/// `compressed` is stored in an object stream.
fn pdf_with_xref_stream(objects: &[Vec<u8>], compressed: &[(u32, u32, u16)]) -> Vec<u8> {
    let (mut out, offsets) = objects_written(objects);
    let xref = out.len();
    let last = compressed.iter().map(|c| c.0 as usize).max().unwrap_or(0);
    let xref_number = last.max(objects.len()) + 1;
    let mut entries = Vec::new();
    let mut entry = |kind: u8, field: u32, index: u16| {
        entries.push(kind);
        entries.extend_from_slice(&field.to_be_bytes());
        entries.extend_from_slice(&index.to_be_bytes());
    };
    entry(0, 0, 0xFFFF);
    for number in 1..=xref_number {
        let stored = compressed.iter().find(|c| c.0 as usize == number);
        if let Some(&(_, container, index)) = stored {
            entry(2, container, index);
        } else if number == xref_number {
            entry(1, u32::try_from(xref).unwrap_or(u32::MAX), 0);
        } else if let Some(&offset) = offsets.get(number - 1) {
            entry(1, u32::try_from(offset).unwrap_or(u32::MAX), 0);
        } else {
            entry(0, 0, 0);
        }
    }
    out.extend_from_slice(
        format!(
            "{xref_number} 0 obj\n<< /Type /XRef /Size {} /W [1 4 2] /Root 1 0 R /Length {} >>\n\
             stream\n",
            xref_number + 1,
            entries.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(&entries);
    out.extend_from_slice(format!("\nendstream\nendobj\nstartxref\n{xref}\n%%EOF\n").as_bytes());
    out
}
