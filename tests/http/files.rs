//! Files: metadata read from real files on create, `file_path` confinement, downloads with
//! ranges and their headers and counting, redirects, and public thumbnails.

use assetlib::AssetType;
use assetlib::extract::{self, Limits, samples};
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::harness::Harness;
use crate::support::{Ctx, Resp, id_of};

/// A whole answer whose body need not be JSON.
struct Raw {
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

async fn fetch(ctx: &Ctx, method: Method, path: &str, range: Option<&str>) -> Raw {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let mut request = client
        .request(method, format!("{}{path}", ctx.base_url()))
        .bearer_auth(&ctx.admin);
    if let Some(range) = range {
        request = request.header("range", range);
    }
    let response = request.send().await.expect("request");
    Raw {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: response.bytes().await.expect("body").to_vec(),
    }
}

/// Stores `bytes` at `path` and creates an asset of `asset_type` on it.
pub(crate) async fn create_on(ctx: &Ctx, path: &str, bytes: Vec<u8>, asset_type: &str) -> Value {
    ctx.put_file(path, bytes).await;
    let r = ctx
        .post_asset(
            &json!({"title": format!("File {path}"), "asset_type": asset_type,
                            "file_path": path}),
        )
        .await;
    assert_eq!(r.status, 201, "{path}: {}", r.json);
    r.json["data"].clone()
}

async fn download_count(ctx: &Ctx, id: &str) -> u64 {
    let r = ctx.get(&format!("/api/v1/assets/{id}")).await;
    r.json["data"]["download_count"]
        .as_u64()
        .expect("download_count")
}

pub(crate) async fn create_reads_metadata_from_real_files<H: Harness>() {
    let ctx = Ctx::start::<H>().await;

    let pdf = samples::pdf(3, 40);
    let len = pdf.len() as u64;
    let a = create_on(&ctx, "docs/report.pdf", pdf, "pdf").await;
    assert_eq!(
        (
            &a["mime_type"],
            &a["file_size"],
            &a["page_count"],
            &a["word_count"]
        ),
        (
            &json!("application/pdf"),
            &json!(len),
            &json!(3),
            &json!(120)
        )
    );
    // Page 1 is the thumbnail, 320 px high (a portrait page), served like an image's.
    let thumb = a["thumbnail_path"]
        .as_str()
        .expect("a PDF thumbnail")
        .to_owned();
    crate::probe::assert_random_name(&thumb, &id_of(&a));
    assert!(thumb.ends_with(".png"), "{thumb}");
    let placeholder = a["thumbnail_placeholder"].as_str().expect("a placeholder");
    assert!((20..=40).contains(&placeholder.len()), "{placeholder}");
    let r = reqwest::get(format!("{}/files/{thumb}", ctx.base_url()))
        .await
        .expect("request");
    assert_eq!(r.status(), 200);
    let bytes = r.bytes().await.expect("body");
    let info = extract::extract(&bytes, "t.png", Some(AssetType::Image), &Limits::default())
        .expect("a png");
    // The short side rounded up, as `pdftoppm -scale-to 320` makes it.
    assert_eq!((info.width, info.height), (Some(248), Some(320)));

    // An audio file: what it plays, and its cover as the thumbnail.
    let wav = samples::wav(2_250, 44_100, 2, Some(&samples::jpeg(500, 500)));
    let a = create_on(&ctx, "audio/song.wav", wav, "audio").await;
    assert_eq!(a["duration_seconds"], 2.25, "{a}");
    assert_eq!(a["sample_rate"], 44_100, "{a}");
    assert_eq!(a["channels"], 2, "{a}");
    assert_eq!(a["bitrate"], 1_411_000, "{a}");
    let thumb = a["thumbnail_path"].as_str().expect("the cover");
    assert!(thumb.ends_with(".jpg"), "{thumb}");
    assert!(a["thumbnail_placeholder"].is_string(), "{a}");
    assert!(
        a.get("word_count").is_none() && a.get("width").is_none(),
        "{a}"
    );

    let docx = samples::docx(&["One two three.", "Four five, six seven!"]);
    let a = create_on(&ctx, "docs/notes.docx", docx, "document").await;
    assert_eq!(a["word_count"], 7, "{a}");
    assert_eq!(
        a["mime_type"],
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    );

    let a = create_on(
        &ctx,
        "docs/readme.md",
        b"# Title\n\nSome *plain* words.\n".to_vec(),
        "document",
    )
    .await;
    assert_eq!(a["word_count"], 4, "{a}");

    for (name, bytes, mime) in [
        ("img/a.png", samples::png(640, 480), "image/png"),
        ("img/b.jpg", samples::jpeg(300, 200), "image/jpeg"),
        ("img/c.webp", samples::webp(90, 60), "image/webp"),
        ("img/d.gif", samples::gif(33, 44), "image/gif"),
    ] {
        let (w, h) = match name {
            "img/a.png" => (640, 480),
            "img/b.jpg" => (300, 200),
            "img/c.webp" => (90, 60),
            _ => (33, 44),
        };
        let a = create_on(&ctx, name, bytes, "image").await;
        assert_eq!(
            (&a["width"], &a["height"]),
            (&json!(w), &json!(h)),
            "{name}"
        );
        assert_eq!(a["mime_type"], mime, "{name}");
        let thumb = a["thumbnail_path"].as_str().expect("thumbnail_path");
        crate::probe::assert_random_name(thumb, &id_of(&a));
    }
}

pub(crate) async fn file_paths_outside_the_store_or_missing_are_400<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    ctx.put_file("docs/real.pdf", samples::pdf(1, 5)).await;

