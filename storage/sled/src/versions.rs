//! Content versions of libraries (what [`assetlib_core::ViewCount::version`] reports).
//!
//! The `versions` tree holds one sequence, `n` -> the last version handed out, advanced
//! inside each transaction that changes a library's page: a library replace stores the next
//! value under `l` + library id, and an asset update stores it under `a` (the asset epoch).
//! A library's version is the larger of its own and the asset epoch. Because the sequence
//! is advanced in the same serializable transaction as the change, each such commit makes
//! that larger value grow, so a version is never seen again after a change, in this process
//! or any other one sharing the directory. An asset update moves every library's version;
//! asset updates are rare next to views, and it needs no index from assets to libraries.

use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::Inner;
use crate::error::{Error, TxError, abort};
use crate::tree_keys;

const LAST: &[u8] = b"n";
const ASSET_EPOCH: &[u8] = b"a";

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

/// Gives every library a new version: an asset changed.
pub(crate) fn bump_assets(versions: &TransactionalTree) -> Result<(), TxError> {
    let v = next(versions)?;
    versions.insert(ASSET_EPOCH, &v.to_be_bytes()[..])?;
    Ok(())
}

impl Inner {
    /// The current version of library `id`.
    pub(crate) fn library_version(&self, id: Uuid) -> Result<u64, Error> {
        let read = |key: &[u8]| -> Result<u64, Error> {
            self.get(&self.versions, key)?
                .map_or(Ok(0), |v| tree_keys::decode_u64("version", &v))
        };
        Ok(read(&library(id))?.max(read(ASSET_EPOCH)?))
    }
}
