//! The Service end to end over MemoryStore: every operation through `Service::handle`, with
//! whole JSON bodies asserted.

use assetlib_core::events::Log;
use assetlib_core::testing::sample_asset;
use assetlib_core::{AssetType, Config, Operation, RawRequest, Reply, Scope, Service};
use serde_json::{Value, json};

struct Env {
    service: Service,
    all: String,
}

async fn env() -> Env {
    let service = Service::in_memory(Config::default());
    let (_, key) = service
        .create_key("all", Scope::ALL.to_vec(), None)
        .await
        .unwrap();
    Env {
        service,
        all: format!("Bearer {key}"),
    }
}

impl Env {
    async fn key(&self, scopes: &[Scope]) -> String {
        let (_, key) = self
            .service
            .create_key("k", scopes.to_vec(), None)
            .await
            .unwrap();
        format!("Bearer {key}")
    }

    async fn call(
        &self,
        op: Operation,
        id: Option<&str>,
        auth: &str,
        query: Option<&str>,
        body: Option<&Value>,
    ) -> Reply {
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        self.service
            .handle(
                op,
                id.as_slice(),
                RawRequest {
                    authorization: Some(auth.as_bytes()),
                    content_type: body.map(|_| &b"application/json"[..]),
                    query,
                    body: bytes.into(),
                    ..RawRequest::default()
                },
            )
            .await
    }

    async fn create(&self, body: Value) -> Value {
        let r = self
            .call(Operation::CreateAsset, None, &self.all, None, Some(&body))
            .await;
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        json_of(&r)["data"].clone()
    }
}

fn json_of(r: &Reply) -> Value {
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{e}: {:?}", r.body))
}

#[track_caller]
fn assert_error(r: &Reply, status: u16, body: Value) {
    assert_eq!(r.status, status, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(json_of(r), body);
}

#[tokio::test]
async fn auth_then_scope_then_validation() {
    let e = env().await;
    let svc = &e.service;
    let bad_body = json!({"asset_type": "pdf"});

    let r = svc
        .handle(Operation::CreateAsset, &[], RawRequest::default())
        .await;
    assert_error(
        &r,
        401,
        json!({"error": "Unauthorized", "message": "Missing Authorization header"}),
    );
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));

    let r = e
        .call(
            Operation::CreateAsset,
            None,
            "Basic abc",
            None,
            Some(&bad_body),
        )
        .await;
    assert_error(
        &r,
        401,
        json!({"error": "Unauthorized", "message": "Authorization header must be 'Bearer <API key>'"}),
    );

    let unknown = format!("Bearer alk_{}", "A".repeat(43));
    let r = e
        .call(
            Operation::CreateAsset,
            None,
            &unknown,
            None,
            Some(&bad_body),
        )
        .await;
    assert_error(
        &r,
        401,
        json!({"error": "Unauthorized", "message": "Invalid API key"}),
    );

    let reader = e.key(&[Scope::ReadAssets]).await;
    let r = e
        .call(Operation::CreateAsset, None, &reader, None, Some(&bad_body))
        .await;
    assert_error(
        &r,
        403,
        json!({"error": "Insufficient permissions", "message": "API key lacks required scope: write:assets"}),
    );

    let r = e
        .call(Operation::CreateAsset, None, &e.all, None, Some(&bad_body))
        .await;
    assert_error(
        &r,
        400,
        json!({"error": "Validation error", "message": "title is required", "field": "title"}),
    );

    // Bad ids and queries are 400 only once the key is good.
    let r = e
        .call(Operation::GetAsset, Some("nope"), "Bearer x", None, None)
        .await;
    assert_eq!(r.status, 401);
    let r = e
        .call(Operation::GetAsset, Some("nope"), &reader, None, None)
        .await;
    assert_error(
        &r,
        400,
        json!({"error": "Validation error", "message": "asset_id must be a UUID", "field": "asset_id"}),
    );
    let r = e
        .call(
            Operation::ListLibraries,
            None,
            &reader,
            Some("limit=0"),
            None,
        )
        .await;
    assert_error(
        &r,
        403,
        json!({"error": "Insufficient permissions", "message": "API key lacks required scope: read:libraries"}),
    );
}

