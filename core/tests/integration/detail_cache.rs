//! The library detail cache: every write shows on the very next read, with the cache on and
//! off, in one service and across services sharing a store (replicas); cached answers are
//! the uncached ones with the live view count.

use assetlib_core::store::prelude::*;
use std::sync::Arc;

use assetlib_core::{
    AssetChange, Config, FileFields, Files, MemoryStore, Operation, RawRequest, Reply, Scope,
    Service,
};
use serde_json::{Value, json};
use uuid::Uuid;

fn service(store: &Arc<MemoryStore>, detail_cache: bool) -> Service {
    let mut config = Config::default();
    config.detail_cache = detail_cache;
    let store: Arc<dyn Store> = store.clone();
    Service::from_arc(store, Files::memory(), config)
}

pub(crate) struct Env {
    pub(crate) service: Service,
    pub(crate) auth: String,
}

impl Env {
    pub(crate) async fn new(service: Service) -> Self {
        let (_, key) = service
            .create_key("all", Scope::ALL.to_vec(), None)
            .await
            .unwrap();
        Env {
            service,
            auth: format!("Bearer {key}"),
        }
    }

    /// Another service on the same store, with the same key.
    pub(crate) fn replica(&self, service: Service) -> Self {
        Env {
            service,
            auth: self.auth.clone(),
        }
    }

    pub(crate) async fn call(
        &self,
        op: Operation,
        id: &str,
        query: Option<&str>,
        body: Option<&Value>,
        head: bool,
    ) -> Reply {
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        self.service
            .handle(
                op,
                &[id],
                RawRequest {
                    authorization: Some(self.auth.as_bytes()),
                    content_type: body.map(|_| &b"application/json"[..]),
                    query,
                    body: bytes.into(),
                    head,
                    ..RawRequest::default()
                },
            )
            .await
    }

    pub(crate) async fn create(&self, title: &str) -> Value {
        let body = json!({"title": title, "asset_type": "pdf"});
        let r = self
            .service
            .handle(
                Operation::CreateAsset,
                &[],
                RawRequest {
                    authorization: Some(self.auth.as_bytes()),
                    content_type: Some(b"application/json"),
                    body: body.to_string().into(),
                    ..RawRequest::default()
                },
            )
            .await;
        assert_eq!(r.status, 201);
        json_of(&r)["data"].clone()
    }

    async fn put(&self, id: &str, doc: &Value) -> u16 {
        let r = self
            .call(Operation::PutLibrary, id, None, Some(doc), false)
            .await;
        assert!(r.status < 300, "{}", String::from_utf8_lossy(&r.body));
        r.status
    }

    async fn get(&self, id: &str, query: &str) -> Reply {
        self.call(Operation::GetLibrary, id, Some(query), None, false)
            .await
    }

    async fn detail(&self, id: &str, query: &str) -> Value {
        let r = self.get(id, query).await;
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        assert_eq!(r.header("content-type"), Some("application/json"));
        json_of(&r)
    }
}

pub(crate) fn json_of(r: &Reply) -> Value {
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{e}: {:?}", r.body))
}

fn doc(title: &str, sectioned: &Value, unsectioned: &Value) -> Value {
    json!({"title": title,
        "sections": [{"title": "Main", "assets": [{"asset_id": sectioned["id"]}]}],
        "unsectioned_assets": [{"asset_id": unsectioned["id"]}]})
}

const WITH: &str = "include_assets=true";

