//! File metadata: what a file is, and the fields the contract fills from it.
//!
//! Pure, synchronous functions work on a file's bytes (bounded by the upload limit) and
//! never touch a file system. Each bounds its own memory and work by [`Limits`], so a hostile
//! file cannot make them take unbounded memory; callers still run them off the async runtime
//! (`spawn_blocking`) with a timeout, because a large file takes real time.
//!
//! - [`sniff`]: the MIME type and the inferred [`AssetType`], from the content (magic bytes);
//!   the file name only decides between text formats, or between audio and video in a
//!   container that can hold either.
//! - [`extract`]: [`FileInfo`], the asset's file fields, after checking that the content is of
//!   the declared type ([`ExtractError::TypeMismatch`] otherwise, which the caller answers as
//!   400 on `file_path`).
//! - [`thumbnail`]: a small PNG or JPEG of an image, a PDF's first page, an audio file's cover
//!   or the picture a document carries, with its ThumbHash placeholder.
//! - [`preview`]: both at once, sharing their work (what a caller storing a file wants).
//! - [`video_info`]: a video's facts from its container's index, by ranged reads ([`ReadAt`]).
//! - [`preview_ranged`]: [`preview`] of a file of any size, by ranged reads: what a caller
//!   uses for a file larger than it reads whole (a resumable upload's), in bounded memory.
//!
//! ```
//! use assetlib_core::extract::{self, Limits, samples};
//! use assetlib_core::AssetType;
//!
//! let pdf = samples::pdf(3, 50);
//! let info = extract::extract(&pdf, "report.pdf", Some(AssetType::Pdf), &Limits::default())?;
//! assert_eq!(info.mime_type, "application/pdf");
//! assert_eq!((info.page_count, info.word_count), (Some(3), Some(150)));
//!
//! let png = samples::png(640, 480);
//! let err = extract::extract(&png, "logo.pdf", Some(AssetType::Pdf), &Limits::default());
//! assert!(matches!(err, Err(extract::ExtractError::TypeMismatch { .. })));
//! # Ok::<(), extract::ExtractError>(())
//! ```
//!
//! ## What is extracted
//! Every type gets `mime_type` and `file_size`. Beyond that:
//!
//! | type | accepted content | fields |
//! |---|---|---|
//! | pdf | PDF | `page_count` (page tree), `word_count` (text of every page) |
//! | document | DOCX | `word_count` (text of `word/document.xml`), `page_count` (`<Pages>` of `docProps/app.xml`, when the writer saved it) |
//! | document | ODT | `page_count`, `word_count` (`meta:document-statistic` of `meta.xml`; words counted in `content.xml` when it has none) |
//! | document | PPTX | `page_count` (slides in the presentation's slide list), `word_count` (text of the slides, notes aside) |
//! | document | ODP | `page_count` (`draw:page`s of `content.xml`), `word_count` (text of the slides, notes aside) |
//! | document | plain text, Markdown (UTF-8) | `word_count` |
//! | document | HTML (UTF-8) | `word_count` (the text a reader sees: not markup, comments, scripts or styles) |
//! | image | PNG, JPEG, GIF, WebP; also BMP, TIFF, HEIF/AVIF, ICO, JPEG XL, PSD, QOI, SVG | `width`, `height` as displayed (an EXIF orientation of 5-8 swaps them); null when the header does not give them |
//! | video | any `video/*` container (MP4, WebM, QuickTime, Matroska, AVI, ...) | none from [`extract`]: [`video_info`] reads `width`, `height` (as displayed), playing time and codec of MP4, QuickTime, WebM and Matroska from the container's index, by ranged reads |
//! | audio | any `audio/*` (MP3, WAV, Ogg, FLAC, M4A, ...), and MP4/WebM/Matroska containers (which may hold sound only) | `media`: duration (ms), sample rate, channels, bit rate (whole kbps, as bits per second), read with `lofty`; null where it cannot read them |
//!
//! A word is a run of non-whitespace text with at least one letter or digit in it (so a
//! Markdown `#` or a lone dash is not a word). Paragraph, line, tab and text-object boundaries
//! count as whitespace, and markup does not (so `Hel<b>lo</b>` is one word). In a PDF, a gap
//! of more than a tenth of an em between two strings also separates words, and text inside
//! form XObjects and annotations is not counted; in a DOCX, only the body (not headers,
//! footers or notes) is counted.
//!
//! ## Unreadable content
//! Only two things are errors: content that is not of the declared type, and a document that
//! needs more work than [`Limits`] allow ([`ExtractError::LimitExceeded`]). Content that is of
//! the right type but cannot be read gives null fields instead, so the asset can still be
//! created:
//! - a PDF that cannot be parsed, an encrypted PDF (`page_count` only, when its page tree can be
//!   read without a password), or one whose streams decode to more than the limits allow, or
//!   that nests or loops deeper than they allow (see the bounds below);
//! - a DOCX, ODT, PPTX or ODP whose XML is damaged;
//! - an image whose header does not give its size.
//!
//! ## Bounds
//! | what | bound | past it |
//! |---|---|---|
//! | DOCX/ODT/PPTX/ODP parts inflated (and XML parsed) | [`Limits::max_zip_inflated`], 64 MiB | [`ExtractError::LimitExceeded`] |
//! | plain text, Markdown and HTML | [`Limits::max_text_bytes`], 128 MiB | [`ExtractError::LimitExceeded`] |
//! | one PDF stream, decoded | [`Limits::max_pdf_stream`], 64 MiB | null counts |
//! | all PDF streams, decoded | [`Limits::max_pdf_decoded`], 512 MiB | null counts |
//! | PDF object and cross-reference streams, decoded | 32 MiB | null counts |
//! | one PDF page's content | [`Limits::max_pdf_page_content`], 4 MiB | null `word_count` |
//! | PDF font `ToUnicode` maps | 4 MiB each, 16 MiB together | null `word_count` |
//! | PDF nesting: arrays and dictionaries; references followed to find a stream's length; page tree levels and a page's `/Parent` chain | 64 levels; 8 in a row; 256 levels (a loop in any is past them) | null counts |
//! | pixels decoded for a thumbnail | [`Limits::max_image_pixels`], 50 million | [`ExtractError::LimitExceeded`] |
//! | image decoder allocations | [`Limits::max_image_alloc`], 256 MiB | [`ExtractError::Image`] |
//! | a file read by ranges: a zip's central directory | 4 MiB | no document |
//! | a file read by ranges: an image decoder that holds the file (all but PNG), the file and the pixels together | [`Limits::max_image_alloc`] | no thumbnail |
//! | a file read by ranges: a PDF's object and cross-reference streams kept, and the fonts and pages kept for words | 32 MiB each | null counts, or null `word_count` |
//!
//! Reading sizes and orientation never decodes pixels, and sniffing reads only headers and a
//! zip archive's directory. The PDF parser (`lopdf`) is given a file only after a pre-scan
//! has measured every stream it could decode and everything it would parse by recursion; a
//! panic inside it makes the file unreadable (null counts) rather than failing the call.
//!
//! ## Thumbnails
//! See [`thumbnail`]: PNG, JPEG, GIF (first frame) and WebP images at most `max_side` pixels
//! on the long side, EXIF orientation applied, never enlarged (a JPEG gives a JPEG at quality
//! 85, anything else a PNG, which keeps transparency); a PDF's page 1 drawn on white at
//! `max_side` by `hayro` as [`Limits::pdf_renderer`] says (in a child process bounded in time
//! and memory, or not at all), only after the pre-scan above passes and never for an encrypted
//! file, nor for one whose pages cannot be counted; an audio file's cover art and a DOCX's or
//! ODT's embedded picture, as images. Other formats (SVG, HEIF, TIFF, video, ...) get none (a
//! video's poster frame is drawn by ffmpeg, outside this module). Each thumbnail carries its ThumbHash
//! (taken of it scaled to fit 32 pixels), base64.

