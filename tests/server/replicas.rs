//! Several replicas as one API: two ready-server processes (one on axum, one on warp) over one
//! PostgreSQL database and one S3-compatible bucket, both started by the tests on 127.0.0.1
//! (`assetlib_testkit::postgres`, `assetlib_testkit::s3`). What one replica writes, the
//! other reads within 100 ms with `--replica-sync notify` (the default) and on its very next
//! request with `strict`; counters are exact within each replica at once and across them
//! within a second; a replica killed with SIGKILL loses no write it acknowledged, and the event
//! log has exactly one event for each.

use std::future::Future;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use assetlib_testkit::postgres::{TestCluster, TestDatabase};
use assetlib_testkit::s3::{S3Server, TestBucket};
use serde_json::{Value, json};

use crate::running::{Running, server_binary};

/// One database, one bucket, and the environment and flags that point a server at them.
pub(crate) struct Shared {
    database: TestDatabase,
    bucket: TestBucket,
    env: Vec<(&'static str, String)>,
    _dir: tempfile::TempDir,
}

impl Shared {
    pub(crate) async fn new() -> Shared {
        let database = TestCluster::shared().database().await;
        let bucket = S3Server::shared().bucket().await;
        Shared {
            database,
            bucket,
            env: S3Server::shared().env(),
            _dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn flags(&self) -> Vec<String> {
        vec![
            "--database-url".into(),
            self.database.url().to_owned(),
            "--files".into(),
            format!("{}/assets", self.bucket.url()),
        ]
    }

    /// The shared bucket.
    pub(crate) fn bucket(&self) -> &TestBucket {
        &self.bucket
    }

    fn dir(&self) -> &Path {
        self._dir.path()
    }

    /// `keys create` against the shared database (allowed while servers run): the new key.
    pub(crate) fn create_key(&self, example: &str, scopes: &str) -> String {
        let out = Command::new(server_binary(example))
            .args(["keys", "create", "--scopes", scopes, "--database-url"])
            .arg(self.database.url())
            .env("RUST_LOG", "warn")
            .output()
            .expect("run keys create");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "keys create: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout.lines().last().expect("the key").trim().to_owned()
    }

    /// A replica serving from the shared database and bucket, with the default
    /// `--replica-sync`.
    async fn replica(&self, example: &str) -> Running {
        self.replica_in(example, "notify").await
    }

    /// A replica serving from the shared database and bucket with `--replica-sync mode`.
    async fn replica_in(&self, example: &str, mode: &str) -> Running {
        self.replica_with(example, &["--replica-sync", mode]).await
    }

    /// A replica serving from the shared database and bucket with `extra` flags.
    pub(crate) async fn replica_with(&self, example: &str, extra: &[&str]) -> Running {
        let logs = self.dir().join(format!("logs-{example}"));
        std::fs::create_dir_all(&logs).expect("logs dir");
        let data = self.dir().join(format!("unused-{example}"));
        let mut flags = self.flags();
        flags.extend(extra.iter().map(|f| (*f).to_owned()));
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        Running::start_with(example, &data, &logs, &flags, &self.env).await
    }
}

/// How soon a write through one replica shows on another: within 100 ms with `notify`, on
/// the very next read with `strict`.
fn bound(mode: &str) -> Duration {
    match mode {
        "strict" => Duration::ZERO,
        _ => Duration::from_millis(100),
    }
}

/// How soon counts through one replica show on another, in either mode.
const COUNTS_WITHIN: Duration = Duration::from_secs(1);

/// Runs `check` until it passes, for at most `limit` from now (once when `limit` is zero);
/// panics with its last failure, saying how long it was given.
async fn within<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let deadline = Instant::now() + limit;
    loop {
        match check().await {
            Ok(()) => return,
            Err(e) if Instant::now() >= deadline => {
                panic!("{what}: not within {limit:?}: {e}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(2)).await,
        }
    }
}

/// `Ok` when `got` is `want`, else what differs.
fn same<T: PartialEq + std::fmt::Debug>(got: T, want: T) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("got {got:?}, want {want:?}"))
    }
}

async fn send(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    key: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut r = client.request(method, url).bearer_auth(key);
    if let Some(b) = body {
        r = r.json(&b);
    }
    let r = r.send().await.expect("request");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// Uploads `content` as a file named and typed `(name, media_type)` through the replica at
/// `base`: 201, and the answer.
async fn upload(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    (name, media_type): (&str, &str),
    content: &str,
) -> Value {
    let form = format!(
        "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
         Content-Type: {media_type}\r\n\r\n{content}\r\n--b--\r\n"
    );
    let r = client
        .post(format!("{base}/api/v1/assets/upload"))
        .bearer_auth(key)
        .header("content-type", "multipart/form-data; boundary=b")
        .body(form)
        .send()
        .await
        .expect("upload");
    assert_eq!(r.status(), 201);
    r.json().await.expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_over_one_database_and_bucket_are_one_api_notify() {
    one_api("notify").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_over_one_database_and_bucket_are_one_api_strict() {
    one_api("strict").await;
}

async fn one_api(mode: &str) {
    let shared = Shared::new().await;
    let key = shared.create_key(
        "server",
        "read:assets,write:assets,read:libraries,write:libraries",
    );
    let a = shared.replica_in("server", mode).await;
    let b = shared.replica_in("warp_server", mode).await;
    let client = reqwest::Client::new();
    let get = |base: &str, path: &str| {
        let url = format!("{base}{path}");
        let (client, key) = (client.clone(), key.clone());
        async move { send(&client, reqwest::Method::GET, url, &key, None).await }
    };

    // A create through one is the next read through the other.
    let (status, created) = send(
        &client,
        reqwest::Method::POST,
        format!("{}/api/v1/assets", a.base),
        &key,
        Some(json!({"title": "Made on A", "asset_type": "pdf"})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let pdf_id = created["data"]["id"].as_str().expect("id").to_owned();
    let (status, read) = get(&b.base, &format!("/api/v1/assets/{pdf_id}")).await;
    assert_eq!((status, &read["data"]), (200, &created["data"]));

    // An upload through B lands in the bucket; A downloads the same bytes.
    let content = "Kept in the bucket, seen by every replica.\n".repeat(40);
    let uploaded = upload(
        &client,
        &b.base,
        &key,
        ("notes.md", "text/markdown"),
        &content,
    )
    .await;
    let doc_id = uploaded["data"]["id"].as_str().expect("id").to_owned();
    let path = uploaded["data"]["file_path"].as_str().expect("file_path");
    assert!(
        shared
            .bucket
            .keys()
            .await
            .iter()
            .any(|k| k == &format!("assets/{path}")),
        "the upload is in the bucket under the prefix"
    );
    let r = client
        .get(format!("{}/api/v1/assets/{doc_id}/download", a.base))
        .bearer_auth(&key)
        .send()
        .await
        .expect("download");
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.expect("body"), content);

    // A library written through A; B's page follows every replace at once, cache and all.
    let lib = uuid::Uuid::new_v4();
    let doc = |title: &str| {
        json!({"title": title, "sections": [{"title": "Docs",
            "assets": [{"asset_id": pdf_id}, {"asset_id": doc_id}]}]})
    };
    let (status, _) = send(
        &client,
        reqwest::Method::PUT,
        format!("{}/api/v1/libraries/{lib}", a.base),
        &key,
        Some(doc("First")),
    )
    .await;
    assert_eq!(status, 201);
    let (status, page) = get(&b.base, &format!("/api/v1/libraries/{lib}")).await;
    assert_eq!((status, page["title"].as_str()), (200, Some("First")));
    let (status, _) = send(
        &client,
        reqwest::Method::PUT,
        format!("{}/api/v1/libraries/{lib}", a.base),
        &key,
        Some(doc("Second")),
    )
    .await;
    assert_eq!(status, 200);
    within(bound(mode), "B's cached page follows A's write", || async {
        let (_, page) = get(&b.base, &format!("/api/v1/libraries/{lib}")).await;
        same(page["title"].as_str(), Some("Second"))
    })
    .await;

    // 200 concurrent reads spread over both replicas: each answer shows a count of its own
    // within its replica, and both replicas show all 200 within a second (the libraries
    // list shows counts without counting a view).
    let listed_views = |base: String| async move {
        let (_, list) = get(&base, "/api/v1/libraries").await;
        list["libraries"]
            .as_array()
            .expect("libraries")
            .iter()
            .find(|l| l["id"] == json!(lib))
            .and_then(|l| l["view_count"].as_u64())
    };
    // The views so far, once both replicas have written theirs: the same on both, twice,
    // two flush periods apart.
    let settled = || async {
        let (on_a, on_b) = (
            listed_views(a.base.clone()).await,
            listed_views(b.base.clone()).await,
        );
        same(on_a, on_b)?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        same(listed_views(a.base.clone()).await, on_a)?;
        same(listed_views(b.base.clone()).await, on_b)?;
        on_a.ok_or_else(|| "not listed".to_owned())
    };
    let start = std::sync::Mutex::new(0);
    within(COUNTS_WITHIN, "the views so far settle", || async {
        *start.lock().expect("start") = settled().await?;
        Ok(())
    })
    .await;
    let start = start.into_inner().expect("start");
    let reads: Vec<_> = (0..200)
        .map(|i| {
            let base = if i % 2 == 0 { &a.base } else { &b.base };
            let read = get(base, &format!("/api/v1/libraries/{lib}"));
            tokio::spawn(async move { (i % 2, read.await) })
        })
        .collect();
    let mut seen = [Vec::new(), Vec::new()];
    for r in reads {
        let (replica, (status, page)) = r.await.expect("read");
        assert_eq!(status, 200);
        seen[replica].push(page["view_count"].as_u64().expect("views"));
    }
    for counts in &mut seen {
        let n = counts.len();
        counts.sort_unstable();
        counts.dedup();
        assert_eq!(counts.len(), n, "a count of its own within each replica");
        assert!(counts.iter().all(|&c| c > start && c <= start + 200));
    }
    for base in [&a.base, &b.base] {
        within(COUNTS_WITHIN, "every view counted on both", || async {
            same(listed_views(base.clone()).await, Some(start + 200))
        })
        .await;
    }

    // Downloads are counted exactly across replicas too.
    let downloads: Vec<_> = (0..40)
        .map(|i| {
            let base = if i % 2 == 0 {
                a.base.clone()
            } else {
                b.base.clone()
            };
            let (client, key, id) = (client.clone(), key.clone(), doc_id.clone());
            tokio::spawn(async move {
                let r = client
                    .get(format!("{base}/api/v1/assets/{id}/download"))
                    .bearer_auth(&key)
                    .send()
                    .await
                    .expect("download");
                assert_eq!(r.status(), 200);
                r.bytes().await.expect("body").len()
            })
        })
        .collect();
    for d in downloads {
        assert_eq!(d.await.expect("download"), content.len());
    }
    for base in [&a.base, &b.base] {
        within(COUNTS_WITHIN, "every download counted on both", || async {
            let (_, asset) = get(base, &format!("/api/v1/assets/{doc_id}")).await;
            same(asset["data"]["download_count"].as_u64(), Some(41))
        })
        .await;
    }

    // A key made while both run works on both at once.
    let reader = shared.create_key("warp_server", "read:assets");
    for base in [&a.base, &b.base] {
        let (status, _) = send(
            &client,
            reqwest::Method::GET,
            format!("{base}/api/v1/assets"),
            &reader,
            None,
        )
        .await;
        assert_eq!(status, 200);
    }

    // A delete through B is gone through A.
    let (status, _) = send(
        &client,
        reqwest::Method::DELETE,
        format!("{}/api/v1/libraries/{lib}", b.base),
        &key,
        None,
    )
    .await;
    assert_eq!(status, 204);
    within(
        bound(mode),
        "a delete through B is gone through A",
        || async {
            let (status, _) = get(&a.base, &format!("/api/v1/libraries/{lib}")).await;
            same(status, 404)
        },
    )
    .await;

    a.terminate().await;
    b.terminate().await;
}

/// Asset list pages and single assets are kept by each replica under the store's assets
/// version: with both replicas' caches warm, every write through one shows on the other's
/// reads within 100 ms with change notices.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_lists_and_assets_follow_the_other_replicas_writes_notify() {
    kept_answers_follow("notify").await;
}

/// As above with `strict`: on the other's very next read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_lists_and_assets_follow_the_other_replicas_writes_strict() {
    kept_answers_follow("strict").await;
}

async fn kept_answers_follow(mode: &str) {
    let shared = Shared::new().await;
    let key = shared.create_key("server", "read:assets,write:assets");
    let a = shared.replica_in("server", mode).await;
    let b = shared.replica_in("warp_server", mode).await;
    let client = reqwest::Client::new();
    let call = |method: reqwest::Method, base: &str, path: &str, body: Option<Value>| {
        let url = format!("{base}/api/v1{path}");
        let (client, key) = (client.clone(), key.clone());
        async move { send(&client, method, url, &key, body).await }
    };
    let titles = |base: String| async move {
        let (status, page) = call(
            reqwest::Method::GET,
            &base,
            "/assets?sort=title&order=asc",
            None,
        )
        .await;
        assert_eq!(status, 200, "{page}");
        let titles: Vec<String> = page["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|a| a["title"].as_str().expect("title").to_owned())
            .collect();
        (titles, page["pagination"]["total"].clone())
    };

    let (status, made) = call(
        reqwest::Method::POST,
        &a.base,
        "/assets",
        Some(json!({"title": "Alpha", "asset_type": "link",
            "external_url": "https://example.com/alpha"})),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let id = made["data"]["id"].as_str().expect("id").to_owned();
    let one = format!("/assets/{id}");
    // Warm both: twice each, so the second read is a kept answer.
    for base in [&a.base, &b.base] {
        for _ in 0..2 {
            assert_eq!(titles(base.clone()).await.0, ["Alpha"]);
            let (status, asset) = call(reqwest::Method::GET, base, &one, None).await;
            assert_eq!((status, &asset["data"]["title"]), (200, &json!("Alpha")));
        }
    }

    // A create through B: A's next list has it.
    let (status, _) = call(
        reqwest::Method::POST,
        &b.base,
        "/assets",
        Some(json!({"title": "Bravo", "asset_type": "pdf"})),
    )
    .await;
    assert_eq!(status, 201);
    within(bound(mode), "a create through B in A's list", || async {
        same(
            titles(a.base.clone()).await,
            (vec!["Alpha".to_owned(), "Bravo".to_owned()], json!(2)),
        )
    })
    .await;

    // A change through A: B's next reads of the asset and of the list show it.
    let (status, _) = call(
        reqwest::Method::PATCH,
        &a.base,
        &one,
        Some(json!({"title": "Alpha renamed"})),
    )
    .await;
    assert_eq!(status, 200);
    within(bound(mode), "a change through A on B", || async {
        let (_, asset) = call(reqwest::Method::GET, &b.base, &one, None).await;
        same(asset["data"]["title"].as_str(), Some("Alpha renamed"))?;
        same(titles(b.base.clone()).await.0[0].as_str(), "Alpha renamed")
    })
    .await;

    // Unpublished through B: A's next list leaves it out.
    let (status, _) = call(
        reqwest::Method::PATCH,
        &b.base,
        &one,
        Some(json!({"published": false})),
    )
    .await;
    assert_eq!(status, 200);
    within(
        bound(mode),
        "unpublished through B, out of A's list",
        || async {
            same(
                titles(a.base.clone()).await,
                (vec!["Bravo".to_owned()], json!(1)),
            )
        },
    )
    .await;

    // A delete through A: B's next read is 404 and its list does not have it.
    let (status, _) = call(reqwest::Method::DELETE, &a.base, &one, None).await;
    assert_eq!(status, 204);
    within(bound(mode), "a delete through A on B", || async {
        let (status, _) = call(reqwest::Method::GET, &b.base, &one, None).await;
        same(status, 404)?;
        let (status, drafts) =
            call(reqwest::Method::GET, &b.base, "/assets?status=any", None).await;
        same(
            (status, drafts["pagination"]["total"].clone()),
            (200, json!(1)),
        )
    })
    .await;

    a.terminate().await;
    b.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_write_loses_no_acknowledged_create() {
    let shared = Shared::new().await;
    let key = shared.create_key("server", "read:assets,write:assets,read:events");
    let mut victim = shared.replica("server").await;
    let survivor = shared.replica("warp_server").await;
    let client = reqwest::Client::new();

    let acknowledged = crate::events::kill_while_creating(&mut victim, &client, &key).await;
    for id in &acknowledged {
        let r = client
            .get(format!("{}/api/v1/assets/{id}", survivor.base))
            .bearer_auth(&key)
            .send()
            .await
            .expect("read");
        assert_eq!(r.status(), 200, "acknowledged create {id} is lost");
    }
    // Each acknowledged create has exactly one event, and no event is of a lost write.
    crate::events::one_event_per_acknowledged_create(&client, &survivor.base, &key, &acknowledged)
        .await;
    survivor.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_runs_on_postgres_and_a_bucket() {
    let shared = Shared::new().await;
    let key = shared.create_key("server", "read:assets,read:libraries");
    let logs = shared.dir().join("logs-demo");
    std::fs::create_dir_all(&logs).expect("logs dir");
    let mut flags = shared.flags();
    flags.push("--demo".into());
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let data = shared.dir().join("unused");
    let server = Running::start_with("server", &data, &logs, &flags, &shared.env).await;
    let client = reqwest::Client::new();
    let get = |path: String| {
        client
            .get(format!("{}{path}", server.base))
            .bearer_auth(&key)
            .send()
    };
    let list: Value = get("/api/v1/libraries".into())
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    let library = &list["libraries"][0];
    assert_eq!(library["slug"], "sample-brand-library", "{list}");
    let page: Value = get(format!(
        "/api/v1/libraries/{}?include_assets=true",
        library["id"].as_str().expect("id")
    ))
    .await
    .expect("page")
    .json()
    .await
    .expect("json");
    let logo = &page["sections"][0]["assets"][1];
    assert_eq!(logo["title"], "Primary logo", "{page}");
    // The logo's thumbnail is in the bucket, and served publicly by the ready server.
    let thumb = logo["thumbnail_url"].as_str().expect("thumbnail_url");
    let r = client
        .get(format!("{}{thumb}", server.base))
        .send()
        .await
        .expect("thumbnail");
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("image/png")
    );
    let guide = &page["sections"][0]["assets"][0];
    let r = get(format!(
        "/api/v1/assets/{}/download",
        guide["id"].as_str().expect("id")
    ))
    .await
    .expect("download");
    assert_eq!(r.status(), 200);
    assert!(r.bytes().await.expect("pdf").starts_with(b"%PDF-"));
    assert!(
        shared
            .bucket
            .keys()
            .await
            .iter()
            .any(|k| k.starts_with("assets/demo/")),
        "the demo's files are in the bucket"
    );
    server.terminate().await;
}

/// Two replicas x 50 concurrent downloads through one pass with `max_downloads = 10`: exactly
/// 10 succeed, whichever replica serves them (the limit is spent in the database), every other
/// answer is 403 `Pass download limit reached`; and a pass revoked on one replica is refused
/// by the other on its next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_limit_holds_across_replicas() {
    let shared = Shared::new().await;
    let key = shared.create_key(
        "server",
        "read:assets,write:assets,read:libraries,write:libraries,write:passes",
    );
    let a = shared.replica("server").await;
    let b = shared.replica("warp_server").await;
    let client = reqwest::Client::new();
    let asset = upload(
        &client,
        &a.base,
        &key,
        ("font.txt", "text/plain"),
        "A font sold by the library.",
    )
    .await;
    let asset = asset["data"]["id"].as_str().expect("id").to_owned();
    let library = uuid::Uuid::new_v4();
    let (status, body) = send(
        &client,
        reqwest::Method::PUT,
        format!("{}/api/v1/libraries/{library}", a.base),
        &key,
        Some(json!({"title": "Fonts", "is_paid": true, "price": 20,
            "unsectioned_assets": [{"asset_id": asset}]})),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let mut tokens = Vec::new();
    for limit in [json!(10), Value::Null] {
        let (status, made) = send(
            &client,
            reqwest::Method::POST,
            format!("{}/api/v1/libraries/{library}/passes", b.base),
            &key,
            Some(json!({"label": "Order", "expires_in": 600, "max_downloads": limit})),
        )
        .await;
        assert_eq!(status, 201, "{made}");
        tokens.push(made["data"]["token"].as_str().expect("token").to_owned());
    }

    let mut tasks = Vec::new();
    for n in 0..50 {
        let base = if n % 2 == 0 { &a.base } else { &b.base };
        let request = client
            .get(format!("{base}/api/v1/assets/{asset}/download"))
            .header("authorization", format!("Pass {}", tokens[0]));
        tasks.push(tokio::spawn(async move {
            let r = request.send().await.expect("request");
            let status = r.status().as_u16();
            let body = r.bytes().await.expect("body");
            (status, body)
        }));
    }
    let (mut ok, mut limited, mut other) = (0, 0, Vec::new());
    for task in tasks {
        match task.await.expect("task") {
            (200, body) => {
                assert_eq!(&body[..], b"A font sold by the library.");
                ok += 1;
            }
            (403, body)
                if body
                    .windows(27)
                    .any(|w| w == b"Pass download limit reached") =>
            {
                limited += 1;
            }
            (status, body) => other.push((status, String::from_utf8_lossy(&body).into_owned())),
        }
    }
    assert_eq!((ok, limited, other), (10, 40, vec![]));

    // Revoked through B, refused by A at once.
    let download = |base: &str| {
        client
            .get(format!("{base}/api/v1/assets/{asset}/download"))
            .header("authorization", format!("Pass {}", tokens[1]))
    };
    assert_eq!(
        download(&a.base).send().await.expect("request").status(),
        200
    );
    let (status, list) = send(
        &client,
        reqwest::Method::GET,
        format!("{}/api/v1/libraries/{library}/passes", b.base),
        &key,
        None,
    )
    .await;
    assert_eq!(status, 200, "{list}");
    let passes = list["data"].as_array().expect("passes");
    let used = |limited: bool| {
        passes
            .iter()
            .find(|p| p["max_downloads"].is_null() != limited)
            .expect("the pass")
    };
    assert_eq!(used(true)["downloads_used"], 10);
    assert_eq!(used(false)["downloads_used"], 1);
    let unlimited = used(false)["id"].as_str().expect("id");
    let r = client
        .delete(format!(
            "{}/api/v1/libraries/{library}/passes/{unlimited}",
            b.base
        ))
        .bearer_auth(&key)
        .send()
        .await
        .expect("revoke");
    assert_eq!(r.status(), 204);
    assert_eq!(
        download(&a.base).send().await.expect("request").status(),
        401
    );
    a.terminate().await;
    b.terminate().await;
}

/// PostgreSQL stopped for 5 s under load, then started again: every request meanwhile is
/// answered correctly (200) or 503 with `Retry-After`, never 500 or a hang, and within 5 s of
/// the restart every request is 200 again, with no restart of the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_is_503_then_heals_by_itself() {
    let mut cluster = TestCluster::start();
    let database = cluster.database().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).expect("logs dir");
    let key = {
        let out = Command::new(crate::running::server_binary("server"))
            .args(["keys", "create", "--scopes", "read:assets,write:assets"])
            .args(["--database-url", database.url()])
            .env("RUST_LOG", "warn")
            .output()
            .expect("keys create");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .expect("key")
            .trim()
            .to_owned()
    };
    let server = Running::start(
        "server",
        &dir.path().join("data"),
        &logs,
        &["--database-url", database.url()],
    )
    .await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client");
    let (status, made) = send(
        &client,
        reqwest::Method::POST,
        format!("{}/api/v1/assets", server.base),
        &key,
        Some(json!({"title": "Through the outage", "asset_type": "pdf"})),
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let id = made["data"]["id"].as_str().expect("id").to_owned();

    // Readers of one asset and of the list, each request's status and time kept.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|r| {
            let (client, key, stop) = (client.clone(), key.clone(), stop.clone());
            let url = if r % 2 == 0 {
                format!("{}/api/v1/assets/{id}", server.base)
            } else {
                format!("{}/api/v1/assets?per_page=5", server.base)
            };
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let r = client.get(&url).bearer_auth(&key).send().await;
                    let r = r.expect("every request is answered");
                    let status = r.status().as_u16();
                    let retry = r.headers().get("retry-after").is_some();
                    let body: Value = r.json().await.unwrap_or(Value::Null);
                    match status {
                        200 => assert!(body["data"].is_object() || body["data"].is_array()),
                        503 => {
                            assert!(retry, "503 says when to retry");
                            assert_eq!(body["error"], "Service unavailable");
                        }
                        other => panic!("status {other} during the outage: {body}"),
                    }
                    seen.push((Instant::now(), status));
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                seen
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    cluster.pause();
    tokio::time::sleep(Duration::from_secs(5)).await;
    cluster.resume();
    let restarted = Instant::now();
    tokio::time::sleep(Duration::from_secs(6)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut counts = std::collections::BTreeMap::new();
    for r in readers {
        for (at, status) in r.await.expect("reader") {
            *counts.entry(status).or_insert(0) += 1;
            if at > restarted + Duration::from_secs(5) {
                assert_eq!(status, 200, "5 s after the restart every request is 200");
            }
        }
    }
    assert!(
        counts.get(&503).copied().unwrap_or(0) > 0,
        "the outage was seen: {counts:?}"
    );
    assert!(counts.get(&200).copied().unwrap_or(0) > 0, "{counts:?}");
    server.terminate().await;
    drop(database);
}

/// `thumbnails backfill` on the shared database and bucket, beside a running replica: a video
/// stored without a poster frame gets one, which the replica then serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backfill_beside_a_replica_gives_videos_their_poster_frames() {
    let shared = Shared::new().await;
    let key = shared.create_key("server", "read:assets,write:assets");
    let prefix = format!("{}/assets", shared.bucket.url());
    let files = assetlib::Files::s3_with(shared.bucket.builder(), &prefix).expect("the bucket");
    let media = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/media/h264-rotated.mov");
    let video = std::fs::read(media).expect("the media corpus");
    files
        .put("video/clip.mov", video.into())
        .await
        .expect("put the video");
    let replica = shared.replica("server").await;
    let body = json!({"title": "Clip", "asset_type": "video", "file_path": "video/clip.mov"});
    let (status, created) = replica
        .send(reqwest::Method::POST, "/api/v1/assets", &key, Some(body))
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["data"]["id"].as_str().expect("an id").to_owned();
    assert_eq!(created["data"]["thumbnail_path"], Value::Null);

    let ffmpeg = assetlib_testkit::tools::FFMPEG.require();
    let mut backfill = Command::new(server_binary("server"));
    backfill
        .args(["thumbnails", "backfill", "--ffmpeg"])
        .arg(&ffmpeg)
        .args(shared.flags())
        .envs(shared.env.iter().map(|(k, v)| (k, v)))
        .env("RUST_LOG", "warn");
    let out = backfill.output().expect("run thumbnails backfill");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("1 read again now have a thumbnail"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The replica follows the write within its notice bound.
    let path = format!("/api/v1/assets/{id}");
    let deadline = Instant::now() + Duration::from_secs(1);
    let thumb = loop {
        let (_, got) = replica.get(&path, &key).await;
        if let Some(shown) = got["data"]["thumbnail_path"].as_str() {
            break shown.to_owned();
        }
        assert!(
            Instant::now() < deadline,
            "no poster on the replica within 1 s: {got}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert!(thumb.ends_with(".jpg"), "{thumb}");
    let keys = shared.bucket.keys().await;
    assert!(keys.contains(&format!("assets/{thumb}")), "{keys:?}");
    replica.terminate().await;
}

/// Two replicas deliver webhooks from one database: 120 creates made through both, each event
/// goes out to the endpoint once (its delivery enqueued by one dispatcher, claimed by one
/// replica), and nothing is sent twice in a run without crashes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_deliver_each_event_once() {
    use assetlib_testkit::receiver::{Answer, Receiver};

    let shared = Shared::new().await;
    let key = shared.create_key(
        "server",
        "read:assets,write:assets,admin:webhooks,read:events",
    );
    let flags = ["--webhook-allow-private"];
    let a = shared.replica_with("server", &flags).await;
    let b = shared.replica_with("warp_server", &flags).await;
    let client = reqwest::Client::new();
    let receiver = Receiver::start(Answer::Status(204)).await;
    let (status, hook) = send(
        &client,
        reqwest::Method::POST,
        format!("{}/api/v1/webhooks", a.base),
        &key,
        Some(json!({"url": receiver.url("/hook"), "event_types": ["asset.created"]})),
    )
    .await;
    assert_eq!(status, 201, "{hook}");

    let creates: Vec<_> = (0..120)
        .map(|n| {
            let base = if n % 2 == 0 {
                a.base.clone()
            } else {
                b.base.clone()
            };
            let (client, key) = (client.clone(), key.clone());
            tokio::spawn(async move {
                let (status, body) = send(
                    &client,
                    reqwest::Method::POST,
                    format!("{base}/api/v1/assets"),
                    &key,
                    Some(json!({"title": format!("Leaflet {n}"), "asset_type": "collection"})),
                )
                .await;
                assert_eq!(status, 201, "{body}");
                body["data"]["id"].as_str().expect("id").to_owned()
            })
        })
        .collect();
    let mut created = std::collections::HashSet::new();
    for task in creates {
        created.insert(task.await.expect("create"));
    }
    receiver.wait_for(120, Duration::from_secs(30)).await;
    // A second sending of any of them would come at once; give it time to show.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let got = receiver.received();
    let ids: std::collections::HashSet<&str> = got
        .iter()
        .map(|r| r.header("webhook-id").expect("webhook-id"))
        .collect();
    assert_eq!(
        (got.len(), ids.len()),
        (120, 120),
        "every event once, none twice"
    );
    let assets: std::collections::HashSet<String> = got
        .iter()
        .map(|r| {
            r.json()["data"]["resource"]["id"]
                .as_str()
                .expect("id")
                .to_owned()
        })
        .collect();
    assert_eq!(assets, created);
    a.terminate().await;
    b.terminate().await;
}