    // A file outside the store, and links to it and to the store's own parent.
    let outside = tempfile::tempdir().expect("temp dir");
    let secret = outside.path().join("secret.pdf");
    std::fs::write(&secret, samples::pdf(1, 5)).expect("write");
    let files = ctx.files_dir();
    std::os::unix::fs::symlink(&secret, files.join("docs/link.pdf")).expect("symlink");
    std::os::unix::fs::symlink(outside.path(), files.join("escape")).expect("symlink");
    // A link that stays inside is followed, and the asset keeps the resolved path.
    std::os::unix::fs::symlink(files.join("docs/real.pdf"), files.join("docs/alias.pdf"))
        .expect("symlink");

    for (path, message) in [
        ("../secret.pdf", "file_path must not contain '..' segments"),
        (
            "docs/../../secret.pdf",
            "file_path must not contain '..' segments",
        ),
        (
            "%2e%2e/secret.pdf",
            "file_path must not contain '..' segments",
        ),
        (
            "docs/%2E%2E/%2e%2e/secret.pdf",
            "file_path must not contain '..' segments",
        ),
        (
            "/etc/passwd",
            "file_path must be a relative path inside the file store",
        ),
        ("docs/link.pdf", "file_path leads outside the file store"),
        (
            "escape/secret.pdf",
            "file_path leads outside the file store",
        ),
        (
            "docs/missing.pdf",
            "file_path does not name a file in the file store",
        ),
        ("docs", "file_path does not name a file in the file store"),
    ] {
        let r = ctx
            .post_asset(&json!({"title": "T", "asset_type": "pdf", "file_path": path}))
            .await;
        r.assert_invalid("file_path", message);
    }

