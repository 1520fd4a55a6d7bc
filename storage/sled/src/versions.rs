//! Content versions of libraries (what [`assetlib_core::ViewCount::version`] reports).
//!
//! The `versions` tree holds one sequence, `n` -> the last version handed out, and each
//! library's version under `l` + library id. Every transaction that changes a library's page
//! stores the next value of the sequence as that library's version: a replace of the library,
//! and a change or delete of an asset it holds (found through the `asset_uses` index). The
//! sequence is advanced in the same serializable transaction as the change, so each such
//! commit gives the library a value it never had, in this process or any other one sharing
//! the directory; a deleted library's version goes with it, and a new library with its id
//! starts above every value handed out before.
//!
//! A transaction holds sled's concurrency lock for writing until all of it is committed, and
//! every read outside a transaction takes that lock for reading, so no read sees part of a
//! commit: a reader who reads a new version and then loads the library sees the change the
//! version stands for, and a page rendered after reading the version is at least that new.

use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::Inner;
use crate::error::{Error, TxError, abort};
use crate::tree_keys;

/// Key of the last version handed out.
pub(crate) const LAST: &[u8] = b"n";

/// Key of a library's own version.
pub(crate) fn library(id: Uuid) -> [u8; 17] {
    let mut k = [0; 17];
    k[0] = b'l';
    k[1..].copy_from_slice(id.as_bytes());
    k
}

/// Advances the sequence and returns the new value.
fn next(versions: &TransactionalTree) -> Result<u64, TxError> {
    let last = match versions.get(LAST)? {
        Some(v) => tree_keys::decode_u64("last version", &v).map_err(abort)?,
        None => 0,
    };
    let next = last.saturating_add(1);
    versions.insert(LAST, &next.to_be_bytes()[..])?;
    Ok(next)
}

/// Gives library `id` a new version.
pub(crate) fn bump_library(versions: &TransactionalTree, id: Uuid) -> Result<(), TxError> {
    let v = next(versions)?;
    versions.insert(&library(id)[..], &v.to_be_bytes()[..])?;
    Ok(())
}

/// Forgets library `id`'s version (it is deleted).
pub(crate) fn remove_library(versions: &TransactionalTree, id: Uuid) -> Result<(), TxError> {
    versions.remove(&library(id)[..])?;
    Ok(())
}

impl Inner {
    /// The current version of library `id`.
    pub(crate) fn library_version(&self, id: Uuid) -> Result<u64, Error> {
        self.get(&self.versions, &library(id))?
            .map_or(Ok(0), |v| tree_keys::decode_u64("version", &v))
    }
}
