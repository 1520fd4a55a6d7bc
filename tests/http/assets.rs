//! `POST /api/v1/assets` and `GET /api/v1/assets/{id}`: the created asset, its fields per
//! type, every validation rule with its field, content types, 404s and drafts.

use assetlib::AssetType;
use assetlib::extract::samples;
use reqwest::Method;
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::harness::Harness;
use crate::support::{Ctx, Resp, asset, id_of, ids, keys};

const BASE_FIELDS: [&str; 19] = [
    "asset_type",
    "checksum_sha256",
    "created_at",
    "description",
    "download_count",
    "file_path",
    "file_size",
    "id",
    "is_public",
    "mime_type",
    "page_count",
    "published",
    "slug",
    "tags",
    "thumbnail_path",
    "thumbnail_placeholder",
    "title",
    "updated_at",
    "workspace_id",
];

fn is_rfc3339_millis_utc(s: &str) -> bool {
    // 2026-11-22T10:15:30.123Z
    s.len() == 24
        && s.ends_with('Z')
        && chrono::DateTime::parse_from_rfc3339(s).is_ok()
        && s.as_bytes()[19] == b'.'
}

pub(crate) async fn create_answers_201_with_location_and_the_asset<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let pdf = samples::pdf(3, 50);
    let size = pdf.len();
    let sum: String = sha2::Sha256::digest(&pdf)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    ctx.put_file("docs/brand-guide.pdf", pdf).await;
    let r = ctx
        .post_asset(&json!({
            "title": "Brand Guide 2026",
            "description": "How to use the logo",
            "asset_type": "pdf",
            "is_public": true,
            "file_path": "docs/brand-guide.pdf"
        }))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json["success"], true);
    let data = &r.json["data"];
    let id = id_of(data);
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/assets/{id}").as_str())
    );
    assert!(uuid::Uuid::parse_str(&id).is_ok());
    let created_at = data["created_at"].as_str().unwrap();
    assert!(is_rfc3339_millis_utc(created_at), "{created_at}");
    assert_eq!(data["updated_at"], data["created_at"]);
    // Page 1 is rendered as the thumbnail (tests/http/files.rs looks at it).
    let thumbnail = data["thumbnail_path"].as_str().expect("a thumbnail");
    let placeholder = data["thumbnail_placeholder"]
        .as_str()
        .expect("a placeholder");
    assert_eq!(
        *data,
        json!({
            "id": id, "title": "Brand Guide 2026", "slug": "brand-guide-2026",
            "description": "How to use the logo", "asset_type": "pdf",
            "file_path": "docs/brand-guide.pdf", "file_size": size,
            "mime_type": "application/pdf", "thumbnail_path": thumbnail,
            "thumbnail_placeholder": placeholder, "page_count": 3,
            "download_count": 0, "is_public": true, "published": true,
            "created_at": created_at, "updated_at": created_at, "word_count": 150,
            "tags": [], "checksum_sha256": sum, "workspace_id": null
        })
    );

    // The Location reads back the same object.
    let got = ctx.get(r.header("location").unwrap()).await;
    got.assert(200, json!({"success": true, "data": data}));

    // A second asset with the same title gets the next free slug; is_public defaults to false.
    let again = ctx
        .create_asset(json!({"title": "Brand guide 2026", "asset_type": "document"}))
        .await;
    assert_eq!(again["slug"], "brand-guide-2026-2");
    assert_eq!(again["is_public"], false);
    assert_eq!(again["description"], Value::Null);
    let third = ctx
        .create_asset(json!({"title": "Ünïcödé Straße!", "asset_type": "collection"}))
        .await;
    assert_eq!(third["slug"], "unicode-strasse");
}

