//! [`KeyStore`]: API key records.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::error::StoreError;
use crate::events::Log;
use crate::model::ApiKey;

/// API key records, found by the SHA-256 of the key.
#[async_trait]
pub trait KeyStore: Send + Sync + 'static {
    /// Stores a new API key record. A key with the same id is [`StoreError::DuplicateId`], one
    /// with the same hash [`StoreError::DuplicateKeyHash`]; nothing changes then.
    async fn insert_key(&self, key: ApiKey, log: &Log) -> Result<(), StoreError>;

    /// The key record with this SHA-256 hash, revoked or expired ones included.
    async fn find_key(&self, key_hash: &[u8; 32]) -> Result<Option<ApiKey>, StoreError>;

    /// Every key record, oldest first.
    async fn list_keys(&self) -> Result<Vec<ApiKey>, StoreError>;

    /// The key record `id`, revoked or expired too. Provided: found among
    /// [`KeyStore::list_keys`]; a store with an index by id answers with a point read.
    async fn get_key(&self, id: Uuid) -> Result<Option<ApiKey>, StoreError> {
        Ok(self.list_keys().await?.into_iter().find(|k| k.id == id))
    }

    /// Marks a key revoked at `at` (a key already revoked keeps its first time). `false` if
    /// there is no such key.
    async fn revoke_key(&self, id: Uuid, at: DateTime<Utc>, log: &Log) -> Result<bool, StoreError>;

    /// The version of the key records, when this store can tell without a round trip: a
    /// number that changes on every revocation, through any process sharing the store,
    /// within 100 ms of it (never reused while the store is open). A reader may then keep a
    /// key read at one version while the version stays the same. `None` (the default) when
    /// the store cannot tell: a reader then keeps keys for at most
    /// [`KEY_CACHE_TTL`](crate::KEY_CACHE_TTL).
    fn keys_version(&self) -> Option<u64> {
        None
    }
}