#[tokio::test]
async fn expired_and_revoked_keys() {
    let e = env().await;
    let past = chrono::Utc::now() - chrono::Duration::seconds(1);
    let (_, expired) = e
        .service
        .create_key("old", vec![Scope::ReadAssets], Some(past))
        .await
        .unwrap();
    let r = e
        .call(
            Operation::ListAssets,
            None,
            &format!("Bearer {expired}"),
            None,
            None,
        )
        .await;
    assert_error(
        &r,
        401,
        json!({"error": "Unauthorized", "message": "API key has expired"}),
    );

    let (record, key) = e
        .service
        .create_key("soon revoked", vec![Scope::ReadAssets], None)
        .await
        .unwrap();
    let auth = format!("Bearer {key}");
    assert_eq!(
        e.call(Operation::ListAssets, None, &auth, None, None)
            .await
            .status,
        200
    );
    assert!(e.service.revoke_key(record.id).await.unwrap());
    let r = e.call(Operation::ListAssets, None, &auth, None, None).await;
    assert_error(
        &r,
        401,
        json!({"error": "Unauthorized", "message": "API key has been revoked"}),
    );
    assert!(!e.service.revoke_key(uuid::Uuid::new_v4()).await.unwrap());
    let keys = e.service.list_keys().await.unwrap();
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|k| k.key_hash != [0; 32]));
}

#[tokio::test]
async fn body_size_and_type_come_after_auth() {
    let e = env().await;
    let svc = &e.service;
    let r = svc
        .handle(
            Operation::CreateAsset,
            &[],
            RawRequest {
                content_length: Some(b"2097152"),
                ..RawRequest::default()
            },
        )
        .await;
    assert_eq!(r.status, 401);
    let auth = e.all.clone();
    let r = svc
        .handle(
            Operation::CreateAsset,
            &[],
            RawRequest {
                authorization: Some(auth.as_bytes()),
                content_length: Some(b"2097152"),
                ..RawRequest::default()
            },
        )
        .await;
    assert_error(
        &r,
        413,
        json!({"error": "Payload too large", "message": "Request body exceeds the limit of 1048576 bytes"}),
    );
    let big = vec![b' '; 1024 * 1024 + 1];
    let r = svc
        .handle(
            Operation::CreateAsset,
            &[],
            RawRequest {
                authorization: Some(auth.as_bytes()),
                content_type: Some(b"application/json"),
                body: big.clone().into(),
                ..RawRequest::default()
            },
        )
        .await;
    assert_eq!(r.status, 413, "core enforces the limit too");
    for ct in [
        None,
        Some(&b"text/plain"[..]),
        Some(b"application/x-www-form-urlencoded"),
    ] {
        let r = svc
            .handle(
                Operation::CreateAsset,
                &[],
                RawRequest {
                    authorization: Some(auth.as_bytes()),
                    content_type: ct,
                    body: br#"{"title":"t","asset_type":"pdf"}"#[..].into(),
                    ..RawRequest::default()
                },
            )
            .await;
        assert_error(
            &r,
            415,
            json!({"error": "Unsupported media type", "message": "Content-Type must be application/json"}),
        );
    }
    for ct in [
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/merge-patch+json",
    ] {
        let r = svc
            .handle(
                Operation::CreateAsset,
                &[],
                RawRequest {
                    authorization: Some(auth.as_bytes()),
                    content_type: Some(ct.as_bytes()),
                    body: br#"{"title":"t","asset_type":"pdf"}"#[..].into(),
                    ..RawRequest::default()
                },
            )
            .await;
        assert_eq!(r.status, 201, "{ct}");
    }
}

