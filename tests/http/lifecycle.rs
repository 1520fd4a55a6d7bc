//! The asset lifecycle over HTTP: `PATCH`, drafts, `DELETE` (refused, forced, racing a
//! library write) and `GET .../usage`.

use assetlib::Scope;
use reqwest::Method;
use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::harness::Harness;
use crate::libraries::create_library;
use crate::support::{Ctx, Resp, id_of, ids};

async fn patch(ctx: &Ctx, id: &str, body: &Value) -> Resp {
    let path = format!("/api/v1/assets/{id}");
    ctx.send_json(Method::PATCH, &path, Some(&ctx.admin), body)
        .await
}

async fn delete(ctx: &Ctx, id: &str, query: &str) -> Resp {
    let path = format!("/api/v1/assets/{id}{query}");
    Resp::from(ctx.request(Method::DELETE, &path, Some(&ctx.admin))).await
}

async fn asset_json(ctx: &Ctx, id: &str) -> Value {
    let r = ctx.get(&format!("/api/v1/assets/{id}")).await;
    assert_eq!(r.status, 200, "{}", r.json);
    r.json["data"].clone()
}

/// A published library placing `assets` unsectioned, made through the API.
async fn library_of(ctx: &Ctx, title: &str, assets: &[&str]) -> (String, Value) {
    let entries: Vec<Value> = assets.iter().map(|a| json!({"asset_id": a})).collect();
    create_library(ctx, &json!({"title": title, "unsectioned_assets": entries})).await
}

async fn detail(ctx: &Ctx, library: &str) -> Value {
    let r = ctx
        .get(&format!("/api/v1/libraries/{library}?include_assets=true"))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    r.json
}

async fn listed_count(ctx: &Ctx, library: &str) -> u64 {
    let list = ctx.get("/api/v1/libraries?limit=100").await;
    let item = list.json["libraries"]
        .as_array()
        .expect("libraries")
        .iter()
        .find(|l| l["id"] == library)
        .cloned()
        .unwrap_or_else(|| panic!("library {library} not listed"));
    item["asset_count"].as_u64().expect("asset_count")
}

