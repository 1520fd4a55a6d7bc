//! [`Files`]: the file store behind assets, any [`object_store::ObjectStore`].
//!
//! Asset files and thumbnails live in one object store: [`Files::local`] roots a
//! [`LocalFileSystem`] at a directory (the ready server uses its data directory's `files/`),
//! [`Files::new`] takes any other backend (S3-compatible, GCS, Azure, for several API
//! replicas), and [`Files::memory`] keeps them in memory (tests, examples).
//!
//! With the feature `s3`, [`Files::s3`] keeps them in a bucket of any S3-compatible service
//! (AWS S3, MinIO, SeaweedFS, Ceph, R2, ...), configured from the standard `AWS_*` environment
//! variables, and [`Files::s3_with`] takes the configuration from code. An upload is invisible
//! until it is complete (a multipart upload to its final key), and an aborted one is aborted
//! on the server, so it leaves nothing behind. The tests run against a real S3 server that they
//! start themselves (SeaweedFS, from the workspace's test kit, `tests/kit`).
//!
//! A `file_path` given on create is a path in this store. It passes one gate, when the create
//! is validated ([`crate::validate::check_file_path`]: no `..`, no absolute paths, no
//! percent-encoded forms of either), and is then resolved against the store: a path that does
//! not exist is refused, and so, on a local file system, is one whose symbolic links lead
//! outside the root. The path stored on the asset is the resolved one, so a link changed later
//! cannot lead a download elsewhere.
//!
//! | path | holds |
//! |---|---|
//! | anything the app puts there | asset files named by `file_path` |
//! | `uploads/{uuid}/{name}` | files uploaded through the API |
//! | `thumbnails/{random}.{png,jpg}` | thumbnails of images, served publicly: 128 random bits name each, never the asset's id |
//! | `derived/{asset_id}/{name}.{jpg,png,webp}` | image variants, named by what makes them (removed with the asset's file) |
//!
//! ```
//! use assetlib_core::Files;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let files = Files::memory();
//! files.put("docs/readme.txt", "hello".into()).await.unwrap();
//! let path = files.resolve("docs/readme.txt").await.unwrap();
//! assert_eq!(path.size, 5);
//! assert!(files.resolve("docs/missing.txt").await.is_err());
//! # });
//! ```

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
#[cfg(feature = "previews")]
use futures_util::StreamExt as _;
use futures_util::TryStreamExt as _;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, ObjectStore, PutPayload};

#[cfg(feature = "previews")]
use tokio::io::AsyncWriteExt as _;

#[cfg(feature = "previews")]
use crate::error::BoxError;
use crate::error::FileError;
use crate::reply::ByteStream;

mod parts;
#[cfg(feature = "s3")]
mod s3;
mod stream;
mod written;
pub(crate) use parts::{Parts, Presigner};
pub(crate) use stream::durable;
pub(crate) use written::Written;

/// Why a file store could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilesError {
    /// The root directory could not be created or resolved.
    #[error("file store directory {path}: {source}")]
    Directory {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The object store refused the configuration.
    #[error("file store: {0}")]
    Store(#[from] object_store::Error),
    /// A file store URL that names no store (for [`Files::s3`]: not `s3://bucket` or
    /// `s3://bucket/prefix`).
    #[error("file store URL {url:?}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// The file store of a [`crate::Service`]. Cheap to clone.
#[derive(Clone)]
pub struct Files {
    store: Arc<dyn ObjectStore>,
    /// The canonical root when the store is a local directory: paths are resolved against it
    /// so that symbolic links leading outside are refused.
    local_root: Option<PathBuf>,
    /// The store's multipart uploads by id, when it has them (resumable uploads).
    parts: Option<Parts>,
    /// The store's presigned URLs, when it has them (direct uploads).
    presigner: Option<Presigner>,
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Files")
            .field("store", &self.store.to_string())
            .field("local_root", &self.local_root)
            .finish()
    }
}

/// A file found by [`Files::resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Its path in the store, links resolved.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
}

/// A file about to be sent: its size and a strong validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stat {
    pub(crate) size: u64,
    /// Quoted, ready for the `ETag` header.
    pub(crate) etag: String,
    /// The store's own tag of this version of the file, when it has one: opening the file
    /// names it, so a file changed in place since is not mistaken for this one.
    version: Option<String>,
}

