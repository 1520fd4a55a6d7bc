//! Resumable uploads (DESIGN.md §5 "Resumable and direct uploads"): the tus 1.0 protocol at
//! `/api/v1/uploads` with `creation`, `creation-with-upload`, `termination`, `expiration` and
//! `checksum`; the asset its last byte makes, as an upload's; every bad input with its tus
//! status and a JSON body, nothing kept beyond what is valid; one writer at a time; expiry.
//! The bytes wait in each kind of file store: a local file (the harness's), a multipart
//! upload (`Files::memory`) and pieces (any other object store).

use std::sync::Arc;
use std::time::Duration;

use assetlib::{Config, Files};
use assetlib_core::extract::samples;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::files::{download, form, upload, uploaded_files};
use crate::harness::Harness;
use crate::support::{Ctx, Resp};

/// The content type of a `PATCH` body.
pub(crate) const OCTETS: &str = "application/offset+octet-stream";

/// `Upload-Metadata` of `pairs`.
pub(crate) fn metadata(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k} {}", STANDARD.encode(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// A tus request: `Tus-Resumable: 1.0.0` and the admin key.
pub(crate) fn tus(ctx: &Ctx, method: Method, path: &str) -> reqwest::RequestBuilder {
    ctx.request(method, path, Some(&ctx.admin))
        .header("tus-resumable", "1.0.0")
}

/// Makes an upload of `length` bytes with `meta`; answers its path (from `Location`).
pub(crate) async fn create(ctx: &Ctx, length: usize, meta: &str) -> String {
    let r = Resp::from(
        tus(ctx, Method::POST, "/api/v1/uploads")
            .header("upload-length", length.to_string())
            .header("upload-metadata", meta),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.header("upload-offset"), Some("0"));
    assert_eq!(r.header("tus-resumable"), Some("1.0.0"));
    let location = r.header("location").expect("location");
    let path = location
        .strip_prefix(ctx.base_url())
        .unwrap_or(location)
        .to_owned();
    assert!(path.starts_with("/api/v1/uploads/"), "{location}");
    path
}

/// `PATCH`es `bytes` at `offset`.
pub(crate) async fn patch(ctx: &Ctx, path: &str, offset: usize, bytes: &[u8]) -> Resp {
    Resp::from(
        tus(ctx, Method::PATCH, path)
            .header("content-type", OCTETS)
            .header("upload-offset", offset.to_string())
            .body(bytes.to_vec()),
    )
    .await
}

/// The upload's offset, by `HEAD`.
async fn offset(ctx: &Ctx, path: &str) -> u64 {
    let r = Resp::from(tus(ctx, Method::HEAD, path)).await;
    assert_eq!(r.status, 200, "HEAD {path}");
    assert_eq!(r.header("cache-control"), Some("no-store"));
    r.header("upload-offset")
        .expect("upload-offset")
        .parse()
        .expect("a number")
}

/// `Upload-Checksum` of `bytes`.
fn checksum(bytes: &[u8]) -> String {
    format!("sha256 {}", STANDARD.encode(Sha256::digest(bytes)))
}

/// The asset an `Asset-Location` names, read through the API.
pub(crate) async fn asset_at(ctx: &Ctx, r: &Resp) -> Value {
    let location = r.header("asset-location").expect("asset-location");
    let path = location.strip_prefix(ctx.base_url()).unwrap_or(location);
    let got = ctx.get(path).await;
    assert_eq!(got.status, 200, "{}", got.json);
    got.json["data"].clone()
}

/// The fields of an asset that its file decides.
fn file_facts(asset: &Value) -> Value {
    json!({
        "title": asset["title"], "asset_type": asset["asset_type"],
        "mime_type": asset["mime_type"], "file_size": asset["file_size"],
        "page_count": asset["page_count"], "word_count": asset["word_count"],
        "is_public": asset["is_public"], "published": asset["published"],
        "has_thumbnail": asset["thumbnail_url"].is_string(),
        "checksum_sha256": asset["checksum_sha256"],
    })
}

