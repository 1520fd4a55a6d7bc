//! [`MemoryStore`]: a [`Store`] in memory, for tests, examples and benches.
//!
//! It keeps everything in one lock and answers lists by filtering and sorting all assets, so
//! it is fast for thousands of records and slow for millions. Nothing survives the process.

mod events;
mod keys;
mod passes;
#[cfg(feature = "search")]
mod search;
#[cfg(feature = "transfer")]
mod transfer;
mod uploads;
mod webhooks;
mod workspaces;

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::change::{
    AssetChange, AssetDeletion, AssetUpdate, BulkOutcome, BulkRefusal, ChangeRefused, LibraryUse,
};
use crate::error::StoreError;
use crate::events::{Event, EventCursor, Log, Written};
use crate::model::{
    ApiKey, Asset, EntryAsset, EntryRow, Holders, Library, LibraryEntry, LibraryPass, LibraryRows,
    LibrarySummary, LibraryWrite, Page, PutOutcome, Section, SlugHolder, TagCount, ViewCount,
};
use crate::query::{AssetQuery, AssetSort, LibraryQuery, SortOrder};
use crate::store::rules::{
    first_free_slug, fold_case, matches_search, matches_tags, tag_keys, top_tags,
};
use crate::store::{AssetStore, LibraryStore};

/// A [`Store`](crate::Store) in memory.
///
/// ```
/// use assetlib_core::{Config, Files, MemoryStore, Service};
/// let service = Service::new(MemoryStore::new(), Files::memory(), Config::default());
/// # let _ = service;
/// ```
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: RwLock<State>,
    /// The language search stems words in ([`MemoryStore::with_search_language`]).
    #[cfg(feature = "search")]
    search_language: Option<crate::search::Language>,
}

#[derive(Debug, Default, Clone)]
struct State {
    assets: HashMap<Uuid, Asset>,
    libraries: HashMap<Uuid, StoredLibrary>,
    keys: Vec<ApiKey>,
    passes: HashMap<Uuid, LibraryPass>,
    /// The last content version handed out; every version comes from it, so none repeats.
    last_version: u64,
    /// The content version of the assets ([`AssetStore::assets_version`]).
    assets_version: u64,
    /// The secret for signing download links, once made.
    signing_secret: Option<[u8; 32]>,
    /// The event log, each event with its place (from 1, in the order of the writes).
    events: Vec<(u64, Event)>,
    /// The place of the last event appended.
    last_event: u64,
    /// The webhooks.
    webhooks: HashMap<Uuid, crate::webhooks::Webhook>,
    /// Their deliveries.
    deliveries: HashMap<Uuid, crate::webhooks::Delivery>,
    /// Each webhook's stream.
    streams: HashMap<Uuid, Stream>,
    /// Uploads in progress, with their leases.
    uploads: HashMap<Uuid, uploads::Held>,
    /// The text inside the assets' files, kept for search.
    #[cfg(feature = "search")]
    texts: HashMap<Uuid, crate::store::AssetText>,
    /// The mark of an import in progress ([`crate::store::TransferStore::transfer_mark`]).
    #[cfg(feature = "transfer")]
    transfer_mark: Option<String>,
}

/// Where a webhook's stream stands, and who holds it until when.
#[derive(Debug, Clone, Copy)]
struct Stream {
    at: EventCursor,
    holder: Option<(Uuid, DateTime<Utc>)>,
}

/// One page (`limit` from `offset`) of `hits`, newest first by `key` (a time and an id, so
/// the order is total), and how many there are.
fn newest_first<T: Clone, K: Ord>(
    mut hits: Vec<&T>,
    key: impl Fn(&T) -> K,
    offset: u64,
    limit: u32,
) -> Page<T> {
    hits.sort_unstable_by_key(|t| std::cmp::Reverse(key(t)));
    let total = hits.len() as u64;
    let items = hits
        .into_iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(limit as usize)
        .cloned()
        .collect();
    Page { items, total }
}

#[derive(Debug, Clone)]
struct StoredLibrary {
    library: Library,
    sections: Vec<Section>,
    entries: Vec<LibraryEntry>,
    version: u64,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        // A panic while holding the lock cannot leave a half-made change: every write below
        // builds its new value first and then assigns it.
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// Appends the event `log` makes of `written`, if any (under the same lock as the write
    /// it records).
    fn log(&mut self, log: &Log, written: Written<'_>) {
        let Some(event) = log.event(written) else {
            return;
        };
        self.last_event += 1;
        let at = EventCursor(0, self.last_event);
        self.events.push((self.last_event, Event { at, ..event }));
    }

    fn next_version(&mut self) -> u64 {
        self.last_version += 1;
        self.last_version
    }