#[tokio::test]
async fn create_get_and_list_assets() {
    let e = env().await;
    let a = e
        .create(
            json!({"title": "Intro video", "asset_type": "external_video", "description": "Watch",
            "external_url": "https://youtu.be/dQw4w9WgXcQ?t=10", "is_public": true}),
        )
        .await;
    let id = a["id"].as_str().unwrap().to_owned();
    assert_eq!(a["slug"], "intro-video");
    assert_eq!(
        a["video_embed"],
        "https://www.youtube.com/embed/dQw4w9WgXcQ?start=10"
    );
    assert_eq!(a["download_count"], 0);
    assert_eq!(a["is_public"], true);
    assert_eq!(a["created_at"], a["updated_at"]);
    let b = e
        .create(json!({"title": "Intro video", "asset_type": "pdf"}))
        .await;
    assert_eq!(b["slug"], "intro-video-2");
    assert_eq!(b["word_count"], Value::Null);
    assert!(b.get("video_embed").is_none());

    let r = e
        .call(
            Operation::CreateAsset,
            None,
            &e.all,
            None,
            Some(
                &json!({"title": "L", "asset_type": "link", "external_url": "https://example.com"}),
            ),
        )
        .await;
    assert_eq!(
        r.header("location").unwrap(),
        format!(
            "/api/v1/assets/{}",
            json_of(&r)["data"]["id"].as_str().unwrap()
        )
    );

    let r = e
        .call(Operation::GetAsset, Some(&id), &e.all, None, None)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(json_of(&r), json!({"success": true, "data": a}));
    let r = e
        .call(
            Operation::GetAsset,
            Some(&uuid::Uuid::new_v4().to_string()),
            &e.all,
            None,
            None,
        )
        .await;
    assert_error(
        &r,
        404,
        json!({"error": "Not found", "message": "Asset not found"}),
    );

    let r = e
        .call(
            Operation::ListAssets,
            None,
            &e.all,
            Some("per_page=2&sort=title&order=asc"),
            None,
        )
        .await;
    let v = json_of(&r);
    assert_eq!(v["success"], true);
    assert_eq!(
        v["pagination"],
        json!({"page": 1, "per_page": 2, "total": 3, "total_pages": 2})
    );
    assert_eq!(v["data"].as_array().unwrap().len(), 2);
    let r = e
        .call(
            Operation::ListAssets,
            None,
            &e.all,
            Some("per_page=1000&page=7"),
            None,
        )
        .await;
    let v = json_of(&r);
    assert_eq!(
        v["pagination"],
        json!({"page": 7, "per_page": 100, "total": 3, "total_pages": 1})
    );
    assert_eq!(v["data"], json!([]));
    let r = e
        .call(
            Operation::ListAssets,
            None,
            &e.all,
            Some("asset_type=external_video"),
            None,
        )
        .await;
    assert_error(
        &r,
        400,
        json!({"error": "Validation error", "field": "asset_type",
        "message": "asset_type must be one of: pdf, document, image, video, audio, link, collection, git"}),
    );
}

