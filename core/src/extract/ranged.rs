//! Files larger than what is read whole ([`crate::Config::max_upload`]): their metadata read
//! by ranges ([`ReadAt`]), never the whole file in memory. See [`preview_ranged`].
//!
//! [`Ranged`] turns ranged reads into a buffered `Read + BufRead + Seek` for the crates that
//! read from one (`lofty`, `zip`, `imagesize`, `image`): it holds one buffer, of 64 KiB after
//! a seek, doubling up to 1 MiB while reads go on in sequence.

use std::io::{self, BufRead, Read, Seek, SeekFrom};
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::sniff::{self, Format, Sniffed};
use super::{
    Counts, ExtractError, FileInfo, Limits, ReadAt, Thumbnail, audio, pdf, raster, svg, words,
};
use crate::model::{AssetType, Media};

/// The buffer after a seek.
const MIN_CHUNK: usize = 64 * 1024;
/// The largest buffer, reached while reads go on in sequence.
const MAX_CHUNK: usize = 1024 * 1024;

/// A file read by ranges, as a buffered `Read + BufRead + Seek`. A read that fails (a store
/// that cannot be reached, or time that ran out) is that read's error.
pub(super) struct Ranged<'a> {
    file: &'a mut dyn ReadAt,
    size: u64,
    pos: u64,
    buf: Vec<u8>,
    buf_at: u64,
    chunk: usize,
}

impl<'a> Ranged<'a> {
    /// Reads `file` from its start.
    pub(super) fn new(file: &'a mut dyn ReadAt) -> Self {
        let size = file.size();
        Ranged {
            file,
            size,
            pos: 0,
            buf: Vec::new(),
            buf_at: 0,
            chunk: MIN_CHUNK,
        }
    }
}

impl Read for Ranged<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Ranged<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let buf_end = self.buf_at + self.buf.len() as u64;
        if self.pos < self.buf_at || self.pos >= buf_end {
            if self.pos >= self.size {
                return Ok(&[]);
            }
            self.chunk = if self.pos == buf_end && !self.buf.is_empty() {
                (self.chunk * 2).min(MAX_CHUNK)
            } else {
                MIN_CHUNK
            };
            // The old buffer goes before the new one is read.
            self.buf = Vec::new();
            self.buf = self.file.read_at(self.pos, self.chunk)?;
            self.buf_at = self.pos;
        }
        // Within the buffer, so the difference fits.
        let start = usize::try_from(self.pos - self.buf_at).unwrap_or(usize::MAX);
        Ok(self.buf.get(start..).unwrap_or(&[]))
    }

    fn consume(&mut self, n: usize) {
        self.pos = self.pos.saturating_add(n as u64);
    }
}

impl Seek for Ranged<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let new = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(delta) => self.size.checked_add_signed(delta),
            SeekFrom::Current(delta) => self.pos.checked_add_signed(delta),
        };
        self.pos = new.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "a seek before the file's start",
            )
        })?;
        Ok(self.pos)
    }
}