async fn writes_show_on_the_next_read(detail_cache: bool) {
    let store = Arc::new(MemoryStore::new());
    let e = Env::new(service(&store, detail_cache)).await;
    let a = e.create("Alpha").await;
    let b = e.create("Bravo").await;
    let id = Uuid::new_v4().to_string();
    assert_eq!(e.put(&id, &doc("Kit", &a, &b)).await, 201);

    for (n, query) in [(1, WITH), (2, WITH), (3, ""), (4, "")] {
        let v = e.detail(&id, query).await;
        assert_eq!(v["view_count"], n, "{query}");
        assert_eq!(v["title"], "Kit");
    }
    // Replace: the next read shows it, in both shapes.
    e.put(&id, &doc("Kit v2", &b, &a)).await;
    let v = e.detail(&id, WITH).await;
    assert_eq!(
        (&v["title"], &v["view_count"]),
        (&json!("Kit v2"), &json!(5))
    );
    assert_eq!(v["sections"][0]["assets"][0]["title"], "Bravo");
    assert_eq!(v["unsectioned_assets"][0]["title"], "Alpha");
    assert_eq!(e.detail(&id, "").await["title"], "Kit v2");

    // An asset change in the store: the next read shows it.
    let a_id = a["id"].as_str().unwrap().parse().unwrap();
    let asset = store.get_asset(a_id).await.unwrap().unwrap();
    let mut change = AssetChange::at(chrono::Utc::now());
    change.title = Some("Alpha renamed".into());
    change.file = Some(FileFields {
        thumbnail_path: Some("thumbs/alpha.png".into()),
        ..FileFields::of(&asset)
    });
    store
        .update_asset(a_id, &change, Log::ANONYMOUS)
        .await
        .unwrap()
        .unwrap();
    let v = e.detail(&id, WITH).await;
    assert_eq!(v["unsectioned_assets"][0]["title"], "Alpha renamed");
    assert_eq!(
        v["unsectioned_assets"][0]["thumbnail_url"],
        "/files/thumbs/alpha.png"
    );
    assert_eq!(v["view_count"], 7);

    // Delete: the next read is 404; made again, it starts over.
    let r = e
        .call(Operation::DeleteLibrary, &id, None, None, false)
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(e.get(&id, WITH).await.status, 404);
    assert_eq!(e.get(&id, "").await.status, 404);
    assert_eq!(e.put(&id, &doc("Kit again", &a, &b)).await, 201);
    let v = e.detail(&id, WITH).await;
    assert_eq!(
        (&v["title"], &v["view_count"]),
        (&json!("Kit again"), &json!(1))
    );

    // Unpublished: 404 and no view counted; published again, the count goes on.
    let mut draft = doc("Draft", &a, &b);
    draft["published"] = json!(false);
    e.put(&id, &draft).await;
    assert_eq!(e.get(&id, WITH).await.status, 404);
    e.put(&id, &doc("Back", &a, &b)).await;
    let v = e.detail(&id, WITH).await;
    assert_eq!((&v["title"], &v["view_count"]), (&json!("Back"), &json!(2)));
}

#[tokio::test]
async fn writes_show_on_the_next_read_with_the_cache() {
    writes_show_on_the_next_read(true).await;
}

#[tokio::test]
async fn writes_show_on_the_next_read_without_the_cache() {
    writes_show_on_the_next_read(false).await;
}

#[tokio::test]
async fn replicas_sharing_a_store_see_each_others_writes() {
    let store = Arc::new(MemoryStore::new());
    let one = Env::new(service(&store, true)).await;
    let two = one.replica(service(&store, true));
    let a = one.create("Alpha").await;
    let b = one.create("Bravo").await;
    let id = Uuid::new_v4().to_string();
    one.put(&id, &doc("Kit", &a, &b)).await;
    assert_eq!(one.detail(&id, WITH).await["view_count"], 1);
    assert_eq!(two.detail(&id, WITH).await["view_count"], 2);
    assert_eq!(one.detail(&id, WITH).await["view_count"], 3);

    two.put(&id, &doc("Changed on two", &a, &b)).await;
    let v = one.detail(&id, WITH).await;
    assert_eq!(
        (&v["title"], &v["view_count"]),
        (&json!("Changed on two"), &json!(4))
    );
    let r = two
        .call(Operation::DeleteLibrary, &id, None, None, false)
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(one.get(&id, WITH).await.status, 404);
}

#[tokio::test]
async fn cached_answers_equal_rendered_ones() {
    let store = Arc::new(MemoryStore::new());
    let cached = Env::new(service(&store, true)).await;
    let plain = cached.replica(service(&store, false));
    let a = cached.create("Alpha \"view_count\":1").await;
    let b = cached.create("Bravo").await;
    let id = Uuid::new_v4().to_string();
    cached.put(&id, &doc("Kit", &a, &b)).await;
    let mut views = 0;
    for query in [WITH, ""] {
        for _ in 0..3 {
            let hit = cached.get(&id, query).await;
            let rendered = plain.get(&id, query).await;
            views += 2;
            let hit_text = String::from_utf8(hit.body.to_vec()).unwrap();
            let rendered_text = String::from_utf8(rendered.body.to_vec()).unwrap();
            // Byte for byte, but for the one count between them.
            let expected = rendered_text.replace(
                &format!("\"view_count\":{views}"),
                &format!("\"view_count\":{}", views - 1),
            );
            assert_eq!(hit_text, expected);
            assert_eq!(hit.headers, rendered.headers);
        }
    }
}

#[tokio::test]
async fn head_counts_no_view_with_the_cache() {
    let store = Arc::new(MemoryStore::new());
    let e = Env::new(service(&store, true)).await;
    let a = e.create("Alpha").await;
    let b = e.create("Bravo").await;
    let id = Uuid::new_v4().to_string();
    e.put(&id, &doc("Kit", &a, &b)).await;
    assert_eq!(e.detail(&id, WITH).await["view_count"], 1);
    let head = e
        .call(Operation::GetLibrary, &id, Some(WITH), None, true)
        .await;
    assert_eq!(head.status, 200);
    assert_eq!(json_of(&head)["view_count"], 1);
    assert_eq!(e.detail(&id, WITH).await["view_count"], 2);
}
