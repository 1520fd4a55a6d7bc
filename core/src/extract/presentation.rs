//! Presentations: PPTX and ODP (zip archives of XML parts). Each slide is a page: its number
//! is the page count, and the kept text has one page per slide, so a search hit names the
//! slide.

use std::io::{Read, Seek};

use quick_xml::events::Event;

use super::document::{Budget, docx_words, odf_body_words, read_part};
use super::words::WordCounter;
use super::{Counts, ExtractError, Limits};

/// PPTX: the words of each slide's text runs (`a:t`), slides in the order of the
/// presentation's slide list, and the slide count as `page_count`.
pub(super) fn pptx_archive<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    limits: &Limits,
) -> Result<Counts, ExtractError> {
    let mut budget = Budget(limits.max_zip_inflated);
    let slides = slide_parts(archive, &mut budget, limits)?;
    let mut counter = Some(WordCounter::keeping(limits.keep_text));
    for (n, part) in slides.iter().enumerate() {
        let Some(mut c) = counter.take() else {
            break;
        };
        if n > 0 {
            c.page();
        }
        // A slide that is missing counts no words; one whose XML is damaged makes the
        // deck's words unknown, as a damaged DOCX body does.
        counter = match read_part(archive, part, &mut budget, limits)? {
            Some(xml) => docx_words(&xml, c),
            None => Some(c),
        };
    }
    Ok(Counts::of(Some(slides.len() as u64), counter, true))
}

/// The parts of a PPTX's slides in showing order: the `p:sldId` list of
/// `ppt/presentation.xml`, resolved through its relationships. A deck whose list cannot be
/// read gives its `ppt/slides/slideN.xml` parts by number.
fn slide_parts<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    budget: &mut Budget,
    limits: &Limits,
) -> Result<Vec<String>, ExtractError> {
    let ids = read_part(archive, "ppt/presentation.xml", budget, limits)?
        .and_then(|xml| attributes_of(&xml, b"sldId", b"id", true));
    let targets = read_part(archive, "ppt/_rels/presentation.xml.rels", budget, limits)?
        .and_then(|xml| relationships(&xml));
    if let (Some(ids), Some(targets)) = (ids, targets) {
        let parts: Option<Vec<String>> = ids
            .iter()
            .map(|id| {
                targets
                    .iter()
                    .find(|(rid, _)| rid == id)
                    .map(|(_, target)| part_name(target))
            })
            .collect();
        if let Some(parts) = parts {
            return Ok(parts);
        }
    }
    let mut numbered: Vec<(u64, String)> = archive
        .file_names()
        .filter_map(|name| {
            let n = name
                .strip_prefix("ppt/slides/slide")?
                .strip_suffix(".xml")?
                .parse()
                .ok()?;
            Some((n, name.to_owned()))
        })
        .collect();
    numbered.sort();
    Ok(numbered.into_iter().map(|(_, name)| name).collect())
}

/// The value of attribute `attr` (by local name; of the `r:` namespace prefix when
/// `relationship`) of every element named `element`; `None` when the XML is damaged.
fn attributes_of(
    xml: &[u8],
    element: &[u8],
    attr: &[u8],
    relationship: bool,
) -> Option<Vec<String>> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut out = Vec::new();
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == element => {
                let value = e.attributes().filter_map(Result::ok).find(|a| {
                    a.key.local_name().as_ref() == attr
                        && (a.key.prefix().is_some() == relationship)
                })?;
                out.push(String::from_utf8(value.value.into_owned()).ok()?);
            }
            Event::Eof => return Some(out),
            _ => {}
        }
    }
}

/// The `Id` and `Target` of every relationship of a `.rels` part.
fn relationships(xml: &[u8]) -> Option<Vec<(String, String)>> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut out = Vec::new();
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == b"Relationship" => {
                let mut id = None;
                let mut target = None;
                for a in e.attributes().filter_map(Result::ok) {
                    let value = String::from_utf8(a.value.into_owned()).ok()?;
                    match a.key.local_name().as_ref() {
                        b"Id" => id = Some(value),
                        b"Target" => target = Some(value),
                        _ => {}
                    }
                }
                out.push((id?, target?));
            }
            Event::Eof => return Some(out),
            _ => {}
        }
    }
}

/// The archive part a relationship of `ppt/presentation.xml` targets: relative to `ppt/`,
/// or absolute from the package root.
fn part_name(target: &str) -> String {
    match target.strip_prefix('/') {
        Some(absolute) => absolute.to_owned(),
        None => format!("ppt/{target}"),
    }
}

/// ODP: the words of `content.xml`'s slides (`draw:page`), speaker notes aside, and the
/// slide count as `page_count`.
pub(super) fn odp_archive<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    limits: &Limits,
) -> Result<Counts, ExtractError> {
    let mut budget = Budget(limits.max_zip_inflated);
    let read = read_part(archive, "content.xml", &mut budget, limits)?
        .and_then(|xml| odf_body_words(&xml, WordCounter::keeping(limits.keep_text), true));
    Ok(match read {
        Some((counter, slides)) => Counts::of(Some(slides), Some(counter), true),
        None => Counts::default(),
    })
}
