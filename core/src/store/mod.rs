//! The [`Store`] traits: what a storage backend must do, split by concern, and the
//! guarantees each method gives.
//!
//! [`Store`] is what the contract needs: [`AssetStore`], [`LibraryStore`], [`KeyStore`] and
//! [`MetaStore`]. Each capability that keeps records of its own has a trait of its own,
//! which a store implements when it keeps them and hands out through [`MetaStore`]'s
//! accessors ([`MetaStore::pass_store`], [`MetaStore::event_store`],
//! [`MetaStore::webhook_store`], [`MetaStore::upload_store`]), as object_store keeps
//! `MultipartStore` apart from `ObjectStore`: [`PassStore`], [`EventStore`],
//! [`WebhookStore`], [`UploadStore`]. A store without one serves everything else; the
//! capability's routes then answer 404, as unknown routes do.
//!
//! Code that calls a store's methods on a concrete type (a test on a `SledStore`, say) brings
//! the traits into scope with `use assetlib_core::store::prelude::*;`; through
//! `Arc<dyn Store>` the four of [`Store`] are in scope already.
//!
//! Every sentence of a method's documentation is checked by the conformance suite in
//! [`crate::testing`] (feature `testing`), one group per trait, which every backend runs for
//! the traits it implements.

mod events;
mod keys;
mod passes;
pub mod rules;
mod uploads;
mod webhooks;

pub use events::EventStore;
pub use keys::KeyStore;
pub use passes::PassStore;
pub use uploads::{UploadLease, UploadStore};
pub use webhooks::WebhookStore;

use async_trait::async_trait;
use uuid::Uuid;

use crate::change::{AssetChange, AssetDeletion, AssetUpdate, BulkOutcome, LibraryUse};
use crate::error::StoreError;
use crate::events::Log;
use crate::model::{
    Asset, Holders, LibraryRows, LibrarySummary, LibraryWrite, Page, PutOutcome, SlugHolder,
    TagCount, ViewCount,
};
use crate::operations::Capability;
use crate::query::{AssetQuery, LibraryQuery};

/// The store traits, to call their methods on a concrete store type.
pub mod prelude {
    pub use super::{
        AssetStore, EventStore, KeyStore, LibraryStore, MetaStore, PassStore, Store, UploadStore,
        WebhookStore,
    };
    pub use crate::events::{Log, Written};
}

