//! Video: playing time, picture size as displayed and codec, read from the container's index
//! with a few ranged reads, never the whole file.
//!
//! - **MP4 and QuickTime**: the top-level boxes are walked by their headers alone (a seek past
//!   each), until `moov` is found wherever it sits (at the end of most camera files). `ftyp` and
//!   `moov` are read and handed to Mozilla's `mp4parse`, which allocates fallibly. The size is
//!   the video sample entry's, turned by a quarter turn when the track header's matrix says
//!   so; the playing time is the longest track's, edit lists applied.
//! - **WebM and Matroska**: the EBML header and the segment's children are walked the same
//!   way, until `Info` and `Tracks` are found; those two (with the header) are handed to
//!   `matroska-demuxer` as a small file of their own. The size is the track's pixel size (a
//!   Matroska file has no rotation of its own).
//!
//! What is read is bounded by [`Limits::max_video_index`] and [`TOP_LEVEL_STEPS`]; a file past
//! them, truncated, or unreadable gives `None`.

use std::io::Cursor;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::{Limits, ReadAt};
use crate::model::Media;

/// Most top-level boxes or elements stepped over while looking for the index: each step is a
/// read, which on an object store is a request.
pub(super) const TOP_LEVEL_STEPS: usize = 1024;

/// Most bytes of `ftyp`, or of a Matroska EBML header, read.
const SMALL_HEADER: u64 = 64 * 1024;

/// Whether [`video_info`] reads containers of this media type (MP4, QuickTime, WebM,
/// Matroska): for these, no facts means a damaged or hostile file.
pub fn is_probed(mime_type: &str) -> bool {
    matches!(
        mime_type,
        "video/mp4" | "video/quicktime" | "video/webm" | "video/x-matroska"
    )
}

/// What a video's container says of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VideoInfo {
    /// Width as displayed, in pixels.
    pub width: Option<u32>,
    /// Height as displayed, in pixels.
    pub height: Option<u32>,
    /// Playing time and codec (`media.duration_ms`, `media.video_codec`).
    pub media: Media,
}

/// Reads a video's facts from its container (MP4/QuickTime or WebM/Matroska, told apart by
/// their first bytes); `None` for any other content, or one that cannot be read within
/// `limits`.
pub fn video_info(file: &mut dyn ReadAt, limits: &Limits) -> Option<VideoInfo> {
    let head = file.read_at(0, 12).ok()?;
    if head.starts_with(&EBML_MAGIC) {
        let bytes = matroska_index(file, limits)?;
        catch_unwind(|| matroska_facts(bytes)).ok().flatten()
    } else if head.len() >= 8 {
        let (ftyp, moov) = mp4_index(file, limits)?;
        catch_unwind(AssertUnwindSafe(|| mp4_facts(&ftyp, &moov)))
            .ok()
            .flatten()
    } else {
        None
    }
}

// ------------------------------------------------------------------------------- MP4

/// A box header: where its content starts and how long the whole box is.
struct BoxHead {
    kind: [u8; 4],
    header_len: u64,
    size: u64,
}

/// Parses the box header at the start of `bytes`; `remaining` is what is left of the parent
/// (for a size of 0, "to the end").
fn box_head(bytes: &[u8], remaining: u64) -> Option<BoxHead> {
    let size32 = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?);
    let kind: [u8; 4] = bytes.get(4..8)?.try_into().ok()?;
    let (header_len, size) = match size32 {
        0 => (8, remaining),
        1 => (16, u64::from_be_bytes(bytes.get(8..16)?.try_into().ok()?)),
        n => (8, u64::from(n)),
    };
    (size >= header_len && size <= remaining).then_some(BoxHead {
        kind,
        header_len,
        size,
    })
}

/// Finds and reads `ftyp` (when there is one) and `moov` among the top-level boxes.
fn mp4_index(file: &mut dyn ReadAt, limits: &Limits) -> Option<(Vec<u8>, Vec<u8>)> {
    let total = file.size();
    let mut pos = 0u64;
    let mut ftyp = Vec::new();
    for _ in 0..TOP_LEVEL_STEPS {
        if total.saturating_sub(pos) < 8 {
            return None;
        }
        let head = box_head(&file.read_at(pos, 16).ok()?, total - pos)?;
        let wanted = match &head.kind {
            b"ftyp" => Some(SMALL_HEADER),
            b"moov" => Some(limits.max_video_index),
            _ => None,
        };
        if let Some(bound) = wanted {
            if head.size > bound {
                return None;
            }
            let bytes = file.read_at(pos, usize::try_from(head.size).ok()?).ok()?;
            if bytes.len() as u64 != head.size {
                return None;
            }
            if head.kind == *b"moov" {
                return Some((ftyp, bytes));
            }
            ftyp = bytes;
        }
        pos = pos.checked_add(head.size)?;
    }
    None
}

