//! Where a resumable upload's bytes wait until the last one arrives, and how they become the
//! finished file at [`Upload::path`]:
//!
//! - a local directory: one file, `{path}.part`, appended to, then renamed into place;
//! - a store with multipart uploads (S3, GCS, Azure, memory): one multipart upload to `path`,
//!   fed parts of [`PART`] bytes as they fill, the bytes past the last part (less than one)
//!   kept between requests in a tail object named by the offset they end at
//!   (`{path}.tails/{offset}`), completed with them as its last part;
//! - any other store: pieces `{path}.parts/{n}` of at most [`PART`] bytes, joined at the end.
//!
//! A request holds at most one part in memory (plus the chunk it is reading). What is kept is
//! written before the upload's offset says so (`Progress::save`), so a process that dies in
//! the middle leaves an offset that the bytes behind it match: on a local file the next
//! request first cuts the file back to the offset, a part not recorded is uploaded again
//! under the same number, and a piece past the offset is written again. A tail is written
//! under the offset it ends at, never over the one the record names: whatever fails after it
//! was written (a lost lease, a save that did not happen), the tail the record names is whole,
//! and the tails no record names go when the upload ends.

use std::io::SeekFrom;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt as _;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncSeekExt as _, AsyncWriteExt as _};

use super::{Checksum, Stored, Upload};
use crate::error::{ApiError, FileError};
use crate::files::Files;
use crate::request::{BodyStream, unreadable};

/// The size of a part of a multipart upload (the least S3 takes but for the last), and of a
/// piece.
pub const PART: usize = 5 * 1024 * 1024;

/// How many parts a multipart upload may have (S3's limit), so the largest upload a store
/// with multipart uploads takes is this many [`PART`]s.
pub const MAX_PARTS: u64 = 10_000;

/// How often a request appending to a local file records its progress, in bytes.
const LOCAL_SAVE: u64 = 64 * 1024 * 1024;

/// How a request that appends records its progress: `Progress::save` stores the upload as
/// it stands (and so says its bytes are kept) before the request takes any later byte as
/// kept; [`Progress::keep`] is called after every chunk, so a slow request can renew its hold
/// on the upload.
pub(crate) trait Progress {
    /// Saves `upload`; an error ends the request.
    async fn save(&mut self, upload: &Upload) -> Result<(), ApiError>;

    /// Called after each chunk with the upload as last saved.
    async fn keep(&mut self, upload: &Upload) -> Result<(), ApiError>;
}

/// How an upload of `path` keeps its bytes in `files`, started now.
pub(crate) async fn begin(files: &Files, path: &str) -> Result<Stored, ApiError> {
    if files.local_path(path).is_some() {
        return Ok(Stored::Appended);
    }
    match files.parts() {
        Some(parts) => Ok(Stored::Multipart {
            upload_id: parts.create(path).await?,
            parts: Vec::new(),
        }),
        None => Ok(Stored::Pieces { count: 0 }),
    }
}

/// The largest upload `files` can keep: a store with multipart uploads takes at most
/// [`MAX_PARTS`] parts.
pub(crate) fn most(files: &Files, limit: u64) -> u64 {
    if files.local_path("").is_none() && files.parts().is_some() {
        limit.min(MAX_PARTS * PART as u64)
    } else {
        limit
    }
}

/// A `PATCH` body, and the SHA-256 it must have when `Upload-Checksum` names one.
pub(crate) struct Patch {
    pub(crate) body: BodyStream,
    pub(crate) checksum: Option<Checksum>,
}

