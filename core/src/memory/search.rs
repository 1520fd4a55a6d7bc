//! [`SearchStore`] of the [`MemoryStore`]: every asset read into words and scored for each
//! search (the rules' reference; fine for thousands of assets).

use std::collections::HashSet;

use async_trait::async_trait;
use uuid::Uuid;

use super::MemoryStore;
use crate::error::StoreError;
use crate::model::{Asset, Page, tag_key};
use crate::search::{Fields, MatchField, Words};
use crate::store::{AssetText, MAX_PAGES_SHOWN, SearchFound, SearchRequest, SearchStore};

/// Whether `asset` passes the filters of `request` (the query aside).
fn passes(asset: &Asset, request: &SearchRequest, placed: Option<&HashSet<Uuid>>) -> bool {
    (request.drafts || asset.published)
        && request.asset_type.is_none_or(|t| asset.asset_type == t)
        && request
            .tag
            .as_ref()
            .is_none_or(|want| asset.tags.iter().any(|t| tag_key(t) == *want))
        && request
            .workspace_id
            .as_ref()
            .is_none_or(|w| asset.workspace_id.as_ref() == Some(w))
        && placed.is_none_or(|ids| ids.contains(&asset.id))
}

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
                .filter(|a| passes(a, request, placed.as_ref()))
                .map(|a| (a.clone(), state.texts.get(&a.id).cloned()))
                .collect()
        };
        let paid: HashSet<Uuid> = if request.paid_content {
            HashSet::new()
        } else {
            let private: Vec<Uuid> = candidates
                .iter()
                .filter(|(a, _)| !a.is_public)
                .map(|(a, _)| a.id)
                .collect();
            self.holders_of(&private)
                .await?
                .into_iter()
                .filter(|h| h.paid && !h.free)
                .map(|h| h.asset_id)
                .collect()
        };
        let mut hits = Vec::new();
        for (asset, text) in candidates {
            let text = text.filter(|_| !paid.contains(&asset.id));
            let pages: Vec<Words<'_>> = text
                .as_ref()
                .map(|t| t.pages.iter().map(|p| Words::of(p)).collect())
                .unwrap_or_default();
            let description = asset.description.as_deref().unwrap_or("");
            let fields = Fields {
                texts: vec![
                    (MatchField::Title, vec![Words::of(&asset.title)]),
                    (
                        MatchField::Tags,
                        asset.tags.iter().map(|t| Words::of(t)).collect(),
                    ),
                    (MatchField::Description, vec![Words::of(description)]),
                    (MatchField::Content, pages),
                ],
            };
            let Some(score) = request.query.score(&fields) else {
                continue;
            };
            let shown: Vec<u32> = fields.texts[3]
                .1
                .iter()
                .enumerate()
                .filter(|(_, w)| !w.matches(&request.query).is_empty())
                .map(|(i, _)| u32::try_from(i).unwrap_or(u32::MAX))
                .take(MAX_PAGES_SHOWN)
                .collect();
            drop(fields);
            let (pages, paged) = match text {
                Some(t) => (
                    shown
                        .iter()
                        .filter_map(|&i| Some((i, t.pages.get(i as usize)?.clone())))
                        .collect(),
                    t.paged,
                ),
                None => (Vec::new(), false),
            };
            hits.push(SearchFound {
                asset,
                score,
                pages,
                paged,
            });
        }
        hits.sort_by(|a, b| {
            (b.score, b.asset.created_at, b.asset.id).cmp(&(
                a.score,
                a.asset.created_at,
                a.asset.id,
            ))
        });
        let total = hits.len() as u64;
        let items = hits
            .into_iter()
            .skip(usize::try_from(request.offset).unwrap_or(usize::MAX))
            .take(request.limit as usize)
            .collect();
        Ok(Page { items, total })
    }
}
