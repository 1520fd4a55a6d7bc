//! From a stored file to an asset's file fields: resolve the path, read the file (bounded),
//! run [`crate::extract`] off the async runtime with a time bound, and store a thumbnail.

use crate::change::FileFields;
use crate::config::Config;
use crate::error::ApiError;
use std::sync::Arc;
#[cfg(feature = "previews")]
use std::time::Duration;
use std::time::Instant;

#[cfg(feature = "previews")]
use crate::error::BoxError;
use crate::extract::{self, ExtractError, FileInfo, ReadAt, Thumbnail};
use crate::files::Files;
use crate::model::AssetType;
#[cfg(feature = "previews")]
use crate::poster;
use sha2::{Digest, Sha256};

/// Bytes read of a video file, or of a file read by ranges: its type shows in the header.
const HEADER_BYTES: u64 = 1024 * 1024;

/// The part of [`Config::extract_timeout`] a file read by ranges may spend reading: past it
/// its reads fail, and what they would have given is null, so the file is stored rather
/// than refused for its time.
const RANGED_READS_WITHIN: f64 = 0.75;

/// How a file is read for its metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Whole, in memory: a file of at most [`Config::max_upload`] bytes that is no video.
    Whole,
    /// Its first bytes, and its container's index by ranges: a video, whatever its size.
    VideoHeader,
    /// Its first bytes, and what else its type needs by ranges ([`extract::preview_ranged`]):
    /// a larger file of another type.
    Ranged,
}

/// Longest side of a thumbnail, in pixels.
pub(crate) const THUMBNAIL_SIDE: u32 = 320;

/// An asset's file fields, read from its file.
#[derive(Debug)]
pub(crate) struct Ingested {
    /// The file's path, links resolved.
    pub(crate) file_path: String,
    /// What [`extract::extract`] found, `file_size` from the store.
    pub(crate) info: FileInfo,
    /// Where the thumbnail was stored, when the file gave one.
    pub(crate) thumbnail_path: Option<String>,
    /// The thumbnail's ThumbHash, base64.
    pub(crate) thumbnail_placeholder: Option<String>,
    /// The file's SHA-256.
    pub(crate) checksum: [u8; 32],
}

impl Ingested {
    /// Takes the text read from the file ([`crate::extract::Limits::keep_text`]), for search.
    pub(crate) fn take_text(&mut self) -> Option<crate::extract::FileText> {
        self.info.text.take()
    }

    /// The asset fields this file gives.
    pub(crate) fn into_fields(self) -> FileFields {
        let info = self.info;
        FileFields {
            file_path: Some(self.file_path),
            file_size: Some(info.file_size),
            mime_type: Some(info.mime_type),
            thumbnail_path: self.thumbnail_path,
            thumbnail_placeholder: self.thumbnail_placeholder,
            page_count: info.page_count,
            word_count: info.word_count,
            width: info.width,
            height: info.height,
            media: info.media,
            checksum_sha256: Some(self.checksum),
        }
    }
}

/// A new path for a thumbnail: `thumbnails/{name}.{extension}` with a name of 128 random bits
/// (32 hex digits). Thumbnails are served without a key, so their names must never be
/// guessable: not the asset's id, which lists and links show.
pub(crate) fn thumbnail_path(extension: &str) -> Result<String, ApiError> {
    let mut name = [0u8; 16];
    getrandom::fill(&mut name).map_err(ApiError::internal)?;
    let hex: String = name.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("thumbnails/{hex}.{extension}"))
}

/// The bounded pool previews are made on: at most [`crate::Config::preview_workers`] files
/// are read, rendered or handed to ffmpeg at once; more wait their turn.
#[derive(Debug)]
pub(crate) struct Pool(Arc<tokio::sync::Semaphore>);

impl Pool {
    /// A pool of `workers` (at least one).
    pub(crate) fn new(workers: usize) -> Self {
        Pool(Arc::new(tokio::sync::Semaphore::new(workers.max(1))))
    }

    /// A turn on the pool, held until dropped: by the work itself, so work that outlives
    /// its caller's deadline still holds its turn until it ends.
    async fn turn(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        Arc::clone(&self.0)
            .acquire_owned()
            .await
            .map_err(ApiError::internal)
    }
}

