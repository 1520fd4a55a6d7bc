//! [`AssetVersions`]: the assets' content versions kept in memory, one for all, one per
//! group of assets and one per list order, for stores that answer
//! [`AssetStore::assets_version`], [`AssetStore::asset_version`] and
//! [`AssetStore::list_version`] from memory.
//!
//! [`AssetStore::assets_version`]: super::AssetStore::assets_version
//! [`AssetStore::asset_version`]: super::AssetStore::asset_version
//! [`AssetStore::list_version`]: super::AssetStore::list_version

use std::sync::atomic::{AtomicU64, Ordering};

use uuid::Uuid;

use crate::change::AssetUpdate;
use crate::model::Asset;
use crate::query::{AssetQuery, AssetSort};

/// How many groups the assets are spread over, by their ids. A write of one asset moves its
/// group's version: the kept answers of the other groups' assets stay, those of its group
/// are rendered again once.
const GROUPS: usize = 4096;

/// The list orders a write of assets can move: which sorted lists it can reorder, fill or
/// empty. A store that learns of another process's write from a message (a notice) can
/// carry them as [`ListOrders::bits`] and move only those lists
/// ([`AssetVersions::moved_in`]).
///
/// ```
/// use assetlib_core::store::ListOrders;
///
/// let orders = ListOrders::TITLE | ListOrders::UPDATED;
/// assert!(orders.contains(ListOrders::TITLE));
/// assert!(!orders.contains(ListOrders::CREATED));
/// assert_eq!(ListOrders::from_bits(orders.bits()), Some(orders));
/// assert_eq!(ListOrders::from_bits(8), None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ListOrders(u8);

impl ListOrders {
    /// No list order: the write changed only what lists show of its assets.
    pub const NONE: ListOrders = ListOrders(0);
    /// The lists by creation time.
    pub const CREATED: ListOrders = ListOrders(1);
    /// The lists by title.
    pub const TITLE: ListOrders = ListOrders(2);
    /// The lists by last change.
    pub const UPDATED: ListOrders = ListOrders(4);
    /// Every list order: the write can change which assets a list holds.
    pub const EVERY: ListOrders = ListOrders(7);

    /// The orders as bits: creation 1, title 2, last change 4.
    pub fn bits(self) -> u8 {
        self.0
    }

    /// The orders `bits` names, `None` for a bit that names none.
    pub fn from_bits(bits: u8) -> Option<ListOrders> {
        (bits & !Self::EVERY.0 == 0).then_some(ListOrders(bits))
    }

    /// Whether every order of `other` is one of these.
    pub fn contains(self, other: ListOrders) -> bool {
        self.0 & other.0 == other.0
    }

    /// The list orders a change of one asset from `before` to `after` can move: which
    /// assets a list holds (its status, type, tags and workspace filters, or its creation
    /// time) moves every order; a new title moves the title order; a new `updated_at` the
    /// order by it. Anything else (a description, a file's facts) changes only what the
    /// lists show of the asset, which its own version covers.
    pub fn between(before: &Asset, after: &Asset) -> ListOrders {
        if before.published != after.published
            || before.asset_type != after.asset_type
            || before.tags != after.tags
            || before.workspace_id != after.workspace_id
            || before.created_at != after.created_at
        {
            return ListOrders::EVERY;
        }
        let mut moved = ListOrders::NONE;
        if before.title != after.title {
            moved = moved | ListOrders::TITLE;
        }
        if before.updated_at != after.updated_at {
            moved = moved | ListOrders::UPDATED;
        }
        moved
    }
}

impl std::ops::BitOr for ListOrders {
    type Output = ListOrders;

    fn bitor(self, other: ListOrders) -> ListOrders {
        ListOrders(self.0 | other.0)
    }
}

fn order_index(sort: AssetSort) -> usize {
    match sort {
        AssetSort::CreatedAt => 0,
        AssetSort::Title => 1,
        AssetSort::UpdatedAt => 2,
    }
}