/// Sends a PDF in three `PATCH`es (the middle one with a checksum) to an upload in `files`
/// and checks the asset is the one `POST /api/v1/assets/upload` makes of the same file.
async fn upload_in_pieces<H: Harness>(ctx: &Ctx) {
    let r = Resp::from(ctx.request(Method::OPTIONS, "/api/v1/uploads", None)).await;
    assert_eq!(r.status, 204);
    assert_eq!(r.header("tus-version"), Some("1.0.0"));
    assert_eq!(
        r.header("tus-extension"),
        Some("creation,creation-with-upload,termination,expiration,checksum")
    );
    assert_eq!(r.header("tus-checksum-algorithm"), Some("sha256"));
    assert_eq!(
        r.header("tus-max-size"),
        Some((10u64 << 30).to_string().as_str())
    );

    let pdf = samples::pdf(40, 300);
    let meta = metadata(&[
        ("filename", "annual report.pdf"),
        ("title", "Annual report"),
        ("is_public", "true"),
        ("custom", "ignored"),
    ]);
    let path = create(ctx, pdf.len(), &meta).await;
    assert_eq!(offset(ctx, &path).await, 0);
    let status = ctx.get(&path).await;
    assert_eq!(status.status, 200, "{}", status.json);
    assert_eq!(status.json["data"]["length"], json!(pdf.len()));
    assert_eq!(status.json["data"]["asset_id"], Value::Null);

    let (a, b) = (pdf.len() / 3, 2 * pdf.len() / 3);
    let r = patch(ctx, &path, 0, &pdf[..a]).await;
    assert_eq!(r.status, 204, "{}", r.json);
    assert_eq!(r.header("upload-offset"), Some(a.to_string().as_str()));
    assert!(
        r.header("upload-expires")
            .is_some_and(|e| e.ends_with(" GMT"))
    );
    assert!(r.header("asset-location").is_none());
    let r = Resp::from(
        tus(ctx, Method::PATCH, &path)
            .header("content-type", OCTETS)
            .header("upload-offset", a.to_string())
            .header("upload-checksum", checksum(&pdf[a..b]))
            .body(pdf[a..b].to_vec()),
    )
    .await;
    assert_eq!(r.status, 204, "{}", r.json);
    assert_eq!(offset(ctx, &path).await, b as u64);
    let r = patch(ctx, &path, b, &pdf[b..]).await;
    assert_eq!(r.status, 204, "{}", r.json);
    assert_eq!(
        r.header("upload-offset"),
        Some(pdf.len().to_string().as_str())
    );
    let made = asset_at(ctx, &r).await;

    // The same file through the one-request upload.
    let fields = [("title", "Annual report"), ("is_public", "true")];
    let single = upload(ctx, form(&fields, Some(("annual report.pdf", &pdf)))).await;
    assert_eq!(single.status, 201, "{}", single.json);
    assert_eq!(file_facts(&made), file_facts(&single.json["data"]));
    assert_eq!(made["page_count"], json!(40));
    // The checksum was carried from request to request in the upload's record.
    let upload_id = uuid::Uuid::parse_str(path.rsplit('/').next().expect("id")).expect("uuid");
    let record = ctx
        .store()
        .upload_store()
        .expect("the store keeps uploads")
        .get_upload(upload_id)
        .await
        .expect("get_upload")
        .expect("the finished upload");
    let carried = record.checksum().expect("hashed while it streamed in");
    assert_eq!(carried, <[u8; 32]>::from(Sha256::digest(&pdf)));

    // Its bytes, and the upload's state once finished.
    let id = made["id"].as_str().expect("id");
    let (status, _, bytes) = download(ctx, id).await;
    assert_eq!(status, 200);
    assert!(bytes == pdf, "the downloaded file is the uploaded one");
    let r = Resp::from(tus(ctx, Method::HEAD, &path)).await;
    assert_eq!(
        r.header("upload-offset"),
        Some(pdf.len().to_string().as_str())
    );
    assert!(r.header("asset-location").is_some_and(|l| l.ends_with(id)));
    assert_eq!(ctx.get(&path).await.json["data"]["asset_id"], json!(id));
    // A PATCH of nothing at the end is no second asset.
    let again = patch(ctx, &path, pdf.len(), b"").await;
    assert_eq!(again.status, 204, "{}", again.json);
    assert_eq!(asset_at(ctx, &again).await["id"], json!(id));
    let listed = ctx.get("/api/v1/assets?search=Annual").await;
    assert_eq!(
        listed.json["pagination"]["total"],
        json!(2),
        "{}",
        listed.json
    );
}

