//! Documents: DOCX and ODT (zip archives of XML parts), plain text and Markdown. The
//! presentations (PPTX, ODP) are read in `presentation`, HTML in `html`, with the parts
//! and XML readers here; `zipped` opens the four zipped formats.

#[cfg(feature = "previews")]
use std::io::Cursor;
use std::io::{Read, Seek};

use quick_xml::events::{BytesStart, Event};

use super::words::WordCounter;
use super::{Counts, ExtractError, Limits};

/// DOCX: words of `word/document.xml`, pages from `docProps/app.xml`.
pub(super) fn docx_archive<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    limits: &Limits,
) -> Result<Counts, ExtractError> {
    let mut budget = Budget(limits.max_zip_inflated);
    let counter = read_part(archive, "word/document.xml", &mut budget, limits)?
        .and_then(|xml| docx_words(&xml, WordCounter::keeping(limits.keep_text)));
    let pages = read_part(archive, "docProps/app.xml", &mut budget, limits)?
        .and_then(|xml| app_pages(&xml));
    Ok(Counts::of(pages, counter, false))
}

/// ODT: `meta:document-statistic` of `meta.xml`; words of `content.xml` when it has none.
pub(super) fn odt_archive<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    limits: &Limits,
) -> Result<Counts, ExtractError> {
    let mut budget = Budget(limits.max_zip_inflated);
    let mut counts = read_part(archive, "meta.xml", &mut budget, limits)?
        .map(|xml| odt_statistics(&xml))
        .unwrap_or_default();
    // The words are read from the body when the statistics lack them, and so is the text
    // when it is kept.
    if counts.words.is_none() || limits.keep_text > 0 {
        let counter = read_part(archive, "content.xml", &mut budget, limits)?
            .and_then(|xml| odt_words(&xml, WordCounter::keeping(limits.keep_text)));
        let read = Counts::of(counts.pages, counter, false);
        counts.words = counts.words.or(read.words);
        counts.text = read.text;
    }
    Ok(counts)
}

#[cfg(feature = "previews")]
/// Where OpenDocument (`Thumbnails/thumbnail.png`) and Office Open XML writers
/// (`docProps/thumbnail.jpeg`, sometimes `.jpg` or `.png`) keep the picture of the first page.
const THUMBNAIL_PARTS: [&str; 4] = [
    "Thumbnails/thumbnail.png",
    "docProps/thumbnail.jpeg",
    "docProps/thumbnail.jpg",
    "docProps/thumbnail.png",
];

#[cfg(feature = "previews")]
/// The thumbnail an ODF or OOXML file carries inside, when it has one (inflated within
/// [`Limits::max_zip_inflated`]). Office's other thumbnail formats (WMF, EMF) are not images
/// this crate decodes, so such a file has none.
pub(super) fn embedded_thumbnail(
    bytes: &[u8],
    limits: &Limits,
) -> Result<Option<Vec<u8>>, ExtractError> {
    let Ok(mut archive) = zip::ZipArchive::new(Cursor::new(bytes)) else {
        return Ok(None);
    };
    embedded_thumbnail_archive(&mut archive, limits)
}

#[cfg(feature = "previews")]
/// [`embedded_thumbnail`] of an archive open already (read by ranges, for a large file).
pub(super) fn embedded_thumbnail_archive<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    limits: &Limits,
) -> Result<Option<Vec<u8>>, ExtractError> {
    let mut budget = Budget(limits.max_zip_inflated);
    for name in THUMBNAIL_PARTS {
        if let Some(part) = read_part(archive, name, &mut budget, limits)? {
            return Ok(Some(part));
        }
    }
    Ok(None)
}

/// Plain text or Markdown: its words (and its text when kept).
pub(super) fn text(bytes: &[u8], limits: &Limits) -> Result<Counts, ExtractError> {
    if bytes.len() as u64 > limits.max_text_bytes {
        return Err(ExtractError::limit("text", limits.max_text_bytes));
    }
    let mut counter = WordCounter::keeping(limits.keep_text);
    counter.text(&String::from_utf8_lossy(bytes));
    Ok(Counts::of(None, Some(counter), false))
}

/// Bytes still allowed to be inflated from an archive.
pub(super) struct Budget(pub(super) u64);

/// Inflates one part of an archive within the budget. A missing or unreadable part is `None`
/// (its fields stay null); a part larger than the budget is refused without inflating more
/// than the budget and one byte.
pub(super) fn read_part<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    name: &str,
    budget: &mut Budget,
    limits: &Limits,
) -> Result<Option<Vec<u8>>, ExtractError> {
    let refuse = || ExtractError::limit("inflated archive content", limits.max_zip_inflated);
    let Some(index) = archive.index_for_name(name) else {
        return Ok(None);
    };
    let Ok(entry) = archive.by_index(index) else {
        return Ok(None);
    };
    // The declared size may lie; it only lets an honest oversized part fail early.
    if entry.size() > budget.0 {
        return Err(refuse());
    }
    let capacity = usize::try_from(entry.size()).unwrap_or(0);
    let mut out = Vec::with_capacity(capacity);
    if entry
        .take(budget.0.saturating_add(1))
        .read_to_end(&mut out)
        .is_err()
    {
        return Ok(None);
    }
    let read = out.len() as u64;
    if read > budget.0 {
        return Err(refuse());
    }
    budget.0 -= read;
    Ok(Some(out))
}