/// A storage backend for the contract: assets, libraries, API keys and the store's own
/// settings (the four traits at once, by a blanket impl).
///
/// Filtering, sorting, paging and counting happen inside the store, using its indexes; core
/// never loads everything to do them itself. A missing record is `Ok(None)` (or `false`), not
/// an error. Every method that changes more than one record changes all of them or none, and
/// returns success only once the change is durable.
///
/// # Implementing a Store
/// Implement the four traits as their methods' docs say, then run the conformance suite
/// (feature `testing`) from a test, with a fresh store per case: [`crate::testing::run_all`]
/// runs the groups of [`Store`] and of each capability's trait the store hands out
/// ([`WebhookStore`]'s only with an [`EventStore`]: webhooks deliver the log). A store
/// that implements only [`Store`] serves the spec's endpoints, the asset lifecycle,
/// downloads and the website features. This one keeps API keys and the signing secret in
/// places of its own and the rest in a [`crate::MemoryStore`]; it keeps nothing for passes,
/// events, webhooks or resumable uploads, so their routes answer 404.
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Mutex;
///
/// use assetlib_core::events::Log;
/// use assetlib_core::store::{AssetStore, KeyStore, LibraryStore, MetaStore};
/// use assetlib_core::{
///     ApiKey, Asset, AssetChange, AssetDeletion, AssetQuery, AssetUpdate, BulkOutcome, Config,
///     Files, Holders, LibraryQuery, LibraryRows, LibrarySummary, LibraryUse, LibraryWrite,
///     MemoryStore, Operation, Page, PutOutcome, RawRequest, Scope, Service, SlugHolder,
///     StoreError, TagCount, ViewCount, async_trait,
/// };
/// use chrono::{DateTime, Utc};
/// use uuid::Uuid;
///
/// /// Keys and the signing secret in places of their own; assets and libraries in memory.
/// #[derive(Default)]
/// struct MyStore {
///     rest: MemoryStore,
///     keys: Mutex<HashMap<Uuid, ApiKey>>,
///     secret: Mutex<Option<[u8; 32]>>,
/// }
///
/// #[async_trait]
/// impl MetaStore for MyStore {
///     async fn signing_secret(&self, candidate: [u8; 32]) -> Result<[u8; 32], StoreError> {
///         Ok(*self.secret.lock().unwrap().get_or_insert(candidate))
///     }
///     async fn rotate_signing_secret(&self, secret: [u8; 32]) -> Result<(), StoreError> {
///         *self.secret.lock().unwrap() = Some(secret);
///         Ok(())
///     }
/// }
///
/// #[async_trait]
/// impl KeyStore for MyStore {
///     async fn insert_key(&self, key: ApiKey, _log: &Log) -> Result<(), StoreError> {
///         let mut keys = self.keys.lock().unwrap();
///         if keys.contains_key(&key.id) {
///             return Err(StoreError::DuplicateId { id: key.id });
///         }
///         if keys.values().any(|k| k.key_hash == key.key_hash) {
///             return Err(StoreError::DuplicateKeyHash);
///         }
///         keys.insert(key.id, key);
///         Ok(())
///     }
///     async fn find_key(&self, hash: &[u8; 32]) -> Result<Option<ApiKey>, StoreError> {
///         let keys = self.keys.lock().unwrap();
///         Ok(keys.values().find(|k| &k.key_hash == hash).cloned())
///     }
///     async fn list_keys(&self) -> Result<Vec<ApiKey>, StoreError> {
///         let mut keys: Vec<ApiKey> = self.keys.lock().unwrap().values().cloned().collect();
///         keys.sort_by_key(|k| (k.created_at, k.id));
///         Ok(keys)
///     }
///     async fn revoke_key(
///         &self,
///         id: Uuid,
///         at: DateTime<Utc>,
///         _log: &Log,
///     ) -> Result<bool, StoreError> {
///         let mut keys = self.keys.lock().unwrap();
///         let Some(key) = keys.get_mut(&id) else { return Ok(false) };
///         key.revoked_at.get_or_insert(at);
///         Ok(true)
///     }
/// }
///
/// #[async_trait]
/// impl AssetStore for MyStore {
///     async fn list_assets(&self, q: &AssetQuery) -> Result<Page<Asset>, StoreError> {
///         self.rest.list_assets(q).await
///     }
///     async fn get_asset(&self, id: Uuid) -> Result<Option<Asset>, StoreError> {
///         self.rest.get_asset(id).await
///     }
///     async fn get_assets(&self, ids: &[Uuid]) -> Result<Vec<Asset>, StoreError> {
///         self.rest.get_assets(ids).await
///     }
///     async fn insert_asset(&self, asset: Asset, log: &Log) -> Result<Asset, StoreError> {
///         self.rest.insert_asset(asset, log).await
///     }
///     async fn update_asset(
///         &self,
///         id: Uuid,
///         change: &AssetChange,
///         log: &Log,
///     ) -> Result<Option<AssetUpdate>, StoreError> {
///         self.rest.update_asset(id, change, log).await
///     }
///     async fn delete_asset(
///         &self,
///         id: Uuid,
///         force: bool,
///         log: &Log,
///     ) -> Result<AssetDeletion, StoreError> {
///         self.rest.delete_asset(id, force, log).await
///     }
///     async fn update_assets(
///         &self,
///         ids: &[Uuid],
///         change: &AssetChange,
///         log: &Log,
///     ) -> Result<BulkOutcome<AssetUpdate>, StoreError> {
///         self.rest.update_assets(ids, change, log).await
///     }
///     async fn delete_assets(
///         &self,
///         ids: &[Uuid],
///         force: bool,
///         log: &Log,
///     ) -> Result<BulkOutcome<Asset>, StoreError> {
///         self.rest.delete_assets(ids, force, log).await
///     }
///     async fn list_tags(&self, limit: u32) -> Result<Vec<TagCount>, StoreError> {
///         self.rest.list_tags(limit).await
///     }
///     async fn asset_usage(&self, id: Uuid) -> Result<Vec<LibraryUse>, StoreError> {
///         self.rest.asset_usage(id).await
///     }
///     async fn record_download(&self, id: Uuid) -> Result<(), StoreError> {
///         self.rest.record_download(id).await
///     }
///     async fn assets_version(&self) -> Result<u64, StoreError> {
///         self.rest.assets_version().await
///     }
/// }
///
/// #[async_trait]
/// impl LibraryStore for MyStore {
///     async fn list_libraries(
///         &self,
///         q: &LibraryQuery,
///     ) -> Result<Page<LibrarySummary>, StoreError> {
///         self.rest.list_libraries(q).await
///     }
///     async fn load_library(&self, id: Uuid) -> Result<Option<LibraryRows>, StoreError> {
///         self.rest.load_library(id).await
///     }
///     async fn put_library(
///         &self,
///         write: LibraryWrite,
///         log: &Log,
///     ) -> Result<PutOutcome, StoreError> {
///         self.rest.put_library(write, log).await
///     }
///     async fn libraries_by_slug(&self, slug: &str) -> Result<Vec<SlugHolder>, StoreError> {
///         self.rest.libraries_by_slug(slug).await
///     }
///     async fn delete_library(&self, id: Uuid, log: &Log) -> Result<bool, StoreError> {
///         self.rest.delete_library(id, log).await
///     }
///     async fn record_library_view(&self, id: Uuid) -> Result<Option<ViewCount>, StoreError> {
///         self.rest.record_library_view(id).await
///     }
///     async fn published_holders(&self, ids: &[Uuid]) -> Result<Vec<Holders>, StoreError> {
///         self.rest.published_holders(ids).await
///     }
/// }
///
/// // Every rule of the four traits, each on a fresh store; the groups of the capabilities'
/// // traits are not run, since this store hands none of them out.
/// # tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
/// #     .unwrap().block_on(async {
/// assetlib_core::testing::run_all(|| async { (MyStore::default(), ()) }).await;
///
/// // It serves the spec: a key, an empty asset list; passes, which it does not keep, are no
/// // route.
/// let service = Service::new(MyStore::default(), Files::memory(), Config::default());
/// let (_, key) = service.create_key("docs", Scope::ALL.to_vec(), None).await.unwrap();
/// let auth = format!("Bearer {key}");
/// let request = || RawRequest { authorization: Some(auth.as_bytes()), ..RawRequest::default() };
/// let listed = service.handle(Operation::ListAssets, &[], request()).await;
/// assert_eq!(listed.status, 200);
/// let library = Uuid::new_v4().to_string();
/// let passes = service.handle(Operation::ListPasses, &[&library], request()).await;
/// assert_eq!(passes.status, 404);
/// # });
/// ```
///
/// Keep the methods small and exact; conveniences belong in [`crate::Service`].
pub trait Store: AssetStore + LibraryStore + KeyStore + MetaStore {}

