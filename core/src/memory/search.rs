//! [`SearchStore`] of the [`MemoryStore`]: every asset read into words and scored for each
//! search (the rules' reference; fine for thousands of assets), in the language it is made
//! with ([`MemoryStore::with_search_language`]).

use std::collections::HashSet;

use async_trait::async_trait;
use uuid::Uuid;

use super::MemoryStore;
use crate::error::StoreError;
use crate::model::{Asset, Page};
use crate::search::Language;
use crate::store::rank_read;
use crate::store::{AssetText, SearchFound, SearchRequest, SearchStore};

impl MemoryStore {
    /// An empty store whose search stems words in `language` ([`SearchStore::language`]):
    /// `q` is read in it, and the texts are read in it at each search.
    ///
    /// ```
    /// use assetlib_core::MemoryStore;
    /// use assetlib_core::search::Language;
    /// use assetlib_core::store::SearchStore as _;
    ///
    /// let store = MemoryStore::with_search_language(Language::English);
    /// assert_eq!(store.language(), Some(Language::English));
    /// assert_eq!(MemoryStore::new().language(), None);
    /// ```
    pub fn with_search_language(language: Language) -> Self {
        MemoryStore {
            search_language: Some(language),
            ..MemoryStore::default()
        }
    }
}

#[async_trait]
impl SearchStore for MemoryStore {
    fn language(&self) -> Option<Language> {
        self.search_language
    }

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
