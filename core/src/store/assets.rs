//! [`AssetStore`]: assets, their lists, changes and download counters.

use async_trait::async_trait;
use uuid::Uuid;

use super::rules;
use crate::change::{AssetChange, AssetDeletion, AssetUpdate, BulkOutcome, LibraryUse};
use crate::error::StoreError;
use crate::events::Log;
use crate::model::{Asset, Page, TagCount};
use crate::query::AssetQuery;

/// Assets: their records, lists, changes, deletes, the libraries that hold them, and their
/// download counters.
#[async_trait]
pub trait AssetStore: Send + Sync + 'static {
    /// One page of the assets matching `query`, and the number of assets matching it in all.
    ///
    /// - `status` keeps published assets ([`crate::AssetStatus::Published`]), drafts, or both.
    /// - `asset_type` keeps assets of that type; `search` keeps assets whose title or
    ///   description contains it, compared in Unicode lowercase.
    /// - `tags` keeps assets having every one of those tag keys, `any_tags` (when not empty)
    ///   assets having at least one, an asset's tags compared by their keys
    ///   ([`crate::validate::tag_key`]); `checksum` keeps assets whose file has that SHA-256.
    /// - The order is `query.sort` (titles compared in Unicode lowercase) in `query.order`,
    ///   then the id in the same direction, so the order is total and pages never repeat or
    ///   skip an asset.
    /// - The page holds at most `query.per_page` assets starting at `query.offset()`; a page
    ///   past the end is empty with the right total.
    async fn list_assets(&self, query: &AssetQuery) -> Result<Page<Asset>, StoreError>;

    /// The asset with this id, published or not.
    async fn get_asset(&self, id: Uuid) -> Result<Option<Asset>, StoreError>;

    /// The assets with these ids that exist, in any order, each once.
    async fn get_assets(&self, ids: &[Uuid]) -> Result<Vec<Asset>, StoreError>;

    /// Stores a new asset and returns it as stored.
    ///
    /// `asset.slug` is the wanted slug: the store keeps it when no other asset has it, else
    /// uses a free one of `slug-2`, `slug-3`, ... (one after another creates the numbers in
    /// order; concurrent creates of one slug may leave a number out rather than wait for each
    /// other, and a number may be skipped after a crash). Slugs stay unique. The asset, its indexes and counts
    /// land together, durably, before this returns. An asset with the same id is
    /// [`StoreError::DuplicateId`], and nothing changes.
    async fn insert_asset(&self, asset: Asset, log: &Log) -> Result<Asset, StoreError>;

    /// Applies `change` to the asset `id` and returns it just before and just after (`None`,
    /// changing nothing, if there is no such asset).
    ///
    /// The new asset is [`AssetChange::apply`] of the asset as stored when the change lands,
    /// so concurrent changes of one asset never mix: each applies to the result of another.
    /// When `apply` answers `None` nothing is written and `after` equals `before`. Otherwise
    /// the asset, its indexes and counts (a change of `published` moves it into or out of the
    /// lists, and out of or into the asset counts of the libraries holding it) and the content
    /// version of every library holding it (see [`LibraryStore::record_library_view`]) change in
    /// one durable change. The download count is the current one.
    ///
    /// A change that moves the asset to another workspace ([`AssetChange::workspace`]) is
    /// [`StoreError::Refused`] with [`ChangeRefused::HeldInAnotherWorkspace`](crate::ChangeRefused::HeldInAnotherWorkspace)
    /// while a library that may not hold it there ([`crate::may_hold`]) holds it, and
    /// otherwise takes the asset's slug in the new workspace if it is free there, else the
    /// first free one of `slug-2`, `slug-3`, ...; in the same change.
    async fn update_asset(
        &self,
        id: Uuid,
        change: &AssetChange,
        log: &Log,
    ) -> Result<Option<AssetUpdate>, StoreError>;

    /// Applies `change` to every asset of `ids` (each id once) in one durable change, as
    /// [`AssetStore::update_asset`] does to one: all of them, or none. A bulk change moves no
    /// asset: its `change` has no [`AssetChange::workspace`] (a store may fail on one).
    ///
    /// When an id names no asset, or an asset cannot take the change
    /// ([`AssetChange::apply`] fails), nothing changes and the answer is
    /// [`BulkOutcome::Refused`] naming every such asset, in the order of `ids`. Otherwise the
    /// answer is [`BulkOutcome::Done`] with each asset before and after, in the order of
    /// `ids`, and each asset that changed logs its own event.
    async fn update_assets(
        &self,
        ids: &[Uuid],
        change: &AssetChange,
        log: &Log,
    ) -> Result<BulkOutcome<AssetUpdate>, StoreError>;

    /// Deletes every asset of `ids` (each id once) in one durable change, as
    /// [`AssetStore::delete_asset`] does one: all of them, or none.
    ///
    /// When an id names no asset, or libraries hold an asset and `force` is false, nothing
    /// changes and the answer is [`BulkOutcome::Refused`] naming every such asset in the
    /// order of `ids`. Otherwise [`BulkOutcome::Done`] with each record as it was, in the
    /// order of `ids`, each delete logging its own event.
    async fn delete_assets(
        &self,
        ids: &[Uuid],
        force: bool,
        log: &Log,
    ) -> Result<BulkOutcome<Asset>, StoreError>;

    /// The tags of published assets, each with how many published assets have it (tags
    /// compared by their keys, and named by them), most used first, then by key; at most
    /// `limit` of them. Exact after every write.
    async fn list_tags(&self, limit: u32) -> Result<Vec<TagCount>, StoreError>;

    /// Deletes the asset `id`, atomically.
    ///
    /// When libraries hold the asset and `force` is false, nothing changes and the answer is
    /// [`AssetDeletion::InUse`] with those libraries, as [`AssetStore::asset_usage`] lists them.
    /// Otherwise the asset, its indexes, counts and download counter, and its entries in
    /// every library (whose content versions and asset counts change with them) go in one
    /// durable change, and the answer is [`AssetDeletion::Deleted`] with the record as it
    /// was. A deleted asset's slug may stay reserved. [`AssetDeletion::NotFound`] if there is
    /// no such asset.
    async fn delete_asset(
        &self,
        id: Uuid,
        force: bool,
        log: &Log,
    ) -> Result<AssetDeletion, StoreError>;

    /// The libraries (published or not) holding the asset `id`, newest `created_at` first,
    /// then by id descending; empty for an asset no library holds or that does not exist.
    async fn asset_usage(&self, id: Uuid) -> Result<Vec<LibraryUse>, StoreError>;

    /// Adds one download to the asset `id` (an asset that does not exist counts nothing).
    ///
    /// Concurrent calls never lose an increment, and every read through this store after the
    /// call returns ([`AssetStore::get_asset`], [`AssetStore::get_assets`],
    /// [`AssetStore::list_assets`]) shows it. A store may keep increments in memory and write
    /// them in batches (see DESIGN "Durability": a crash loses at most the last second's),
    /// so a store shared by several processes shows one process's downloads to the others
    /// within one second.
    async fn record_download(&self, id: Uuid) -> Result<(), StoreError>;

    /// The content version of the assets: a number that changes on every write that can
    /// change what [`AssetStore::list_assets`] or [`AssetStore::get_asset`] return —
    /// [`AssetStore::insert_asset`], [`AssetStore::update_asset`] that changes something,
    /// [`AssetStore::delete_asset`] that deletes, and [`AssetStore::record_download`].
    ///
    /// A version is never reused while the store is open, and what those reads return after
    /// this call is at least as new as the version returned, so a reader may keep a rendered
    /// list page or asset under the version and reuse it while the version stays the same.
    /// Every write through this store moves it before the write returns. A store shared by
    /// several processes moves it for another process's write at once with
    /// [`ReplicaSync::Strict`](crate::ReplicaSync::Strict), and within 100 ms with
    /// [`ReplicaSync::Notify`](crate::ReplicaSync::Notify) (see
    /// [`MetaStore::use_replica_sync`]).
    async fn assets_version(&self) -> Result<u64, StoreError>;

    /// The content version of asset `id`: a number that changes on every write that can
    /// change what [`AssetStore::get_asset`] returns for `id`, with the promises of
    /// [`AssetStore::assets_version`] (never reused for `id` while the store is open; what
    /// `get_asset(id)` returns after this call is at least as new; moved before this store's
    /// writes return, and for other processes' writes as [`AssetStore::assets_version`] is).
    /// It may also move when other assets change. Core keeps a rendered asset under it, so a
    /// write of one asset leaves the others' kept answers in place.
    ///
    /// The default is [`AssetStore::assets_version`], which moves on every asset write; a
    /// store may keep versions per asset (or per group of assets) with
    /// [`AssetVersions`](super::AssetVersions).
    async fn asset_version(&self, id: Uuid) -> Result<u64, StoreError> {
        let _ = id;
        self.assets_version().await
    }

    /// The content versions of the assets `ids`, in their order: [`AssetStore::asset_version`]
    /// of each. The default asks for each in turn; a store that keeps them in memory answers
    /// them at once.
    async fn asset_versions(&self, ids: &[Uuid]) -> Result<Vec<u64>, StoreError> {
        let mut versions = Vec::with_capacity(ids.len());
        for &id in ids {
            versions.push(self.asset_version(id).await?);
        }
        Ok(versions)
    }

    /// The version of the list `query` pages through, for a store that keeps one: a number
    /// that changes on every write that can change which assets [`AssetStore::list_assets`]
    /// returns for `query` on any page, in what order, or its total, with the promises of
    /// [`AssetStore::assets_version`] (never reused while the store is open; what
    /// `list_assets(query)` returns after this call is at least as new; moved before this
    /// store's writes return, and for other processes' writes as
    /// [`AssetStore::assets_version`] is).
    ///
    /// A write that changes only what a list shows of its assets (a description, a download
    /// count) need not move it: core keeps a rendered list page under this version and the
    /// [`AssetStore::asset_version`] of each asset on it ([`AssetStore::asset_versions`]),
    /// and answers from it while none of them moved.
    ///
    /// A store that keeps list versions keeps its asset versions on the scale of the assets
    /// version: [`AssetStore::asset_version`] is never above the [`AssetStore::assets_version`]
    /// read after it, and a write of the asset moves it above every assets version read before
    /// that move. So core tells a write of a page's asset that came while the page was read
    /// (its version is past the assets version read before the page) from the writes of other
    /// assets, which leave the page as it is.
    ///
    /// The default is `None`: the store keeps no version per list, and core keeps a list
    /// page under [`AssetStore::assets_version`] alone, so any asset write renders it again.
    /// A store may keep a version per list order with [`AssetVersions`](super::AssetVersions),
    /// whose versions keep these promises.
    async fn list_version(&self, query: &AssetQuery) -> Result<Option<u64>, StoreError> {
        let _ = query;
        Ok(None)
    }

    /// [`AssetStore::list_tags`] of the published assets of `workspace` alone. The default
    /// walks the workspace's published assets a page at a time
    /// ([`AssetStore::list_assets`]); a store may count from what it keeps.
    async fn list_workspace_tags(
        &self,
        workspace: &str,
        limit: u32,
    ) -> Result<Vec<TagCount>, StoreError> {
        let mut counts: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
        let mut query = AssetQuery {
            per_page: 100,
            workspace_id: Some(workspace.to_owned()),
            ..AssetQuery::default()
        };
        loop {
            let page = self.list_assets(&query).await?;
            for asset in &page.items {
                for key in rules::tag_keys(&asset.tags) {
                    *counts.entry(key).or_default() += 1;
                }
            }
            if page.items.len() < query.per_page as usize {
                break;
            }
            query.page += 1;
        }
        Ok(rules::top_tags(counts, limit))
    }
}