impl<T> Store for T where T: AssetStore + LibraryStore + KeyStore + MetaStore {}

impl dyn Store {
    /// Whether the store keeps the records `capability` needs: the trait of passes, events
    /// or uploads it hands out, or for webhooks both their trait and the event log they send;
    /// a capability that keeps no records of its own needs none.
    pub fn keeps(&self, capability: Capability) -> bool {
        match capability {
            Capability::Passes => self.pass_store().is_some(),
            Capability::Events => self.event_store().is_some(),
            Capability::Webhooks => self.webhook_store().is_some() && self.event_store().is_some(),
            Capability::Uploads => self.upload_store().is_some(),
            _ => true,
        }
    }
}

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

/// Libraries: lists, whole loads for the detail page, atomic writes, slugs, deletes, and
/// their view counters.
#[async_trait]
pub trait LibraryStore: Send + Sync + 'static {
    /// One page of published libraries (optionally of one workspace), newest `published_at`
    /// first, then by id descending, with each library's count of published assets (exact
    /// after every asset change and delete); and the number of such libraries in all.
    async fn list_libraries(
        &self,
        query: &LibraryQuery,
    ) -> Result<Page<LibrarySummary>, StoreError>;

    /// The library with this id (published or not), its sections, and its entries joined with
    /// their assets' fields, in one call.
    async fn load_library(&self, id: Uuid) -> Result<Option<LibraryRows>, StoreError>;

    /// Creates or replaces a whole library, atomically: readers see the old document or the
    /// new one, never a mix.
    ///
    /// On replace the store keeps the existing `created_at`, `view_count` and `published_at`;
    /// `published_at` is set to `library.updated_at` when the library is published and had
    /// none. Slugs are unique among the libraries of a workspace (and among those of no
    /// workspace): a given slug (`slug_given`) that another library of the same workspace
    /// holds is [`StoreError::SlugTaken`]; a slug made from the title gets the first free
    /// `-2`, `-3`, ... suffix there. A library never clashes with itself.
    ///
    /// Every entry's asset must exist when the change lands (drafts may be placed): an entry
    /// of a missing asset is [`StoreError::UnknownAsset`], and nothing changes. So a library
    /// write racing [`AssetStore::delete_asset`] of an asset it places either fails or makes the
    /// delete see the library.
    /// Likewise every entry's asset must be one the library may hold ([`crate::may_hold`])
    /// when the change lands: else [`StoreError::AssetOfAnotherWorkspace`], and nothing
    /// changes. So a library write racing a move of an asset it places either fails or makes
    /// the move see the library.
    async fn put_library(&self, write: LibraryWrite, log: &Log) -> Result<PutOutcome, StoreError>;

    /// The libraries (published or not) whose slug is `slug`: at most one per workspace,
    /// ordered by workspace, the one of no workspace first.
    async fn libraries_by_slug(&self, slug: &str) -> Result<Vec<SlugHolder>, StoreError>;

    /// The workspace of the library `id` (published or not): `None` when there is no such
    /// library, `Some(None)` for one of no workspace. What a workspace key's request asks
    /// before it touches a library. The default loads the whole library
    /// ([`LibraryStore::load_library`]); a store answers from the library's record alone.
    async fn library_workspace(&self, id: Uuid) -> Result<Option<Option<String>>, StoreError> {
        Ok(self
            .load_library(id)
            .await?
            .map(|rows| rows.library.settings.workspace_id))
    }

    /// Deletes a library with its sections, entries and passes (not its assets), in one
    /// change. `false` if there was none.
    async fn delete_library(&self, id: Uuid, log: &Log) -> Result<bool, StoreError>;

    /// Adds one view to a published library and returns the new count with the library's
    /// content version ([`ViewCount`]); `None`, counting nothing, if there is no such library
    /// or it is a draft. Concurrent calls never lose an increment.
    ///
    /// The version changes on every write that can change the library's detail page other
    /// than views: [`LibraryStore::put_library`], [`LibraryStore::delete_library`] followed by a new
    /// library with the same id, [`AssetStore::update_asset`] that changes an asset the library
    /// holds, and [`AssetStore::delete_asset`] that removes one from it.
    /// A version is never reused for a library, and what [`LibraryStore::load_library`] returns
    /// after this call is at least as new as the version returned, so a reader may keep a
    /// rendered page under its version and reuse it while the version stays the same. A
    /// write through this store moves it before the write returns; another process's write
    /// moves it as [`AssetStore::assets_version`] says.
    ///
    /// The count includes this view and every earlier one through this store; a store
    /// shared by several processes may keep increments in memory and write them in batches,
    /// so the count includes the other processes' views of more than one second ago.
    async fn record_library_view(&self, id: Uuid) -> Result<Option<ViewCount>, StoreError>;

    /// [`LibraryStore::record_library_view`] for a caller bound to `workspace`: `None`,
    /// counting nothing, for a library of another workspace or of none, as for a missing
    /// one. The default asks [`LibraryStore::library_workspace`] first; a store may answer
    /// from the record it reads to count the view.
    async fn record_library_view_in(
        &self,
        id: Uuid,
        workspace: &str,
    ) -> Result<Option<ViewCount>, StoreError> {
        match self.library_workspace(id).await? {
            Some(Some(found)) if found == workspace => self.record_library_view(id).await,
            _ => Ok(None),
        }
    }

    /// For each of these assets that a published library holds: whether a published paid
    /// library holds it, and whether a published free one does (each asset once, in any
    /// order; none for an asset no published library holds). The paid-file rule of downloads
    /// reads it, with or without library passes.
    async fn published_holders(&self, asset_ids: &[Uuid]) -> Result<Vec<Holders>, StoreError>;
}

