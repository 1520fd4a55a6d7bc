//! Webhook receivers on 127.0.0.1, for the tests and load runs of webhook deliveries:
//!
//! - [`Receiver`]: a raw HTTP/1.1 endpoint in this process that records every request and
//!   answers as the test says ([`Answer`]): a status, an answer after a wait, a redirect, a
//!   reset connection, or a body that never ends.
//! - [`Verifier`]: an endpoint that checks every delivery with PyPI's `standardwebhooks`, the
//!   reference implementation of Standard Webhooks (a Python process on the pinned venv of
//!   [`crate::tools::STANDARD_WEBHOOKS`], stopped by its PID when dropped), and answers 204 to
//!   a delivery it verified, 401 to any other.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How a [`Receiver`] answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// This status, with an empty body.
    Status(u16),
    /// 204, after this wait.
    Slow(Duration),
    /// 301 to this location.
    Redirect(String),
    /// No answer: the connection is reset.
    Reset,
    /// 200 and a body that never ends (written until the client goes).
    Endless,
}

/// A request a [`Receiver`] got.
#[derive(Debug, Clone)]
pub struct Request {
    /// The method.
    pub method: String,
    /// The target.
    pub path: String,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is none).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_default()
    }
}

#[derive(Debug)]
struct Shared {
    answer: Mutex<Answer>,
    received: Mutex<Vec<Request>>,
    in_flight: AtomicUsize,
    endless_bytes: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A webhook endpoint on 127.0.0.1 that records what it gets; it stops when dropped.
#[derive(Debug)]
pub struct Receiver {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// Listens on a free port of 127.0.0.1 and answers every request with `answer`.
    ///
    /// # Panics
    /// When no port can be bound.
    pub async fn start(answer: Answer) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("cannot listen on 127.0.0.1: {e}"));
        let addr = listener.local_addr().expect("listener address");
        let shared = Arc::new(Shared {
            answer: Mutex::new(answer),
            received: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            endless_bytes: AtomicU64::new(0),
        });
        let for_task = Arc::clone(&shared);
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                connections.spawn(serve(stream, Arc::clone(&for_task)));
            }
        });
        Receiver { addr, shared, task }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Answers every later request with `answer`.
    pub fn answer(&self, answer: Answer) {
        *lock(&self.shared.answer) = answer;
    }

    /// The requests so far, in the order they arrived.
    pub fn received(&self) -> Vec<Request> {
        lock(&self.shared.received).clone()
    }

    /// How many requests it holds without an answer yet ([`Answer::Slow`]).
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::SeqCst)
    }

    /// The most bytes of an endless body it wrote on one connection before the client went
    /// (what the client read, and what the two ends' socket buffers took).
    pub fn endless_bytes(&self) -> u64 {
        self.shared.endless_bytes.load(Ordering::SeqCst)
    }

    /// The requests once there are at least `n` of them.
    ///
    /// # Panics
    /// When fewer than `n` arrived `within`.
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<Request> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "{} requests arrived within {within:?}, not {n}: {got:#?}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves the requests of one connection until it closes.
async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let mut buffer = Vec::new();
    loop {
        let Some(request) = read_request(&mut stream, &mut buffer).await else {
            return;
        };
        lock(&shared.received).push(request);
        let answer = lock(&shared.answer).clone();
        let head = match answer {
            Answer::Status(code) => format!("HTTP/1.1 {code} X\r\ncontent-length: 0\r\n\r\n"),
            Answer::Slow(wait) => {
                shared.in_flight.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(wait).await;
                shared.in_flight.fetch_sub(1, Ordering::SeqCst);
                "HTTP/1.1 204 No Content\r\n\r\n".to_owned()
            }
            Answer::Redirect(location) => format!(
                "HTTP/1.1 301 Moved Permanently\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n"
            ),
            Answer::Reset => {
                let _ = stream.set_zero_linger();
                return;
            }
            Answer::Endless => {
                let head =
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n";
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let chunk = vec![b'x'; 64 * 1024];
                let mut written = 0;
                while stream.write_all(&chunk).await.is_ok() {
                    written += chunk.len() as u64;
                    shared.endless_bytes.fetch_max(written, Ordering::SeqCst);
                }
                return;
            }
        };
        if stream.write_all(head.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Reads one request (head and a `content-length` body); `None` when the connection ends.
async fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Request> {
    let end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > 64 * 1024 {
            return None;
        }
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
    buffer.drain(..end + 4);
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_owned(), first.next()?.to_owned());
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buffer.len() < length {
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..n]);
    }
    let body = buffer.drain(..length).collect();
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