pub(crate) async fn patch_merges_fields_and_moves_updated_at_only_on_change<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let link = ctx
        .create_asset(json!({"title": "Old", "asset_type": "link",
                             "external_url": "https://example.com/old", "description": "d"}))
        .await;
    let id = id_of(&link);
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let r = patch(
        &ctx,
        &id,
        &json!({"title": "New", "is_public": true, "external_url": "https://example.com/new",
                "unknown": 1}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let changed = r.json["data"].clone();
    assert_eq!(changed["title"], "New");
    assert_eq!(changed["description"], "d", "fields not given stay");
    assert_eq!(changed["is_public"], true);
    assert_eq!(changed["external_url"], "https://example.com/new");
    assert_eq!(changed["published"], true);
    assert_eq!(
        (&changed["id"], &changed["slug"]),
        (&link["id"], &link["slug"])
    );
    assert_eq!(changed["created_at"], link["created_at"]);
    assert!(changed["updated_at"].as_str() > link["updated_at"].as_str());
    assert_eq!(asset_json(&ctx, &id).await, changed);

    // The same values again change nothing, not even updated_at; null clears a description.
    let r = patch(&ctx, &id, &json!({"title": "New"})).await;
    assert_eq!(r.json["data"], changed);
    let r = patch(&ctx, &id, &json!({"description": null})).await;
    assert_eq!(r.json["data"]["description"], Value::Null);

    // An external video's embed follows its address.
    let video = ctx
        .create_asset(json!({"title": "Clip", "asset_type": "external_video",
                             "external_url": "https://youtu.be/dQw4w9WgXcQ"}))
        .await;
    let r = patch(
        &ctx,
        &id_of(&video),
        &json!({"external_url": "https://vimeo.com/76979871"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        r.json["data"]["video_embed"],
        "https://player.vimeo.com/video/76979871"
    );
}

pub(crate) async fn patch_validation_names_each_field<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let pdf = ctx.asset_id("A pdf", "pdf").await;
    let link = ctx.asset_id("A link", "link").await;
    let before = asset_json(&ctx, &pdf).await;
    let long = "x".repeat(501);
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            &pdf,
            json!({"asset_type": "image"}),
            "asset_type",
            "asset_type cannot be changed; PATCH sets title, description, is_public, published, external_url and tags",
        ),
        (
            &pdf,
            json!({"slug": "other"}),
            "slug",
            "slug cannot be changed; PATCH sets title, description, is_public, published, external_url and tags",
        ),
        (
            &pdf,
            json!({"file_path": "x.pdf"}),
            "file_path",
            "file_path cannot be changed; PATCH sets title, description, is_public, published, external_url and tags",
        ),
        (
            &pdf,
            json!({"download_count": 9}),
            "download_count",
            "download_count cannot be changed; PATCH sets title, description, is_public, published, external_url and tags",
        ),
        (
            &pdf,
            json!({"created_at": "2020-01-01T00:00:00Z"}),
            "created_at",
            "created_at cannot be changed; PATCH sets title, description, is_public, published, external_url and tags",
        ),
        (
            &pdf,
            json!({"title": ""}),
            "title",
            "title must not be blank",
        ),
        (
            &pdf,
            json!({"title": long}),
            "title",
            "title must be at most 500 characters",
        ),
        (
            &pdf,
            json!({"title": null}),
            "title",
            "title must be a non-blank string, not null",
        ),
        (&pdf, json!({"title": 5}), "title", "title must be a string"),
        (
            &pdf,
            json!({"is_public": "yes"}),
            "is_public",
            "is_public must be a boolean",
        ),
        (
            &pdf,
            json!({"published": null}),
            "published",
            "published must be a boolean, not null",
        ),
        (
            &pdf,
            json!({"description": ["x"]}),
            "description",
            "description must be a string",
        ),
        (
            &pdf,
            json!({"external_url": "https://example.com/"}),
            "external_url",
            "external_url is only accepted for link, external_video and git assets",
        ),
        (
            &link,
            json!({"external_url": "ftp://example.com/"}),
            "external_url",
            "external_url must be an absolute http(s) URL",
        ),
        (
            &link,
            json!({"external_url": null}),
            "external_url",
            "external_url is required for link assets",
        ),
        (
            &pdf,
            json!([1]),
            "body",
            "Request body must be a JSON object",
        ),
    ];
    for (id, body, field, message) in cases {
        patch(&ctx, id, &body).await.assert_invalid(field, message);
    }
    let r = Resp::from(
        ctx.request(
            Method::PATCH,
            &format!("/api/v1/assets/{pdf}"),
            Some(&ctx.admin),
        )
        .header("content-type", "application/json")
        .body("{"),
    )
    .await;
    assert_eq!((r.status, &r.json["field"]), (400, &json!("body")));
    let r = Resp::from(
        ctx.request(
            Method::PATCH,
            &format!("/api/v1/assets/{pdf}"),
            Some(&ctx.admin),
        )
        .header("content-type", "text/plain")
        .body("{}"),
    )
    .await;
    assert_eq!(r.status, 415);
    assert_eq!(
        asset_json(&ctx, &pdf).await,
        before,
        "refused patches change nothing"
    );

    let unknown = uuid::Uuid::new_v4();
    patch(&ctx, &unknown.to_string(), &json!({"title": "x"}))
        .await
        .assert(
            404,
            json!({"error": "Not found", "message": "Asset not found"}),
        );
    patch(&ctx, "nope", &json!({"title": "x"}))
        .await
        .assert_invalid("asset_id", "asset_id must be a UUID");
    let reader = ctx.key(&[Scope::ReadAssets]).await;
    let r = ctx
        .send_json(
            Method::PATCH,
            &format!("/api/v1/assets/{pdf}"),
            Some(&reader),
            &json!({}),
        )
        .await;
    assert_eq!(r.status, 403);
}

