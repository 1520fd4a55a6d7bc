//! Errors: the public [`OpenError`], and the private runtime [`Error`] that becomes core's
//! [`StoreError`].

use std::path::PathBuf;

use assetlib_core::StoreError;
use sled::transaction::{ConflictableTransactionError, TransactionError};

/// Why a database could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// Another process (or another open [`crate::SledStore`] in this one) holds the directory.
    #[error("the database at {path:?} is in use by another process")]
    Locked {
        /// The directory.
        path: PathBuf,
    },
    /// The database was written by a newer version of this crate.
    #[error(
        "the database at {path:?} has format version {found}; this version of assetlib-sled \
         reads format {supported} and older"
    )]
    NewerFormat {
        /// The directory.
        path: PathBuf,
        /// The format version stored in the database.
        found: u32,
        /// The newest format this crate reads ([`crate::FORMAT_VERSION`]).
        supported: u32,
    },
    /// The stored format version is unreadable.
    #[error("the database at {path:?} is corrupt: {detail}")]
    Corrupt {
        /// The directory.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The database has an older format, and bringing it to [`crate::FORMAT_VERSION`] failed.
    /// Nothing is lost: the upgrade runs again, from the start, on the next open.
    #[error("cannot upgrade the database at {path:?} from format version {from}: {source}")]
    Upgrade {
        /// The directory.
        path: PathBuf,
        /// The format version stored in the database.
        from: u32,
        /// What failed.
        #[source]
        source: StoreError,
    },
    /// sled failed to open or initialise the database (I/O, corruption, bad configuration).
    #[error("cannot open the database at {path:?}: {source}")]
    Sled {
        /// The directory.
        path: PathBuf,
        /// sled's error.
        #[source]
        source: sled::Error,
    },
}

/// A failure while the store runs. Each kind maps to one [`StoreError`] kind and is kept as
/// its source.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// sled failed.
    #[error("sled: {0}")]
    Sled(#[from] sled::Error),
    /// A stored value did not decode.
    #[error("cannot decode stored {what}: {source}")]
    Decode {
        what: &'static str,
        #[source]
        source: postcard::Error,
    },
    /// A record did not encode.
    #[error("cannot encode {what}: {source}")]
    Encode {
        what: &'static str,
        #[source]
        source: postcard::Error,
    },
    /// A stored value decoded but makes no sense (bad length, unknown code, count underflow).
    #[error("invalid stored {what}: {detail}")]
    Invalid { what: &'static str, detail: String },
    /// A given library slug is held by another library.
    #[error("library slug {0:?} is taken")]
    SlugTaken(String),
    /// A library write places an asset that does not exist.
    #[error("asset {0} does not exist")]
    UnknownAsset(uuid::Uuid),
    /// A library write places an asset of a workspace the library may not hold.
    #[error("asset {0} is of a workspace the library may not hold")]
    AssetOfAnotherWorkspace(uuid::Uuid),
    /// A pass is made for a library that does not exist.
    #[error("library {0} does not exist")]
    UnknownLibrary(uuid::Uuid),
    /// A record with this id exists.
    #[error("a record with id {0} exists")]
    DuplicateId(uuid::Uuid),
    /// A key with this hash exists.
    #[error("a key with this hash exists")]
    DuplicateKeyHash,
    /// An asset cannot take a change.
    #[error("asset {id}: {reason}")]
    Refused {
        id: uuid::Uuid,
        reason: assetlib_core::ChangeRefused,
    },
    /// A value does not fit the format (for example more than `u32::MAX` library items).
    #[error("{0}")]
    TooLarge(&'static str),
    /// A reader of the event log named a place the log never handed out.
    #[error("the event log never handed out this cursor")]
    UnknownCursor,
    /// The blocking task running a sled call panicked or was cancelled.
    #[error("blocking store task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

impl Error {
    pub(crate) fn invalid(what: &'static str, detail: impl Into<String>) -> Self {
        Error::Invalid {
            what,
            detail: detail.into(),
        }
    }
}

impl From<Error> for StoreError {
    fn from(e: Error) -> Self {
        match e {
            Error::SlugTaken(slug) => StoreError::SlugTaken { slug },
            Error::DuplicateId(id) => StoreError::DuplicateId { id },
            Error::UnknownAsset(id) => StoreError::UnknownAsset { id },
            Error::AssetOfAnotherWorkspace(id) => StoreError::AssetOfAnotherWorkspace { id },
            Error::UnknownLibrary(id) => StoreError::UnknownLibrary { id },
            Error::DuplicateKeyHash => StoreError::DuplicateKeyHash,
            Error::Refused { id, reason } => StoreError::Refused { id, reason },
            Error::UnknownCursor => StoreError::UnknownCursor,
            e @ (Error::Decode { .. }
            | Error::Invalid { .. }
            | Error::Sled(sled::Error::Corruption { .. })) => StoreError::corrupt(e),
            e => StoreError::backend(e),
        }
    }
}

impl From<TransactionError<Error>> for Error {
    fn from(e: TransactionError<Error>) -> Self {
        match e {
            TransactionError::Abort(e) => e,
            TransactionError::Storage(e) => Error::Sled(e),
        }
    }
}

/// The error type inside a transaction closure.
pub(crate) type TxError = ConflictableTransactionError<Error>;

/// Aborts a transaction with `e`.
pub(crate) fn abort(e: Error) -> TxError {
    ConflictableTransactionError::Abort(e)
}
