//! PDF: pages and words, read with `lopdf` behind a bounded pre-scan.
//!
//! `lopdf` inflates object streams while it loads a file, and content and font streams while
//! text is read, with no bound on the output: a few kilobytes of deflate can claim gigabytes.
//! So before `lopdf` sees a file, [`prescan`] finds every stream, parses its dictionary, and
//! decodes it through the same filters `lopdf` supports (Flate, LZW, ASCII85) into a bounded
//! buffer, counting the output. A file with a stream over [`Limits::max_pdf_stream`], streams
//! over [`Limits::max_pdf_decoded`] together, object and cross-reference streams (which `lopdf`
//! keeps parsed, at several times their size) over [`scan::MAX_STRUCTURE`] together, a stream
//! dictionary it cannot parse, or an implausible cross-reference stream layout is not given to
//! `lopdf` at all: its counts are null. Encrypted files are loaded only when they have no
//! object streams (whose inflation the pre-scan cannot measure through the encryption), and
//! only for their page count. While text is read, page content is bounded by
//! [`Limits::max_pdf_page_content`], and fonts' `ToUnicode` maps (kept parsed while pages are
//! read) by [`MAX_CMAP`] each and [`MAX_CMAPS`] together.
//!
//! What `lopdf` walks by recursion must stay shallow, or a small hostile file overflows the
//! thread's stack and aborts the whole process: a file is not read (null counts) whose arrays
//! and dictionaries nest more than [`MAX_NESTING`] deep, in its bytes or in its object
//! streams; in which finding a stream's length means following more than
//! [`MAX_LENGTH_REFERENCES`] references in a row, or a loop of them; or whose page tree is
//! deeper than [`MAX_PDF_DEPTH`], loops, or has a page whose `/Parent` chain is longer than
//! that. The first two are checked by the pre-scan, the page tree (iteratively) after `lopdf`
//! has loaded the file and before anything walks it.

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Encoding, Object, ObjectId};

mod decode;
mod large;
mod lexer;
mod scan;
mod xref;

pub(super) use self::large::read_large;

use self::decode::decoded_len;
use self::scan::prescan;
use super::words::WordCounter;
use super::{Counts, Limits};

/// Most bytes one font's `ToUnicode` map may decode to.
pub(super) const MAX_CMAP: u64 = 4 * 1024 * 1024;
/// Most bytes the `ToUnicode` maps of a document's fonts may decode to together.
pub(super) const MAX_CMAPS: u64 = 16 * 1024 * 1024;

/// Deepest nesting of arrays and dictionaries in a PDF that is read. `lopdf` parses nesting
/// recursively (and gives up at 100 levels), taking 15 to 20 KiB of stack a level in a debug
/// build and about 2 KiB in a release build: 64 levels fit in the 2 MiB of a Tokio blocking
/// thread even in a debug build, and real files nest a handful.
pub(in crate::extract) const MAX_NESTING: usize = 64;

/// Most references in a row `lopdf` may follow to find streams' lengths (a stream's
/// `/Length` naming another stream, or an object stored in an object stream whose own
/// `/Length` is a reference): each is a recursion of its parser, of several KiB. Real files
/// need at most 3.
pub(in crate::extract) const MAX_LENGTH_REFERENCES: usize = 8;

/// Deepest page tree of a PDF that is read, and longest `/Parent` chain of its pages:
/// `lopdf` looks up a page's inherited resources by recursion along that chain.
pub(in crate::extract) const MAX_PDF_DEPTH: usize = 256;

/// What one read of a PDF gives: its counts, and whether a renderer may be given it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct PdfRead {
    pub(super) counts: Counts,
    /// The pre-scan passed (every stream it could decode is within the limits, nothing nests
    /// too deep), the file is not encrypted, and its pages could be counted.
    pub(super) renderable: bool,
}

/// Pages and words of a PDF (null where they cannot be read within the limits), and whether
/// it may be rendered, from one pre-scan.
pub(super) fn read_pdf(bytes: &[u8], limits: &Limits) -> PdfRead {
    let Some(scan) = prescan(bytes, limits) else {
        return PdfRead::default();
    };
    if scan.encrypted && scan.object_streams {
        return PdfRead::default();
    }
    // lopdf may panic on some malformed input; such a file is unreadable, like any other.
    let counts =
        catch_unwind(AssertUnwindSafe(|| read(bytes, scan.encrypted, limits))).unwrap_or_default();
    PdfRead {
        renderable: !scan.encrypted && counts.pages.is_some(),
        counts,
    }
}