pub(crate) async fn a_change_shows_in_every_library_on_the_next_read<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = ctx.asset_id("Alpha", "pdf").await;
    let b = ctx.asset_id("Bravo", "pdf").await;
    let (one, _) = library_of(&ctx, "One", &[&a, &b]).await;
    let (two, _) = library_of(&ctx, "Two", &[&a]).await;
    // Warm every cached page first.
    for lib in [&one, &two] {
        assert_eq!(
            detail(&ctx, lib).await["unsectioned_assets"][0]["title"],
            "Alpha"
        );
    }
    assert_eq!(
        patch(&ctx, &a, &json!({"title": "Alpha 2"})).await.status,
        200
    );
    for lib in [&one, &two] {
        assert_eq!(
            detail(&ctx, lib).await["unsectioned_assets"][0]["title"],
            "Alpha 2"
        );
    }

    // A draft leaves the pages and the counts; published again, it is back.
    assert_eq!(
        patch(&ctx, &a, &json!({"published": false})).await.status,
        200
    );
    let page = detail(&ctx, &one).await;
    assert_eq!(ids(&page["unsectioned_assets"]), vec![b.clone()]);
    assert_eq!(listed_count(&ctx, &one).await, 1);
    assert_eq!(listed_count(&ctx, &two).await, 0);
    assert_eq!(
        patch(&ctx, &a, &json!({"published": true})).await.status,
        200
    );
    assert_eq!(
        ids(&detail(&ctx, &one).await["unsectioned_assets"]),
        vec![a, b]
    );
    assert_eq!(listed_count(&ctx, &one).await, 2);
}

pub(crate) async fn concurrent_patches_never_mix_fields<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let id = ctx.asset_id("Start", "pdf").await;
    let mut patches = JoinSet::new();
    for i in 0..24 {
        let body = json!({"title": format!("v{i}"), "description": format!("v{i}")});
        let request = ctx
            .request(
                Method::PATCH,
                &format!("/api/v1/assets/{id}"),
                Some(&ctx.admin),
            )
            .header("content-type", "application/json")
            .body(body.to_string());
        patches.spawn(async move { Resp::from(request).await });
    }
    while let Some(r) = patches.join_next().await {
        let r = r.unwrap();
        assert_eq!(r.status, 200, "{}", r.json);
    }
    let got = asset_json(&ctx, &id).await;
    assert_eq!(got["title"], got["description"], "two patches mixed: {got}");

    // Two writers of different fields: neither loses a change.
    let (titles, descriptions) = tokio::join!(
        async {
            for i in 0..10 {
                patch(&ctx, &id, &json!({"title": format!("t{i}")})).await;
            }
        },
        async {
            for i in 0..10 {
                patch(&ctx, &id, &json!({"description": format!("d{i}")})).await;
            }
        }
    );
    let ((), ()) = (titles, descriptions);
    let got = asset_json(&ctx, &id).await;
    assert_eq!(
        (&got["title"], &got["description"]),
        (&json!("t9"), &json!("d9"))
    );
}

/// The ids of `GET /api/v1/assets?status=...` by title, and the total.
async fn by_status(ctx: &Ctx, status: &str) -> (Vec<String>, Value) {
    let r = ctx
        .get(&format!(
            "/api/v1/assets?status={status}&sort=title&order=asc"
        ))
        .await;
    (ids(&r.json["data"]), r.json["pagination"]["total"].clone())
}

