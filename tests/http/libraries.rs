//! `GET /api/v1/libraries` and `GET /api/v1/libraries/{id}`: the list, its order and counts;
//! the detail with and without assets, display order, per-library overrides, thumbnails,
//! hidden drafts, and view counting under concurrency.

use std::collections::HashSet;

use assetlib::AssetType;
use chrono::Utc;
use serde_json::{Value, json};
use tokio::task::JoinSet;
use uuid::Uuid;

use crate::harness::Harness;
use crate::support::{Ctx, Resp, asset, id_of, ids, keys};

/// A library document with `title` and nothing else.
pub(crate) fn doc(title: &str) -> Value {
    json!({"title": title})
}

/// Creates a library through the API and returns its id and the answer's body.
pub(crate) async fn create_library(ctx: &Ctx, doc: &Value) -> (String, Value) {
    let id = Uuid::new_v4().to_string();
    let r = ctx.put_library(&id, doc).await;
    assert_eq!(r.status, 201, "{}", r.json);
    (id, r.json)
}

const LIST_FIELDS: [&str; 13] = [
    "asset_count",
    "cover_image_path",
    "created_at",
    "currency",
    "description",
    "id",
    "is_paid",
    "price",
    "published_at",
    "slug",
    "title",
    "view_count",
    "workspace_id",
];

pub(crate) async fn list_shows_published_libraries_newest_first_with_counts<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    ctx.get("/api/v1/libraries").await.assert(
        200,
        json!({"libraries": [], "pagination": {"page": 1, "limit": 20, "total": 0,
               "total_pages": 0, "has_next": false, "has_prev": false}}),
    );
    let a = ctx.asset_id("A", "pdf").await;
    let b = ctx.asset_id("B", "image").await;
    let c = ctx.asset_id("C", "audio").await;
    let mut made = Vec::new();
    for (i, entries) in [vec![], vec![&a], vec![&a, &b, &c]].into_iter().enumerate() {
        let placed: Vec<Value> = entries.iter().map(|id| json!({"asset_id": id})).collect();
        let (sectioned, unsectioned) = placed.split_at(placed.len() / 2);
        let body = json!({
            "title": format!("Library {i}"), "description": "About it",
            "is_paid": true, "price": 9.5, "currency": "EUR",
            "sections": [{"title": "S", "assets": sectioned}],
            "unsectioned_assets": unsectioned,
        });
        let (id, detail) = create_library(&ctx, &body).await;
        made.push((
            detail["published_at"].as_str().unwrap().to_owned(),
            id,
            detail,
            entries.len(),
        ));
    }
    made.sort_by(|x, y| (&y.0, &y.1).cmp(&(&x.0, &x.1)));

    let r = ctx.get("/api/v1/libraries").await;
    assert_eq!(r.status, 200);
    assert!(
        r.json.get("success").is_none(),
        "the library list has no success field"
    );
    assert_eq!(
        r.json["pagination"],
        json!({"page": 1, "limit": 20, "total": 3, "total_pages": 1, "has_next": false,
               "has_prev": false})
    );
    let list = r.json["libraries"].as_array().unwrap();
    assert_eq!(list.len(), 3);
    for (item, (_, id, detail, count)) in list.iter().zip(&made) {
        assert_eq!(keys(item), LIST_FIELDS, "list item fields");
        assert_eq!(
            *item,
            json!({
                "id": id, "title": detail["title"], "slug": detail["slug"],
                "description": "About it", "cover_image_path": null,
                "published_at": detail["published_at"], "is_paid": true, "price": 9.5,
                "currency": "EUR", "asset_count": count, "view_count": 0,
                "created_at": detail["created_at"], "workspace_id": null
            })
        );
    }
}