pub(crate) async fn a_resumable_upload_makes_the_asset_an_upload_would<H: Harness>() {
    upload_in_pieces::<H>(&Ctx::start::<H>().await).await;
}

pub(crate) async fn uploads_wait_in_multipart_uploads_and_in_pieces<H: Harness>() {
    // Files::memory has multipart uploads; an InMemory behind Files::new is a store without.
    let multipart = Ctx::with_files::<H>(Config::default(), Files::memory()).await;
    upload_in_pieces::<H>(&multipart).await;
    let store = Arc::new(object_store::memory::InMemory::new());
    let pieces = Ctx::with_files::<H>(Config::default(), Files::new(store)).await;
    upload_in_pieces::<H>(&pieces).await;
}

pub(crate) async fn creation_with_upload_and_termination<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let png = samples::png(64, 48);
    // The whole file with the creation: one request makes the asset.
    let r = Resp::from(
        tus(&ctx, Method::POST, "/api/v1/uploads")
            .header("upload-length", png.len().to_string())
            .header("upload-metadata", metadata(&[("filename", "dot.png")]))
            .header("content-type", OCTETS)
            .body(png.clone()),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(
        r.header("upload-offset"),
        Some(png.len().to_string().as_str())
    );
    let made = asset_at(&ctx, &r).await;
    assert_eq!(
        (&made["asset_type"], &made["title"], &made["width"]),
        (&json!("image"), &json!("dot.png"), &json!(64))
    );

    // Part of it, then terminated: nothing is left.
    let r = Resp::from(
        tus(&ctx, Method::POST, "/api/v1/uploads")
            .header("upload-length", png.len().to_string())
            .header("upload-metadata", metadata(&[("title", "Part of a dot")]))
            .header("content-type", OCTETS)
            .body(png[..10].to_vec()),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.header("upload-offset"), Some("10"));
    let location = r.header("location").expect("location").to_owned();
    let path = location
        .strip_prefix(ctx.base_url())
        .unwrap_or(&location)
        .to_owned();
    let before = uploaded_files(&ctx);
    assert_eq!(before.len(), 2, "the asset's file and the part: {before:?}");
    let r = Resp::from(tus(&ctx, Method::DELETE, &path)).await;
    assert_eq!(r.status, 204, "{}", r.json);
    assert_eq!(uploaded_files(&ctx).len(), 1, "the part went");
    for method in [Method::HEAD, Method::DELETE] {
        let r = Resp::from(tus(&ctx, method.clone(), &path)).await;
        assert_eq!(r.status, 404, "{method}");
    }
    let r = patch(&ctx, &path, 10, b"x").await;
    r.assert(
        404,
        json!({"error": "Not found", "message": "Upload not found"}),
    );
}