pub(crate) async fn every_type_has_every_field_and_only_its_extras<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let cases: [(&str, &[&str]); 9] = [
        ("pdf", &["word_count"]),
        ("document", &["word_count"]),
        ("image", &["height", "width"]),
        (
            "video",
            &["duration_seconds", "height", "video_codec", "width"],
        ),
        ("external_video", &["external_url", "video_embed"]),
        (
            "audio",
            &["bitrate", "channels", "duration_seconds", "sample_rate"],
        ),
        ("link", &["external_url"]),
        ("collection", &[]),
        ("git", &["external_url"]),
    ];
    for (asset_type, extras) in cases {
        let mut body = json!({"title": format!("A {asset_type}"), "asset_type": asset_type});
        if matches!(asset_type, "link" | "git") {
            body["external_url"] = json!("https://example.com/repo");
        }
        if asset_type == "external_video" {
            body["external_url"] = json!("https://vimeo.com/76979871");
        }
        let data = ctx.create_asset(body).await;
        let mut expected: Vec<String> = BASE_FIELDS.iter().map(|s| s.to_string()).collect();
        expected.extend(extras.iter().map(|s| s.to_string()));
        expected.sort();
        assert_eq!(keys(&data), expected, "{asset_type}");
        assert_eq!(data["asset_type"], asset_type);
        let read = ctx.get(&format!("/api/v1/assets/{}", id_of(&data))).await;
        read.assert(200, json!({"success": true, "data": data}));
    }
    // Every created type is in the list, with the same objects.
    let list = ctx.get("/api/v1/assets?per_page=100").await;
    assert_eq!(list.json["pagination"]["total"], 9);
}

pub(crate) async fn external_videos_get_an_embed_address<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    for (url, embed) in [
        (
            "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
            "https://www.youtube.com/embed/dQw4w9WgXcQ",
        ),
        (
            "https://youtu.be/dQw4w9WgXcQ?t=42",
            "https://www.youtube.com/embed/dQw4w9WgXcQ?start=42",
        ),
        (
            "https://vimeo.com/76979871",
            "https://player.vimeo.com/video/76979871",
        ),
        (
            "https://cdn.example.com/clip.mp4",
            "https://cdn.example.com/clip.mp4",
        ),
    ] {
        let data = ctx
            .create_asset(
                json!({"title": "Clip", "asset_type": "external_video", "external_url": url}),
            )
            .await;
        assert_eq!(data["external_url"], url);
        assert_eq!(data["video_embed"], embed, "{url}");
    }
    let r = ctx
        .post_asset(&json!({"title": "Clip", "asset_type": "external_video",
                            "external_url": "https://example.com/page"}))
        .await;
    r.assert_invalid(
        "external_url",
        "external_url is not a video address that can be embedded: use a YouTube, Vimeo, Loom, \
         Wistia or Dailymotion link, or a direct .mp4, .webm, .mov or .m3u8 file",
    );
}

pub(crate) async fn create_validation_names_each_field<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let types = "pdf, document, image, video, external_video, audio, link, collection, git";
    let cases: Vec<(Value, &str, String)> = vec![
        (
            json!({"asset_type": "pdf"}),
            "title",
            "title is required".into(),
        ),
        (
            json!({"title": null, "asset_type": "pdf"}),
            "title",
            "title is required".into(),
        ),
        (
            json!({"title": "   ", "asset_type": "pdf"}),
            "title",
            "title must not be blank".into(),
        ),
        (
            json!({"title": 5, "asset_type": "pdf"}),
            "title",
            "title must be a string".into(),
        ),
        (
            json!({"title": "x".repeat(501), "asset_type": "pdf"}),
            "title",
            "title must be at most 500 characters".into(),
        ),
        (
            json!({"title": "T"}),
            "asset_type",
            "asset_type is required".into(),
        ),
        (
            json!({"title": "T", "asset_type": "spreadsheet"}),
            "asset_type",
            format!("asset_type must be one of: {types}"),
        ),
        (
            json!({"title": "T", "asset_type": "PDF"}),
            "asset_type",
            format!("asset_type must be one of: {types}"),
        ),
        (
            json!({"title": "T", "asset_type": "link"}),
            "external_url",
            "external_url is required for link assets".into(),
        ),
        (
            json!({"title": "T", "asset_type": "external_video"}),
            "external_url",
            "external_url is required for external_video assets".into(),
        ),
        (
            json!({"title": "T", "asset_type": "link", "external_url": "ftp://example.com/x"}),
            "external_url",
            "external_url must be an absolute http(s) URL".into(),
        ),
        (
            json!({"title": "T", "asset_type": "link", "external_url": "/relative"}),
            "external_url",
            "external_url must be an absolute http(s) URL".into(),
        ),
        (
            json!({"title": "T", "asset_type": "link", "external_url": 7}),
            "external_url",
            "external_url must be a string".into(),
        ),
        (
            json!({"title": "T", "asset_type": "pdf", "is_public": "yes"}),
            "is_public",
            "is_public must be a boolean".into(),
        ),
        (
            json!({"title": "T", "asset_type": "pdf", "description": ["a"]}),
            "description",
            "description must be a string".into(),
        ),
        (
            json!({"title": "T", "asset_type": "pdf", "file_path": "../etc/passwd"}),
            "file_path",
            "file_path must not contain '..' segments".into(),
        ),
        (
            json!({"title": "T", "asset_type": "pdf", "file_path": "/etc/passwd"}),
            "file_path",
            "file_path must be a relative path inside the file store".into(),
        ),
        (
            json!({"title": "T", "asset_type": "link", "external_url": "https://e.com",
                   "file_path": "a.pdf"}),
            "file_path",
            "file_path is only accepted for pdf, document, image, video and audio assets".into(),
        ),
    ];
    for (body, field, message) in cases {
        let r = ctx.post_asset(&body).await;
        r.assert_invalid(field, &message);
    }

    // Bodies that are not a JSON object name the field `body`.
    let send = |body: &'static str| {
        ctx.request(Method::POST, "/api/v1/assets", Some(&ctx.admin))
            .header("content-type", "application/json")
            .body(body)
    };
    for body in ["", "{\"title\": ", "nope"] {
        let r = Resp::from(send(body)).await;
        assert_eq!(r.status, 400, "{body:?}");
        assert_eq!(r.json["error"], "Validation error");
        assert_eq!(r.json["field"], "body");
        let message = r.json["message"].as_str().unwrap();
        assert!(
            message.starts_with("Request body is not valid JSON: "),
            "{message}"
        );
    }
    for body in ["[]", "\"title\"", "null", "42"] {
        Resp::from(send(body))
            .await
            .assert_invalid("body", "Request body must be a JSON object");
    }
    // Nothing was created by any of them.
    let list = ctx.get("/api/v1/assets").await;
    assert_eq!(list.json["pagination"]["total"], 0);
}