#[cfg(feature = "previews")]
mod audio;
mod document;
mod html;
#[cfg(not(feature = "previews"))]
mod off;
#[cfg(not(feature = "previews"))]
use off::{audio, raster};
mod pdf;
#[cfg(feature = "previews")]
mod pdf_child;
#[cfg(feature = "variants")]
pub(crate) use pdf_child::RenderFailed as PageNotDrawn;
#[cfg(feature = "previews")]
mod pdf_page;
mod presentation;
mod ranged;
#[cfg(feature = "previews")]
mod raster;
mod read_at;
#[cfg(any(test, feature = "samples"))]
pub mod samples;
mod size;
mod sniff;
mod svg;
// The counts run in every build; thumbnails, media facts and large files with `previews`.
#[cfg(test)]
mod tests;
#[cfg(feature = "previews")]
mod video;
mod words;
mod zipped;

#[cfg(feature = "previews")]
pub use pdf_child::{PDF_RENDER_ARG, PdfRenderer, pdf_render_child, stop_pdf_renders};
pub use ranged::preview_ranged;
pub use sniff::{Sniffed, sniff};

#[cfg(feature = "variants")]
pub(crate) use raster::{Opening, open as open_image, turns_quarter};

/// Page 1 of a PDF as RGBA on white, its long side what `long_side` says of the page's width
/// and height in points, after the pre-scan that guards thumbnails; `None` when it cannot be
/// rendered.
/// A page the renderer was stopped on or failed (see [`pdf_child`]) is logged, and is the
/// error.
#[cfg(feature = "variants")]
pub(crate) fn pdf_page_image(
    bytes: &bytes::Bytes,
    limits: &Limits,
    long_side: impl FnOnce(f64, f64) -> u32,
) -> Result<Option<image::RgbaImage>, PageNotDrawn> {
    if !pdf::read_pdf(bytes, limits).renderable {
        return Ok(None);
    }
    pdf_child::draw(bytes, limits, long_side).inspect_err(|e| {
        tracing::warn!(error = %e, "PDF page not drawn");
    })
}

