//! End to end, the ready server binaries (`examples/server/main.rs` on axum and
//! `examples/warp_server.rs` on warp, each case run against both): `keys create` on a fresh
//! data directory, `serve` on a free port, real requests, SIGTERM, a restart that finds the
//! data, `keys` refused while a server holds the directory, and the first key printed once.

use std::fs::File;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::running::{
    EMBEDDINGS, Running, SERVERS, create_key, free_port, run, server_binary, text,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_serve_sigterm_restart_and_a_locked_directory() {
    for example in SERVERS {
        keys_serve_sigterm_restart_and_a_locked_directory_on(example).await;
    }
}

async fn keys_serve_sigterm_restart_and_a_locked_directory_on(example: &str) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let data_arg = data.to_str().unwrap();

    let key = create_key(example, &data, "read:assets,write:assets,read:libraries");
    let server = Running::start(example, &data, &logs, &["--demo"]).await;
    assert!(
        !server.stdout().contains("alk_"),
        "a directory with keys gets no new key"
    );

    // The demo library is findable in the list; the demo assets are there.
    let (status, list) = server.get("/api/v1/libraries", &key).await;
    assert_eq!(status, 200);
    assert_eq!(list["pagination"]["total"], 1);
    let library = list["libraries"][0]["id"].as_str().unwrap().to_owned();
    assert!(
        server.stdout().contains(&library),
        "the demo library's address is printed"
    );
    let (status, detail) = server
        .get(
            &format!("/api/v1/libraries/{library}?include_assets=true"),
            &key,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(detail["sections"].as_array().unwrap().len(), 2);
    assert!(!detail["unsectioned_assets"].as_array().unwrap().is_empty());
    let (_, assets) = server.get("/api/v1/assets?per_page=100", &key).await;
    let demo_assets = assets["pagination"]["total"].as_u64().unwrap();
    assert!(demo_assets >= 8, "{assets}");
    let types: Vec<&str> = assets["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["asset_type"].as_str().unwrap())
        .collect();
    assert!(types.contains(&"external_video"), "{types:?}");

    // The demo's files are real: counts and sizes read from them, and a public thumbnail.
    let by_title = |title: &str| {
        assets["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["title"] == title)
            .unwrap_or_else(|| panic!("no demo asset {title}"))
            .clone()
    };
    let guide = by_title("Brand guidelines");
    assert_eq!(
        (
            &guide["mime_type"],
            &guide["page_count"],
            &guide["word_count"]
        ),
        (&json!("application/pdf"), &json!(12), &json!(1440))
    );
    let logo = by_title("Logo (full colour)");
    assert_eq!(
        (&logo["width"], &logo["height"]),
        (&json!(800), &json!(400))
    );
    let thumb = logo["thumbnail_path"].as_str().unwrap();
    let r = reqwest::get(format!("{}/files/{thumb}", server.base))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "image/png");
    // A name no file can have (too long for the file system, a NUL, not UTF-8) is the JSON
    // 404 of a missing thumbnail, not the file system's refusal.
    for name in [
        format!("{}.png", "a".repeat(300)),
        "%00.png".into(),
        "%FF.png".into(),
    ] {
        let r = reqwest::get(format!("{}/files/thumbnails/{name}", server.base))
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{example}: {name}");
        assert_eq!(r.headers()["content-type"], "application/json", "{name}");
    }
    assert!(
        by_title("Product one-pager")["word_count"]
            .as_u64()
            .unwrap()
            > 10
    );

    // A write, answered with success.
    let (status, created) = server
        .send(
            reqwest::Method::POST,
            "/api/v1/assets",
            &key,
            Some(json!({"title": "Kept across restarts", "asset_type": "pdf"})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let asset = created["data"]["id"].as_str().unwrap().to_owned();
    // The key has no write:libraries.
    let (status, _) = server
        .send(
            reqwest::Method::DELETE,
            &format!("/api/v1/libraries/{library}"),
            &key,
            None,
        )
        .await;
    assert_eq!(status, 403);

    // While the server holds the directory, key commands fail cleanly and change nothing.
    for args in [
        vec![
            "keys",
            "create",
            "--scopes",
            "read:assets",
            "--data",
            data_arg,
        ],
        vec!["keys", "list", "--data", data_arg],
        vec![
            "keys",
            "revoke",
            "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
            "--data",
            data_arg,
        ],
    ] {
        let out = run(example, &args);
        assert!(
            !out.status.success(),
            "{args:?} succeeded while the server runs"
        );
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("in use"),
            "{args:?}: unclear message: {stderr}"
        );
        assert!(
            !text(&out.stdout).contains("alk_"),
            "{args:?} printed a key"
        );
    }
    let (status, again) = server.get(&format!("/api/v1/assets/{asset}"), &key).await;
    assert_eq!(status, 200, "the server is unharmed: {again}");

    server.terminate().await;

    // Stopped: keys work again, and the one created at first is listed.
    let out = run(example, &["keys", "list", "--data", data_arg]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    assert_eq!(listing.lines().count(), 1, "{listing}");
    assert!(
        listing.contains("e2e") && listing.contains("read:assets"),
        "{listing}"
    );

    // Restarted (with --demo again): the write survived and the demo is not added twice.
    let server = Running::start(example, &data, &logs, &["--demo"]).await;
    let (status, read) = server.get(&format!("/api/v1/assets/{asset}"), &key).await;
    assert_eq!(status, 200);
    assert_eq!(read["data"]["title"], "Kept across restarts");
    let (_, assets) = server.get("/api/v1/assets", &key).await;
    assert_eq!(
        assets["pagination"]["total"].as_u64().unwrap(),
        demo_assets + 1
    );
    let (_, list) = server.get("/api/v1/libraries", &key).await;
    assert_eq!(list["pagination"]["total"], 1);
    // One view was counted before the restart.
    assert_eq!(list["libraries"][0]["view_count"], 1);
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_start_prints_a_key_with_every_scope_once() {
    for example in SERVERS {
        the_first_start_prints_a_key_with_every_scope_once_on(example).await;
    }
}

async fn the_first_start_prints_a_key_with_every_scope_once_on(example: &str) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();

    let server = Running::start(example, &data, &logs, &[]).await;
    let stdout = server.stdout();
    let keys: Vec<&str> = stdout
        .split_whitespace()
        .filter(|w| w.starts_with("alk_") && w.len() == 47)
        .collect();
    assert!(!keys.is_empty(), "no key printed: {stdout}");
    let key = keys[0].to_owned();
    assert!(keys.iter().all(|k| *k == key), "one key: {stdout}");
    for path in ["/api/v1/assets", "/api/v1/libraries"] {
        assert_eq!(server.get(path, &key).await.0, 200, "{path}");
    }
    let (status, _) = server
        .send(
            reqwest::Method::PUT,
            &format!("/api/v1/libraries/{}", uuid::Uuid::new_v4()),
            &key,
            Some(json!({"title": "Mine"})),
        )
        .await;
    assert_eq!(status, 201, "the first key can write libraries");
    // Paths outside the API are the contract's JSON 404 too, on every server.
    for path in ["/", "/nothing", "/api/v2/assets", "/api/v1x"] {
        let (status, body) = server.get(path, &key).await;
        assert_eq!(
            (status, body),
            (
                404,
                json!({"error": "Not found", "message": "No such route"})
            ),
            "{example} {path}"
        );
    }
    server.terminate().await;

    let server = Running::start(example, &data, &logs, &[]).await;
    assert!(
        !server.stdout().contains("alk_"),
        "printed again: {}",
        server.stdout()
    );
    assert_eq!(server.get("/api/v1/libraries", &key).await.0, 200);
    server.terminate().await;
}

/// A file that sniffs as an MP4 video: an `ftyp` box, then `len` bytes in all.
fn write_video(path: &Path, len: usize) {
    use std::io::Write as _;
    let mut file = File::create(path).unwrap();
    let mut header = vec![0, 0, 0, 0x20];
    header.extend_from_slice(b"ftypisom\0\0\x02\0isomiso2avc1mp41");
    file.write_all(&header).unwrap();
    let block = vec![0x5au8; 1024 * 1024];
    let mut left = len - header.len();
    while left > 0 {
        let n = left.min(block.len());
        file.write_all(&block[..n]).unwrap();
        left -= n;
    }
}

/// Peak resident memory of a process, from `/proc/{pid}/status`, in bytes.
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("VmHWM value");
    kib * 1024
}

/// The axum ready server streams downloads: downloading a 256 MiB file leaves its peak
/// memory far below the file's size. (The warp adapter gathers a download in memory, as its
/// crate docs say, so this holds for axum only.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloading_a_256_mib_file_keeps_the_server_memory_flat() {
    const SIZE: usize = 256 * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let key = create_key("server", &data, "read:assets,write:assets");
    std::fs::create_dir_all(data.join("files/video")).unwrap();
    write_video(&data.join("files/video/big.mp4"), SIZE);

    let server = Running::start("server", &data, &logs, &[]).await;
    let (status, created) = server
        .send(
            reqwest::Method::POST,
            "/api/v1/assets",
            &key,
            Some(json!({"title": "Big", "asset_type": "video", "file_path": "video/big.mp4"})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["data"]["file_size"], SIZE);
    assert_eq!(created["data"]["mime_type"], "video/mp4");
    let id = created["data"]["id"].as_str().unwrap();

    let mut response = reqwest::Client::new()
        .get(format!("{}/api/v1/assets/{id}/download", server.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut received = 0usize;
    while let Some(chunk) = response.chunk().await.unwrap() {
        received += chunk.len();
    }
    assert_eq!(received, SIZE);
    let peak = peak_rss(server.child.id());
    assert!(
        peak < (SIZE / 4) as u64,
        "peak RSS {} MiB while sending a {} MiB file",
        peak / (1024 * 1024),
        SIZE / (1024 * 1024)
    );
}

/// The code of an example as the README must show it: everything from its first `use` line.
fn example_code(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(root.join(format!("examples/{name}.rs"))).unwrap();
    let start = source.find("\nuse ").expect("an example with imports") + 1;
    source[start..].to_owned()
}

#[test]
fn the_readme_shows_the_embedding_examples_verbatim() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for name in EMBEDDINGS {
        let code = example_code(name);
        assert!(
            readme.contains(&code),
            "README.md does not show examples/{name}.rs as it is:\n{code}"
        );
    }
}

/// The README's axum embedding, started on `data`: its printed key and address.
struct Embedded {
    child: Child,
    key: Option<String>,
    base: String,
}

impl Embedded {
    async fn start(data: &Path) -> Embedded {
        let addr = format!("127.0.0.1:{}", free_port());
        let out = data.with_extension(format!("out-{}", free_port()));
        let mut child = Command::new(server_binary("embed_axum"))
            .env("DATA", data)
            .env("ADDR", &addr)
            .stdout(Stdio::from(File::create(&out).unwrap()))
            .stderr(Stdio::null())
            .spawn()
            .expect("start the embedding example");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let printed = std::fs::read_to_string(&out).unwrap_or_default();
            if printed.contains("listening on") {
                let key = printed
                    .lines()
                    .find_map(|l| l.strip_prefix("API key (shown once): "))
                    .map(str::to_owned);
                return Embedded {
                    child,
                    key,
                    base: format!("http://{addr}"),
                };
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!("the embedding example exited ({status}): {printed}");
            }
            assert!(Instant::now() < deadline, "the example did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_embedding_keeps_uploaded_files_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let app = Embedded::start(&data).await;
    let key = app.key.clone().expect("a key on the first start");
    let client = reqwest::Client::new();
    assert_eq!(
        client
            .get(&app.base)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
        "my site"
    );
    let content = "Uploaded once, kept for good.\n".repeat(50);
    let body = format!(
        "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"notes.md\"\r\n\
         Content-Type: text/markdown\r\n\r\n{content}\r\n--b--\r\n"
    );
    let r = client
        .post(format!("{}/api/v1/assets/upload", app.base))
        .bearer_auth(&key)
        .header("content-type", "multipart/form-data; boundary=b")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let asset: Value = r.json().await.unwrap();
    let id = asset["data"]["id"].as_str().unwrap().to_owned();
    drop(app);

    let again = Embedded::start(&data).await;
    assert_eq!(again.key, None, "the key is made once");
    let r = client
        .get(format!("{}/api/v1/assets/{id}/download", again.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), content);
}

/// The resident memory of a process, in KiB (`VmRSS` of `/proc/PID/status`).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("process status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_bodies_without_a_key_cost_no_memory() {
    for example in SERVERS {
        stalled_bodies_without_a_key_cost_no_memory_on(example).await;
    }
}

async fn stalled_bodies_without_a_key_cost_no_memory_on(example: &str) {
    use tokio::io::AsyncWriteExt as _;
    let dir = tempfile::tempdir().unwrap();
    let (data, logs) = (dir.path().join("data"), dir.path().join("logs"));
    std::fs::create_dir_all(&logs).unwrap();
    let server = Running::start(example, &data, &logs, &[]).await;
    let pid = server.child.id();
    let addr = server.base.trim_start_matches("http://").to_owned();
    let before = rss_kib(pid);
    // 200 clients send a key-less POST of 1 MiB, all but its last byte, and stall.
    let head = "POST /api/v1/assets HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n\
                Content-Length: 1048576\r\n\r\n";
    let mut clients = Vec::new();
    for _ in 0..200 {
        let addr = addr.clone();
        clients.push(tokio::spawn(async move {
            let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
            let _ = stream.write_all(head.as_bytes()).await;
            let body = vec![b' '; 1024 * 1024 - 1];
            // The server may answer and stop reading at once; the client keeps the connection.
            let _ = tokio::time::timeout(Duration::from_secs(3), stream.write_all(&body)).await;
            stream
        }));
    }
    let mut streams = Vec::new();
    for c in clients {
        streams.push(c.await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = rss_kib(pid);
    let grown = during.saturating_sub(before);
    assert!(
        grown < 40 * 1024,
        "{example}: resident memory grew by {grown} KiB under 200 stalled key-less bodies \
         ({before} KiB -> {during} KiB)"
    );
    drop(streams);
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_head_is_cut_off_and_never_holds_a_shutdown() {
    // Both servers, and the idle case, at once: each waits out its timeouts.
    let [axum, warp] = SERVERS;
    tokio::join!(
        a_half_sent_head_is_cut_off_and_never_holds_a_shutdown_on(axum),
        a_half_sent_head_is_cut_off_and_never_holds_a_shutdown_on(warp),
        an_idle_connection_stays_open_for_a_minute_then_closes_on(axum),
        an_idle_connection_stays_open_for_a_minute_then_closes_on(warp),
    );
}

/// An idle keep-alive connection outlives the 10 s head timeout (it is counted from a head's
/// first byte), serves another request, and closes after the 60 s idle time.
async fn an_idle_connection_stays_open_for_a_minute_then_closes_on(example: &str) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let dir = tempfile::tempdir().unwrap();
    let (data, logs) = (dir.path().join("data"), dir.path().join("logs"));
    std::fs::create_dir_all(&logs).unwrap();
    let server = Running::start(example, &data, &logs, &[]).await;
    let addr = server.base.trim_start_matches("http://").to_owned();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = b"GET /api/v1/assets HTTP/1.1\r\nHost: test\r\n\r\n";
    let mut buf = vec![0u8; 8192];
    for round in 0..2 {
        conn.write_all(request).await.unwrap();
        let n = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf))
            .await
            .unwrap_or_else(|_| panic!("{example}: no answer in round {round}"))
            .unwrap();
        let answer = String::from_utf8_lossy(&buf[..n]);
        assert!(answer.starts_with("HTTP/1.1 401"), "{example}: {answer}");
        if round == 0 {
            // Idle for longer than the head timeout: the connection must stay open.
            let idle = tokio::time::timeout(Duration::from_secs(15), conn.read(&mut buf)).await;
            assert!(
                idle.is_err(),
                "{example}: an idle connection closed before 15 s"
            );
        }
    }
    let started = Instant::now();
    let closed = tokio::time::timeout(Duration::from_secs(75), conn.read(&mut buf)).await;
    assert!(
        matches!(closed, Ok(Ok(0) | Err(_))),
        "{example}: an idle connection was still open after 75 s"
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(55),
        "{example}: an idle connection closed after {waited:?}"
    );
    server.terminate().await;
}

async fn a_half_sent_head_is_cut_off_and_never_holds_a_shutdown_on(example: &str) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let dir = tempfile::tempdir().unwrap();
    let (data, logs) = (dir.path().join("data"), dir.path().join("logs"));
    std::fs::create_dir_all(&logs).unwrap();
    let server = Running::start(example, &data, &logs, &[]).await;
    let addr = server.base.trim_start_matches("http://").to_owned();

    // A head that never ends is cut off after the 10 s head timeout.
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"GET /api/v1/assets HTTP/1.1\r\nHost: te")
        .await
        .unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(Duration::from_secs(20), slow.read(&mut buf)).await;
    let waited = started.elapsed();
    assert!(
        matches!(read, Ok(Ok(_) | Err(_))),
        "{example}: a half-sent head was still open after 20 s"
    );
    assert!(
        waited >= Duration::from_secs(9),
        "{example}: cut off after {waited:?}, before the head timeout"
    );

    // A client holding half a head does not hold up SIGTERM for longer than the 10 s grace.
    let mut holder = tokio::net::TcpStream::connect(&addr).await.unwrap();
    holder
        .write_all(b"GET /api/v1/assets HTTP/1.1\r\nHost: te")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let stderr = server.terminate().await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(13),
        "{example}: SIGTERM took {took:?} with a stalled client"
    );
    assert!(stderr.contains("the store is flushed"), "{stderr}");
    drop(holder);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_log_keeps_no_key_and_a_rotated_secret_revokes_links() {
    for example in SERVERS {
        the_request_log_keeps_no_key_and_a_rotated_secret_revokes_links_on(example).await;
    }
}

async fn the_request_log_keeps_no_key_and_a_rotated_secret_revokes_links_on(example: &str) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let key = create_key(example, &data, "read:assets,write:assets");
    let secret = key.trim_start_matches("alk_");
    let server = Running::start(example, &data, &logs, &[]).await;
    let (status, created) = server
        .send(
            reqwest::Method::POST,
            "/api/v1/assets",
            &key,
            Some(json!({"title": "Link", "asset_type": "link",
                "external_url": "https://example.com/a"})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["data"]["id"].as_str().unwrap().to_owned();
    let (status, signed) = server
        .get(&format!("/api/v1/assets/{id}/download-url"), &key)
        .await;
    assert_eq!(status, 200, "{signed}");
    let link = signed["data"]["url"].as_str().unwrap().to_owned();

    // The key in any spelling of an address, or sent as the page's referrer: the page decodes
    // parameter names, so `%6Bey` is a `key` too.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let encoded: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
    for target in [
        format!("/site/?%6Bey={key}&library=brand"),
        format!("/site/?library=brand&k%65y={key}"),
        format!("/site/?token={encoded}"),
        format!("/api/v1/assets/{key}"),
        format!("/api/v1/assets?search={key}"),
    ] {
        let r = client
            .get(format!("{}{target}", server.base))
            .header("referer", format!("{}{target}", server.base))
            .send()
            .await
            .unwrap();
        assert!(r.status().as_u16() < 500, "{target}");
    }
    // A link still works until the secret is rotated.
    let follow = |base: String, link: String| {
        let client = client.clone();
        async move {
            let r = client.get(format!("{base}{link}")).send().await.unwrap();
            r.status().as_u16()
        }
    };
    assert_eq!(follow(server.base.clone(), link.clone()).await, 302);
    let stderr = server.terminate().await;
    assert!(
        stderr.contains("REDACTED"),
        "the log shows where a key was: {stderr}"
    );
    assert!(
        !stderr.contains(secret),
        "a key reached the request log: {stderr}"
    );

    let out = run(
        example,
        &[
            "keys",
            "rotate-signing-secret",
            "--data",
            data.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("new signing secret"),
        "{}",
        text(&out.stdout)
    );
    let server = Running::start(example, &data, &logs, &[]).await;
    assert_eq!(
        follow(server.base.clone(), link).await,
        401,
        "a link signed before the rotation"
    );
    let (status, signed) = server
        .get(&format!("/api/v1/assets/{id}/download-url"), &key)
        .await;
    assert_eq!(status, 200);
    let link = signed["data"]["url"].as_str().unwrap().to_owned();
    assert_eq!(
        follow(server.base.clone(), link).await,
        302,
        "a link signed after it"
    );
    server.terminate().await;
}
