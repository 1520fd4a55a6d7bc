//! Errors: [`ApiError`], the one place where failures become HTTP answers; [`StoreError`],
//! the normalised failures of a [`crate::Store`]; and [`FileError`], those of the file store
//! ([`crate::Files`]). Each converts into [`ApiError`] here, in one table.

mod unreachable;
use crate::change::LibraryUse;
use crate::model::Scope;
use crate::reply::Reply;
use unreachable::store_unreachable;

/// A boxed error kept as the `source` of an internal failure.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Every failure a request can end in.
///
/// [`ApiError::status`] and [`ApiError::error_text`] are the error table of the contract, on
/// one screen:
///
/// | variant | status | `error` | `field` |
/// |---|---|---|---|
/// | `Validation` | 400 | `Validation error` | yes |
/// | `Unauthorized` | 401 | `Unauthorized` (+ `WWW-Authenticate: Bearer`) | no |
/// | `Forbidden` | 403 | `Insufficient permissions` | no |
/// | `NotPermitted` | 403 | `Insufficient permissions` | no |
/// | `OtherWorkspace` | 403 | `Insufficient permissions` | no |
/// | `BulkDownloadDisabled` | 403 | `Bulk download disabled` | no |
/// | `PassLimitReached` | 403 | `Pass download limit reached` | no |
/// | `NotFound` | 404 | `Not found` | no |
/// | `AssetNotFound` | 404 | `Not found` (`Asset not found`) | no |
/// | `LibraryNotFound` | 404 | `Not found` (`Library not found`) | no |
/// | `PassNotFound` | 404 | `Not found` (`Pass not found`) | no |
/// | `MethodNotAllowed` | 405 | `Method not allowed` (+ `Allow`) | no |
/// | `Conflict` | 409 | `Conflict` (+ `libraries`) | no |
/// | `OffsetMismatch` | 409 | `Conflict` (+ `Upload-Offset`) | no |
/// | `UploadConflict` | 409 | `Conflict` | no |
/// | `UploadGone` | 410 | `Gone` | no |
/// | `UnsupportedVersion` | 412 | `Precondition failed` (+ `Tus-Version`, added by the tus operations) | no |
/// | `Locked` | 423 | `Locked` (+ `Retry-After`) | no |
/// | `ChecksumMismatch` | 460 | `Checksum mismatch` | no |
/// | `RequestTimeout` | 408 | `Request timeout` | no |
/// | `PayloadTooLarge` | 413 | `Payload too large` | no |
/// | `UploadTooLarge` | 413 | `Payload too large` (the message names the limit) | no |
/// | `TooManyRequests` | 429 | `Too many requests` (+ `Retry-After`) | no |
/// | `UnsupportedMediaType` | 415 | `Unsupported media type` | no |
/// | `Unavailable` | 503 | `Service unavailable` (+ `Retry-After`): a store or file store that cannot be reached | no |
/// | `Internal` | 500 | `Internal server error` | no |
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// A bad query parameter, body, JSON document or id.
    #[error("{message}")]
    Validation {
        /// The offending field or path, e.g. `title` or `sections[0].assets[2].asset_id`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// No usable API key.
    #[error("{0}")]
    Unauthorized(&'static str),
    /// The key lacks the scope the operation needs.
    #[error("API key lacks required scope: {0}")]
    Forbidden(Scope),
    /// What the credential cannot do whatever its scopes: a paid file for a key without
    /// `read:paid`, another library or an asset outside its subset for a library pass, an
    /// operation a pass does not open. The text says which.
    #[error("{0}")]
    NotPermitted(&'static str),
    /// A workspace key naming a workspace other than its own: in a body (`workspace_id` of
    /// a create or a library) or a list's filter.
    #[error("This key reads and writes its own workspace only, not workspace {workspace}")]
    OtherWorkspace {
        /// The workspace named.
        workspace: String,
    },
    /// A bulk download of a library that does not allow it.
    #[error("This library does not allow bulk download")]
    BulkDownloadDisabled,
    /// A library pass that has made every download it allows.
    #[error("This library pass has made every download it allows")]
    PassLimitReached,
    /// Unknown route, or a file or part that is not there; the text says what.
    #[error("{0}")]
    NotFound(&'static str),
    /// No asset with that id, or one the caller may not see (a draft without
    /// `write:assets`).
    #[error("Asset not found")]
    AssetNotFound,
    /// No library with that id or slug, or an unpublished one.
    #[error("Library not found")]
    LibraryNotFound,
    /// No pass with that id in that library.
    #[error("Pass not found")]
    PassNotFound,
    /// Known path, wrong method.
    #[error("Method {method} is not allowed here; allowed: {allow}")]
    MethodNotAllowed {
        /// The method the request used.
        method: String,
        /// The methods the path accepts, as for the `Allow` header.
        allow: &'static str,
    },
    /// The change would break something that exists: an asset that libraries hold.
    #[error("{message}")]
    Conflict {
        /// What is in the way.
        message: String,
        /// The libraries that hold the asset, sent as `libraries: [{id, title, slug}]`.
        libraries: Vec<LibraryUse>,
    },
    /// An upload with `on_duplicate=reject` brought the bytes of an asset that exists: 409
    /// with the asset's id (`asset_id`); nothing was stored.
    #[error("An asset with the same file exists already ({asset_id}); nothing was stored")]
    Duplicate {
        /// The asset whose file has the same SHA-256.
        asset_id: uuid::Uuid,
    },
    /// An asset of an atomic bulk change that another asset of it stopped: not changed.
    #[error("Not changed: another asset of this atomic change could not take it")]
    NotApplied,
    /// A resumable upload's `PATCH` at another offset than the upload's.
    #[error("Upload-Offset is {sent}, but the upload has {offset} bytes; send from {offset}")]
    OffsetMismatch {
        /// The offset sent.
        sent: u64,
        /// The upload's offset.
        offset: u64,
    },
    /// A direct upload whose file is not there yet, or not of the size declared.
    #[error("{0}")]
    UploadConflict(String),
    /// A resumable upload that expired unfinished (and was or will be removed).
    #[error("This upload expired before it was finished; start a new one")]
    UploadGone,
    /// A resumable-upload request without `Tus-Resumable: 1.0.0`.
    #[error("Tus-Resumable must be 1.0.0 (the tus version this server speaks)")]
    UnsupportedVersion,
    /// Another request is writing to the same resumable upload.
    #[error("Another request is writing to this upload; retry after {retry_after} seconds")]
    Locked {
        /// Whole seconds to wait (at least 1).
        retry_after: u64,
    },
    /// A `PATCH` whose body is not what its `Upload-Checksum` says: none of it is kept.
    #[error("The body's SHA-256 is not the one Upload-Checksum names; none of it was kept")]
    ChecksumMismatch,
    /// The body stopped arriving: no part of it came for longer than
    /// [`crate::Config::body_timeout`].
    #[error("No part of the request body arrived for {seconds} seconds")]
    RequestTimeout {
        /// The longest gap allowed, in seconds.
        seconds: u64,
    },
    /// The body is larger than the configured limit.
    #[error("Request body exceeds the limit of {limit} bytes")]
    PayloadTooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// A file, or the size an upload declares, larger than the limit that applies to it: the
    /// message names `subject`, the limit's bytes and which limit it is ([`UploadLimit`]),
    /// e.g. `Upload-Length exceeds the limit of 10737418240 bytes (max_resumable_upload: ...)`.
    #[error("{subject} exceeds the limit of {limit} bytes ({of})")]
    UploadTooLarge {
        /// What is too large: `Request body` (a multipart upload), `Upload-Length` (a
        /// resumable upload), `size` (a direct upload) or `The file put` (a direct upload's
        /// object).
        subject: &'static str,
        /// The limit in bytes.
        limit: u64,
        /// Which limit it is.
        of: UploadLimit,
    },
    /// The key's rate limit is spent ([`crate::Config::rate_limit`]).
    #[error("Rate limit exceeded; retry after {retry_after} seconds")]
    TooManyRequests {
        /// Whole seconds until the key may send again (at least 1).
        retry_after: u64,
    },
    /// A body of a media type the route does not take.
    #[error("Content-Type must be {expected}")]
    UnsupportedMediaType {
        /// The media type the route takes (`application/json`, `multipart/form-data`).
        expected: &'static str,
    },
    /// The work cannot be done now but may succeed when retried: a file that kept changing
    /// while it was opened, or a store that cannot be reached ([`StoreError::Unavailable`]).
    #[error("{message}; retry after {retry_after} seconds")]
    Unavailable {
        /// What could not be done.
        message: &'static str,
        /// Whole seconds to wait before retrying (at least 1).
        retry_after: u64,
    },
    /// Anything else. The source is logged, never sent.
    #[error("internal error: {0}")]
    Internal(#[source] BoxError),
}

impl ApiError {
    /// A validation failure of `field`.
    pub fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Validation {
            field: field.into(),
            message: message.into(),
        }
    }

    /// An internal failure with its cause.
    pub fn internal(source: impl Into<BoxError>) -> Self {
        ApiError::Internal(source.into())
    }

    /// The HTTP status code.
    pub const fn status(&self) -> u16 {
        match self {
            ApiError::Validation { .. } => 400,
            ApiError::Unauthorized(_) => 401,
            ApiError::Forbidden(_)
            | ApiError::NotPermitted(_)
            | ApiError::OtherWorkspace { .. }
            | ApiError::BulkDownloadDisabled
            | ApiError::PassLimitReached => 403,
            ApiError::NotFound(_)
            | ApiError::AssetNotFound
            | ApiError::LibraryNotFound
            | ApiError::PassNotFound => 404,
            ApiError::MethodNotAllowed { .. } => 405,
            ApiError::Conflict { .. }
            | ApiError::Duplicate { .. }
            | ApiError::OffsetMismatch { .. }
            | ApiError::UploadConflict(_) => 409,
            ApiError::UploadGone => 410,
            ApiError::NotApplied => 424,
            ApiError::UnsupportedVersion => 412,
            ApiError::Locked { .. } => 423,
            ApiError::ChecksumMismatch => 460,
            ApiError::RequestTimeout { .. } => 408,
            ApiError::PayloadTooLarge { .. } | ApiError::UploadTooLarge { .. } => 413,
            ApiError::UnsupportedMediaType { .. } => 415,
            ApiError::TooManyRequests { .. } => 429,
            ApiError::Unavailable { .. } => 503,
            ApiError::Internal(_) => 500,
        }
    }

    /// The `error` text of the body.
    pub const fn error_text(&self) -> &'static str {
        match self {
            ApiError::Validation { .. } => "Validation error",
            ApiError::Unauthorized(_) => "Unauthorized",
            ApiError::Forbidden(_)
            | ApiError::NotPermitted(_)
            | ApiError::OtherWorkspace { .. } => "Insufficient permissions",
            ApiError::BulkDownloadDisabled => "Bulk download disabled",
            ApiError::PassLimitReached => "Pass download limit reached",
            ApiError::NotFound(_)
            | ApiError::AssetNotFound
            | ApiError::LibraryNotFound
            | ApiError::PassNotFound => "Not found",
            ApiError::MethodNotAllowed { .. } => "Method not allowed",
            ApiError::Conflict { .. }
            | ApiError::Duplicate { .. }
            | ApiError::OffsetMismatch { .. }
            | ApiError::UploadConflict(_) => "Conflict",
            ApiError::UploadGone => "Gone",
            ApiError::NotApplied => "Not applied",
            ApiError::UnsupportedVersion => "Precondition failed",
            ApiError::Locked { .. } => "Locked",
            ApiError::ChecksumMismatch => "Checksum mismatch",
            ApiError::RequestTimeout { .. } => "Request timeout",
            ApiError::PayloadTooLarge { .. } | ApiError::UploadTooLarge { .. } => {
                "Payload too large"
            }
            ApiError::UnsupportedMediaType { .. } => "Unsupported media type",
            ApiError::TooManyRequests { .. } => "Too many requests",
            ApiError::Unavailable { .. } => "Service unavailable",
            ApiError::Internal(_) => "Internal server error",
        }
    }

    /// The `message` text of the body.
    pub fn message(&self) -> String {
        match self {
            ApiError::Internal(_) => "The server could not complete the request".to_owned(),
            other => other.to_string(),
        }
    }

    /// The JSON body a client reads for this error: `error`, `message`, and `field`,
    /// `libraries` or `asset_id` where the kind has one.
    pub fn body(&self) -> serde_json::Value {
        let mut body = serde_json::Map::with_capacity(3);
        body.insert("error".into(), self.error_text().into());
        body.insert("message".into(), self.message().into());
        match self {
            ApiError::Validation { field, .. } => {
                body.insert("field".into(), field.as_str().into());
            }
            ApiError::Conflict { libraries, .. } => {
                let list = libraries
                    .iter()
                    .map(|l| serde_json::json!({"id": l.id, "title": l.title, "slug": l.slug}))
                    .collect();
                body.insert("libraries".into(), serde_json::Value::Array(list));
            }
            ApiError::Duplicate { asset_id } => {
                body.insert("asset_id".into(), asset_id.to_string().into());
            }
            _ => {}
        }
        serde_json::Value::Object(body)
    }

    /// The whole HTTP answer: status, JSON body and the headers the contract asks for.
    /// An internal error is logged here, with its full cause.
    pub fn into_reply(self) -> Reply {
        if let ApiError::Internal(source) = &self {
            tracing::error!(error = %source, source = ?source, "internal error");
        }
        let body = self.body();
        let mut reply = Reply::json_value(self.status(), &body);
        match &self {
            ApiError::Unauthorized(_) => reply.headers.push(("www-authenticate", "Bearer".into())),
            ApiError::MethodNotAllowed { allow, .. } => {
                reply.headers.push(("allow", (*allow).to_owned()))
            }
            ApiError::TooManyRequests { retry_after }
            | ApiError::Unavailable { retry_after, .. }
            | ApiError::Locked { retry_after } => {
                reply.headers.push(("retry-after", retry_after.to_string()))
            }
            ApiError::OffsetMismatch { offset, .. } => {
                reply.headers.push(("upload-offset", offset.to_string()))
            }
            _ => {}
        }
        reply
    }
}

/// The limit an upload went past ([`ApiError::UploadTooLarge`]): its setting's name and what
/// it bounds, as the message says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum UploadLimit {
    /// [`crate::Config::max_upload`]: the largest file of one request
    /// (`POST /api/v1/assets/upload`, `PUT /api/v1/assets/{id}/file`).
    MaxUpload,
    /// [`crate::Config::max_resumable_upload`]: the largest resumable (tus) or direct upload,
    /// of any asset type.
    MaxResumableUpload,
    /// The most a file store with multipart uploads keeps in one (10,000 parts of 5 MiB),
    /// when it is less than [`crate::Config::max_resumable_upload`].
    StoreParts,
    /// The most one S3 `PUT` takes (5 GiB), when it is less than
    /// [`crate::Config::max_resumable_upload`].
    DirectPut,
    /// What a resumable upload still lacks: `Upload-Length` minus `Upload-Offset`.
    Remaining,
}

impl std::fmt::Display for UploadLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UploadLimit::MaxUpload => {
                "max_upload: the largest file one request uploads; larger files go through \
                 /api/v1/uploads"
            }
            UploadLimit::MaxResumableUpload => {
                "max_resumable_upload: the largest resumable or direct upload, of any asset type"
            }
            UploadLimit::StoreParts => {
                "the largest upload the file store keeps: 10,000 parts of 5 MiB"
            }
            UploadLimit::DirectPut => "the largest direct upload: one S3 PUT of at most 5 GiB",
            UploadLimit::Remaining => {
                "what this upload lacks: its Upload-Length minus its Upload-Offset"
            }
        })
    }
}

