//! The read caches under a crowd: the requests for a library detail or an asset list page
//! that is not kept (just changed, or read for the first time) that arrive while it is
//! rendered wait for that render and find it kept, instead of each reading the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use assetlib_core::events::Log;
use assetlib_core::store::{AssetStore, KeyStore, LibraryStore, MetaStore};
use assetlib_core::{
    ApiKey, Asset, AssetChange, AssetDeletion, AssetQuery, AssetUpdate, BulkOutcome, Config, Files,
    Holders, LibraryQuery, LibraryRows, LibrarySummary, LibraryUse, LibraryWrite, MemoryStore,
    Operation, Page, PutOutcome, Service, SlugHolder, StoreError, TagCount, ViewCount, async_trait,
};
use chrono::{DateTime, Utc};
use serde_json::json;
use uuid::Uuid;

use crate::detail_cache::{Env, json_of};

/// A [`MemoryStore`] whose library loads and asset lists take a while (as a database's do)
/// and are counted.
#[derive(Default)]
struct SlowLoads {
    rest: MemoryStore,
    loads: AtomicUsize,
    lists: AtomicUsize,
}

#[async_trait]
impl MetaStore for SlowLoads {
    async fn signing_secret(&self, candidate: [u8; 32]) -> Result<[u8; 32], StoreError> {
        self.rest.signing_secret(candidate).await
    }
    async fn rotate_signing_secret(&self, secret: [u8; 32]) -> Result<(), StoreError> {
        self.rest.rotate_signing_secret(secret).await
    }
}

#[async_trait]
impl KeyStore for SlowLoads {
    async fn insert_key(&self, key: ApiKey, log: &Log) -> Result<(), StoreError> {
        self.rest.insert_key(key, log).await
    }
    async fn find_key(&self, hash: &[u8; 32]) -> Result<Option<ApiKey>, StoreError> {
        self.rest.find_key(hash).await
    }
    async fn list_keys(&self) -> Result<Vec<ApiKey>, StoreError> {
        self.rest.list_keys().await
    }
    async fn revoke_key(&self, id: Uuid, at: DateTime<Utc>, log: &Log) -> Result<bool, StoreError> {
        self.rest.revoke_key(id, at, log).await
    }
}

#[async_trait]
impl AssetStore for SlowLoads {
    async fn list_assets(&self, q: &AssetQuery) -> Result<Page<Asset>, StoreError> {
        self.lists.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(30)).await;
        self.rest.list_assets(q).await
    }
    async fn get_asset(&self, id: Uuid) -> Result<Option<Asset>, StoreError> {
        self.rest.get_asset(id).await
    }
    async fn get_assets(&self, ids: &[Uuid]) -> Result<Vec<Asset>, StoreError> {
        self.rest.get_assets(ids).await
    }
    async fn insert_asset(&self, asset: Asset, log: &Log) -> Result<Asset, StoreError> {
        self.rest.insert_asset(asset, log).await
    }
    async fn update_asset(
        &self,
        id: Uuid,
        change: &AssetChange,
        log: &Log,
    ) -> Result<Option<AssetUpdate>, StoreError> {
        self.rest.update_asset(id, change, log).await
    }
    async fn delete_asset(
        &self,
        id: Uuid,
        force: bool,
        log: &Log,
    ) -> Result<AssetDeletion, StoreError> {
        self.rest.delete_asset(id, force, log).await
    }
    async fn update_assets(
        &self,
        ids: &[Uuid],
        change: &AssetChange,
        log: &Log,
    ) -> Result<BulkOutcome<AssetUpdate>, StoreError> {
        self.rest.update_assets(ids, change, log).await
    }
    async fn delete_assets(
        &self,
        ids: &[Uuid],
        force: bool,
        log: &Log,
    ) -> Result<BulkOutcome<Asset>, StoreError> {
        self.rest.delete_assets(ids, force, log).await
    }
    async fn list_tags(&self, limit: u32) -> Result<Vec<TagCount>, StoreError> {
        self.rest.list_tags(limit).await
    }
    async fn asset_usage(&self, id: Uuid) -> Result<Vec<LibraryUse>, StoreError> {
        self.rest.asset_usage(id).await
    }
    async fn record_download(&self, id: Uuid) -> Result<(), StoreError> {
        self.rest.record_download(id).await
    }
    async fn assets_version(&self) -> Result<u64, StoreError> {
        self.rest.assets_version().await
    }
}

#[async_trait]
impl LibraryStore for SlowLoads {
    async fn list_libraries(&self, q: &LibraryQuery) -> Result<Page<LibrarySummary>, StoreError> {
        self.rest.list_libraries(q).await
    }
    async fn load_library(&self, id: Uuid) -> Result<Option<LibraryRows>, StoreError> {
        self.loads.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(30)).await;
        self.rest.load_library(id).await
    }
    async fn put_library(&self, write: LibraryWrite, log: &Log) -> Result<PutOutcome, StoreError> {
        self.rest.put_library(write, log).await
    }
    async fn libraries_by_slug(&self, slug: &str) -> Result<Vec<SlugHolder>, StoreError> {
        self.rest.libraries_by_slug(slug).await
    }
    async fn delete_library(&self, id: Uuid, log: &Log) -> Result<bool, StoreError> {
        self.rest.delete_library(id, log).await
    }
    async fn record_library_view(&self, id: Uuid) -> Result<Option<ViewCount>, StoreError> {
        self.rest.record_library_view(id).await
    }
    async fn published_holders(&self, ids: &[Uuid]) -> Result<Vec<Holders>, StoreError> {
        self.rest.published_holders(ids).await
    }
}