pub(crate) async fn drafts_are_seen_only_by_writers<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let shown = ctx.asset_id("Shown", "pdf").await;
    let r = ctx
        .post_asset(
            &json!({"title": "Hidden", "asset_type": "link", "published": false,
                            "external_url": "https://example.com/"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["data"]["published"], false);
    let draft = id_of(&r.json["data"]);
    let reader = ctx.key(&[Scope::ReadAssets, Scope::ReadLibraries]).await;
    let missing = json!({"error": "Not found", "message": "Asset not found"});
    for path in ["", "/download", "/usage"] {
        let r = ctx
            .get_as(&format!("/api/v1/assets/{draft}{path}"), Some(&reader))
            .await;
        r.assert(404, missing.clone());
    }
    let list = ctx.get_as("/api/v1/assets", Some(&reader)).await;
    assert_eq!(ids(&list.json["data"]), vec![shown.clone()]);
    assert_eq!(list.json["data"][0]["published"], true);
    ctx.get_as("/api/v1/assets?status=draft", Some(&reader))
        .await
        .assert(
            403,
            json!({"error": "Insufficient permissions",
                   "message": "API key lacks required scope: write:assets"}),
        );
    ctx.get("/api/v1/assets?status=drafts")
        .await
        .assert_invalid("status", "status must be one of: published, draft, any");

    // A writer reads the draft and lists by status.
    assert_eq!(asset_json(&ctx, &draft).await["published"], false);
    assert_eq!(
        by_status(&ctx, "draft").await,
        (vec![draft.clone()], json!(1))
    );
    assert_eq!(
        by_status(&ctx, "any").await,
        (vec![draft.clone(), shown.clone()], json!(2))
    );
    assert_eq!(
        by_status(&ctx, "published").await,
        (vec![shown.clone()], json!(1))
    );
    assert_eq!(
        ctx.get("/api/v1/assets").await.json["pagination"]["total"],
        1
    );

    // Published by PATCH, the reader sees it.
    assert_eq!(
        patch(&ctx, &draft, &json!({"published": true}))
            .await
            .status,
        200
    );
    let r = ctx
        .get_as(&format!("/api/v1/assets/{draft}"), Some(&reader))
        .await;
    assert_eq!(r.json["data"]["published"], true);
}

pub(crate) async fn delete_refuses_held_assets_unless_forced<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = ctx.asset_id("Held", "pdf").await;
    let b = ctx.asset_id("Kept", "pdf").await;
    let (older, older_json) = library_of(&ctx, "Older", &[&a, &b]).await;
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let (newer, newer_json) = library_of(&ctx, "Newer", &[&a]).await;
    detail(&ctx, &older).await;

    let r = delete(&ctx, &a, "").await;
    r.assert(
        409,
        json!({"error": "Conflict",
        "message": "The asset is in 2 libraries; remove it from them first, or delete \
                    with force=true to remove it from them too",
        "libraries": [
            {"id": newer, "title": "Newer", "slug": newer_json["slug"]},
            {"id": older, "title": "Older", "slug": older_json["slug"]},
        ]}),
    );
    assert_eq!(asset_json(&ctx, &a).await["title"], "Held");
    assert_eq!(
        ids(&detail(&ctx, &older).await["unsectioned_assets"]),
        vec![a.clone(), b.clone()]
    );
    delete(&ctx, &a, "?force=maybe")
        .await
        .assert_invalid("force", "force must be one of: true, false, 1, 0");
    delete(&ctx, "nope", "")
        .await
        .assert_invalid("asset_id", "asset_id must be a UUID");

    let r = delete(&ctx, &a, "?force=true").await;
    assert_eq!((r.status, r.raw.len()), (204, 0));
    assert_eq!(
        ids(&detail(&ctx, &older).await["unsectioned_assets"]),
        vec![b.clone()]
    );
    assert_eq!(detail(&ctx, &newer).await["unsectioned_assets"], json!([]));
    assert_eq!(listed_count(&ctx, &older).await, 1);
    assert_eq!(listed_count(&ctx, &newer).await, 0);
    let gone = json!({"error": "Not found", "message": "Asset not found"});
    ctx.get(&format!("/api/v1/assets/{a}"))
        .await
        .assert(404, gone.clone());
    delete(&ctx, &a, "").await.assert(404, gone);
    let list = ctx.get("/api/v1/assets?status=any").await;
    assert_eq!(ids(&list.json["data"]), vec![b.clone()]);

    // An asset no library holds goes at once.
    let c = ctx.asset_id("Free", "link").await;
    assert_eq!(delete(&ctx, &c, "").await.status, 204);
    let writer = ctx.key(&[Scope::WriteAssets]).await;
    let r = Resp::from(ctx.request(Method::DELETE, &format!("/api/v1/assets/{b}"), None)).await;
    assert_eq!(r.status, 401);
    let reader = ctx.key(&[Scope::ReadAssets]).await;
    let r = Resp::from(ctx.request(
        Method::DELETE,
        &format!("/api/v1/assets/{b}"),
        Some(&reader),
    ))
    .await;
    assert_eq!(r.status, 403);
    let r = Resp::from(ctx.request(
        Method::DELETE,
        &format!("/api/v1/assets/{b}"),
        Some(&writer),
    ))
    .await;
    assert_eq!(r.status, 409);
}

