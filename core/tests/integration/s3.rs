//! Files on S3-compatible storage: the Service over `Files::s3` against a real S3 server
//! (SeaweedFS, started by `assetlib_testkit::s3`), every request signed and checked.
//! Each test has a bucket of its own, looked at directly through the S3 protocol.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use assetlib_core::extract::samples;
use assetlib_core::{
    Config, Files, FilesError, MemoryStore, Operation, RawRequest, Reply, RequestBody, Scope,
    Service,
};
use assetlib_testkit::s3::{S3Server, TestBucket};
use bytes::Bytes;
use futures_util::{StreamExt as _, TryStreamExt as _};
use object_store::ObjectStore as _;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use serde_json::{Value, json};

const BOUNDARY: &str = "x-assetlib-s3-boundary";

/// A service over a fresh bucket (under `prefix` when given), and a key with every scope.
struct Env {
    bucket: Arc<TestBucket>,
    service: Service,
    auth: String,
}

async fn env(prefix: &str) -> Env {
    let bucket = S3Server::shared().bucket().await;
    let url = format!("{}{prefix}", bucket.url());
    let files = Files::s3_with(bucket.builder(), &url).expect("Files::s3_with");
    env_with(bucket, files).await
}

async fn env_with(bucket: TestBucket, files: Files) -> Env {
    env_configured(bucket, files, Config::default()).await
}

async fn env_configured(bucket: TestBucket, files: Files, config: Config) -> Env {
    let service = Service::new(MemoryStore::new(), files, config);
    let (_, key) = service
        .create_key("all", Scope::ALL.to_vec(), None)
        .await
        .expect("key");
    Env {
        bucket: Arc::new(bucket),
        service,
        auth: format!("Bearer {key}"),
    }
}

impl Env {
    async fn call(&self, op: Operation, id: Option<&str>, req: RawRequest<'_>) -> Reply {
        let req = RawRequest {
            authorization: Some(self.auth.as_bytes()),
            ..req
        };
        self.service.handle(op, id.as_slice(), req).await
    }

    async fn upload(&self, body: impl Into<RequestBody>) -> Reply {
        let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
        let req = RawRequest {
            content_type: Some(content_type.as_bytes()),
            body: body.into(),
            ..RawRequest::default()
        };
        self.call(Operation::UploadAsset, None, req).await
    }

    /// Uploads `bytes` as `name`; answers the new asset.
    async fn upload_file(&self, name: &str, bytes: &[u8]) -> Value {
        let r = self.upload(form(name, bytes)).await;
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        json_of(&r)["data"].clone()
    }

    async fn json_call(&self, op: Operation, id: Option<&str>, body: &Value) -> Reply {
        let req = RawRequest {
            content_type: Some(b"application/json"),
            body: body.to_string().into(),
            ..RawRequest::default()
        };
        self.call(op, id, req).await
    }

    async fn download(&self, id: &str, range: Option<&str>) -> (Reply, Vec<u8>) {
        let req = RawRequest {
            range: range.map(str::as_bytes),
            ..RawRequest::default()
        };
        let r = self.call(Operation::DownloadAsset, Some(id), req).await;
        collect(r).await
    }

    async fn asset_count(&self) -> u64 {
        let r = self
            .call(Operation::ListAssets, None, RawRequest::default())
            .await;
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        json_of(&r)["pagination"]["total"]
            .as_u64()
            .expect("a total")
    }

    /// The bytes of the object at `key` of the bucket (no prefix applied).
    async fn object(&self, key: &str) -> Bytes {
        let got = self.bucket.store().get(&ObjectPath::from(key)).await;
        got.expect("the object").bytes().await.expect("its bytes")
    }
}

/// A multipart/form-data body with a `file` part.
fn form(name: &str, bytes: &[u8]) -> Vec<u8> {
    let (head, tail) = form_parts(name);
    [head.as_bytes(), bytes, tail.as_bytes()].concat()
}

/// What comes before and after the file's bytes in [`form`].
fn form_parts(name: &str) -> (String, String) {
    let head = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    );
    (head, format!("\r\n--{BOUNDARY}--\r\n"))
}

