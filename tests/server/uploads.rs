//! Resumable uploads on the ready servers, as issue "Large uploads" judges them: the official
//! tus clients (PyPI's `tuspy`, npm's `tus-js-client` in Node.js) and a client of the tests'
//! own each upload a 1 GiB video through a proxy that alternates between two replicas (one on
//! axum, one on warp) over one PostgreSQL database and one SeaweedFS bucket, and cuts the
//! connection 5 times at random points: each makes one asset whose download is byte for byte
//! the file (SHA-256). Unfinished uploads expire and leave no multipart upload in the bucket;
//! direct uploads put their file in the bucket with a presigned URL and are checked before the
//! asset exists, and of any type may be larger than `max_upload` (read by ranges from the
//! bucket); the upload page works in Chromium through a dropped connection.

use std::net::SocketAddr;
use std::time::Duration;

use assetlib::axum::router;
use assetlib::{Config, Files, Scope, Service};
use assetlib_testkit::postgres::TestCluster;
use assetlib_testkit::s3::S3Server;
use assetlib_testkit::tools::{NODE, TUS_JS_CLIENT, TUSPY};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::replicas::Shared;
use crate::running::Running;
use crate::tus_kit::{
    CutProxy, big_video, clients_dir, download_digest, own_client_upload, random_cuts, run_client,
};

/// The size of the judged uploads.
const GIB: u64 = 1 << 30;

/// Longest time one client may take for its upload.
const CLIENT_LIMIT: Duration = Duration::from_secs(600);

fn addr(running: &Running) -> SocketAddr {
    running
        .base
        .trim_start_matches("http://")
        .parse()
        .expect("a socket address")
}

/// The asset an upload made, from its `Asset-Location` (asked of `base` with a `HEAD`).
async fn asset_of_upload(base: &str, upload_url: &str, key: &str) -> Value {
    let client = reqwest::Client::new();
    let path = upload_url
        .find("/api/v1/uploads/")
        .map(|at| &upload_url[at..])
        .expect("an upload URL");
    let head = client
        .head(format!("{base}{path}"))
        .bearer_auth(key)
        .header("tus-resumable", "1.0.0")
        .send()
        .await
        .expect("HEAD");
    assert_eq!(head.status(), 200, "HEAD {path}");
    let location = head.headers()["asset-location"]
        .to_str()
        .expect("asset-location")
        .to_owned();
    let got = client
        .get(format!("{base}{location}"))
        .bearer_auth(key)
        .send()
        .await
        .expect("GET asset");
    assert_eq!(got.status(), 200);
    got.json::<Value>().await.expect("JSON")["data"].clone()
}

