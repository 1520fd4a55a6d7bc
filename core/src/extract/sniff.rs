//! What a file is, from its content.

use std::io::{Cursor, Read, Seek};

use crate::model::AssetType;

/// Media type of DOCX.
pub(super) const DOCX: &str =
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
/// Media type of ODT.
pub(super) const ODT: &str = "application/vnd.oasis.opendocument.text";
/// Media type of PPTX.
pub(super) const PPTX: &str =
    "application/vnd.openxmlformats-officedocument.presentationml.presentation";
/// Media type of ODP.
pub(super) const ODP: &str = "application/vnd.oasis.opendocument.presentation";
/// Media type of HTML.
pub(super) const HTML: &str = "text/html";
/// Media type of PDF.
pub(super) const PDF: &str = "application/pdf";
/// Media type of SVG.
pub(super) const SVG: &str = "image/svg+xml";

/// What [`sniff`] found: the media type and the asset type the content can be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sniffed {
    /// Media type, e.g. `image/png`; `application/octet-stream` when the content is not
    /// recognised.
    pub mime_type: &'static str,
    /// The file-based asset type the content is (pdf, document, image, video or audio), or
    /// `None` for content of none of them (a zip archive, a spreadsheet, HTML, ...).
    pub kind: Option<AssetType>,
    pub(super) format: Format,
}

/// How the content is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Pdf,
    Docx,
    Odt,
    Pptx,
    Odp,
    /// UTF-8 text: plain or Markdown.
    Text,
    /// An HTML page.
    Html,
    Svg,
    /// A raster image `imagesize` may know.
    Raster,
    Other,
}

impl Format {
    /// Whether it is one of the zipped document formats (DOCX, ODT, PPTX, ODP).
    pub(super) const fn is_zipped(self) -> bool {
        matches!(
            self,
            Format::Docx | Format::Odt | Format::Pptx | Format::Odp
        )
    }
}

impl Sniffed {
    const fn new(mime_type: &'static str, kind: Option<AssetType>, format: Format) -> Self {
        Sniffed {
            mime_type,
            kind,
            format,
        }
    }

    /// Whether the content may be the file of an asset of type `declared`:
    ///
    /// | declared | accepted content |
    /// |---|---|
    /// | pdf | PDF |
    /// | document | DOCX, ODT, PPTX, ODP, plain text, Markdown, HTML |
    /// | image | any image format recognised from its content, and SVG |
    /// | video | any `video/*` |
    /// | audio | any `audio/*`, and MP4, WebM and Matroska containers |
    ///
    /// Other types take no file, so nothing is acceptable for them.
    ///
    /// ```
    /// use assetlib_core::{AssetType, extract::{sniff, samples}};
    /// let png = sniff(&samples::png(4, 4), "logo.png");
    /// assert!(png.is_acceptable_as(AssetType::Image));
    /// assert!(!png.is_acceptable_as(AssetType::Pdf));
    /// ```
    pub fn is_acceptable_as(&self, declared: AssetType) -> bool {
        match declared {
            AssetType::Pdf => self.format == Format::Pdf,
            AssetType::Document => {
                self.format.is_zipped() || matches!(self.format, Format::Text | Format::Html)
            }
            AssetType::Image => self.kind == Some(AssetType::Image),
            AssetType::Video => self.kind == Some(AssetType::Video),
            AssetType::Audio => {
                self.kind == Some(AssetType::Audio)
                    || matches!(
                        self.mime_type,
                        "video/mp4" | "video/webm" | "video/x-matroska"
                    )
            }
            AssetType::ExternalVideo | AssetType::Link | AssetType::Collection | AssetType::Git => {
                false
            }
        }
    }
}

/// Finds the media type and the asset type of a file from its content (magic bytes, and the
/// parts list of a zip archive for DOCX, ODT, PPTX and ODP).
///
/// The file name is used only where the content leaves a choice: UTF-8 text named `.md` or
/// `.markdown` is `text/markdown` (other text is `text/plain`); an MP4, WebM or Matroska
/// container named `.m4a`, `.weba` or `.mka` is audio; Ogg named `.ogv` is video. A name never
/// makes binary content into something else: unrecognised content is
/// `application/octet-stream`, whatever its name.
///
/// ```
/// use assetlib_core::{AssetType, extract::{sniff, samples}};
/// // A PNG named like a PDF is still a PNG.
/// let s = sniff(&samples::png(8, 8), "report.pdf");
/// assert_eq!((s.mime_type, s.kind), ("image/png", Some(AssetType::Image)));
/// let s = sniff(b"# Notes\n\nSome words.", "notes.md");
/// assert_eq!((s.mime_type, s.kind), ("text/markdown", Some(AssetType::Document)));
/// ```
pub fn sniff(bytes: &[u8], file_name: &str) -> Sniffed {
    sniff_with(bytes, file_name, true)
}