pub(crate) async fn list_pagination_clamping_and_workspace_filter<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let mut in_acme = HashSet::new();
    for i in 0..5 {
        let mut d = doc(&format!("L{i}"));
        if i % 2 == 0 {
            d["workspace_id"] = json!("acme");
        }
        let (id, _) = create_library(&ctx, &d).await;
        if i % 2 == 0 {
            in_acme.insert(id);
        }
    }
    let mut seen = Vec::new();
    for (page, has_next, has_prev, len) in
        [(1, true, false, 2), (2, true, true, 2), (3, false, true, 1)]
    {
        let r = ctx
            .get(&format!("/api/v1/libraries?limit=2&page={page}"))
            .await;
        assert_eq!(
            r.json["pagination"],
            json!({"page": page, "limit": 2, "total": 5, "total_pages": 3,
                   "has_next": has_next, "has_prev": has_prev})
        );
        let got = ids(&r.json["libraries"]);
        assert_eq!(got.len(), len);
        seen.extend(got);
    }
    assert_eq!(
        seen.iter().collect::<HashSet<_>>().len(),
        5,
        "no repeats over pages"
    );
    let past = ctx.get("/api/v1/libraries?limit=2&page=4").await;
    assert_eq!(past.json["libraries"], json!([]));
    assert_eq!(past.json["pagination"]["has_next"], false);
    assert_eq!(past.json["pagination"]["has_prev"], true);

    let clamped = ctx.get("/api/v1/libraries?limit=1000").await;
    assert_eq!(clamped.json["pagination"]["limit"], 100);
    assert_eq!(clamped.json["libraries"].as_array().unwrap().len(), 5);

    let acme = ctx.get("/api/v1/libraries?workspace_id=acme").await;
    assert_eq!(
        ids(&acme.json["libraries"])
            .into_iter()
            .collect::<HashSet<_>>(),
        in_acme
    );
    assert_eq!(acme.json["pagination"]["total"], 3);
    assert!(
        acme.json["libraries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["workspace_id"] == "acme")
    );
    let other = ctx.get("/api/v1/libraries?workspace_id=other").await;
    assert_eq!(other.json["pagination"]["total"], 0);

    for (query, field) in [
        ("limit=0", "limit"),
        ("limit=-1", "limit"),
        ("limit=ten", "limit"),
        ("page=0", "page"),
    ] {
        let r = ctx.get(&format!("/api/v1/libraries?{query}")).await;
        r.assert_invalid(field, &format!("{field} must be a positive integer"));
    }
}

/// A library of two sections and unsectioned assets, with overrides and a thumbnail; returns
/// its id, the PUT answer, and the asset ids in page order.
async fn sample(ctx: &Ctx) -> (String, Value, Vec<String>) {
    let mut logo = asset("Logo", AssetType::Image, Utc::now());
    logo.description = Some("The logo".into());
    logo.thumbnail_path = Some("thumbnails/logo.png".into());
    let logo = ctx.insert(logo).await.id.to_string();
    let icon = ctx.asset_id("Icon", "image").await;
    let guide = ctx.asset_id("Guide", "pdf").await;
    let song = ctx.asset_id("Jingle", "audio").await;
    let reel = ctx.asset_id("Reel", "video").await;
    let body = json!({
        "title": "Brand kit", "description": "Everything for the brand",
        "cover_overlay_color": "#1A2B3C", "cover_overlay_opacity": 0.4,
        "sections": [
            {"title": "Logos", "collapsed_by_default": true, "assets": [
                {"asset_id": icon},
                {"asset_id": logo, "title": "Primary logo", "description": "Use on white"}
            ]},
            {"title": "Docs", "description": "Read first", "assets": [{"asset_id": guide}]}
        ],
        "unsectioned_assets": [{"asset_id": reel}, {"asset_id": song, "title": "Theme"}]
    });
    let (id, detail) = create_library(ctx, &body).await;
    (id, detail, vec![icon, logo, guide, reel, song])
}

fn library_asset(
    id: &str,
    title: &str,
    description: Value,
    asset_type: &str,
    thumb: Value,
    order: u32,
) -> Value {
    // These assets have no files: no placeholder, no playing time.
    json!({"id": id, "title": title, "description": description, "asset_type": asset_type,
           "thumbnail_url": thumb, "thumbnail_placeholder": null, "tags": [], "duration_seconds": null,
           "display_order": order})
}

pub(crate) async fn detail_without_assets_has_section_counts<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let (id, put, assets) = sample(&ctx).await;
    let [_, _, _, reel, song] = &assets[..] else {
        unreachable!()
    };
    let sections = put["sections"].as_array().unwrap();
    let expected = |view_count: u64| {
        json!({
            "id": id, "title": "Brand kit", "slug": "brand-kit",
            "description": "Everything for the brand", "cover_image_path": null,
            "cover_overlay_color": "#1A2B3C", "cover_overlay_opacity": 0.4,
            "published_at": put["published_at"], "is_paid": false, "price": null,
            "currency": "USD", "show_asset_count": true, "allow_individual_downloads": true,
            "allow_bulk_download": false, "view_count": view_count,
            "created_at": put["created_at"], "updated_at": put["updated_at"],
            "workspace_id": null,
            "sections": [
                {"id": sections[0]["id"], "title": "Logos", "description": null,
                 "display_order": 0, "collapsed_by_default": true, "asset_count": 2},
                {"id": sections[1]["id"], "title": "Docs", "description": "Read first",
                 "display_order": 1, "collapsed_by_default": false, "asset_count": 1}
            ],
            "unsectioned_assets": [
                library_asset(reel, "Reel", Value::Null, "video", Value::Null, 0),
                library_asset(song, "Theme", Value::Null, "audio", Value::Null, 1)
            ]
        })
    };
    let path = format!("/api/v1/libraries/{id}");
    ctx.get(&path).await.assert(200, expected(1));
    ctx.get(&format!("{path}?include_assets=false"))
        .await
        .assert(200, expected(2));
    ctx.get(&format!("{path}?include_assets=0"))
        .await
        .assert(200, expected(3));
    ctx.get(&format!("{path}?include_assets=maybe"))
        .await
        .assert_invalid(
            "include_assets",
            "include_assets must be one of: true, false, 1, 0",
        );
    let r = ctx.get(&path).await;
    assert!(
        r.json.get("asset_count").is_none(),
        "no asset_count at the root"
    );
    assert_eq!(r.json["view_count"], 4, "the 400 counted no view");
}