pub(crate) async fn bad_input_gets_its_tus_status_and_keeps_nothing_invalid<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let post = |headers: &[(&str, &str)]| {
        let mut r = ctx.request(Method::POST, "/api/v1/uploads", Some(&ctx.admin));
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        Resp::from(r)
    };
    let v = ("tus-resumable", "1.0.0");
    let r = post(&[("upload-length", "5")]).await;
    assert_eq!((r.status, r.header("tus-version")), (412, Some("1.0.0")));
    assert_eq!(r.json["error"], json!("Precondition failed"));
    let r = post(&[("tus-resumable", "0.2.2"), ("upload-length", "5")]).await;
    assert_eq!(r.status, 412);
    // (Spaces around a header value are not part of it: HTTP drops them.)
    for bad in ["-1", "abc", "1e3", "+5", "5 5", "99999999999999999999999"] {
        let r = post(&[v, ("upload-length", bad)]).await;
        r.assert_invalid(
            "Upload-Length",
            "Upload-Length must be a whole number of bytes (digits only)",
        );
    }
    let r = post(&[v]).await;
    r.assert_invalid("Upload-Length", "Upload-Length is required");
    let r = post(&[v, ("upload-defer-length", "1")]).await;
    assert_eq!(
        (r.status, r.json["field"].as_str()),
        (400, Some("Upload-Length"))
    );
    let r = post(&[v, ("upload-length", &(10u64 << 30 | 1).to_string())]).await;
    assert_eq!(r.status, 413, "{}", r.json);
    let r = post(&[
        v,
        ("upload-length", "5"),
        ("upload-metadata", "filename !!!"),
    ])
    .await;
    r.assert_invalid(
        "Upload-Metadata",
        "Upload-Metadata value of filename is not base64",
    );
    let flag = metadata(&[("is_public", "maybe")]);
    let r = post(&[v, ("upload-length", "5"), ("upload-metadata", &flag)]).await;
    r.assert_invalid("is_public", "is_public must be true or false");
    let link = metadata(&[("asset_type", "link")]);
    let r = post(&[v, ("upload-length", "5"), ("upload-metadata", &link)]).await;
    assert_eq!(
        (r.status, r.json["field"].as_str()),
        (400, Some("asset_type"))
    );
    // Neither a title nor a file name to stand for it: the asset would have no title.
    let r = post(&[v, ("upload-length", "5")]).await;
    r.assert_invalid("title", "title must not be blank");
    // Over max_upload (100 MiB), any type is taken (its file is read by ranges at its last
    // byte; see `large_uploads`): this one is ended at once.
    let pdf = metadata(&[("asset_type", "pdf"), ("filename", "big.pdf")]);
    let big = (200u64 << 20).to_string();
    let r = post(&[v, ("upload-length", &big), ("upload-metadata", &pdf)]).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let location = r.header("location").expect("location");
    let big_upload = location.strip_prefix(ctx.base_url()).unwrap_or(location);
    assert_eq!(
        Resp::from(tus(&ctx, Method::DELETE, big_upload))
            .await
            .status,
        204
    );

    let bytes = samples::png(32, 32);
    let path = create(&ctx, bytes.len(), &metadata(&[("filename", "dot.png")])).await;
    let r = Resp::from(
        tus(&ctx, Method::PATCH, &path)
            .header("content-type", "application/octet-stream")
            .header("upload-offset", "0")
            .body(bytes.clone()),
    )
    .await;
    assert_eq!(r.status, 415, "{}", r.json);
    let r = patch(&ctx, &path, 0, &bytes[..8]).await;
    assert_eq!(r.status, 204);
    // Offsets that do not match: 409 with the right one.
    for wrong in [0, 7, 9, bytes.len()] {
        let r = patch(&ctx, &path, wrong, &bytes[8..]).await;
        assert_eq!(
            (r.status, r.header("upload-offset")),
            (409, Some("8")),
            "{wrong}"
        );
        assert_eq!(r.json["error"], json!("Conflict"));
    }
    let r = Resp::from(
        tus(&ctx, Method::PATCH, &path)
            .header("content-type", OCTETS)
            .body(bytes.clone()),
    )
    .await;
    assert_eq!(r.json["field"], json!("Upload-Offset"));
    // More than declared: 413 before a byte is kept (a declared length), or from the first
    // chunk that would pass the end (a chunked body).
    let too_long = [&bytes[8..], b"extra"].concat();
    let r = patch(&ctx, &path, 8, &too_long).await;
    assert_eq!(r.status, 413, "{}", r.json);
    assert_eq!(offset(&ctx, &path).await, 8);
    let chunks = futures_util::stream::iter(vec![
        Ok::<_, std::io::Error>(bytes[8..20].to_vec()),
        Ok(too_long[12..].to_vec()),
    ]);
    let r = Resp::from(
        tus(&ctx, Method::PATCH, &path)
            .header("content-type", OCTETS)
            .header("upload-offset", "8")
            .body(reqwest::Body::wrap_stream(chunks)),
    )
    .await;
    assert_eq!(r.status, 413, "{}", r.json);
    assert_eq!(
        offset(&ctx, &path).await,
        20,
        "the chunk that fitted is kept"
    );
    // A checksum that does not match keeps nothing; another algorithm is 400.
    let rest = &bytes[20..];
    let r = Resp::from(
        tus(&ctx, Method::PATCH, &path)
            .header("content-type", OCTETS)
            .header("upload-offset", "20")
            .header("upload-checksum", checksum(b"something else"))
            .body(rest.to_vec()),
    )
    .await;
    assert_eq!(
        (r.status, &r.json["error"]),
        (460, &json!("Checksum mismatch"))
    );
    assert_eq!(offset(&ctx, &path).await, 20);
    let md5 = format!("md5 {}", STANDARD.encode([0u8; 16]));
    let r = Resp::from(
        tus(&ctx, Method::PATCH, &path)
            .header("content-type", OCTETS)
            .header("upload-offset", "20")
            .header("upload-checksum", md5)
            .body(rest.to_vec()),
    )
    .await;
    assert_eq!(
        (r.status, r.json["field"].as_str()),
        (400, Some("Upload-Checksum"))
    );
    // Ids: not a UUID is 400, an unknown one 404.
    let r = patch(&ctx, "/api/v1/uploads/nope", 0, b"").await;
    assert_eq!(
        (r.status, r.json["field"].as_str()),
        (400, Some("upload_id"))
    );
    let unknown = format!("/api/v1/uploads/{}", uuid::Uuid::new_v4());
    assert_eq!(patch(&ctx, &unknown, 0, b"").await.status, 404);
    // Content that makes no asset: the last byte answers 400 and the upload is gone.
    let r = patch(&ctx, &path, 20, rest).await;
    assert_eq!(r.status, 204, "{}", r.json);
    let junk = create(&ctx, 64, &metadata(&[("filename", "junk")])).await;
    let r = patch(&ctx, &junk, 0, &[7u8; 64]).await;
    assert_eq!(
        (r.status, r.json["field"].as_str()),
        (400, Some("asset_type")),
        "{}",
        r.json
    );
    assert_eq!(Resp::from(tus(&ctx, Method::HEAD, &junk)).await.status, 404);
    assert_eq!(uploaded_files(&ctx).len(), 1, "{:?}", uploaded_files(&ctx));
    // Without write:assets: 403.
    let reader = ctx.key(&[assetlib::Scope::ReadAssets]).await;
    let r = Resp::from(
        ctx.request(Method::POST, "/api/v1/uploads", Some(&reader))
            .header("tus-resumable", "1.0.0")
            .header("upload-length", "5"),
    )
    .await;
    assert_eq!(r.status, 403);
}