fn json_of(r: &Reply) -> Value {
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{e}: {:?}", r.body))
}

/// The reply, and its body whether in memory or streamed.
async fn collect(mut r: Reply) -> (Reply, Vec<u8>) {
    let mut body = r.body.to_vec();
    if let Some(stream) = r.stream.take() {
        let chunks: Vec<Bytes> = stream.try_collect().await.expect("the body");
        body.extend(chunks.iter().flat_map(|c| c.iter().copied()));
    }
    (r, body)
}

fn id_of(asset: &Value) -> String {
    asset["id"].as_str().expect("an id").to_owned()
}

/// Bytes that are not all the same, so a wrong range shows.
fn text_bytes(len: usize) -> Vec<u8> {
    (0..len).map(|i| b'a' + (i % 26) as u8).collect()
}

#[tokio::test]
async fn upload_lands_at_its_key_and_downloads_whole_and_in_part() {
    let e = env("").await;
    let content = text_bytes(100_000);
    let asset = e.upload_file("notes.txt", &content).await;
    let key = asset["file_path"].as_str().expect("a file_path").to_owned();
    assert!(
        key.starts_with("uploads/") && key.ends_with("/notes.txt"),
        "{key}"
    );
    assert_eq!(asset["file_size"], json!(100_000));
    assert_eq!(e.bucket.keys().await, [key.as_str()]);
    assert_eq!(e.object(&key).await, content);
    assert!(e.bucket.unfinished_uploads().await.is_empty());

    let id = id_of(&asset);
    let (r, body) = e.download(&id, None).await;
    assert_eq!(r.status, 200);
    assert_eq!(body, content);
    assert_eq!(r.header("content-length"), Some("100000"));
    // The ETag is made of the bytes (their SHA-256, the asset's checksum), not S3's own.
    let meta = e.bucket.store().head(&ObjectPath::from(key.as_str())).await;
    let s3_tag = meta.expect("head").e_tag.expect("an ETag from S3");
    let etag = r.header("etag").expect("an ETag").to_owned();
    let checksum = asset["checksum_sha256"].as_str().expect("a checksum");
    assert_eq!(etag, format!("\"sha256-{checksum}\""));
    assert_ne!(etag, format!("\"{}\"", s3_tag.trim_matches('"')));

    let (r, body) = e.download(&id, Some("bytes=2-9")).await;
    assert_eq!(r.status, 206);
    assert_eq!(r.header("content-range"), Some("bytes 2-9/100000"));
    assert_eq!(r.header("etag"), Some(etag.as_str()));
    assert_eq!(body, &content[2..10]);
    let (r, body) = e.download(&id, Some("bytes=-5")).await;
    assert_eq!(r.status, 206);
    assert_eq!(body, &content[99_995..]);
    let (r, _) = e.download(&id, Some("bytes=100000-")).await;
    assert_eq!(r.status, 416);
    assert_eq!(r.header("content-range"), Some("bytes */100000"));
}

#[tokio::test]
async fn an_upload_larger_than_a_part_is_put_in_parts() {
    let e = env("").await;
    // Two 5 MiB parts and a last small one.
    let content = text_bytes(11 * 1024 * 1024);
    let asset = e.upload_file("big.bin", &content).await;
    let key = asset["file_path"].as_str().expect("a file_path");
    assert_eq!(e.bucket.keys().await, [key]);
    assert_eq!(e.object(key).await, content);
    let (r, body) = e.download(&id_of(&asset), None).await;
    assert_eq!(r.status, 200);
    assert!(body == content, "the download differs from the upload");
}