/// The Python receiver: `POST /secret` sets the secret; any other `POST` is a delivery,
/// checked with `standardwebhooks`. Its port, then one JSON line per delivery, are appended
/// to the file named by its first argument, each before it answers.
const VERIFIER: &str = r#"
import json, sys
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from standardwebhooks.webhooks import Webhook

log = sys.argv[1]
secret = None

def write(value):
    with open(log, "a") as f:
        f.write(json.dumps(value) + "\n")

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        global secret
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path == "/secret":
            secret = body.decode()
            verified = True
        else:
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                Webhook(secret).verify(body, headers)
                verified, error = True, None
            except Exception as e:
                verified, error = False, f"{type(e).__name__}: {e}"
            write({"verified": verified, "error": error, "path": self.path,
                   "headers": headers, "body": body.decode()})
        self.send_response(204 if verified else 401)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
write({"port": server.server_address[1]})
server.serve_forever()
"#;

/// A webhook endpoint that verifies every delivery with PyPI's `standardwebhooks`; the
/// process is stopped by its PID when dropped.
#[derive(Debug)]
pub struct Verifier {
    child: Child,
    port: u16,
    log: PathBuf,
}

/// Lines of a verifier's log, as JSON.
fn log_lines(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

impl Verifier {
    /// Starts the receiver on a free port of 127.0.0.1.
    ///
    /// # Panics
    /// When `standardwebhooks` is not installed (saying how to install it), or the process
    /// does not start within 10 s.
    pub fn start() -> Verifier {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let python = crate::tools::STANDARD_WEBHOOKS.require();
        let n = STARTED.fetch_add(1, Ordering::SeqCst);
        let log = std::env::temp_dir().join(format!(
            "assetlib-verifier-{}-{n}.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&log);
        let child = Command::new(&python)
            .arg("-c")
            .arg(VERIFIER)
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
        let mut verifier = Verifier {
            child,
            port: 0,
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        verifier.port = loop {
            let port = log_lines(&verifier.log)
                .first()
                .and_then(|v| v["port"].as_u64())
                .and_then(|p| u16::try_from(p).ok());
            if let Some(port) = port {
                break port;
            }
            if let Ok(Some(status)) = verifier.child.try_wait() {
                panic!("the standardwebhooks receiver ended: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "the standardwebhooks receiver did not start within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        verifier
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Verifies with `secret` from now on (`whsec_...`).
    ///
    /// # Panics
    /// When the receiver does not take it.
    pub fn set_secret(&self, secret: &str) {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port))
            .unwrap_or_else(|e| panic!("cannot reach the standardwebhooks receiver: {e}"));
        let request = format!(
            "POST /secret HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{secret}",
            secret.len()
        );
        stream
            .write_all(request.as_bytes())
            .expect("send the secret");
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
    }

    /// What it checked so far, one JSON object per delivery: `verified`, `error`, `path`,
    /// `headers` (lower case) and `body`.
    pub fn checked(&self) -> Vec<serde_json::Value> {
        log_lines(&self.log).into_iter().skip(1).collect()
    }

    /// What it checked, once it has checked at least `n` deliveries.
    ///
    /// # Panics
    /// When fewer arrived `within`.
    pub async fn wait_for(&self, n: usize, within: Duration) -> Vec<serde_json::Value> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.checked();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "{n} deliveries did not arrive within {within:?}: {got:#?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// What it checked, once there are at least `n` deliveries it verified.
    ///
    /// # Panics
    /// When fewer arrived `within`.
    pub async fn wait_for_verified(&self, n: usize, within: Duration) -> Vec<serde_json::Value> {
        let deadline = Instant::now() + within;
        loop {
            let got = self.checked();
            if got.iter().filter(|c| c["verified"] == true).count() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "{n} verified deliveries did not arrive within {within:?}: {got:#?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Verifier {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}