pub(crate) async fn titles_count_characters_not_bytes<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let title = "é".repeat(500); // 1000 bytes, 500 characters
    let data = ctx
        .create_asset(json!({"title": title, "asset_type": "audio"}))
        .await;
    assert_eq!(data["title"], title);
    let r = ctx
        .post_asset(&json!({"title": "é".repeat(501), "asset_type": "audio"}))
        .await;
    r.assert_invalid("title", "title must be at most 500 characters");
}

pub(crate) async fn null_optional_fields_and_unknown_fields_are_accepted<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let data = ctx
        .create_asset(json!({
            "title": "Plain", "asset_type": "image", "description": null, "is_public": null,
            "file_path": null, "external_url": null, "colour": "blue", "nested": {"a": 1}
        }))
        .await;
    assert_eq!(data["description"], Value::Null);
    assert_eq!(data["is_public"], false);
    assert_eq!(data["file_path"], Value::Null);
    assert_eq!(data["width"], Value::Null);
    assert!(data.get("colour").is_none());
}

pub(crate) async fn create_needs_a_json_content_type<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let body = json!({"title": "T", "asset_type": "pdf"}).to_string();
    let unsupported = json!({"error": "Unsupported media type",
                             "message": "Content-Type must be application/json"});
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let mut r = ctx
            .request(Method::POST, "/api/v1/assets", Some(&ctx.admin))
            .body(body.clone());
        if let Some(ct) = content_type {
            r = r.header("content-type", ct);
        }
        Resp::from(r).await.assert(415, unsupported.clone());
    }
    for content_type in [
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/vnd.api+json",
    ] {
        let r = ctx
            .request(Method::POST, "/api/v1/assets", Some(&ctx.admin))
            .header("content-type", content_type)
            .body(body.clone());
        assert_eq!(Resp::from(r).await.status, 201, "{content_type}");
    }
}

pub(crate) async fn get_one_asset_404_and_bad_id<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let r = ctx
        .get("/api/v1/assets/3f2504e0-4f89-41d3-9a0c-0305e82c3301")
        .await;
    r.assert(
        404,
        json!({"error": "Not found", "message": "Asset not found"}),
    );
    for bad in [
        "nope",
        "3f2504e0",
        "3f2504e04f8941d39a0c0305e82c3301",
        "%FF",
        "%20",
    ] {
        let r = ctx.get(&format!("/api/v1/assets/{bad}")).await;
        r.assert_invalid("asset_id", "asset_id must be a UUID");
    }
    // Ids are accepted in either case.
    let id = ctx.asset_id("Upper", "pdf").await;
    let r = ctx
        .get(&format!("/api/v1/assets/{}", id.to_uppercase()))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["data"]["id"], id);
}