#[tokio::test]
async fn image_upload_stores_a_thumbnail_that_is_served() {
    let e = env("").await;
    let png = samples::png(640, 480);
    let asset = e.upload_file("photo.png", &png).await;
    let id = id_of(&asset);
    assert_eq!(
        (asset["width"].clone(), asset["height"].clone()),
        (json!(640), json!(480))
    );
    let thumb = asset["thumbnail_path"]
        .as_str()
        .expect("a thumbnail_path")
        .to_owned();
    let name = thumb
        .strip_prefix("thumbnails/")
        .expect("under thumbnails/");
    assert!(
        name.ends_with(".png") && !name.contains(&id),
        "a random name, never the asset's id: {thumb}"
    );
    let file = asset["file_path"].as_str().expect("a file_path");
    let mut want = vec![file.to_owned(), thumb.clone()];
    want.sort();
    assert_eq!(e.bucket.keys().await, want);

    let (r, body) = collect(e.service.thumbnail(name, false).await).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("image/png"));
    assert_eq!(body, e.object(&thumb).await);
    let (width, height) = image_size(&body);
    assert_eq!((width, height), (320, 240));
    let (r, _) = collect(e.service.thumbnail("nothing-here.png", false).await).await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn a_video_in_the_bucket_gets_its_facts_and_a_poster_frame() {
    let bucket = S3Server::shared().bucket().await;
    let files = Files::s3_with(bucket.builder(), &bucket.url()).expect("Files::s3_with");
    let mut config = Config::default();
    config.ffmpeg = Some(assetlib_testkit::tools::FFMPEG.require());
    let e = env_configured(bucket, files, config).await;
    // moov after mdat: read with ranged reads; the poster from a temporary copy.
    let corpus = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/media/h264-rotated.mov"
    );
    let video = std::fs::read(corpus).expect("the media corpus");
    e.service
        .files()
        .put("media/clip.mov", video.into())
        .await
        .expect("put");
    let body = json!({"title": "Clip", "asset_type": "video", "file_path": "media/clip.mov"});
    let r = e.json_call(Operation::CreateAsset, None, &body).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let asset = json_of(&r)["data"].clone();
    let facts = (
        &asset["width"],
        &asset["height"],
        &asset["duration_seconds"],
    );
    assert_eq!(facts, (&json!(120), &json!(160), &json!(2.0)), "{asset}");
    assert_eq!(asset["video_codec"], "h264");
    let thumb = asset["thumbnail_path"].as_str().expect("a poster frame");
    let jpeg = e.object(thumb).await;
    assert!(jpeg.starts_with(&[0xFF, 0xD8]), "a JPEG");
}

/// Width and height of a PNG, from its header.
fn image_size(png: &[u8]) -> (u32, u32) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let be = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    (be(16), be(20))
}

/// Two replicas over one store and one bucket: a variant made through one is kept in the
/// bucket and served by the other with no decode; a replaced file takes its variants along.
#[tokio::test]
async fn a_variant_made_by_one_replica_is_served_by_another_without_a_decode() {
    let bucket = S3Server::shared().bucket().await;
    let store: Arc<dyn assetlib_core::Store> = Arc::new(MemoryStore::new());
    let replica = |bucket: &TestBucket| {
        let files = Files::s3_with(bucket.builder(), &bucket.url()).expect("Files::s3_with");
        Service::from_arc(Arc::clone(&store), files, Config::default())
    };
    let (one, two) = (replica(&bucket), replica(&bucket));
    let (_, key) = one
        .create_key("all", Scope::ALL.to_vec(), None)
        .await
        .expect("key");
    let e = Env {
        bucket: Arc::new(bucket),
        service: one.clone(),
        auth: format!("Bearer {key}"),
    };
    let id = id_of(&e.upload_file("photo.jpg", &samples::jpeg(1200, 900)).await);
    let auth = format!("Bearer {key}");
    let variant = |service: &Service| {
        let (service, id, auth) = (service.clone(), id.clone(), auth.clone());
        async move {
            let req = RawRequest {
                authorization: Some(auth.as_bytes()),
                query: Some("w=300&format=png"),
                ..RawRequest::default()
            };
            collect(
                service
                    .handle(Operation::AssetImage, &[id.as_str()], req)
                    .await,
            )
            .await
        }
    };
    let (made, bytes) = variant(&one).await;
    assert_eq!(made.status, 200, "{}", String::from_utf8_lossy(&bytes));
    assert_eq!(image_size(&bytes), (300, 225));
    let kept: Vec<String> = e
        .bucket
        .keys()
        .await
        .into_iter()
        .filter(|k| k.starts_with(&format!("derived/{id}/")))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let (served, again) = variant(&two).await;
    assert_eq!(served.status, 200);
    assert_eq!(again, bytes);
    assert_eq!(served.header("etag"), made.header("etag"));
    assert_eq!(
        (one.variants_made(), two.variants_made()),
        (1, 0),
        "no decode on the second"
    );

    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let req = RawRequest {
        content_type: Some(content_type.as_bytes()),
        body: form("photo.jpg", &samples::jpeg(900, 1200)).into(),
        ..RawRequest::default()
    };
    let r = e.call(Operation::ReplaceAssetFile, Some(&id), req).await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert!(
        !e.bucket
            .keys()
            .await
            .iter()
            .any(|k| k.starts_with("derived/")),
        "the old file's variants are gone"
    );
    let (after, bytes) = variant(&two).await;
    assert_eq!(after.status, 200);
    assert_eq!(image_size(&bytes), (300, 400));
}

