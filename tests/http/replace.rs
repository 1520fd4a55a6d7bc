//! `PUT /api/v1/assets/{id}/file` and the files a delete removes: the new file in place
//! before the old one goes, a failed replacement changing nothing, and no file left behind.

use std::path::{Path, PathBuf};

use assetlib::extract::samples;
use reqwest::Method;
use serde_json::{Value, json};

use crate::files::{BOUNDARY, create_on, download, form, upload};
use crate::harness::Harness;
use crate::support::{Ctx, Resp, id_of};

/// `PUT /api/v1/assets/{id}/file` with a multipart `body`, as the admin.
pub(crate) async fn replace(ctx: &Ctx, id: &str, body: Vec<u8>) -> Resp {
    Resp::from(
        ctx.request(
            Method::PUT,
            &format!("/api/v1/assets/{id}/file"),
            Some(&ctx.admin),
        )
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(body),
    )
    .await
}

/// Every file in the file store, as paths relative to it, sorted.
fn stored_files(ctx: &Ctx) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path: PathBuf = entry.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else if let Ok(rel) = path.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let root = ctx.files_dir();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort();
    out
}

fn path_of(asset: &Value, field: &str) -> String {
    asset[field]
        .as_str()
        .unwrap_or_else(|| panic!("no {field} in {asset}"))
        .to_owned()
}

pub(crate) async fn a_replaced_file_downloads_new_bytes_under_the_same_id<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let old_png = samples::png(64, 32);
    let r = upload(
        &ctx,
        form(&[("title", "Logo")], Some(("logo.png", &old_png))),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let old = r.json["data"].clone();
    let id = id_of(&old);
    let (_, old_etag, bytes) = download(&ctx, &id).await;
    assert_eq!(bytes, old_png);
    let lib = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Kit", "unsectioned_assets": [{"asset_id": id}]});
    assert_eq!(ctx.put_library(&lib, &doc).await.status, 201);

    let new_png = samples::png(400, 300);
    let r = replace(
        &ctx,
        &id,
        form(&[("title", "ignored")], Some(("logo-v2.png", &new_png))),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let new = r.json["data"].clone();
    assert_eq!(
        (&new["id"], &new["slug"], &new["title"]),
        (&old["id"], &old["slug"], &old["title"])
    );
    assert_eq!((&new["width"], &new["height"]), (&json!(400), &json!(300)));
    assert_eq!(new["file_size"], new_png.len());
    assert_ne!(new["file_path"], old["file_path"]);
    assert_ne!(new["thumbnail_path"], old["thumbnail_path"]);
    assert!(new["updated_at"].as_str() > old["updated_at"].as_str());

    let (status, etag, bytes) = download(&ctx, &id).await;
    assert_eq!((status, bytes), (200, new_png));
    assert_ne!(etag, old_etag, "a new file has a new ETag");
    // The old file and thumbnail are gone; the new ones are all that is stored.
    let mut want = vec![path_of(&new, "file_path"), path_of(&new, "thumbnail_path")];
    want.sort();
    assert_eq!(stored_files(&ctx), want);
    // The library page shows the new thumbnail on the next read.
    let page = ctx
        .get(&format!("/api/v1/libraries/{lib}?include_assets=true"))
        .await;
    assert_eq!(
        page.json["unsectioned_assets"][0]["thumbnail_url"],
        format!("/files/{}", path_of(&new, "thumbnail_path"))
    );
}

pub(crate) async fn a_failed_replacement_changes_nothing<H: Harness>() {
    let mut config = assetlib::Config::default();
    config.max_upload = 64 * 1024;
    let ctx = Ctx::with_config::<H>(config).await;
    let png = samples::png(40, 40);
    let r = upload(&ctx, form(&[], Some(("a.png", &png)))).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let asset = r.json["data"].clone();
    let id = id_of(&asset);
    let before_files = stored_files(&ctx);
    let before_download = download(&ctx, &id).await;

    let pdf = samples::pdf(1, 10);
    replace(&ctx, &id, form(&[], Some(("a.pdf", &pdf))))
        .await
        .assert_invalid(
            "file",
            "file content is application/pdf, which is not a valid image file",
        );
    replace(&ctx, &id, form(&[("title", "x")], None))
        .await
        .assert_invalid("file", "A file part named 'file' is required");
    let big = vec![7u8; 128 * 1024];
    assert_eq!(
        replace(&ctx, &id, form(&[], Some(("big.png", &big))))
            .await
            .status,
        413
    );
    let r = ctx
        .send_json(
            Method::PUT,
            &format!("/api/v1/assets/{id}/file"),
            Some(&ctx.admin),
            &json!({}),
        )
        .await;
    r.assert(
        415,
        json!({"error": "Unsupported media type",
               "message": "Content-Type must be multipart/form-data"}),
    );
    let broken = Resp::from(
        ctx.request(Method::PUT, &format!("/api/v1/assets/{id}/file"), Some(&ctx.admin))
            .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
            .body(format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.png\"\r\n\r\npartial")),
    )
    .await;
    assert_eq!(
        (broken.status, &broken.json["field"]),
        (400, &json!("body"))
    );

    assert_eq!(
        stored_files(&ctx),
        before_files,
        "a failed replacement leaves no file"
    );
    assert_eq!(
        download(&ctx, &id).await,
        before_download,
        "the old file stays"
    );
    let mut now = ctx.get(&format!("/api/v1/assets/{id}")).await.json["data"].clone();
    now["download_count"] = asset["download_count"].clone();
    assert_eq!(now, asset, "the asset is as it was (its downloads aside)");

    // Only file-based assets have a file; unknown ids are 404.
    let link = ctx.asset_id("A link", "link").await;
    replace(&ctx, &link, form(&[], Some(("a.png", &png))))
        .await
        .assert_invalid(
            "file",
            "link assets have no file; files belong to pdf, document, image, video and audio assets",
        );
    let unknown = uuid::Uuid::new_v4().to_string();
    replace(&ctx, &unknown, form(&[], Some(("a.png", &png))))
        .await
        .assert(
            404,
            json!({"error": "Not found", "message": "Asset not found"}),
        );
}