pub(crate) async fn a_second_writer_is_423_while_the_first_writes<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let bytes = samples::pdf(3, 50);
    let path = create(&ctx, bytes.len(), &metadata(&[("filename", "a.pdf")])).await;
    let (send, chunks) = tokio::sync::mpsc::channel::<Vec<u8>>(1);
    let chunks = futures_util::stream::unfold(chunks, |mut chunks| async move {
        let chunk = chunks.recv().await?;
        Some((Ok::<_, std::io::Error>(chunk), chunks))
    });
    let body = reqwest::Body::wrap_stream(chunks);
    let first = tokio::spawn(
        tus(&ctx, Method::PATCH, &path)
            .header("content-type", OCTETS)
            .header("upload-offset", "0")
            .body(body)
            .send(),
    );
    send.send(bytes[..100].to_vec()).await.expect("send");
    // The first holds the upload once its bytes arrive: they are in its part file.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !uploaded_files(&ctx)
        .iter()
        .any(|f| std::fs::metadata(f).is_ok_and(|m| m.len() == 100))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the first never wrote"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let r = patch(&ctx, &path, 0, &bytes[..10]).await;
    assert_eq!(r.status, 423, "{}", r.json);
    assert!(r.header("retry-after").is_some());
    assert_eq!(r.json["error"], json!("Locked"));
    assert_eq!(
        Resp::from(tus(&ctx, Method::DELETE, &path)).await.status,
        423
    );
    send.send(bytes[100..].to_vec()).await.expect("send");
    drop(send);
    let r = first.await.expect("task").expect("first PATCH");
    assert_eq!(r.status(), 204);
    assert_eq!(offset(&ctx, &path).await, bytes.len() as u64);
}

