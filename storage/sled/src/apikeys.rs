//! API key records.

use assetlib_core::events::{Log, Written};
use assetlib_core::{ApiKey, KeyStore, StoreError, async_trait};
use chrono::{DateTime, Utc};
use sled::Transactional;
use uuid::Uuid;

use crate::error::{Error, abort};
use crate::events::EventSlot;
use crate::record::{KeyRec, Ts, decode, decode_id, encode};
use crate::{Inner, SledStore, tree_keys};

impl Inner {
    fn key_rec(&self, id: Uuid) -> Result<Option<KeyRec>, Error> {
        self.get(&self.keys, id.as_bytes())?
            .map(|v| decode(KeyRec::WHAT, &v))
            .transpose()
    }

    /// A key that an index names; its absence is corruption.
    fn indexed_key(&self, id: Uuid) -> Result<ApiKey, Error> {
        self.key_rec(id)?
            .ok_or_else(|| Error::invalid("key index", format!("entry for missing key {id}")))?
            .into_key(id)
    }

    pub(crate) fn insert_key(&self, key: &ApiKey, event: &EventSlot) -> Result<(), Error> {
        let id = key.id;
        let value = encode(KeyRec::WHAT, &KeyRec::new(key))?;
        let created = tree_keys::key_created(&key.created_at, id);
        (
            &self.keys,
            &self.key_hashes,
            &self.key_idx_created,
            &self.events,
        )
            .transaction(|(records, hashes, by_created, events)| {
                if records.get(id.as_bytes())?.is_some() {
                    return Err(abort(Error::DuplicateId(id)));
                }
                if hashes.get(key.key_hash)?.is_some() {
                    return Err(abort(Error::DuplicateKeyHash));
                }
                records.insert(&id.as_bytes()[..], value.as_slice())?;
                hashes.insert(&key.key_hash[..], &id.as_bytes()[..])?;
                by_created.insert(&created[..], &[][..])?;
                event.put(events, Written::KeyCreated(key))?;
                Ok(())
            })?;
        Ok(())
    }

    pub(crate) fn find_key(&self, key_hash: &[u8; 32]) -> Result<Option<ApiKey>, Error> {
        match self.get(&self.key_hashes, key_hash)? {
            Some(id) => self
                .indexed_key(decode_id("key hash entry", &id)?)
                .map(Some),
            None => Ok(None),
        }
    }

    pub(crate) fn list_keys(&self) -> Result<Vec<ApiKey>, Error> {
        self.scan(&self.key_idx_created, &[], false)
            .map(|kv| {
                let (k, _) = kv?;
                self.indexed_key(tree_keys::trailing_id(&k)?)
            })
            .collect()
    }

    pub(crate) fn revoke_key(
        &self,
        id: Uuid,
        at: DateTime<Utc>,
        event: &EventSlot,
    ) -> Result<bool, Error> {
        let at = Ts::from(&at);
        let found = (&self.keys, &self.events).transaction(|(records, events)| {
            let Some(v) = records.get(id.as_bytes())? else {
                return Ok(false);
            };
            let mut rec: KeyRec = decode(KeyRec::WHAT, &v).map_err(abort)?;
            if rec.revoked_at.is_none() {
                rec.revoked_at = Some(at);
                records.insert(
                    &id.as_bytes()[..],
                    encode(KeyRec::WHAT, &rec).map_err(abort)?,
                )?;
                event.put(events, Written::KeyRevoked(id))?;
            }
            Ok(true)
        })?;
        Ok(found)
    }
}

#[async_trait]
impl KeyStore for SledStore {
    async fn insert_key(&self, key: ApiKey, log: &Log) -> Result<(), StoreError> {
        self.logged_write(log, move |inner, event| inner.insert_key(&key, event))
            .await
    }

    async fn find_key(&self, key_hash: &[u8; 32]) -> Result<Option<ApiKey>, StoreError> {
        self.point_read(|inner| inner.find_key(key_hash))
    }

    async fn list_keys(&self) -> Result<Vec<ApiKey>, StoreError> {
        self.blocking(|inner| inner.list_keys()).await
    }

    async fn get_key(&self, id: Uuid) -> Result<Option<ApiKey>, StoreError> {
        self.point_read(|inner| inner.key_rec(id)?.map(|rec| rec.into_key(id)).transpose())
    }

    async fn revoke_key(&self, id: Uuid, at: DateTime<Utc>, log: &Log) -> Result<bool, StoreError> {
        self.logged_write(log, move |inner, event| inner.revoke_key(id, at, event))
            .await
    }
}
