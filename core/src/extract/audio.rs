//! Audio: what a file plays, and its cover art, read with `lofty` (MP3, FLAC, Ogg Vorbis and
//! Opus, M4A/AAC, WAV, and the other formats it knows).
//!
//! `lofty` bounds every allocation a file's headers ask for (16 MiB by default), so a tag
//! that claims gigabytes is an error, not an allocation; a panic inside it makes the file
//! unreadable like any other error.

use std::io::{Cursor, Read, Seek};
use std::panic::{AssertUnwindSafe, catch_unwind};

use lofty::config::{ParseOptions, ParsingMode};
use lofty::picture::PictureType;
use lofty::prelude::*;
use lofty::probe::Probe;

use crate::model::Media;

/// What `lofty` read of an audio file: its facts and the bytes of its cover art.
#[derive(Debug, Default)]
pub(super) struct Audio {
    pub(super) media: Media,
    pub(super) cover: Option<Vec<u8>>,
}

/// Reads an audio file; an unreadable one gives nothing.
pub(super) fn read(bytes: &[u8], with_cover: bool) -> Audio {
    read_from(Cursor::new(bytes), with_cover)
}

/// [`read`] from a reader: `lofty` reads the headers and tags it needs and seeks past the
/// rest (a large file read by ranges).
pub(super) fn read_from<R: Read + Seek>(reader: R, with_cover: bool) -> Audio {
    catch_unwind(AssertUnwindSafe(|| try_read(reader, with_cover)))
        .ok()
        .flatten()
        .unwrap_or_default()
}

fn try_read<R: Read + Seek>(reader: R, with_cover: bool) -> Option<Audio> {
    let options = ParseOptions::new()
        .parsing_mode(ParsingMode::Relaxed)
        .read_cover_art(with_cover);
    let file = Probe::new(reader)
        .options(options)
        .guess_file_type()
        .ok()?
        .read()
        .ok()?;
    let p = file.properties();
    let duration_ms = u64::try_from(p.duration().as_millis()).ok();
    let media = Media {
        duration_ms: duration_ms.filter(|ms| *ms > 0),
        sample_rate: p.sample_rate().filter(|r| *r > 0),
        channels: p.channels().filter(|c| *c > 0),
        // lofty gives whole kbps.
        bitrate: p
            .audio_bitrate()
            .or(p.overall_bitrate())
            .filter(|b| *b > 0)
            .and_then(|kbps| kbps.checked_mul(1000)),
        video_codec: None,
    };
    let cover = with_cover
        .then(|| {
            let pictures = file.tags().iter().flat_map(|t| t.pictures());
            let mut front = None;
            let mut any = None;
            for picture in pictures {
                if picture.pic_type() == PictureType::CoverFront && front.is_none() {
                    front = Some(picture);
                }
                any.get_or_insert(picture);
            }
            front.or(any).map(|p| p.data().to_vec())
        })
        .flatten();
    Some(Audio { media, cover })
}
