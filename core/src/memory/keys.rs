//! [`KeyStore`] and [`MetaStore`] of the [`MemoryStore`]: API keys, the signing secret, and
//! the capability stores it hands out (all of them).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::MemoryStore;
use crate::error::StoreError;
use crate::events::{Log, Written};
use crate::model::ApiKey;
use crate::store::{EventStore, KeyStore, MetaStore, PassStore, UploadStore, WebhookStore};

#[async_trait]
impl KeyStore for MemoryStore {
    async fn insert_key(&self, key: ApiKey, log: &Log) -> Result<(), StoreError> {
        let mut state = self.write();
        if state.keys.iter().any(|k| k.id == key.id) {
            return Err(StoreError::DuplicateId { id: key.id });
        }
        if state.keys.iter().any(|k| k.key_hash == key.key_hash) {
            return Err(StoreError::DuplicateKeyHash);
        }
        state.log(log, Written::KeyCreated(&key));
        state.keys.push(key);
        Ok(())
    }

    async fn find_key(&self, key_hash: &[u8; 32]) -> Result<Option<ApiKey>, StoreError> {
        Ok(self
            .read()
            .keys
            .iter()
            .find(|k| &k.key_hash == key_hash)
            .cloned())
    }

    async fn list_keys(&self) -> Result<Vec<ApiKey>, StoreError> {
        let mut keys = self.read().keys.clone();
        keys.sort_by_key(|k| (k.created_at, k.id));
        Ok(keys)
    }

    async fn revoke_key(&self, id: Uuid, at: DateTime<Utc>, log: &Log) -> Result<bool, StoreError> {
        let mut state = self.write();
        let Some(key) = state.keys.iter_mut().find(|k| k.id == id) else {
            return Ok(false);
        };
        if key.revoked_at.is_none() {
            key.revoked_at = Some(at);
            state.log(log, Written::KeyRevoked(id));
        }
        Ok(true)
    }
}

#[async_trait]
impl MetaStore for MemoryStore {
    async fn signing_secret(&self, candidate: [u8; 32]) -> Result<[u8; 32], StoreError> {
        Ok(*self.write().signing_secret.get_or_insert(candidate))
    }

    async fn rotate_signing_secret(&self, secret: [u8; 32]) -> Result<(), StoreError> {
        self.write().signing_secret = Some(secret);
        Ok(())
    }

    fn pass_store(&self) -> Option<&dyn PassStore> {
        Some(self)
    }

    fn event_store(&self) -> Option<&dyn EventStore> {
        Some(self)
    }

    fn webhook_store(&self) -> Option<&dyn WebhookStore> {
        Some(self)
    }

    fn upload_store(&self) -> Option<&dyn UploadStore> {
        Some(self)
    }

    #[cfg(feature = "search")]
    fn search_store(&self) -> Option<&dyn crate::store::SearchStore> {
        Some(self)
    }

    #[cfg(feature = "transfer")]
    fn transfer_store(&self) -> Option<&dyn crate::store::TransferStore> {
        Some(self)
    }
}
