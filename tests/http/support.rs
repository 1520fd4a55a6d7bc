//! What every case uses: a fresh store and server, keys, an HTTP client, and helpers that
//! send requests and decode answers.

use assetlib_core::events::Log;
use std::sync::Arc;

use assetlib::extract::PdfRenderer;
use assetlib::{Asset, Config, Files, Scope, Service, Store};
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::harness::{Harness, Server, StoreGuard};

/// One case's world: a fresh store, the adapter serving it, and a key with every scope.
pub(crate) struct Ctx {
    pub(crate) service: Service,
    pub(crate) client: reqwest::Client,
    /// A key with every scope.
    pub(crate) admin: String,
    server: Server,
    _store: StoreGuard,
    _dir: tempfile::TempDir,
}

/// `config`, its PDF pages drawn by the package's render child when it names no renderer,
/// as a ready server draws them.
pub(crate) fn with_renderer(mut config: Config) -> Config {
    if config.extract_limits.pdf_renderer == PdfRenderer::Off {
        config.extract_limits.pdf_renderer = PdfRenderer::Child {
            program: env!("CARGO_BIN_EXE_assetlib-pdf-render").into(),
        };
    }
    config
}

impl Ctx {
    /// A world with the default configuration.
    pub(crate) async fn start<H: Harness>() -> Ctx {
        Self::with_config::<H>(Config::default()).await
    }

    /// A world with `config`.
    pub(crate) async fn with_config<H: Harness>(config: Config) -> Ctx {
        Self::build::<H>(config, None).await
    }

    /// A world with `config` whose files are kept in `files` (not a local directory:
    /// [`Ctx::files_dir`] is empty).
    pub(crate) async fn with_files<H: Harness>(config: Config, files: Files) -> Ctx {
        Self::build_with::<H>(config, None, Some(files)).await
    }

    /// A world whose API an app nests under `/{segment}`; [`Ctx::base_url`] includes it.
    pub(crate) async fn start_under<H: Harness>(segment: &'static str) -> Ctx {
        Self::build::<H>(Config::default(), Some(segment)).await
    }

    async fn build<H: Harness>(config: Config, under: Option<&'static str>) -> Ctx {
        Self::build_with::<H>(config, under, None).await
    }

    async fn build_with<H: Harness>(
        config: Config,
        under: Option<&'static str>,
        files: Option<Files>,
    ) -> Ctx {
        let dir = tempfile::tempdir().expect("temp dir");
        let (store, store_guard) = H::store(dir.path()).await;
        let files = match files {
            Some(files) => files,
            None => Files::local(dir.path().join("files")).expect("file store"),
        };
        let service = Service::from_arc(store, files, H::config(with_renderer(config)));
        let (_, admin) = service
            .create_key("admin", Scope::ALL.to_vec(), None)
            .await
            .expect("create key");
        let server = match under {
            None => H::spawn(service.clone()).await,
            Some(segment) => {
                let mut server = H::spawn_under(service.clone(), segment).await;
                server.base_url.push_str(&format!("/{segment}"));
                server
            }
        };
        Ctx {
            service,
            client: reqwest::Client::new(),
            admin,
            server,
            _store: store_guard,
            _dir: dir,
        }
    }

    /// The store behind the server.
    pub(crate) fn store(&self) -> &Arc<dyn Store> {
        self.service.store()
    }

    /// The file store's directory (the store is `Files::local` on it).
    pub(crate) fn files_dir(&self) -> std::path::PathBuf {
        self._dir.path().join("files")
    }

    /// Stores a file at `path` in the file store.
    pub(crate) async fn put_file(&self, path: &str, bytes: Vec<u8>) {
        self.service
            .files()
            .put(path, bytes.into())
            .await
            .expect("put file");
    }

    /// The server's base URL.
    pub(crate) fn base_url(&self) -> &str {
        &self.server.base_url
    }

    /// A new key with `scopes`.
    pub(crate) async fn key(&self, scopes: &[Scope]) -> String {
        self.service
            .create_key("case", scopes.to_vec(), None)
            .await
            .expect("create key")
            .1
    }

    /// A new key with every scope but `missing`.
    pub(crate) async fn key_without(&self, missing: Scope) -> String {
        let scopes: Vec<Scope> = Scope::ALL.into_iter().filter(|s| *s != missing).collect();
        self.key(&scopes).await
    }

    /// Starts a request to `path` (relative to the base URL), with `key` as a bearer key.
    pub(crate) fn request(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let r = self
            .client
            .request(method, format!("{}{path}", self.base_url()));
        match key {
            Some(k) => r.bearer_auth(k),
            None => r,
        }
    }

