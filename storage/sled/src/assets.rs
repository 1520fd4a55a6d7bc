//! Assets: reads, lists and inserts (changes and deletes are in `lifecycle.rs`).

use assetlib_core::events::{Log, Written};
use std::collections::HashSet;
use std::sync::Arc;

use assetlib_core::store::rules;
use assetlib_core::{
    Asset, AssetChange, AssetDeletion, AssetQuery, AssetSort, AssetStatus, AssetStore, AssetType,
    AssetUpdate, BulkOutcome, LibraryUse, Page, SortOrder, StoreError, TagCount, async_trait,
};
use sled::Transactional;
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::error::{Error, TxError, abort};
use crate::events::EventSlot;
use crate::record::{AssetRec, decode, decode_id, encode};
use crate::tree_keys::List;
use crate::{Inner, SledStore, tree_keys, tx};

/// A kept list's page ending at most this far in is read on the calling task.
const INLINE_PAGE_END: u64 = 200;

impl Inner {
    fn asset_index_tree(&self, sort: AssetSort) -> &sled::Tree {
        match sort {
            AssetSort::CreatedAt => &self.asset_idx_created,
            AssetSort::UpdatedAt => &self.asset_idx_updated,
            AssetSort::Title => &self.asset_idx_title,
        }
    }

    /// The stored record of an asset.
    pub(crate) fn asset_rec(&self, id: Uuid) -> Result<Option<AssetRec>, Error> {
        self.get(&self.assets, id.as_bytes())?
            .map(|v| decode(AssetRec::WHAT, &v))
            .transpose()
    }

    /// An asset with its download count: kept from an earlier read while the asset's version
    /// ([`AssetStore::asset_version`], moved after every write of the asset or its count is
    /// committed) is the one it was read at, else read and kept under the version taken before
    /// the read. A site's list pages and image requests read the same few thousand assets again
    /// and again; a kept one skips sled's read (which waits for every transaction committing
    /// meanwhile) and its decoding.
    pub(crate) fn load_asset(&self, id: Uuid) -> Result<Option<Asset>, Error> {
        let version = self.asset_versions.of(id);
        if let Some(kept) = self.kept.assets.get(&id, version) {
            return Ok(Some(Asset::clone(&kept)));
        }
        let Some(rec) = self.asset_rec(id)? else {
            return Ok(None);
        };
        let asset = self.complete_asset(id, rec)?;
        self.kept.assets.put(id, version, Arc::new(asset.clone()));
        Ok(Some(asset))
    }

    pub(crate) fn complete_asset(&self, id: Uuid, rec: AssetRec) -> Result<Asset, Error> {
        let downloads = self.counter(&tree_keys::downloads(id))?.unwrap_or(0);
        rec.into_asset(id, downloads)
    }

    /// An asset that an index key names; its absence is corruption.
    fn indexed_asset(&self, id: Uuid) -> Result<Asset, Error> {
        self.load_asset(id)?
            .ok_or_else(|| Error::invalid("asset index", format!("entry for missing asset {id}")))
    }