    let r = ctx
        .post_asset(&json!({"title": "T", "asset_type": "pdf", "file_path": "docs/alias.pdf"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["data"]["file_path"], "docs/real.pdf");

    // Nothing was created by the refused requests.
    let list = ctx.get("/api/v1/assets").await;
    assert_eq!(list.json["pagination"]["total"], 1);
}

pub(crate) async fn content_of_another_type_is_400<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    ctx.put_file("img/logo.pdf", samples::png(10, 10)).await;
    ctx.put_file("docs/report.png", samples::pdf(1, 3)).await;
    let r = ctx
        .post_asset(&json!({"title": "T", "asset_type": "pdf", "file_path": "img/logo.pdf"}))
        .await;
    r.assert_invalid(
        "file_path",
        "file_path content is image/png, which is not a valid pdf file",
    );
    let r = ctx
        .post_asset(&json!({"title": "T", "asset_type": "image", "file_path": "docs/report.png"}))
        .await;
    r.assert_invalid(
        "file_path",
        "file_path content is application/pdf, which is not a valid image file",
    );
    // An empty file is of no type.
    ctx.put_file("docs/empty.pdf", Vec::new()).await;
    let r = ctx
        .post_asset(&json!({"title": "T", "asset_type": "pdf", "file_path": "docs/empty.pdf"}))
        .await;
    assert_eq!(r.status, 400, "{}", r.json);
    assert_eq!(r.json["field"], "file_path");
    // An empty text file is a document of no words.
    ctx.put_file("docs/empty.txt", Vec::new()).await;
    let r = ctx
        .post_asset(&json!({"title": "T", "asset_type": "document", "file_path": "docs/empty.txt"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["data"]["file_size"], 0);
}

pub(crate) async fn download_sends_the_file_with_its_headers<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let pdf = samples::pdf(2, 30);
    let a = create_on(&ctx, "docs/Brand Guide.PDF", pdf.clone(), "pdf").await;
    let id = id_of(&a);
    let path = format!("/api/v1/assets/{id}/download");

    let r = fetch(&ctx, Method::GET, &path, None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, pdf);
    assert_eq!(r.header("content-type"), Some("application/pdf"));
    assert_eq!(
        r.header("content-length"),
        Some(pdf.len().to_string().as_str())
    );
    assert_eq!(r.header("accept-ranges"), Some("bytes"));
    assert_eq!(
        r.header("content-disposition"),
        Some(r#"attachment; filename="file-docs-brand-guide-pdf.pdf""#)
    );
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(
        r.header("content-security-policy"),
        Some("default-src 'none'; sandbox")
    );
    let etag = r.header("etag").expect("etag").to_owned();
    assert!(
        etag.starts_with('"') && etag.ends_with('"') && etag.len() > 2,
        "{etag}"
    );
    assert_eq!(download_count(&ctx, &id).await, 1);

    // HEAD: the same headers, no body, not counted.
    let h = fetch(&ctx, Method::HEAD, &path, None).await;
    assert_eq!(h.status, 200);
    assert!(h.body.is_empty());
    assert_eq!(h.header("etag"), Some(etag.as_str()));
    assert_eq!(
        h.header("content-length"),
        Some(pdf.len().to_string().as_str())
    );
    assert_eq!(download_count(&ctx, &id).await, 1);

    // Another download counts again.
    let r = fetch(&ctx, Method::GET, &path, None).await;
    assert_eq!(r.body, pdf);
    assert_eq!(download_count(&ctx, &id).await, 2);
}

pub(crate) async fn download_ranges_206_and_416<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let bytes: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
    // Plain text: a document.
    let text: Vec<u8> = bytes.iter().map(|b| b'a' + b % 26).collect();
    let a = create_on(&ctx, "docs/letters.txt", text.clone(), "document").await;
    let id = id_of(&a);
    let path = format!("/api/v1/assets/{id}/download");
    let size = text.len();

    for (range, from, to) in [
        ("bytes=0-0", 0, 1),
        ("bytes=999-999", 999, 1000),
        ("bytes=-10", 990, 1000),
        ("bytes=990-", 990, 1000),
        ("bytes=100-5000", 100, 1000),
        ("bytes=10-19", 10, 20),
    ] {
        let r = fetch(&ctx, Method::GET, &path, Some(range)).await;
        assert_eq!(r.status, 206, "{range}");
        assert_eq!(r.body, &text[from..to], "{range}");
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes {from}-{}/{size}", to - 1).as_str()),
            "{range}"
        );
        assert_eq!(
            r.header("content-length"),
            Some((to - from).to_string().as_str())
        );
    }
    // Only the range that starts at byte 0 began a download.
    assert_eq!(download_count(&ctx, &id).await, 1);

    for range in ["bytes=1000-", "bytes=5000-6000", "bytes=-0"] {
        let r = fetch(&ctx, Method::GET, &path, Some(range)).await;
        assert_eq!(r.status, 416, "{range}");
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes */{size}").as_str())
        );
    }
    // Malformed or multiple ranges are ignored: the whole file.
    for range in ["bytes=abc", "lines=0-5", "bytes=0-1,5-6"] {
        let r = fetch(&ctx, Method::GET, &path, Some(range)).await;
        assert_eq!(r.status, 200, "{range}");
        assert_eq!(r.body, text);
    }
    assert_eq!(download_count(&ctx, &id).await, 4);
}