/// Appends a `PATCH` body to `upload` (at its offset), saving progress as bytes are kept;
/// `upload` ends as saved. Without a checksum, the bytes that arrived are kept when the body
/// breaks off, and those of the chunks that fit when it runs past the upload's length (the
/// error is answered: the body's, or 413). With one, none of them are kept unless all
/// arrived, fit and match (460 when they do not match).
pub(crate) async fn append(
    files: &Files,
    upload: &mut Upload,
    mut patch: Patch,
    lease: &mut impl Progress,
) -> Result<(), ApiError> {
    if upload.is_complete() {
        // Nothing more fits (and what is kept may be the finished file already).
        return match next_chunk(&mut patch.body).await {
            Some(Ok(chunk)) if chunk.is_empty() => Ok(()),
            Some(Ok(_)) => Err(too_long(upload)),
            Some(Err(e)) => Err(e),
            None => Ok(()),
        };
    }
    match upload.stored {
        Stored::Appended => append_local(files, upload, patch, lease).await,
        Stored::Multipart { .. } => append_parts(files, upload, patch, lease).await,
        Stored::Pieces { .. } => append_pieces(files, upload, patch, lease).await,
        Stored::Direct { .. } => Err(super::NOT_FOUND),
    }
}

/// Reads the next chunk of a body: `None` at its end, the error when it broke off.
async fn next_chunk(body: &mut BodyStream) -> Option<Result<Bytes, ApiError>> {
    body.next()
        .await
        .map(|chunk| chunk.map_err(|e| unreadable(e.as_ref())))
}

/// 413 for a body that would pass the upload's length.
fn too_long(upload: &Upload) -> ApiError {
    ApiError::UploadTooLarge {
        subject: "Request body",
        limit: upload.length - upload.offset,
        of: crate::error::UploadLimit::Remaining,
    }
}

/// What to do with the bytes of a body that ended with `outcome`: keep them and answer
/// `outcome` (`Ok`), or drop them and answer the error (`Err`). Without a checksum they are
/// always kept; with one, only when the body arrived whole and its digest is the one named.
fn verdict(
    outcome: Result<(), ApiError>,
    hash: Option<Sha256>,
    checksum: Option<Checksum>,
) -> Result<Result<(), ApiError>, ApiError> {
    match (hash, checksum) {
        (Some(hash), Some(Checksum(want))) => match outcome {
            Err(e) => Err(e),
            Ok(()) if hash.finalize().as_slice() == want => Ok(Ok(())),
            Ok(()) => Err(ApiError::ChecksumMismatch),
        },
        _ => Ok(outcome),
    }
}

async fn append_local(
    files: &Files,
    upload: &mut Upload,
    mut patch: Patch,
    lease: &mut impl Progress,
) -> Result<(), ApiError> {
    let path = files
        .local_path(&part_file(&upload.path))
        .ok_or_else(|| ApiError::internal("a local upload in a store that is not local"))?;
    if let Some(dir) = path.parent() {
        tokio::fs::create_dir_all(dir)
            .await
            .map_err(ApiError::internal)?;
    }
    let mut file = tokio::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(false)
        .open(&path)
        .await
        .map_err(ApiError::internal)?;
    // Bytes past the recorded offset are a dead request's, never recorded: cut them.
    let start = upload.offset;
    file.set_len(start).await.map_err(ApiError::internal)?;
    file.seek(SeekFrom::Start(start))
        .await
        .map_err(ApiError::internal)?;
    let mut hash = patch.checksum.map(|_| Sha256::new());
    // The running SHA-256 as recorded, for a body whose bytes are refused.
    let running = upload.sha256.clone();
    let mut written = start;
    let outcome = loop {
        let chunk = match next_chunk(&mut patch.body).await {
            None => break Ok(()),
            Some(Err(e)) => break Err(e),
            Some(Ok(chunk)) => chunk,
        };
        if written + chunk.len() as u64 > upload.length {
            break Err(too_long(upload));
        }
        file.write_all(&chunk).await.map_err(ApiError::internal)?;
        if let Some(hash) = hash.as_mut() {
            hash.update(&chunk);
        }
        upload.hash_more(written, &chunk);
        written += chunk.len() as u64;
        if hash.is_none() && written - upload.offset >= LOCAL_SAVE {
            file.sync_data().await.map_err(ApiError::internal)?;
            upload.offset = written;
            lease.save(upload).await?;
        } else {
            lease.keep(upload).await?;
        }
    };
    let outcome = match verdict(outcome, hash, patch.checksum) {
        Ok(outcome) => outcome,
        Err(refused) => {
            file.set_len(start).await.map_err(ApiError::internal)?;
            upload.sha256 = running;
            return Err(refused);
        }
    };
    file.sync_data().await.map_err(ApiError::internal)?;
    if written != upload.offset {
        upload.offset = written;
        lease.save(upload).await?;
    }
    outcome
}

