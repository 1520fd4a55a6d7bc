//! What the resumable-upload tests use: a large video file made on the spot, a TCP proxy that
//! alternates between replicas and cuts connections in the middle of a body, the official tus
//! clients run as child processes, and a small client of the tests' own.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use assetlib_testkit::media::write_big_video;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// A video of `size` bytes at `path`: a small faststart MP4 (its index first) followed by a
/// `free` box of pseudo-random bytes from `seed`, which players and probes skip. Answers its
/// SHA-256.
pub(crate) fn big_video(path: &Path, size: u64, seed: u64) -> [u8; 32] {
    let mut hash = Sha256::new();
    write_big_video(path, size, seed, |bytes| hash.update(bytes));
    hash.finalize().into()
}

/// A TCP proxy on 127.0.0.1 in front of `backends`: each new connection goes to the next one
/// in turn, and when the bytes sent towards the backends (by all connections together) pass
/// the next of `cuts`, the connection that passed it is cut at once (reset, both ways).
pub(crate) struct CutProxy {
    pub(crate) base: String,
    cut: Arc<AtomicUsize>,
    connections: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl CutProxy {
    /// Starts the proxy; `cuts` are byte counts in increasing order.
    pub(crate) async fn start(backends: Vec<SocketAddr>, cuts: Vec<u64>) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let sent = Arc::new(AtomicU64::new(0));
        let cut = Arc::new(AtomicUsize::new(0));
        let connections = Arc::new(AtomicUsize::new(0));
        let cuts = Arc::new(cuts);
        let (cut2, connections2) = (Arc::clone(&cut), Arc::clone(&connections));
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let n = connections2.fetch_add(1, Ordering::SeqCst);
                let backend = backends[n % backends.len()];
                let (sent, cut, cuts) = (Arc::clone(&sent), Arc::clone(&cut2), Arc::clone(&cuts));
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(backend).await else {
                        return;
                    };
                    relay(client, server, sent, cut, cuts).await;
                });
            }
        });
        CutProxy {
            base,
            cut,
            connections,
            task,
        }
    }

    /// How many connections it cut.
    pub(crate) fn cuts(&self) -> usize {
        self.cut.load(Ordering::SeqCst)
    }

    /// How many connections it took.
    pub(crate) fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Relays one connection until either side closes it, or cuts it when the bytes sent towards
/// the backends pass the next cut.
async fn relay(
    client: TcpStream,
    server: TcpStream,
    sent: Arc<AtomicU64>,
    cut: Arc<AtomicUsize>,
    cuts: Arc<Vec<u64>>,
) {
    // Dropped with a zero linger: a reset, as when a network goes away.
    let _ = client.set_zero_linger();
    let _ = server.set_zero_linger();
    let (mut client_in, mut client_out) = client.into_split();
    let (mut server_in, mut server_out) = server.into_split();
    let upstream = async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match client_in.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if server_out.write_all(&buf[..n]).await.is_err() {
                return;
            }
            let total = sent.fetch_add(n as u64, Ordering::SeqCst) + n as u64;
            let next = cut.load(Ordering::SeqCst);
            if cuts.get(next).is_some_and(|at| total >= *at)
                && cut
                    .compare_exchange(next, next + 1, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            {
                return;
            }
        }
    };
    let downstream = async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match server_in.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if client_out.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            }
        }
    };
    // Whichever ends first ends the connection: the halves drop, and with them the sockets.
    tokio::select! {
        () = upstream => {}
        () = downstream => {}
    }
}

/// `count` cut points spread at random over `(size / 20, size * 19 / 20)`, in order.
pub(crate) fn random_cuts(size: u64, count: usize, seed: u64) -> Vec<u64> {
    let mut state = seed | 1;
    let mut cuts: Vec<u64> = (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            size / 20 + state % (size * 9 / 10)
        })
        .collect();
    cuts.sort_unstable();
    cuts
}

