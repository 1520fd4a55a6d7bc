//! A hostile client: values that would break headers or escape a folder, bodies sent before
//! a key is checked, `If-Range` that does not match, refused uploads that could leave
//! directories behind, and targets and bodies that are too long or too slow. Raw sockets
//! where an HTTP client library would tidy the input.

use std::path::{Path, PathBuf};
use std::time::Duration;

use assetlib::Config;
use assetlib::extract::samples;
use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::files::{BOUNDARY, create_on, form, total_assets, unzip, upload, uploaded_files};
use crate::harness::Harness;
use crate::support::{Ctx, id_of, raw_head, raw_request};

/// The status line and headers the server sends first on a connection where `head` (and
/// nothing else) was written; `None` when it sends nothing within 5 seconds.
async fn first_answer(ctx: &Ctx, head: &str) -> Option<String> {
    let addr = ctx.base_url().trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write head");
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    (read.is_ok() && !answer.is_empty()).then(|| String::from_utf8_lossy(&answer).into_owned())
}

pub(crate) async fn control_characters_never_reach_a_stored_url<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    for bad in [
        "https://example.com/a\r\nb",
        "https://example.com/a\nLocation: https://evil.example",
        "https://exa\nmple.com/",
        "https://example.com/\u{7f}",
        "https://example.com/\u{0}",
    ] {
        let r = ctx
            .post_asset(&json!({"title": "x", "asset_type": "link", "external_url": bad}))
            .await;
        assert_eq!(r.status, 400, "{bad:?}: {}", r.json);
        assert_eq!(r.json["field"], "external_url", "{bad:?}");
    }
    assert_eq!(total_assets(&ctx).await, 0);

    // What is stored is the parsed, normalised URL, and it is what the download redirects to.
    let link = ctx
        .create_asset(json!({"title": "Site", "asset_type": "link",
            "external_url": "HTTPS://Example.COM/a b?q=é"}))
        .await;
    assert_eq!(link["external_url"], "https://example.com/a%20b?q=%C3%A9");
    let id = id_of(&link);
    let answer = raw_request(
        ctx.base_url(),
        &[raw_head(
            "GET",
            &format!("/api/v1/assets/{id}/download"),
            &format!("Authorization: Bearer {}\r\n", ctx.admin),
        )
        .as_bytes()],
        false,
    )
    .await;
    assert_eq!(answer.status, 302);
    let location = answer
        .headers
        .iter()
        .find(|(name, _)| name == "location")
        .map(|(_, value)| value.as_str());
    assert_eq!(location, Some("https://example.com/a%20b?q=%C3%A9"));
}

pub(crate) async fn zip_entries_never_climb_out_of_their_folder<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let hostile = [
        ". ..",
        ".\u{3000}..",
        "..",
        "a/../../b",
        "\\..\\win",
        "C:\\x",
        "tab\there",
    ];
    let mut sections = Vec::new();
    for (i, title) in hostile.iter().enumerate() {
        let asset = create_on(&ctx, &format!("docs/f{i}.pdf"), samples::pdf(1, 3), "pdf").await;
        sections.push(json!({"title": title, "assets": [{"asset_id": asset["id"]}]}));
    }
    let id = uuid::Uuid::new_v4();
    let doc = json!({"title": "Press kit", "allow_bulk_download": true, "sections": sections});
    let r = ctx.put_library(&id.to_string(), &doc).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let r = ctx
        .request(
            Method::GET,
            &format!("/api/v1/libraries/{id}/download"),
            Some(&ctx.admin),
        )
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 200);
    let zip = r.bytes().await.expect("zip");
    let names: Vec<String> = unzip(&zip).into_iter().map(|(name, _)| name).collect();
    assert_eq!(names.len(), hostile.len(), "{names:?}");
    for name in &names {
        let parts: Vec<&str> = name.split('/').collect();
        assert_eq!(parts.len(), 2, "one folder and one file: {name:?}");
        for part in parts {
            assert!(
                !part.is_empty()
                    && !part.contains("..")
                    && !part.contains(['\\', ':'])
                    && !part.chars().any(char::is_control)
                    && part.trim_matches(|c: char| c == '.' || c.is_whitespace()) == part,
                "{name:?}"
            );
        }
    }
    // Names made only of dots and spaces become `Section N` (N counts from 1, in page order).
    assert!(names[0].starts_with("Section 1/"), "{names:?}");
    assert!(names[1].starts_with("Section 2/"), "{names:?}");
    assert!(names[2].starts_with("Section 3/"), "{names:?}");
    assert!(names[3].starts_with("a_._._b/"), "{names:?}");
    // Extracted, every file lands inside the target folder.
    let target = tempfile::tempdir().expect("temp dir");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip.to_vec())).expect("zip");
    archive.extract(target.path()).expect("extract");
    for name in &names {
        assert!(target.path().join(name).is_file(), "{name}");
    }
}