async fn append_parts(
    files: &Files,
    upload: &mut Upload,
    mut patch: Patch,
    lease: &mut impl Progress,
) -> Result<(), ApiError> {
    let store = files
        .parts()
        .ok_or_else(|| ApiError::internal("a multipart upload in a store without them"))?;
    let Stored::Multipart { upload_id, parts } = upload.stored.clone() else {
        return Err(ApiError::internal("not a multipart upload"));
    };
    let start = upload.offset;
    let kept = read_tail(files, &upload.path, start, tail_len(start, &parts)?).await?;
    let mut buffer = BytesMut::with_capacity(PART);
    if let Some((kept, _)) = &kept {
        buffer.extend_from_slice(kept);
    }
    let mut hash = patch.checksum.map(|_| Sha256::new());
    let running = upload.sha256.clone();
    let mut received = upload.offset;
    let mut done = parts;
    let outcome = loop {
        let mut chunk = match next_chunk(&mut patch.body).await {
            None => break Ok(()),
            Some(Err(e)) => break Err(e),
            Some(Ok(chunk)) => chunk,
        };
        if received + chunk.len() as u64 > upload.length {
            break Err(too_long(upload));
        }
        if let Some(hash) = hash.as_mut() {
            hash.update(&chunk);
        }
        received += chunk.len() as u64;
        while !chunk.is_empty() {
            let take = (PART - buffer.len()).min(chunk.len());
            let piece = chunk.split_to(take);
            // Hashed as it joins the part: at each part's end the hash is at the offset.
            upload.hash_more(
                done.len() as u64 * PART as u64 + buffer.len() as u64,
                &piece,
            );
            buffer.extend_from_slice(&piece);
            if buffer.len() < PART {
                continue;
            }
            let part = buffer.split().freeze();
            let id = store
                .put_part(&upload.path, &upload_id, done.len(), part)
                .await?;
            done.push(id);
            if hash.is_none() {
                upload.stored = Stored::Multipart {
                    upload_id: upload_id.clone(),
                    parts: done.clone(),
                };
                upload.offset = done.len() as u64 * PART as u64;
                lease.save(upload).await?;
            }
        }
        lease.keep(upload).await?;
    };
    let outcome = match verdict(outcome, hash, patch.checksum) {
        Ok(outcome) => outcome,
        Err(refused) => {
            upload.sha256 = running;
            return Err(refused);
        }
    };
    // What did not fill a part waits in a tail of its own for the next request.
    if received != start && !buffer.is_empty() {
        files
            .put(&tail(&upload.path, received), buffer.freeze())
            .await?;
    }
    upload.stored = Stored::Multipart {
        upload_id,
        parts: done,
    };
    if received != upload.offset {
        upload.offset = received;
        lease.save(upload).await?;
    }
    // The record no longer names the tail this request began with.
    if let Some((_, was)) = kept
        && upload.offset != start
    {
        files.delete(&was).await;
    }
    outcome
}