fn object_path(path: &str) -> Result<ObjectPath, FileError> {
    ObjectPath::parse(path).map_err(|_| FileError::InvalidPath)
}

impl Files {
    /// Files in memory, gone when the last clone is dropped.
    pub fn memory() -> Self {
        let store = Arc::new(InMemory::new());
        Files {
            store: store.clone(),
            local_root: None,
            parts: Some(Parts::new(store, None)),
            presigner: None,
        }
    }

    /// Files under the directory `root` (created if missing).
    ///
    /// # Errors
    /// [`FilesError`] when the directory cannot be created or resolved.
    pub fn local(root: impl Into<PathBuf>) -> Result<Self, FilesError> {
        let root = root.into();
        let dir_err = |source| FilesError::Directory {
            path: root.clone(),
            source,
        };
        std::fs::create_dir_all(&root).map_err(dir_err)?;
        let canonical = std::fs::canonicalize(&root).map_err(dir_err)?;
        let store = LocalFileSystem::new_with_prefix(&canonical)?;
        Ok(Files {
            store: Arc::new(store),
            local_root: Some(canonical),
            parts: None,
            presigner: None,
        })
    }

    /// Files in any object store (S3-compatible, GCS, Azure, ...). Paths are taken as they
    /// are: such stores have no links. A resumable upload keeps its bytes in pieces of 5 MiB,
    /// joined when it completes ([`Files::s3`] and [`Files::memory`] use the store's
    /// multipart uploads instead, and only [`Files::s3`] offers direct uploads).
    pub fn new(store: Arc<dyn ObjectStore>) -> Self {
        Files {
            store,
            local_root: None,
            parts: None,
            presigner: None,
        }
    }

    /// The object store.
    pub fn object_store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// Finds the file a `file_path` names: its path with links resolved, and its size.
    ///
    /// # Errors
    /// 400 on `file_path` when the path is not a file in the store or (on a local file
    /// system) leads outside its root; 500 when the store fails.
    ///
    /// `file_path` is expected to have passed [`crate::validate::check_file_path`], the one
    /// gate for paths named by clients; a path with `..` still never resolves outside the
    /// store (the object store refuses it, a local root is checked after links are followed).
    pub async fn resolve(&self, file_path: &str) -> Result<Resolved, FileError> {
        let path = match &self.local_root {
            Some(root) => {
                let root = root.clone();
                let joined = root.join(file_path);
                let canonical = tokio::task::spawn_blocking(move || std::fs::canonicalize(joined))
                    .await
                    .map_err(FileError::store)?
                    .map_err(|_| FileError::Missing)?;
                let inside = canonical
                    .strip_prefix(&root)
                    .map_err(|_| FileError::Outside)?;
                let parts: Option<Vec<&str>> = inside
                    .components()
                    .map(|c| c.as_os_str().to_str())
                    .collect();
                parts.ok_or(FileError::Missing)?.join("/")
            }
            None => file_path.to_owned(),
        };
        let meta = match self.store.head(&object_path(&path)?).await {
            Ok(meta) => meta,
            Err(object_store::Error::NotFound { .. }) => return Err(FileError::Missing),
            Err(e) => return Err(FileError::store(e)),
        };
        Ok(Resolved {
            path,
            size: meta.size,
        })
    }