#[tokio::test]
async fn bulk_download_zips_files_read_from_the_bucket() {
    let e = env("").await;
    let pdf = samples::pdf(2, 20);
    let txt = b"words in a text file".to_vec();
    let report = e.upload_file("report.pdf", &pdf).await;
    let notes = e.upload_file("notes.txt", &txt).await;
    let slug = |asset: &Value| asset["slug"].as_str().expect("a slug").to_owned();
    let (report_slug, notes_slug) = (slug(&report), slug(&notes));
    let (report, notes) = (id_of(&report), id_of(&notes));
    let lib = "7c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5";
    let doc = json!({
        "title": "Kit", "allow_bulk_download": true,
        "sections": [{"title": "Docs", "assets": [{"asset_id": report}]}],
        "unsectioned_assets": [{"asset_id": notes}]
    });
    let r = e.json_call(Operation::PutLibrary, Some(lib), &doc).await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));

    let r = e
        .call(Operation::DownloadLibrary, Some(lib), RawRequest::default())
        .await;
    let (r, zip) = collect(r).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/zip"));
    let files = unzip(&zip);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            format!("Docs/{report_slug}.pdf"),
            format!("{notes_slug}.txt")
        ]
    );
    assert_eq!(files[0].1, pdf);
    assert_eq!(files[1].1, txt);
}

fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    use std::io::Read as _;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index(i).expect("an entry");
            let mut content = Vec::new();
            file.read_to_end(&mut content).expect("its bytes");
            (file.name().to_owned(), content)
        })
        .collect()
}

#[tokio::test]
async fn an_aborted_upload_leaves_no_object_no_upload_and_no_asset() {
    let e = env("").await;
    let (head, _) = form_parts("cut-short.bin");
    // More than one part (5 MiB) arrives, so a part is on the server when the client goes.
    let chunks = vec![
        Some(Bytes::from(head)),
        Some(Bytes::from(text_bytes(6 * 1024 * 1024))),
        None,
    ];
    let seen_mid_way = Arc::new(Mutex::new(Vec::new()));
    let (bucket, seen) = (e.bucket.clone(), seen_mid_way.clone());
    let body = futures_util::stream::iter(chunks).then(move |chunk| {
        let (bucket, seen) = (bucket.clone(), seen.clone());
        async move {
            match chunk {
                Some(bytes) => Ok(bytes),
                None => {
                    let uploads = bucket.unfinished_uploads().await;
                    *seen.lock().expect("lock") = uploads;
                    Err(std::io::Error::other("the client went away"))
                }
            }
        }
    });
    let r = e.upload(RequestBody::stream(body)).await;
    assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        json_of(&r),
        json!({"error": "Validation error", "message": "Request body could not be read",
               "field": "body"})
    );
    let mid_way = seen_mid_way.lock().expect("lock").clone();
    assert_eq!(
        mid_way.len(),
        1,
        "the multipart upload was under way: {mid_way:?}"
    );
    assert!(mid_way[0].ends_with("/cut-short.bin"), "{mid_way:?}");

    assert_eq!(e.bucket.keys().await, Vec::<String>::new());
    assert_eq!(e.bucket.unfinished_uploads().await, Vec::<String>::new());
    assert_eq!(e.asset_count().await, 0);
}

