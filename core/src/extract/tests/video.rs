//! Video facts from containers: the committed media corpus against what `ffprobe` reported of
//! it (`testdata/media/ffprobe.json`, written by `testdata/media/make.sh`), indexes far from
//! the start read with few small reads, and hostile containers.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::super::video::TOP_LEVEL_STEPS;
use super::super::{ReadAt, VideoInfo, video_info};
use super::*;

/// Where the media corpus is.
fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/media")
}

/// What `ffprobe` reported of each file of the corpus.
#[derive(Debug, serde::Deserialize)]
struct Probed {
    duration: f64,
    width: Option<u32>,
    height: Option<u32>,
    codec: Option<String>,
    rotation: Option<i32>,
    sample_rate: Option<u32>,
    channels: Option<u8>,
}

fn corpus() -> BTreeMap<String, Probed> {
    let path = corpus_dir().join("ffprobe.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).expect("ffprobe.json parses")
}

fn read(name: &str) -> Vec<u8> {
    let path = corpus_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// A [`ReadAt`] that counts the reads and bytes asked of it.
struct Counting<R> {
    inner: R,
    reads: usize,
    bytes: u64,
}

impl<R: ReadAt> ReadAt for Counting<R> {
    fn size(&self) -> u64 {
        self.inner.size()
    }
    fn read_at(&mut self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let got = self.inner.read_at(offset, len)?;
        self.reads += 1;
        self.bytes += got.len() as u64;
        Ok(got)
    }
}

/// A file made of parts, some of them runs of zeros that are never stored: a multi-gigabyte
/// file in a few kilobytes.
struct Sparse(Vec<Part>);

enum Part {
    Bytes(Vec<u8>),
    Zeros(u64),
}

impl ReadAt for Sparse {
    fn size(&self) -> u64 {
        self.0
            .iter()
            .map(|p| match p {
                Part::Bytes(b) => b.len() as u64,
                Part::Zeros(n) => *n,
            })
            .sum()
    }
    fn read_at(&mut self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut start = 0u64;
        let want_end = offset + len as u64;
        for part in &self.0 {
            let part_len = match part {
                Part::Bytes(b) => b.len() as u64,
                Part::Zeros(n) => *n,
            };
            let (from, to) = (offset.max(start), want_end.min(start + part_len));
            if from < to {
                match part {
                    Part::Bytes(b) => out.extend_from_slice(
                        &b[usize::try_from(from - start).expect("small")
                            ..usize::try_from(to - start).expect("small")],
                    ),
                    Part::Zeros(_) => {
                        out.resize(out.len() + usize::try_from(to - from).expect("a read"), 0);
                    }
                }
            }
            start += part_len;
        }
        Ok(out)
    }
}

fn probe(bytes: &[u8]) -> Option<VideoInfo> {
    video_info(&mut &bytes[..], &limits())
}

/// The millisecond difference between a duration read and `ffprobe`'s, at most 50.
fn assert_close(name: &str, ms: Option<u64>, seconds: f64) {
    let ms = ms.unwrap_or_else(|| panic!("{name}: no duration"));
    #[allow(clippy::cast_precision_loss)]
    let diff = (ms as f64 / 1000.0 - seconds).abs();
    assert!(diff <= 0.05, "{name}: {ms} ms, ffprobe says {seconds} s");
}

#[test]
fn every_video_of_the_corpus_reads_as_ffprobe_reports_it() {
    let mut seen = 0;
    for (name, probed) in corpus() {
        let Some(codec) = probed.codec.clone() else {
            continue;
        };
        let bytes = read(&name);
        let got = probe(&bytes).unwrap_or_else(|| panic!("{name}: no facts"));
        let (w, h) = (probed.width.expect("width"), probed.height.expect("height"));
        let turned = probed.rotation.unwrap_or(0).rem_euclid(180) == 90;
        let shown = if turned { (h, w) } else { (w, h) };
        assert_eq!(
            (got.width, got.height),
            (Some(shown.0), Some(shown.1)),
            "{name}"
        );
        assert_eq!(
            got.media.video_codec.as_deref(),
            Some(codec.as_str()),
            "{name}"
        );
        assert_close(&name, got.media.duration_ms, probed.duration);
        // What `extract` gives a video is its type; the container facts come from here.
        let sniffed = info(&bytes, &name, None);
        assert_eq!(sniffed.kind, Some(AssetType::Video), "{name}");
        seen += 1;
    }
    assert!(seen >= 8, "the corpus has its videos ({seen})");
}

#[test]
fn every_audio_file_of_the_corpus_reads_as_ffprobe_reports_it() {
    let mut seen = 0;
    for (name, probed) in corpus() {
        if probed.codec.is_some() {
            continue;
        }
        let bytes = read(&name);
        let got = info(&bytes, &name, Some(AssetType::Audio));
        assert_close(&name, got.media.duration_ms, probed.duration);
        assert_eq!(got.media.sample_rate, probed.sample_rate, "{name}");
        assert_eq!(got.media.channels, probed.channels, "{name}");
        assert!(got.media.bitrate.is_some_and(|b| b > 0), "{name}: bitrate");
        let cover = thumbnail(&bytes, 320, &limits()).expect("no error");
        assert_eq!(
            cover.is_some(),
            name.contains("-cover"),
            "{name}: cover art"
        );
        seen += 1;
    }
    assert!(seen >= 8, "the corpus has its audio files ({seen})");
}

/// `h264.mp4` split into its top-level boxes: (type, whole box).
fn top_level_boxes(bytes: &[u8]) -> Vec<([u8; 4], Vec<u8>)> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while rest.len() >= 8 {
        let size = u32::from_be_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
        let kind: [u8; 4] = rest[4..8].try_into().expect("4 bytes");
        out.push((kind, rest[..size].to_vec()));
        rest = &rest[size..];
    }
    out
}

#[test]
fn an_index_after_gigabytes_of_media_is_found_with_a_few_small_reads() {
    let boxes = top_level_boxes(&read("h264.mp4"));
    let kinds: Vec<&[u8; 4]> = boxes.iter().map(|b| &b.0).collect();
    assert_eq!(kinds.last(), Some(&b"moov"), "ffmpeg writes moov last");
    let ftyp = boxes[0].1.clone();
    let moov = boxes.last().expect("moov").1.clone();
    // ftyp, a 5 GiB mdat (64-bit size), then moov.
    let mdat_len: u64 = 5 << 30;
    let mut mdat_head = 1u32.to_be_bytes().to_vec();
    mdat_head.extend_from_slice(b"mdat");
    mdat_head.extend_from_slice(&mdat_len.to_be_bytes());
    let file = Sparse(vec![
        Part::Bytes(ftyp),
        Part::Bytes(mdat_head),
        Part::Zeros(mdat_len - 16),
        Part::Bytes(moov.clone()),
    ]);
    let mut counting = Counting {
        inner: file,
        reads: 0,
        bytes: 0,
    };
    let got = video_info(&mut counting, &limits()).expect("facts");
    assert_eq!((got.width, got.height), (Some(160), Some(120)));
    assert_eq!(got.media.video_codec.as_deref(), Some("h264"));
    assert!(counting.reads <= 6, "{} reads", counting.reads);
    assert!(
        counting.bytes < moov.len() as u64 + 4096,
        "{} bytes read",
        counting.bytes
    );
}

#[test]
fn a_matroska_index_is_read_without_its_clusters() {
    let bytes = read("vp9.webm");
    let mut counting = Counting {
        inner: &bytes[..],
        reads: 0,
        bytes: 0,
    };
    let got = video_info(&mut counting, &limits()).expect("facts");
    assert_eq!(got.media.video_codec.as_deref(), Some("vp9"));
    assert!(
        counting.bytes < bytes.len() as u64 / 2,
        "{} of {} bytes read",
        counting.bytes,
        bytes.len()
    );
}

// ---------------------------------------------------------------- hostile containers

#[test]
fn truncated_and_oversized_mp4_boxes_give_no_facts() {
    let whole = read("h264-faststart.mp4");
    let boxes = top_level_boxes(&whole);
    let moov_at = boxes[0].1.len();
    assert_eq!(&boxes[1].0, b"moov", "faststart puts moov second");
    // Cut inside moov, at every 97th byte.
    for cut in (moov_at..moov_at + boxes[1].1.len()).step_by(97) {
        assert_eq!(probe(&whole[..cut]), None, "cut at {cut}");
    }
    // moov claims more than the file holds; a box claims less than its own header.
    let mut claims_more = whole.clone();
    claims_more[moov_at..moov_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    assert_eq!(probe(&claims_more), None);
    let mut claims_less = whole.clone();
    claims_less[..4].copy_from_slice(&4u32.to_be_bytes());
    assert_eq!(probe(&claims_less), None);
    // A moov larger than the limit is not read.
    let small = Limits {
        max_video_index: 64,
        ..Limits::default()
    };
    assert_eq!(video_info(&mut &whole[..], &small), None);
    // Garbage inside moov: never a panic, at most no facts.
    for i in (moov_at + 8..whole.len()).step_by(13) {
        let mut damaged = whole.clone();
        damaged[i] ^= 0xA5;
        let _ = probe(&damaged);
    }
}

#[test]
fn a_file_of_endless_small_boxes_is_given_up_on_after_a_bounded_walk() {
    let mut file = read("h264-faststart.mp4")[..32].to_vec(); // ftyp
    file.truncate(u32::from_be_bytes(file[..4].try_into().expect("4")) as usize);
    for _ in 0..TOP_LEVEL_STEPS * 2 {
        file.extend_from_slice(&8u32.to_be_bytes());
        file.extend_from_slice(b"free");
    }
    let mut counting = Counting {
        inner: &file[..],
        reads: 0,
        bytes: 0,
    };
    assert_eq!(video_info(&mut counting, &limits()), None);
    // The first bytes, ftyp, then one read a step.
    assert!(
        counting.reads <= TOP_LEVEL_STEPS + 2,
        "{} reads",
        counting.reads
    );
}

#[test]
fn a_matroska_element_declaring_a_huge_size_gives_no_facts_and_no_allocation() {
    let whole = read("vp9.webm");
    // The EBML header's 8-byte-sized copy: the segment then declares 2^55 bytes of content
    // (more than any file), and an element inside it a petabyte.
    let segment_at = whole
        .windows(4)
        .position(|w| w == [0x18, 0x53, 0x80, 0x67])
        .expect("a segment");
    let info_at = whole
        .windows(4)
        .position(|w| w == [0x15, 0x49, 0xA9, 0x66])
        .expect("an Info element");
    let mut huge_info = whole.clone();
    // Info's size: an 8-byte vint of 2^50.
    let mut size = (1u64 << 50).to_be_bytes();
    size[0] = 0x01;
    huge_info.splice(info_at + 4..info_at + 5, size);
    assert_eq!(probe(&huge_info), None);
    // A segment of unknown size still reads (live WebM writers do this).
    let mut unknown = whole.clone();
    let size_at = segment_at + 4;
    let len = 1 + unknown[size_at].leading_zeros() as usize;
    unknown[size_at] = 0xFF >> (len - 1) | (0x80 >> (len - 1));
    for b in &mut unknown[size_at + 1..size_at + len] {
        *b = 0xFF;
    }
    assert!(probe(&unknown).is_some(), "an unknown-size segment");
    // Cut anywhere in the index: no facts, no panic.
    for cut in (0..info_at + 200).step_by(7) {
        let _ = probe(&whole[..cut]);
    }
}

#[test]
fn inputs_the_fuzzer_found_give_no_facts() {
    // An stsd box declaring billions of sample entries: mp4parse's reservation for them fails,
    // and is an error.
    let path = corpus_dir().join("../fuzz/video_info-stsd-count.mp4");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    assert_eq!(probe(&bytes), None);
}

#[test]
fn content_that_is_no_container_gives_no_facts() {
    assert_eq!(probe(b""), None);
    assert_eq!(probe(b"\x1A\x45\xDF\xA3"), None);
    assert_eq!(probe(&samples::png(10, 10)), None);
    assert_eq!(probe(&[0u8; 64]), None);
}
