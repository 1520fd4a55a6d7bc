//! [`AssetVersions`]: the assets' content versions kept in memory, one for all and one per
//! group of assets, for stores that answer [`AssetStore::assets_version`] and
//! [`AssetStore::asset_version`] from memory.
//!
//! [`AssetStore::assets_version`]: super::AssetStore::assets_version
//! [`AssetStore::asset_version`]: super::AssetStore::asset_version

use std::sync::atomic::{AtomicU64, Ordering};

use uuid::Uuid;

/// How many groups the assets are spread over, by their ids. A write of one asset moves its
/// group's version: the kept answers of the other groups' assets stay, those of its group
/// are rendered again once.
const GROUPS: usize = 4096;

/// Content versions of the assets, moved by a store after each write it commits (and for
/// the writes it learns of from other processes), read without a lock.
///
/// Every version comes from one counter, so no value is handed out twice. The version of
/// all the assets ([`AssetVersions::all`]) is the counter; the version of one asset
/// ([`AssetVersions::of`]) is the newer of its group's and of the last move of every asset
/// ([`AssetVersions::moved_all`]), so it moves when either moves and never goes back.
///
/// ```
/// use assetlib_core::store::AssetVersions;
/// use uuid::Uuid;
///
/// let versions = AssetVersions::new();
/// let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
/// let (all, of_a, of_b) = (versions.all(), versions.of(a), versions.of(b));
///
/// versions.moved([a]);
/// assert_ne!(versions.all(), all);
/// assert_ne!(versions.of(a), of_a);
/// assert_eq!(versions.of(b), of_b, "b's group did not move");
///
/// versions.moved_all();
/// assert_ne!(versions.of(b), of_b);
/// ```
#[derive(Debug)]
pub struct AssetVersions {
    /// The last version handed out: the version of all the assets.
    counter: AtomicU64,
    /// The version of the last move of every asset.
    floor: AtomicU64,
    /// The version of each group's last move.
    groups: Box<[AtomicU64]>,
}

impl Default for AssetVersions {
    fn default() -> Self {
        Self::new()
    }
}

impl AssetVersions {
    /// Versions at 0, all of them.
    pub fn new() -> Self {
        AssetVersions {
            counter: AtomicU64::new(0),
            floor: AtomicU64::new(0),
            groups: (0..GROUPS).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn group(&self, id: Uuid) -> &AtomicU64 {
        // A v4 id's low bits are random; any id spreads well enough.
        let n = (id.as_u128() as usize) % self.groups.len();
        &self.groups[n]
    }

    fn next(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// The version of all the assets: it moves on every move.
    pub fn all(&self) -> u64 {
        self.counter.load(Ordering::Acquire)
    }

    /// The version of asset `id`: it moves when `id` (or an asset of its group) moves, and
    /// on every [`AssetVersions::moved_all`].
    pub fn of(&self, id: Uuid) -> u64 {
        let group = self.group(id).load(Ordering::Acquire);
        group.max(self.floor.load(Ordering::Acquire))
    }

    /// Moves the versions of `ids` and of all the assets; call it after a write of those
    /// assets is committed, so a reader that sees a new version reads the write.
    pub fn moved(&self, ids: impl IntoIterator<Item = Uuid>) {
        let mut ids = ids.into_iter().peekable();
        if ids.peek().is_none() {
            return;
        }
        let v = self.next();
        for id in ids {
            self.group(id).fetch_max(v, Ordering::AcqRel);
        }
    }

    /// Moves the version of every asset: for a write whose assets are not known (another
    /// process's, say), or too many to name.
    pub fn moved_all(&self) {
        let v = self.next();
        self.floor.fetch_max(v, Ordering::AcqRel);
    }
}