    pub(crate) fn get_assets(&self, ids: &[Uuid]) -> Result<Vec<Asset>, Error> {
        let mut seen = HashSet::with_capacity(ids.len());
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            if seen.insert(id)
                && let Some(a) = self.load_asset(id)?
            {
                out.push(a);
            }
        }
        Ok(out)
    }

    pub(crate) fn list_assets(&self, q: &AssetQuery) -> Result<Page<Asset>, Error> {
        let scope = tree_keys::scope(tree_keys::family(q.status), q.asset_type);
        let desc = q.order == SortOrder::Desc;
        let per_page = u64::from(q.per_page);
        let offset = q.offset();

        // One tag or one workspace and nothing else: that list, paged like the plain lists,
        // with its kept count.
        let one_list = match (q.tags.as_slice(), q.workspace_id.as_deref()) {
            ([tag], None) => Some(List::Tag(tag)),
            ([], Some(workspace)) => Some(List::Workspace(workspace)),
            _ => None,
        };
        if let (Some(list), true, None, None) =
            (one_list, q.any_tags.is_empty(), &q.checksum, &q.search)
        {
            let prefix = tree_keys::list_prefix(list, q.sort, scope);
            let total = self.count(&tree_keys::count_list(scope, list))?;
            let ids = self.page_ids(
                &self.asset_idx_tags,
                &prefix,
                desc,
                offset,
                q.per_page,
                total,
            )?;
            let items = ids
                .into_iter()
                .map(|id| self.indexed_asset(id))
                .collect::<Result<_, _>>()?;
            return Ok(Page { items, total });
        }

        if q.search.is_some()
            || !q.tags.is_empty()
            || !q.any_tags.is_empty()
            || q.checksum.is_some()
            || q.workspace_id.is_some()
        {
            // Walk the smallest list that holds every match, in order, and keep the matches.
            let needle = q.search.as_deref().map(rules::fold_case);
            let mut total = 0u64;
            let mut items = Vec::new();
            for id in self.candidates(q, scope, desc)? {
                let id = id?;
                let rec = self.asset_rec(id)?.ok_or_else(|| {
                    Error::invalid("asset index", format!("entry for missing asset {id}"))
                })?;
                let matches = needle.as_deref().is_none_or(|n| {
                    rules::matches_search(&rec.title, rec.description.as_deref(), n)
                }) && rules::matches_tags(&rec.tags, q)
                    && q.checksum.is_none_or(|c| rec.checksum == Some(c))
                    && q.workspace_id
                        .as_ref()
                        .is_none_or(|w| rec.workspace_id.as_ref() == Some(w))
                    && q.status.admits(rec.published)
                    && q.asset_type
                        .is_none_or(|t| tree_keys::type_code(t) == rec.asset_type);
                if !matches {
                    continue;
                }
                if total >= offset && (items.len() as u64) < per_page {
                    items.push(self.complete_asset(id, rec)?);
                }
                total += 1;
            }
            return Ok(Page { items, total });
        }

        let tree = self.asset_index_tree(q.sort);
        let total = self.asset_total(q.status, q.asset_type)?;
        let ids = self.page_ids(tree, &[scope], desc, offset, q.per_page, total)?;
        let items = ids
            .into_iter()
            .map(|id| self.indexed_asset(id))
            .collect::<Result<_, _>>()?;
        Ok(Page { items, total })
    }

    /// The ids of a list that holds every asset a filtered query matches, in the query's
    /// order: the assets with the checksum (sorted here: there are few), else the shortest
    /// list every match is in (of a tag it must have, or of its workspace), else the lists of
    /// the `any_tag` tags merged, else the list of the status and type.
    fn candidates(
        &self,
        q: &AssetQuery,
        scope: u8,
        desc: bool,
    ) -> Result<Box<dyn Iterator<Item = Result<Uuid, Error>> + '_>, Error> {
        if let Some(sum) = &q.checksum {
            let mut ids = Vec::new();
            for kv in self.asset_idx_checksum.scan_prefix(sum) {
                let (key, _) = kv?;
                ids.push(tree_keys::trailing_id(&key)?);
            }
            let ordered = self.in_list_order(ids, q, scope, desc)?;
            return Ok(Box::new(ordered.into_iter().map(Ok)));
        }
        // A text search: the assets whose folded title or description holds it, from the
        // texts kept in memory, not from a walk of the records.
        #[cfg(feature = "search")]
        if let Some(needle) = &q.search {
            let ids = self.haystack.matching(self, &rules::fold_case(needle))?;
            let ordered = self.in_list_order(ids, q, scope, desc)?;
            return Ok(Box::new(ordered.into_iter().map(Ok)));
        }
        let required: Vec<List<'_>> = q
            .tags
            .iter()
            .map(|tag| List::Tag(tag))
            .chain(q.workspace_id.as_deref().map(List::Workspace))
            .collect();
        if let Some(&first) = required.first() {
            let mut rarest = (u64::MAX, first);
            for &list in &required {
                let n = self.count(&tree_keys::count_list(scope, list))?;
                if n < rarest.0 {
                    rarest = (n, list);
                }
            }
            let prefix = tree_keys::list_prefix(rarest.1, q.sort, scope);
            return Ok(Box::new(
                self.scan(&self.asset_idx_tags, &prefix, desc)
                    .map(|kv| kv.and_then(|(k, _)| tree_keys::trailing_id(&k))),
            ));
        }
        if !q.any_tags.is_empty() {
            // Each tag's keys after its prefix are the sort key and the id, alike for every
            // tag: merged in one ordered set, an asset with two of them is there once.
            let mut merged = std::collections::BTreeSet::new();
            for tag in &q.any_tags {
                let prefix = tree_keys::list_prefix(List::Tag(tag), q.sort, scope);
                for kv in self.scan(&self.asset_idx_tags, &prefix, false) {
                    let (key, _) = kv?;
                    merged.insert(key[prefix.len()..].to_vec());
                }
            }
            let ordered: Vec<Vec<u8>> = if desc {
                merged.into_iter().rev().collect()
            } else {
                merged.into_iter().collect()
            };
            return Ok(Box::new(
                ordered.into_iter().map(|k| tree_keys::trailing_id(&k)),
            ));
        }
        let tree = self.asset_index_tree(q.sort);
        Ok(Box::new(self.scan(tree, &[scope], desc).map(|kv| {
            kv.and_then(|(k, _)| tree_keys::trailing_id(&k))
        })))
    }

    /// `ids` in the order of the list `q` asks for (its sort in `scope`, descending when
    /// `desc`), those no longer there left out.
    fn in_list_order(
        &self,
        ids: Vec<Uuid>,
        q: &AssetQuery,
        scope: u8,
        desc: bool,
    ) -> Result<Vec<Uuid>, Error> {
        let mut found = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(rec) = self.asset_rec(id)? {
                let sort_key = tree_keys::asset_index(
                    scope,
                    q.sort,
                    id,
                    &rec.created_at.time()?,
                    &rec.updated_at.time()?,
                    &rec.title,
                );
                found.push((sort_key, id));
            }
        }
        found.sort_unstable();
        if desc {
            found.reverse();
        }
        Ok(found.into_iter().map(|(_, id)| id).collect())
    }

    /// The number of assets of a status (and type), from the kept counts: the published
    /// count, the draft count, or both added up.
    fn asset_total(
        &self,
        status: AssetStatus,
        asset_type: Option<AssetType>,
    ) -> Result<u64, Error> {
        let mut total = 0u64;
        for published in [true, false] {
            if status.admits(published) {
                let n = self.count(&tree_keys::count_assets(published, asset_type))?;
                total = total.saturating_add(n);
            }
        }
        Ok(total)
    }

    /// Stores a new asset, its slug claim, download counter, index keys and counts in one
    /// transaction.
    pub(crate) fn insert_asset(&self, asset: Asset, event: &EventSlot) -> Result<Asset, Error> {
        let id = asset.id;
        let rec = AssetRec::new(&asset);
        let downloads = asset.download_count.to_be_bytes();

        let mut trees = vec![
            &self.assets,
            &self.asset_slugs,
            &self.counts,
            &self.counters,
            &self.events,
        ];
        trees.extend(self.index_trees());
        let slug = trees.as_slice().transaction(|trees| {
            let [assets, slugs, counts, counters, events, indexes @ ..] = trees.as_slice() else {
                return Err(abort(Error::invalid("transaction", "a tree is missing")));
            };
            if assets.get(id.as_bytes())?.is_some() {
                return Err(abort(Error::DuplicateId(id)));
            }
            let slug = claim_asset_slug(slugs, (rec.workspace_id.as_deref(), &rec.slug), id)?;
            let mut rec = rec.clone();
            rec.slug.clone_from(&slug);
            let value = encode(AssetRec::WHAT, &rec).map_err(abort)?;
            assets.insert(&id.as_bytes()[..], value)?;
            counters.insert(&tree_keys::downloads(id)[..], &downloads[..])?;
            tx::asset_keys(self.index_tx(indexes), counts, &asset, true)?;
            event.put(events, Written::AssetCreated(&asset))?;
            Ok(slug)
        })?;
        Ok(Asset { slug, ..asset })
    }
}