#[tokio::test]
async fn unpublished_assets_are_hidden() {
    let e = env().await;
    let mut draft = sample_asset("Draft", AssetType::Pdf, 0);
    draft.published = false;
    e.service
        .store()
        .insert_asset(draft.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    // Drafts are for keys with write:assets; a reader does not see them.
    let (_, reader) = e
        .service
        .create_key("reader", vec![Scope::ReadAssets], None)
        .await
        .unwrap();
    let reader = format!("Bearer {reader}");
    let id = draft.id.to_string();
    let r = e
        .call(Operation::GetAsset, Some(&id), &reader, None, None)
        .await;
    assert_eq!(r.status, 404);
    let v = json_of(
        &e.call(Operation::ListAssets, None, &reader, None, None)
            .await,
    );
    assert_eq!(v["pagination"]["total"], 0);
    let r = e
        .call(Operation::GetAsset, Some(&id), &e.all, None, None)
        .await;
    assert_eq!(
        (r.status, json_of(&r)["data"]["published"].clone()),
        (200, json!(false))
    );
}

#[tokio::test]
async fn libraries_put_get_list_delete() {
    let e = env().await;
    let pdf = e
        .create(json!({"title": "Guide", "asset_type": "pdf", "description": "Own"}))
        .await;
    let img = e
        .create(json!({"title": "Logo", "asset_type": "image"}))
        .await;
    let link = e
        .create(
            json!({"title": "Site", "asset_type": "link", "external_url": "https://example.com"}),
        )
        .await;
    let lib_id = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Brand kit", "workspace_id": "ws1",
        "sections": [{"title": "Logos", "assets": [{"asset_id": img["id"]}]},
                     {"title": "Docs", "collapsed_by_default": true,
                      "assets": [{"asset_id": pdf["id"], "title": "Custom"}]}],
        "unsectioned_assets": []});
    let r = e
        .call(
            Operation::PutLibrary,
            Some(&lib_id),
            &e.all,
            None,
            Some(&doc),
        )
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.header("location").unwrap(),
        format!("/api/v1/libraries/{lib_id}")
    );
    let created = json_of(&r);
    assert_eq!(created["view_count"], 0, "a write counts no view");
    assert_eq!(created["slug"], "brand-kit");
    assert_eq!(created["sections"][1]["assets"][0]["title"], "Custom");
    assert_eq!(created["sections"][1]["assets"][0]["description"], "Own");
    assert_eq!(created["sections"][1]["display_order"], 1);

    let r = e
        .call(
            Operation::PutLibrary,
            Some(&lib_id),
            &e.all,
            None,
            Some(&doc),
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(r.header("location").is_none());

    let r = e
        .call(Operation::GetLibrary, Some(&lib_id), &e.all, None, None)
        .await;
    let v = json_of(&r);
    assert_eq!(v["view_count"], 1);
    assert_eq!(v["sections"][0]["asset_count"], 1);
    assert!(v["sections"][0].get("assets").is_none());
    let r = e
        .call(
            Operation::GetLibrary,
            Some(&lib_id),
            &e.all,
            Some("include_assets=true"),
            None,
        )
        .await;
    let v = json_of(&r);
    assert_eq!(v["view_count"], 2);
    assert_eq!(v["sections"][0]["assets"][0]["id"], img["id"]);

    let r = e
        .call(
            Operation::ListLibraries,
            None,
            &e.all,
            Some("workspace_id=ws1"),
            None,
        )
        .await;
    let v = json_of(&r);
    assert_eq!(
        v["pagination"],
        json!({"page": 1, "limit": 20, "total": 1, "total_pages": 1, "has_next": false, "has_prev": false})
    );
    assert_eq!(v["libraries"][0]["asset_count"], 2);
    assert_eq!(v["libraries"][0]["view_count"], 2);
    assert!(v.get("success").is_none());

    // 400s name their paths; nothing is written.
    let mut bad = doc.clone();
    bad["sections"][0]["assets"] = json!([{"asset_id": img["id"]}, {"asset_id": link["id"]}]);
    let r = e
        .call(
            Operation::PutLibrary,
            Some(&lib_id),
            &e.all,
            None,
            Some(&bad),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(json_of(&r)["field"], "sections[0].assets[1].asset_id");
    let mut bad = doc.clone();
    bad["unsectioned_assets"] = json!([{"asset_id": uuid::Uuid::new_v4()}]);
    let r = e
        .call(
            Operation::PutLibrary,
            Some(&lib_id),
            &e.all,
            None,
            Some(&bad),
        )
        .await;
    assert_eq!(json_of(&r)["field"], "unsectioned_assets[0].asset_id");
    let r = e
        .call(Operation::PutLibrary, Some("x"), &e.all, None, Some(&doc))
        .await;
    assert_eq!(json_of(&r)["field"], "library_id");

    // A given slug that another library holds.
    // Slugs are unique per workspace: taken in ws1, free in another.
    let mut other = json!({"title": "Other", "slug": "brand-kit", "workspace_id": "ws1"});
    let other_id = uuid::Uuid::new_v4().to_string();
    let r = e
        .call(
            Operation::PutLibrary,
            Some(&other_id),
            &e.all,
            None,
            Some(&other),
        )
        .await;
    assert_error(
        &r,
        400,
        json!({"error": "Validation error", "field": "slug", "message": "slug \"brand-kit\" is taken by another library"}),
    );
    other["workspace_id"] = json!("ws2");
    other["published"] = json!(false);
    assert_eq!(
        e.call(
            Operation::PutLibrary,
            Some(&other_id),
            &e.all,
            None,
            Some(&other)
        )
        .await
        .status,
        201
    );
    let r = e
        .call(Operation::GetLibrary, Some(&other_id), &e.all, None, None)
        .await;
    assert_error(
        &r,
        404,
        json!({"error": "Not found", "message": "Library not found"}),
    );

    let reader = e.key(&[Scope::ReadLibraries]).await;
    let r = e
        .call(Operation::DeleteLibrary, Some(&lib_id), &reader, None, None)
        .await;
    assert_eq!(r.status, 403);
    let r = e
        .call(Operation::DeleteLibrary, Some(&lib_id), &e.all, None, None)
        .await;
    assert_eq!((r.status, r.body.len()), (204, 0));
    let r = e
        .call(Operation::DeleteLibrary, Some(&lib_id), &e.all, None, None)
        .await;
    assert_eq!(r.status, 404);
    let r = e
        .call(Operation::GetLibrary, Some(&lib_id), &e.all, None, None)
        .await;
    assert_eq!(r.status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_detail_reads_count_every_view() {
    let e = env().await;
    let id = uuid::Uuid::new_v4().to_string();
    let r = e
        .call(
            Operation::PutLibrary,
            Some(&id),
            &e.all,
            None,
            Some(&json!({"title": "Hot"})),
        )
        .await;
    assert_eq!(r.status, 201);
    let tasks: Vec<_> = (0..100)
        .map(|_| {
            let service = e.service.clone();
            let (id, auth) = (id.clone(), e.all.clone());
            tokio::spawn(async move {
                let r = service
                    .handle(
                        Operation::GetLibrary,
                        &[&id],
                        RawRequest {
                            authorization: Some(auth.as_bytes()),
                            ..RawRequest::default()
                        },
                    )
                    .await;
                json_of(&r)["view_count"].as_u64().unwrap()
            })
        })
        .collect();
    let mut counts = Vec::new();
    for t in tasks {
        counts.push(t.await.unwrap());
    }
    counts.sort_unstable();
    assert_eq!(counts, (1..=100).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_key_revoked_elsewhere_is_refused_within_the_cache_lifetime() {
    let e = env().await;
    let (record, key) = e
        .service
        .create_key("elsewhere", vec![Scope::ReadAssets], None)
        .await
        .unwrap();
    let auth = format!("Bearer {key}");
    let list = || e.call(Operation::ListAssets, None, &auth, None, None);
    assert_eq!(list().await.status, 200);
    // Another process revokes it in the shared store: this one learns within the lifetime.
    e.service
        .store()
        .revoke_key(record.id, chrono::Utc::now(), Log::ANONYMOUS)
        .await
        .unwrap();
    tokio::time::sleep(assetlib_core::KEY_CACHE_TTL + std::time::Duration::from_millis(200)).await;
    assert_eq!(list().await.status, 401);

    // Revoked through this service: refused at once.
    let (record, key) = e
        .service
        .create_key("here", vec![Scope::ReadAssets], None)
        .await
        .unwrap();
    let auth = format!("Bearer {key}");
    assert_eq!(
        e.call(Operation::ListAssets, None, &auth, None, None)
            .await
            .status,
        200
    );
    assert!(e.service.revoke_key(record.id).await.unwrap());
    assert_eq!(
        e.call(Operation::ListAssets, None, &auth, None, None)
            .await
            .status,
        401
    );
}