/// What the store keeps for the service as a whole: the signing secret, and the flush on
/// shutdown.
#[async_trait]
pub trait MetaStore: Send + Sync + 'static {
    /// The store's secret for signing download links: the first call keeps `candidate`
    /// (32 random bytes the caller made) durably and returns it; every later call, from any
    /// process sharing the store, returns that same secret and ignores its candidate.
    /// Concurrent first calls all return the one secret kept.
    async fn signing_secret(&self, candidate: [u8; 32]) -> Result<[u8; 32], StoreError>;

    /// Replaces the signing secret with `secret` durably (made one if there was none): every
    /// later [`MetaStore::signing_secret`] call, from any process sharing the store, returns it,
    /// so links signed under the old one stop working.
    async fn rotate_signing_secret(&self, secret: [u8; 32]) -> Result<(), StoreError>;

    /// Makes every acknowledged write durable, and writes the counters kept in memory;
    /// called on shutdown. Stores that flush on every write may do nothing.
    async fn flush(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// How this store, when several processes share it, keeps versions current
    /// ([`crate::Config::replica_sync`]; [`crate::Service::new`] passes it on). A store one
    /// process owns sees every write itself and ignores it (the default).
    fn use_replica_sync(&self, mode: crate::ReplicaSync) {
        let _ = mode;
    }

    /// The store's library passes, when it keeps them (the `passes` capability); `None` (the
    /// default) otherwise.
    fn pass_store(&self) -> Option<&dyn PassStore> {
        None
    }

    /// The store's event log, when it keeps one (the `events` capability, and `webhooks`,
    /// which sends its events); `None` (the default) otherwise. A store that keeps one logs
    /// every write's event in the write's own atomic change.
    fn event_store(&self) -> Option<&dyn EventStore> {
        None
    }

    /// The store's webhooks and their deliveries, when it keeps them (the `webhooks`
    /// capability, which needs [`MetaStore::event_store`] too); `None` (the default)
    /// otherwise.
    fn webhook_store(&self) -> Option<&dyn WebhookStore> {
        None
    }

    /// The store's resumable and direct uploads, when it keeps them (the `uploads`
    /// capability); `None` (the default) otherwise.
    fn upload_store(&self) -> Option<&dyn UploadStore> {
        None
    }
}
