//! Storing a stream ([`Files::put_stream`]): whole or not at all, and on a local file system
//! on disk before it answers.

use bytes::Bytes;
use futures_util::{Stream, StreamExt as _};
use object_store::{MultipartUpload, PutPayload};
use sha2::{Digest as _, Sha256};

use super::{Files, object_path};
use crate::error::{ApiError, FileError};

impl Files {
    /// Stores a stream at `path`: the object appears only when it is whole (a local file
    /// system stages it beside the target and renames it, then syncs the file and its
    /// directory, so an upload answered is on disk), and a stream that fails leaves nothing
    /// at `path`. A stream that ends within its first part ([`PART_SIZE`]) is stored with one
    /// put; a longer one as a multipart upload to that key, aborted when the stream fails.
    /// More than `limit` bytes fail with [`ApiError::PayloadTooLarge`]. Unlike the other
    /// methods it answers in the contract's errors: its failures are mostly the request's
    /// (the body's own error, 408 or 400, and 413), which [`FileError`] has no kinds for.
    pub(crate) async fn put_stream<S, E>(
        &self,
        path: &str,
        mut stream: S,
        limit: u64,
    ) -> Result<(u64, [u8; 32]), ApiError>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin + Send,
        E: Into<ApiError>,
    {
        let mut digest = Sha256::new();
        let location = object_path(path)?;
        let mut upload: Option<Box<dyn MultipartUpload>> = None;
        let mut written = 0u64;
        let mut pending = Vec::new();
        let mut pending_len = 0usize;
        let result = async {
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(Into::into)?;
                written += chunk.len() as u64;
                if written > limit {
                    return Err(ApiError::PayloadTooLarge { limit });
                }
                digest.update(&chunk);
                pending_len += chunk.len();
                pending.push(chunk);
                if pending_len >= PART_SIZE {
                    pending_len = 0;
                    let part = PutPayload::from_iter(std::mem::take(&mut pending));
                    let upload = match &mut upload {
                        Some(upload) => upload,
                        None => upload.insert(
                            self.store
                                .put_multipart(&location)
                                .await
                                .map_err(FileError::answer)?,
                        ),
                    };
                    upload.put_part(part).await.map_err(FileError::answer)?;
                }
            }
            let rest = PutPayload::from_iter(std::mem::take(&mut pending));
            match &mut upload {
                Some(upload) => {
                    if pending_len > 0 {
                        upload.put_part(rest).await.map_err(FileError::answer)?;
                    }
                    upload.complete().await.map_err(FileError::answer)?;
                }
                None => {
                    self.store
                        .put(&location, rest)
                        .await
                        .map_err(FileError::answer)?;
                }
            }
            Ok(())
        }
        .await;
        match result {
            Ok(()) => {
                if let Some(local) = self.local_path(path) {
                    durable(&local).await.map_err(ApiError::internal)?;
                }
                Ok((written, digest.finalize().into()))
            }
            Err(e) => {
                if let Some(mut upload) = upload
                    && let Err(abort) = upload.abort().await
                {
                    tracing::warn!(error = %abort, path, "could not abort an unfinished upload");
                }
                Err(e)
            }
        }
    }
}

/// Bytes gathered before a part of a streamed upload is written (object stores such as S3
/// need parts of at least 5 MiB).
const PART_SIZE: usize = 5 * 1024 * 1024;

/// Syncs the file at `path` and the directory that names it to disk.
pub(crate) async fn durable(path: &std::path::Path) -> std::io::Result<()> {
    tokio::fs::File::open(path).await?.sync_all().await?;
    if let Some(dir) = path.parent() {
        tokio::fs::File::open(dir).await?.sync_all().await?;
    }
    Ok(())
}