/// Racing writers under load: in each round, 16 requests send the same piece at the same
/// offset at once. Exactly one is taken (204); every other is 423 (it came while the winner
/// wrote) or 409 naming the new offset (it came after); no other status. The offset moves by
/// one piece a round, and the asset holds the file's bytes, once.
pub(crate) async fn racing_writers_never_corrupt_the_offset<H: Harness>() {
    const RACERS: usize = 16;
    let ctx = Ctx::start::<H>().await;
    let pdf = samples::pdf(6, 60);
    let path = create(&ctx, pdf.len(), &metadata(&[("filename", "race.pdf")])).await;
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    let mut at = 0;
    let mut last_winner = None;
    for piece in pdf.chunks(pdf.len().div_ceil(5)) {
        let answers =
            futures_util::future::join_all((0..RACERS).map(|_| patch(&ctx, &path, at, piece)))
                .await;
        let seen: Vec<u16> = answers.iter().map(|r| r.status).collect();
        assert_eq!(
            seen.iter().filter(|s| **s == 204).count(),
            1,
            "one winner at offset {at}: {seen:?}"
        );
        at += piece.len();
        for r in answers {
            *statuses.entry(r.status).or_default() += 1;
            match r.status {
                204 => {
                    assert_eq!(r.header("upload-offset"), Some(at.to_string().as_str()));
                    last_winner = Some(r);
                }
                423 => {
                    assert_eq!(r.json["error"], json!("Locked"), "{}", r.json);
                    assert!(r.header("retry-after").is_some());
                }
                409 => {
                    assert_eq!(r.json["error"], json!("Conflict"), "{}", r.json);
                    assert_eq!(r.header("upload-offset"), Some(at.to_string().as_str()));
                }
                other => panic!("{other} at offset {at}: {}", r.json),
            }
        }
        assert_eq!(offset(&ctx, &path).await, at as u64);
    }
    assert_eq!(statuses.values().sum::<usize>(), RACERS * 5, "{statuses:?}");
    let made = asset_at(&ctx, &last_winner.expect("a last winner")).await;
    let id = made["id"].as_str().expect("id");
    let (status, _, bytes) = download(&ctx, id).await;
    assert_eq!(status, 200);
    assert!(
        bytes == pdf,
        "the asset's bytes are the file's ({statuses:?})"
    );
    let listed = ctx.get("/api/v1/assets?search=race&status=any").await;
    assert_eq!(listed.json["pagination"]["total"], json!(1), "one asset");
}

