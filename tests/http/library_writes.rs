//! `PUT /api/v1/libraries/{id}` and `DELETE /api/v1/libraries/{id}`: create (201 + Location)
//! and replace (200), what a replace keeps, every document rule with its path, slugs, delete.

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::harness::Harness;
use crate::libraries::{create_library, doc};
use crate::support::{Ctx, Resp, ids};

pub(crate) async fn put_creates_201_then_replaces_200<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let pdf = ctx.asset_id("Guide", "pdf").await;
    let id = Uuid::new_v4().to_string();
    let body = json!({
        "title": "Brand kit", "slug": null, "description": null, "workspace_id": null,
        "cover_image_path": "/covers/brand.jpg", "cover_overlay_color": "#ABC",
        "cover_overlay_opacity": 1, "show_asset_count": false,
        "allow_individual_downloads": false, "allow_bulk_download": true,
        "is_paid": true, "price": 12, "currency": "GBP", "published": true,
        "sections": [{"id": null, "title": "Docs", "description": null,
                      "collapsed_by_default": false,
                      "assets": [{"asset_id": pdf, "title": null, "description": null}]}],
        "unsectioned_assets": []
    });
    let r = ctx.put_library(&id, &body).await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/libraries/{id}").as_str())
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    let created = r.json;
    assert_eq!(created["id"], id);
    assert_eq!(created["slug"], "brand-kit");
    assert_eq!(created["cover_image_path"], "/covers/brand.jpg");
    assert_eq!(created["cover_overlay_color"], "#ABC");
    assert_eq!(created["cover_overlay_opacity"], 1.0);
    assert_eq!(created["show_asset_count"], false);
    assert_eq!(created["allow_individual_downloads"], false);
    assert_eq!(created["allow_bulk_download"], true);
    assert_eq!(
        (&created["is_paid"], &created["price"], &created["currency"]),
        (&json!(true), &json!(12.0), &json!("GBP"))
    );
    assert_eq!(created["view_count"], 0);
    assert_eq!(ids(&created["sections"][0]["assets"]), [pdf.as_str()]);
    assert!(created["published_at"].is_string());
    assert_eq!(
        ctx.get(&format!("/api/v1/libraries/{id}")).await.json["title"],
        "Brand kit"
    );

    let r = ctx
        .put_library(
            &id,
            &json!({"title": "Brand kit v2", "unsectioned_assets": [{"asset_id": pdf}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.header("location"), None);
    assert_eq!(r.json["title"], "Brand kit v2");
    assert_eq!(
        r.json["sections"],
        json!([]),
        "the whole document is replaced"
    );
    assert_eq!(ids(&r.json["unsectioned_assets"]), [pdf]);
    // Defaults of the replaced document apply again.
    assert_eq!(r.json["is_paid"], false);
    assert_eq!(r.json["currency"], "USD");
    assert_eq!(r.json["show_asset_count"], true);
    assert_eq!(r.json["cover_image_path"], Value::Null);
    let list = ctx.get("/api/v1/libraries").await;
    assert_eq!(list.json["pagination"]["total"], 1);
}

pub(crate) async fn put_replace_keeps_counters_and_dates<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let (id, created) = create_library(&ctx, &doc("Counted")).await;
    let path = format!("/api/v1/libraries/{id}");
    for _ in 0..3 {
        ctx.get(&path).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let r = ctx.put_library(&id, &doc("Counted again")).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.json["view_count"], 3,
        "a replace keeps the views and counts none"
    );
    assert_eq!(r.json["created_at"], created["created_at"]);
    assert_eq!(r.json["published_at"], created["published_at"]);
    assert_ne!(r.json["updated_at"], created["updated_at"]);
    // The section ids given are kept.
    let section = Uuid::new_v4().to_string();
    let body = json!({"title": "With ids", "sections": [{"id": section, "title": "S"}]});
    let r = ctx.put_library(&id, &body).await;
    assert_eq!(r.json["sections"][0]["id"], section);
    assert_eq!(r.json["sections"][0]["assets"], json!([]));
}

pub(crate) async fn put_validation_names_the_path<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = ctx.asset_id("A", "pdf").await;
    let b = ctx.asset_id("B", "image").await;
    let entries = json!([{"asset_id": a}, {"asset_id": b}]);
    let cases: Vec<(Value, &str, &str)> = vec![
        (json!({}), "title", "title is required"),
        (json!({"title": ""}), "title", "title must not be blank"),
        (
            json!({"title": "x".repeat(501)}),
            "title",
            "title must be at most 500 characters",
        ),
        (json!({"title": ["x"]}), "title", "title must be a string"),
        (
            json!({"title": "T", "cover_overlay_color": "red"}),
            "cover_overlay_color",
            "cover_overlay_color must be a hex colour: #RGB or #RRGGBB",
        ),
        (
            json!({"title": "T", "cover_overlay_color": "#12345"}),
            "cover_overlay_color",
            "cover_overlay_color must be a hex colour: #RGB or #RRGGBB",
        ),
        (
            json!({"title": "T", "cover_overlay_opacity": 1.5}),
            "cover_overlay_opacity",
            "cover_overlay_opacity must be between 0.0 and 1.0",
        ),
        (
            json!({"title": "T", "cover_overlay_opacity": -0.1}),
            "cover_overlay_opacity",
            "cover_overlay_opacity must be between 0.0 and 1.0",
        ),
        (
            json!({"title": "T", "cover_overlay_opacity": "0.5"}),
            "cover_overlay_opacity",
            "cover_overlay_opacity must be a number",
        ),
        (
            json!({"title": "T", "is_paid": true}),
            "price",
            "price is required for a paid library",
        ),
        (
            json!({"title": "T", "is_paid": true, "price": 0}),
            "price",
            "price must be above 0",
        ),
        (
            json!({"title": "T", "price": -3}),
            "price",
            "price must be above 0",
        ),
        (
            json!({"title": "T", "currency": "usd"}),
            "currency",
            "currency must be three upper-case letters, e.g. USD",
        ),
        (
            json!({"title": "T", "currency": "EURO"}),
            "currency",
            "currency must be three upper-case letters, e.g. USD",
        ),
        (
            json!({"title": "T", "published": "yes"}),
            "published",
            "published must be a boolean",
        ),
        (
            json!({"title": "T", "slug": "Not A Slug"}),
            "slug",
            "slug must be lower-case letters and digits joined by single hyphens, at most 200 characters",
        ),
        (
            json!({"title": "T", "sections": {}}),
            "sections",
            "sections must be an array",
        ),
        (
            json!({"title": "T", "sections": [7]}),
            "sections[0]",
            "sections[0] must be an object",
        ),
        (
            json!({"title": "T", "sections": [{"assets": []}]}),
            "sections[0].title",
            "sections[0].title is required",
        ),
        (
            json!({"title": "T", "sections": [{"title": "S"}, {"title": "S", "id": "x"}]}),
            "sections[1].id",
            "sections[1].id must be a UUID",
        ),
        (
            json!({"title": "T", "sections": [{"title": "S", "assets": [{"asset_id": a}, {"asset_id": b}, {"asset_id": "nope"}]}]}),
            "sections[0].assets[2].asset_id",
            "sections[0].assets[2].asset_id must be a UUID",
        ),
        (
            json!({"title": "T", "sections": [{"title": "S", "assets": [{}]}]}),
            "sections[0].assets[0].asset_id",
            "sections[0].assets[0].asset_id is required",
        ),
        (
            json!({"title": "T", "sections": [{"title": "S", "assets": [{"asset_id": a, "title": " "}]}]}),
            "sections[0].assets[0].title",
            "sections[0].assets[0].title must not be blank",
        ),
        (
            json!({"title": "T", "unsectioned_assets": [{"asset_id": a}, {"asset_id": 3}]}),
            "unsectioned_assets[1].asset_id",
            "unsectioned_assets[1].asset_id must be a string",
        ),
        (
            json!({"title": "T", "sections": [{"title": "S", "assets": entries}],
                "unsectioned_assets": [{"asset_id": b}]}),
            "unsectioned_assets[0].asset_id",
            "asset __B__ appears more than once in the library",
        ),
    ];
    let id = Uuid::new_v4().to_string();
    for (body, field, message) in cases {
        let message = message.replace("__B__", &b);
        ctx.put_library(&id, &body)
            .await
            .assert_invalid(field, &message);
    }
    // None of them created anything.
    assert_eq!(
        ctx.get(&format!("/api/v1/libraries/{id}")).await.status,
        404
    );

    let send = |body: &'static str| {
        ctx.request(
            Method::PUT,
            &format!("/api/v1/libraries/{id}"),
            Some(&ctx.admin),
        )
        .header("content-type", "application/json")
        .body(body)
    };
    Resp::from(send("[1]"))
        .await
        .assert_invalid("body", "Request body must be a JSON object");
    let r = Resp::from(send("{\"title\":")).await;
    assert_eq!((r.status, &r.json["field"]), (400, &json!("body")));
    let r = ctx.put_library("brand-kit", &doc("T")).await;
    r.assert_invalid("library_id", "library_id must be a UUID");
    let r = Resp::from(
        ctx.request(
            Method::PUT,
            &format!("/api/v1/libraries/{id}"),
            Some(&ctx.admin),
        )
        .header("content-type", "text/plain")
        .body(doc("T").to_string()),
    )
    .await;
    r.assert(415, json!({"error": "Unsupported media type", "message": "Content-Type must be application/json"}));
}

