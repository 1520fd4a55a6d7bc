//! What resumable and direct uploads need of an object store beyond reads and writes:
//! [`Parts`], multipart uploads that one process starts and another continues, and
//! [`Presigner`], URLs that let a client write one object itself.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path as ObjectPath;
#[cfg(feature = "s3")]
use object_store::signer::Signer;
use object_store::{MultipartId, PutPayload};

use super::object_path;
use crate::error::FileError;

/// The paths of the store as the underlying service names them: under `prefix` when the
/// store is a prefix of a bucket.
#[derive(Clone, Default)]
struct Prefix(Option<ObjectPath>);

impl Prefix {
    fn of(&self, path: &str) -> Result<ObjectPath, FileError> {
        let path = object_path(path)?;
        Ok(match &self.0 {
            Some(prefix) => prefix.parts().chain(path.parts()).collect(),
            None => path,
        })
    }
}

/// Multipart uploads by their id: created, fed a part at a time, completed or aborted, each
/// step by whichever process holds the id (S3, GCS, Azure and memory stores have them).
#[derive(Clone)]
pub(crate) struct Parts {
    store: Arc<dyn MultipartStore>,
    prefix: Prefix,
}

impl Parts {
    /// The multipart uploads of `store`, whose paths are under `prefix` (if any).
    pub(crate) fn new(store: Arc<dyn MultipartStore>, prefix: Option<ObjectPath>) -> Self {
        Parts {
            store,
            prefix: Prefix(prefix),
        }
    }

    /// Starts a multipart upload to `path`; answers its id.
    pub(crate) async fn create(&self, path: &str) -> Result<String, FileError> {
        let location = self.prefix.of(path)?;
        let id: MultipartId = self
            .store
            .create_multipart(&location)
            .await
            .map_err(FileError::store)?;
        Ok(id)
    }

    /// Uploads part `index` (from 0) of upload `id` to `path`; answers the part's content id.
    /// A part sent again under the same index replaces the first.
    pub(crate) async fn put_part(
        &self,
        path: &str,
        id: &str,
        index: usize,
        bytes: Bytes,
    ) -> Result<String, FileError> {
        let location = self.prefix.of(path)?;
        let part = self
            .store
            .put_part(
                &location,
                &id.to_owned(),
                index,
                PutPayload::from_bytes(bytes),
            )
            .await
            .map_err(FileError::store)?;
        Ok(part.content_id)
    }

    /// Completes upload `id` to `path` from `parts` (content ids, in order): the object
    /// appears whole.
    pub(crate) async fn complete(
        &self,
        path: &str,
        id: &str,
        parts: &[String],
    ) -> Result<(), FileError> {
        let location = self.prefix.of(path)?;
        let parts = parts
            .iter()
            .map(|content_id| PartId {
                content_id: content_id.clone(),
            })
            .collect();
        self.store
            .complete_multipart(&location, &id.to_owned(), parts)
            .await
            .map(drop)
            .map_err(FileError::store)
    }

    /// Aborts upload `id` to `path`: the service forgets its parts.
    pub(crate) async fn abort(&self, path: &str, id: &str) -> Result<(), FileError> {
        let location = self.prefix.of(path)?;
        match self.store.abort_multipart(&location, &id.to_owned()).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(FileError::store(e)),
        }
    }
}

/// Presigned URLs of a store (S3 and S3-compatible services): a client sends one request
/// to the service itself, with no key of the API's.
#[cfg(feature = "s3")]
#[derive(Clone)]
pub(crate) struct Presigner {
    signer: Arc<dyn Signer>,
    prefix: Prefix,
}

#[cfg(feature = "s3")]
impl Presigner {
    /// The URLs of `signer`, whose paths are under `prefix` (if any).
    pub(crate) fn new(signer: Arc<dyn Signer>, prefix: Option<ObjectPath>) -> Self {
        Presigner {
            signer,
            prefix: Prefix(prefix),
        }
    }

    /// A URL that lets its holder `PUT` one object at `path` for `expires_in`.
    pub(crate) async fn put_url(
        &self,
        path: &str,
        expires_in: Duration,
    ) -> Result<String, FileError> {
        let location = self.prefix.of(path)?;
        self.signer
            .signed_url(reqwest::Method::PUT, &location, expires_in)
            .await
            .map(String::from)
            .map_err(FileError::store)
    }
}

/// Without the `s3` feature no store has presigned URLs.
#[cfg(not(feature = "s3"))]
#[derive(Clone)]
pub(crate) enum Presigner {}

#[cfg(not(feature = "s3"))]
impl Presigner {
    /// Never called: there is no presigner.
    pub(crate) async fn put_url(
        &self,
        _path: &str,
        _expires_in: Duration,
    ) -> Result<String, FileError> {
        match *self {}
    }
}