pub(crate) async fn download_redirects_links_and_404s_without_a_file<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let link = ctx
        .create_asset(json!({"title": "Site", "asset_type": "link",
                             "external_url": "https://example.com/page?a=1"}))
        .await;
    let r = fetch(
        &ctx,
        Method::GET,
        &format!("/api/v1/assets/{}/download", id_of(&link)),
        None,
    )
    .await;
    assert_eq!(r.status, 302);
    assert_eq!(r.header("location"), Some("https://example.com/page?a=1"));

    let video = ctx
        .create_asset(json!({"title": "Talk", "asset_type": "external_video",
                             "external_url": "https://youtu.be/aqz-KE-bpKQ"}))
        .await;
    let r = fetch(
        &ctx,
        Method::GET,
        &format!("/api/v1/assets/{}/download", id_of(&video)),
        None,
    )
    .await;
    assert_eq!(r.status, 302);
    assert_eq!(r.header("location"), Some("https://youtu.be/aqz-KE-bpKQ"));

    let bare = ctx
        .create_asset(json!({"title": "No file yet", "asset_type": "pdf"}))
        .await;
    let r = ctx
        .get(&format!("/api/v1/assets/{}/download", id_of(&bare)))
        .await;
    r.assert(
        404,
        json!({"error": "Not found", "message": "Asset has no downloadable file"}),
    );

    // A file removed from the store after create is no file either.
    let a = create_on(&ctx, "docs/gone.pdf", samples::pdf(1, 3), "pdf").await;
    std::fs::remove_file(ctx.files_dir().join("docs/gone.pdf")).expect("remove");
    let r = ctx
        .get(&format!("/api/v1/assets/{}/download", id_of(&a)))
        .await;
    r.assert(
        404,
        json!({"error": "Not found", "message": "Asset has no downloadable file"}),
    );

    let r = ctx
        .get("/api/v1/assets/00000000-0000-4000-8000-000000000000/download")
        .await;
    r.assert(
        404,
        json!({"error": "Not found", "message": "Asset not found"}),
    );
    let r = ctx.get("/api/v1/assets/nope/download").await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json["field"], "asset_id");
}

