//! Organizing assets (DESIGN.md §5 "Tags, checksums, bulk changes"): tags on every asset
//! object and their filters, `GET /api/v1/tags`, `checksum_sha256` of every stored file with
//! `on_duplicate` on upload and tus, and `POST /api/v1/assets/bulk` item by item or all at
//! once.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use serde_json::{Value, json};

use crate::files::{form, upload, uploaded_files};
use crate::harness::Harness;
use crate::support::{Ctx, Resp, id_of};

/// `POST /api/v1/assets/bulk` with the admin key.
async fn bulk(ctx: &Ctx, body: Value) -> Resp {
    ctx.send_json(Method::POST, "/api/v1/assets/bulk", Some(&ctx.admin), &body)
        .await
}

/// The titles of a list's page and its total.
async fn listed(ctx: &Ctx, query: &str) -> (Vec<String>, u64) {
    let r = ctx.get(&format!("/api/v1/assets?{query}")).await;
    assert_eq!(r.status, 200, "{query}: {}", r.json);
    let titles = r.json["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|a| a["title"].as_str().expect("title").to_owned())
        .collect();
    (
        titles,
        r.json["pagination"]["total"].as_u64().expect("total"),
    )
}

async fn tags_of(ctx: &Ctx, id: &str) -> Value {
    ctx.get(&format!("/api/v1/assets/{id}")).await.json["data"]["tags"].clone()
}

/// `sha256sum` of a file, as the coreutils tool prints it.
fn sha256sum(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum (coreutils) runs");
    assert!(out.status.success(), "sha256sum {}", path.display());
    String::from_utf8(out.stdout).expect("text")[..64].to_owned()
}

pub(crate) async fn tags_are_kept_on_create_upload_patch_and_every_asset_object<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = ctx
        .create_asset(json!({"title": "Logo", "asset_type": "link",
            "external_url": "https://example.com/", "tags": [" Brand ", "logo", "BRAND"]}))
        .await;
    assert_eq!(
        a["tags"],
        json!(["Brand", "logo"]),
        "trimmed, first spelling kept"
    );
    let up = upload(
        &ctx,
        form(
            &[("tags", "Print, brand,,2026")],
            Some(("guide.pdf", &assetlib_core::extract::samples::pdf(1, 5))),
        ),
    )
    .await;
    assert_eq!(up.status, 201, "{}", up.json);
    assert_eq!(up.json["data"]["tags"], json!(["Print", "brand", "2026"]));
    let plain = ctx.asset_id("Plain", "pdf").await;
    assert_eq!(
        tags_of(&ctx, &plain).await,
        json!([]),
        "every asset has tags"
    );

    let id = id_of(&a);
    let path = format!("/api/v1/assets/{id}");
    let r = ctx
        .send_json(
            Method::PATCH,
            &path,
            Some(&ctx.admin),
            &json!({"tags": ["New"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["data"]["tags"], json!(["New"]));
    let r = ctx
        .send_json(
            Method::PATCH,
            &path,
            Some(&ctx.admin),
            &json!({"tags": null}),
        )
        .await;
    assert_eq!(r.json["data"]["tags"], json!([]));

    // A library shows its assets' tags, and follows a change of them.
    let upload_id = id_of(&up.json["data"]);
    let lib = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Kit", "published": true,
        "unsectioned_assets": [{"asset_id": upload_id, "display_order": 0}]});
    assert!(ctx.put_library(&lib, &doc).await.status < 300);
    let shown = ctx.get(&format!("/api/v1/libraries/{lib}")).await;
    assert_eq!(
        shown.json["unsectioned_assets"][0]["tags"],
        json!(["Print", "brand", "2026"]),
        "{}",
        shown.json
    );
    let r = ctx
        .send_json(
            Method::PATCH,
            &format!("/api/v1/assets/{upload_id}"),
            Some(&ctx.admin),
            &json!({"tags": ["Poster"]}),
        )
        .await;
    assert_eq!(r.status, 200);
    let shown = ctx.get(&format!("/api/v1/libraries/{lib}")).await;
    assert_eq!(
        shown.json["unsectioned_assets"][0]["tags"],
        json!(["Poster"])
    );

    // Bad tags: 400 naming the field, nothing stored.
    let many: Vec<String> = (0..33).map(|i| format!("t{i}")).collect();
    let long = "x".repeat(65);
    for (tags, field) in [
        (json!(many), "tags"),
        (json!(["ok", long]), "tags[1]"),
        (json!(["ok", "  "]), "tags[1]"),
        (json!(["a,b"]), "tags[0]"),
        (json!("brand"), "tags"),
        (json!([1]), "tags[0]"),
    ] {
        let r = ctx
            .post_asset(&json!({"title": "T", "asset_type": "pdf", "tags": tags}))
            .await;
        assert_eq!(r.status, 400, "{tags}: {}", r.json);
        assert_eq!(r.json["field"], field, "{tags}");
        let r = ctx
            .send_json(
                Method::PATCH,
                &path,
                Some(&ctx.admin),
                &json!({"tags": tags}),
            )
            .await;
        assert_eq!(r.json["field"], field, "PATCH {tags}");
    }
    let r = ctx
        .send_json(
            Method::PATCH,
            &path,
            Some(&ctx.admin),
            &json!({"checksum_sha256": "00"}),
        )
        .await;
    assert_eq!(
        (r.status, r.json["field"].as_str()),
        (400, Some("checksum_sha256"))
    );
    assert_eq!(listed(&ctx, "per_page=100&status=any").await.1, 3);
}

pub(crate) async fn tag_filters_and_the_tag_list<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    for (title, tags, published) in [
        ("A", json!(["Brand", "logo"]), true),
        ("B", json!(["brand"]), true),
        ("C", json!(["LOGO", "print"]), true),
        ("D", json!([]), true),
        ("E", json!(["brand"]), false),
    ] {
        ctx.create_asset(json!({"title": title, "asset_type": "pdf", "tags": tags,
            "published": published}))
            .await;
    }
    assert_eq!(
        listed(&ctx, "tag=BRAND").await,
        (vec!["B".into(), "A".into()], 2)
    );
    assert_eq!(
        listed(&ctx, "tag=brand&tag=Logo").await,
        (vec!["A".into()], 1)
    );
    assert_eq!(
        listed(&ctx, "any_tag=print,brand&sort=title&order=asc").await,
        (vec!["A".into(), "B".into(), "C".into()], 3)
    );
    assert_eq!(listed(&ctx, "tag=logo&any_tag=print").await.0, ["C"]);
    assert_eq!(listed(&ctx, "tag=brand&status=any").await.1, 3);
    assert_eq!(listed(&ctx, "tag=brand&per_page=1&page=2").await.0, ["A"]);
    assert_eq!(listed(&ctx, "tag=nothing").await.1, 0);

    let r = ctx.get("/api/v1/tags").await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(
        r.json["data"],
        json!([{"tag": "brand", "count": 2}, {"tag": "logo", "count": 2},
               {"tag": "print", "count": 1}]),
        "published assets only, most used first"
    );
    let r = ctx.get("/api/v1/tags?limit=1").await;
    assert_eq!(r.json["data"].as_array().map(Vec::len), Some(1));
    let reader = ctx.key(&[assetlib::Scope::ReadAssets]).await;
    assert_eq!(ctx.get_as("/api/v1/tags", Some(&reader)).await.status, 200);
    assert_eq!(ctx.get_as("/api/v1/tags", None).await.status, 401);

    let long = "x".repeat(65);
    let many: String = (0..33).map(|i| format!("t{i},")).collect();
    for (query, field) in [
        (format!("tag={long}"), "tag"),
        ("tag=%20".to_owned(), "tag"),
        (format!("any_tag={many}"), "any_tag"),
        ("checksum=abc".to_owned(), "checksum"),
        (format!("checksum={}", "g".repeat(64)), "checksum"),
        ("limit=0".to_owned(), "limit"),
    ] {
        let path = if field == "limit" {
            format!("/api/v1/tags?{query}")
        } else {
            format!("/api/v1/assets?{query}")
        };
        let r = ctx.get(&path).await;
        assert_eq!(r.status, 400, "{query}: {}", r.json);
        assert_eq!(r.json["field"], field, "{query}");
    }
}