/// A stored file read by ranges, for [`extract::video_info`] and
/// [`extract::preview_ranged`] on a blocking thread.
struct StoredFile {
    files: Files,
    path: String,
    size: u64,
    runtime: tokio::runtime::Handle,
    /// When set, reads after it fail ([`std::io::ErrorKind::TimedOut`]).
    deadline: Option<Instant>,
}

impl ReadAt for StoredFile {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&mut self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the time allowed for reading the file ran out",
            ));
        }
        let end = offset.saturating_add(len as u64).min(self.size);
        let range = offset.min(end)..end;
        let read = self.files.read_range(&self.path, range);
        match self.runtime.block_on(read) {
            Ok(bytes) => Ok(bytes.to_vec()),
            Err(e) => {
                tracing::warn!(error = %e, file = self.path, "a ranged read failed");
                Err(std::io::Error::other(e.to_string()))
            }
        }
    }
}

/// The last segment of a store path: the file's name.
fn file_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_owned()
}

/// Reads the file at `file_path` for an asset of the `declared` type (`None`: inferred
/// from the content), on `pool`: whole when it has at most [`Config::max_upload`] bytes,
/// else by ranges ([`extract::preview_ranged`]; a video's container always is). The file's
/// thumbnail (see [`extract::thumbnail`], and for a video the poster frame ffmpeg draws when
/// [`Config::ffmpeg`] is set) is stored under a new random name ([`thumbnail_path`]), so the
/// old thumbnail of a replaced file stays until the new one is in place. Answers 400 on
/// `file_path` for a missing file or one outside the store, and 400 on `field` (`file_path`
/// on create, `file` on upload) for content of another type or a file that needs more time
/// or memory than allowed. A thumbnail that cannot be made is logged and left out, never an
/// error.
pub(crate) async fn ingest(
    files: &Files,
    config: &Config,
    pool: &Pool,
    file_path: &str,
    declared: Option<AssetType>,
    field: &'static str,
    checksum: Option<[u8; 32]>,
) -> Result<Ingested, ApiError> {
    let file_error = |message: String| ApiError::validation(field, message);
    let resolved = files.resolve(file_path).await?;
    // A video is never read whole, whatever its size: its metadata is in its header and in
    // boxes read where they lie. A file of another type larger than `max_upload` (a resumable
    // or direct upload, or a file put in the store) is read by ranges.
    let header_only = match declared {
        Some(AssetType::Video) => true,
        None if resolved.size > HEADER_BYTES => {
            let head = files.read(&resolved.path, HEADER_BYTES).await?;
            extract::sniff(&head, &resolved.path).kind == Some(AssetType::Video)
        }
        _ => false,
    };
    let reading = if header_only {
        Reading::VideoHeader
    } else if resolved.size > config.max_upload {
        Reading::Ranged
    } else {
        Reading::Whole
    };
    let limit = match reading {
        Reading::Whole => resolved.size,
        Reading::VideoHeader | Reading::Ranged => HEADER_BYTES,
    };
    let bytes = files.read(&resolved.path, limit.min(resolved.size)).await?;
    let name = file_name(&resolved.path);
    let limits = config.extract_limits.clone();
    let mut stored = StoredFile {
        files: files.clone(),
        path: resolved.path.clone(),
        size: resolved.size,
        runtime: tokio::runtime::Handle::current(),
        deadline: None,
    };
    let started = Instant::now();
    let reads_until = started + config.extract_timeout.mul_f64(RANGED_READS_WITHIN);
    // The wait for a turn counts against the deadline: a pool kept busy is a slow read.
    let turn = tokio::time::timeout(config.extract_timeout, pool.turn())
        .await
        .map_err(|_| {
            file_error(format!(
                "{field} could not be read within {} seconds",
                config.extract_timeout.as_secs_f64()
            ))
        })??;
    let work = tokio::task::spawn_blocking(move || {
        let _turn = turn;
        // A file read whole is hashed here, off the runtime; another is read through below
        // when its caller did not hash it as it came in.
        let sum = (checksum.is_none() && reading == Reading::Whole)
            .then(|| <[u8; 32]>::from(Sha256::digest(&bytes)));
        #[cfg_attr(not(feature = "previews"), allow(unused_mut))]
        let (mut info, thumb) = if reading == Reading::Ranged {
            stored.deadline = Some(reads_until);
            let read = extract::preview_ranged(
                &bytes,
                &mut stored,
                &name,
                declared,
                THUMBNAIL_SIDE,
                &limits,
            )?;
            if Instant::now() >= reads_until {
                tracing::warn!(
                    file = name,
                    "the time allowed ran out while a large file was read: some of its fields \
                     are left null"
                );
            }
            read
        } else {
            extract::preview(&bytes, &name, declared, THUMBNAIL_SIDE, &limits)?
        };
        #[cfg(feature = "previews")]
        let unreadable_video = if reading == Reading::Whole {
            video_facts(&mut info, &mut &bytes[..], &limits)
        } else {
            video_facts(&mut info, &mut stored, &limits)
        };
        #[cfg(not(feature = "previews"))]
        let unreadable_video = false;
        Ok::<_, ExtractError>((info, made_or_logged(thumb, &name), unreadable_video, sum))
    });
    let left = config.extract_timeout.saturating_sub(started.elapsed());
    let (mut info, thumb, unreadable_video, sum) = match tokio::time::timeout(left, work).await {
        Err(_) => {
            return Err(file_error(format!(
                "{field} could not be read within {} seconds",
                config.extract_timeout.as_secs_f64()
            )));
        }
        Ok(joined) => match joined.map_err(ApiError::internal)? {
            Ok(done) => done,
            Err(ExtractError::TypeMismatch {
                declared,
                found_mime,
            }) => {
                return Err(file_error(format!(
                    "{field} content is {found_mime}, which is not a valid {declared} file"
                )));
            }
            Err(other) => {
                return Err(file_error(format!("{field} could not be read: {other}")));
            }
        },
    };
    info.file_size = resolved.size;
    let checksum = match checksum.or(sum) {
        Some(sum) => sum,
        None => crate::tus::storage::measure(files, &resolved.path, true)
            .await?
            .and_then(|(_, sum)| sum)
            .ok_or_else(|| file_error(format!("{field} names a file that went away")))?,
    };
    // A video's poster frame, drawn by ffmpeg, is its thumbnail.
    let thumb = match &config.ffmpeg {
        #[cfg(feature = "previews")]
        Some(ffmpeg) if info.kind == Some(AssetType::Video) && !unreadable_video => {
            // ffmpeg is killed when its deadline passes, so the turn ends with it; a turn
            // that does not come before then is no poster.
            let left = config.extract_timeout.saturating_sub(started.elapsed());
            let made = match tokio::time::timeout(left, pool.turn()).await {
                Ok(turn) => {
                    let _turn = turn?;
                    let left = config.extract_timeout.saturating_sub(started.elapsed());
                    poster(
                        files,
                        config,
                        ffmpeg,
                        &resolved.path,
                        resolved.size,
                        &info,
                        left,
                    )
                    .await
                }
                Err(_) => Err("no preview worker was free before the deadline".into()),
            };
            made.unwrap_or_else(|e| {
                tracing::warn!(error = %e, file = resolved.path, "no poster frame");
                None
            })
        }
        _ => {
            let _ = unreadable_video;
            thumb
        }
    };
    let (thumbnail_path, thumbnail_placeholder) = match thumb {
        Some(t) => {
            let path = thumbnail_path(t.extension)?;
            files.put(&path, t.bytes.into()).await?;
            (Some(path), Some(t.placeholder))
        }
        None => (None, None),
    };
    Ok(Ingested {
        file_path: resolved.path,
        info,
        thumbnail_path,
        thumbnail_placeholder,
        checksum,
    })
}