/// [`super::preview`] for a file of any size, read by ranges: `head` is its first bytes (at
/// least the first MiB, or the whole file when smaller), `file` the whole of it. What is read
/// and held is bounded whatever the file's size:
///
/// | type | read | fields | thumbnail |
/// |---|---|---|---|
/// | pdf | the cross-reference sections (tables and streams, every incremental update), the catalog, the page tree and each page's fonts and content | `page_count` from the page tree's `/Count`; `word_count` as [`super::extract`] counts it, while the page content decoded stays within [`Limits::max_pdf_decoded`] (null past it, or when a read fails) | none |
/// | audio | the headers and tags `lofty` reads (a WAV's `fmt ` chunk, an MP3's first frames and Xing header, ...) | as [`super::extract`] | the cover art |
/// | image | the header (`imagesize`) | `width`, `height` as displayed | within [`Limits::max_image_pixels`] and [`Limits::max_image_alloc`] (a PNG is decoded as it is read; another format's decoder holds the whole file, which then counts against `max_image_alloc`) |
/// | document (DOCX, ODT, PPTX, ODP) | the zip's central directory (at most 4 MiB of it), then only the parts needed | as [`super::extract`], inflated within [`Limits::max_zip_inflated`] | the picture it carries |
/// | document (text) | the text, as it streams | `word_count` over at most [`Limits::max_text_bytes`] (null past it) | none |
/// | document (HTML) | the page, whole, within [`Limits::max_text_bytes`] | `word_count` as [`super::extract`] (null past the bound) | none |
/// | video | nothing here (see [`super::video_info`]) | none | none |
///
/// The type is sniffed from `head` (a zip's parts from its central directory).
///
/// # Errors
/// As [`super::extract`]: [`ExtractError::TypeMismatch`] when the content is not of the
/// declared type, [`ExtractError::NotAFileType`] for a type that takes no file, and
/// [`ExtractError::LimitExceeded`] for a zip part over [`Limits::max_zip_inflated`].
pub fn preview_ranged(
    head: &[u8],
    file: &mut dyn ReadAt,
    file_name: &str,
    declared: Option<AssetType>,
    max_side: u32,
    limits: &Limits,
) -> Result<(FileInfo, Result<Option<Thumbnail>, ExtractError>), ExtractError> {
    let size = file.size();
    let head = if size > head.len() as u64 {
        whole_characters(head)
    } else {
        head
    };
    let sniffed = sniff_ranged(head, file, file_name);
    let kind = super::kind_of(&sniffed, declared)?;
    let mut info = FileInfo {
        mime_type: sniffed.mime_type.to_owned(),
        file_size: size,
        kind,
        page_count: None,
        word_count: None,
        width: None,
        height: None,
        media: Media::default(),
        text: None,
    };
    let mut thumb = Ok(None);
    match (kind, sniffed.format) {
        (Some(AssetType::Pdf), _) => {
            info.take_counts(pdf::read_large(file, limits));
        }
        (Some(AssetType::Document), format) if format.is_zipped() => {
            let (counts, picture) = zipped_document(file, sniffed.format, limits)?;
            info.take_counts(counts);
            thumb = picture.and_then(|p| match p {
                Some(picture) => raster::thumbnail(&picture, max_side, limits),
                None => Ok(None),
            });
        }
        (Some(AssetType::Document), Format::Text) => {
            let counter = text_words(
                &mut Ranged::new(file),
                limits.max_text_bytes,
                limits.keep_text,
            );
            info.take_counts(super::Counts::of(None, counter, false));
        }
        (Some(AssetType::Document), Format::Html) => {
            // Markup is read whole (within the text bound): a tag may span any two chunks.
            let mut page = Vec::new();
            let read = Ranged::new(file)
                .take(limits.max_text_bytes.saturating_add(1))
                .read_to_end(&mut page);
            if let Ok(counts) = read
                .map_err(|_| ())
                .and_then(|_| super::html::html(&page, limits).map_err(|_| ()))
            {
                info.take_counts(counts);
            }
        }
        (Some(AssetType::Image), Format::Svg) => {
            if let Some((w, h)) = svg::size(head) {
                (info.width, info.height) = (Some(w), Some(h));
            }
        }
        (Some(AssetType::Image), _) => {
            if let Some((w, h)) =
                guarded(|| super::size::dimensions_ranged(head, &mut Ranged::new(file)))
            {
                (info.width, info.height) = (Some(w), Some(h));
            }
            thumb = guarded(|| {
                Some(raster::thumbnail_ranged(
                    head,
                    &mut Ranged::new(file),
                    size,
                    max_side,
                    limits,
                ))
            })
            .unwrap_or(Ok(None));
        }
        (Some(AssetType::Audio), _) => {
            let read = audio::read_from(&mut Ranged::new(file), true);
            info.media = read.media;
            if let Some(cover) = read.cover {
                thumb = raster::thumbnail(&cover, max_side, limits);
            }
        }
        _ => {}
    }
    Ok((info, thumb))
}

/// `head` without a UTF-8 sequence cut at its end (the rest of the file has it), so that text
/// is still text.
fn whole_characters(head: &[u8]) -> &[u8] {
    match std::str::from_utf8(head) {
        Err(e) if e.error_len().is_none() => &head[..e.valid_up_to()],
        _ => head,
    }
}

/// What the content is: [`sniff::sniff`] of `head`, but a zip's parts are read from its
/// central directory, at the end of the file (a zip whose directory cannot be read so is no
/// document).
fn sniff_ranged(head: &[u8], file: &mut dyn ReadAt, file_name: &str) -> Sniffed {
    if infer::archive::is_zip(head)
        && let Some(found) = guarded(|| {
            let mut archive = open_zip(file)?;
            sniff::zip_document(&mut archive)
        })
    {
        return found;
    }
    sniff::sniff_head(head, file_name)
}

/// Most bytes of a zip archive's central directory read for its parts' names: a directory
/// is held parsed, at several times its size. 4 MiB lists some 50,000 parts.
pub(super) const MAX_ZIP_DIRECTORY: u64 = 4 * 1024 * 1024;

/// The zip archive of `file` by ranged reads, when its central directory is at most
/// [`MAX_ZIP_DIRECTORY`] bytes (told by its end record, read first).
fn open_zip(file: &mut dyn ReadAt) -> Option<zip::ZipArchive<Ranged<'_>>> {
    let directory = zip_directory_size(file)?;
    if directory > MAX_ZIP_DIRECTORY {
        return None;
    }
    zip::ZipArchive::new(Ranged::new(file)).ok()
}

