//! Verified keys kept in memory for a short while, so a request does not read its key from the
//! store every time.
//!
//! Only keys the store knows are kept (a key made by another process works at once), for at
//! most [`KEY_CACHE_TTL`]; a revocation through this process drops the key at once. One
//! through another process sharing the store takes effect as soon as the store's keys version
//! ([`crate::KeyStore::keys_version`]) moves (PostgreSQL with change notices: within 100 ms),
//! and within the TTL when the store cannot tell. Expiry is checked on every request against
//! the kept record.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use uuid::Uuid;

use crate::model::ApiKey;

/// How long a key read from the store is used without reading it again.
pub const KEY_CACHE_TTL: Duration = Duration::from_secs(5);

/// Keys kept at most; past it the cache starts over (a flood of distinct valid keys is rare,
/// and every kept key is a valid one).
const MAX_KEYS: usize = 10_000;

/// One value read from the store, used for at most [`KEY_CACHE_TTL`] (the signing secret).
#[derive(Debug, Default)]
pub(crate) struct Kept<T: Copy> {
    value: Mutex<Option<(T, Instant)>>,
}

impl<T: Copy> Kept<T> {
    /// The value, if it was read less than the TTL ago.
    pub(crate) fn get(&self) -> Option<T> {
        let value = self.value.lock().unwrap_or_else(PoisonError::into_inner);
        value
            .filter(|(_, read)| read.elapsed() < KEY_CACHE_TTL)
            .map(|(value, _)| value)
    }

    /// Keeps a value just read from (or written to) the store.
    pub(crate) fn put(&self, value: T) {
        *self.value.lock().unwrap_or_else(PoisonError::into_inner) = Some((value, Instant::now()));
    }
}

/// What a key cache keeps: a key record, or what stands on one (a checked browser token),
/// dropped when that key is revoked ([`KeyCache::forget`]).
pub(crate) trait OfKey: Clone {
    /// The id of the key this stands on.
    fn key_id(&self) -> Uuid;
}

impl OfKey for Arc<ApiKey> {
    fn key_id(&self) -> Uuid {
        self.id
    }
}

/// A kept record: when it was read, and the store's keys version then.
#[derive(Debug)]
struct KeptKey<V> {
    key: V,
    read: Instant,
    version: Option<u64>,
}

/// Keys kept by what they are looked up by: their hash (`[u8; 32]`, the default), or their id
/// (the minting keys of browser tokens); or what stands on a key, by what it is looked up by
/// (checked browser tokens, by the token).
#[derive(Debug)]
pub(crate) struct KeyCache<K = [u8; 32], V = Arc<ApiKey>> {
    keys: Mutex<HashMap<K, KeptKey<V>>>,
}

impl<K, V> Default for KeyCache<K, V> {
    fn default() -> Self {
        KeyCache {
            keys: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: Eq + Hash, V: OfKey> KeyCache<K, V> {
    /// The kept record looked up by `by`, if it was read less than the TTL ago and at the
    /// store's keys version `version` (which the caller read just now).
    pub(crate) fn get<Q>(&self, by: &Q, version: Option<u64>) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        let keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        keys.get(by)
            .filter(|k| k.read.elapsed() < KEY_CACHE_TTL && k.version == version)
            .map(|k| k.key.clone())
    }

    /// Keeps a record just read from the store by `by`, at the keys version read before it.
    pub(crate) fn put(&self, by: K, key: V, version: Option<u64>) {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        if keys.len() >= MAX_KEYS {
            keys.retain(|_, k| k.read.elapsed() < KEY_CACHE_TTL);
            if keys.len() >= MAX_KEYS {
                keys.clear();
            }
        }
        let kept = KeptKey {
            key,
            read: Instant::now(),
            version,
        };
        keys.insert(by, kept);
    }

    /// Drops what stands on the key with this id (it was revoked).
    pub(crate) fn forget(&self, id: Uuid) {
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        keys.retain(|_, k| k.key.key_id() != id);
    }
}