/// Why a file operation failed. Core's error table ([`ApiError`]'s `From<FileError>`) turns
/// each kind into its answer: a path a client named that is not there or not allowed is 400 on
/// `file_path`, a store that cannot be reached or keeps failing is 503, any other failure of
/// the store is 500.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// No file at the path.
    #[error("file_path does not name a file in the file store")]
    Missing,
    /// Not a path the store can hold.
    #[error("file_path is not a valid path in the file store")]
    InvalidPath,
    /// A local path whose links lead outside the store's root.
    #[error("file_path leads outside the file store")]
    Outside,
    /// The store could not be reached, or kept answering with server errors until its client
    /// gave up retrying: it may work again soon.
    #[error("file store unavailable: {0}")]
    Unavailable(#[source] BoxError),
    /// The store failed.
    #[error("file store: {0}")]
    Store(#[source] BoxError),
}

impl FileError {
    /// A failure of the store itself: [`FileError::Unavailable`] when it is one of reaching
    /// the store, else [`FileError::Store`].
    pub(crate) fn store(e: impl Into<BoxError>) -> Self {
        let e = e.into();
        if store_unreachable(&*e) {
            FileError::Unavailable(e)
        } else {
            FileError::Store(e)
        }
    }

    /// What a client reads when the store itself failed: [`FileError::store`]'s answer.
    pub(crate) fn answer(e: impl Into<BoxError>) -> ApiError {
        FileError::store(e).into()
    }
}

/// What a client reads for each [`FileError`]: a path a client named that is not
/// there, not valid or leads outside the store is 400 on `file_path`; a store that cannot be
/// reached is 503 with `Retry-After`; any other failure of the store is internal.
impl From<FileError> for ApiError {
    fn from(e: FileError) -> Self {
        match e {
            FileError::Unavailable(source) => {
                tracing::warn!(error = %source, "file store unavailable");
                ApiError::Unavailable {
                    message: "the file store is unavailable",
                    retry_after: 1,
                }
            }
            FileError::Store(source) => ApiError::Internal(source),
            missing @ (FileError::Missing | FileError::InvalidPath | FileError::Outside) => {
                ApiError::validation("file_path", missing.to_string())
            }
        }
    }
}

/// What a client reads when an asset cannot take a change.
impl From<crate::change::ChangeRefused> for ApiError {
    fn from(e: crate::change::ChangeRefused) -> Self {
        match e {
            crate::change::ChangeRefused::TooManyTags => ApiError::validation(
                "tags",
                format!("an asset has at most {} tags", crate::model::MAX_TAGS),
            ),
            crate::change::ChangeRefused::HeldInAnotherWorkspace => {
                ApiError::held_in_another_workspace(Vec::new())
            }
        }
    }
}

impl ApiError {
    /// The 409 of a move of an asset to a workspace where `libraries` that hold it may not
    /// hold it ([`crate::may_hold`]).
    pub(crate) fn held_in_another_workspace(libraries: Vec<LibraryUse>) -> Self {
        ApiError::Conflict {
            message: "The asset is in libraries of another workspace; remove it from them first"
                .to_owned(),
            libraries,
        }
    }
}

/// What a client reads for each [`StoreError`]: the one place where a store's failure
/// becomes contract text. A clash of ids or key hashes the service itself chose is no fault of
/// the client's: it is an internal error.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::SlugTaken { slug } => {
                ApiError::validation("slug", format!("slug {slug:?} is taken by another library"))
            }
            StoreError::UnknownAsset { id } => {
                ApiError::validation("asset_id", format!("asset {id} does not exist"))
            }
            StoreError::AssetOfAnotherWorkspace { id } => ApiError::validation(
                "asset_id",
                format!("asset {id} is of a workspace the library may not hold"),
            ),
            StoreError::UnknownLibrary { .. } => ApiError::LibraryNotFound,
            StoreError::UnknownCursor => ApiError::validation(
                "after",
                "after must be the next of a page of events: this one is past the end of the log",
            ),
            StoreError::Refused { reason, .. } => ApiError::from(reason),
            StoreError::Unavailable(source) => {
                tracing::warn!(error = %source, "store unavailable");
                ApiError::Unavailable {
                    message: "the store is unavailable",
                    retry_after: 1,
                }
            }
            other => ApiError::Internal(Box::new(other)),
        }
    }
}

