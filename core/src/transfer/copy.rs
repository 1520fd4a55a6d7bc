//! Copying records from one store to another ([`copy_records`]) and every file from one file
//! store to another ([`copy_files`]), resumably; the ready server's `migrate` runs both and
//! then [`verify_copy`].

use futures_util::{StreamExt as _, TryStreamExt as _};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutPayload, WriteMultipart};
use sha2::{Digest as _, Sha256};

use uuid::Uuid;

use super::{Record, RecordCounts};
use crate::error::{BoxError, StoreError};
use crate::files::Files;
use crate::transfer::TransferStore;

/// Records written to the target in one call of [`TransferStore::import`].
const BATCH: usize = 500;

/// Where a copy stands, for a progress bar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Records (or files) done.
    pub done: u64,
    /// Bytes of files done.
    pub bytes: u64,
}

/// What a copy did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Copied {
    /// The records copied, by kind.
    pub records: RecordCounts,
    /// Files copied.
    pub files: u64,
    /// Files the target had already (from a copy cut short), left as they were.
    pub files_there: u64,
    /// Bytes of the files copied.
    pub bytes: u64,
}

/// Copies every record of `source` into `target`, [`BATCH`] at a time, calling `progress`
/// after each batch. Records the target holds already are left as they are
/// ([`TransferStore::import`]), so a copy cut short runs again from the start.
///
/// # Errors
/// What the stores give.
pub async fn copy_records(
    source: &dyn TransferStore,
    target: &dyn TransferStore,
    mut progress: impl FnMut(Progress),
) -> Result<RecordCounts, StoreError> {
    let mut records = source.export().await?;
    let mut counts = RecordCounts::default();
    let mut batch: Vec<Record> = Vec::with_capacity(BATCH);
    let mut done = 0u64;
    loop {
        let next = records.try_next().await?;
        let end = next.is_none();
        if let Some(record) = next {
            counts.add(&record);
            batch.push(record);
        }
        if batch.len() >= BATCH || (end && !batch.is_empty()) {
            import_in_batches(target, &batch).await?;
            done += batch.len() as u64;
            batch.clear();
            progress(Progress { done, bytes: 0 });
        }
        if end {
            return Ok(counts);
        }
    }
}

/// Hands `records` to `target`'s [`TransferStore::import`] in batches of the size it takes
/// ([`TransferStore::import_batch`]).
pub(crate) async fn import_in_batches(
    target: &dyn TransferStore,
    records: &[Record],
) -> Result<(), StoreError> {
    for batch in records.chunks(target.import_batch().max(1)) {
        target.import(batch).await?;
    }
    Ok(())
}

/// The path of every file of `files`, with its size, in path order.
///
/// # Errors
/// When the file store cannot be listed.
pub async fn list_files(files: &Files) -> Result<Vec<(String, u64)>, BoxError> {
    let mut listed: Vec<(String, u64)> = files
        .object_store()
        .list(None)
        .map_ok(|meta| (meta.location.to_string(), meta.size))
        .try_collect()
        .await?;
    listed.sort();
    Ok(listed)
}

/// Copies every file of `from` into `to` at the same path, streaming, calling `progress`
/// after each. A file `to` has already with the same size is left as it is (a copy cut short
/// runs again); every other is written whole or not at all (a multipart upload, completed
/// only at its end).
///
/// # Errors
/// What the file stores give.
pub async fn copy_files(
    from: &Files,
    to: &Files,
    mut progress: impl FnMut(Progress),
) -> Result<Copied, BoxError> {
    let mut copied = Copied::default();
    let mut done = Progress::default();
    for (path, size) in list_files(from).await? {
        let location = ObjectPath::parse(&path)?;
        let there = match to.object_store().head(&location).await {
            Ok(meta) => Some(meta.size),
            Err(object_store::Error::NotFound { .. }) => None,
            Err(e) => return Err(e.into()),
        };
        if there == Some(size) {
            copied.files_there += 1;
        } else {
            to.remove_unfinished(&path).await;
            copy_one(from.object_store(), to.object_store(), &location).await?;
            copied.files += 1;
            copied.bytes += size;
        }
        done.done += 1;
        done.bytes += size;
        progress(done);
    }
    Ok(copied)
}