pub(crate) async fn no_body_is_read_before_the_key_is_checked<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    for (path, content_type) in [
        ("/api/v1/assets", "application/json"),
        ("/api/v1/assets/upload", "multipart/form-data; boundary=b"),
    ] {
        // Expect: 100-continue without a key gets the 401, never `100 Continue`.
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: test\r\nContent-Type: {content_type}\r\n\
             Content-Length: 1048576\r\nExpect: 100-continue\r\n\r\n"
        );
        let answer = first_answer(&ctx, &head).await.expect("an answer");
        assert!(answer.starts_with("HTTP/1.1 401"), "{path}: {answer}");
        // Without Expect, the 401 comes while the body has not been sent at all.
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: test\r\nContent-Type: {content_type}\r\n\
             Content-Length: 1048576\r\n\r\n"
        );
        let answer = first_answer(&ctx, &head).await.expect("an answer");
        assert!(answer.starts_with("HTTP/1.1 401"), "{path}: {answer}");
    }
    // With a valid key the body is read as usual, after `100 Continue`.
    let body = json!({"title": "After continue", "asset_type": "pdf"}).to_string();
    let head = format!(
        "POST /api/v1/assets HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
         Authorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nExpect: 100-continue\r\n\r\n",
        ctx.admin,
        body.len()
    );
    let addr = ctx.base_url().trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(head.as_bytes()).await.expect("write head");
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while !answer.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.expect("read");
        assert!(n > 0, "closed before 100 Continue");
        answer.extend_from_slice(&buf[..n]);
    }
    assert!(
        answer.starts_with(b"HTTP/1.1 100"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    stream.write_all(body.as_bytes()).await.expect("write body");
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest)).await;
    let rest = String::from_utf8_lossy(&rest);
    assert!(rest.starts_with("HTTP/1.1 201"), "{rest}");
}

pub(crate) async fn if_range_serves_the_range_only_on_the_same_strong_etag<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let content = "0123456789".repeat(10).into_bytes();
    ctx.put_file("data/numbers.txt", content).await;
    let asset = ctx
        .create_asset(json!({"title": "Numbers", "asset_type": "document",
            "file_path": "data/numbers.txt"}))
        .await;
    let path = format!("/api/v1/assets/{}/download", id_of(&asset));
    let get = |extra: String| {
        let head = raw_head(
            "GET",
            &path,
            &format!(
                "Authorization: Bearer {}\r\nRange: bytes=0-9\r\n{extra}",
                ctx.admin
            ),
        );
        let base = ctx.base_url().to_owned();
        async move { raw_request(&base, &[head.as_bytes()], false).await }
    };
    let plain = get(String::new()).await;
    assert_eq!(plain.status, 206);
    let etag = plain
        .headers
        .iter()
        .find(|(name, _)| name == "etag")
        .map(|(_, value)| value.clone())
        .expect("an ETag");
    let same = get(format!("If-Range: {etag}\r\n")).await;
    assert_eq!(same.status, 206);
    assert_eq!(same.body.len(), 10);
    for other in [
        "\"other-etag\"".to_owned(),
        format!("W/{etag}"),
        "Sat, 01 Jan 2000 00:00:00 GMT".to_owned(),
        "Sun, 01 Jan 2090 00:00:00 GMT".to_owned(),
    ] {
        let whole = get(format!("If-Range: {other}\r\n")).await;
        assert_eq!(whole.status, 200, "If-Range: {other}");
        assert_eq!(whole.body.len(), 100, "If-Range: {other}");
        assert!(
            !whole
                .headers
                .iter()
                .any(|(name, _)| name == "content-range"),
            "If-Range: {other}"
        );
    }
}