pub(crate) async fn drafts_are_hidden_from_reads_and_lists<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let mut draft = asset("Draft", AssetType::Pdf, chrono::Utc::now());
    draft.published = false;
    let draft = ctx.insert(draft).await;
    let published = ctx.asset_id("Published", "pdf").await;
    // Drafts are for keys with write:assets; a reader does not see them.
    let reader = ctx.key(&[assetlib::Scope::ReadAssets]).await;
    let r = ctx
        .get_as(&format!("/api/v1/assets/{}", draft.id), Some(&reader))
        .await;
    r.assert(
        404,
        json!({"error": "Not found", "message": "Asset not found"}),
    );
    let list = ctx.get_as("/api/v1/assets", Some(&reader)).await;
    assert_eq!(ids(&list.json["data"]), vec![published]);
    assert_eq!(list.json["pagination"]["total"], 1);
    let search = ctx.get("/api/v1/assets?search=draft").await;
    assert_eq!(search.json["pagination"]["total"], 0);
}

pub(crate) async fn concurrent_creates_all_land_with_unique_slugs<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let mut creates = tokio::task::JoinSet::new();
    for _ in 0..50 {
        let request = ctx
            .request(Method::POST, "/api/v1/assets", Some(&ctx.admin))
            .header("content-type", "application/json")
            .body(json!({"title": "Same name", "asset_type": "image"}).to_string());
        creates.spawn(async move { Resp::from(request).await });
    }
    let mut slugs = std::collections::HashSet::new();
    while let Some(r) = creates.join_next().await {
        let r = r.unwrap();
        assert_eq!(r.status, 201, "{}", r.json);
        slugs.insert(r.json["data"]["slug"].as_str().unwrap().to_owned());
    }
    let mut expected: std::collections::HashSet<String> =
        (2..=50).map(|n| format!("same-name-{n}")).collect();
    expected.insert("same-name".to_owned());
    assert_eq!(slugs, expected);
    let list = ctx.get("/api/v1/assets?per_page=100").await;
    assert_eq!(list.json["pagination"]["total"], 50);
}

/// A write of one asset shows on that asset's very next read, and leaves the other assets'
/// kept answers in place where the store keeps a version per asset (sled, and PostgreSQL
/// while it listens for notices; with `ReplicaSync::Strict` every write moves every asset's).
pub(crate) async fn a_write_of_one_asset_leaves_the_others_kept<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = ctx.asset_id("Kept A", "link").await;
    // The stores keep a version per group of assets (4,096 groups by the id's low bits): b
    // must not share a's.
    let group = |id: &str| id.parse::<uuid::Uuid>().map_or(0, |u| u.as_u128() % 4096);
    let mut b = ctx.asset_id("Kept B", "link").await;
    while group(&b) == group(&a) {
        b = ctx.asset_id("Kept B", "link").await;
    }
    let read = |id: String| {
        let ctx = &ctx;
        async move {
            let r = ctx.get(&format!("/api/v1/assets/{id}")).await;
            assert_eq!(r.status, 200, "{}", r.json);
            r.json["data"]["title"].as_str().unwrap_or("").to_owned()
        }
    };
    let strict = ctx.service.config().replica_sync == assetlib::ReplicaSync::Strict;
    // A PostgreSQL store keeps versions per asset once its listening connection is up, which
    // it may not be yet when the store opens (until then, as under `Strict`, every write
    // moves every asset's version): a few rounds give it the time.
    let rounds = if strict { 1 } else { 50 };
    let mut kept = false;
    for round in 0..rounds {
        assert_eq!(read(b.clone()).await, "Kept B");
        assert_eq!(read(b.clone()).await, "Kept B");
        let hits = ctx.service.cache_stats().assets.hits;
        assert!(hits >= 1, "the second read is kept");

        let title = format!("Kept A, renamed {round}");
        let patched = ctx
            .send_json(
                Method::PATCH,
                &format!("/api/v1/assets/{a}"),
                Some(&ctx.admin),
                &json!({ "title": title }),
            )
            .await;
        assert_eq!(patched.status, 200, "{}", patched.json);
        assert_eq!(read(a.clone()).await, title, "the next read");
        assert_eq!(read(b.clone()).await, "Kept B");
        let after = ctx.service.cache_stats().assets.hits;
        if strict {
            assert_eq!(after, hits, "a strict store moves every asset's version");
        } else if after == hits + 1 {
            kept = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(strict || kept, "b's kept answer outlived a's write");
}