pub(crate) async fn thumbnails_are_made_and_served_publicly<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = create_on(&ctx, "img/wide.png", samples::png(800, 400), "image").await;
    let id = id_of(&a);
    let thumb = a["thumbnail_path"].as_str().expect("thumbnail").to_owned();
    crate::probe::assert_random_name(&thumb, &id);
    assert!(thumb.ends_with(".png"), "{thumb}");

    // Public: no key.
    let r = reqwest::get(format!("{}/files/{thumb}", ctx.base_url()))
        .await
        .expect("request");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    let bytes = r.bytes().await.expect("body");
    let info = extract::extract(&bytes, "t.png", Some(AssetType::Image), &Limits::default())
        .expect("a png");
    assert_eq!((info.width, info.height), (Some(320), Some(160)));

    // A JPEG gets a JPEG thumbnail; a small image is not enlarged.
    let b = create_on(&ctx, "img/small.jpg", samples::jpeg(100, 50), "image").await;
    let thumb_b = b["thumbnail_path"].as_str().expect("thumbnail");
    assert!(thumb_b.ends_with(".jpg"), "{thumb_b}");

    // The library shows the URL.
    let lib = "7d0c3c1e-8a3b-4f5e-9c2d-1a2b3c4d5e6f";
    let r = ctx
        .put_library(
            lib,
            &json!({"title": "L", "unsectioned_assets": [{"asset_id": id}]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let r = ctx
        .get(&format!("/api/v1/libraries/{lib}?include_assets=true"))
        .await;
    assert_eq!(
        r.json["unsectioned_assets"][0]["thumbnail_url"],
        format!("/files/{thumb}"),
        "{}",
        r.json
    );

    for missing in ["nope.png", "x.txt", "..%2Fdb.png"] {
        let r = Resp::from(
            reqwest::Client::new().get(format!("{}/files/thumbnails/{missing}", ctx.base_url())),
        )
        .await;
        assert_eq!(r.status, 404, "{missing}");
    }
}

pub(crate) const BOUNDARY: &str = "x-assetlib-test-boundary";

/// A multipart/form-data body with text `fields` and, when given, a `file` part.
pub(crate) fn form(fields: &[(&str, &str)], file: Option<(&str, &[u8])>) -> Vec<u8> {
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    if let Some((file_name, bytes)) = file {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; \
                 filename=\"{file_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

pub(crate) async fn upload(ctx: &Ctx, body: Vec<u8>) -> Resp {
    Resp::from(
        ctx.request(Method::POST, "/api/v1/assets/upload", Some(&ctx.admin))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={BOUNDARY}"),
            )
            .body(body),
    )
    .await
}

/// A download's status, `ETag` and bytes.
pub(crate) async fn download(ctx: &Ctx, id: &str) -> (u16, String, Vec<u8>) {
    let r = ctx
        .request(
            Method::GET,
            &format!("/api/v1/assets/{id}/download"),
            Some(&ctx.admin),
        )
        .send()
        .await
        .expect("download");
    let status = r.status().as_u16();
    let etag = r
        .headers()
        .get("etag")
        .map(|v| v.to_str().expect("etag").to_owned())
        .unwrap_or_default();
    (status, etag, r.bytes().await.expect("body").to_vec())
}

/// Every file under the store's `uploads/`, staging files included.
pub(crate) fn uploaded_files(ctx: &Ctx) -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&ctx.files_dir().join("uploads"), &mut out);
    out
}

pub(crate) async fn total_assets(ctx: &Ctx) -> u64 {
    let list = ctx.get("/api/v1/assets").await;
    list.json["pagination"]["total"].as_u64().expect("total")
}

pub(crate) async fn upload_creates_the_asset_as_create_does<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let png = samples::png(400, 300);
    let r = upload(
        &ctx,
        form(
            &[("title", "Logo"), ("is_public", "true")],
            Some(("Logo Final.png", &png)),
        ),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let a = &r.json["data"];
    let id = id_of(a);
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/assets/{id}").as_str())
    );
    assert_eq!(
        (
            &a["title"],
            &a["asset_type"],
            &a["is_public"],
            &a["width"],
            &a["height"]
        ),
        (
            &json!("Logo"),
            &json!("image"),
            &json!(true),
            &json!(400),
            &json!(300)
        )
    );
    assert_eq!(a["file_size"], png.len());
    let path = a["file_path"].as_str().expect("file_path");
    assert!(
        path.starts_with("uploads/") && path.ends_with("/Logo_Final.png"),
        "{path}"
    );
    let thumb = a["thumbnail_path"].as_str().expect("thumbnail_path");
    crate::probe::assert_random_name(thumb, &id);
    assert!(thumb.ends_with(".png"), "{thumb}");
    let got = fetch(
        &ctx,
        Method::GET,
        &format!("/api/v1/assets/{id}/download"),
        None,
    )
    .await;
    assert_eq!(got.body, png);

    // The title defaults to the file's name; a declared type is checked.
    let pdf = samples::pdf(2, 10);
    let r = upload(
        &ctx,
        form(&[("asset_type", "pdf")], Some(("Q3 report.pdf", &pdf))),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let a = &r.json["data"];
    assert_eq!(
        (
            &a["title"],
            &a["asset_type"],
            &a["page_count"],
            &a["word_count"],
            &a["is_public"]
        ),
        (
            &json!("Q3 report.pdf"),
            &json!("pdf"),
            &json!(2),
            &json!(20),
            &json!(false)
        )
    );
    assert_eq!(uploaded_files(&ctx).len(), 2);
}

pub(crate) async fn bad_uploads_leave_no_file_and_no_asset<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let png = samples::png(20, 20);
    upload(&ctx, form(&[("title", "T")], None))
        .await
        .assert_invalid("file", "A file part named 'file' is required");
    upload(&ctx, form(&[("asset_type", "pdf")], Some(("x.pdf", &png))))
        .await
        .assert_invalid(
            "file",
            "file content is image/png, which is not a valid pdf file",
        );
    upload(&ctx, form(&[("asset_type", "link")], Some(("x.png", &png))))
        .await
        .assert_invalid(
            "asset_type",
            "asset_type of an upload must be one of: pdf, document, image, video, audio",
        );
    upload(&ctx, form(&[("is_public", "yes")], Some(("x.png", &png))))
        .await
        .assert_invalid("is_public", "is_public must be true or false");
    upload(&ctx, form(&[("title", "  ")], Some(("x.png", &png))))
        .await
        .assert_invalid("title", "title must not be blank");
    upload(
        &ctx,
        form(&[], Some(("data.bin", &[0u8, 1, 2, 3, 4, 5, 6, 7]))),
    )
    .await
    .assert_invalid(
        "asset_type",
        "The type of this file (application/octet-stream) could not be inferred; give asset_type",
    );
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/assets/upload",
            Some(&ctx.admin),
            &json!({"title": "T"}),
        )
        .await;
    assert_eq!(r.status, 415, "{}", r.json);
    let r = Resp::from(
        ctx.request(Method::POST, "/api/v1/assets/upload", Some(&ctx.admin))
            .header(
                "content-type",
                format!("multipart/form-data; boundary={BOUNDARY}"),
            )
            .body("--x-assetlib-test-boundary\r\nbroken"),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.json);
    assert_eq!(r.json["field"], "body");

    assert_eq!(total_assets(&ctx).await, 0);
    assert_eq!(uploaded_files(&ctx), Vec::<std::path::PathBuf>::new());
}

