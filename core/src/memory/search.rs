//! [`SearchStore`] of the [`MemoryStore`]: every asset read into words and scored for each
//! search (the rules' reference; fine for thousands of assets).

use std::collections::HashSet;

use async_trait::async_trait;
use uuid::Uuid;

use super::MemoryStore;
use crate::error::StoreError;
use crate::model::{Asset, Page};
use crate::store::rank_read;
use crate::store::{AssetText, SearchFound, SearchRequest, SearchStore};

#[async_trait]
impl SearchStore for MemoryStore {
    async fn set_asset_text(&self, id: Uuid, text: AssetText) -> Result<bool, StoreError> {
        let mut state = self.write();
        if !state.assets.contains_key(&id) {
            return Ok(false);
        }
        state.texts.insert(id, text);
        Ok(true)
    }

    async fn asset_text(&self, id: Uuid) -> Result<Option<AssetText>, StoreError> {
        Ok(self.read().texts.get(&id).cloned())
    }

    async fn search(&self, request: &SearchRequest) -> Result<Page<SearchFound>, StoreError> {
        // The assets passing the filters with their texts, read under one lock.
        let candidates: Vec<(Asset, Option<AssetText>)> = {
            let state = self.read();
            let placed: Option<HashSet<Uuid>> = request.library_id.map(|id| {
                state
                    .libraries
                    .get(&id)
                    .map(|l| l.entries.iter().map(|e| e.asset_id).collect())
                    .unwrap_or_default()
            });
            state
                .assets
                .values()
                .filter(|a| {
                    request.passes(a) && placed.as_ref().is_none_or(|ids| ids.contains(&a.id))
                })
                .map(|a| (a.clone(), state.texts.get(&a.id).cloned()))
                .collect()
        };
        rank_read(self, request, candidates).await
    }
}