/// A failure of a [`crate::Store`], in kinds every backend maps its own errors into. The kinds
/// carry data, never text for a client: core alone decides what a client reads
/// (`impl From<StoreError> for ApiError`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A library slug given explicitly is held by another library.
    #[error("library slug {slug:?} is taken")]
    SlugTaken {
        /// The slug asked for.
        slug: String,
    },
    /// A record with this id exists already (an asset or a key).
    #[error("a record with id {id} exists")]
    DuplicateId {
        /// The id.
        id: uuid::Uuid,
    },
    /// A key with the same hash exists already.
    #[error("a key with this hash exists")]
    DuplicateKeyHash,
    /// A pass is made for a library that does not exist (any more).
    #[error("library {id} does not exist")]
    UnknownLibrary {
        /// The library's id.
        id: uuid::Uuid,
    },
    /// A library write places an asset of a workspace the library may not hold
    /// ([`crate::may_hold`]): one moved there after the write was checked.
    #[error("asset {id} is of a workspace the library may not hold")]
    AssetOfAnotherWorkspace {
        /// The asset's id.
        id: uuid::Uuid,
    },
    /// A library write places an asset that does not exist (any more).
    #[error("asset {id} does not exist")]
    UnknownAsset {
        /// The asset's id.
        id: uuid::Uuid,
    },
    /// A reader of the event log asked for the events after a place the log never handed out:
    /// past its end, or not of its form ([`crate::EventStore::list_events`]).
    #[error("the event log never handed out this cursor")]
    UnknownCursor,
    /// The asset cannot take the change ([`crate::AssetChange::apply`]); nothing changed.
    #[error("asset {id}: {reason}")]
    Refused {
        /// The asset's id.
        id: uuid::Uuid,
        /// Why.
        reason: crate::change::ChangeRefused,
    },
    /// Stored data could not be decoded.
    #[error("stored data is corrupt: {0}")]
    Corrupt(#[source] BoxError),
    /// The backend failed (I/O, connection, lock).
    #[error("store backend failed: {0}")]
    Backend(#[source] BoxError),
    /// The backend cannot be reached now (its server is down or restarting, no connection
    /// could be had) and may be again soon: 503 with `Retry-After`, not 500.
    #[error("store unavailable: {0}")]
    Unavailable(#[source] BoxError),
}

impl StoreError {
    /// A backend failure with its cause.
    pub fn backend(source: impl Into<BoxError>) -> Self {
        StoreError::Backend(source.into())
    }

    /// A backend that cannot be reached now, with the cause.
    pub fn unavailable(source: impl Into<BoxError>) -> Self {
        StoreError::Unavailable(source.into())
    }

    /// A decoding failure with its cause.
    pub fn corrupt(source: impl Into<BoxError>) -> Self {
        StoreError::Corrupt(source.into())
    }
}

#[cfg(test)]
#[path = "error_test.rs"]
mod tests;
