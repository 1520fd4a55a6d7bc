//! [`restore`]: an archive's records and files back into a store and a file store, after
//! [`verify`] has read it whole.

use std::io::Read as _;
use std::path::Path;

use bytes::Bytes;
use object_store::WriteMultipart;
use object_store::path::Path as ObjectPath;

use super::{ArchiveError, BATCH, CHUNK, Manifest, list_files, open, read_lines, verify};
use crate::files::Files;
use crate::transfer::TransferStore;
use crate::transfer::copy::import_in_batches;
use crate::transfer::{Progress, Record};

/// What a restore wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The archive's manifest.
    pub manifest: Manifest,
    /// Files written (the others were there from a restore cut short).
    pub files: u64,
}

/// Restores the archive at `path` into `store` and `files`: verifies it whole first
/// ([`verify`]: a damaged archive writes nothing), then writes every record and every file.
/// The target must be empty, or hold what a restore of the same archive cut short left (its
/// [`TransferStore::transfer_mark`] names it): that restore is then finished.
///
/// # Errors
/// What [`verify`] gives; [`ArchiveError::NotEmpty`] for a target that holds records or
/// files of its own; what the stores give.
pub async fn restore(
    path: &Path,
    store: &dyn TransferStore,
    files: &Files,
    progress: impl FnMut(Progress),
) -> Result<Restored, ArchiveError> {
    let owned = path.to_path_buf();
    let manifest = tokio::task::spawn_blocking(move || verify(&owned))
        .await
        .map_err(ArchiveError::io)??;
    restore_verified(path, manifest, store, files, progress).await
}

/// [`restore`] of an archive [`verify`] has just checked and found `manifest` in (a caller
/// that shows the check apart); the archive is read again, and an entry found damaged then
/// fails the restore.
///
/// # Errors
/// As [`restore`].
pub async fn restore_verified(
    path: &Path,
    manifest: Manifest,
    store: &dyn TransferStore,
    files: &Files,
    mut progress: impl FnMut(Progress),
) -> Result<Restored, ArchiveError> {
    let mark = format!(
        "restore of an archive with records {}",
        manifest.records.sha256
    );
    let there = store.record_counts().await?;
    let file_there = !list_files(files)
        .await
        .map_err(ArchiveError::io)?
        .is_empty();
    if (!there.is_empty() || file_there) && store.transfer_mark().await?.as_deref() != Some(&mark) {
        let what = if there.is_empty() {
            "it holds files".to_owned()
        } else {
            there.to_string()
        };
        return Err(ArchiveError::NotEmpty(what));
    }
    store.set_transfer_mark(Some(&mark)).await?;
    let mut done = Progress::default();
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Vec<Record>, ArchiveError>>(2);
    let owned = path.to_path_buf();
    let reading = tokio::task::spawn_blocking(move || read_records(&owned, &tx));
    while let Some(batch) = rx.recv().await {
        let batch = batch?;
        import_in_batches(store, &batch).await?;
        done.done += batch.len() as u64;
        progress(done);
    }
    reading.await.map_err(ArchiveError::io)?;
    let written = restore_files(path, files, &mut done, &mut progress).await?;
    store.set_transfer_mark(None).await?;
    Ok(Restored {
        manifest,
        files: written,
    })
}

/// Sends the records of the archive at `path`, [`BATCH`] at a time.
fn read_records(path: &Path, tx: &tokio::sync::mpsc::Sender<Result<Vec<Record>, ArchiveError>>) {
    let result = (|| {
        let mut zip = open(path)?;
        let mut batch = Vec::with_capacity(BATCH);
        read_lines(&mut zip, "records.jsonl", |n, line| {
            let record = serde_json::from_str(line).map_err(|e| {
                ArchiveError::damaged(format!("records.jsonl line {n} is not a record: {e}"))
            })?;
            batch.push(record);
            if batch.len() == BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                tx.blocking_send(Ok(full))
                    .map_err(|_| ArchiveError::io("the restore stopped"))?;
            }
            Ok(())
        })?;
        if !batch.is_empty() {
            tx.blocking_send(Ok(batch))
                .map_err(|_| ArchiveError::io("the restore stopped"))?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = tx.blocking_send(Err(e));
    }
}

/// Writes every file of the archive at `path` that `files` does not have with its size;
/// how many it wrote.
async fn restore_files(
    path: &Path,
    files: &Files,
    done: &mut Progress,
    progress: &mut impl FnMut(Progress),
) -> Result<u64, ArchiveError> {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Piece, ArchiveError>>(8);
    let owned = path.to_path_buf();
    let reading = tokio::task::spawn_blocking(move || read_files(&owned, &tx));
    let mut written = 0u64;
    let mut writing: Option<(WriteMultipart, u64)> = None;
    while let Some(piece) = rx.recv().await {
        match piece? {
            Piece::Start { path, size } => {
                let location = ObjectPath::parse(&path).map_err(ArchiveError::io)?;
                let there = match files.object_store().head(&location).await {
                    Ok(meta) => meta.size == size,
                    Err(object_store::Error::NotFound { .. }) => false,
                    Err(e) => return Err(ArchiveError::io(e)),
                };
                writing = if there {
                    None
                } else {
                    files.remove_unfinished(&path).await;
                    let upload = files
                        .object_store()
                        .put_multipart(&location)
                        .await
                        .map_err(ArchiveError::io)?;
                    Some((WriteMultipart::new(upload), size))
                };
            }
            Piece::Bytes(bytes) => {
                if let Some((upload, _)) = writing.as_mut() {
                    upload.write(&bytes);
                }
            }
            Piece::End => {
                if let Some((upload, size)) = writing.take() {
                    upload.finish().await.map_err(ArchiveError::io)?;
                    written += 1;
                    done.bytes += size;
                }
                done.done += 1;
                progress(*done);
            }
        }
    }
    reading.await.map_err(ArchiveError::io)?;
    Ok(written)
}

/// A file of an archive, as [`read_files`] sends it.
enum Piece {
    Start { path: String, size: u64 },
    Bytes(Bytes),
    End,
}

/// Sends every file of the archive at `path`, a chunk at a time.
fn read_files(path: &Path, tx: &tokio::sync::mpsc::Sender<Result<Piece, ArchiveError>>) {
    let send = |piece| {
        tx.blocking_send(Ok(piece))
            .map_err(|_| ArchiveError::io("the restore stopped"))
    };
    let result = (|| {
        let mut zip = open(path)?;
        for i in 0..zip.len() {
            let mut entry = zip.by_index(i).map_err(ArchiveError::io)?;
            let Some(name) = entry.name().strip_prefix("files/").map(str::to_owned) else {
                continue;
            };
            send(Piece::Start {
                path: name,
                size: entry.size(),
            })?;
            loop {
                let mut chunk = vec![0u8; CHUNK];
                let n = entry.read(&mut chunk).map_err(ArchiveError::io)?;
                if n == 0 {
                    break;
                }
                chunk.truncate(n);
                send(Piece::Bytes(Bytes::from(chunk)))?;
            }
            send(Piece::End)?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = tx.blocking_send(Err(e));
    }
}