pub(crate) async fn detail_with_assets_in_display_order_with_overrides<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let (id, put, assets) = sample(&ctx).await;
    let [icon, logo, guide, reel, song] = &assets[..] else {
        unreachable!()
    };
    let logos = json!([
        library_asset(icon, "Icon", Value::Null, "image", Value::Null, 0),
        library_asset(
            logo,
            "Primary logo",
            json!("Use on white"),
            "image",
            json!("/files/thumbnails/logo.png"),
            1
        ),
    ]);
    let docs = json!([library_asset(
        guide,
        "Guide",
        Value::Null,
        "pdf",
        Value::Null,
        0
    )]);
    // The PUT answer is the detail with assets, and counted no view.
    assert_eq!(put["view_count"], 0);
    assert_eq!(put["sections"][0]["assets"], logos);
    for r in [
        ctx.get(&format!("/api/v1/libraries/{id}?include_assets=true"))
            .await,
        ctx.get(&format!("/api/v1/libraries/{id}?include_assets=1"))
            .await,
    ] {
        assert_eq!(r.status, 200);
        let sections = r.json["sections"].as_array().unwrap();
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[0]["title"], "Logos");
        assert_eq!(sections[0]["display_order"], 0);
        assert_eq!(sections[0]["assets"], logos);
        assert_eq!(sections[1]["assets"], docs);
        for s in sections {
            assert!(s.get("asset_count").is_none(), "no asset_count with assets");
        }
        assert_eq!(
            r.json["unsectioned_assets"],
            json!([
                library_asset(reel, "Reel", Value::Null, "video", Value::Null, 0),
                library_asset(song, "Theme", Value::Null, "audio", Value::Null, 1)
            ])
        );
    }
    // Overrides are per library: the asset itself keeps its own title.
    let own = ctx.get(&format!("/api/v1/assets/{logo}")).await;
    assert_eq!(own.json["data"]["title"], "Logo");
    assert_eq!(own.json["data"]["description"], "The logo");
    assert_eq!(own.json["data"]["thumbnail_path"], "thumbnails/logo.png");

    // Reordering the document reorders the page.
    let reordered = json!({
        "title": "Brand kit",
        "sections": [
            {"title": "Docs", "assets": [{"asset_id": guide}]},
            {"title": "Logos", "assets": [{"asset_id": logo}, {"asset_id": icon}]}
        ],
        "unsectioned_assets": [{"asset_id": song}, {"asset_id": reel}]
    });
    let r = ctx.put_library(&id, &reordered).await;
    assert_eq!(r.status, 200);
    let r = ctx
        .get(&format!("/api/v1/libraries/{id}?include_assets=true"))
        .await;
    let titles = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x["title"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(titles(&r.json["sections"]), ["Docs", "Logos"]);
    assert_eq!(titles(&r.json["sections"][1]["assets"]), ["Logo", "Icon"]);
    assert_eq!(titles(&r.json["unsectioned_assets"]), ["Jingle", "Reel"]);
    let orders: Vec<&Value> = r.json["sections"][1]["assets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["display_order"])
        .collect();
    assert_eq!(orders, [&json!(0), &json!(1)]);
}

pub(crate) async fn detail_leaves_out_unpublished_assets<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let mut draft = asset("Draft", AssetType::Pdf, Utc::now());
    draft.published = false;
    let draft = ctx.insert(draft).await.id.to_string();
    let shown = ctx.asset_id("Shown", "pdf").await;
    let body = json!({
        "title": "Mixed",
        "sections": [{"title": "S", "assets": [{"asset_id": draft}, {"asset_id": shown}]}],
        "unsectioned_assets": []
    });
    let (id, _) = create_library(&ctx, &body).await;
    let r = ctx.get(&format!("/api/v1/libraries/{id}")).await;
    assert_eq!(r.json["sections"][0]["asset_count"], 1);
    let r = ctx
        .get(&format!("/api/v1/libraries/{id}?include_assets=true"))
        .await;
    assert_eq!(ids(&r.json["sections"][0]["assets"]), [shown]);
    let list = ctx.get("/api/v1/libraries").await;
    assert_eq!(list.json["libraries"][0]["asset_count"], 1);
}

