//! Rendered answers kept under a store content version ([`VersionedCache`]), and the asset
//! answers ([`AssetPages`]): list pages by their query under
//! [`crate::AssetStore::assets_version`] (and, where the store keeps them, under their list's
//! [`crate::AssetStore::list_version`] and their assets' versions: [`KeptList`]), single
//! assets by id under their own [`crate::AssetStore::asset_version`].
//!
//! A reader takes the version first, then looks the answer up under it; on a miss it reads
//! the store, renders, and keeps the answer under the version it took. Stores promise that
//! what they return after handing out a version is at least as new as it, and that every write
//! that can change the answer moves the version, so an answer kept under the current version
//! is the answer a fresh render would give: a write shows on the very next read, in this
//! process and in every other one sharing the store.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use uuid::Uuid;

use crate::model::Asset;
use crate::query::AssetQuery;
use crate::reply::Reply;

/// Values by key, each with the version it was made at. When full it starts over (simple, and
/// cheap next to a render).
///
/// Core keeps its rendered pages in these; a store may keep its decoded records in one under
/// versions it moves after each write commits ([`crate::store::AssetVersions`]), as
/// `SledStore` does with its assets. A reader takes the version first, then looks up the key
/// at exactly that version; on a miss it reads, and keeps what it read under the version it
/// took.
///
/// ```
/// use std::sync::Arc;
/// use assetlib_core::store::VersionedCache;
///
/// let cache = VersionedCache::new(1_000);
/// cache.put("a", 7, Arc::new("first"));
/// assert_eq!(cache.get(&"a", 7).as_deref(), Some(&"first"));
/// assert_eq!(cache.get(&"a", 8), None, "kept at an older version");
/// ```
#[derive(Debug)]
pub struct VersionedCache<K, V> {
    entries: Mutex<Entries<K, V>>,
    max: usize,
    /// The most weight kept, and how a value is weighed ([`VersionedCache::weighed`]).
    budget: Option<Budget<V>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// The most weight a [`VersionedCache`] keeps, and how a value is weighed.
#[derive(Debug)]
struct Budget<V> {
    most: usize,
    weigh: fn(&V) -> usize,
}

/// The values of a [`VersionedCache`] and their weight.
#[derive(Debug)]
struct Entries<K, V> {
    map: HashMap<K, (u64, Arc<V>)>,
    weight: usize,
}

impl<K: Hash + Eq, V> VersionedCache<K, V> {
    /// A cache of at most `max` values.
    pub fn new(max: usize) -> Self {
        VersionedCache {
            entries: Mutex::new(Entries {
                map: HashMap::new(),
                weight: 0,
            }),
            max,
            budget: None,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// A cache of at most `max` values weighing `budget` in all, each weighed by `weigh`
    /// (its bytes, say). A value heavier than the whole budget is not kept.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use assetlib_core::store::VersionedCache;
    ///
    /// let cache = VersionedCache::weighed(100, 10, |s: &String| s.len());
    /// cache.put(1, 1, Arc::new("123456".to_owned()));
    /// cache.put(2, 1, Arc::new("12345".to_owned()));
    /// assert_eq!(cache.get(&1, 1), None, "over the budget, the cache started over");
    /// assert!(cache.get(&2, 1).is_some());
    /// ```
    pub fn weighed(max: usize, budget: usize, weigh: fn(&V) -> usize) -> Self {
        VersionedCache {
            budget: Some(Budget {
                most: budget,
                weigh,
            }),
            ..Self::new(max)
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Entries<K, V>> {
        // Every change is a plain insert, remove or clear; none can be half done.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn weigh(&self, value: &V) -> usize {
        self.budget.as_ref().map_or(0, |b| (b.weigh)(value))
    }

    /// The value kept for `key` at exactly `version`.
    pub fn get<Q>(&self, key: &Q, version: u64) -> Option<Arc<V>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let found = self
            .entry(key)
            .filter(|(v, _)| *v == version)
            .map(|(_, value)| value);
        self.count(found.is_some());
        found
    }

    /// The value kept for `key` with the version it was made at, whatever that is; the
    /// caller decides whether it answers, and counts the lookup ([`VersionedCache::count`]).
    pub fn entry<Q>(&self, key: &Q) -> Option<(u64, Arc<V>)>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.lock()
            .map
            .get(key)
            .map(|(v, value)| (*v, Arc::clone(value)))
    }

    /// Counts a lookup that found its value (`hit`) or did not.
    pub fn count(&self, hit: bool) {
        let counter = if hit { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// How many lookups found their value and how many did not, since the cache was made.
    pub fn lookups(&self) -> Lookups {
        Lookups {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }

    /// Keeps `value` for `key`, made at `version`.
    pub fn put(&self, key: K, version: u64, value: Arc<V>) {
        let weight = self.weigh(&value);
        let budget = self.budget.as_ref().map_or(usize::MAX, |b| b.most);
        if weight > budget {
            return;
        }
        let mut entries = self.lock();
        if let Some((_, old)) = entries.map.remove(&key) {
            entries.weight -= self.weigh(&old);
        } else if entries.map.len() >= self.max {
            entries.clear();
        }
        if entries.weight + weight > budget {
            entries.clear();
        }
        entries.weight += weight;
        entries.map.insert(key, (version, value));
    }

    /// Drops the value of `key`.
    pub fn forget(&self, key: &K) {
        let mut entries = self.lock();
        if let Some((_, old)) = entries.map.remove(key) {
            entries.weight -= self.weigh(&old);
        }
    }

    /// Drops every value.
    pub fn clear(&self) {
        self.lock().clear();
    }
}

impl<K, V> Entries<K, V> {
    fn clear(&mut self) {
        self.map.clear();
        self.weight = 0;
    }
}

/// One turn at a time per key: the renders (or makes) of one answer queue for its turn, so
/// that requests arriving together while it is missing make it once, and the ones after the
/// first find it kept. A key's lock is dropped once nobody holds or waits for it.
#[derive(Debug)]
pub(crate) struct Turns<K> {
    held: Mutex<HashMap<K, Arc<tokio::sync::Mutex<()>>>>,
}

impl<K> Default for Turns<K> {
    fn default() -> Self {
        Turns {
            held: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Hash + Eq> Turns<K> {
    /// Waits for `key`'s turn, which lasts as long as the guard is held.
    pub(crate) async fn wait(&self, key: K) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            held.retain(|_, lock| Arc::strong_count(lock) > 1);
            Arc::clone(held.entry(key).or_default())
        };
        lock.lock_owned().await
    }

    /// Waits for `key`'s turn when there are turns to take (a cache that is on), else at once.
    pub(crate) async fn wait_in(
        turns: Option<&Self>,
        key: K,
    ) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        match turns {
            Some(turns) => Some(turns.wait(key).await),
            None => None,
        }
    }
}

/// How often one of a [`crate::Service`]'s caches answered: lookups that found a value kept
/// at the version asked for (`hits`) and lookups that did not (`misses`: never kept, dropped,
/// or kept at an older version). A cache that is off counts neither.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Lookups {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that had to render.
    pub misses: u64,
}

impl Lookups {
    /// `hits` as a share of all lookups (0 when there were none).
    pub fn hit_rate(&self) -> f64 {
        let all = self.hits + self.misses;
        if all == 0 {
            0.0
        } else {
            self.hits as f64 / all as f64
        }
    }
}

/// How often each of a [`crate::Service`]'s read caches answered
/// ([`crate::Service::cache_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Library detail pages ([`crate::Config::detail_cache`]).
    pub details: Lookups,
    /// Asset list pages ([`crate::Config::page_cache`]).
    pub lists: Lookups,
    /// Single assets ([`crate::Config::page_cache`]).
    pub assets: Lookups,
}

/// A rendered JSON answer (status 200) and its `ETag`.
#[derive(Debug)]
pub(crate) struct Rendered {
    body: Bytes,
    etag: String,
}

impl Rendered {
    /// Keeps `reply`'s body with the `ETag` of its bytes.
    pub(crate) fn of(reply: &Reply) -> Self {
        Rendered {
            body: reply.body.clone(),
            etag: crate::web::etag_of(&[&reply.body]),
        }
    }

    /// The answer again.
    pub(crate) fn reply(&self) -> Reply {
        Reply::json_bytes(200, self.body.clone()).with_header("etag", self.etag.clone())
    }
}

/// One asset's rendered answer with the asset it was rendered from, which decides who may
/// see it and serves the routes that read an asset without rendering it (its image).
#[derive(Debug)]
pub(crate) struct RenderedAsset {
    /// The answer.
    pub(crate) page: Rendered,
    /// The asset as the store returned it.
    pub(crate) asset: Arc<Asset>,
}

/// A rendered list page, kept under the assets version it was rendered at and, where the
/// store keeps list versions, under what else says it is still the page a render would give.
#[derive(Debug)]
pub(crate) struct KeptList {
    /// The answer.
    pub(crate) page: Rendered,
    /// Its list's version and its assets' versions when it was rendered, or `None` (a store
    /// without list versions, or a write that moved the versions while the page was read):
    /// then it answers only at the assets version it was kept under.
    pub(crate) stamps: Option<ListStamps>,
}

/// What a list page was rendered at ([`KeptList::stamps`]).
#[derive(Debug)]
pub(crate) struct ListStamps {
    /// [`crate::AssetStore::list_version`] of its query, read before the page was.
    pub(crate) list: u64,
    /// The ids of the assets on it, in order.
    pub(crate) ids: Box<[Uuid]>,
    /// Their [`crate::AssetStore::asset_version`]s, read after the page, while the assets
    /// version stayed what it was before the page was read.
    pub(crate) versions: Box<[u64]>,
}

/// Most list pages kept: each is up to a few tens of KB.
const MAX_LIST_PAGES: usize = 1024;
/// Most single assets kept: each is under a KB or two.
const MAX_ASSETS: usize = 16_384;

/// The asset answers of a [`crate::Service`].
#[derive(Debug)]
pub(crate) struct AssetPages {
    /// List pages by their validated query.
    pub(crate) lists: VersionedCache<AssetQuery, KeptList>,
    /// The renders of list pages that are not kept, one at a time per query.
    pub(crate) list_turns: Turns<AssetQuery>,
    /// Single assets by id.
    pub(crate) assets: VersionedCache<Uuid, RenderedAsset>,
}

impl Default for AssetPages {
    fn default() -> Self {
        AssetPages {
            lists: VersionedCache::new(MAX_LIST_PAGES),
            list_turns: Turns::default(),
            assets: VersionedCache::new(MAX_ASSETS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_found_only_at_its_version() {
        let cache = VersionedCache::new(2);
        cache.put(1, 7, Arc::new("a"));
        assert_eq!(cache.get(&1, 7).as_deref(), Some(&"a"));
        assert_eq!(cache.get(&1, 8), None, "another version is a miss");
        assert_eq!(cache.get(&2, 7), None);
        cache.put(1, 8, Arc::new("b"));
        assert_eq!(cache.get(&1, 7), None, "a newer value replaces the older");
        assert_eq!(cache.get(&1, 8).as_deref(), Some(&"b"));
        cache.forget(&1);
        assert_eq!(cache.get(&1, 8), None);
    }

    #[test]
    fn a_full_cache_starts_over() {
        let cache = VersionedCache::new(2);
        cache.put(1, 1, Arc::new('a'));
        cache.put(2, 1, Arc::new('b'));
        cache.put(2, 2, Arc::new('c'));
        assert!(cache.get(&1, 1).is_some(), "replacing a key makes no room");
        cache.put(3, 1, Arc::new('d'));
        assert_eq!(cache.get(&1, 1), None);
        assert_eq!(cache.get(&2, 2), None);
        assert_eq!(cache.get(&3, 1).as_deref(), Some(&'d'));
    }

    #[test]
    fn a_weighed_cache_starts_over_past_its_budget() {
        let cache = VersionedCache::weighed(100, 10, |s: &&str| s.len());
        cache.put(1, 1, Arc::new("1234"));
        cache.put(2, 1, Arc::new("1234"));
        cache.put(1, 2, Arc::new("123456"));
        assert!(
            cache.get(&2, 1).is_some(),
            "a replaced value gives its weight back"
        );
        cache.forget(&1);
        cache.put(3, 1, Arc::new("123456"));
        assert!(
            cache.get(&2, 1).is_some(),
            "a forgotten value gives its weight back"
        );
        cache.put(4, 1, Arc::new("1"));
        assert_eq!(cache.get(&2, 1), None, "over the budget");
        assert_eq!(cache.get(&3, 1), None);
        assert!(cache.get(&4, 1).is_some());
        cache.put(5, 1, Arc::new("12345678901"));
        assert_eq!(cache.get(&5, 1), None, "heavier than the budget");
        assert!(cache.get(&4, 1).is_some(), "and it takes nothing out");
    }
}
