//! What the store keeps decoded in memory of the records it read lately, each under the
//! version it was read at: a read at the same version is answered from memory, one at a
//! newer version reads the record again. A sled database is open in one process at a time,
//! and every write moves the versions these are kept under after it commits, so nothing kept
//! outlives the record it was read from.

use assetlib_core::Asset;
use assetlib_core::store::VersionedCache;
use uuid::Uuid;

/// Most assets kept (each a KB or two).
const ASSETS: usize = 16_384;
/// Most libraries kept (each a few dozen bytes).
const LIBRARIES: usize = 16_384;

/// The records kept.
pub(crate) struct Kept {
    /// Assets with their download counts, under their asset versions
    /// ([`crate::Inner::load_asset`]).
    pub(crate) assets: VersionedCache<Uuid, Asset>,
    /// What a view of a library checks of it, under the library's content version
    /// ([`crate::Inner::record_view`]).
    pub(crate) libraries: VersionedCache<Uuid, Shown>,
}

impl Default for Kept {
    fn default() -> Self {
        Kept {
            assets: VersionedCache::new(ASSETS),
            libraries: VersionedCache::new(LIBRARIES),
        }
    }
}

/// What a view of a library checks of it: whether it is published, and in which workspace.
/// Both change only with the library's content version (a `PUT`).
#[derive(Debug)]
pub(crate) struct Shown {
    pub(crate) published: bool,
    pub(crate) workspace_id: Option<String>,
}