/// The size of a zip archive's central directory, from its end record (the zip64 one when
/// the classic record says so); `None` when there is no end record in the last 64 KiB.
pub(super) fn zip_directory_size(file: &mut dyn ReadAt) -> Option<u64> {
    const END: &[u8] = b"PK\x05\x06";
    const END_LEN: u64 = 22;
    let size = file.size();
    let tail_len = size.min(END_LEN + u64::from(u16::MAX));
    let tail_at = size - tail_len;
    let tail = file
        .read_at(tail_at, usize::try_from(tail_len).ok()?)
        .ok()?;
    let at = memchr::memmem::rfind(&tail, END)?;
    let record = tail.get(at..at + 22)?;
    let le32 =
        |b: &[u8]| -> Option<u64> { Some(u64::from(u32::from_le_bytes(b.try_into().ok()?))) };
    let directory = le32(record.get(12..16)?)?;
    if directory != u64::from(u32::MAX) {
        return Some(directory);
    }
    // Zip64: a locator just before the end record names the zip64 end record.
    let locator_at = (tail_at + at as u64).checked_sub(20)?;
    let locator = file.read_at(locator_at, 20).ok()?;
    if !locator.starts_with(b"PK\x06\x07") {
        return None;
    }
    let record_at = u64::from_le_bytes(locator.get(8..16)?.try_into().ok()?);
    let record = file.read_at(record_at, 56).ok()?;
    if !record.starts_with(b"PK\x06\x06") {
        return None;
    }
    Some(u64::from_le_bytes(record.get(40..48)?.try_into().ok()?))
}

/// The picture a document carries, or why it could not be inflated.
type Picture = Result<Option<Vec<u8>>, ExtractError>;

/// What a DOCX, ODT, PPTX or ODP says of itself, and the picture it carries, read by ranges. An archive
/// that cannot be opened so gives nothing.
fn zipped_document(
    file: &mut dyn ReadAt,
    format: Format,
    limits: &Limits,
) -> Result<(Counts, Picture), ExtractError> {
    let read = catch_unwind(AssertUnwindSafe(|| {
        let Some(mut archive) = open_zip(file) else {
            return Ok((Counts::default(), Ok(None)));
        };
        let counts = super::zipped::archive_counts(&mut archive, format, limits)?;
        // The picture is read only to draw a thumbnail of.
        #[cfg(feature = "previews")]
        let picture = super::document::embedded_thumbnail_archive(&mut archive, limits);
        #[cfg(not(feature = "previews"))]
        let picture = Ok(None);
        Ok((counts, picture))
    }));
    read.unwrap_or(Ok((Counts::default(), Ok(None))))
}

/// Words of UTF-8 text read as it streams, as the word counter counts them in the whole text
/// (each invalid sequence one replacement character), keeping up to `keep` bytes of it;
/// `None` past `limit` bytes, or when a read fails.
pub(super) fn text_words(
    reader: &mut dyn BufRead,
    limit: u64,
    keep: u64,
) -> Option<words::WordCounter> {
    let mut counter = words::WordCounter::keeping(keep);
    let mut read = 0u64;
    // The chunk read, after the bytes of a sequence the previous chunk's end cut.
    let mut piece: Vec<u8> = Vec::new();
    loop {
        let chunk = reader.fill_buf().ok()?;
        if chunk.is_empty() {
            if !piece.is_empty() {
                counter.char(char::REPLACEMENT_CHARACTER);
            }
            return Some(counter);
        }
        read = read.saturating_add(chunk.len() as u64);
        if read > limit {
            return None;
        }
        piece.extend_from_slice(chunk);
        let n = chunk.len();
        reader.consume(n);
        let fed = feed(&mut counter, &piece);
        piece.drain(..fed);
    }
}

/// Feeds `bytes` to `counter` as `String::from_utf8_lossy` decodes them, but for a sequence
/// cut at their end; answers how many bytes were fed (the cut sequence is left).
fn feed(counter: &mut words::WordCounter, bytes: &[u8]) -> usize {
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                counter.text(text);
                return bytes.len();
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                // Valid, as the error says.
                counter.text(std::str::from_utf8(valid).unwrap_or_default());
                match e.error_len() {
                    Some(bad) => {
                        counter.char(char::REPLACEMENT_CHARACTER);
                        rest = &after[bad..];
                    }
                    None => return bytes.len() - after.len(),
                }
            }
        }
    }
}

/// `f`, or `None` when it panics: a crate reading hostile content may.
fn guarded<T>(f: impl FnOnce() -> Option<T>) -> Option<T> {
    catch_unwind(AssertUnwindSafe(f)).ok().flatten()
}