    /// Size and `ETag` of a stored file; `None` when it is gone.
    pub(crate) async fn stat(&self, path: &str) -> Result<Option<Stat>, FileError> {
        let Ok(location) = ObjectPath::parse(path) else {
            return Ok(None);
        };
        match self.store.head(&location).await {
            Ok(meta) => {
                let version = meta.e_tag.clone();
                let tag = meta.e_tag.unwrap_or_else(|| {
                    format!(
                        "{:x}-{:x}",
                        meta.last_modified.timestamp_micros(),
                        meta.size
                    )
                });
                let tag: String = tag.chars().filter(|c| *c != '"').collect();
                Ok(Some(Stat {
                    size: meta.size,
                    etag: format!("\"{tag}\""),
                    version,
                }))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(FileError::store(e)),
        }
    }

    /// The first `limit` bytes of a stored file (all of it when smaller).
    pub(crate) async fn read(&self, path: &str, limit: u64) -> Result<Bytes, FileError> {
        if limit == 0 {
            return Ok(Bytes::new());
        }
        let got = self.get_range(path, 0..limit).await?;
        got.bytes().await.map_err(FileError::store)
    }

    /// [`Files::read`], or `None` when there is no file at `path`.
    pub(crate) async fn read_if_there(
        &self,
        path: &str,
        limit: u64,
    ) -> Result<Option<Bytes>, FileError> {
        if limit == 0 {
            return Ok(self.stat(path).await?.map(|_| Bytes::new()));
        }
        let options = GetOptions {
            range: Some(GetRange::Bounded(0..limit)),
            ..GetOptions::default()
        };
        match self.store.get_opts(&object_path(path)?, options).await {
            Ok(got) => Ok(Some(got.bytes().await.map_err(FileError::store)?)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(FileError::store(e)),
        }
    }

    /// The bytes of `range` of a stored file (up to its end, when the range runs past it).
    pub(crate) async fn read_range(
        &self,
        path: &str,
        range: Range<u64>,
    ) -> Result<Bytes, FileError> {
        if range.is_empty() {
            return Ok(Bytes::new());
        }
        let got = self.get_range(path, range).await?;
        got.bytes().await.map_err(FileError::store)
    }

    /// The store's multipart uploads, when it has them.
    pub(crate) fn parts(&self) -> Option<&Parts> {
        self.parts.as_ref()
    }

    /// The store's presigned URLs, when it has them.
    pub(crate) fn presigner(&self) -> Option<&Presigner> {
        self.presigner.as_ref()
    }

    /// The local file at `path`, when the store is a local directory.
    pub(crate) fn local_path(&self, path: &str) -> Option<PathBuf> {
        self.local_root.as_ref().map(|root| root.join(path))
    }

    /// Removes what a write of `path` cut short by a kill left in a local directory (the
    /// local file store writes `{path}#{n}` and renames it once whole), so a write that
    /// starts again at the same path leaves nothing behind. Elsewhere there is nothing to do:
    /// an unfinished S3 multipart upload is no object (a bucket's lifecycle rule ends it).
    pub(crate) async fn remove_unfinished(&self, path: &str) {
        let Some(file) = self.local_path(path) else {
            return;
        };
        let (Some(dir), Some(name)) = (file.parent(), file.file_name().and_then(|n| n.to_str()))
        else {
            return;
        };
        let (dir, staged) = (dir.to_path_buf(), format!("{name}#"));
        let remove = move || {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                return;
            };
            for entry in entries.flatten() {
                if entry
                    .file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with(&staged))
                {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        };
        let _ = tokio::task::spawn_blocking(remove).await;
    }

    /// A copy of the stored file at `path` in a new temporary file, removed when the returned
    /// path is dropped.
    #[cfg(feature = "previews")]
    pub(crate) async fn copy_to_temp(&self, path: &str) -> Result<tempfile::TempPath, BoxError> {
        let Some((_, mut stream)) = self.open_whole(path).await? else {
            return Err(FileError::Missing.into());
        };
        let temp = tempfile::NamedTempFile::new()?.into_temp_path();
        let mut out = tokio::fs::File::create(&temp).await?;
        while let Some(chunk) = stream.next().await {
            out.write_all(&chunk?).await?;
        }
        out.flush().await?;
        Ok(temp)
    }

    /// Opens `range` of the file `stat` describes, to stream it in the store's own chunks;
    /// `None` when the file is gone, or was changed in place, since `stat` was read (a
    /// replacement or a delete in between): the caller reads the asset again. Once opened,
    /// the bytes sent are those of that version, whatever happens to the path meanwhile (a
    /// local file stays readable through its open handle; an object store's answer is one
    /// response).
    pub(crate) async fn open(
        &self,
        path: &str,
        range: Range<u64>,
        stat: &Stat,
    ) -> Result<Option<ByteStream>, FileError> {
        if range.is_empty() {
            return Ok(Some(Box::pin(futures_util::stream::empty())));
        }
        let options = GetOptions {
            range: Some(GetRange::Bounded(range)),
            if_match: stat.version.clone(),
            ..GetOptions::default()
        };
        match self.store.get_opts(&object_path(path)?, options).await {
            Ok(got) => Ok(Some(Box::pin(
                got.into_stream().map_err(std::io::Error::other),
            ))),
            Err(
                object_store::Error::NotFound { .. } | object_store::Error::Precondition { .. },
            ) => Ok(None),
            Err(e) => Err(FileError::store(e)),
        }
    }

    /// Opens a whole stored file: its size and its bytes as a stream, from one read, so both
    /// are of the same version; `None` when there is no file at `path`.
    pub(crate) async fn open_whole(
        &self,
        path: &str,
    ) -> Result<Option<(u64, ByteStream)>, FileError> {
        let Ok(location) = ObjectPath::parse(path) else {
            return Ok(None);
        };
        match self.store.get_opts(&location, GetOptions::default()).await {
            Ok(got) => {
                let size = got.meta.size;
                let stream: ByteStream = Box::pin(got.into_stream().map_err(std::io::Error::other));
                Ok(Some((size, stream)))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(FileError::store(e)),
        }
    }

    /// Starts reading a non-empty `range` of a stored file.
    async fn get_range(
        &self,
        path: &str,
        range: Range<u64>,
    ) -> Result<object_store::GetResult, FileError> {
        let options = GetOptions {
            range: Some(GetRange::Bounded(range)),
            ..GetOptions::default()
        };
        self.store
            .get_opts(&object_path(path)?, options)
            .await
            .map_err(FileError::store)
    }

    /// Copies the file at `from` to `to`; `false` when there is no file at `from`.
    pub(crate) async fn copy(&self, from: &str, to: &str) -> Result<bool, FileError> {
        match self
            .store
            .copy(&object_path(from)?, &object_path(to)?)
            .await
        {
            Ok(()) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(FileError::store(e)),
        }
    }

    /// Stores `bytes` at `path`, replacing what was there.
    ///
    /// # Errors
    /// 400 on `file_path` for a path the store cannot hold; 500 when the store fails.
    pub async fn put(&self, path: &str, bytes: Bytes) -> Result<(), FileError> {
        self.store
            .put(&object_path(path)?, PutPayload::from_bytes(bytes))
            .await
            .map(drop)
            .map_err(FileError::store)
    }

    /// Removes a stored file; a file already gone is no error. On a local file system the
    /// directories it leaves empty below the store's top level go too (an upload's
    /// `uploads/{uuid}/`), so a refused request leaves nothing behind.
    pub(crate) async fn delete(&self, path: &str) {
        let Ok(location) = ObjectPath::parse(path) else {
            return;
        };
        match self.store.delete(&location).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => {
                tracing::warn!(error = %e, path, "could not remove a stored file");
                return;
            }
        }
        let Some(root) = self.local_root.clone() else {
            return;
        };
        let parts: Vec<String> = location.parts().map(|p| p.as_ref().to_owned()).collect();
        let prune = move || {
            // From the deepest directory up to (not including) the top-level one; removing a
            // directory that is not empty fails and stops the walk.
            for depth in (2..parts.len()).rev() {
                let dir: PathBuf = parts[..depth].iter().fold(root.clone(), |d, p| d.join(p));
                if std::fs::remove_dir(&dir).is_err() {
                    break;
                }
            }
        };
        if let Err(e) = tokio::task::spawn_blocking(prune).await {
            tracing::warn!(error = %e, path, "could not remove the empty directories of a file");
        }
    }
}

impl Files {
    /// Removes every stored file under `prefix` (a folder such as `derived/{id}/`); failures
    /// are logged, never errors.
    pub(crate) async fn delete_prefix(&self, prefix: &str) {
        let Ok(location) = ObjectPath::parse(prefix) else {
            return;
        };
        let listed: Vec<ObjectPath> = match self
            .store
            .list(Some(&location))
            .map_ok(|meta| meta.location)
            .try_collect()
            .await
        {
            Ok(listed) => listed,
            Err(e) => {
                tracing::warn!(error = %e, prefix, "could not list stored files to remove");
                return;
            }
        };
        for path in listed {
            self.delete(path.as_ref()).await;
        }
    }
}