pub(crate) async fn usage_lists_the_libraries_newest_first<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = ctx.asset_id("Used", "image").await;
    let lone = ctx.asset_id("Alone", "image").await;
    let (first, first_json) = library_of(&ctx, "First", &[&a]).await;
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let entries = json!([{"asset_id": a}]);
    let (draft, draft_json) = create_library(
        &ctx,
        &json!({"title": "Draft lib", "published": false, "unsectioned_assets": entries}),
    )
    .await;
    let r = ctx.get(&format!("/api/v1/assets/{a}/usage")).await;
    r.assert(
        200,
        json!({"success": true, "data": [
            {"id": draft, "title": "Draft lib", "slug": draft_json["slug"], "published": false},
            {"id": first, "title": "First", "slug": first_json["slug"], "published": true},
        ]}),
    );
    ctx.get(&format!("/api/v1/assets/{lone}/usage"))
        .await
        .assert(200, json!({"success": true, "data": []}));
    let unknown = uuid::Uuid::new_v4();
    assert_eq!(
        ctx.get(&format!("/api/v1/assets/{unknown}/usage"))
            .await
            .status,
        404
    );
    // It needs both read scopes, after a key.
    let r = ctx.get_as(&format!("/api/v1/assets/{a}/usage"), None).await;
    assert_eq!(r.status, 401);
    let no_assets = ctx.key(&[Scope::ReadLibraries, Scope::WriteAssets]).await;
    let r = ctx
        .get_as(&format!("/api/v1/assets/{a}/usage"), Some(&no_assets))
        .await;
    assert_eq!(
        r.json["message"],
        "API key lacks required scope: read:assets"
    );
    let no_libraries = ctx.key(&[Scope::ReadAssets]).await;
    ctx.get_as(&format!("/api/v1/assets/{a}/usage"), Some(&no_libraries))
        .await
        .assert(
            403,
            json!({"error": "Insufficient permissions",
                   "message": "API key lacks required scope: read:libraries"}),
        );
}

pub(crate) async fn a_delete_racing_a_library_write_ends_consistent<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    for round in 0..8 {
        let x = ctx.asset_id(&format!("Racer {round}"), "pdf").await;
        let library = uuid::Uuid::new_v4().to_string();
        let doc = json!({"title": format!("Race {round}"),
                         "sections": [{"title": "S", "assets": [{"asset_id": x}]}]});
        let (put, deleted) = tokio::join!(ctx.put_library(&library, &doc), delete(&ctx, &x, ""));
        match (put.status, deleted.status) {
            (201, 409) => {
                assert_eq!(deleted.json["libraries"][0]["id"], library.as_str());
                let page = detail(&ctx, &library).await;
                assert_eq!(ids(&page["sections"][0]["assets"]), vec![x.clone()]);
            }
            (400, 204) => {
                assert_eq!(
                    put.json["field"], "sections[0].assets[0].asset_id",
                    "{}",
                    put.json
                );
                let r = ctx.get(&format!("/api/v1/libraries/{library}")).await;
                assert_eq!(r.status, 404);
            }
            other => panic!(
                "round {round}: inconsistent {other:?}: {} / {}",
                put.json, deleted.json
            ),
        }
    }
}