    /// Gives every library holding the asset `id` a new content version.
    fn touch_holders(&mut self, id: Uuid) {
        let version = self.next_version();
        for library in self.libraries.values_mut() {
            if library.entries.iter().any(|e| e.asset_id == id) {
                library.version = version;
            }
        }
    }

    /// Stores `after` (when the change changed something) and what goes with it: the holders'
    /// versions, the assets version and the event.
    fn land(&mut self, before: Asset, after: Option<Asset>, log: &Log) -> AssetUpdate {
        let Some(after) = after else {
            return AssetUpdate {
                after: before.clone(),
                before,
            };
        };
        let id = before.id;
        let mut after = after;
        if after.workspace_id != before.workspace_id {
            after.slug = self.slug_in(&after, &before.slug);
        }
        self.touch_holders(id);
        self.assets.insert(id, after.clone());
        self.assets_version += 1;
        self.log(
            log,
            Written::AssetChanged {
                before: &before,
                after: &after,
            },
        );
        AssetUpdate { before, after }
    }

    /// Removes the asset `id` from the assets and every library, with its event.
    fn remove_asset(&mut self, id: Uuid, log: &Log) -> Option<Asset> {
        let asset = self.assets.remove(&id)?;
        #[cfg(feature = "search")]
        self.texts.remove(&id);
        self.touch_holders(id);
        for library in self.libraries.values_mut() {
            library.entries.retain(|e| e.asset_id != id);
        }
        self.assets_version += 1;
        self.log(log, Written::AssetDeleted(&asset));
        Some(asset)
    }

    /// The libraries holding the asset `id`, newest first.
    fn usage(&self, id: Uuid) -> Vec<LibraryUse> {
        let mut holders: Vec<&Library> = self
            .libraries
            .values()
            .filter(|l| l.entries.iter().any(|e| e.asset_id == id))
            .map(|l| &l.library)
            .collect();
        holders.sort_unstable_by_key(|l| std::cmp::Reverse((l.created_at, l.id)));
        holders
            .into_iter()
            .map(|l| LibraryUse {
                id: l.id,
                title: l.settings.title.clone(),
                slug: l.slug.clone(),
                published: l.settings.published,
            })
            .collect()
    }

    fn published_count(&self, entries: &[LibraryEntry]) -> u64 {
        entries
            .iter()
            .filter(|e| self.assets.get(&e.asset_id).is_some_and(|a| a.published))
            .count() as u64
    }
}

#[async_trait]
impl AssetStore for MemoryStore {
    async fn list_assets(&self, q: &AssetQuery) -> Result<Page<Asset>, StoreError> {
        let state = self.read();
        let needle = q.search.as_deref().map(fold_case);
        let mut hits: Vec<&Asset> = state
            .assets
            .values()
            .filter(|a| q.status.admits(a.published))
            .filter(|a| q.asset_type.is_none_or(|t| a.asset_type == t))
            .filter(|a| q.checksum.is_none_or(|c| a.checksum_sha256 == Some(c)))
            .filter(|a| {
                q.workspace_id
                    .as_deref()
                    .is_none_or(|w| a.workspace_id.as_deref() == Some(w))
            })
            .filter(|a| matches_tags(&a.tags, q))
            .filter(|a| {
                needle
                    .as_deref()
                    .is_none_or(|n| matches_search(&a.title, a.description.as_deref(), n))
            })
            .collect();
        match q.sort {
            AssetSort::CreatedAt => hits.sort_unstable_by_key(|a| (a.created_at, a.id)),
            AssetSort::UpdatedAt => hits.sort_unstable_by_key(|a| (a.updated_at, a.id)),
            AssetSort::Title => hits.sort_by_cached_key(|a| (fold_case(&a.title), a.id)),
        }
        if q.order == SortOrder::Desc {
            hits.reverse();
        }
        let total = hits.len() as u64;
        let items = hits
            .into_iter()
            .skip(usize::try_from(q.offset()).unwrap_or(usize::MAX))
            .take(q.per_page as usize)
            .cloned()
            .collect();
        Ok(Page { items, total })
    }

    async fn get_asset(&self, id: Uuid) -> Result<Option<Asset>, StoreError> {
        Ok(self.read().assets.get(&id).cloned())
    }

    async fn get_assets(&self, ids: &[Uuid]) -> Result<Vec<Asset>, StoreError> {
        let state = self.read();
        let mut seen = std::collections::HashSet::new();
        Ok(ids
            .iter()
            .filter(|id| seen.insert(**id))
            .filter_map(|id| state.assets.get(id).cloned())
            .collect())
    }

