//! Files read by ranges ([`super::super::preview_ranged`]): the same fields as a whole read
//! for every sample, and, for files far larger than what is read, their fields from a few
//! reads: a two-hour WAV, a 300-megapixel scan, a JPEG whose size sits past its first MiB, a
//! DOCX beside a large part, and a zip whose central directory is too large to read.

use std::io::{BufReader, Cursor, Write as _};

use super::*;
use crate::extract::ranged::{MAX_ZIP_DIRECTORY, text_words, zip_directory_size};
use crate::extract::{ReadAt, Thumbnail, preview_ranged, words};

/// The first bytes `ingest` hands over.
const HEAD: usize = 1024 * 1024;

/// A file of `size` bytes that are zero but for `parts` (offset, bytes), never held whole;
/// it counts what is read of it.
struct Virtual {
    size: u64,
    parts: Vec<(u64, Vec<u8>)>,
    read: u64,
    largest: usize,
}

impl Virtual {
    fn new(size: u64, parts: Vec<(u64, Vec<u8>)>) -> Self {
        Virtual {
            size,
            parts,
            read: 0,
            largest: 0,
        }
    }

    fn of(bytes: &[u8]) -> Self {
        Virtual::new(bytes.len() as u64, vec![(0, bytes.to_vec())])
    }

    fn head(&mut self) -> Vec<u8> {
        let head = self.read_at(0, HEAD).expect("in memory");
        self.read = 0;
        self.largest = 0;
        head
    }
}

impl ReadAt for Virtual {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&mut self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let end = offset.saturating_add(len as u64).min(self.size);
        let start = offset.min(end);
        let mut out = vec![0u8; usize::try_from(end - start).expect("small reads")];
        for (at, bytes) in &self.parts {
            let part_end = at + bytes.len() as u64;
            if part_end <= start || *at >= end {
                continue;
            }
            let from = start.max(*at);
            let to = end.min(part_end);
            out[(from - start) as usize..(to - start) as usize]
                .copy_from_slice(&bytes[(from - at) as usize..(to - at) as usize]);
        }
        self.read += out.len() as u64;
        self.largest = self.largest.max(out.len());
        Ok(out)
    }
}

fn ranged(
    file: &mut Virtual,
    name: &str,
    declared: Option<AssetType>,
) -> (FileInfo, Result<Option<Thumbnail>, ExtractError>) {
    let head = file.head();
    match preview_ranged(&head, file, name, declared, 320, &limits()) {
        Ok(read) => read,
        Err(e) => panic!("preview_ranged({name}) failed: {e}"),
    }
}

fn media(name: &str) -> Vec<u8> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/media");
    std::fs::read(dir.join(name)).expect("a committed media file")
}

#[test]
fn text_kept_by_ranges_is_the_text_kept_whole() {
    let keeping = Limits {
        keep_text: 1 << 20,
        ..limits()
    };
    for (name, bytes) in [
        ("report.pdf", samples::pdf_with_filler(3, 25, 1 << 20)),
        (
            "notes.docx",
            samples::docx(&["First paragraph.", "Second."]),
        ),
        ("notes.odt", samples::odt(&["One two.", "Three."])),
        ("notes.md", b"# Notes\n\nSome words.".to_vec()),
    ] {
        let whole = extract(&bytes, name, None, &keeping).expect("extract");
        let mut file = Virtual::of(&bytes);
        let head = file.head();
        let (got, _) =
            preview_ranged(&head, &mut file, name, None, 320, &keeping).expect("preview_ranged");
        assert!(whole.text.is_some(), "{name}");
        assert_eq!(got.text, whole.text, "{name}");
    }
}