pub(crate) async fn uploads_past_the_limit_are_413<H: Harness>() {
    let mut config = assetlib::Config::default();
    config.max_upload = 4096;
    let ctx = Ctx::with_config::<H>(config).await;
    let big = vec![b'a'; 4097];
    let r = upload(
        &ctx,
        form(&[("asset_type", "document")], Some(("big.txt", &big))),
    )
    .await;
    assert_eq!(r.status, 413, "{}", r.json);
    assert_eq!(r.json["error"], "Payload too large");
    let fits = vec![b'a'; 4096];
    let r = upload(
        &ctx,
        form(&[("asset_type", "document")], Some(("fits.txt", &fits))),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(total_assets(&ctx).await, 1);
    assert_eq!(uploaded_files(&ctx).len(), 1);
}

/// Connects to the server and sends `head` and then `body`, returning the stream.
async fn connect(ctx: &Ctx) -> tokio::net::TcpStream {
    let addr = ctx
        .base_url()
        .strip_prefix("http://")
        .expect("http base URL")
        .to_owned();
    tokio::net::TcpStream::connect(addr).await.expect("connect")
}

fn upload_head(ctx: &Ctx, content_length: u64) -> String {
    format!(
        "POST /api/v1/assets/upload HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\
         Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n\
         Content-Length: {content_length}\r\n\r\n",
        ctx.admin
    )
}

pub(crate) async fn a_2_gib_upload_is_refused_before_its_body<H: Harness>() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let ctx = Ctx::start::<H>().await;
    let mut stream = connect(&ctx).await;
    stream
        .write_all(upload_head(&ctx, 2 * 1024 * 1024 * 1024).as_bytes())
        .await
        .expect("write");
    // No body is sent: the answer must come from the headers alone.
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let read = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).await.expect("read");
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&buf[..n]);
        }
    })
    .await;
    assert!(read.is_ok(), "no answer before the body was sent");
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(uploaded_files(&ctx).is_empty());
}

pub(crate) async fn a_client_that_disconnects_mid_upload_leaves_nothing<H: Harness>() {
    use tokio::io::AsyncWriteExt as _;
    let ctx = Ctx::start::<H>().await;
    // More than one 5 MiB part reaches the server before the client goes away.
    let content = vec![b'z'; 16 * 1024 * 1024];
    let body = form(&[("asset_type", "document")], Some(("cut.txt", &content)));
    let mut stream = connect(&ctx).await;
    stream
        .write_all(upload_head(&ctx, body.len() as u64).as_bytes())
        .await
        .expect("write head");
    stream
        .write_all(&body[..body.len() / 2])
        .await
        .expect("write half");
    stream.flush().await.expect("flush");
    // Wait until the server has begun storing the part, then go away.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while uploaded_files(&ctx).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(
        !uploaded_files(&ctx).is_empty(),
        "the server began storing the file"
    );
    drop(stream);

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !uploaded_files(&ctx).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(uploaded_files(&ctx), Vec::<std::path::PathBuf>::new());
    assert_eq!(total_assets(&ctx).await, 0);
}

