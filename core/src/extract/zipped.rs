//! The four zipped document formats (DOCX, ODT, PPTX, ODP), each read by its own module, opened
//! and told apart in one place for a file read whole and for one read by ranges.

use std::io::{Cursor, Read, Seek};

use super::sniff::Format;
use super::{Counts, ExtractError, Limits, document, presentation};

/// What a DOCX, ODT, PPTX or ODP file (`format`, read whole) says of itself; content that is
/// no zip archive gives no counts.
pub(super) fn zipped(
    bytes: &[u8],
    format: Format,
    limits: &Limits,
) -> Result<Counts, ExtractError> {
    let Ok(mut archive) = zip::ZipArchive::new(Cursor::new(bytes)) else {
        return Ok(Counts::default());
    };
    archive_counts(&mut archive, format, limits)
}

/// What a DOCX, ODT, PPTX or ODP archive (`format`) says of itself, the archive open already
/// (whole, or read by ranges for a large file).
pub(super) fn archive_counts<R: Read + Seek>(
    archive: &mut zip::ZipArchive<R>,
    format: Format,
    limits: &Limits,
) -> Result<Counts, ExtractError> {
    match format {
        Format::Odt => document::odt_archive(archive, limits),
        Format::Pptx => presentation::pptx_archive(archive, limits),
        Format::Odp => presentation::odp_archive(archive, limits),
        _ => document::docx_archive(archive, limits),
    }
}