pub(crate) async fn delete_removes_the_files_the_api_stored_and_only_those<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    // Uploaded, then replaced: every file it ever had goes with it.
    let r = upload(&ctx, form(&[], Some(("a.png", &samples::png(50, 50))))).await;
    let uploaded = id_of(&r.json["data"]);
    let r = replace(
        &ctx,
        &uploaded,
        form(&[], Some(("b.jpg", &samples::jpeg(60, 40)))),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    // Placed by the app: its file stays, its thumbnail goes.
    let placed = create_on(&ctx, "brand/photo.png", samples::png(30, 30), "image").await;
    assert!(stored_files(&ctx).len() >= 4);

    let path = |id: &str| format!("/api/v1/assets/{id}");
    for id in [uploaded, id_of(&placed)] {
        let r = Resp::from(ctx.request(Method::DELETE, &path(&id), Some(&ctx.admin))).await;
        assert_eq!(r.status, 204, "{}", r.json);
    }
    assert_eq!(stored_files(&ctx), vec!["brand/photo.png".to_owned()]);
    assert!(
        !ctx.files_dir().join("uploads").exists()
            || std::fs::read_dir(ctx.files_dir().join("uploads"))
                .expect("uploads")
                .next()
                .is_none(),
        "no empty upload folder is left"
    );

    // Assets may not be made on the API's own folders.
    for path in ["uploads/mine.pdf", "derived/x/mine.pdf"] {
        ctx.put_file(path, samples::pdf(1, 5)).await;
        ctx.post_asset(&json!({"title": "T", "asset_type": "pdf", "file_path": path}))
            .await
            .assert_invalid(
                "file_path",
                "file_path must not be in uploads/, thumbnails/ or derived/: the API keeps its own files there",
            );
    }
}