/// The page drawn, or `None` with the reason logged when the renderer was stopped or failed.
#[cfg(feature = "previews")]
fn drawn_or_logged(
    drawn: Result<Option<image::RgbaImage>, pdf_child::RenderFailed>,
) -> Option<image::RgbaImage> {
    drawn.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "PDF page not drawn");
        None
    })
}

pub use read_at::ReadAt;
#[cfg(feature = "previews")]
pub use video::{VideoInfo, is_probed, video_info};

use bytes::Bytes;

use crate::error::BoxError;
use crate::model::{AssetType, Media};

/// Bounds on the work and memory one call may take. The defaults suit the default upload limit
/// (100 MiB); each limit is documented with its default.
///
/// ```
/// let mut limits = assetlib_core::extract::Limits::default();
/// limits.max_image_pixels = 24_000_000;
/// assert_eq!(limits.max_zip_inflated, 64 * 1024 * 1024);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Most bytes inflated from one DOCX or ODT archive, all parts read together (default
    /// 64 MiB). This bounds both memory and the XML parsed; more is
    /// [`ExtractError::LimitExceeded`] (a zip bomb).
    pub max_zip_inflated: u64,
    /// Most bytes of a plain-text or Markdown file whose words are counted (default 128 MiB);
    /// more is [`ExtractError::LimitExceeded`].
    pub max_text_bytes: u64,
    /// Most bytes any one PDF stream may decode to (default 64 MiB). A PDF with a larger stream
    /// gets null counts rather than being parsed.
    pub max_pdf_stream: u64,
    /// Most bytes all of a PDF's streams may decode to together, images included, and most
    /// page content parsed for text (default 512 MiB: a 100 MiB PDF of losslessly compressed
    /// pictures decodes to about this). This bounds the work; beyond it a PDF gets null counts.
    pub max_pdf_decoded: u64,
    /// Most bytes of content one PDF page may have for its text to be read (default 4 MiB:
    /// parsing content takes many times its size in memory). A larger page makes
    /// `word_count` null.
    pub max_pdf_page_content: u64,
    /// Most pixels of an image decoded for a thumbnail (default 50 million, e.g. 8660 x 5773);
    /// more is [`ExtractError::LimitExceeded`].
    pub max_image_pixels: u64,
    /// Most bytes the image decoder may allocate (default 256 MiB).
    pub max_image_alloc: u64,
    /// Most bytes of a video container's index read for its facts (default 64 MiB): an MP4's
    /// `moov` box, or a Matroska file's `Info` and `Tracks` elements each. A larger index gives
    /// no facts.
    pub max_video_index: u64,
    /// Most bytes of a PDF's or document's text kept in [`FileInfo::text`] (default 0: none
    /// is kept); the text past it is dropped, the words are still counted.
    pub keep_text: u64,
    /// How PDF pages are drawn for thumbnails and image variants (default
    /// [`PdfRenderer::Off`]: not at all). [`PdfRenderer::Child`] draws each in a child
    /// process bounded by the two limits below; the ready servers are their own renderer.
    #[cfg(feature = "previews")]
    pub pdf_renderer: PdfRenderer,
    /// Longest time one PDF page may take to draw in a child (default 5 s); past it the child
    /// is killed, and the PDF gets no thumbnail (or its variant is refused).
    #[cfg(feature = "previews")]
    pub pdf_render_timeout: std::time::Duration,
    /// Most address space a render child may take besides the file's own size (default
    /// 192 MiB, `RLIMIT_AS`): a page of text at 2048 pixels needs a third of it. Past it the
    /// child ends, and the PDF gets no page. With [`crate::Config::preview_workers`] and
    /// [`crate::Config::image_workers`] this bounds what renders take together.
    #[cfg(feature = "previews")]
    pub max_pdf_render_memory: u64,
}