/// Every directory under the store's `uploads/`.
fn upload_dirs(files: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.push(path.clone());
                walk(&path, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(&files.join("uploads"), &mut out);
    out
}

pub(crate) async fn refused_uploads_leave_no_directory_behind<H: Harness>() {
    let mut config = Config::default();
    config.max_upload = 64 * 1024;
    let ctx = Ctx::with_config::<H>(config).await;
    let png = samples::png(20, 20);
    let big = vec![b'a'; 64 * 1024 + 1];
    let two_files = {
        let mut body = form(&[], Some(("a.png", &png)));
        let again = form(&[], Some(("b.png", &png)));
        body.truncate(body.len() - format!("--{BOUNDARY}--\r\n").len());
        body.extend_from_slice(&again);
        body
    };
    let refused = [
        form(&[("asset_type", "pdf")], Some(("x.pdf", &png))),
        form(&[("title", "  ")], Some(("x.png", &png))),
        form(&[("asset_type", "document")], Some(("big.txt", &big))),
        two_files,
    ];
    for body in refused {
        let r = upload(&ctx, body).await;
        assert!(matches!(r.status, 400 | 413), "{}: {}", r.status, r.json);
    }
    // A body cut off in the middle of its file part.
    let body = form(
        &[("asset_type", "document")],
        Some(("cut.txt", &[b'z'; 30_000])),
    );
    let head = format!(
        "POST /api/v1/assets/upload HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
         Authorization: Bearer {}\r\nContent-Type: multipart/form-data; boundary={BOUNDARY}\r\n\
         Content-Length: {}\r\n\r\n",
        ctx.admin,
        body.len()
    );
    let answer = raw_request(
        ctx.base_url(),
        &[head.as_bytes(), &body[..body.len() / 2]],
        true,
    )
    .await;
    assert_eq!(answer.status, 400, "{}", answer.body);

    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !upload_dirs(&ctx.files_dir()).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(upload_dirs(&ctx.files_dir()), Vec::<PathBuf>::new());
    assert_eq!(uploaded_files(&ctx), Vec::<PathBuf>::new());
    assert_eq!(total_assets(&ctx).await, 0);
}

pub(crate) async fn a_415_names_the_media_type_the_route_takes<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/assets/upload",
            Some(&ctx.admin),
            &json!({"title": "T"}),
        )
        .await;
    r.assert(
        415,
        json!({"error": "Unsupported media type",
            "message": "Content-Type must be multipart/form-data"}),
    );
    let r = crate::support::Resp::from(
        ctx.request(Method::POST, "/api/v1/assets/upload", Some(&ctx.admin))
            .body("x"),
    )
    .await;
    assert_eq!(
        r.json["message"],
        "Content-Type must be multipart/form-data"
    );
    let r = crate::support::Resp::from(
        ctx.request(Method::POST, "/api/v1/assets", Some(&ctx.admin))
            .header("content-type", "multipart/form-data; boundary=b")
            .body("x"),
    )
    .await;
    r.assert(
        415,
        json!({"error": "Unsupported media type",
            "message": "Content-Type must be application/json"}),
    );
}

/// hyper, under both adapters, refuses a target over 64 KiB while it parses the head, before
/// any adapter or core sees the request: the 414 is hyper's own, with an empty body
/// (`adapters/README.md` says so).
pub(crate) async fn a_target_over_64_kib_is_414<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    // Raw: HTTP client libraries refuse to send a target this long.
    let long = "a".repeat(64 * 1024 + 1);
    let auth = format!("Authorization: Bearer {}\r\n", ctx.admin);
    for path in [
        format!("/api/v1/assets?search={long}"),
        format!("/api/v1/assets/{long}"),
    ] {
        let head = raw_head("GET", &path, &auth);
        let answer = raw_request(ctx.base_url(), &[head.as_bytes()], false).await;
        assert_eq!(answer.status, 414, "{}", answer.body);
    }
    let fits = "a".repeat(60 * 1024);
    let r = ctx.get(&format!("/api/v1/assets?search={fits}")).await;
    assert_eq!(r.status, 200, "{}", r.json);
}

pub(crate) async fn a_body_that_stops_arriving_is_408<H: Harness>() {
    let mut config = Config::default();
    config.body_timeout = Duration::from_secs(1);
    let ctx = Ctx::with_config::<H>(config).await;
    for (path, content_type) in [
        ("/api/v1/assets", "application/json".to_owned()),
        (
            "/api/v1/assets/upload",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        ),
    ] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\
             Content-Type: {content_type}\r\nContent-Length: 1000\r\n\r\n",
            ctx.admin
        );
        let first = format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"title\"");
        let started = std::time::Instant::now();
        let answer = first_answer(&ctx, &format!("{head}{first}")).await;
        let answer = answer.unwrap_or_else(|| panic!("{path}: no answer to a stalled body"));
        assert!(answer.starts_with("HTTP/1.1 408"), "{path}: {answer}");
        assert!(started.elapsed() >= Duration::from_millis(900), "{path}");
    }
    assert_eq!(total_assets(&ctx).await, 0);
    assert_eq!(upload_dirs(&ctx.files_dir()), Vec::<PathBuf>::new());
}

/// The server still answers a plain read after `what`, listing the `assets` created so far.
async fn still_up(ctx: &Ctx, assets: u64, what: &str) {
    let r = ctx.get("/api/v1/assets").await;
    assert_eq!(r.status, 200, "after {what}: {}", r.json);
    assert_eq!(r.json["pagination"]["total"], assets, "after {what}");
}