async fn append_pieces(
    files: &Files,
    upload: &mut Upload,
    mut patch: Patch,
    lease: &mut impl Progress,
) -> Result<(), ApiError> {
    let Stored::Pieces { count: first } = upload.stored else {
        return Err(ApiError::internal("not an upload in pieces"));
    };
    let mut hash = patch.checksum.map(|_| Sha256::new());
    let running = upload.sha256.clone();
    let mut received = upload.offset;
    let mut count = first;
    let mut buffer = BytesMut::with_capacity(PART);
    let outcome = loop {
        let chunk = match next_chunk(&mut patch.body).await {
            None => break Ok(()),
            Some(Err(e)) => break Err(e),
            Some(Ok(chunk)) => chunk,
        };
        if received + (buffer.len() + chunk.len()) as u64 > upload.length {
            break Err(too_long(upload));
        }
        if let Some(hash) = hash.as_mut() {
            hash.update(&chunk);
        }
        upload.hash_more(received + buffer.len() as u64, &chunk);
        buffer.extend_from_slice(&chunk);
        if buffer.len() >= PART {
            received += buffer.len() as u64;
            files
                .put(&piece(&upload.path, count), buffer.split().freeze())
                .await?;
            count += 1;
            if hash.is_none() {
                upload.stored = Stored::Pieces { count };
                upload.offset = received;
                lease.save(upload).await?;
            }
        }
        lease.keep(upload).await?;
    };
    if !buffer.is_empty() {
        received += buffer.len() as u64;
        files
            .put(&piece(&upload.path, count), buffer.freeze())
            .await?;
        count += 1;
    }
    let outcome = match verdict(outcome, hash, patch.checksum) {
        Ok(outcome) => outcome,
        Err(refused) => {
            remove_pieces(files, &upload.path, first..count).await;
            upload.sha256 = running;
            return Err(refused);
        }
    };
    upload.stored = Stored::Pieces { count };
    if received != upload.offset {
        upload.offset = received;
        lease.save(upload).await?;
    }
    outcome
}

/// The file a local upload appends to.
fn part_file(path: &str) -> String {
    format!("{path}.part")
}

/// The objects holding the bytes of a multipart upload past its last part, one per offset
/// they were kept at.
fn tails(path: &str) -> String {
    format!("{path}.tails/")
}

/// The tail of a multipart upload whose offset is `offset`.
fn tail(path: &str, offset: u64) -> String {
    format!("{}{offset:020}", tails(path))
}

/// Where an upload begun by an earlier version kept its tail: one object, overwritten by each
/// request.
fn old_tail(path: &str) -> String {
    format!("{path}.tail")
}

/// How many bytes a multipart upload at `offset` with `parts` keeps in its tail.
fn tail_len(offset: u64, parts: &[String]) -> Result<u64, ApiError> {
    offset
        .checked_sub(parts.len() as u64 * PART as u64)
        .filter(|len| *len < PART as u64)
        .ok_or_else(|| ApiError::internal("an upload's offset does not match its parts"))
}

/// The `len` bytes of the tail of the upload of `path` at `offset`, and the object they are
/// in; `None` when `len` is 0. An upload begun by an earlier version has its tail where that
/// version kept it.
async fn read_tail(
    files: &Files,
    path: &str,
    offset: u64,
    len: u64,
) -> Result<Option<(Bytes, String)>, ApiError> {
    if len == 0 {
        return Ok(None);
    }
    let mut kept = None;
    for name in [tail(path, offset), old_tail(path)] {
        if let Some(bytes) = files.read_if_there(&name, len).await? {
            kept = Some((bytes, name));
            break;
        }
    }
    match kept {
        Some((bytes, name)) if bytes.len() as u64 == len => Ok(Some((bytes, name))),
        _ => Err(ApiError::internal(
            "an upload's tail is missing or shorter than its offset says",
        )),
    }
}

/// Removes every tail of the upload of `path`.
async fn remove_tails(files: &Files, path: &str) {
    files.delete_prefix(&tails(path)).await;
    files.delete(&old_tail(path)).await;
}

/// The path of piece `n` of the upload of `path`.
fn piece(path: &str, n: u32) -> String {
    format!("{path}.parts/{n:08}")
}

async fn remove_pieces(files: &Files, path: &str, range: std::ops::Range<u32>) {
    for n in range {
        files.delete(&piece(path, n)).await;
    }
}