/// A service over a [`SlowLoads`] store, with `config` set as `tweak` says, and a key.
async fn slow_service(tweak: impl FnOnce(&mut Config)) -> (Arc<SlowLoads>, Arc<Env>) {
    let store = Arc::new(SlowLoads::default());
    let mut config = Config::default();
    tweak(&mut config);
    let service = Service::from_arc(store.clone(), Files::memory(), config);
    (store, Arc::new(Env::new(service).await))
}

/// 16 requests at once of `op` on `id` with `query`, each answered 200: the answers.
async fn crowd_of(
    env: &Arc<Env>,
    op: Operation,
    id: &str,
    query: &'static str,
) -> Vec<assetlib_core::Reply> {
    let requests = (0..16).map(|_| {
        let (env, id) = (Arc::clone(env), id.to_owned());
        tokio::spawn(async move {
            let r = env.call(op, &id, Some(query), None, false).await;
            assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
            r
        })
    });
    let mut out = Vec::new();
    for request in requests.collect::<Vec<_>>() {
        out.push(request.await.expect("request"));
    }
    out
}

/// 16 views at once of library `id`'s page: their view counts and `ETag`s.
async fn crowd(env: &Arc<Env>, id: &str) -> Vec<(u64, String)> {
    let views = crowd_of(env, Operation::GetLibrary, id, "include_assets=true").await;
    views
        .iter()
        .map(|r| {
            let views = json_of(r)["view_count"].as_u64().expect("view_count");
            (views, r.header("etag").expect("etag").to_owned())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_arriving_while_a_page_renders_wait_for_it_and_load_nothing() {
    for detail_cache in [true, false] {
        let (store, env) = slow_service(|c| c.detail_cache = detail_cache).await;
        let asset = env.create("Atlas").await;
        let id = Uuid::new_v4().to_string();
        let doc = json!({"title": "Maps", "published": true,
            "unsectioned_assets": [{"asset_id": asset["id"]}]});
        let r = env
            .call(Operation::PutLibrary, &id, None, Some(&doc), false)
            .await;
        assert!(r.status < 300, "{}", String::from_utf8_lossy(&r.body));

        let before = store.loads.load(Ordering::SeqCst);
        let seen = crowd(&env, &id).await;
        let loads = store.loads.load(Ordering::SeqCst) - before;
        let mut counts: Vec<u64> = seen.iter().map(|(views, _)| *views).collect();
        counts.sort_unstable();
        assert_eq!(
            counts,
            (1..=16).collect::<Vec<u64>>(),
            "every view counted once"
        );
        assert!(
            seen.iter().all(|(_, etag)| *etag == seen[0].1),
            "one page: {seen:?}"
        );
        if detail_cache {
            assert_eq!(loads, 1, "one load for the crowd, with the cache");
        } else {
            assert_eq!(loads, 16, "a load a view, without the cache");
        }

        // A change of the library: the next crowd loads it once again.
        let doc = json!({"title": "Charts", "published": true,
            "unsectioned_assets": [{"asset_id": asset["id"]}]});
        let r = env
            .call(Operation::PutLibrary, &id, None, Some(&doc), false)
            .await;
        assert!(r.status < 300, "{}", String::from_utf8_lossy(&r.body));
        let before = store.loads.load(Ordering::SeqCst);
        crowd(&env, &id).await;
        let loads = store.loads.load(Ordering::SeqCst) - before;
        assert_eq!(loads, if detail_cache { 1 } else { 16 }, "after a change");
    }
}

/// 16 requests at once of the asset list page `query`: their bodies.
async fn list_crowd(env: &Arc<Env>, query: &'static str) -> Vec<Vec<u8>> {
    let lists = crowd_of(env, Operation::ListAssets, "", query).await;
    lists.iter().map(|r| r.body.to_vec()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_requests_arriving_while_the_page_renders_wait_for_it() {
    for page_cache in [true, false] {
        let (store, env) = slow_service(|c| c.page_cache = page_cache).await;
        env.create("Atlas").await;
        env.create("Bestiary").await;
        let query = "sort=title&order=asc";

        let before = store.lists.load(Ordering::SeqCst);
        let bodies = list_crowd(&env, query).await;
        let reads = store.lists.load(Ordering::SeqCst) - before;
        assert!(bodies.iter().all(|b| *b == bodies[0]), "one page");
        let titles: Vec<String> = json_of_bytes(&bodies[0])["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|a| a["title"].as_str().expect("title").to_owned())
            .collect();
        assert_eq!(titles, ["Atlas", "Bestiary"]);
        assert_eq!(
            reads,
            if page_cache { 1 } else { 16 },
            "page cache {page_cache}"
        );

        // A new asset moves the list: the next crowd reads it once again, and sees it.
        env.create("Almanac").await;
        let before = store.lists.load(Ordering::SeqCst);
        let bodies = list_crowd(&env, query).await;
        let reads = store.lists.load(Ordering::SeqCst) - before;
        assert_eq!(reads, if page_cache { 1 } else { 16 }, "after a create");
        assert_eq!(json_of_bytes(&bodies[0])["data"][0]["title"], "Almanac");
    }
}

fn json_of_bytes(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice(body).expect("JSON")
}
