//! Errors: the public [`Error`] of connecting, and the private [`Failure`] of a running store
//! that becomes core's [`StoreError`].

use assetlib_core::StoreError;
use tokio_postgres::error::SqlState;
use uuid::Uuid;

/// Why a [`crate::PgStore`] could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The schema name is not a plain SQL identifier.
    #[error(
        "invalid schema name {name:?}: use 1 to 63 lower-case ASCII letters, digits and \
         underscores, not starting with a digit or `pg_`"
    )]
    InvalidSchemaName {
        /// The name given.
        name: String,
    },
    /// The connection URL could not be parsed.
    #[error("invalid PostgreSQL URL: {0}")]
    InvalidUrl(#[source] tokio_postgres::Error),
    /// The pool could not be built.
    #[error("cannot build the connection pool: {0}")]
    Pool(#[source] deadpool_postgres::BuildError),
    /// No connection could be had from the pool.
    #[error("cannot connect to PostgreSQL: {0}")]
    Connect(#[source] deadpool_postgres::PoolError),
    /// PostgreSQL refused a statement of the migration.
    #[error("cannot migrate schema {schema:?}: {source}")]
    Migrate {
        /// The schema.
        schema: String,
        /// PostgreSQL's error.
        #[source]
        source: tokio_postgres::Error,
    },
    /// The schema was migrated by a newer version of this crate.
    #[error(
        "schema {schema:?} is at version {found}, newer than this version of \
         assetlib-postgres knows (it supports versions up to {supported}); run a newer \
         assetlib-postgres against this database"
    )]
    SchemaTooNew {
        /// The schema.
        schema: String,
        /// The version recorded in the database.
        found: i32,
        /// The newest version this crate knows ([`crate::SCHEMA_VERSION`]).
        supported: i32,
    },
}

/// A failure while the store runs. Each kind maps to one [`StoreError`] kind and is kept as
/// its source.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Failure {
    /// No connection could be had from the pool.
    #[error("no PostgreSQL connection: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    /// PostgreSQL failed or refused a statement.
    #[error("PostgreSQL: {0}")]
    Db(#[from] tokio_postgres::Error),
    /// A stored value makes no sense (unknown code, negative count, bad length).
    #[error("invalid stored {what}: {detail}")]
    Invalid { what: &'static str, detail: String },
    /// A number does not fit PostgreSQL's `bigint`.
    #[error("{what} {value} is too large to store")]
    TooLarge { what: &'static str, value: u64 },
    /// Concurrent inserts kept taking the slug this one picked.
    #[error("no free slug for {0:?} after repeated tries")]
    SlugContention(String),
    /// PostgreSQL answered something this crate did not ask for.
    #[error("unexpected answer from PostgreSQL: {0}")]
    Protocol(&'static str),
    /// The log made no event of a write whose statement appends one.
    #[error("no event for a write that appends one: {0}")]
    NoEvent(&'static str),
    /// The transaction a write shared with others ([`crate::batch`]) could not be run or
    /// committed; `unavailable` when its connection broke or none could be had.
    #[error("a shared transaction failed: {detail}")]
    Group { detail: String, unavailable: bool },
}

impl Failure {
    pub(crate) fn invalid(what: &'static str, detail: impl Into<String>) -> Self {
        Failure::Invalid {
            what,
            detail: detail.into(),
        }
    }
}

impl Failure {
    /// Whether the database cannot be reached now and may be soon: no connection could be
    /// had, the connection broke, or the server is shutting down, starting or out of
    /// connections.
    pub(crate) fn is_unavailable(&self) -> bool {
        match self {
            Failure::Pool(_) => true,
            Failure::Group { unavailable, .. } => *unavailable,
            Failure::Db(e) => match e.as_db_error() {
                Some(db) => {
                    let code = db.code().code();
                    code.starts_with("08") || code.starts_with("57P") || code == "53300"
                }
                None => {
                    e.is_closed()
                        || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
                }
            },
            _ => false,
        }
    }
}

impl From<Failure> for StoreError {
    fn from(e: Failure) -> Self {
        match e {
            e @ Failure::Invalid { .. } => StoreError::corrupt(e),
            e if e.is_unavailable() => StoreError::unavailable(e),
            e => StoreError::backend(e),
        }
    }
}

/// A given library slug is held by another library.
pub(crate) fn slug_taken(slug: &str) -> StoreError {
    StoreError::SlugTaken {
        slug: slug.to_owned(),
    }
}

/// A library write placing an asset that does not exist.
pub(crate) fn unknown_asset(id: Uuid) -> StoreError {
    StoreError::UnknownAsset { id }
}

/// A pass made for a library that does not exist.
pub(crate) fn unknown_library(id: Uuid) -> StoreError {
    StoreError::UnknownLibrary { id }
}

/// An insert of a record (an asset, a key, a pass) whose id exists.
pub(crate) fn duplicate_id(id: Uuid) -> StoreError {
    StoreError::DuplicateId { id }
}

/// An insert of a key or a pass whose hash exists.
pub(crate) fn duplicate_key_hash() -> StoreError {
    StoreError::DuplicateKeyHash
}

/// The constraint a unique violation broke, if `e` is one.
pub(crate) fn unique_violation(e: &tokio_postgres::Error) -> Option<&str> {
    let db = e.as_db_error()?;
    (db.code() == &SqlState::UNIQUE_VIOLATION).then(|| db.constraint().unwrap_or(""))
}

/// The constraint a foreign key violation broke, if `e` is one.
pub(crate) fn foreign_key_violation(e: &tokio_postgres::Error) -> Option<&str> {
    let db = e.as_db_error()?;
    (db.code() == &SqlState::FOREIGN_KEY_VIOLATION).then(|| db.constraint().unwrap_or(""))
}

/// `v` as a `bigint`.
pub(crate) fn to_i64(what: &'static str, v: u64) -> Result<i64, Failure> {
    i64::try_from(v).map_err(|_| Failure::TooLarge { what, value: v })
}

/// A stored `bigint` that must not be negative.
pub(crate) fn to_u64(what: &'static str, v: i64) -> Result<u64, Failure> {
    u64::try_from(v).map_err(|_| Failure::invalid(what, format!("{v} is negative")))
}

/// A stored `bigint` that must fit a `u32`.
pub(crate) fn to_u32(what: &'static str, v: i64) -> Result<u32, Failure> {
    u32::try_from(v).map_err(|_| Failure::invalid(what, format!("{v} is out of range")))
}