/// How many assets are titled exactly `title`.
async fn assets_titled(base: &str, key: &str, title: &str) -> usize {
    let listed: Value = reqwest::Client::new()
        .get(format!("{base}/api/v1/assets"))
        .query(&[("search", title), ("per_page", "100")])
        .bearer_auth(key)
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("JSON");
    listed["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter(|a| a["title"] == json!(title))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn official_clients_upload_a_gib_through_cut_connections_across_two_replicas() {
    let (python, modules, node) = (TUSPY.require(), TUS_JS_CLIENT.require(), NODE.require());
    let shared = Shared::new().await;
    let key = shared.create_key("server", "read:assets,write:assets");
    let a = shared.replica_with("server", &[]).await;
    let b = shared.replica_with("warp_server", &[]).await;
    let backends = vec![addr(&a), addr(&b)];
    let scratch = tempfile::tempdir().expect("scratch");
    let file = scratch.path().join("keynote.mp4");
    let digest = big_video(&file, GIB, 0x5eed);

    type Run<'a> = (&'a str, u64);
    let clients: [Run; 3] = [("tuspy", 11), ("tus-js-client", 23), ("own client", 37)];
    for (client, seed) in clients {
        let proxy = CutProxy::start(backends.clone(), random_cuts(GIB, 5, seed)).await;
        let endpoint = format!("{}/api/v1/uploads", proxy.base);
        let title = format!("Keynote by {client}");
        let upload_url = match client {
            "tuspy" => {
                let mut command = tokio::process::Command::new(&python);
                command.arg(clients_dir().join("tuspy_upload.py")).args([
                    &endpoint,
                    &key,
                    file.to_str().unwrap(),
                    &title,
                ]);
                run_client(client, &mut command, CLIENT_LIMIT).await
            }
            "tus-js-client" => {
                let mut command = tokio::process::Command::new(&node);
                command.arg(clients_dir().join("tus_js_upload.cjs")).args([
                    modules.to_str().unwrap(),
                    &endpoint,
                    &key,
                    file.to_str().unwrap(),
                    &title,
                ]);
                run_client(client, &mut command, CLIENT_LIMIT).await
            }
            _ => own_client_upload(&proxy.base, &key, &file, &title, 128 << 20).await,
        };
        let upload_url = upload_url
            .lines()
            .next()
            .expect("the upload URL")
            .trim()
            .to_owned();
        assert_eq!(proxy.cuts(), 5, "{client}: every cut happened");
        assert!(
            proxy.connections() >= 6,
            "{client}: both replicas took part"
        );

        // One asset, its facts read from the container, its bytes the file's.
        let asset = asset_of_upload(&b.base, &upload_url, &key).await;
        assert_eq!(
            (&asset["title"], &asset["asset_type"], &asset["file_size"]),
            (&json!(title), &json!("video"), &json!(GIB)),
            "{client}: {asset}"
        );
        assert!(asset["width"].as_u64().is_some_and(|w| w > 0), "{asset}");
        assert_eq!(assets_titled(&a.base, &key, &title).await, 1, "{client}");
        let id = asset["id"].as_str().expect("id");
        let (got, size) =
            download_digest(&format!("{}/api/v1/assets/{id}/download", a.base), &key).await;
        assert_eq!(size, GIB, "{client}");
        assert!(
            got == digest,
            "{client}: the download is the file, byte for byte"
        );
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            asset["checksum_sha256"], hex,
            "{client}: the checksum carried across requests and replicas"
        );
    }
    // Every multipart upload was completed; no staging object is left.
    assert_eq!(
        shared.bucket().unfinished_uploads().await,
        Vec::<String>::new()
    );
    let staged: Vec<String> = shared
        .bucket()
        .keys()
        .await
        .into_iter()
        .filter(|k| k.contains(".tail") || k.contains(".parts/"))
        .collect();
    assert!(staged.is_empty(), "{staged:?}");
}