/// The names and contents of a zip's files, in order. Sections and their assets are in
/// document order, as on the library's page.
pub(crate) fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    use std::io::Read as _;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index(i).expect("entry");
            let mut content = Vec::new();
            file.read_to_end(&mut content).expect("read entry");
            (file.name().to_owned(), content)
        })
        .collect()
}

pub(crate) async fn bulk_download_zips_the_library_in_page_order<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let pdf = samples::pdf(1, 5);
    let png = samples::png(30, 20);
    let txt = b"plain words here".to_vec();
    let report = id_of(&create_on(&ctx, "docs/report.pdf", pdf.clone(), "pdf").await);
    let logo = id_of(&create_on(&ctx, "img/logo.png", png.clone(), "image").await);
    let logo_again = id_of(&create_on(&ctx, "img/logo2.png", png.clone(), "image").await);
    let notes = id_of(&create_on(&ctx, "docs/notes.txt", txt.clone(), "document").await);
    let bare = id_of(
        &ctx.create_asset(json!({"title": "No file", "asset_type": "pdf"}))
            .await,
    );
    let lib = "3f6c2a1b-9d8e-4c7b-a6f5-e4d3c2b1a091";
    let doc = json!({
        "title": "Press kit", "allow_bulk_download": true,
        "sections": [
            {"title": "Logos / marks",
             "assets": [{"asset_id": logo_again}, {"asset_id": logo}]},
            {"title": "Docs", "assets": [{"asset_id": report}, {"asset_id": bare}]}
        ],
        "unsectioned_assets": [{"asset_id": notes}]
    });
    let r = ctx.put_library(lib, &doc).await;
    assert_eq!(r.status, 201, "{}", r.json);

    let path = format!("/api/v1/libraries/{lib}/download");
    let r = fetch(&ctx, Method::GET, &path, None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/zip"));
    assert_eq!(
        r.header("content-disposition"),
        Some(r#"attachment; filename="press-kit.zip""#)
    );
    let files = unzip(&r.body);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let slug = |title: &str| assetlib::validate::slug_from_title(title, "asset");
    assert_eq!(
        names,
        [
            format!("Logos _ marks/{}.png", slug("File img/logo2.png")),
            format!("Logos _ marks/{}.png", slug("File img/logo.png")),
            format!("Docs/{}.pdf", slug("File docs/report.pdf")),
            format!("{}.txt", slug("File docs/notes.txt")),
        ]
    );
    assert_eq!(files[1].1, png);
    assert_eq!(files[2].1, pdf);
    assert_eq!(files[3].1, txt);

    // HEAD sends the headers only.
    let h = fetch(&ctx, Method::HEAD, &path, None).await;
    assert_eq!(h.status, 200);
    assert!(h.body.is_empty());

    // Both read scopes are needed.
    let only_libraries = ctx.key(&[assetlib::Scope::ReadLibraries]).await;
    ctx.get_as(&path, Some(&only_libraries)).await.assert(
        403,
        json!({"error": "Insufficient permissions",
               "message": "API key lacks required scope: read:assets"}),
    );

    // A library that does not allow it.
    let mut closed = doc.clone();
    closed["allow_bulk_download"] = json!(false);
    assert_eq!(ctx.put_library(lib, &closed).await.status, 200);
    ctx.get(&path).await.assert(
        403,
        json!({"error": "Bulk download disabled",
               "message": "This library does not allow bulk download"}),
    );
    ctx.get("/api/v1/libraries/3f6c2a1b-9d8e-4c7b-a6f5-000000000000/download")
        .await
        .assert(
            404,
            json!({"error": "Not found", "message": "Library not found"}),
        );
}
