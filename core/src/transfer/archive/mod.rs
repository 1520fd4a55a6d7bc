//! One file holding every record and every file of a deployment, with checksums: what the
//! ready server's `backup` writes ([`write`]) and `restore` reads back ([`verify`],
//! [`restore`]).
//!
//! The archive is a zip:
//!
//! | entry | holds |
//! |---|---|
//! | `records.jsonl` | every record ([`super::Record`]), one JSON object a line, in export order (deflated) |
//! | `files/{path}` | each file of the file store, at its path (stored as it is) |
//! | `files.jsonl` | each file's path, size and SHA-256 (deflated) |
//! | `manifest.json` | the format, when and from what it was made, the record counts, and the size and SHA-256 of `records.jsonl` and `files.jsonl` (written last) |
//!
//! [`verify`] reads all of it and checks every size, checksum and record, and that the
//! archive holds exactly the files `files.jsonl` lists; [`restore`] verifies first and
//! writes nothing into a damaged archive's target.

use std::fs::File;
use std::io::{BufRead as _, BufReader, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use futures_util::StreamExt as _;
use object_store::path::Path as ObjectPath;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use tokio::runtime::Handle;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::{FORMAT, Progress, Record, RecordCounts, copy::list_files};

mod restore;

use crate::error::StoreError;
use crate::files::Files;
use crate::transfer::TransferStore;
pub use restore::{Restored, restore, restore_verified};

/// Records read from an archive and imported in one call.
const BATCH: usize = 500;

/// Bytes read at a time from an archive's entry.
const CHUNK: usize = 256 * 1024;

/// Why an archive could not be written, read or restored.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArchiveError {
    /// The archive is not whole or not one of ours: what is wrong, for the user.
    #[error("the archive is damaged: {0}")]
    Damaged(String),
    /// It was written by a newer version.
    #[error("the archive is of format {found}, newer than this version reads ({FORMAT})")]
    Newer {
        /// Its format.
        found: u32,
    },
    /// The target of a restore holds records or files already.
    #[error("the target is not empty ({0}); restore into an empty data directory or database")]
    NotEmpty(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
}

impl ArchiveError {
    fn io(e: impl std::fmt::Display) -> Self {
        ArchiveError::Io(e.to_string())
    }

    fn damaged(what: impl Into<String>) -> Self {
        ArchiveError::Damaged(what.into())
    }
}

/// The size and SHA-256 of an entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sum {
    /// Its size in bytes.
    pub size: u64,
    /// Its SHA-256, in hex.
    pub sha256: String,
}

/// What `manifest.json` says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The record format ([`FORMAT`]).
    pub format: u32,
    /// When the archive was made.
    pub made_at: DateTime<Utc>,
    /// What it was made from (for the user).
    pub source: String,
    /// The records it holds, by kind.
    pub counts: RecordCounts,
    /// `records.jsonl`.
    pub records: Sum,
    /// `files.jsonl`.
    pub files: Sum,
    /// How many files it holds.
    pub file_count: u64,
    /// Their bytes.
    pub file_bytes: u64,
}