#[tokio::test]
async fn a_file_path_names_an_object_put_into_the_bucket() {
    let e = env("").await;
    let pdf = samples::pdf(3, 10);
    let store = e.bucket.store();
    let key = ObjectPath::from("press/brochure 2026.pdf");
    store.put(&key, pdf.clone().into()).await.expect("put");

    let r = e
        .json_call(
            Operation::CreateAsset,
            None,
            &json!({"title": "Brochure", "asset_type": "pdf",
                    "file_path": "press/brochure 2026.pdf"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let asset = json_of(&r)["data"].clone();
    assert_eq!(asset["file_path"], json!("press/brochure 2026.pdf"));
    assert_eq!(asset["file_size"], json!(pdf.len()));
    assert_eq!(asset["page_count"], json!(3));
    let (r, body) = e.download(&id_of(&asset), None).await;
    assert_eq!(r.status, 200);
    assert_eq!(body, pdf);

    let r = e
        .json_call(
            Operation::CreateAsset,
            None,
            &json!({"title": "Missing", "asset_type": "pdf", "file_path": "press/none.pdf"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        json_of(&r),
        json!({"error": "Validation error",
               "message": "file_path does not name a file in the file store",
               "field": "file_path"})
    );
}

#[tokio::test]
async fn a_prefix_keeps_every_object_under_it() {
    let e = env("/tenant-a/files").await;
    let store = e.bucket.store();
    let placed = b"placed by the app".to_vec();
    let inside = ObjectPath::from("tenant-a/files/docs/placed.txt");
    store
        .put(&inside, placed.clone().into())
        .await
        .expect("put");
    // The same name outside the prefix is not reachable.
    let outside = ObjectPath::from("docs/outside.txt");
    store.put(&outside, "outside".into()).await.expect("put");

    let upload = e.upload_file("photo.png", &samples::png(400, 400)).await;
    let r = e
        .json_call(
            Operation::CreateAsset,
            None,
            &json!({"title": "Placed", "asset_type": "document",
                    "file_path": "docs/placed.txt"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let r = e
        .json_call(
            Operation::CreateAsset,
            None,
            &json!({"title": "Outside", "asset_type": "document",
                    "file_path": "docs/outside.txt"}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));

    let file = upload["file_path"].as_str().expect("a file_path");
    let thumb = upload["thumbnail_path"].as_str().expect("a thumbnail_path");
    assert!(file.starts_with("uploads/") && thumb.starts_with("thumbnails/"));
    let mut want = vec![
        "docs/outside.txt".to_owned(),
        format!("tenant-a/files/{file}"),
        format!("tenant-a/files/{thumb}"),
        "tenant-a/files/docs/placed.txt".to_owned(),
    ];
    want.sort();
    assert_eq!(e.bucket.keys().await, want);

    let (r, body) = e.download(&id_of(&upload), None).await;
    assert_eq!(r.status, 200);
    assert_eq!(body, e.object(&format!("tenant-a/files/{file}")).await);
    let name = thumb.trim_start_matches("thumbnails/");
    let (r, body) = collect(e.service.thumbnail(name, false).await).await;
    assert_eq!(r.status, 200);
    assert_eq!(body, e.object(&format!("tenant-a/files/{thumb}")).await);
}

#[tokio::test]
async fn a_wrong_secret_is_refused_by_the_server() {
    let bucket = S3Server::shared().bucket().await;
    let wrong = bucket.builder().with_secret_access_key("not-the-secret");
    let files = Files::s3_with(wrong, &bucket.url()).expect("Files::s3_with");
    let e = env_with(bucket, files).await;
    let r = e.upload(form("a.txt", b"some words")).await;
    assert_eq!(r.status, 500, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(e.asset_count().await, 0);
    assert_eq!(e.bucket.keys().await, Vec::<String>::new());
}

#[tokio::test]
async fn a_store_that_cannot_be_reached_is_503_with_retry_after() {
    let bucket = S3Server::shared().bucket().await;
    // A port nothing listens on: every connection is refused, and retried once.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let retry = object_store::RetryConfig {
        max_retries: 1,
        retry_timeout: Duration::from_secs(10),
        ..object_store::RetryConfig::default()
    };
    let gone = bucket
        .builder()
        .with_endpoint(format!("http://127.0.0.1:{closed}"))
        .with_retry(retry);
    let files = Files::s3_with(gone, &bucket.url()).expect("Files::s3_with");
    let e = env_with(bucket, files).await;
    let r = e.upload(form("a.txt", b"some words")).await;
    assert_eq!(r.status, 503, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(
        r.headers
            .iter()
            .find(|(name, _)| *name == "retry-after")
            .map(|(_, v)| v.as_str()),
        Some("1")
    );
    assert_eq!(json_of(&r)["error"], "Service unavailable");
    assert_eq!(e.asset_count().await, 0);
}

/// Set in the child process [`files_s3_reads_the_standard_environment`] starts: the URL of
/// its bucket.
const CHILD_URL: &str = "ASSETLIB_TEST_S3_CHILD_URL";

/// `Files::s3` reads its configuration from the `AWS_*` variables. A test cannot set its own
/// environment safely, so it runs itself again as a child process with the variables set;
/// the child (which finds `CHILD_URL` set) writes through `Files::s3`.
#[tokio::test]
async fn files_s3_reads_the_standard_environment() {
    if let Ok(url) = std::env::var(CHILD_URL) {
        let files = Files::s3(&url).expect("Files::s3 from the environment");
        files
            .put("hello.txt", Bytes::from_static(b"hello"))
            .await
            .expect("a put through Files::s3");
        assert_eq!(files.resolve("hello.txt").await.expect("resolve").size, 5);
        return;
    }
    let server = S3Server::shared();
    let bucket = server.bucket().await;
    let name = "s3::files_s3_reads_the_standard_environment";
    let exe = std::env::current_exe().expect("the test binary");
    let mut child = std::process::Command::new(exe)
        .args([name, "--exact", "--test-threads=1"])
        .env_clear()
        .envs(server.env())
        .env(CHILD_URL, format!("{}/from-env/", bucket.url()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the test binary");
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child test did not finish in 120 s");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let out = child.wait_with_output().expect("the child's output");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(bucket.keys().await, ["from-env/hello.txt"]);
}

#[test]
fn bad_urls_are_refused() {
    for (url, reason) in [
        ("https://bucket", "it must start with s3://"),
        ("s3://", "it names no bucket"),
        ("s3:///prefix", "it names no bucket"),
        (
            "s3://user@bucket",
            "it must be s3://bucket or s3://bucket/prefix, nothing more",
        ),
        (
            "s3://bucket:9000",
            "it must be s3://bucket or s3://bucket/prefix, nothing more",
        ),
        (
            "s3://bucket/a?x=1",
            "it must be s3://bucket or s3://bucket/prefix, nothing more",
        ),
        (
            "s3://bucket//a",
            "it must be s3://bucket or s3://bucket/prefix, nothing more",
        ),
        (
            "s3://bucket/a//b",
            "its prefix is not a valid path (empty, `.` or `..` segments)",
        ),
        (
            "s3://bucket/a/../b",
            "its prefix is not a valid path (empty, `.` or `..` segments)",
        ),
    ] {
        match Files::s3_with(AmazonS3Builder::new(), url) {
            Err(FilesError::Url {
                url: got,
                reason: why,
            }) => {
                assert_eq!((got.as_str(), why), (url, reason));
            }
            other => panic!("{url}: {other:?}"),
        }
    }
    for url in ["s3://bucket", "s3://bucket/", "s3://bucket/a/b/"] {
        assert!(Files::s3_with(AmazonS3Builder::new(), url).is_ok(), "{url}");
    }
}