/// Every file of the test corpus, uploaded, replaced in and created from `file_path`, and sent
/// through tus: `checksum_sha256` is what `sha256sum` says of the stored bytes, and
/// `checksum=` finds the asset.
pub(crate) async fn checksums_are_the_sha256_of_the_stored_bytes<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut corpus: Vec<std::path::PathBuf> = Vec::new();
    for dir in ["media", "pdf"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("testdata") {
            let path = entry.expect("entry").path();
            if !matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("json" | "sh")
            ) {
                corpus.push(path);
            }
        }
    }
    corpus.sort();
    assert!(corpus.len() >= 20, "the corpus: {corpus:?}");
    let check = |asset: &Value, original: &Path| {
        let stored = ctx
            .files_dir()
            .join(asset["file_path"].as_str().expect("file_path"));
        let sum = asset["checksum_sha256"]
            .as_str()
            .expect("checksum")
            .to_owned();
        assert_eq!(sum, sha256sum(&stored), "{}", original.display());
        assert_eq!(sum, sha256sum(original), "{}", original.display());
        sum
    };
    for path in &corpus {
        let bytes = std::fs::read(path).expect("read");
        let name = path.file_name().and_then(|n| n.to_str()).expect("name");
        let r = upload(&ctx, form(&[], Some((name, &bytes)))).await;
        assert_eq!(r.status, 201, "{name}: {}", r.json);
        let sum = check(&r.json["data"], path);
        let found = ctx
            .get(&format!("/api/v1/assets?checksum={}", sum.to_uppercase()))
            .await;
        assert_eq!(found.json["data"][0]["id"], r.json["data"]["id"], "{name}");
    }

    // Created from a file the app placed, then its file replaced.
    let pdf = std::fs::read(root.join("pdf/ltnews18.pdf")).expect("pdf");
    let created = crate::files::create_on(&ctx, "docs/news.pdf", pdf, "pdf").await;
    check(&created, &root.join("pdf/ltnews18.pdf"));
    let other = assetlib_core::extract::samples::pdf(3, 40);
    let other_path = std::env::temp_dir().join(format!("assetlib-{}.pdf", uuid::Uuid::new_v4()));
    std::fs::write(&other_path, &other).expect("write");
    let r = Resp::from(
        ctx.request(
            Method::PUT,
            &format!("/api/v1/assets/{}/file", id_of(&created)),
            Some(&ctx.admin),
        )
        .header(
            "content-type",
            format!("multipart/form-data; boundary={}", crate::files::BOUNDARY),
        )
        .body(form(&[], Some(("other.pdf", &other)))),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    check(&r.json["data"], &other_path);

    // Through tus, in one request (creation-with-upload).
    let mp3 = root.join("media/sine.mp3");
    let bytes = std::fs::read(&mp3).expect("mp3");
    let r = Resp::from(
        ctx.request(Method::POST, "/api/v1/uploads", Some(&ctx.admin))
            .header("tus-resumable", "1.0.0")
            .header("upload-length", bytes.len().to_string())
            .header(
                "upload-metadata",
                format!("filename {}", STANDARD.encode("sine.mp3")),
            )
            .header("content-type", "application/offset+octet-stream")
            .body(bytes),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let at = r
        .header("asset-location")
        .expect("asset location")
        .to_owned();
    let id = at.rsplit('/').next().expect("id");
    let asset = ctx.get(&format!("/api/v1/assets/{id}")).await.json["data"].clone();
    check(&asset, &mp3);
    std::fs::remove_file(other_path).ok();
}

pub(crate) async fn duplicates_are_rejected_or_reused_on_upload_and_tus<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let png = assetlib_core::extract::samples::png(12, 8);
    let first = upload(&ctx, form(&[("title", "First")], Some(("a.png", &png)))).await;
    assert_eq!(first.status, 201);
    let first_id = id_of(&first.json["data"]);
    let files_before = uploaded_files(&ctx).len();
    let upload_with = |mode: &'static str| {
        let body = form(&[("title", "Again")], Some(("b.png", &png)));
        let ctx = &ctx;
        async move {
            Resp::from(
                ctx.request(
                    Method::POST,
                    &format!("/api/v1/assets/upload?on_duplicate={mode}"),
                    Some(&ctx.admin),
                )
                .header(
                    "content-type",
                    format!("multipart/form-data; boundary={}", crate::files::BOUNDARY),
                )
                .body(body),
            )
            .await
        }
    };

    let r = upload_with("reject").await;
    assert_eq!(r.status, 409, "{}", r.json);
    assert_eq!(r.json["asset_id"], first_id.as_str());
    assert_eq!(r.json["error"], "Conflict");
    let r = upload_with("reuse").await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(id_of(&r.json["data"]), first_id);
    assert!(r.header("location").is_none());
    assert_eq!(listed(&ctx, "status=any").await.1, 1, "nothing new stored");
    assert_eq!(
        uploaded_files(&ctx).len(),
        files_before,
        "no file left behind"
    );
    let r = upload_with("skip").await;
    assert_eq!(
        (r.status, r.json["field"].as_str()),
        (400, Some("on_duplicate"))
    );
    let r = upload_with("allow").await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(listed(&ctx, "status=any").await.1, 2);

    // tus: the last byte meets the rule.
    let tus = |mode: &str| {
        let meta = format!(
            "filename {},on_duplicate {}",
            STANDARD.encode("c.png"),
            STANDARD.encode(mode)
        );
        ctx.request(Method::POST, "/api/v1/uploads", Some(&ctx.admin))
            .header("tus-resumable", "1.0.0")
            .header("upload-length", png.len().to_string())
            .header("upload-metadata", meta)
            .header("content-type", "application/offset+octet-stream")
            .body(png.clone())
    };
    let r = Resp::from(tus("reject")).await;
    assert_eq!(r.status, 409, "{}", r.json);
    assert_eq!(r.json["asset_id"], first_id.as_str());
    let r = Resp::from(tus("reuse")).await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert!(
        r.header("asset-location")
            .expect("asset location")
            .ends_with(&first_id),
        "the asset with these bytes"
    );
    let r = Resp::from(tus("sometimes")).await;
    assert_eq!(
        (r.status, r.json["field"].as_str()),
        (400, Some("on_duplicate"))
    );
    assert_eq!(listed(&ctx, "status=any").await.1, 2, "nothing new stored");
    assert_eq!(
        uploaded_files(&ctx).len(),
        files_before + 1,
        "only the allowed one"
    );
}