    async fn insert_asset(&self, mut asset: Asset, log: &Log) -> Result<Asset, StoreError> {
        let mut state = self.write();
        if state.assets.contains_key(&asset.id) {
            return Err(StoreError::DuplicateId { id: asset.id });
        }
        asset.slug = first_free_slug(&asset.slug, |s| {
            state
                .assets
                .values()
                .any(|a| a.slug == s && a.workspace_id == asset.workspace_id)
        });
        state.assets.insert(asset.id, asset.clone());
        state.assets_version += 1;
        state.log(log, Written::AssetCreated(&asset));
        Ok(asset)
    }

    async fn update_asset(
        &self,
        id: Uuid,
        change: &AssetChange,
        log: &Log,
    ) -> Result<Option<AssetUpdate>, StoreError> {
        let mut state = self.write();
        let Some(before) = state.assets.get(&id).cloned() else {
            return Ok(None);
        };
        let refused = |reason| StoreError::Refused { id, reason };
        let after = change.apply(&before).map_err(refused)?;
        if state.held_elsewhere(&before, after.as_ref()) {
            return Err(refused(ChangeRefused::HeldInAnotherWorkspace));
        }
        Ok(Some(state.land(before, after, log)))
    }

    async fn update_assets(
        &self,
        ids: &[Uuid],
        change: &AssetChange,
        log: &Log,
    ) -> Result<BulkOutcome<AssetUpdate>, StoreError> {
        let mut state = self.write();
        let mut refused = Vec::new();
        let mut planned = Vec::with_capacity(ids.len());
        for &id in ids {
            match state.assets.get(&id) {
                None => refused.push((id, BulkRefusal::NotFound)),
                Some(before) => match change.apply(before) {
                    Ok(after) if state.held_elsewhere(before, after.as_ref()) => {
                        let reason = ChangeRefused::HeldInAnotherWorkspace;
                        refused.push((id, BulkRefusal::Refused(reason)));
                    }
                    Ok(after) => planned.push((before.clone(), after)),
                    Err(reason) => refused.push((id, BulkRefusal::Refused(reason))),
                },
            }
        }
        if !refused.is_empty() {
            return Ok(BulkOutcome::Refused(refused));
        }
        Ok(BulkOutcome::Done(
            planned
                .into_iter()
                .map(|(before, after)| state.land(before, after, log))
                .collect(),
        ))
    }

    async fn delete_assets(
        &self,
        ids: &[Uuid],
        force: bool,
        log: &Log,
    ) -> Result<BulkOutcome<Asset>, StoreError> {
        let mut state = self.write();
        let mut refused = Vec::new();
        for &id in ids {
            if !state.assets.contains_key(&id) {
                refused.push((id, BulkRefusal::NotFound));
                continue;
            }
            let holders = state.usage(id);
            if !holders.is_empty() && !force {
                refused.push((id, BulkRefusal::InUse(holders)));
            }
        }
        if !refused.is_empty() {
            return Ok(BulkOutcome::Refused(refused));
        }
        Ok(BulkOutcome::Done(
            ids.iter()
                .filter_map(|&id| state.remove_asset(id, log))
                .collect(),
        ))
    }

    async fn list_tags(&self, limit: u32) -> Result<Vec<TagCount>, StoreError> {
        let state = self.read();
        let mut counts: HashMap<String, u64> = HashMap::new();
        for asset in state.assets.values().filter(|a| a.published) {
            for key in tag_keys(&asset.tags) {
                *counts.entry(key).or_default() += 1;
            }
        }
        Ok(top_tags(counts, limit))
    }

    async fn delete_asset(
        &self,
        id: Uuid,
        force: bool,
        log: &Log,
    ) -> Result<AssetDeletion, StoreError> {
        let mut state = self.write();
        if !state.assets.contains_key(&id) {
            return Ok(AssetDeletion::NotFound);
        }
        let holders = state.usage(id);
        if !holders.is_empty() && !force {
            return Ok(AssetDeletion::InUse(holders));
        }
        Ok(state
            .remove_asset(id, log)
            .map_or(AssetDeletion::NotFound, AssetDeletion::Deleted))
    }

    async fn asset_usage(&self, id: Uuid) -> Result<Vec<LibraryUse>, StoreError> {
        Ok(self.read().usage(id))
    }

    async fn record_download(&self, id: Uuid) -> Result<(), StoreError> {
        let mut state = self.write();
        if let Some(asset) = state.assets.get_mut(&id) {
            asset.download_count += 1;
            state.assets_version += 1;
        }
        Ok(())
    }

    async fn assets_version(&self) -> Result<u64, StoreError> {
        Ok(self.read().assets_version)
    }
}