/// Claims `wanted`, or the first free one of `wanted-2`, `wanted-3`, ... for asset `id`, in
/// `workspace` (a claim `id` holds already is free to it).
///
/// Asset slugs are never released (a deleted asset's slug stays claimed by its id), so every
/// suffix below the stored hint is taken and the search can start there: the result is still
/// the first free one, found in O(1) reads however many assets share a title.
pub(crate) fn claim_asset_slug(
    slugs: &TransactionalTree,
    (workspace, wanted): (Option<&str>, &str),
    id: Uuid,
) -> Result<String, TxError> {
    let take = |slug: &str| -> Result<bool, TxError> {
        let key = tree_keys::asset_slug(workspace, slug);
        if let Some(holder) = slugs.get(&key)? {
            // Decode to notice corruption; any other holder means taken (an asset moved back
            // to a workspace finds its own old claim).
            let holder = decode_id("asset slug", &holder).map_err(abort)?;
            return Ok(holder == id);
        }
        slugs.insert(key, &id.as_bytes()[..])?;
        Ok(true)
    };
    if take(wanted)? {
        return Ok(wanted.to_owned());
    }
    let hint_key = tree_keys::asset_slug_hint(workspace, wanted);
    let mut n = match slugs.get(&hint_key)? {
        Some(v) => tree_keys::decode_u64("slug hint", &v)
            .map_err(abort)?
            .max(2),
        None => 2,
    };
    loop {
        let candidate = rules::slug_with_suffix(wanted, n);
        if take(&candidate)? {
            slugs.insert(hint_key, &(n.saturating_add(1)).to_be_bytes()[..])?;
            return Ok(candidate);
        }
        n = n
            .checked_add(1)
            .ok_or_else(|| abort(Error::TooLarge("no free slug suffix")))?;
    }
}

