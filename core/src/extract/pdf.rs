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

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Encoding, Object, ObjectId};

mod scan;

use self::scan::{decoded_len, prescan};
use super::words::WordCounter;
use super::{Counts, Limits};

/// Most bytes one font's `ToUnicode` map may decode to.
pub(super) const MAX_CMAP: u64 = 4 * 1024 * 1024;
/// Most bytes the `ToUnicode` maps of a document's fonts may decode to together.
pub(super) const MAX_CMAPS: u64 = 16 * 1024 * 1024;

/// Pages and words of a PDF; null where they cannot be read within the limits.
pub(super) fn counts(bytes: &[u8], limits: &Limits) -> Counts {
    let Some(scan) = prescan(bytes, limits) else {
        return Counts::default();
    };
    if scan.encrypted && scan.object_streams {
        return Counts::default();
    }
    // lopdf may panic on some malformed input; such a file is unreadable, like any other.
    catch_unwind(AssertUnwindSafe(|| read(bytes, scan.encrypted, limits))).unwrap_or_default()
}

fn read(bytes: &[u8], encrypted: bool, limits: &Limits) -> Counts {
    let Ok(doc) = Document::load_mem(bytes) else {
        return Counts::default();
    };
    let pages = doc.get_pages();
    let page_count = (!pages.is_empty()).then_some(pages.len() as u64);
    let words = if encrypted || doc.was_encrypted() || doc.is_encrypted() || pages.is_empty() {
        None
    } else {
        words(&doc, &pages, limits)
    };
    Counts {
        pages: page_count,
        words,
    }
}

/// Words of the text shown on every page. Strings of `Tj`, `TJ`, `'` and `"` are decoded
/// with their font's encoding; text-object ends, line moves, and gaps of more than a tenth of
/// an em inside `TJ` separate words.
fn words(doc: &Document, pages: &BTreeMap<u32, ObjectId>, limits: &Limits) -> Option<u64> {
    let mut counter = WordCounter::default();
    let mut parsed = 0u64;
    let mut font_cache: HashMap<*const Dictionary, Option<Encoding<'_>>> = HashMap::new();
    let mut cmaps = 0u64;
    for &page_id in pages.values() {
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
        let content = Content::decode(&content).ok()?;
        let mut encoding = None;
        for op in &content.operations {
            match op.operator.as_str() {
                "Tf" => {
                    encoding = op
                        .operands
                        .first()
                        .and_then(|o| o.as_name().ok())
                        .and_then(|name| encodings.get(name))
                        .and_then(|key| font_cache.get(key))
                        .and_then(Option::as_ref);
                }
                "Tj" | "TJ" => show(&mut counter, encoding, &op.operands),
                "'" => {
                    counter.boundary();
                    show(&mut counter, encoding, &op.operands);
                }
                "\"" => {
                    counter.boundary();
                    show(&mut counter, encoding, op.operands.get(2..).unwrap_or(&[]));
                }
                "ET" | "T*" | "Td" | "TD" | "Tm" => counter.boundary(),
                _ => {}
            }
        }
        counter.boundary();
    }
    Some(counter.count())
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