    /// `GET path` with the admin key.
    pub(crate) async fn get(&self, path: &str) -> Resp {
        Resp::from(self.request(Method::GET, path, Some(&self.admin))).await
    }

    /// `GET path` with `key`.
    pub(crate) async fn get_as(&self, path: &str, key: Option<&str>) -> Resp {
        Resp::from(self.request(Method::GET, path, key)).await
    }

    /// Sends `body` as JSON (`Content-Type: application/json`) with `method` and `key`.
    pub(crate) async fn send_json(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: &Value,
    ) -> Resp {
        let r = self
            .request(method, path, key)
            .header("content-type", "application/json")
            .body(body.to_string());
        Resp::from(r).await
    }

    /// `POST /api/v1/assets` with the admin key.
    pub(crate) async fn post_asset(&self, body: &Value) -> Resp {
        self.send_json(Method::POST, "/api/v1/assets", Some(&self.admin), body)
            .await
    }

    /// Creates an asset through the API and returns its `data`.
    pub(crate) async fn create_asset(&self, body: Value) -> Value {
        let r = self.post_asset(&body).await;
        assert_eq!(r.status, 201, "create {body}: {}", r.json);
        r.json["data"].clone()
    }

    /// Creates a published asset of `asset_type` titled `title` and returns its id.
    pub(crate) async fn asset_id(&self, title: &str, asset_type: &str) -> String {
        let mut body = json!({"title": title, "asset_type": asset_type});
        if matches!(asset_type, "link" | "external_video") {
            body["external_url"] = json!("https://www.youtube.com/watch?v=dQw4w9WgXcQ");
        }
        id_of(&self.create_asset(body).await)
    }

    /// Stores `asset` directly (for states the API cannot make: tied timestamps, drafts,
    /// thumbnails).
    pub(crate) async fn insert(&self, asset: Asset) -> Asset {
        self.store()
            .insert_asset(asset, Log::ANONYMOUS)
            .await
            .expect("insert asset")
    }

    /// `PUT /api/v1/libraries/{id}` with the admin key.
    pub(crate) async fn put_library(&self, id: &str, doc: &Value) -> Resp {
        let path = format!("/api/v1/libraries/{id}");
        self.send_json(Method::PUT, &path, Some(&self.admin), doc)
            .await
    }
}

/// An asset record as the API would make it, for [`Ctx::insert`].
pub(crate) use assetlib_core::testing::sample_asset_at as asset;

/// A whole answer: status, headers, raw body and the body as JSON (`Null` when empty).
#[derive(Debug)]
pub(crate) struct Resp {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) raw: Vec<u8>,
    pub(crate) json: Value,
}

impl Resp {
    /// Sends the request and reads the whole answer.
    pub(crate) async fn from(request: reqwest::RequestBuilder) -> Resp {
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let raw = response.bytes().await.expect("body").to_vec();
        let json = if raw.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&raw).unwrap_or_else(|e| {
                panic!(
                    "{status} body is not JSON ({e}): {}",
                    String::from_utf8_lossy(&raw)
                )
            })
        };
        Resp {
            status,
            headers,
            raw,
            json,
        }
    }

    /// A header's value as text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(name)
            .map(|v| v.to_str().expect("header is text"))
    }

    /// Asserts the status and the whole JSON body, and that the body is JSON.
    #[track_caller]
    pub(crate) fn assert(&self, status: u16, body: Value) {
        assert_eq!((self.status, &self.json), (status, &body), "whole answer");
        assert_eq!(self.header("content-type"), Some("application/json"));
    }

    /// Asserts a 400 naming `field` with `message`.
    #[track_caller]
    pub(crate) fn assert_invalid(&self, field: &str, message: &str) {
        self.assert(
            400,
            json!({"error": "Validation error", "message": message, "field": field}),
        );
    }
}

/// The `id` of a JSON object.
pub(crate) fn id_of(v: &Value) -> String {
    v["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {v}"))
        .to_owned()
}

/// The `id`s of a JSON array of objects.
pub(crate) fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(id_of)
        .collect()
}

/// The keys of a JSON object, sorted.
pub(crate) fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
    k.sort();
    k
}