pub(crate) async fn detail_404s_and_bad_ids<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let missing = Uuid::new_v4();
    let not_found = json!({"error": "Not found", "message": "Library not found"});
    ctx.get(&format!("/api/v1/libraries/{missing}"))
        .await
        .assert(404, not_found.clone());
    ctx.get(&format!("/api/v1/libraries/{missing}?include_assets=true"))
        .await
        .assert(404, not_found);
    for bad in ["brand-kit", "123", "%00"] {
        let r = ctx.get(&format!("/api/v1/libraries/{bad}")).await;
        r.assert_invalid("library_id", "library_id must be a UUID");
    }
}

pub(crate) async fn unpublished_libraries_are_hidden<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let (id, _) = create_library(&ctx, &doc("Visible")).await;
    let path = format!("/api/v1/libraries/{id}");
    assert_eq!(ctx.get(&path).await.status, 200);
    let first_published = ctx.get(&path).await.json["published_at"].clone();

    let r = ctx
        .put_library(&id, &json!({"title": "Hidden", "published": false}))
        .await;
    assert_eq!(
        r.status, 200,
        "replacing answers the detail, even of a draft"
    );
    ctx.get(&path).await.assert(
        404,
        json!({"error": "Not found", "message": "Library not found"}),
    );
    let list = ctx.get("/api/v1/libraries").await;
    assert_eq!(list.json["libraries"], json!([]));
    assert_eq!(list.json["pagination"]["total"], 0);

    let r = ctx
        .put_library(&id, &json!({"title": "Back", "published": true}))
        .await;
    assert_eq!(r.status, 200);
    let r = ctx.get(&path).await;
    assert_eq!(r.json["title"], "Back");
    assert_eq!(
        r.json["published_at"], first_published,
        "published_at is set only once"
    );
    assert_eq!(
        ids(&ctx.get("/api/v1/libraries").await.json["libraries"]),
        [id.as_str()]
    );

    // A library created as a draft is hidden from the start.
    let (draft, body) = {
        let id = Uuid::new_v4().to_string();
        let r = ctx
            .put_library(&id, &json!({"title": "Draft", "published": false}))
            .await;
        assert_eq!(r.status, 201);
        (id, r.json)
    };
    assert_eq!(body["published_at"], Value::Null);
    assert_eq!(
        ctx.get(&format!("/api/v1/libraries/{draft}")).await.status,
        404
    );
    assert_eq!(
        ctx.get("/api/v1/libraries").await.json["pagination"]["total"],
        1
    );
}

pub(crate) async fn concurrent_detail_reads_count_every_view<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let (id, _) = create_library(&ctx, &doc("Popular")).await;
    let path = format!("/api/v1/libraries/{id}");
    assert_eq!(ctx.get(&path).await.json["view_count"], 1);
    let mut reads = JoinSet::new();
    for _ in 0..100 {
        let request = ctx.request(reqwest::Method::GET, &path, Some(&ctx.admin));
        reads.spawn(async move { Resp::from(request).await });
    }
    let mut counts = HashSet::new();
    while let Some(r) = reads.join_next().await {
        let r = r.unwrap();
        assert_eq!(r.status, 200);
        counts.insert(r.json["view_count"].as_u64().unwrap());
    }
    assert_eq!(
        counts,
        (2..=101).collect::<HashSet<u64>>(),
        "each read saw its own view"
    );
    assert_eq!(ctx.get(&path).await.json["view_count"], 102);
    let list = ctx.get("/api/v1/libraries").await;
    assert_eq!(list.json["libraries"][0]["view_count"], 102);
    assert_eq!(id_of(&list.json["libraries"][0]), id);
}

pub(crate) async fn head_on_a_detail_counts_no_view<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let (id, _) = create_library(&ctx, &doc("Looked at")).await;
    let path = format!("/api/v1/libraries/{id}");
    assert_eq!(ctx.get(&path).await.json["view_count"], 1);
    for _ in 0..3 {
        let head = Resp::from(ctx.request(reqwest::Method::HEAD, &path, Some(&ctx.admin))).await;
        assert_eq!(head.status, 200);
        assert!(head.raw.is_empty());
        assert_eq!(head.header("content-type"), Some("application/json"));
    }
    assert_eq!(ctx.get(&path).await.json["view_count"], 2);
}