/// Words of the text runs (`w:t`) of a WordprocessingML body. Paragraphs, tabs and breaks
/// separate words; runs inside a paragraph join. The fallback copy that Word keeps of text
/// boxes (`mc:Fallback`) is skipped so that it does not count twice.
pub(super) fn docx_words(xml: &[u8], mut counter: WordCounter) -> Option<WordCounter> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut in_text = false;
    let mut fallback_depth = 0u32;
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) => match e.local_name().as_ref() {
                b"t" => in_text = fallback_depth == 0,
                b"Fallback" => fallback_depth += 1,
                b"p" | b"tab" | b"br" | b"cr" => counter.boundary(),
                _ => {}
            },
            Event::Empty(e) => {
                if matches!(e.local_name().as_ref(), b"p" | b"tab" | b"br" | b"cr") {
                    counter.boundary();
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                b"t" => in_text = false,
                b"Fallback" => fallback_depth = fallback_depth.saturating_sub(1),
                b"p" => counter.boundary(),
                _ => {}
            },
            Event::Text(t) if in_text => counter.text(&t.decode().ok()?),
            Event::CData(t) if in_text => counter.text(&t.decode().ok()?),
            Event::GeneralRef(r) if in_text => counter.char(reference_char(&r)),
            Event::Eof => return Some(counter),
            _ => {}
        }
    }
}

/// `<Pages>` of the extended properties part.
fn app_pages(xml: &[u8]) -> Option<u64> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut in_pages = false;
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) => in_pages = e.local_name().as_ref() == b"Pages",
            Event::Text(t) if in_pages => return t.decode().ok()?.trim().parse().ok(),
            Event::End(_) => in_pages = false,
            Event::Eof => return None,
            _ => {}
        }
    }
}

/// `meta:page-count` and `meta:word-count` of `meta:document-statistic`.
fn odt_statistics(xml: &[u8]) -> Counts {
    let mut reader = quick_xml::Reader::from_reader(xml);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e))
                if e.local_name().as_ref() == b"document-statistic" =>
            {
                return Counts {
                    pages: number_attribute(&e, b"page-count"),
                    words: number_attribute(&e, b"word-count"),
                    text: None,
                };
            }
            Ok(Event::Eof) | Err(_) => return Counts::default(),
            Ok(_) => {}
        }
    }
}

/// Words of the body of an ODF text document: the text of every element under
/// `office:body`, with paragraphs, headings, tabs, line breaks and spaces (`text:s`)
/// separating words.
fn odt_words(xml: &[u8], counter: WordCounter) -> Option<WordCounter> {
    odf_body_words(xml, counter, false).map(|(counter, _)| counter)
}

/// Words of the body of an ODF document, as [`odt_words`] reads them; with `slides` (a
/// presentation) each `draw:page` starts a page of the kept text and speaker notes
/// (`presentation:notes`) are skipped, as a DOCX's notes are. Answers the counter and how
/// many slides there were.
pub(super) fn odf_body_words(
    xml: &[u8],
    mut counter: WordCounter,
    slides: bool,
) -> Option<(WordCounter, u64)> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    let (mut in_body, mut pages, mut notes_depth) = (false, 0u64, 0u32);
    let separates = |name: &[u8]| matches!(name, b"p" | b"h" | b"tab" | b"line-break" | b"s");
    loop {
        let counting = in_body && notes_depth == 0;
        let event = reader.read_event().ok()?;
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                let opens = matches!(event, Event::Start(_));
                match e.local_name().as_ref() {
                    b"page" if slides && counting => {
                        if pages > 0 {
                            counter.page();
                        }
                        pages += 1;
                    }
                    b"body" if opens => in_body = true,
                    b"notes" if slides && opens => notes_depth += 1,
                    name if separates(name) => counter.boundary(),
                    _ => {}
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                b"body" => in_body = false,
                b"notes" if slides => notes_depth = notes_depth.saturating_sub(1),
                name if separates(name) => counter.boundary(),
                _ => {}
            },
            Event::Text(t) if counting => counter.text(&t.decode().ok()?),
            Event::CData(t) if counting => counter.text(&t.decode().ok()?),
            Event::GeneralRef(r) if counting => counter.char(reference_char(r)),
            Event::Eof => return Some((counter, pages)),
            _ => {}
        }
    }
}

/// The character an entity or character reference stands for, as far as counting words
/// needs: character references resolve; named entities (`&amp;`, `&lt;`, ...) are
/// punctuation, which joins the letters around it into one word.
pub(super) fn reference_char(r: &quick_xml::events::BytesRef<'_>) -> char {
    match r.resolve_char_ref() {
        Ok(Some(c)) => c,
        _ => '&',
    }
}

/// An attribute (by local name) holding a non-negative integer.
fn number_attribute(e: &BytesStart<'_>, local_name: &[u8]) -> Option<u64> {
    e.attributes()
        .filter_map(Result::ok)
        .find(|a| a.key.local_name().as_ref() == local_name)
        .and_then(|a| std::str::from_utf8(&a.value).ok()?.trim().parse().ok())
}