#[test]
fn every_sample_reads_by_ranges_as_it_reads_whole() {
    let cover = samples::png(48, 48);
    let samples: Vec<(&str, Vec<u8>)> = vec![
        ("report.pdf", samples::pdf(3, 57)),
        (
            "notes.docx",
            samples::docx(&["First paragraph here.", "Second one."]),
        ),
        ("notes.odt", samples::odt(&["One two three.", "Four five."])),
        (
            "pictured.docx",
            samples::with_embedded_thumbnail(&samples::docx(&["A b c."]), &samples::jpeg(64, 48)),
        ),
        ("a.png", samples::png(640, 480)),
        ("b.jpg", samples::jpeg(300, 200)),
        ("c.webp", samples::webp(123, 45)),
        ("d.gif", samples::gif(64, 32)),
        ("turned.jpg", samples::jpeg_with_orientation(400, 200, 6)),
        ("tone.wav", samples::wav(1500, 8000, 1, Some(&cover))),
        ("sine.mp3", media("sine.mp3")),
        ("sine-cover.mp3", media("sine-cover.mp3")),
        ("sine.flac", media("sine.flac")),
        ("sine.ogg", media("sine.ogg")),
        ("sine.opus", media("sine.opus")),
        ("sine.m4a", media("sine.m4a")),
        (
            "notes.md",
            "# Notes\n\nSome words, ünïcödé too — and more.".into(),
        ),
        (
            "logo.svg",
            br#"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"/>"#.to_vec(),
        ),
        ("blob.bin", vec![0xFF, 0x00, 0x13, 0x37]),
    ];
    for (name, bytes) in samples {
        let whole = info(&bytes, name, None);
        let (got, thumb) = ranged(&mut Virtual::of(&bytes), name, None);
        assert_eq!(got, whole, "{name}");
        let whole_thumb = thumbnail(&bytes, 320, &limits()).expect("a thumbnail or none");
        if whole.kind == Some(AssetType::Pdf) {
            // A PDF read by ranges is never drawn.
            assert_eq!(thumb.expect("no error"), None, "{name}");
        } else {
            assert_eq!(
                thumb
                    .expect("no error")
                    .map(|t| (t.width, t.height, t.placeholder)),
                whole_thumb.map(|t| (t.width, t.height, t.placeholder)),
                "{name}"
            );
        }
    }
}

#[test]
fn the_declared_type_is_checked() {
    let png = samples::png(8, 8);
    let head = png.clone();
    let got = preview_ranged(
        &head,
        &mut Virtual::of(&png),
        "a.pdf",
        Some(AssetType::Pdf),
        320,
        &limits(),
    );
    assert!(matches!(got, Err(ExtractError::TypeMismatch { .. })));
    let got = preview_ranged(
        &head,
        &mut Virtual::of(&png),
        "a",
        Some(AssetType::Link),
        320,
        &limits(),
    );
    assert!(matches!(got, Err(ExtractError::NotAFileType(_))));
}