/// Streams one file from `from` to `to`.
async fn copy_one(
    from: &std::sync::Arc<dyn ObjectStore>,
    to: &std::sync::Arc<dyn ObjectStore>,
    location: &ObjectPath,
) -> Result<(), BoxError> {
    let got = from.get(location).await?;
    if got.meta.size <= 8 * 1024 * 1024 {
        let bytes = got.bytes().await?;
        to.put(location, PutPayload::from(bytes)).await?;
        return Ok(());
    }
    let upload = to.put_multipart(location).await?;
    let mut writer = WriteMultipart::new(upload);
    let mut stream = got.into_stream();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(chunk) => writer.write(&chunk),
            Err(e) => {
                writer.abort().await?;
                return Err(e.into());
            }
        }
    }
    writer.finish().await?;
    Ok(())
}

/// The SHA-256 of a stored file, read whole (streaming).
///
/// # Errors
/// When it cannot be read.
pub async fn file_checksum(files: &Files, path: &str) -> Result<[u8; 32], BoxError> {
    let got = files.object_store().get(&ObjectPath::parse(path)?).await?;
    let mut hash = Sha256::new();
    let mut stream = got.into_stream();
    while let Some(chunk) = stream.next().await {
        hash.update(chunk?);
    }
    Ok(hash.finalize().into())
}

/// Why a copy is not what its source is ([`verify_copy`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CopyDiffers {
    /// The two stores hold different numbers of records of some kind.
    #[error("the copy differs: the source holds {from}, the target {to}")]
    Counts {
        /// What the source holds.
        from: RecordCounts,
        /// What the target holds.
        to: RecordCounts,
    },
    /// An asset's file cannot be read from the target's file store.
    #[error("asset {asset}: its file {path}: {error}")]
    Unreadable {
        /// The asset.
        asset: Uuid,
        /// Its file's path.
        path: String,
        /// Why it cannot be read.
        error: BoxError,
    },
    /// An asset's file does not have the checksum the asset records.
    #[error("asset {asset}: its file {path} does not have the checksum the asset records")]
    Checksum {
        /// The asset.
        asset: Uuid,
        /// Its file's path.
        path: String,
    },
    /// A store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Checks a copy: `source` and `target` hold as many records of each kind, and the file of
/// every asset of `target` that records a checksum (read from `files`, the target's file
/// store) has that checksum. Calls `progress` with the assets looked at; answers how many
/// files it checked.
///
/// # Errors
/// [`CopyDiffers`] for the first difference found, or what the stores give.
pub async fn verify_copy(
    source: &dyn TransferStore,
    target: &dyn TransferStore,
    files: &Files,
    mut progress: impl FnMut(Progress),
) -> Result<u64, CopyDiffers> {
    let (from, to) = (source.record_counts().await?, target.record_counts().await?);
    if from != to {
        return Err(CopyDiffers::Counts { from, to });
    }
    let mut records = target.export().await?;
    let (mut checked, mut seen) = (0u64, Progress::default());
    while let Some(record) = records.try_next().await? {
        let Record::Asset(asset) = record else {
            continue;
        };
        seen.done += 1;
        progress(seen);
        let (Some(path), Some(sum)) = (asset.file_path, asset.checksum_sha256) else {
            continue;
        };
        match file_checksum(files, &path).await {
            Ok(found) if found == sum => checked += 1,
            Ok(_) => {
                return Err(CopyDiffers::Checksum {
                    asset: asset.id,
                    path,
                });
            }
            Err(error) => {
                return Err(CopyDiffers::Unreadable {
                    asset: asset.id,
                    path,
                    error,
                });
            }
        }
    }
    Ok(checked)
}