impl Default for Limits {
    fn default() -> Self {
        const MIB: u64 = 1024 * 1024;
        Limits {
            max_zip_inflated: 64 * MIB,
            max_text_bytes: 128 * MIB,
            max_pdf_stream: 64 * MIB,
            max_pdf_decoded: 512 * MIB,
            max_pdf_page_content: 4 * MIB,
            max_image_pixels: 50_000_000,
            max_image_alloc: 256 * MIB,
            max_video_index: 64 * MIB,
            keep_text: 0,
            #[cfg(feature = "previews")]
            pdf_renderer: PdfRenderer::Off,
            #[cfg(feature = "previews")]
            pdf_render_timeout: std::time::Duration::from_secs(5),
            #[cfg(feature = "previews")]
            max_pdf_render_memory: 192 * MIB,
        }
    }
}

/// The file fields of an asset, as [`extract`] found them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// Media type from the content, e.g. `application/pdf`.
    pub mime_type: String,
    /// Size in bytes.
    pub file_size: u64,
    /// The asset type: the declared one when given (and matched by the content), else the one
    /// inferred from the content; `None` when the content is of no file-based type.
    pub kind: Option<AssetType>,
    /// Pages of a PDF or document, when known.
    pub page_count: Option<u64>,
    /// Words of a PDF or document, when known.
    pub word_count: Option<u64>,
    /// Width of an image as displayed, in pixels.
    pub width: Option<u32>,
    /// Height of an image as displayed, in pixels.
    pub height: Option<u32>,
    /// What an audio file plays (a video's facts are read by the caller, from the container).
    pub media: Media,
    /// The text of a PDF or document, when [`Limits::keep_text`] asks for it and the words
    /// could be read: for search.
    pub text: Option<FileText>,
}

/// The text inside a PDF or document, as its words were read: whitespace runs as one space.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileText {
    /// One item per page of a PDF, else one item.
    pub pages: Vec<String>,
    /// Whether the items are pages.
    pub paged: bool,
}

impl FileInfo {
    /// Takes the pages, words and text of `counts`.
    fn take_counts(&mut self, counts: Counts) {
        self.page_count = counts.pages;
        self.word_count = counts.words;
        self.text = counts.text;
    }
}

/// A thumbnail made by [`thumbnail`].
#[derive(Clone, PartialEq, Eq)]
pub struct Thumbnail {
    /// The encoded image.
    pub bytes: Vec<u8>,
    /// `image/png` or `image/jpeg`.
    pub mime_type: &'static str,
    /// `png` or `jpg`, for the file name.
    pub extension: &'static str,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Its ThumbHash, base64: the asset's `thumbnail_placeholder`.
    pub placeholder: String,
}

impl std::fmt::Debug for Thumbnail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Thumbnail")
            .field("bytes", &self.bytes.len())
            .field("mime_type", &self.mime_type)
            .field("width", &self.width)
            .field("height", &self.height)
            .finish()
    }
}

/// Why a file's metadata could not be given.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExtractError {
    /// The content is not of the declared type. Answered as 400 on `file_path`.
    #[error("file_path content is {found_mime}, which is not a valid {declared} file")]
    TypeMismatch {
        /// The type the request declared.
        declared: AssetType,
        /// The media type the content turned out to be.
        found_mime: String,
    },
    /// The declared type does not take a file (external_video, link, collection, git).
    #[error("an asset of type {0} does not take a file")]
    NotAFileType(AssetType),
    /// Reading the file would take more than a [`Limits`] bound allows.
    #[error("{what} exceeds the limit of {limit} {unit}")]
    LimitExceeded {
        /// What grew too large, e.g. `inflated archive content`.
        what: &'static str,
        /// The limit that was hit.
        limit: u64,
        /// The unit of `limit`: `bytes` or `pixels`.
        unit: &'static str,
    },
    /// An image could not be decoded or encoded for a thumbnail.
    #[error("the image could not be processed")]
    Image(#[source] BoxError),
}