/// The header of a WAV of 16-bit PCM with `data_len` bytes of samples (which follow it).
fn wav_header(sample_rate: u32, channels: u16, data_len: u32) -> Vec<u8> {
    let block = u32::from(channels) * 2;
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&(4 + 8 + 16 + 8 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&channels.to_le_bytes());
    out.extend_from_slice(&sample_rate.to_le_bytes());
    out.extend_from_slice(&(sample_rate * block).to_le_bytes());
    out.extend_from_slice(&u16::try_from(block).expect("small").to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    out
}

#[test]
fn a_two_hour_wav_is_read_from_its_header() {
    // Two hours of 44.1 kHz stereo: 1.27 GB, never held.
    let data_len = 7200 * 44_100 * 4;
    let header = wav_header(44_100, 2, data_len);
    let size = header.len() as u64 + u64::from(data_len);
    let mut file = Virtual::new(size, vec![(0, header)]);
    let (got, thumb) = ranged(&mut file, "concert.wav", Some(AssetType::Audio));
    assert_eq!(got.mime_type, "audio/x-wav");
    assert_eq!(got.file_size, size);
    assert_eq!(got.media.duration_ms, Some(7_200_000));
    assert_eq!(got.media.sample_rate, Some(44_100));
    assert_eq!(got.media.channels, Some(2));
    assert_eq!(got.media.bitrate, Some(1_411_000));
    assert_eq!(thumb.expect("no error"), None);
    assert!(file.read < 2 * 1024 * 1024, "read {} bytes", file.read);
}

#[test]
fn an_mp3_read_by_ranges_has_its_duration() {
    let mp3 = media("sine.mp3");
    let whole = info(&mp3, "sine.mp3", Some(AssetType::Audio));
    let mut file = Virtual::of(&mp3);
    let (got, _) = ranged(&mut file, "sine.mp3", Some(AssetType::Audio));
    assert!(whole.media.duration_ms.is_some_and(|ms| ms > 0));
    assert_eq!(got.media, whole.media);
}

/// A PNG's signature and header chunk for `width` x `height` RGB pixels.
fn png_header(width: u32, height: u32) -> Vec<u8> {
    let mut ihdr = b"IHDR".to_vec();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    let crc = {
        let mut hasher = flate2::Crc::new();
        hasher.update(&ihdr);
        hasher.sum()
    };
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend_from_slice(&13u32.to_be_bytes());
    out.extend_from_slice(&ihdr);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

#[test]
fn a_300_megapixel_scan_has_its_size_and_no_thumbnail() {
    let mut file = Virtual::new(400 << 20, vec![(0, png_header(20_000, 15_000))]);
    let (got, thumb) = ranged(&mut file, "scan.png", Some(AssetType::Image));
    assert_eq!((got.width, got.height), (Some(20_000), Some(15_000)));
    assert!(
        matches!(
            thumb,
            Err(ExtractError::LimitExceeded { unit: "pixels", .. })
        ),
        "{thumb:?}"
    );
    assert!(file.read < 1024 * 1024, "read {} bytes", file.read);
}

/// `jpeg` with `segments` application segments of 60 KiB before its frame header.
fn padded_jpeg(jpeg: &[u8], segments: usize) -> Vec<u8> {
    let mut out = jpeg[..2].to_vec();
    for _ in 0..segments {
        out.extend_from_slice(&[0xFF, 0xEF]);
        out.extend_from_slice(&(60 * 1024u16 + 2).to_be_bytes());
        out.extend(std::iter::repeat_n(b'x', 60 * 1024));
    }
    out.extend_from_slice(&jpeg[2..]);
    out
}

#[test]
fn a_jpeg_whose_size_is_past_its_first_mib() {
    let jpeg = padded_jpeg(&samples::jpeg(640, 480), 24);
    assert!(jpeg.len() > HEAD);
    let (got, thumb) = ranged(&mut Virtual::of(&jpeg), "photo.jpg", Some(AssetType::Image));
    assert_eq!((got.width, got.height), (Some(640), Some(480)));
    let thumb = thumb.expect("no error").expect("a thumbnail");
    assert_eq!(
        (thumb.width, thumb.height, thumb.mime_type),
        (320, 240, "image/jpeg")
    );
    // A decoder that holds the whole file counts it against the allocation limit.
    let mut small = limits();
    small.max_image_alloc = jpeg.len() as u64;
    let mut file = Virtual::of(&jpeg);
    let head = file.head();
    let (_, thumb) =
        preview_ranged(&head, &mut file, "photo.jpg", None, 320, &small).expect("read");
    assert!(
        matches!(
            thumb,
            Err(ExtractError::LimitExceeded { .. } | ExtractError::Image(_))
        ),
        "{thumb:?}"
    );
}

/// A zip archive of `parts`, stored (not deflated) when `stored`.
fn zip_of(parts: &[(&str, &[u8])], stored: bool) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let method = if stored {
        zip::CompressionMethod::Stored
    } else {
        zip::CompressionMethod::Deflated
    };
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    // (Large parts are stored, as a DOCX keeps its media.)
    for (name, bytes) in parts {
        zip.start_file(*name, options).expect("start");
        zip.write_all(bytes).expect("write");
    }
    zip.finish().expect("finish");
    out.into_inner()
}

#[test]
fn a_docx_beside_a_large_part_reads_little() {
    let docx = samples::docx(&["Seven words in this one short paragraph."]);
    let mut archive = zip::ZipArchive::new(Cursor::new(&docx)).expect("a docx");
    let mut parts: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..archive.len() {
        let mut part = archive.by_index(i).expect("part");
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut part, &mut bytes).expect("inflate");
        parts.push((part.name().to_owned(), bytes));
    }
    let video = samples::noise(12 << 20);
    parts.insert(0, ("word/media/video1.mp4".to_owned(), video));
    let borrowed: Vec<(&str, &[u8])> = parts
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let big = zip_of(&borrowed, true);
    let mut file = Virtual::of(&big);
    let (got, _) = ranged(&mut file, "big.docx", Some(AssetType::Document));
    let whole = info(&docx, "small.docx", Some(AssetType::Document));
    assert_eq!(got.mime_type, whole.mime_type);
    assert_eq!(
        (got.page_count, got.word_count),
        (whole.page_count, Some(7))
    );
    assert!(file.read < 2 * 1024 * 1024, "read {} bytes", file.read);
}