/// A service on PostgreSQL and a bucket, served by the axum adapter on 127.0.0.1, with
/// `config`: for cases that set limits no ready-server flag has.
async fn in_process(
    config: Config,
) -> (
    String,
    String,
    assetlib_testkit::s3::TestBucket,
    tokio::task::JoinHandle<()>,
    assetlib_testkit::postgres::TestDatabase,
) {
    let database = TestCluster::shared().database().await;
    let bucket = S3Server::shared().bucket().await;
    let store = assetlib::postgres::PgStore::connect(database.url())
        .await
        .expect("connect");
    let files =
        Files::s3_with(bucket.builder(), &format!("{}/assets", bucket.url())).expect("files");
    let service = Service::new(store, files, config);
    let (_, key) = service
        .create_key("uploads", Scope::ALL.to_vec(), None)
        .await
        .expect("key");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let app = router(service);
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (base, key, bucket, server, database)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unfinished_uploads_expire_and_leave_no_multipart_upload() {
    let mut config = Config::default();
    config.upload_expiry = Duration::from_secs(2);
    let (base, key, bucket, server, _db) = in_process(config).await;
    let client = reqwest::Client::new();
    let video = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/media/h264-faststart.mp4"
    ))
    .expect("video");
    let mut bytes = video.clone();
    bytes.resize(12 << 20, 0);
    let meta = format!("filename {}", base64_of("left.mp4"));
    let created = client
        .post(format!("{base}/api/v1/uploads"))
        .bearer_auth(&key)
        .header("tus-resumable", "1.0.0")
        .header("upload-length", (20u64 << 20).to_string())
        .header("upload-metadata", meta)
        .send()
        .await
        .expect("create");
    assert_eq!(created.status(), 201);
    let url = format!("{base}{}", created.headers()["location"].to_str().unwrap());
    // Two parts of 5 MiB, and 2 MiB waiting for the next request.
    let patched = client
        .patch(&url)
        .bearer_auth(&key)
        .header("tus-resumable", "1.0.0")
        .header("content-type", "application/offset+octet-stream")
        .header("upload-offset", "0")
        .body(bytes)
        .send()
        .await
        .expect("PATCH");
    assert_eq!(patched.status(), 204);
    assert_eq!(
        bucket.unfinished_uploads().await.len(),
        1,
        "a multipart upload"
    );
    assert!(bucket.keys().await.iter().any(|k| k.contains(".tails/")));

    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !bucket.unfinished_uploads().await.is_empty() || !bucket.keys().await.is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "still there: {:?} {:?}",
            bucket.unfinished_uploads().await,
            bucket.keys().await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let head = client
        .head(&url)
        .bearer_auth(&key)
        .header("tus-resumable", "1.0.0")
        .send()
        .await
        .expect("HEAD");
    assert_eq!(head.status(), 404);
    server.abort();
}

