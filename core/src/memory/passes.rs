//! [`PassStore`] of the [`MemoryStore`]: passes and how published libraries sell an asset.

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{MemoryStore, newest_first};
use crate::error::StoreError;
use crate::events::{Log, Written};
use crate::model::{Holders, LibraryPass, Page, PassSpend};
use crate::store::PassStore;

#[async_trait]
impl PassStore for MemoryStore {
    async fn insert_pass(&self, pass: LibraryPass, log: &Log) -> Result<(), StoreError> {
        let mut state = self.write();
        if !state.libraries.contains_key(&pass.library_id) {
            return Err(StoreError::UnknownLibrary {
                id: pass.library_id,
            });
        }
        if state.passes.contains_key(&pass.id) {
            return Err(StoreError::DuplicateId { id: pass.id });
        }
        if state
            .passes
            .values()
            .any(|p| p.token_hash == pass.token_hash)
        {
            return Err(StoreError::DuplicateKeyHash);
        }
        state.log(log, Written::PassCreated(&pass));
        state.passes.insert(pass.id, pass);
        Ok(())
    }

    async fn find_pass(&self, token_hash: &[u8; 32]) -> Result<Option<LibraryPass>, StoreError> {
        let state = self.read();
        Ok(state
            .passes
            .values()
            .find(|p| &p.token_hash == token_hash)
            .cloned())
    }

    async fn get_pass(&self, id: Uuid) -> Result<Option<LibraryPass>, StoreError> {
        Ok(self.read().passes.get(&id).cloned())
    }

    async fn list_passes(
        &self,
        library_id: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<LibraryPass>, StoreError> {
        let state = self.read();
        let hits = state
            .passes
            .values()
            .filter(|p| p.library_id == library_id)
            .collect();
        Ok(newest_first(hits, |p| (p.created_at, p.id), offset, limit))
    }

    async fn revoke_pass(
        &self,
        id: Uuid,
        at: DateTime<Utc>,
        log: &Log,
    ) -> Result<bool, StoreError> {
        let mut state = self.write();
        let Some(pass) = state.passes.get_mut(&id) else {
            return Ok(false);
        };
        if pass.revoked_at.is_none() {
            pass.revoked_at = Some(at);
            state.log(log, Written::PassRevoked(id));
        }
        Ok(true)
    }

    async fn spend_pass(&self, id: Uuid, now: DateTime<Utc>) -> Result<PassSpend, StoreError> {
        let mut state = self.write();
        Ok(match state.passes.get_mut(&id) {
            Some(p) if p.is_live(now) && p.is_exhausted() => PassSpend::Exhausted,
            Some(p) if p.is_live(now) => {
                p.downloads_used += 1;
                PassSpend::Spent(p.clone())
            }
            _ => PassSpend::Dead,
        })
    }
}

impl MemoryStore {
    /// What [`crate::LibraryStore::published_holders`] answers.
    pub(crate) async fn holders_of(&self, asset_ids: &[Uuid]) -> Result<Vec<Holders>, StoreError> {
        let state = self.read();
        let mut found: HashMap<Uuid, Holders> = HashMap::new();
        for library in state.libraries.values() {
            let settings = &library.library.settings;
            if !settings.published {
                continue;
            }
            for entry in &library.entries {
                if !asset_ids.contains(&entry.asset_id) {
                    continue;
                }
                let holders = found.entry(entry.asset_id).or_insert(Holders {
                    asset_id: entry.asset_id,
                    paid: false,
                    free: false,
                });
                if settings.is_paid {
                    holders.paid = true;
                } else {
                    holders.free = true;
                }
            }
        }
        Ok(found.into_values().collect())
    }
}