#[test]
fn a_zip_directory_over_its_bound_is_not_read() {
    let docx = samples::docx(&["Words."]);
    let directory = zip_directory_size(&mut Virtual::of(&docx)).expect("an end record");
    assert!(directory > 0 && directory < 4096, "{directory}");
    // The end record claims a central directory past the bound.
    let end = docx
        .windows(4)
        .rposition(|w| w == b"PK\x05\x06")
        .expect("end record");
    let mut claimed = docx.clone();
    claimed[end + 12..end + 16].copy_from_slice(
        &u32::try_from(MAX_ZIP_DIRECTORY + 1)
            .expect("small")
            .to_le_bytes(),
    );
    assert_eq!(
        zip_directory_size(&mut Virtual::of(&claimed)),
        Some(MAX_ZIP_DIRECTORY + 1)
    );
    let head = claimed.clone();
    let got = preview_ranged(
        &head,
        &mut Virtual::of(&claimed),
        "x.docx",
        Some(AssetType::Document),
        320,
        &limits(),
    );
    assert!(
        matches!(got, Err(ExtractError::TypeMismatch { .. })),
        "{got:?}"
    );
    // No end record at all: not an archive to read.
    assert_eq!(
        zip_directory_size(&mut Virtual::of(b"PK\x03\x04 and nothing")),
        None
    );
}

#[test]
fn text_words_are_counted_as_they_stream() {
    let text = "Ünïcödé wörds — split across réads, 漢字 too;\tand\u{3000}more\n".repeat(50);
    let mut bytes = text.into_bytes();
    // Invalid sequences in the middle and a cut one at the end.
    bytes.splice(100..100, [0xFF, 0xFE, b'x', 0xC3]);
    bytes.extend_from_slice(&[b' ', 0xE6, 0xBC]);
    let whole = words::count(&String::from_utf8_lossy(&bytes));
    for capacity in [1, 2, 3, 5, 7, 64, 4096] {
        let mut reader = BufReader::with_capacity(capacity, &bytes[..]);
        assert_eq!(
            text_words(&mut reader, u64::MAX, 0).map(|c| c.count()),
            Some(whole),
            "chunks of {capacity}"
        );
    }
    let mut reader = BufReader::new(&bytes[..]);
    assert_eq!(
        text_words(&mut reader, bytes.len() as u64 - 1, 0).map(|c| c.count()),
        None,
        "past the cap"
    );
}

#[test]
fn a_large_text_past_its_cap_has_no_word_count() {
    let mut small = limits();
    small.max_text_bytes = 1024;
    let text = "word ".repeat(1000);
    let mut file = Virtual::of(text.as_bytes());
    let head = file.head();
    let (got, _) = preview_ranged(&head, &mut file, "a.txt", None, 320, &small).expect("read");
    assert_eq!(
        (got.kind, got.word_count),
        (Some(AssetType::Document), None)
    );
}