/// The thumbnail, or `None` with the reason logged.
fn made_or_logged(made: Result<Option<Thumbnail>, ExtractError>, name: &str) -> Option<Thumbnail> {
    made.unwrap_or_else(|e| {
        tracing::warn!(error = %e, file = name, "no thumbnail");
        None
    })
}

/// Reads a video's facts from its container into `info`; whether it is a container of a kind
/// that is read whose index cannot be (damaged or hostile, and not handed to ffmpeg either).
#[cfg(feature = "previews")]
fn video_facts(info: &mut FileInfo, file: &mut dyn ReadAt, limits: &extract::Limits) -> bool {
    if info.kind != Some(AssetType::Video) {
        return false;
    }
    match extract::video_info(file, limits) {
        Some(video) => {
            info.width = video.width;
            info.height = video.height;
            info.media = video.media;
            false
        }
        None => extract::is_probed(&info.mime_type),
    }
}

#[cfg(feature = "previews")]
/// A video's poster frame as a thumbnail, drawn by `ffmpeg` within `deadline`: from the file
/// itself in a local directory, else from a temporary copy (of a file of at most
/// [`Config::max_upload`] bytes), removed when done.
async fn poster(
    files: &Files,
    config: &Config,
    ffmpeg: &std::path::Path,
    path: &str,
    size: u64,
    info: &FileInfo,
    deadline: Duration,
) -> Result<Option<Thumbnail>, BoxError> {
    let started = Instant::now();
    let local = files.local_path(path);
    // Removed when dropped, once ffmpeg is done with it.
    let copy = if local.is_none() && size <= config.max_upload {
        Some(tokio::time::timeout(deadline, files.copy_to_temp(path)).await??)
    } else {
        None
    };
    let Some(input) = local.as_deref().or(copy.as_deref()) else {
        return Ok(None);
    };
    let left = deadline.saturating_sub(started.elapsed());
    let duration = info.media.duration_ms;
    let frame = poster::frame(ffmpeg, input, duration, THUMBNAIL_SIDE, left).await?;
    let limits = config.extract_limits.clone();
    let made =
        tokio::task::spawn_blocking(move || extract::thumbnail(&frame, THUMBNAIL_SIDE, &limits));
    Ok(made.await??)
}