#[async_trait]
impl LibraryStore for MemoryStore {
    async fn list_libraries(&self, q: &LibraryQuery) -> Result<Page<LibrarySummary>, StoreError> {
        let state = self.read();
        let mut hits: Vec<&StoredLibrary> = state
            .libraries
            .values()
            .filter(|l| l.library.settings.published)
            .filter(|l| {
                q.workspace_id
                    .as_deref()
                    .is_none_or(|w| l.library.settings.workspace_id.as_deref() == Some(w))
            })
            .collect();
        hits.sort_unstable_by_key(|l| std::cmp::Reverse((l.library.published_at, l.library.id)));
        let total = hits.len() as u64;
        let items = hits
            .into_iter()
            .skip(usize::try_from(q.offset()).unwrap_or(usize::MAX))
            .take(q.limit as usize)
            .map(|l| LibrarySummary {
                library: l.library.clone(),
                asset_count: state.published_count(&l.entries),
            })
            .collect();
        Ok(Page { items, total })
    }

    async fn load_library(&self, id: Uuid) -> Result<Option<LibraryRows>, StoreError> {
        let state = self.read();
        Ok(state.libraries.get(&id).map(|l| LibraryRows {
            library: l.library.clone(),
            sections: l.sections.clone(),
            entries: l
                .entries
                .iter()
                .filter_map(|e| {
                    state.assets.get(&e.asset_id).map(|a| EntryRow {
                        entry: e.clone(),
                        asset: EntryAsset::from(a),
                    })
                })
                .collect(),
        }))
    }

    async fn put_library(&self, write: LibraryWrite, log: &Log) -> Result<PutOutcome, StoreError> {
        let mut state = self.write();
        if let Some(missing) = write
            .entries
            .iter()
            .find(|e| !state.assets.contains_key(&e.asset_id))
        {
            return Err(StoreError::UnknownAsset {
                id: missing.asset_id,
            });
        }
        if let Some(id) = state.foreign_entry(&write) {
            return Err(StoreError::AssetOfAnotherWorkspace { id });
        }
        let mut library = write.library;
        let id = library.id;
        let workspace = library.settings.workspace_id.clone();
        let taken = |s: &str| {
            state.libraries.values().any(|l| {
                l.library.id != id
                    && l.library.slug == s
                    && l.library.settings.workspace_id == workspace
            })
        };
        if write.slug_given {
            if taken(&library.slug) {
                return Err(StoreError::SlugTaken {
                    slug: library.slug.clone(),
                });
            }
        } else {
            library.slug = first_free_slug(&library.slug, taken);
        }
        let outcome = match state.libraries.get(&id) {
            Some(old) => {
                library.created_at = old.library.created_at;
                library.view_count = old.library.view_count;
                library.published_at = old.library.published_at;
                PutOutcome::Replaced
            }
            None => PutOutcome::Created,
        };
        if library.settings.published && library.published_at.is_none() {
            library.published_at = Some(library.updated_at);
        }
        let version = state.next_version();
        state.log(
            log,
            Written::LibraryPut {
                id,
                created: outcome == PutOutcome::Created,
            },
        );
        state.libraries.insert(
            id,
            StoredLibrary {
                library,
                sections: write.sections,
                entries: write.entries,
                version,
            },
        );
        Ok(outcome)
    }

    async fn libraries_by_slug(&self, slug: &str) -> Result<Vec<SlugHolder>, StoreError> {
        let mut found: Vec<SlugHolder> = self
            .read()
            .libraries
            .values()
            .filter(|l| l.library.slug == slug)
            .map(|l| SlugHolder {
                workspace_id: l.library.settings.workspace_id.clone(),
                id: l.library.id,
            })
            .collect();
        found.sort_unstable_by(|a, b| a.workspace_id.cmp(&b.workspace_id));
        Ok(found)
    }

    async fn library_workspace(&self, id: Uuid) -> Result<Option<Option<String>>, StoreError> {
        Ok(self
            .read()
            .libraries
            .get(&id)
            .map(|l| l.library.settings.workspace_id.clone()))
    }

    async fn delete_library(&self, id: Uuid, log: &Log) -> Result<bool, StoreError> {
        let mut state = self.write();
        let found = state.libraries.remove(&id).is_some();
        state.passes.retain(|_, p| p.library_id != id);
        if found {
            state.log(log, Written::LibraryDeleted(id));
        }
        Ok(found)
    }

    async fn record_library_view(&self, id: Uuid) -> Result<Option<ViewCount>, StoreError> {
        Ok(self
            .write()
            .libraries
            .get_mut(&id)
            .filter(|l| l.library.settings.published)
            .map(|l| {
                l.library.view_count += 1;
                ViewCount {
                    views: l.library.view_count,
                    version: l.version,
                }
            }))
    }

    async fn published_holders(&self, asset_ids: &[Uuid]) -> Result<Vec<Holders>, StoreError> {
        self.holders_of(asset_ids).await
    }
}