/// The facts `mp4parse` reads from `ftyp` and `moov`.
fn mp4_facts(ftyp: &[u8], moov: &[u8]) -> Option<VideoInfo> {
    let mut file = Vec::with_capacity(ftyp.len() + moov.len());
    file.extend_from_slice(ftyp);
    file.extend_from_slice(moov);
    let context = mp4parse::read_mp4(&mut Cursor::new(file)).ok()?;
    let movie_scale = context.timescale.map(|s| s.0).filter(|s| *s > 0);
    let mut duration_ms: Option<u64> = None;
    let mut turned = None;
    for track in context.tracks.iter() {
        let edited = match (track.edited_duration, movie_scale) {
            (Some(d), Some(scale)) => millis(d.0, scale),
            _ => None,
        };
        let own = match (track.duration, track.timescale) {
            (Some(d), Some(scale)) => millis(d.0, scale.0),
            _ => None,
        };
        if let Some(ms) = edited.or(own) {
            duration_ms = Some(duration_ms.map_or(ms, |m| m.max(ms)));
        }
        if track.track_type == mp4parse::TrackType::Video && turned.is_none() {
            turned = Some(track.tkhd.as_ref().is_some_and(|t| quarter_turn(&t.matrix)));
        }
    }
    let entry = video_entry(moov);
    let picture = entry
        .and_then(|e| e.size)
        .map(|(w, h)| if turned == Some(true) { (h, w) } else { (w, h) });
    let (width, height) = picture.unzip();
    Some(VideoInfo {
        width: width.filter(|w| *w > 0),
        height: height.filter(|h| *h > 0),
        media: Media {
            duration_ms: duration_ms.filter(|ms| *ms > 0),
            video_codec: entry.and_then(|e| mp4_codec_name(e.kind)),
            ..Media::default()
        },
    })
}

/// `value / scale` seconds in milliseconds, rounded to the nearest.
fn millis(value: u64, scale: u64) -> Option<u64> {
    if scale == 0 {
        return None;
    }
    let ms = (u128::from(value) * 1000 + u128::from(scale) / 2) / u128::from(scale);
    u64::try_from(ms).ok()
}

/// Whether a track header's matrix turns the picture by 90 or 270 degrees: its diagonal is
/// zero and its off-diagonal is not.
fn quarter_turn(m: &mp4parse::Matrix) -> bool {
    m.a == 0 && m.d == 0 && m.b != 0 && m.c != 0
}

/// A video track's sample entry: its type (e.g. `avc1`, `hvc1`) and the coded picture size
/// it gives. Read here rather than by `mp4parse`, which knows no HEVC entries.
#[derive(Clone, Copy)]
struct VideoEntry {
    kind: [u8; 4],
    size: Option<(u32, u32)>,
}

/// The first entry of the first video track: `moov/trak` whose `mdia/hdlr` handles `vide`,
/// then `mdia/minf/stbl/stsd`.
fn video_entry(moov: &[u8]) -> Option<VideoEntry> {
    let moov = children(moov, 8);
    for trak in moov.iter().filter(|b| b.0 == *b"trak") {
        let Some(mdia) = child(trak.1, b"mdia") else {
            continue;
        };
        let handler = child(mdia, b"hdlr").and_then(|h| h.get(8..12));
        if handler != Some(b"vide".as_slice()) {
            continue;
        }
        let stsd = child(mdia, b"minf")
            .and_then(|m| child(m, b"stbl"))
            .and_then(|s| child(s, b"stsd"))?;
        // version and flags (4) and the entry count (4), then the first entry: its header
        // (8), reserved and reference index (8), pre-defined and reserved (16), width, height.
        let entry = stsd.get(8..)?;
        let u16_at = |at: usize| {
            entry
                .get(at..at + 2)
                .map(|b| u32::from(u16::from_be_bytes([b[0], b[1]])))
        };
        let size = u16_at(32).zip(u16_at(34)).filter(|(w, h)| *w > 0 && *h > 0);
        return Some(VideoEntry {
            kind: entry.get(4..8)?.try_into().ok()?,
            size,
        });
    }
    None
}