fn read(bytes: &[u8], encrypted: bool, limits: &Limits) -> Counts {
    let Ok(doc) = Document::load_mem(bytes) else {
        return Counts::default();
    };
    if !page_tree_bounded(&doc) {
        return Counts::default();
    }
    let pages = doc.get_pages();
    let page_count = (!pages.is_empty()).then_some(pages.len() as u64);
    let counter = if encrypted || doc.was_encrypted() || doc.is_encrypted() || pages.is_empty() {
        None
    } else {
        words(&doc, &pages, limits)
    };
    Counts::of(page_count, counter, true)
}

/// Whether the page tree is at most [`MAX_PDF_DEPTH`] levels deep, reaches no node twice
/// (a loop), and every page in it has a `/Parent` chain of at most [`MAX_PDF_DEPTH`] nodes.
/// The tree is walked as `lopdf`'s page iterator walks it, but with an explicit stack; each
/// node's chain length is remembered, so the work stays linear in the tree.
fn page_tree_bounded(doc: &Document) -> bool {
    let Ok(root) = doc
        .catalog()
        .and_then(|catalog| catalog.get(b"Pages"))
        .and_then(Object::as_reference)
    else {
        // No page tree: nothing to walk.
        return true;
    };
    let kids = |id: ObjectId| {
        doc.get_dictionary(id)
            .and_then(|node| node.get_deref(b"Kids", doc))
            .and_then(Object::as_array)
            .map_or(&[][..], Vec::as_slice)
    };
    let mut seen = HashSet::from([root]);
    let mut chains: HashMap<ObjectId, usize> = HashMap::new();
    let mut stack = vec![(root, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        for kid in kids(node) {
            let Ok(id) = kid.as_reference() else {
                continue;
            };
            let Ok(dict) = doc.get_dictionary(id) else {
                continue;
            };
            match dict.get_type() {
                Ok(b"Pages") => {
                    if depth >= MAX_PDF_DEPTH || !seen.insert(id) {
                        return false;
                    }
                    stack.push((id, depth + 1));
                }
                Ok(b"Page") if !parent_chain_bounded(doc, dict, &mut chains) => return false,
                _ => {}
            }
        }
    }
    true
}

/// Whether the `/Parent` chain above `page` (as `lopdf` follows it: references to
/// dictionaries) has at most [`MAX_PDF_DEPTH`] nodes. `chains` remembers, for each node
/// walked, the length of the chain from it up; a loop never ends, so it goes past the limit.
fn parent_chain_bounded(
    doc: &Document,
    page: &Dictionary,
    chains: &mut HashMap<ObjectId, usize>,
) -> bool {
    let parent = |node: &Dictionary| node.get(b"Parent").and_then(Object::as_reference).ok();
    let mut path = Vec::new();
    let mut next = parent(page);
    let above = loop {
        let Some(id) = next else { break 0 };
        if let Some(&known) = chains.get(&id) {
            break known;
        }
        if path.len() >= MAX_PDF_DEPTH {
            return false;
        }
        path.push(id);
        next = doc.get_dictionary(id).ok().and_then(parent);
    };
    if above + path.len() > MAX_PDF_DEPTH {
        return false;
    }
    for (i, id) in path.iter().enumerate() {
        chains.insert(*id, above + path.len() - i);
    }
    true
}

/// Words of the text shown on every page. Strings of `Tj`, `TJ`, `'` and `"` are decoded
/// with their font's encoding; text-object ends, line moves, and gaps of more than a tenth of
/// an em inside `TJ` separate words.
fn words(doc: &Document, pages: &BTreeMap<u32, ObjectId>, limits: &Limits) -> Option<WordCounter> {
    let mut counter = WordCounter::keeping(limits.keep_text);
    let mut parsed = 0u64;
    let mut font_cache: HashMap<*const Dictionary, Option<Encoding<'_>>> = HashMap::new();
    let mut cmaps = 0u64;
    for (n, &page_id) in pages.values().enumerate() {
        if n > 0 {
            counter.page();
        }
        let mut content = Vec::new();
        for id in doc.get_page_contents(page_id) {
            let Ok(stream) = doc.get_object(id).and_then(Object::as_stream) else {
                continue;
            };
            let data = stream
                .decompressed_content()
                .unwrap_or_else(|_| stream.content.clone());
            // The same stream may be listed many times: count the work, not the stream.
            parsed += data.len() as u64;
            if parsed > limits.max_pdf_decoded
                || (content.len() + data.len()) as u64 > limits.max_pdf_page_content
            {
                return None;
            }
            content.extend_from_slice(&data);
            content.push(b'\n');
        }
        // Fonts are shared between pages: read each one's encoding (and its ToUnicode map)
        // once.
        let mut encodings: BTreeMap<Vec<u8>, *const Dictionary> = BTreeMap::new();
        for (name, font) in doc.get_page_fonts(page_id).unwrap_or_default() {
            let key: *const Dictionary = font;
            if let Entry::Vacant(slot) = font_cache.entry(key) {
                cmaps = cmaps.saturating_add(to_unicode_size(doc, font));
                if cmaps > MAX_CMAPS {
                    return None;
                }
                slot.insert(font.get_font_encoding(doc).ok());
            }
            encodings.insert(name, key);
        }
        let encoding_of = |name: &[u8]| {
            encodings
                .get(name)
                .and_then(|key| font_cache.get(key))
                .and_then(Option::as_ref)
        };
        count_content(&mut counter, &content, encoding_of)?;
    }
    Some(counter)
}

/// Counts the words of one page's content, each font's encoding found by its resource name
/// with `encoding_of`; `None` when the content cannot be parsed.
pub(super) fn count_content<'m, 'e: 'm>(
    counter: &mut WordCounter,
    content: &[u8],
    encoding_of: impl Fn(&[u8]) -> Option<&'m Encoding<'e>>,
) -> Option<()> {
    // lopdf's content parser gives up at 100 levels of nesting: a few hundred KiB of stack in
    // a release build, and inside a blocking thread's 2 MiB even in a debug one.
    let content = Content::decode(content).ok()?;
    let mut encoding = None;
    for op in &content.operations {
        match op.operator.as_str() {
            "Tf" => {
                encoding = op
                    .operands
                    .first()
                    .and_then(|o| o.as_name().ok())
                    .and_then(&encoding_of);
            }
            "Tj" | "TJ" => show(counter, encoding, &op.operands),
            "'" => {
                counter.boundary();
                show(counter, encoding, &op.operands);
            }
            "\"" => {
                counter.boundary();
                show(counter, encoding, op.operands.get(2..).unwrap_or(&[]));
            }
            "ET" | "T*" | "Td" | "TD" | "Tm" => counter.boundary(),
            _ => {}
        }
    }
    counter.boundary();
    Some(())
}