impl ExtractError {
    fn limit(what: &'static str, limit: u64) -> Self {
        ExtractError::LimitExceeded {
            what,
            limit,
            unit: "bytes",
        }
    }
}

/// Reads a file's metadata, checking that its content is of the `declared` type.
///
/// `file_name` only refines what the content leaves open (see [`sniff`]). With `declared`
/// `None`, the type is inferred from the content and [`FileInfo::kind`] says which it is
/// (`None` for content of no file-based type, which then has only `mime_type` and `file_size`).
///
/// # Errors
/// [`ExtractError::TypeMismatch`] when the content is not of the declared type,
/// [`ExtractError::NotAFileType`] for a type that takes no file, and
/// [`ExtractError::LimitExceeded`] when a document needs more work than `limits` allow.
pub fn extract(
    bytes: &[u8],
    file_name: &str,
    declared: Option<AssetType>,
    limits: &Limits,
) -> Result<FileInfo, ExtractError> {
    read(bytes, &sniff(bytes, file_name), declared, limits).map(|(info, _)| info)
}

/// [`extract`] and [`thumbnail`] at once, sharing the work both need (one sniff, one pass of
/// the PDF pre-scan, and the bytes handed to the PDF renderer without a copy): what a caller
/// that stores a file wants. The thumbnail's own failure is in the inner result (callers
/// usually log it and go on without one); a video's thumbnail is none (see
/// [`video_info`] for its facts).
///
/// # Errors
/// As [`extract`].
pub fn preview(
    bytes: &Bytes,
    file_name: &str,
    declared: Option<AssetType>,
    max_side: u32,
    limits: &Limits,
) -> Result<(FileInfo, Result<Option<Thumbnail>, ExtractError>), ExtractError> {
    let sniffed = sniff(bytes, file_name);
    let (info, pdf) = read(bytes, &sniffed, declared, limits)?;
    let thumb = match info.kind {
        Some(AssetType::Video) => Ok(None),
        _ => picture(bytes, &sniffed, pdf, max_side, limits),
    };
    Ok((info, thumb))
}

/// The asset type of content `sniffed`: the `declared` one when the content is of it, else
/// the one the content is of (`None` for content of no file-based type).
fn kind_of(
    sniffed: &Sniffed,
    declared: Option<AssetType>,
) -> Result<Option<AssetType>, ExtractError> {
    match declared {
        Some(t) if !t.is_file_based() => Err(ExtractError::NotAFileType(t)),
        Some(t) if !sniffed.is_acceptable_as(t) => Err(ExtractError::TypeMismatch {
            declared: t,
            found_mime: sniffed.mime_type.to_owned(),
        }),
        Some(t) => Ok(Some(t)),
        None => Ok(sniffed.kind),
    }
}

/// The fields of content `sniffed` as it is, and what reading a PDF found.
fn read(
    bytes: &[u8],
    sniffed: &Sniffed,
    declared: Option<AssetType>,
    limits: &Limits,
) -> Result<(FileInfo, Option<pdf::PdfRead>), ExtractError> {
    let kind = kind_of(sniffed, declared)?;
    let mut info = FileInfo {
        mime_type: sniffed.mime_type.to_owned(),
        file_size: bytes.len() as u64,
        kind,
        page_count: None,
        word_count: None,
        width: None,
        height: None,
        media: Media::default(),
        text: None,
    };
    let mut pdf_read = None;
    match (kind, sniffed.format) {
        (Some(AssetType::Pdf), _) => {
            let mut read = pdf::read_pdf(bytes, limits);
            info.page_count = read.counts.pages;
            info.word_count = read.counts.words;
            info.text = read.counts.text.take();
            pdf_read = Some(read);
        }
        (Some(AssetType::Document), format) if format.is_zipped() => {
            info.take_counts(zipped::zipped(bytes, format, limits)?);
        }
        (Some(AssetType::Document), sniff::Format::Text) => {
            info.take_counts(document::text(bytes, limits)?);
        }
        (Some(AssetType::Document), sniff::Format::Html) => {
            info.take_counts(html::html(bytes, limits)?);
        }
        (Some(AssetType::Image), format) => {
            let size = if format == sniff::Format::Svg {
                svg::size(bytes)
            } else {
                size::dimensions(bytes)
            };
            if let Some((w, h)) = size {
                info.width = Some(w);
                info.height = Some(h);
            }
        }
        (Some(AssetType::Audio), _) => {
            info.media = audio::read(bytes, false).media;
        }
        _ => {}
    }
    Ok((info, pdf_read))
}