/// PDFs whose page trees, `/Parent` chains, nesting or stream-length references go 50,000
/// levels deep or loop: a reader that walked them by recursion would overflow the stack of
/// the blocking thread reading them and abort the whole process. Each is unreadable (as any
/// PDF that cannot be parsed, it is created with null counts), and the server answers the
/// next request.
pub(crate) async fn hostile_pdfs_never_take_the_server_down<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let unreadable = [
        ("deep page tree.pdf", samples::pdf_deep_page_tree(50_000)),
        (
            "deep parent chain.pdf",
            samples::pdf_deep_parent_chain(50_000),
        ),
        ("page tree loop.pdf", samples::pdf_page_tree_loop()),
        ("deep arrays.pdf", samples::pdf_deep_arrays(50_000)),
        (
            "deep dictionaries.pdf",
            samples::pdf_deep_dictionaries(50_000),
        ),
        ("length chain.pdf", samples::pdf_length_chain(1_000)),
        ("length loop.pdf", samples::pdf_length_loop()),
    ];
    let null = json!(null);
    let mut created = 0;
    for (name, pdf) in &unreadable {
        let r = upload(&ctx, form(&[("asset_type", "pdf")], Some((name, pdf)))).await;
        assert_eq!(r.status, 201, "{name}: {}", r.json);
        let a = &r.json["data"];
        assert_eq!(a["mime_type"], "application/pdf", "{name}");
        assert_eq!(
            (&a["page_count"], &a["word_count"], &a["thumbnail_path"]),
            (&null, &null, &null),
            "{name}"
        );
        created += 1;
        still_up(&ctx, created, name).await;
    }

    // Nothing walks an outline (bookmarks), however deep: that PDF is read.
    let r = upload(
        &ctx,
        form(
            &[("asset_type", "pdf")],
            Some(("deep outlines.pdf", &samples::pdf_deep_outlines(50_000))),
        ),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(
        (&r.json["data"]["page_count"], &r.json["data"]["word_count"]),
        (&json!(1), &json!(4))
    );
    created += 1;
    still_up(&ctx, created, "deep outlines.pdf").await;

    // Created by file_path, as by upload.
    let a = create_on(
        &ctx,
        "hostile/deep page tree.pdf",
        samples::pdf_deep_page_tree(50_000),
        "pdf",
    )
    .await;
    assert_eq!(
        (&a["page_count"], &a["word_count"], &a["thumbnail_path"]),
        (&null, &null, &null)
    );
    created += 1;
    still_up(&ctx, created, "the deep page tree by file_path").await;
}

/// `GET /files/thumbnails/<name>` with a name no file can have (longer than a file system
/// holds, a NUL or another control character, not UTF-8, a backslash) is the contract's JSON
/// 404, on `HEAD` too: never a 500 from the file system refusing the name, nor the framework's
/// own plain-text answer. A name of 255 bytes is looked for as any other.
pub(crate) async fn thumbnail_names_no_file_can_have_are_json_404<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let made = create_on(&ctx, "img/dot.png", samples::png(40, 40), "image").await;
    let thumb = made["thumbnail_path"]
        .as_str()
        .expect("thumbnail")
        .to_owned();
    let long = |bytes: usize, tail: &str| format!("{}{tail}", "a".repeat(bytes - tail.len()));
    let names = [
        long(300, ".png"),
        long(256, ".png"),
        long(4096, ".jpg"),
        format!("{}.png", "%C3%A9".repeat(150)),
        "%00.png".to_owned(),
        "a%00b.png".to_owned(),
        "a%0Ab.png".to_owned(),
        "%FF%FE.png".to_owned(),
        "a%5Cb.png".to_owned(),
        long(255, ".png"),
    ];
    for name in &names {
        for method in [Method::GET, Method::HEAD] {
            let url = format!("{}/files/thumbnails/{name}", ctx.base_url());
            let r = ctx.client.request(method.clone(), &url).send().await;
            let r = r.expect("an answer");
            let status = r.status().as_u16();
            let content_type = r
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            let body = r.bytes().await.expect("body");
            assert_eq!(status, 404, "{method} {}…", &name[..name.len().min(40)]);
            assert_eq!(content_type, "application/json", "{method} {name}");
            if method == Method::GET {
                let json: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
                assert_eq!(json["error"], json!("Not found"), "{json}");
            }
        }
    }
    // The thumbnail that exists is still served.
    let r = reqwest::get(format!("{}/files/{thumb}", ctx.base_url()))
        .await
        .expect("request");
    assert_eq!(r.status(), 200);
}