/// One line of `files.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct FileLine {
    path: String,
    size: u64,
    sha256: String,
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A writer that hashes and counts what goes through it.
struct Hashing<W> {
    inner: W,
    hash: Sha256,
    size: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash.update(&buf[..n]);
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl<W> Hashing<W> {
    fn new(inner: W) -> Self {
        Hashing {
            inner,
            hash: Sha256::new(),
            size: 0,
        }
    }

    fn sum(self) -> (W, Sum) {
        let sum = Sum {
            size: self.size,
            sha256: hex(&self.hash.finalize()),
        };
        (self.inner, sum)
    }
}

/// Writes the archive of every record of `store` (from one moment) and every file of
/// `files` to `out`, calling `progress` as records and files go in. The archive is written
/// beside `out` and renamed to it once whole and on disk, so `out` is never a part of one.
///
/// A file the store's records name that is deleted while the archive is written (its asset
/// deleted meanwhile) is left out.
///
/// # Errors
/// What the store and the file stores give, and [`ArchiveError::Io`] when `out` cannot be
/// written.
pub async fn write(
    store: &dyn TransferStore,
    files: &Files,
    out: &Path,
    source: &str,
    progress: impl FnMut(Progress) + Send + 'static,
) -> Result<Manifest, ArchiveError> {
    let records = store.export().await?;
    let listed = list_files(files).await.map_err(ArchiveError::io)?;
    let (files, out, source) = (files.clone(), out.to_path_buf(), source.to_owned());
    let handle = Handle::current();
    tokio::task::spawn_blocking(move || {
        write_blocking(&handle, records, &files, &listed, &out, &source, progress)
    })
    .await
    .map_err(ArchiveError::io)?
}

type Records = futures_util::stream::BoxStream<'static, Result<Record, StoreError>>;

fn write_blocking(
    handle: &Handle,
    mut records: Records,
    files: &Files,
    listed: &[(String, u64)],
    out: &Path,
    source: &str,
    mut progress: impl FnMut(Progress),
) -> Result<Manifest, ArchiveError> {
    let partial = partial_path(out);
    let file = File::create(&partial).map_err(ArchiveError::io)?;
    let mut zip = ZipWriter::new(BufWriter::new(file));
    let deflated = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .large_file(true);
    let mut done = Progress::default();

    zip.start_file("records.jsonl", deflated)
        .map_err(ArchiveError::io)?;
    let mut counts = RecordCounts::default();
    let mut lines = Hashing::new(&mut zip);
    while let Some(record) = handle.block_on(records.next()) {
        let record = record?;
        counts.add(&record);
        serde_json::to_writer(&mut lines, &record).map_err(ArchiveError::io)?;
        lines.write_all(b"\n").map_err(ArchiveError::io)?;
        done.done += 1;
        if done.done.is_multiple_of(BATCH as u64) {
            progress(done);
        }
    }
    let (_, records_sum) = lines.sum();

    let mut index = Vec::with_capacity(listed.len());
    let mut file_bytes = 0u64;
    for (path, size) in listed {
        let Some(line) = handle.block_on(put_file(&mut zip, files, path, *size))? else {
            continue;
        };
        file_bytes += line.size;
        done.done += 1;
        done.bytes += line.size;
        progress(done);
        index.push(line);
    }
    zip.start_file("files.jsonl", deflated)
        .map_err(ArchiveError::io)?;
    let mut lines = Hashing::new(&mut zip);
    for line in &index {
        serde_json::to_writer(&mut lines, line).map_err(ArchiveError::io)?;
        lines.write_all(b"\n").map_err(ArchiveError::io)?;
    }
    let (_, files_sum) = lines.sum();
    let manifest = Manifest {
        format: FORMAT,
        made_at: Utc::now(),
        source: source.to_owned(),
        counts,
        records: records_sum,
        files: files_sum,
        file_count: index.len() as u64,
        file_bytes,
    };
    zip.start_file("manifest.json", deflated)
        .map_err(ArchiveError::io)?;
    serde_json::to_writer_pretty(&mut zip, &manifest).map_err(ArchiveError::io)?;
    let written = zip.finish().map_err(ArchiveError::io)?;
    let file = written.into_inner().map_err(ArchiveError::io)?;
    file.sync_all().map_err(ArchiveError::io)?;
    std::fs::rename(&partial, out).map_err(ArchiveError::io)?;
    Ok(manifest)
}

/// Where an archive is written until it is whole: `out` with `.partial` added.
fn partial_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

/// Streams the file at `path` into a new entry `files/{path}`; `None` when it is gone.
async fn put_file<W: Write + Seek>(
    zip: &mut ZipWriter<W>,
    files: &Files,
    path: &str,
    size: u64,
) -> Result<Option<FileLine>, ArchiveError> {
    let location = ObjectPath::parse(path).map_err(ArchiveError::io)?;
    let got = match files.object_store().get(&location).await {
        Ok(got) => got,
        Err(object_store::Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(ArchiveError::io(e)),
    };
    let stored = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .large_file(size >= u64::from(u32::MAX));
    zip.start_file(format!("files/{path}"), stored)
        .map_err(ArchiveError::io)?;
    let mut entry = Hashing::new(zip);
    let mut stream = got.into_stream();
    while let Some(chunk) = stream.next().await {
        entry
            .write_all(&chunk.map_err(ArchiveError::io)?)
            .map_err(ArchiveError::io)?;
    }
    let (_, sum) = entry.sum();
    Ok(Some(FileLine {
        path: path.to_owned(),
        size: sum.size,
        sha256: sum.sha256,
    }))
}

/// Reads the whole archive at `path` and checks it: its manifest, the size and checksum of
/// every entry, every record, and that it holds exactly the files its index lists. Blocking:
/// call it from a blocking task.
///
/// # Errors
/// [`ArchiveError::Damaged`] naming what is wrong; [`ArchiveError::Newer`] for a newer
/// format; [`ArchiveError::Io`] when the file cannot be read at all.
pub fn verify(path: &Path) -> Result<Manifest, ArchiveError> {
    let mut zip = open(path)?;
    let manifest = manifest(&mut zip)?;
    let mut counts = RecordCounts::default();
    let sum = read_lines(&mut zip, "records.jsonl", |n, line| {
        let record: Record = serde_json::from_str(line).map_err(|e| {
            ArchiveError::damaged(format!("records.jsonl line {n} is not a record: {e}"))
        })?;
        counts.add(&record);
        Ok(())
    })?;
    expect_sum("records.jsonl", &sum, &manifest.records)?;
    if counts != manifest.counts {
        return Err(ArchiveError::damaged(format!(
            "records.jsonl holds {counts}, the manifest says {}",
            manifest.counts
        )));
    }
    let index = file_index(&mut zip, &manifest)?;
    let mut seen = 0usize;
    for i in 0..zip.len() {
        let mut entry = zip
            .by_index(i)
            .map_err(|e| ArchiveError::damaged(format!("entry {i}: {e}")))?;
        let name = entry.name().to_owned();
        let Some(path) = name.strip_prefix("files/") else {
            if matches!(
                name.as_str(),
                "records.jsonl" | "files.jsonl" | "manifest.json"
            ) {
                continue;
            }
            return Err(ArchiveError::damaged(format!("{name} is no entry of ours")));
        };
        let Some(line) = index.get(path) else {
            return Err(ArchiveError::damaged(format!(
                "{name} is not in files.jsonl"
            )));
        };
        let mut hash = Hashing::new(std::io::sink());
        std::io::copy(&mut entry, &mut hash)
            .map_err(|e| ArchiveError::damaged(format!("{name} cannot be read: {e}")))?;
        let (_, sum) = hash.sum();
        let want = Sum {
            size: line.size,
            sha256: line.sha256.clone(),
        };
        expect_sum(&name, &sum, &want)?;
        seen += 1;
    }
    if seen != index.len() {
        return Err(ArchiveError::damaged(format!(
            "files.jsonl lists {} files, the archive holds {seen}",
            index.len()
        )));
    }
    Ok(manifest)
}

fn open(path: &Path) -> Result<ZipArchive<BufReader<File>>, ArchiveError> {
    let file =
        File::open(path).map_err(|e| ArchiveError::Io(format!("{}: {e}", path.display())))?;
    ZipArchive::new(BufReader::new(file))
        .map_err(|e| ArchiveError::damaged(format!("it is not a whole zip archive ({e})")))
}

fn manifest<R: Read + Seek>(zip: &mut ZipArchive<R>) -> Result<Manifest, ArchiveError> {
    let entry = zip
        .by_name("manifest.json")
        .map_err(|_| ArchiveError::damaged("it has no manifest.json"))?;
    let manifest: Manifest = serde_json::from_reader(entry)
        .map_err(|e| ArchiveError::damaged(format!("manifest.json cannot be read: {e}")))?;
    if manifest.format > FORMAT {
        return Err(ArchiveError::Newer {
            found: manifest.format,
        });
    }
    Ok(manifest)
}

fn expect_sum(name: &str, found: &Sum, want: &Sum) -> Result<(), ArchiveError> {
    if found.size != want.size {
        return Err(ArchiveError::damaged(format!(
            "{name} is {} bytes, the manifest says {}",
            found.size, want.size
        )));
    }
    if found.sha256 != want.sha256 {
        return Err(ArchiveError::damaged(format!(
            "{name} does not have the checksum the manifest says"
        )));
    }
    Ok(())
}

/// Calls `each` with every line (and its number, from 1) of the entry `name`; its sum.
fn read_lines<R: Read + Seek>(
    zip: &mut ZipArchive<R>,
    name: &str,
    mut each: impl FnMut(usize, &str) -> Result<(), ArchiveError>,
) -> Result<Sum, ArchiveError> {
    let entry = zip
        .by_name(name)
        .map_err(|_| ArchiveError::damaged(format!("it has no {name}")))?;
    let mut reader = BufReader::new(entry);
    let mut hash = Sha256::new();
    let (mut size, mut n) = (0u64, 0usize);
    let mut line = String::new();
    loop {
        line.clear();
        let read = reader
            .read_line(&mut line)
            .map_err(|e| ArchiveError::damaged(format!("{name} cannot be read: {e}")))?;
        if read == 0 {
            break;
        }
        n += 1;
        hash.update(line.as_bytes());
        size += read as u64;
        each(n, line.trim_end_matches('\n'))?;
    }
    Ok(Sum {
        size,
        sha256: hex(&hash.finalize()),
    })
}

/// `files.jsonl`, checked against the manifest, by path.
fn file_index<R: Read + Seek>(
    zip: &mut ZipArchive<R>,
    manifest: &Manifest,
) -> Result<std::collections::HashMap<String, FileLine>, ArchiveError> {
    let mut index = std::collections::HashMap::new();
    let sum = read_lines(zip, "files.jsonl", |n, line| {
        let line: FileLine = serde_json::from_str(line).map_err(|e| {
            ArchiveError::damaged(format!("files.jsonl line {n} cannot be read: {e}"))
        })?;
        index.insert(line.path.clone(), line);
        Ok(())
    })?;
    expect_sum("files.jsonl", &sum, &manifest.files)?;
    if index.len() as u64 != manifest.file_count {
        return Err(ArchiveError::damaged(format!(
            "files.jsonl lists {} files, the manifest says {}",
            index.len(),
            manifest.file_count
        )));
    }
    Ok(index)
}
