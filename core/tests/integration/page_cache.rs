//! The asset page cache (asset list pages and single assets kept under the store's assets
//! version): every write shows on the very next read, with the cache on and off, in the
//! service that wrote and in another one sharing the store (a replica); visibility (drafts,
//! public assets) is decided per request; cached answers are the rendered ones.

use assetlib_core::store::prelude::*;
use std::sync::Arc;

use assetlib_core::{Config, Files, MemoryStore, Operation, RawRequest, Reply, Scope, Service};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::detail_cache::{Env, json_of};

fn service(store: &Arc<MemoryStore>, page_cache: bool) -> Service {
    let mut config = Config::default();
    config.page_cache = page_cache;
    let store: Arc<dyn Store> = store.clone();
    Service::from_arc(store, Files::memory(), config)
}

async fn list(e: &Env, query: Option<&str>) -> Value {
    let r = e.call(Operation::ListAssets, "", query, None, false).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    json_of(&r)
}

/// The titles on the first page, by title (creates in one millisecond tie on `created_at`).
async fn titles(e: &Env) -> Vec<String> {
    let v = list(e, Some("sort=title&order=asc")).await;
    v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap().to_owned())
        .collect()
}

async fn get(e: &Env, id: &str) -> Reply {
    e.call(Operation::GetAsset, id, None, None, false).await
}

async fn patch(e: &Env, id: &str, body: Value) {
    let r = e
        .call(Operation::UpdateAsset, id, None, Some(&body), false)
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
}

async fn keyless_get(service: &Service, id: &str) -> u16 {
    service
        .handle(Operation::GetAsset, &[id], RawRequest::default())
        .await
        .status
}

async fn writes_show_on_the_next_read(page_cache: bool) {
    let store = Arc::new(MemoryStore::new());
    let one = Env::new(service(&store, page_cache)).await;
    let two = one.replica(service(&store, page_cache));
    let (_, read_only) = one
        .service
        .create_key("reader", vec![Scope::ReadAssets], None)
        .await
        .unwrap();
    let reader = Env {
        service: one.service.clone(),
        auth: format!("Bearer {read_only}"),
    };

    let a = one.create("Alpha").await;
    let id = a["id"].as_str().unwrap().to_owned();
    // Warm both services.
    for e in [&one, &two] {
        assert_eq!(titles(e).await, ["Alpha"]);
        assert_eq!(json_of(&get(e, &id).await)["data"]["title"], "Alpha");
    }

    // A create on two shows on one's list, and one's on two's.
    two.create("Bravo").await;
    assert_eq!(titles(&one).await, ["Alpha", "Bravo"]);
    assert_eq!(list(&one, None).await["pagination"]["total"], 2);
    one.create("Charlie").await;
    assert_eq!(titles(&two).await, ["Alpha", "Bravo", "Charlie"]);

    // A change on two shows on one, in the asset and in the list.
    patch(&two, &id, json!({"title": "Alpha renamed"})).await;
    assert_eq!(
        json_of(&get(&one, &id).await)["data"]["title"],
        "Alpha renamed"
    );
    assert!(titles(&one).await.contains(&"Alpha renamed".to_owned()));

    // A download counted anywhere shows at once.
    let uuid: Uuid = id.parse().unwrap();
    store.record_download(uuid).await.unwrap();
    assert_eq!(json_of(&get(&two, &id).await)["data"]["download_count"], 1);
    let v = list(&one, Some("sort=title&order=asc")).await;
    assert_eq!(v["data"][0]["download_count"], 1);

    // Visibility is decided per request, from the kept answer: a draft is 404 for a key
    // without write:assets, and left out of its list, right after the change.
    assert_eq!(get(&reader, &id).await.status, 200);
    patch(&one, &id, json!({"published": false})).await;
    assert_eq!(get(&reader, &id).await.status, 404);
    assert_eq!(json_of(&get(&one, &id).await)["data"]["published"], false);
    assert_eq!(titles(&reader).await, ["Bravo", "Charlie"]);
    let drafts = list(&two, Some("status=draft")).await;
    assert_eq!(drafts["data"][0]["title"], "Alpha renamed");

    // Public assets are read without a key; the flag taken back, at once no more.
    assert_eq!(keyless_get(&two.service, &id).await, 401);
    patch(&one, &id, json!({"published": true, "is_public": true})).await;
    assert_eq!(keyless_get(&two.service, &id).await, 200);
    patch(&two, &id, json!({"is_public": false})).await;
    assert_eq!(keyless_get(&one.service, &id).await, 401);

    // A delete on two: one's next reads no longer have it.
    let r = two
        .call(Operation::DeleteAsset, &id, None, None, false)
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(get(&one, &id).await.status, 404);
    assert_eq!(titles(&one).await, ["Bravo", "Charlie"]);
    assert_eq!(list(&one, None).await["pagination"]["total"], 2);
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
async fn cached_answers_equal_rendered_ones() {
    let store = Arc::new(MemoryStore::new());
    let cached = Env::new(service(&store, true)).await;
    let plain = cached.replica(service(&store, false));
    let a = cached.create("Alpha").await;
    cached.create("Bravo").await;
    let id = a["id"].as_str().unwrap();
    for _ in 0..3 {
        for (op, id, query) in [
            (Operation::ListAssets, "", None),
            (Operation::ListAssets, "", Some("per_page=1&page=2")),
            (Operation::GetAsset, id, None),
        ] {
            let hit = cached.call(op, id, query, None, false).await;
            let rendered = plain.call(op, id, query, None, false).await;
            assert_eq!(hit.status, 200);
            assert_eq!(hit.body, rendered.body, "{op:?} {query:?}");
            assert_eq!(hit.headers, rendered.headers, "{op:?} {query:?}");
            assert!(hit.header("etag").is_some());
        }
    }
}