pub(crate) async fn bulk_changes_item_by_item_or_all_at_once<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let mut ids = Vec::new();
    for i in 0..4 {
        let a = ctx
            .create_asset(json!({"title": format!("Asset {i}"), "asset_type": "pdf",
                "tags": ["old"]}))
            .await;
        ids.push(id_of(&a));
    }
    let held = ids[3].clone();
    let lib = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Kit", "published": true,
        "unsectioned_assets": [{"asset_id": held, "display_order": 0}]});
    assert!(ctx.put_library(&lib, &doc).await.status < 300);
    let unknown = uuid::Uuid::new_v4().to_string();

    // Item by item: the unknown id is a 404 item, the rest change.
    let r = bulk(
        &ctx,
        json!({"action": "patch", "ids": [ids[0], unknown, held],
               "changes": {"title": "Renamed", "published": true}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let data = &r.json["data"];
    assert_eq!(
        (data["succeeded"].as_u64(), data["failed"].as_u64()),
        (Some(2), Some(1))
    );
    let results = data["results"].as_array().expect("results");
    assert_eq!(results[0]["status"], 200);
    assert_eq!(results[0]["asset"]["title"], "Renamed");
    assert_eq!(results[1]["id"], unknown.as_str());
    assert_eq!(results[1]["status"], 404);
    assert_eq!(results[1]["error"]["error"], "Not found");
    let shown = ctx.get(&format!("/api/v1/libraries/{lib}")).await;
    assert_eq!(
        shown.json["unsectioned_assets"][0]["title"], "Renamed",
        "libraries follow on the next read"
    );

    let r = bulk(
        &ctx,
        json!({"action": "add_tags", "ids": [ids[0], ids[1]],
        "changes": {"tags": ["New", "OLD"]}}),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(tags_of(&ctx, &ids[1]).await, json!(["old", "New"]));
    let r = bulk(
        &ctx,
        json!({"action": "remove_tags", "ids": [ids[1]],
        "changes": {"tags": ["old"]}}),
    )
    .await;
    assert_eq!(
        r.json["data"]["results"][0]["asset"]["tags"],
        json!(["New"])
    );
    assert_eq!(listed(&ctx, "tag=new").await.1, 2);

    // All at once: one item that cannot take it stops all, and changes nothing.
    let many: Vec<String> = (0..31).map(|i| format!("t{i}")).collect();
    let r = bulk(
        &ctx,
        json!({"action": "add_tags", "ids": [ids[2]],
        "changes": {"tags": many}}),
    )
    .await;
    assert_eq!(r.status, 200);
    let more = json!({"action": "add_tags", "ids": [ids[0], ids[2], unknown], "atomic": true,
        "changes": {"tags": ["x1", "x2"]}});
    let r = bulk(&ctx, more.clone()).await;
    assert_eq!(r.status, 409, "{}", r.json);
    let results = r.json["results"]["results"].as_array().expect("results");
    assert_eq!(results[0]["status"], 424);
    assert_eq!(results[0]["error"]["error"], "Not applied");
    assert_eq!(results[1]["status"], 400);
    assert_eq!(results[1]["error"]["field"], "tags");
    assert_eq!(results[2]["status"], 404);
    assert_eq!(listed(&ctx, "tag=x1").await.1, 0, "nothing changed");
    assert_eq!(tags_of(&ctx, &ids[0]).await, json!(["old", "New"]));

    // Deletes keep the 409 rule per item; force takes a held asset out of its library.
    let r = bulk(
        &ctx,
        json!({"action": "delete", "ids": [held, ids[2]], "atomic": true}),
    )
    .await;
    assert_eq!(r.status, 409);
    assert_eq!(r.json["results"]["results"][0]["status"], 409);
    assert_eq!(
        r.json["results"]["results"][0]["error"]["libraries"][0]["id"],
        lib.as_str()
    );
    assert_eq!(listed(&ctx, "").await.1, 4);
    let r = bulk(&ctx, json!({"action": "delete", "ids": [held, ids[2]]})).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json["data"]["results"][0]["status"], 409);
    assert_eq!(r.json["data"]["results"][1]["status"], 204);
    let r = bulk(
        &ctx,
        json!({"action": "delete", "ids": [held], "force": true, "atomic": true}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(listed(&ctx, "").await.1, 2);
    let shown = ctx.get(&format!("/api/v1/libraries/{lib}")).await;
    assert_eq!(shown.json["unsectioned_assets"], json!([]));

    // Bad bodies: 400 naming the field, nothing changed.
    let hundred_one: Vec<String> = (0..101).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    for (body, field) in [
        (json!({"action": "delete", "ids": hundred_one}), "ids"),
        (
            json!({"action": "delete", "ids": [ids[0], ids[0]]}),
            "ids[1]",
        ),
        (json!({"action": "delete", "ids": ["nope"]}), "ids[0]"),
        (json!({"action": "archive", "ids": [ids[0]]}), "action"),
        (
            json!({"action": "patch", "ids": [ids[0]], "changes": {"slug": "s"}}),
            "changes.slug",
        ),
        (
            json!({"action": "patch", "ids": [ids[0]], "changes": {"asset_type": "image"}}),
            "changes.asset_type",
        ),
        (
            json!({"action": "add_tags", "ids": [ids[0]], "changes": {"tags": [" "]}}),
            "changes.tags[0]",
        ),
    ] {
        let r = bulk(&ctx, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.json);
        assert_eq!(r.json["field"], field, "{body}");
    }
    assert_eq!(listed(&ctx, "").await.1, 2);
    let reader = ctx.key(&[assetlib::Scope::ReadAssets]).await;
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/assets/bulk",
            Some(&reader),
            &json!({"action": "delete", "ids": [ids[0]]}),
        )
        .await;
    assert_eq!(r.status, 403);
}

/// Bulk tag changes racing each other and single `PATCH`es of other fields, atomic or not,
/// over the same assets in different orders: every request is answered 200 (counted by
/// status), and no tag added is lost.
pub(crate) async fn racing_bulk_changes_lose_no_tag<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let mut ids = Vec::new();
    for i in 0..12 {
        let kind = ["pdf", "image", "video"][i % 3];
        let a = ctx
            .create_asset(json!({"title": format!("Asset {i}"), "asset_type": kind,
                "tags": ["shared"]}))
            .await;
        ids.push(id_of(&a));
    }
    const ROUNDS: usize = 24;
    let mut requests = tokio::task::JoinSet::new();
    for i in 0..ROUNDS {
        let mut order = ids.clone();
        if i % 2 == 1 {
            order.reverse();
        }
        order.rotate_left(i % ids.len());
        let body = json!({"action": "add_tags", "ids": order, "atomic": i % 3 != 0,
            "changes": {"tags": [format!("t{i}")]}});
        let bulk = ctx
            .request(Method::POST, "/api/v1/assets/bulk", Some(&ctx.admin))
            .header("content-type", "application/json")
            .body(body.to_string());
        requests.spawn(async move { ("bulk", Resp::from(bulk).await) });
        // A single change of another field of one of them, and a publication flip.
        let id = &ids[i % ids.len()];
        let patch = ctx
            .request(
                Method::PATCH,
                &format!("/api/v1/assets/{id}"),
                Some(&ctx.admin),
            )
            .header("content-type", "application/json")
            .body(json!({"description": format!("d{i}"), "published": i % 4 != 0}).to_string());
        requests.spawn(async move { ("patch", Resp::from(patch).await) });
    }
    let mut statuses: std::collections::BTreeMap<(&str, u16), usize> = Default::default();
    while let Some(done) = requests.join_next().await {
        let (kind, r) = done.expect("request");
        *statuses.entry((kind, r.status)).or_default() += 1;
        if kind == "bulk" && r.status == 200 {
            assert_eq!(r.json["data"]["failed"], 0, "{}", r.json);
        }
    }
    assert_eq!(
        statuses,
        [(("bulk", 200), ROUNDS), (("patch", 200), ROUNDS)]
            .into_iter()
            .collect(),
        "every request answered 200"
    );
    for id in &ids {
        let tags = tags_of(&ctx, id).await;
        let tags = tags.as_array().expect("tags");
        assert_eq!(tags.len(), ROUNDS + 1, "{id}: {tags:?}");
    }
    // Publish them all, then the counts are exact.
    let r = bulk(
        &ctx,
        json!({"action": "patch", "ids": ids, "atomic": true,
        "changes": {"published": true}}),
    )
    .await;
    assert_eq!(r.status, 200);
    let counts = ctx.get("/api/v1/tags?limit=1000").await.json["data"].clone();
    let counts = counts.as_array().expect("counts");
    assert_eq!(counts.len(), ROUNDS + 1);
    assert!(counts.iter().all(|c| c["count"] == ids.len()), "{counts:?}");
}