/// The text inside the file at `file_path` of an asset of type `declared`, as
/// [`crate::extract::Limits::keep_text`] keeps it (`search reindex`, feature `search`): read
/// whole when it has at most [`Config::max_upload`] bytes, else by ranges, on `pool`, within
/// [`Config::extract_timeout`]; no thumbnail is stored. `None` when the file gives no text.
#[cfg(feature = "search")]
pub(crate) async fn read_text(
    files: &Files,
    config: &Config,
    pool: &Pool,
    file_path: &str,
    declared: AssetType,
) -> Result<Option<extract::FileText>, ApiError> {
    let resolved = files.resolve(file_path).await?;
    let whole = resolved.size <= config.max_upload;
    let limit = if whole { resolved.size } else { HEADER_BYTES };
    let bytes = files.read(&resolved.path, limit.min(resolved.size)).await?;
    let name = file_name(&resolved.path);
    let limits = config.extract_limits.clone();
    let deadline = Instant::now() + config.extract_timeout;
    let mut stored = StoredFile {
        files: files.clone(),
        path: resolved.path.clone(),
        size: resolved.size,
        runtime: tokio::runtime::Handle::current(),
        deadline: Some(deadline),
    };
    let turn = pool.turn().await?;
    let work = tokio::task::spawn_blocking(move || {
        let _turn = turn;
        if whole {
            extract::extract(&bytes, &name, Some(declared), &limits)
        } else {
            // A side of one pixel: the thumbnail a document carries is not wanted here.
            extract::preview_ranged(&bytes, &mut stored, &name, Some(declared), 1, &limits)
                .map(|(info, _)| info)
        }
    });
    let timed_out = || {
        ApiError::validation(
            "file_path",
            format!(
                "file_path could not be read within {} seconds",
                config.extract_timeout.as_secs_f64()
            ),
        )
    };
    let left = deadline.saturating_duration_since(Instant::now());
    match tokio::time::timeout(left, work).await {
        Err(_) => Err(timed_out()),
        Ok(joined) => match joined.map_err(ApiError::internal)? {
            Ok(info) => Ok(info.text),
            Err(e) => Err(ApiError::validation(
                "file_path",
                format!("file_path could not be read: {e}"),
            )),
        },
    }
}