#[async_trait]
impl AssetStore for SledStore {
    // A page one of the kept lists answers (no search, one tag or workspace at most, no
    // checksum) near
    // the front is a few dozen point reads: it runs on the calling task, as a library of a
    // few hundred items does. A filter that walks and tests records, or a deep page, goes to
    // a blocking thread.
    async fn list_assets(&self, query: &AssetQuery) -> Result<Page<Asset>, StoreError> {
        let indexed = query.search.is_none()
            && query.checksum.is_none()
            && query.any_tags.is_empty()
            && query.tags.len() + usize::from(query.workspace_id.is_some()) <= 1;
        if indexed && query.offset().saturating_add(u64::from(query.per_page)) <= INLINE_PAGE_END {
            return self.point_read(|inner| inner.list_assets(query));
        }
        let query = query.clone();
        self.blocking(move |inner| inner.list_assets(&query)).await
    }

    async fn get_asset(&self, id: Uuid) -> Result<Option<Asset>, StoreError> {
        self.point_read(|inner| inner.load_asset(id))
    }

    async fn get_assets(&self, ids: &[Uuid]) -> Result<Vec<Asset>, StoreError> {
        let ids = ids.to_vec();
        self.blocking(move |inner| inner.get_assets(&ids)).await
    }

    async fn insert_asset(&self, asset: Asset, log: &Log) -> Result<Asset, StoreError> {
        let inserted = self
            .logged_write(log, move |inner, event| {
                let inserted = inner.insert_asset(asset, event)?;
                inner.search_created(&inserted);
                Ok(inserted)
            })
            .await?;
        self.assets_changed([inserted.id]);
        Ok(inserted)
    }

    async fn update_asset(
        &self,
        id: Uuid,
        change: &AssetChange,
        log: &Log,
    ) -> Result<Option<AssetUpdate>, StoreError> {
        let change = change.clone();
        let update = self
            .logged_write(log, move |inner, event| {
                let update = inner.update_asset(id, &change, event)?;
                if update.as_ref().is_some_and(|u| u.before != u.after) {
                    inner.search_moved(&[id]);
                }
                Ok(update)
            })
            .await?;
        self.inner.asset_versions.updated(&update);
        Ok(update)
    }

    async fn delete_asset(
        &self,
        id: Uuid,
        force: bool,
        log: &Log,
    ) -> Result<AssetDeletion, StoreError> {
        let deletion = self
            .logged_write(log, move |inner, event| {
                let deletion = inner.delete_asset(id, force, event)?;
                if matches!(deletion, AssetDeletion::Deleted(_)) {
                    inner.search_moved(&[id]);
                }
                Ok(deletion)
            })
            .await?;
        if matches!(deletion, AssetDeletion::Deleted(_)) {
            self.assets_changed([id]);
        }
        Ok(deletion)
    }