fn base64_of(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_uploads_are_checked_before_the_asset_exists() {
    let mut config = Config::default();
    config.max_resumable_upload = 1 << 20;
    let (base, key, bucket, server, _db) = in_process(config).await;
    let client = reqwest::Client::new();
    let video = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/media/h264-faststart.mp4"
    ))
    .expect("video");
    let start = |body: Value| {
        client
            .post(format!("{base}/api/v1/uploads/direct"))
            .bearer_auth(&key)
            .json(&body)
            .send()
    };
    let put = |url: String, bytes: Vec<u8>| client.put(url).body(bytes).send();
    let complete = |id: String| {
        client
            .post(format!("{base}/api/v1/uploads/direct/{id}/complete"))
            .bearer_auth(&key)
            .send()
    };

    // The file as declared: one asset, made once.
    let r = start(
        json!({"filename": "clip.mp4", "size": video.len(), "title": "Clip",
        "sha256": hex(&Sha256::digest(&video))}),
    )
    .await
    .expect("start");
    assert_eq!(r.status(), 201);
    let made: Value = r.json().await.expect("JSON");
    let (id, url) = (
        made["data"]["upload_id"].as_str().unwrap().to_owned(),
        made["data"]["upload_url"].as_str().unwrap().to_owned(),
    );
    assert_eq!(made["data"]["method"], json!("PUT"));
    let r = complete(id.clone()).await.expect("complete");
    assert_eq!(r.status(), 409, "nothing put yet");
    let r = put(url.clone(), video.clone()).await.expect("PUT");
    assert!(r.status().is_success(), "the presigned PUT: {}", r.status());
    let r = complete(id.clone()).await.expect("complete");
    assert_eq!(r.status(), 201);
    let asset: Value = r.json().await.expect("JSON");
    assert_eq!(
        (&asset["data"]["asset_type"], &asset["data"]["title"]),
        (&json!("video"), &json!("Clip"))
    );
    let again: Value = complete(id.clone())
        .await
        .expect("again")
        .json()
        .await
        .unwrap();
    assert_eq!(again["data"]["id"], asset["data"]["id"], "made once");

    // Another size, another digest, too large: refused, the object removed.
    let cases: [(Value, Vec<u8>, u16); 3] = [
        (
            json!({"filename": "a.mp4", "size": video.len() + 1}),
            video.clone(),
            409,
        ),
        (
            json!({"filename": "b.mp4", "size": video.len(), "sha256": hex(&[0u8; 32])}),
            video.clone(),
            460,
        ),
        (
            json!({"filename": "c.mp4", "size": 1 << 20}),
            vec![7u8; (1 << 20) + 1],
            413,
        ),
    ];
    for (body, bytes, status) in cases {
        let made: Value = start(body.clone()).await.unwrap().json().await.unwrap();
        let id = made["data"]["upload_id"].as_str().expect("id").to_owned();
        let url = made["data"]["upload_url"].as_str().unwrap().to_owned();
        assert!(put(url, bytes).await.unwrap().status().is_success());
        let r = complete(id).await.expect("complete");
        assert_eq!(r.status().as_u16(), status, "{body}");
    }
    let keys = bucket.keys().await;
    assert_eq!(
        keys.iter().filter(|k| k.contains("/uploads/")).count(),
        1,
        "only the made asset's file: {keys:?}"
    );
    // Over the limit before anything is put: 413 at once.
    let r = start(json!({"filename": "d.mp4", "size": 2 << 20}))
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_uploads_of_any_type_may_be_larger_than_max_upload() {
    use assetlib_core::extract::samples;
    const MIB: usize = 1 << 20;
    let mut config = Config::default();
    config.max_upload = MIB as u64;
    config.max_resumable_upload = 4 * MIB as u64;
    let (base, key, _bucket, server, _db) = in_process(config).await;
    let client = reqwest::Client::new();
    let start = |body: Value| {
        client
            .post(format!("{base}/api/v1/uploads/direct"))
            .bearer_auth(&key)
            .json(&body)
            .send()
    };
    let cases = [
        (
            "catalogue.pdf",
            "pdf",
            samples::pdf_with_filler(3, 40, MIB + MIB / 4),
            json!({"mime_type": "application/pdf", "page_count": 3, "word_count": 120}),
        ),
        (
            "interview.wav",
            "audio",
            samples::wav(70_000, 8000, 1, None),
            json!({"duration_seconds": 70.0, "sample_rate": 8000, "channels": 1}),
        ),
    ];
    for (name, asset_type, bytes, fields) in cases {
        assert!(bytes.len() > MIB, "{name} is larger than max_upload");
        let r = start(json!({"filename": name, "size": bytes.len(), "asset_type": asset_type}))
            .await
            .expect("start");
        assert_eq!(r.status(), 201, "{name}");
        let made: Value = r.json().await.expect("JSON");
        let url = made["data"]["upload_url"].as_str().expect("url").to_owned();
        let complete = made["data"]["complete_url"]
            .as_str()
            .expect("complete_url")
            .to_owned();
        let put = client
            .put(url)
            .body(bytes.clone())
            .send()
            .await
            .expect("PUT");
        assert!(put.status().is_success(), "{name}: {}", put.status());
        let r = client
            .post(format!("{base}{complete}"))
            .bearer_auth(&key)
            .send()
            .await
            .expect("complete");
        assert_eq!(r.status(), 201, "{name}");
        let asset = r.json::<Value>().await.expect("JSON")["data"].clone();
        assert_eq!(asset["asset_type"], json!(asset_type), "{name}: {asset}");
        for (field, want) in fields.as_object().expect("an object") {
            assert_eq!(&asset[field], want, "{name}: {field} of {asset}");
        }
        assert_eq!(
            asset["checksum_sha256"],
            json!(hex(&Sha256::digest(&bytes))),
            "{name}"
        );
    }
    // Past max_resumable_upload: 413 naming it, whatever the type.
    let r = start(json!({"filename": "huge.pdf", "size": 4 * MIB + 1}))
        .await
        .expect("start");
    assert_eq!(r.status(), 413);
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(
        body,
        json!({"error": "Payload too large",
               "message": "size exceeds the limit of 4194304 bytes (max_resumable_upload: the \
                           largest resumable or direct upload, of any asset type)"})
    );
    server.abort();
}