/// Makes the finished file at `upload.path` of a complete upload. Safe to run again after a
/// crash part way: a file already in place, of the upload's length, is taken as made.
pub(crate) async fn finish(files: &Files, upload: &Upload) -> Result<(), ApiError> {
    let in_place = || async {
        files
            .stat(&upload.path)
            .await
            .map(|stat| stat.is_some_and(|s| s.size == upload.length))
    };
    match &upload.stored {
        Stored::Appended => {
            let (Some(from), Some(to)) = (
                files.local_path(&part_file(&upload.path)),
                files.local_path(&upload.path),
            ) else {
                return Err(ApiError::internal(
                    "a local upload in a store that is not local",
                ));
            };
            match tokio::fs::rename(&from, &to).await {
                // The file was synced as it came; the rename is made durable too.
                Ok(()) => crate::files::durable(&to).await.map_err(ApiError::internal),
                Err(_) if in_place().await? => Ok(()),
                Err(e) => Err(ApiError::internal(e)),
            }
        }
        Stored::Multipart { upload_id, parts } => {
            let store = files
                .parts()
                .ok_or_else(|| ApiError::internal("a multipart upload in a store without them"))?;
            if in_place().await? {
                remove_tails(files, &upload.path).await;
                return Ok(());
            }
            let len = tail_len(upload.length, parts)?;
            let rest = read_tail(files, &upload.path, upload.length, len)
                .await?
                .map(|(bytes, _)| bytes);
            let mut parts = parts.clone();
            if parts.is_empty() {
                // Nothing filled a part: the file is the tail alone.
                files.put(&upload.path, rest.unwrap_or_default()).await?;
                if let Err(e) = store.abort(&upload.path, upload_id).await {
                    tracing::warn!(error = %e, path = %upload.path, "could not abort a multipart upload");
                }
            } else {
                if let Some(rest) = rest {
                    let id = store
                        .put_part(&upload.path, upload_id, parts.len(), rest)
                        .await?;
                    parts.push(id);
                }
                if let Err(e) = store.complete(&upload.path, upload_id, &parts).await {
                    // Completed by another try that held the upload after this one's lease
                    // ran out: the file is in place.
                    if !in_place().await? {
                        return Err(e.into());
                    }
                }
            }
            remove_tails(files, &upload.path).await;
            Ok(())
        }
        Stored::Pieces { count } => {
            if in_place().await? {
                return Ok(());
            }
            let count = *count;
            let pieces = futures_util::stream::iter(0..count).then(|n| {
                let path = piece(&upload.path, n);
                async move { files.read(&path, PART as u64).await.map_err(ApiError::from) }
            });
            files
                .put_stream(&upload.path, Box::pin(pieces), upload.length)
                .await?;
            remove_pieces(files, &upload.path, 0..count).await;
            Ok(())
        }
        // A direct upload's client put the file in place itself.
        Stored::Direct { .. } => Ok(()),
    }
}

/// Removes what an unfinished upload kept (an expired or terminated one), and its file when
/// it was made but no asset was (`with_file`).
pub(crate) async fn discard(files: &Files, upload: &Upload, with_file: bool) {
    match &upload.stored {
        Stored::Appended => files.delete(&part_file(&upload.path)).await,
        Stored::Multipart { upload_id, .. } => {
            if let Some(store) = files.parts()
                && let Err(e) = store.abort(&upload.path, upload_id).await
            {
                tracing::warn!(error = %e, path = %upload.path, "could not abort a multipart upload");
            }
            remove_tails(files, &upload.path).await;
        }
        Stored::Pieces { count } => remove_pieces(files, &upload.path, 0..*count).await,
        Stored::Direct { .. } => {}
    }
    if with_file {
        files.delete(&upload.path).await;
    }
}

/// The bytes of a direct upload's file: its size, and its SHA-256 when `hash` asks for it
/// (the file is read once, a chunk at a time); `None` when no file is there.
pub(crate) async fn measure(
    files: &Files,
    path: &str,
    hash: bool,
) -> Result<Option<(u64, Option<[u8; 32]>)>, ApiError> {
    if !hash {
        return Ok(files.stat(path).await?.map(|s| (s.size, None)));
    }
    let Some((size, mut stream)) = files.open_whole(path).await? else {
        return Ok(None);
    };
    let mut digest = Sha256::new();
    while let Some(chunk) = stream.next().await {
        digest.update(chunk.map_err(FileError::answer)?);
    }
    Ok(Some((size, Some(digest.finalize().into()))))
}

#[cfg(test)]
#[path = "storage_test.rs"]
mod tests;