/// Makes the thumbnail of a file, at most `max_side` pixels on the long side (320 for the
/// contract), aspect ratio kept, with its placeholder:
/// - a PNG, JPEG, GIF (first frame) or WebP image: the image, EXIF orientation applied,
///   never enlarged; a JPEG gives a JPEG, anything else a PNG;
/// - a PDF: page 1, rendered to exactly `max_side` on its long side, as a PNG, when the file
///   is not encrypted and its pages can be counted within `limits` (so a PDF's page and word
///   counts are read too: [`preview`] gives both for the work of one);
/// - an audio file: its cover art (the front cover, else the first picture), as for an image;
/// - an ODF or OOXML document: the picture of its first page that the file carries, as for an
///   image.
///
/// Other content (SVG, HEIF, TIFF, video, ...) and files without such a picture give
/// `Ok(None)`, and so does a PDF that cannot be rendered within `limits`.
///
/// # Errors
/// [`ExtractError::LimitExceeded`] for an image (or cover, or embedded picture) of more than
/// [`Limits::max_image_pixels`] or an archive part larger than [`Limits::max_zip_inflated`],
/// and [`ExtractError::Image`] for one that cannot be decoded. Callers usually log either and
/// go on without a thumbnail.
pub fn thumbnail(
    bytes: &[u8],
    max_side: u32,
    limits: &Limits,
) -> Result<Option<Thumbnail>, ExtractError> {
    let sniffed = sniff(bytes, "");
    let pdf = (sniffed.format == sniff::Format::Pdf).then(|| pdf::read_pdf(bytes, limits));
    picture(
        &Bytes::copy_from_slice(bytes),
        &sniffed,
        pdf,
        max_side,
        limits,
    )
}

/// The thumbnail of content `sniffed` as it is; `pdf` is what reading it as a PDF found.
#[cfg(feature = "previews")]
fn picture(
    bytes: &Bytes,
    sniffed: &Sniffed,
    pdf: Option<pdf::PdfRead>,
    max_side: u32,
    limits: &Limits,
) -> Result<Option<Thumbnail>, ExtractError> {
    match (sniffed.kind, sniffed.format) {
        (_, sniff::Format::Pdf) => {
            let page = pdf
                .filter(|read| read.renderable)
                .and_then(|_| drawn_or_logged(pdf_child::draw(bytes, limits, |_, _| max_side)));
            match page {
                Some(page) => raster::finish(page.into(), max_side, false).map(Some),
                None => Ok(None),
            }
        }
        (_, format) if format.is_zipped() => match document::embedded_thumbnail(bytes, limits)? {
            Some(picture) => raster::thumbnail(&picture, max_side, limits),
            None => Ok(None),
        },
        (Some(AssetType::Audio), _) => match audio::read(bytes, true).cover {
            Some(cover) => raster::thumbnail(&cover, max_side, limits),
            None => Ok(None),
        },
        _ => raster::thumbnail(bytes, max_side, limits),
    }
}

/// No thumbnail: without the `previews` feature nothing is drawn.
#[cfg(not(feature = "previews"))]
fn picture(
    _: &Bytes,
    _: &Sniffed,
    _: Option<pdf::PdfRead>,
    _: u32,
    _: &Limits,
) -> Result<Option<Thumbnail>, ExtractError> {
    Ok(None)
}

/// Counts found in a paged document, and its text when [`Limits::keep_text`] asks for it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Counts {
    pages: Option<u64>,
    words: Option<u64>,
    text: Option<FileText>,
}

impl Counts {
    /// The counts and the text of what `counter` counted (`None`: it could not be read).
    fn of(pages: Option<u64>, counter: Option<words::WordCounter>, paged: bool) -> Counts {
        match counter {
            Some(mut counter) => Counts {
                pages,
                words: Some(counter.count()),
                text: counter.take_pages().map(|pages| FileText { pages, paged }),
            },
            None => Counts {
                pages,
                ..Counts::default()
            },
        }
    }
}