/// [`sniff`] of the first bytes of a larger file: a zip archive's parts are not looked for in
/// them (its central directory is at the end of the file).
pub(super) fn sniff_head(head: &[u8], file_name: &str) -> Sniffed {
    sniff_with(head, file_name, false)
}

/// [`sniff`], looking into a zip archive's parts when `archives`.
fn sniff_with(bytes: &[u8], file_name: &str, archives: bool) -> Sniffed {
    let ext = extension(file_name);
    if archives
        && infer::archive::is_zip(bytes)
        && let Some(found) = zip::ZipArchive::new(Cursor::new(bytes))
            .ok()
            .and_then(|mut archive| zip_document(&mut archive))
    {
        return found;
    }
    let inferred = infer::get(bytes);
    if let Some(t) = inferred {
        let mime = t.mime_type();
        match t.matcher_type() {
            infer::MatcherType::Text => {}
            _ if mime == PDF => return Sniffed::new(PDF, Some(AssetType::Pdf), Format::Pdf),
            infer::MatcherType::Image => {
                return Sniffed::new(mime, Some(AssetType::Image), Format::Raster);
            }
            infer::MatcherType::Video => return media(mime, AssetType::Video, &ext),
            infer::MatcherType::Audio => return media(mime, AssetType::Audio, &ext),
            _ => return Sniffed::new(mime, None, Format::Other),
        }
    }
    if !is_text(bytes) {
        return Sniffed::new("application/octet-stream", None, Format::Other);
    }
    if super::svg::is_svg(bytes) {
        return Sniffed::new(SVG, Some(AssetType::Image), Format::Svg);
    }
    if inferred.is_some_and(|t| t.mime_type() == HTML) {
        return Sniffed::new(HTML, Some(AssetType::Document), Format::Html);
    }
    if let Some(t) = inferred {
        // XML or a script: text, but not a document.
        return Sniffed::new(t.mime_type(), None, Format::Other);
    }
    let mime = match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        _ => "text/plain",
    };
    Sniffed::new(mime, Some(AssetType::Document), Format::Text)
}

/// Audio or video, with the file name settling containers that hold either.
fn media(mime: &'static str, kind: AssetType, ext: &str) -> Sniffed {
    let (mime, kind) = match (mime, ext) {
        ("video/mp4", "m4a" | "m4b") => ("audio/mp4", AssetType::Audio),
        ("video/webm", "weba") => ("audio/webm", AssetType::Audio),
        ("video/x-matroska", "mka") => ("audio/x-matroska", AssetType::Audio),
        ("audio/ogg", "ogv") => ("video/ogg", AssetType::Video),
        other => (other.0, kind),
    };
    Sniffed::new(mime, Some(kind), Format::Other)
}

/// DOCX, ODT, PPTX or ODP, told apart by their parts: an OpenDocument's first entry
/// `mimetype` names its type; an Office Open XML package has `[Content_Types].xml` and its
/// main part, `word/document.xml` or `ppt/presentation.xml`.
pub(super) fn zip_document<R: Read + Seek>(archive: &mut zip::ZipArchive<R>) -> Option<Sniffed> {
    if let Some(index) = archive.index_for_name("mimetype") {
        let mut declared = Vec::with_capacity(64);
        let entry = archive.by_index(index).ok()?;
        entry.take(128).read_to_end(&mut declared).ok()?;
        return match declared.trim_ascii() {
            d if d == ODT.as_bytes() => {
                Some(Sniffed::new(ODT, Some(AssetType::Document), Format::Odt))
            }
            d if d == ODP.as_bytes() => {
                Some(Sniffed::new(ODP, Some(AssetType::Document), Format::Odp))
            }
            _ => None,
        };
    }
    archive.index_for_name("[Content_Types].xml")?;
    if archive.index_for_name("word/document.xml").is_some() {
        return Some(Sniffed::new(DOCX, Some(AssetType::Document), Format::Docx));
    }
    if archive.index_for_name("ppt/presentation.xml").is_some() {
        return Some(Sniffed::new(PPTX, Some(AssetType::Document), Format::Pptx));
    }
    None
}

/// Whether the bytes are UTF-8 text (an optional byte-order mark, then no control characters
/// but tab, line feed, form feed and carriage return).
pub(super) fn is_text(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let Ok(text) = std::str::from_utf8(bytes) else {
        return false;
    };
    !text
        .bytes()
        .any(|b| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r')) || b == 0x7F)
}

/// The lower-case extension of the last segment of a file name.
fn extension(file_name: &str) -> String {
    let base = file_name.rsplit(['/', '\\']).next().unwrap_or(file_name);
    match base.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}