/// Runs `command` to its end within `limit` (killed by its PID past it); answers its standard
/// output, or panics with both outputs when it fails.
pub(crate) async fn run_client(
    what: &str,
    command: &mut tokio::process::Command,
    limit: Duration,
) -> String {
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let output = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?} (killed)"))
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    stdout
}

/// A resumable upload by the tests' own client: `Upload-Checksum` on every `PATCH` of at most
/// `chunk` bytes; after any failure, `HEAD` for the offset and on from there. Answers the
/// upload's URL.
pub(crate) async fn own_client_upload(
    base: &str,
    key: &str,
    path: &Path,
    title: &str,
    chunk: usize,
) -> String {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client");
    let size = std::fs::metadata(path).expect("file").len();
    let name = path
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let meta = format!(
        "filename {},title {}",
        STANDARD.encode(&name),
        STANDARD.encode(title)
    );
    let url = loop {
        let created = client
            .post(format!("{base}/api/v1/uploads"))
            .bearer_auth(key)
            .header("tus-resumable", "1.0.0")
            .header("upload-length", size.to_string())
            .header("upload-metadata", &meta)
            .send()
            .await;
        if let Ok(r) = created {
            assert_eq!(r.status(), 201, "create");
            let location = r.headers()["location"]
                .to_str()
                .expect("location")
                .to_owned();
            break format!("{base}{location}");
        }
    };
    let mut file = tokio::fs::File::open(path).await.expect("open");
    let mut failures = 0;
    loop {
        let head = client
            .head(&url)
            .bearer_auth(key)
            .header("tus-resumable", "1.0.0")
            .send()
            .await;
        let Ok(head) = head else {
            failures += 1;
            assert!(failures < 50, "too many failures");
            continue;
        };
        assert_eq!(head.status(), 200, "HEAD");
        let offset: u64 = head.headers()["upload-offset"]
            .to_str()
            .expect("offset")
            .parse()
            .expect("a number");
        if offset == size {
            return url;
        }
        let len = chunk.min((size - offset) as usize);
        let mut bytes = vec![0u8; len];
        use tokio::io::AsyncSeekExt as _;
        file.seek(std::io::SeekFrom::Start(offset))
            .await
            .expect("seek");
        file.read_exact(&mut bytes).await.expect("read");
        let digest = STANDARD.encode(Sha256::digest(&bytes));
        let patched = client
            .patch(&url)
            .bearer_auth(key)
            .header("tus-resumable", "1.0.0")
            .header("content-type", "application/offset+octet-stream")
            .header("upload-offset", offset.to_string())
            .header("upload-checksum", format!("sha256 {digest}"))
            .body(bytes)
            .send()
            .await;
        match patched {
            Ok(r) if r.status() == 204 => {}
            // A lease the cut request still holds: look again.
            Ok(r) if r.status() == 423 => tokio::time::sleep(Duration::from_millis(500)).await,
            // The cut request kept its bytes after the HEAD: look again.
            Ok(r) if r.status() == 409 => {
                failures += 1;
                assert!(failures < 50, "too many failures");
            }
            Ok(r) => panic!(
                "PATCH at {offset} of {size} answered {}: {}",
                r.status(),
                r.text().await.unwrap_or_default()
            ),
            Err(_) => {
                failures += 1;
                assert!(failures < 50, "too many failures");
            }
        }
    }
}

/// The SHA-256 of a download of `url` with `key`, read as it streams.
pub(crate) async fn download_digest(url: &str, key: &str) -> ([u8; 32], u64) {
    let mut response = reqwest::Client::new()
        .get(url)
        .bearer_auth(key)
        .send()
        .await
        .expect("download");
    assert_eq!(response.status(), 200, "download {url}");
    let mut hash = Sha256::new();
    let mut size = 0u64;
    while let Some(chunk) = response.chunk().await.expect("chunk") {
        size += chunk.len() as u64;
        hash.update(&chunk);
    }
    (hash.finalize().into(), size)
}

/// The directory of the pinned `tus-js-client` (its `node_modules/`), and the client scripts.
pub(crate) fn clients_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/server/clients"))
}