/// The content of the first child box of `parent` (a box's content) named `kind`.
fn child<'a>(parent: &'a [u8], kind: &[u8; 4]) -> Option<&'a [u8]> {
    children(parent, 0)
        .into_iter()
        .find(|b| b.0 == *kind)
        .map(|b| b.1)
}

/// The child boxes of `bytes` from `offset` on, as (type, content).
fn children(bytes: &[u8], offset: usize) -> Vec<([u8; 4], &[u8])> {
    let mut out = Vec::new();
    let mut rest = bytes.get(offset..).unwrap_or_default();
    while let Some(head) = box_head(rest, rest.len() as u64) {
        let (Ok(start), Ok(end)) = (usize::try_from(head.header_len), usize::try_from(head.size))
        else {
            break;
        };
        out.push((head.kind, &rest[start..end]));
        rest = &rest[end..];
    }
    out
}

/// The codec a sample entry type names, as `ffprobe` names it.
fn mp4_codec_name(entry: [u8; 4]) -> Option<String> {
    let name = match &entry {
        b"avc1" | b"avc2" | b"avc3" | b"avc4" => "h264",
        b"hvc1" | b"hev1" => "hevc",
        b"vvc1" | b"vvi1" => "vvc",
        b"vp08" => "vp8",
        b"vp09" => "vp9",
        b"av01" => "av1",
        b"mp4v" => "mpeg4",
        b"s263" | b"h263" => "h263",
        b"apch" | b"apcn" | b"apcs" | b"apco" | b"ap4h" | b"ap4x" => "prores",
        b"jpeg" | b"mjpa" | b"mjpb" => "mjpeg",
        b"encv" => return None,
        other => return Some(String::from_utf8_lossy(other).trim().to_ascii_lowercase()),
    };
    Some(name.to_owned())
}

// ------------------------------------------------------------------------- Matroska

const EBML_MAGIC: [u8; 4] = [0x1A, 0x45, 0xDF, 0xA3];
const SEGMENT: u32 = 0x1853_8067;
const INFO: u32 = 0x1549_A966;
const TRACKS: u32 = 0x1654_AE6B;
const CLUSTER: u32 = 0x1F43_B675;

/// An element header: its id, its header's length, and its content's length (`None`: unknown).
struct ElementHead {
    id: u32,
    header_len: u64,
    size: Option<u64>,
}

/// A variable-length integer at the start of `bytes`: its length, and its value with the
/// length marker kept (`keep_marker`, for ids) or removed (for sizes, where all ones is
/// "unknown", given as `None`).
fn vint(bytes: &[u8], keep_marker: bool) -> Option<(usize, Option<u64>)> {
    let first = *bytes.first()?;
    let len = first.leading_zeros() as usize + 1;
    if len > 8 {
        return None;
    }
    let mut value = if keep_marker {
        u64::from(first)
    } else {
        u64::from(first) & (0xFF >> len)
    };
    for b in bytes.get(1..len)? {
        value = (value << 8) | u64::from(*b);
    }
    let all_ones = (1u64 << (7 * len)) - 1;
    Some((len, (keep_marker || value != all_ones).then_some(value)))
}

fn element_head(bytes: &[u8]) -> Option<ElementHead> {
    let (id_len, id) = vint(bytes, true)?;
    let id = u32::try_from(id?).ok()?;
    let (size_len, size) = vint(bytes.get(id_len..)?, false)?;
    Some(ElementHead {
        id,
        header_len: (id_len + size_len) as u64,
        size,
    })
}