/// What a font's `ToUnicode` map decodes to; `u64::MAX` when over [`MAX_CMAP`].
fn to_unicode_size(doc: &Document, font: &Dictionary) -> u64 {
    let Some(stream) = font
        .get(b"ToUnicode")
        .and_then(|o| doc.dereference(o))
        .and_then(|(_, o)| o.as_stream())
        .ok()
    else {
        return 0;
    };
    let filters: Vec<Vec<u8>> = stream
        .filters()
        .map(|names| names.into_iter().map(<[u8]>::to_vec).collect())
        .unwrap_or_default();
    decoded_len(&stream.content, &filters, MAX_CMAP).unwrap_or(u64::MAX)
}

/// Feeds the strings of a text-showing operator.
fn show(counter: &mut WordCounter, encoding: Option<&Encoding<'_>>, operands: &[Object]) {
    let Some(encoding) = encoding else { return };
    for operand in operands {
        match operand {
            Object::String(bytes, _) => {
                if let Ok(text) = Document::decode_text(encoding, bytes) {
                    counter.text(&text);
                }
            }
            Object::Array(items) => show(counter, Some(encoding), items),
            // A gap wider than a tenth of an em: the space between two words.
            Object::Integer(n) if *n < -100 => counter.boundary(),
            Object::Real(n) if *n < -100.0 => counter.boundary(),
            _ => {}
        }
    }
}