/// Content versions of the assets, moved by a store after each write it commits (and for
/// the writes it learns of from other processes), read without a lock.
///
/// Every version comes from one counter, so no value is handed out twice. The version of
/// all the assets ([`AssetVersions::all`]) is the counter; the version of one asset
/// ([`AssetVersions::of`]) is the newer of its group's and of the last move of every asset
/// ([`AssetVersions::moved_all`]), so it moves when either moves and never goes back. The
/// version of a list ([`AssetVersions::list`]) is that of its order, moved only by the
/// writes that can change which assets a list in that order holds or where: core keeps a
/// list page under it and under each of its assets' versions, so a page outlives the
/// writes that leave it as it is.
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
    /// The version of the last move of each list order (by creation, title, last change).
    orders: [AtomicU64; 3],
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
            orders: [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)],
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

    /// The version of the lists `query` pages through: it moves on every write that can
    /// change which assets such a list holds, in what order, or how many (and on every
    /// [`AssetVersions::moved_all`]). A text search or a checksum filter reads fields no
    /// order covers: its lists are at [`AssetVersions::all`].
    pub fn list(&self, query: &AssetQuery) -> u64 {
        if query.search.is_some() || query.checksum.is_some() {
            return self.all();
        }
        let order = self.orders[order_index(query.sort)].load(Ordering::Acquire);
        order.max(self.floor.load(Ordering::Acquire))
    }

    /// Moves the versions of `ids`, of all the assets and of every list; call it after a
    /// write of those assets is committed (a create, a delete, any write whose change is
    /// not known), so a reader that sees a new version reads the write.
    pub fn moved(&self, ids: impl IntoIterator<Item = Uuid>) {
        self.moved_in(ids, ListOrders::EVERY);
    }

    /// Moves the versions of `ids`, of all the assets, and of the lists in `orders`: for a
    /// committed write of those assets whose list orders are known without the assets
    /// themselves (another process's, named in a message).
    pub fn moved_in(&self, ids: impl IntoIterator<Item = Uuid>, orders: ListOrders) {
        let mut ids = ids.into_iter().peekable();
        if ids.peek().is_none() {
            return;
        }
        let v = self.next();
        for id in ids {
            self.group(id).fetch_max(v, Ordering::AcqRel);
        }
        // Order `i` (as `order_index` numbers it) is bit `1 << i`.
        for (i, order) in self.orders.iter().enumerate() {
            if orders.bits() & (1 << i) != 0 {
                order.fetch_max(v, Ordering::AcqRel);
            }
        }
    }

    /// Moves the versions of the assets `updates` changed, of all the assets, and of the
    /// lists whose order their changes can move (a change that leaves an asset as it was
    /// moves nothing); call it after the updates are committed. Says whether any of them
    /// changed an asset.
    pub fn updated<'a>(&self, updates: impl IntoIterator<Item = &'a AssetUpdate>) -> bool {
        let mut orders = ListOrders::NONE;
        let ids: Vec<Uuid> = updates
            .into_iter()
            .filter(|u| u.before != u.after)
            .map(|u| {
                orders = orders | ListOrders::between(&u.before, &u.after);
                u.after.id
            })
            .collect();
        let changed = !ids.is_empty();
        self.moved_in(ids, orders);
        changed
    }

    /// Moves the versions of `ids` and of all the assets, and of no list: for a write that
    /// changes only what is shown of those assets (their download counts).
    pub fn counted(&self, ids: impl IntoIterator<Item = Uuid>) {
        self.moved_in(ids, ListOrders::NONE);
    }

    /// Moves the version of every asset and every list: for a write whose assets are not
    /// known (another process's, say), or too many to name.
    pub fn moved_all(&self) {
        let v = self.next();
        self.floor.fetch_max(v, Ordering::AcqRel);
    }
}
