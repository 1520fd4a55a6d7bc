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

mod assets;
mod events;
mod keys;
mod passes;
pub mod rules;
#[cfg(feature = "search")]
mod search;
mod uploads;
mod versions;
mod webhooks;

pub use crate::page_cache::VersionedCache;
#[cfg(feature = "transfer")]
pub use crate::transfer::TransferStore;
pub use assets::AssetStore;
pub use events::EventStore;
pub use keys::KeyStore;
pub use passes::PassStore;
#[cfg(feature = "search")]
pub use search::{
    AssetText, FieldSet, IndexMatch, MAX_PAGES_SHOWN, SearchFound, SearchRequest, SearchStore,
    asset_field_words, field_words, found, page_of_hits, paid_among, paid_files, rank_read,
    search_hit,
};
pub use uploads::{UploadLease, UploadStore};
pub use versions::{AssetVersions, ListOrders};
pub use webhooks::WebhookStore;

use async_trait::async_trait;
use uuid::Uuid;

use crate::error::StoreError;
use crate::events::Log;
use crate::model::{
    Holders, LibraryRows, LibrarySummary, LibraryWrite, Page, PutOutcome, SlugHolder, ViewCount,
};
use crate::operations::Capability;
use crate::query::LibraryQuery;

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

    /// The store's search, when it keeps an index (the `search` capability); `None` (the
    /// default) otherwise.
    #[cfg(feature = "search")]
    fn search_store(&self) -> Option<&dyn SearchStore> {
        None
    }

    /// The store's records out and in, when it can be the source or target of a move (the
    /// `transfer` capability); `None` (the default) otherwise.
    #[cfg(feature = "transfer")]
    fn transfer_store(&self) -> Option<&dyn TransferStore> {
        None
    }
}