pub(crate) async fn put_checks_the_assets_it_places<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let pdf = ctx.asset_id("Guide", "pdf").await;
    let link = ctx.asset_id("Site", "link").await;
    let video = ctx.asset_id("Trailer", "external_video").await;
    let missing = Uuid::new_v4().to_string();
    let id = Uuid::new_v4().to_string();
    let r = ctx
        .put_library(
            &id,
            &json!({"title": "T", "sections": [{"title": "S", "assets": [
            {"asset_id": pdf}, {"asset_id": missing}]}]}),
        )
        .await;
    r.assert_invalid(
        "sections[0].assets[1].asset_id",
        &format!("asset {missing} does not exist"),
    );
    for (other, t) in [(&link, "link"), (&video, "external_video")] {
        let r = ctx
            .put_library(&id, &json!({"title": "T", "unsectioned_assets": [{"asset_id": pdf}, {"asset_id": other}]}))
            .await;
        r.assert_invalid(
            "unsectioned_assets[1].asset_id",
            &format!("asset {other} is of type {t}; libraries hold pdf, image, video, audio and document assets"),
        );
    }
    assert_eq!(
        ctx.get(&format!("/api/v1/libraries/{id}")).await.status,
        404
    );
}

pub(crate) async fn slugs_are_unique_among_libraries<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let (first, body) = create_library(&ctx, &doc("Press kit")).await;
    assert_eq!(body["slug"], "press-kit");
    let (_, body) = create_library(&ctx, &doc("Press Kit")).await;
    assert_eq!(body["slug"], "press-kit-2");
    let (_, body) = create_library(&ctx, &json!({"title": "Other", "slug": "media"})).await;
    assert_eq!(body["slug"], "media");
    // A given slug another library holds is an error; a library never clashes with itself.
    let r = ctx
        .put_library(
            &Uuid::new_v4().to_string(),
            &json!({"title": "X", "slug": "press-kit"}),
        )
        .await;
    assert_eq!(
        (r.status, &r.json["error"], &r.json["field"]),
        (400, &json!("Validation error"), &json!("slug"))
    );
    let r = ctx
        .put_library(&first, &json!({"title": "Press kit", "slug": "press-kit"}))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["slug"], "press-kit");
}

pub(crate) async fn delete_answers_204_then_404<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let pdf = ctx.asset_id("Kept", "pdf").await;
    let (id, _) = create_library(
        &ctx,
        &json!({"title": "Gone", "unsectioned_assets": [{"asset_id": pdf}]}),
    )
    .await;
    let path = format!("/api/v1/libraries/{id}");
    let r = Resp::from(ctx.request(Method::DELETE, &path, Some(&ctx.admin))).await;
    assert_eq!(r.status, 204);
    assert!(r.raw.is_empty());
    let not_found = json!({"error": "Not found", "message": "Library not found"});
    ctx.get(&path).await.assert(404, not_found.clone());
    Resp::from(ctx.request(Method::DELETE, &path, Some(&ctx.admin)))
        .await
        .assert(404, not_found);
    assert_eq!(
        ctx.get("/api/v1/libraries").await.json["pagination"]["total"],
        0
    );
    // Its assets stay.
    assert_eq!(ctx.get(&format!("/api/v1/assets/{pdf}")).await.status, 200);
    // The id can be used again.
    let r = ctx.put_library(&id, &doc("Again")).await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json["view_count"], 0);
}