/// A page on another allowed origin uploads with tus: the preflight allows the tus request
/// headers, and the answers expose the tus headers (and `Location`, `Asset-Location`) to its
/// script.
pub(crate) async fn tus_headers_pass_cors<H: Harness>() {
    let origin = "https://www.example.com";
    let mut config = Config::default();
    config.cors_origins = vec![origin.to_owned()];
    let ctx = Ctx::with_config::<H>(config).await;
    let asked = [
        "authorization",
        "content-type",
        "tus-resumable",
        "upload-length",
        "upload-offset",
        "upload-metadata",
        "upload-checksum",
    ];
    for (path, method) in [("/api/v1/uploads", "POST"), ("/api/v1/uploads/x", "PATCH")] {
        let r = Resp::from(
            ctx.request(Method::OPTIONS, path, None)
                .header("origin", origin)
                .header("access-control-request-method", method)
                .header("access-control-request-headers", asked.join(", ")),
        )
        .await;
        assert_eq!(r.status, 204, "{path}");
        assert_eq!(r.header("access-control-allow-origin"), Some(origin));
        let methods = r.header("access-control-allow-methods").expect("methods");
        assert!(methods.contains(method), "{path}: {methods}");
        let allowed = r
            .header("access-control-allow-headers")
            .expect("allow headers")
            .to_ascii_lowercase();
        for h in asked {
            assert!(
                allowed.split(", ").any(|a| a == h),
                "{path}: {h} not in {allowed}"
            );
        }
    }
    let exposed = |r: &Resp| {
        r.header("access-control-expose-headers")
            .expect("expose")
            .to_ascii_lowercase()
    };
    let bytes = samples::png(8, 8);
    let made = Resp::from(
        tus(&ctx, Method::POST, "/api/v1/uploads")
            .header("origin", origin)
            .header("upload-length", bytes.len().to_string())
            .header("upload-metadata", metadata(&[("filename", "dot.png")])),
    )
    .await;
    assert_eq!(made.status, 201, "{}", made.json);
    let expose = exposed(&made);
    for h in [
        "location",
        "upload-offset",
        "upload-expires",
        "tus-resumable",
    ] {
        assert!(expose.split(", ").any(|e| e == h), "{h} not in {expose}");
    }
    let location = made.header("location").expect("location");
    let path = location.strip_prefix(ctx.base_url()).unwrap_or(location);
    let done = Resp::from(
        tus(&ctx, Method::PATCH, path)
            .header("origin", origin)
            .header("content-type", OCTETS)
            .header("upload-offset", "0")
            .body(bytes),
    )
    .await;
    assert_eq!(done.status, 204, "{}", done.json);
    assert_eq!(done.header("access-control-allow-origin"), Some(origin));
    assert!(exposed(&done).split(", ").any(|e| e == "asset-location"));
}

pub(crate) async fn unfinished_uploads_expire_and_are_removed<H: Harness>() {
    let mut config = Config::default();
    config.upload_expiry = Duration::from_secs(1);
    let ctx = Ctx::with_config::<H>(config).await;
    let bytes = samples::png(40, 40);
    let path = create(&ctx, bytes.len(), &metadata(&[("filename", "dot.png")])).await;
    assert_eq!(patch(&ctx, &path, 0, &bytes[..30]).await.status, 204);
    assert_eq!(uploaded_files(&ctx).len(), 1);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let r = patch(&ctx, &path, 30, &bytes[30..]).await;
        match r.status {
            410 => assert_eq!(r.json["error"], json!("Gone")),
            404 => break,
            other => panic!("{other}: {}", r.json),
        }
        assert!(std::time::Instant::now() < deadline, "never removed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        uploaded_files(&ctx).is_empty(),
        "{:?}",
        uploaded_files(&ctx)
    );
}

pub(crate) async fn direct_uploads_need_files_in_s3<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/uploads/direct",
            Some(&ctx.admin),
            &json!({"filename": "a.mp4", "size": 10}),
        )
        .await;
    assert_eq!((r.status, &r.json["error"]), (404, &json!("Not found")));
    assert!(
        r.json["message"]
            .as_str()
            .is_some_and(|m| m.contains("/api/v1/uploads (tus)")),
        "{}",
        r.json
    );
}