/// Every operation with a path and a body that passes validation when the ids exist.
pub(crate) fn operations() -> Vec<(Method, &'static str, Scope)> {
    vec![
        (Method::GET, "/api/v1/assets", Scope::ReadAssets),
        (Method::GET, "/api/v1/tags", Scope::ReadAssets),
        (Method::GET, "/api/v1/search", Scope::ReadAssets),
        (Method::POST, "/api/v1/assets/bulk", Scope::WriteAssets),
        (Method::GET, "/api/v1/assets/{id}", Scope::ReadAssets),
        (
            Method::GET,
            "/api/v1/assets/{id}/download",
            Scope::ReadAssets,
        ),
        (Method::GET, "/api/v1/assets/{id}/image", Scope::ReadAssets),
        (
            Method::GET,
            "/api/v1/assets/{id}/image-url",
            Scope::ReadAssets,
        ),
        (Method::POST, "/api/v1/assets", Scope::WriteAssets),
        (Method::POST, "/api/v1/assets/upload", Scope::WriteAssets),
        (Method::PATCH, "/api/v1/assets/{id}", Scope::WriteAssets),
        (Method::DELETE, "/api/v1/assets/{id}", Scope::WriteAssets),
        (Method::PUT, "/api/v1/assets/{id}/file", Scope::WriteAssets),
        (
            Method::POST,
            "/api/v1/assets/{id}/thumbnail",
            Scope::WriteAssets,
        ),
        (Method::GET, "/api/v1/libraries", Scope::ReadLibraries),
        (Method::GET, "/api/v1/libraries/{id}", Scope::ReadLibraries),
        (Method::PUT, "/api/v1/libraries/{id}", Scope::WriteLibraries),
        (
            Method::DELETE,
            "/api/v1/libraries/{id}",
            Scope::WriteLibraries,
        ),
        (
            Method::GET,
            "/api/v1/libraries/{id}/passes",
            Scope::WritePasses,
        ),
        (
            Method::POST,
            "/api/v1/libraries/{id}/passes",
            Scope::WritePasses,
        ),
        (Method::GET, "/api/v1/events", Scope::ReadEvents),
        (Method::GET, "/api/v1/webhooks", Scope::AdminWebhooks),
        (Method::POST, "/api/v1/webhooks", Scope::AdminWebhooks),
        (Method::GET, "/api/v1/webhooks/{id}", Scope::AdminWebhooks),
        (Method::PATCH, "/api/v1/webhooks/{id}", Scope::AdminWebhooks),
        (
            Method::DELETE,
            "/api/v1/webhooks/{id}",
            Scope::AdminWebhooks,
        ),
        (
            Method::GET,
            "/api/v1/webhooks/{id}/deliveries",
            Scope::AdminWebhooks,
        ),
        (
            Method::POST,
            "/api/v1/webhooks/{id}/deliveries/{id}/retry",
            Scope::AdminWebhooks,
        ),
        (
            Method::POST,
            "/api/v1/webhooks/{id}/test",
            Scope::AdminWebhooks,
        ),
        (Method::GET, "/api/v1/keys", Scope::AdminKeys),
        (Method::POST, "/api/v1/keys", Scope::AdminKeys),
        (Method::GET, "/api/v1/keys/{id}", Scope::AdminKeys),
        (Method::DELETE, "/api/v1/keys/{id}", Scope::AdminKeys),
    ]
}

/// An answer read off a raw connection.
#[derive(Debug)]
pub(crate) struct RawAnswer {
    pub(crate) status: u16,
    /// The headers in order, names in lower case.
    pub(crate) headers: Vec<(String, String)>,
    /// The body (de-chunked).
    pub(crate) body: String,
    /// The body as JSON (`Null` when empty or not `application/json`).
    pub(crate) json: Value,
}

/// Sends raw bytes on a fresh connection, in `parts` (write errors are ignored: the server may
/// answer and stop reading early), optionally half-closes it, and reads the answer until the
/// server closes the connection (send `Connection: close`) or 10 seconds pass.
pub(crate) async fn raw_request(base_url: &str, parts: &[&[u8]], half_close: bool) -> RawAnswer {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let addr = base_url.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    for part in parts {
        if stream.write_all(part).await.is_err() {
            break;
        }
    }
    if half_close {
        let _ = stream.shutdown().await;
    }
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(10), read).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no complete answer: {answer:?}"));
    let status = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"));
    let headers: Vec<(String, String)> = head
        .lines()
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(name, value)| name == "transfer-encoding" && value.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    // Every answer but a download's file is JSON.
    let is_json = headers
        .iter()
        .any(|(name, value)| name == "content-type" && value == "application/json");
    let json = if body.is_empty() || !is_json {
        Value::Null
    } else {
        serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{status} body is not JSON ({e}): {body}"))
    };
    RawAnswer {
        status,
        headers,
        body,
        json,
    }
}

/// The data of a chunked body.
fn dechunk(mut body: &str) -> String {
    let mut data = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).expect("chunk size");
        if size == 0 {
            break;
        }
        data.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    data
}

/// The head of a raw request: request line, `Host`, `Connection: close`, the `headers`
/// given (each ending in `\r\n`), and the blank line.
pub(crate) fn raw_head(method: &str, path: &str, headers: &str) -> String {
    format!("{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n{headers}\r\n")
}