/// Reads the EBML header, `Info` and `Tracks` (each whole, headers included).
fn matroska_index(file: &mut dyn ReadAt, limits: &Limits) -> Option<MatroskaIndex> {
    let total = file.size();
    let ebml = element_head(&file.read_at(0, 12).ok()?)?;
    let ebml_len = ebml.header_len.checked_add(ebml.size?)?;
    if ebml_len > SMALL_HEADER {
        return None;
    }
    let header = file.read_at(0, usize::try_from(ebml_len).ok()?).ok()?;
    let segment = element_head(&file.read_at(ebml_len, 12).ok()?)?;
    if segment.id != SEGMENT {
        return None;
    }
    let start = ebml_len + segment.header_len;
    let end = segment
        .size
        .and_then(|s| start.checked_add(s))
        .map_or(total, |e| e.min(total));
    let (mut info, mut tracks) = (None, None);
    let mut pos = start;
    for _ in 0..TOP_LEVEL_STEPS {
        if info.is_some() && tracks.is_some() {
            return Some(MatroskaIndex {
                header,
                info: info?,
                tracks: tracks?,
            });
        }
        if end.saturating_sub(pos) < 2 {
            return None;
        }
        let head = element_head(&file.read_at(pos, 12).ok()?)?;
        let Some(size) = head.size else {
            // Only a cluster may run to the end unannounced, and the index comes before it.
            return None;
        };
        let whole = head.header_len.checked_add(size)?;
        if (head.id == INFO && info.is_none()) || (head.id == TRACKS && tracks.is_none()) {
            if whole > limits.max_video_index {
                return None;
            }
            let bytes = file.read_at(pos, usize::try_from(whole).ok()?).ok()?;
            if bytes.len() as u64 != whole {
                return None;
            }
            if head.id == INFO {
                info = Some(bytes);
            } else {
                tracks = Some(bytes);
            }
        }
        pos = pos.checked_add(whole)?;
    }
    None
}

/// The parts of a Matroska file its facts are read from.
struct MatroskaIndex {
    header: Vec<u8>,
    info: Vec<u8>,
    tracks: Vec<u8>,
}

/// The facts `matroska-demuxer` reads from the index, given to it as a file of its own: the
/// header, then a segment of `Info`, `Tracks` and an empty cluster (which it looks for).
fn matroska_facts(index: MatroskaIndex) -> Option<VideoInfo> {
    let content = index.info.len() + index.tracks.len() + 5;
    let mut file = index.header;
    file.extend_from_slice(&SEGMENT.to_be_bytes());
    // The segment's size as an 8-byte variable-length integer.
    let mut size = (content as u64).to_be_bytes();
    size[0] = 0x01;
    file.extend_from_slice(&size);
    file.extend_from_slice(&index.info);
    file.extend_from_slice(&index.tracks);
    file.extend_from_slice(&CLUSTER.to_be_bytes());
    file.push(0x80);
    let mkv = matroska_demuxer::MatroskaFile::open(Cursor::new(file)).ok()?;
    let info = mkv.info();
    let duration_ms = info.duration().and_then(|d| {
        let ms = d * info.timestamp_scale().get() as f64 / 1_000_000.0;
        (ms.is_finite() && ms >= 0.0 && ms < u64::MAX as f64).then(|| ms.round() as u64)
    });
    let video = mkv
        .tracks()
        .iter()
        .find_map(|t| t.video().map(|v| (t.codec_id(), v)));
    let (codec, width, height) = match video {
        Some((codec, v)) => (
            Some(matroska_codec_name(codec)),
            u32::try_from(v.pixel_width().get()).ok(),
            u32::try_from(v.pixel_height().get()).ok(),
        ),
        None => (None, None, None),
    };
    Some(VideoInfo {
        width,
        height,
        media: Media {
            duration_ms: duration_ms.filter(|ms| *ms > 0),
            video_codec: codec,
            ..Media::default()
        },
    })
}

/// The codec a Matroska codec id names, as `ffprobe` names it.
fn matroska_codec_name(codec_id: &str) -> String {
    let name = match codec_id {
        "V_MPEG4/ISO/AVC" => "h264",
        "V_MPEGH/ISO/HEVC" => "hevc",
        "V_VP8" => "vp8",
        "V_VP9" => "vp9",
        "V_AV1" => "av1",
        "V_MPEG4/ISO/ASP" | "V_MPEG4/ISO/SP" | "V_MPEG4/ISO/AP" => "mpeg4",
        "V_MPEG2" => "mpeg2video",
        "V_MPEG1" => "mpeg1video",
        "V_THEORA" => "theora",
        "V_PRORES" => "prores",
        "V_MJPEG" => "mjpeg",
        other => return other.trim_start_matches("V_").to_ascii_lowercase(),
    };
    name.to_owned()
}