    async fn update_assets(
        &self,
        ids: &[Uuid],
        change: &AssetChange,
        log: &Log,
    ) -> Result<BulkOutcome<AssetUpdate>, StoreError> {
        let (ids, change) = (ids.to_vec(), change.clone());
        let outcome = self
            .logged_bulk_write(ids.len(), log, move |inner, slots| {
                let outcome = inner.update_assets(&ids, &change, slots)?;
                if let BulkOutcome::Done(updates) = &outcome {
                    let moved: Vec<Uuid> = updates.iter().map(|u| u.after.id).collect();
                    inner.search_moved(&moved);
                }
                Ok(outcome)
            })
            .await?;
        if let BulkOutcome::Done(updates) = &outcome {
            self.inner.asset_versions.updated(updates);
        }
        Ok(outcome)
    }

    async fn delete_assets(
        &self,
        ids: &[Uuid],
        force: bool,
        log: &Log,
    ) -> Result<BulkOutcome<Asset>, StoreError> {
        let ids = ids.to_vec();
        let outcome = self
            .logged_bulk_write(ids.len(), log, move |inner, slots| {
                let outcome = inner.delete_assets(&ids, force, slots)?;
                if let BulkOutcome::Done(deleted) = &outcome {
                    let moved: Vec<Uuid> = deleted.iter().map(|a| a.id).collect();
                    inner.search_moved(&moved);
                }
                Ok(outcome)
            })
            .await?;
        if let BulkOutcome::Done(deleted) = &outcome {
            self.assets_changed(deleted.iter().map(|a| a.id));
        }
        Ok(outcome)
    }

    async fn list_tags(&self, limit: u32) -> Result<Vec<TagCount>, StoreError> {
        self.blocking(move |inner| inner.list_tags(limit)).await
    }

    async fn asset_usage(&self, id: Uuid) -> Result<Vec<LibraryUse>, StoreError> {
        self.blocking(move |inner| inner.asset_usage(id)).await
    }

    async fn record_download(&self, id: Uuid) -> Result<(), StoreError> {
        let count = self.point_read(|inner| inner.increment(&tree_keys::downloads(id)))?;
        if count.is_some() {
            // A download count is shown, not sorted or filtered by: no list moves.
            self.inner.asset_versions.counted([id]);
        }
        Ok(())
    }

    async fn assets_version(&self) -> Result<u64, StoreError> {
        Ok(self.inner.asset_versions.all())
    }

    async fn asset_version(&self, id: Uuid) -> Result<u64, StoreError> {
        Ok(self.inner.asset_versions.of(id))
    }

    async fn asset_versions(&self, ids: &[Uuid]) -> Result<Vec<u64>, StoreError> {
        Ok(ids
            .iter()
            .map(|&id| self.inner.asset_versions.of(id))
            .collect())
    }

    async fn list_version(&self, query: &AssetQuery) -> Result<Option<u64>, StoreError> {
        Ok(Some(self.inner.asset_versions.list(query)))
    }
}

impl SledStore {
    /// Drops the assets kept from earlier reads, so that the reads after it count what a
    /// first read of their assets costs ([`SledStore::records_read`]; feature `stats`).
    #[cfg(feature = "stats")]
    pub fn forget_kept_assets(&self) {
        self.inner.kept.assets.clear();
    }

    /// Moves the content versions of the assets `ids` (and of all the assets), after a write
    /// that changed them is committed (so a reader that sees a new version reads the write).
    pub(crate) fn assets_changed(&self, ids: impl IntoIterator<Item = Uuid>) {
        self.inner.asset_versions.moved(ids);
    }
}

impl Inner {
    /// Moves what the store keeps in memory of the assets `ids` for search (feature
    /// `search`): the words of their fields and the folded texts the list's `search=` reads.
    /// Called on the writing (blocking) thread right after the transaction that changed them
    /// commits, before the write is answered: their records are read again, and sled's reads
    /// wait for the transactions in flight, which an async worker must not.
    pub(crate) fn search_moved(&self, ids: &[Uuid]) {
        #[cfg(feature = "search")]
        {
            self.search.fields.changed(self, ids);
            self.haystack.changed(self, ids.iter().copied());
        }
        #[cfg(not(feature = "search"))]
        let _ = ids;
    }
    /// [`Inner::search_moved`] for `asset`, just created: the words are made from it, and no
    /// record is read for the index of the fields (`FieldWords::created` in `field_words.rs`).
    pub(crate) fn search_created(&self, asset: &Asset) {
        #[cfg(feature = "search")]
        {
            self.search.fields.created(asset, self.search.language);
            self.haystack.changed(self, [asset.id]);
        }
        #[cfg(not(feature = "search"))]
        let _ = asset;
    }
}
