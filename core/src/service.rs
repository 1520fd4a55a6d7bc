//! [`Service`]: every operation of the API, from raw request parts to a [`Reply`].
//!
//! Adapters hand the service what they have — the path id, the raw query string, the
//! `Authorization` and `Content-Type` header bytes, the body — and copy its [`Reply`] into
//! their framework's response. Everything observable over HTTP is decided here, in one order
//! for every operation: authentication (401), scope (403), body size (413), content type
//! (415), then validation (400) and lookup (404).

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use uuid::Uuid;

use crate::auth;
use crate::bulk;
use crate::config::Config;
use crate::detail_cache::DetailCache;
use crate::download;
use crate::error::ApiError;
use crate::files::Files;
use crate::ingest;
use crate::model::{
    ApiKey, Asset, AssetType, Library, LibraryEntry, LibraryWrite, PutOutcome, Scope, Section,
};
use crate::page::{AssetPagination, LibraryPagination};
use crate::query;
use crate::render::{AssetJson, LibraryItemJson};
use crate::reply::Reply;
use crate::store::Store;
use crate::tree;
use crate::upload;
use crate::validate::{self, LibraryDoc};

/// The operations of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// `GET /api/v1/assets`
    ListAssets,
    /// `GET /api/v1/assets/{asset_id}`
    GetAsset,
    /// `POST /api/v1/assets`
    CreateAsset,
    /// `GET /api/v1/libraries`
    ListLibraries,
    /// `GET /api/v1/libraries/{library_id}`
    GetLibrary,
    /// `PUT /api/v1/libraries/{library_id}`
    PutLibrary,
    /// `DELETE /api/v1/libraries/{library_id}`
    DeleteLibrary,
    /// `GET /api/v1/assets/{asset_id}/download`
    DownloadAsset,
    /// `POST /api/v1/assets/upload`
    UploadAsset,
    /// `GET /api/v1/libraries/{library_id}/download`
    DownloadLibrary,
}

impl Operation {
    /// The scope table: what each operation requires of the key.
    pub const fn scopes(self) -> &'static [Scope] {
        match self {
            Operation::ListAssets | Operation::GetAsset | Operation::DownloadAsset => {
                &[Scope::ReadAssets]
            }
            Operation::CreateAsset | Operation::UploadAsset => &[Scope::WriteAssets],
            Operation::ListLibraries | Operation::GetLibrary => &[Scope::ReadLibraries],
            Operation::PutLibrary | Operation::DeleteLibrary => &[Scope::WriteLibraries],
            Operation::DownloadLibrary => &[Scope::ReadLibraries, Scope::ReadAssets],
        }
    }

    /// Whether the operation reads a JSON body.
    pub const fn takes_json_body(self) -> bool {
        matches!(self, Operation::CreateAsset | Operation::PutLibrary)
    }
}

/// A route of the API: a path (axum-style, `{id}` for the path id) and its methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The path, e.g. `/api/v1/assets/{id}`.
    pub path: &'static str,
    /// Each method with its operation.
    pub methods: &'static [(&'static str, Operation)],
    /// The `Allow` header value for a 405 on this path.
    pub allow: &'static str,
}

/// Every route of the API. Adapters register exactly these.
pub const ROUTES: &[Route] = &[
    Route {
        path: "/api/v1/assets",
        methods: &[
            ("GET", Operation::ListAssets),
            ("POST", Operation::CreateAsset),
        ],
        allow: "GET, HEAD, POST",
    },
    Route {
        path: "/api/v1/assets/upload",
        methods: &[("POST", Operation::UploadAsset)],
        allow: "POST",
    },
    Route {
        path: "/api/v1/assets/{id}",
        methods: &[("GET", Operation::GetAsset)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/assets/{id}/download",
        methods: &[("GET", Operation::DownloadAsset)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/libraries",
        methods: &[("GET", Operation::ListLibraries)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/libraries/{id}",
        methods: &[
            ("GET", Operation::GetLibrary),
            ("PUT", Operation::PutLibrary),
            ("DELETE", Operation::DeleteLibrary),
        ],
        allow: "GET, HEAD, PUT, DELETE",
    },
    Route {
        path: "/api/v1/libraries/{id}/download",
        methods: &[("GET", Operation::DownloadLibrary)],
        allow: "GET, HEAD",
    },
];

/// The prefix under which every route lives; unknown paths below it answer JSON 404s.
pub const API_PREFIX: &str = "/api/v1";

impl Route {
    /// The operation `method` runs on this route; `HEAD` runs the `GET` operation.
    pub fn operation(&self, method: &str) -> Option<Operation> {
        let method = if method == "HEAD" { "GET" } else { method };
        self.methods
            .iter()
            .find(|(m, _)| *m == method)
            .map(|(_, op)| *op)
    }
}

/// Where a request path leads, by [`ROUTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteMatch<'p> {
    /// A route, with its percent-decoded path id if it has one.
    Route {
        /// The route.
        route: &'static Route,
        /// The `{id}` segment, percent-decoded.
        id: Option<std::borrow::Cow<'p, str>>,
    },
    /// Under [`API_PREFIX`] but no route: a JSON 404.
    NotFound,
    /// Not under [`API_PREFIX`]: not ours to answer.
    Outside,
}

/// Matches a request path (without query) against [`ROUTES`], segment by segment. Adapters
/// whose framework routes by itself need not call it.
pub fn match_route(path: &str) -> RouteMatch<'_> {
    let Some(rest) = path.strip_prefix(API_PREFIX) else {
        return RouteMatch::Outside;
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return RouteMatch::Outside;
    }
    for route in ROUTES {
        let mut id = None;
        let mut got = path.split('/');
        let mut want = route.path.split('/');
        let matched = loop {
            match (got.next(), want.next()) {
                (None, None) => break true,
                (Some(g), Some("{id}")) if !g.is_empty() => {
                    id = Some(percent_encoding::percent_decode_str(g).decode_utf8_lossy());
                }
                (Some(g), Some(w)) if g == w => {}
                _ => break false,
            }
        };
        if matched {
            return RouteMatch::Route { route, id };
        }
    }
    RouteMatch::NotFound
}

/// The answer for a path under [`API_PREFIX`] that is no route.
pub fn route_not_found() -> Reply {
    ApiError::NotFound("No such route").into_reply()
}

/// The answer for a known path with a method it does not take.
pub fn method_not_allowed(method: &str, route: &Route) -> Reply {
    ApiError::MethodNotAllowed {
        method: method.to_owned(),
        allow: route.allow,
    }
    .into_reply()
}

/// The body of a request as the adapter received it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body<'a> {
    /// The whole body (empty when there is none).
    Complete(&'a [u8]),
    /// The body is larger than [`Config::max_json_body`] (by `Content-Length` or by
    /// reading); the adapter stopped reading it.
    TooLarge,
    /// The body could not be read to its end (the client went away or sent a malformed
    /// chunk).
    Incomplete,
}

/// The raw parts of a request that core needs.
#[derive(Debug, Clone, Copy)]
pub struct RawRequest<'a> {
    /// The `Authorization` header value.
    pub authorization: Option<&'a [u8]>,
    /// The `Content-Type` header value.
    pub content_type: Option<&'a [u8]>,
    /// The query string, without `?`.
    pub query: Option<&'a str>,
    /// The body.
    pub body: Body<'a>,
    /// The `Range` header value (downloads answer 206/416 by it).
    pub range: Option<&'a [u8]>,
    /// The request is a `HEAD`: it runs the `GET` operation and gets the same status and
    /// headers, but counts nothing (no library view, no download). The adapter's server drops
    /// the body.
    pub head: bool,
    /// The path the API is mounted under, without a trailing slash: `""` at the root,
    /// `"/dam"` when an app nests it there. `Location` headers start with it.
    pub mount: &'a str,
}

impl Default for RawRequest<'_> {
    fn default() -> Self {
        RawRequest {
            authorization: None,
            content_type: None,
            query: None,
            body: Body::Complete(&[]),
            range: None,
            head: false,
            mount: "",
        }
    }
}

/// The Digital Assets and Libraries API over a [`Store`]. Cheap to clone (an `Arc`).
#[derive(Clone)]
pub struct Service {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    files: Files,
    config: Config,
    details: DetailCache,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// `{"success": true, "data": ...}`, with `pagination` when given.
struct Envelope<D, P> {
    data: D,
    pagination: Option<P>,
}

impl<D: Serialize, P: Serialize> Serialize for Envelope<D, P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("success", &true)?;
        m.serialize_entry("data", &self.data)?;
        if let Some(p) = &self.pagination {
            m.serialize_entry("pagination", p)?;
        }
        m.end()
    }
}

fn data<D: Serialize>(status: u16, data: D) -> Reply {
    Reply::json_value(
        status,
        &Envelope::<D, ()> {
            data,
            pagination: None,
        },
    )
}

/// The `Location` of a record made at `{mount}/api/v1/{collection}/{id}`.
fn location(mount: &str, collection: &str, id: Uuid) -> String {
    format!(
        "{}{API_PREFIX}/{collection}/{id}",
        mount.trim_end_matches('/')
    )
}

impl Asset {
    /// A new, published asset record from a validated create: a fresh id, the slug of its
    /// title (stores make it unique), no file fields yet, created now.
    pub fn from_new(new: validate::NewAsset) -> Asset {
        let now = now();
        Asset {
            id: Uuid::new_v4(),
            slug: validate::slug_from_title(&new.title, "asset"),
            title: new.title,
            description: new.description,
            asset_type: new.asset_type,
            file_path: None,
            file_size: None,
            mime_type: None,
            thumbnail_path: None,
            page_count: None,
            word_count: None,
            width: None,
            height: None,
            external_url: new.external_url,
            video_embed: new.video_embed,
            download_count: 0,
            is_public: new.is_public,
            published: true,
            created_at: now,
            updated_at: now,
        }
    }
}

/// `asset` with the file fields of `file`.
fn apply_file(mut asset: Asset, file: ingest::Ingested) -> Asset {
    let info = file.info;
    asset.file_path = Some(file.file_path);
    asset.file_size = Some(info.file_size);
    asset.mime_type = Some(info.mime_type);
    asset.thumbnail_path = file.thumbnail_path;
    asset.page_count = info.page_count;
    asset.word_count = info.word_count;
    asset.width = info.width;
    asset.height = info.height;
    asset
}

/// The current time, to the millisecond (what the API shows is what is sorted on).
pub fn now() -> DateTime<Utc> {
    let now = Utc::now();
    DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
}

fn is_json_media_type(content_type: Option<&[u8]>) -> bool {
    let Some(ct) = content_type.and_then(|c| std::str::from_utf8(c).ok()) else {
        return false;
    };
    let essence = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

impl Service {
    /// A service over `store` with `config`, keeping files in memory ([`Files::memory`]).
    pub fn new(store: impl Store, config: Config) -> Self {
        Self::from_arc(Arc::new(store), config)
    }

    /// A service over a shared store, keeping files in memory ([`Files::memory`]).
    pub fn from_arc(store: Arc<dyn Store>, config: Config) -> Self {
        Self::with_files(store, Files::memory(), config)
    }

    /// A service over a shared store and a file store.
    pub fn with_files(store: Arc<dyn Store>, files: Files, config: Config) -> Self {
        Service {
            inner: Arc::new(Inner {
                store,
                files,
                config,
                details: DetailCache::default(),
            }),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    /// The file store.
    pub fn files(&self) -> &Files {
        &self.inner.files
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Runs `op` (`id` is the path id, if the route has one) and always answers: errors become
    /// their contract replies here.
    pub async fn handle(&self, op: Operation, id: Option<&str>, req: RawRequest<'_>) -> Reply {
        let id = id.unwrap_or("");
        let result = match op {
            Operation::ListAssets => self.list_assets(req).await,
            Operation::GetAsset => self.get_asset(id, req).await,
            Operation::CreateAsset => self.create_asset(req).await,
            Operation::ListLibraries => self.list_libraries(req).await,
            Operation::GetLibrary => self.get_library(id, req).await,
            Operation::PutLibrary => self.put_library(id, req).await,
            Operation::DeleteLibrary => self.delete_library(id, req).await,
            Operation::DownloadAsset => self.download_asset(id, req).await,
            Operation::DownloadLibrary => self.download_library(id, req).await,
            Operation::UploadAsset => {
                // A body already in memory: adapters stream theirs to `upload_asset`.
                let body = match req.body {
                    Body::Complete(b) => bytes::Bytes::copy_from_slice(b),
                    Body::TooLarge => {
                        return ApiError::PayloadTooLarge {
                            limit: self.inner.config.max_upload,
                        }
                        .into_reply();
                    }
                    Body::Incomplete => {
                        return ApiError::validation("body", "Request body could not be read")
                            .into_reply();
                    }
                };
                let len = body.len() as u64;
                let once =
                    futures_util::stream::once(
                        async move { Ok::<_, std::convert::Infallible>(body) },
                    );
                self.upload_asset(req, Some(len), once).await
            }
        };
        result.unwrap_or_else(ApiError::into_reply)
    }

    /// Answers any request by the route table: `None` when the path is not under
    /// [`API_PREFIX`], else the reply (a JSON 404 for no route, 405 for a wrong method).
    /// For adapters that do not route by themselves.
    /// A `HEAD` is marked as such in `req` here.
    pub async fn dispatch(&self, method: &str, path: &str, req: RawRequest<'_>) -> Option<Reply> {
        let req = RawRequest {
            head: req.head || method == "HEAD",
            ..req
        };
        Some(match match_route(path) {
            RouteMatch::Outside => return None,
            RouteMatch::NotFound => route_not_found(),
            RouteMatch::Route { route, id } => match route.operation(method) {
                Some(op) => self.handle(op, id.as_deref(), req).await,
                None => method_not_allowed(method, route),
            },
        })
    }

    /// Checks the key and its scopes for `op`, then the body's size and type if `op` takes
    /// one, and returns the body.
    async fn admit<'r>(&self, op: Operation, req: &RawRequest<'r>) -> Result<&'r [u8], ApiError> {
        let secret = auth::bearer_key(req.authorization)?;
        let record = self.inner.store.find_key(&auth::hash_key(secret)).await?;
        let key = auth::check_record(record, Utc::now())?;
        auth::require_scopes(&key, op.scopes())?;
        if !op.takes_json_body() {
            return Ok(&[]);
        }
        let limit = self.inner.config.max_json_body;
        let body = match req.body {
            Body::Complete(b) if b.len() <= limit => b,
            Body::Complete(_) | Body::TooLarge => {
                return Err(ApiError::PayloadTooLarge {
                    limit: limit as u64,
                });
            }
            Body::Incomplete => {
                return Err(ApiError::validation(
                    "body",
                    "Request body could not be read",
                ));
            }
        };
        if !is_json_media_type(req.content_type) {
            return Err(ApiError::UnsupportedMediaType);
        }
        Ok(body)
    }

    /// `GET /api/v1/assets`: a page of published assets.
    pub async fn list_assets(&self, req: RawRequest<'_>) -> Result<Reply, ApiError> {
        self.admit(Operation::ListAssets, &req).await?;
        let q = query::asset_query(req.query, self.inner.config.max_page_size)?;
        let page = self.inner.store.list_assets(&q).await?;
        let items: Vec<AssetJson<'_>> = page.items.iter().map(AssetJson).collect();
        Ok(Reply::json_value(
            200,
            &Envelope {
                data: items,
                pagination: Some(AssetPagination::new(q.page, q.per_page, page.total)),
            },
        ))
    }

    /// The published asset with the path id `id`: 400 for an id that is not a UUID, 404 for
    /// one that is unknown or unpublished.
    async fn published_asset(&self, id: &str) -> Result<Asset, ApiError> {
        let id = validate::parse_id("asset_id", id)?;
        self.inner
            .store
            .get_asset(id)
            .await?
            .filter(|a| a.published)
            .ok_or(ApiError::NotFound("Asset not found"))
    }

    /// `GET /api/v1/assets/{asset_id}`: one published asset.
    pub async fn get_asset(&self, id: &str, req: RawRequest<'_>) -> Result<Reply, ApiError> {
        self.admit(Operation::GetAsset, &req).await?;
        let asset = self.published_asset(id).await?;
        Ok(data(200, AssetJson(&asset)))
    }

    /// `POST /api/v1/assets`: creates an asset (201, `Location`).
    pub async fn create_asset(&self, req: RawRequest<'_>) -> Result<Reply, ApiError> {
        let body = self.admit(Operation::CreateAsset, &req).await?;
        let new = validate::new_asset(body, &self.inner.config)?;
        let file_path = new.file_path.clone();
        let asset = Asset::from_new(new);
        let asset = match &file_path {
            Some(path) => self.attach_file(asset, path).await?,
            None => asset,
        };
        self.insert_created(asset, req.mount).await
    }

    /// `POST /api/v1/assets/upload`: creates an asset from a multipart/form-data body as
    /// create does (201, `Location`, the asset). `body` is read as it arrives: the `file` part
    /// is streamed into the file store at `uploads/{uuid}/{name}` and moved into place only
    /// when complete. A `content_length` above [`Config::max_upload`] (plus room for the other
    /// parts) is 413 before anything is read; a body that grows past it is 413 as soon as it
    /// does. A failed or aborted upload leaves no file and no asset.
    ///
    /// Parts: `file` (required), and text parts `title` (default: the file's name),
    /// `description`, `asset_type` (default: inferred from the content) and `is_public`
    /// (`true` or `false`, default false). Other parts are ignored.
    pub async fn upload_asset<S, E>(
        &self,
        req: RawRequest<'_>,
        content_length: Option<u64>,
        body: S,
    ) -> Result<Reply, ApiError>
    where
        S: futures_util::Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
        E: Into<crate::error::BoxError> + 'static,
    {
        self.admit(Operation::UploadAsset, &req).await?;
        let boundary = upload::boundary(req.content_type)?;
        let max = self.inner.config.max_upload;
        if content_length.is_some_and(|len| len > upload::body_limit(max)) {
            return Err(ApiError::PayloadTooLarge { limit: max });
        }
        let form = upload::read_form(&self.inner.files, boundary, body, max).await?;
        let Some((path, client_name)) = form.file.clone() else {
            return Err(ApiError::validation(
                "file",
                "A file part named 'file' is required",
            ));
        };
        let created = self
            .create_uploaded(form, &path, &client_name, req.mount)
            .await;
        if created.is_err() {
            self.inner.files.delete(&path).await;
        }
        created
    }

    /// The asset of an upload whose file is stored at `path`.
    async fn create_uploaded(
        &self,
        form: upload::Form,
        path: &str,
        client_name: &str,
        mount: &str,
    ) -> Result<Reply, ApiError> {
        let declared = upload::declared_type(&form)?;
        let id = Uuid::new_v4();
        let config = &self.inner.config;
        let file = ingest::ingest(&self.inner.files, config, id, path, declared, "file").await?;
        let new = match upload::new_asset(&form, client_name, &file.info, config) {
            Ok(new) => new,
            Err(e) => {
                if let Some(thumbnail) = &file.thumbnail_path {
                    self.inner.files.delete(thumbnail).await;
                }
                return Err(e);
            }
        };
        let asset = Asset {
            id,
            ..apply_file(Asset::from_new(new), file)
        };
        self.insert_created(asset, mount).await
    }

    /// Stores a new asset and answers 201 with it and its `Location`. A thumbnail already
    /// stored for it is removed when the asset cannot be stored.
    async fn insert_created(&self, asset: Asset, mount: &str) -> Result<Reply, ApiError> {
        let thumbnail = asset.thumbnail_path.clone();
        match self.inner.store.insert_asset(asset).await {
            Ok(asset) => Ok(data(201, AssetJson(&asset))
                .with_header("location", location(mount, "assets", asset.id))),
            Err(e) => {
                if let Some(path) = &thumbnail {
                    self.inner.files.delete(path).await;
                }
                Err(e.into())
            }
        }
    }

    /// Fills `asset`'s file fields from the stored file at `file_path`, as create does:
    /// resolves the path (it must exist, and lead nowhere outside the file store), checks the
    /// content against `asset.asset_type`, reads the metadata off the async runtime within
    /// [`Config::extract_timeout`], and stores a thumbnail of an image (at
    /// `thumbnails/{id}.{png,jpg}`). The asset itself is not stored.
    ///
    /// # Errors
    /// 400 on `file_path` when the file is missing, outside the store, not of the asset's
    /// type, or needs more time or memory than allowed.
    pub async fn attach_file(&self, asset: Asset, file_path: &str) -> Result<Asset, ApiError> {
        let file = ingest::ingest(
            &self.inner.files,
            &self.inner.config,
            asset.id,
            file_path,
            Some(asset.asset_type),
            "file_path",
        )
        .await?;
        Ok(apply_file(asset, file))
    }

    /// `GET /api/v1/assets/{asset_id}/download`: the asset's file, streamed; one `Range` gives
    /// 206, an unsatisfiable one 416; link and external_video answer 302 to their URL.
    pub async fn download_asset(&self, id: &str, req: RawRequest<'_>) -> Result<Reply, ApiError> {
        self.admit(Operation::DownloadAsset, &req).await?;
        let asset = self.published_asset(id).await?;
        if let (AssetType::Link | AssetType::ExternalVideo, Some(url)) =
            (asset.asset_type, &asset.external_url)
        {
            return Ok(Reply::empty(302).with_header("location", url.clone()));
        }
        let no_file = || ApiError::NotFound("Asset has no downloadable file");
        let path = asset.file_path.as_deref().ok_or_else(no_file)?;
        let stat = self.inner.files.stat(path).await?.ok_or_else(no_file)?;
        let size = stat.size;
        let (status, part) = match download::select(req.range, size) {
            download::Selection::Whole => (200, 0..size),
            download::Selection::Part(part) => (206, part),
            download::Selection::Unsatisfiable => {
                return Ok(Reply::empty(416)
                    .with_header("content-range", format!("bytes */{size}"))
                    .with_header("accept-ranges", "bytes")
                    .with_header("etag", stat.etag));
            }
        };
        let mut reply = Reply::empty(status)
            .with_header(
                "content-type",
                asset
                    .mime_type
                    .clone()
                    .unwrap_or_else(|| "application/octet-stream".to_owned()),
            )
            .with_header("content-length", (part.end - part.start).to_string())
            .with_header("accept-ranges", "bytes")
            .with_header("etag", stat.etag)
            .with_header(
                "content-disposition",
                download::attachment(&asset.slug, path),
            )
            .with_header("x-content-type-options", "nosniff")
            .with_header("content-security-policy", "default-src 'none'; sandbox");
        if status == 206 {
            reply = reply.with_header("content-range", download::content_range(&part, size));
        }
        if req.head {
            return Ok(reply);
        }
        if part.start == 0 {
            self.inner.store.record_download(asset.id).await?;
        }
        reply.stream = Some(self.inner.files.stream(path, part).await?);
        Ok(reply)
    }

    /// `GET /api/v1/libraries/{library_id}/download`: the library's files as one zip,
    /// streamed as it is written, in page order with a folder per section (see
    /// [`crate::bulk`]); 403 (`Bulk download disabled`) unless the library allows it. Assets
    /// without a stored file are left out. A bulk download counts no `download_count`.
    pub async fn download_library(&self, id: &str, req: RawRequest<'_>) -> Result<Reply, ApiError> {
        self.admit(Operation::DownloadLibrary, &req).await?;
        let id = validate::parse_id("library_id", id)?;
        let rows = self
            .inner
            .store
            .load_library(id)
            .await?
            .filter(|r| r.library.published)
            .ok_or(ApiError::NotFound("Library not found"))?;
        if !rows.library.allow_bulk_download {
            return Err(ApiError::BulkDownloadDisabled);
        }
        let mut reply = Reply::empty(200)
            .with_header("content-type", "application/zip")
            .with_header(
                "content-disposition",
                download::attachment(&rows.library.slug, "library.zip"),
            )
            .with_header("x-content-type-options", "nosniff")
            .with_header("content-security-policy", "default-src 'none'; sandbox");
        if req.head {
            return Ok(reply);
        }
        let detail = tree::assemble(&rows, true, "");
        let order: Vec<(Option<&Section>, Uuid)> = detail
            .page_order()
            .map(|(section, row)| (section, row.entry.asset_id))
            .collect();
        let ids: Vec<Uuid> = order.iter().map(|(_, id)| *id).collect();
        let assets = self.assets_by_id(&ids).await?;
        let mut taken = std::collections::HashSet::new();
        let mut items = Vec::new();
        let mut section_index: HashMap<Uuid, usize> = HashMap::new();
        for (section, asset_id) in &order {
            let Some(asset) = assets.get(asset_id) else {
                continue;
            };
            let Some(path) = asset.file_path.as_deref() else {
                continue;
            };
            let Some(stat) = self.inner.files.stat(path).await? else {
                continue;
            };
            let file = download::file_name(&asset.slug, path);
            let name = match section {
                Some(s) => {
                    let next = section_index.len();
                    let n = *section_index.entry(s.id).or_insert(next);
                    format!("{}/{file}", bulk::folder(&s.title, n))
                }
                None => file,
            };
            items.push(bulk::Item {
                name: bulk::unique(name, &mut taken),
                path: path.to_owned(),
                size: stat.size,
            });
        }
        reply.stream = Some(bulk::zip_stream(self.inner.files.clone(), items));
        Ok(reply)
    }

    /// A thumbnail under `thumbnails/` of the file store, for the public `/files/` route of a
    /// ready server: 200 with the image (cacheable for a day), or 404. `name` is the part of
    /// the path after `thumbnails/`.
    pub async fn thumbnail(&self, name: &str, head: bool) -> Reply {
        let not_found = || ApiError::NotFound("No such file").into_reply();
        let content_type = match name.rsplit_once('.').map(|(_, ext)| ext) {
            Some("png") => "image/png",
            Some("jpg") => "image/jpeg",
            _ => return not_found(),
        };
        if name.contains('/') || name.starts_with('.') {
            return not_found();
        }
        let path = format!("thumbnails/{name}");
        let stat = match self.inner.files.stat(&path).await {
            Ok(Some(stat)) => stat,
            Ok(None) => return not_found(),
            Err(e) => return e.into_reply(),
        };
        let mut reply = Reply::empty(200)
            .with_header("content-type", content_type)
            .with_header("content-length", stat.size.to_string())
            .with_header("etag", stat.etag)
            .with_header("cache-control", "public, max-age=86400")
            .with_header("x-content-type-options", "nosniff");
        if !head {
            match self.inner.files.stream(&path, 0..stat.size).await {
                Ok(stream) => reply.stream = Some(stream),
                Err(e) => return e.into_reply(),
            }
        }
        reply
    }

    /// `GET /api/v1/libraries`: a page of published libraries.
    pub async fn list_libraries(&self, req: RawRequest<'_>) -> Result<Reply, ApiError> {
        self.admit(Operation::ListLibraries, &req).await?;
        let q = query::library_query(req.query, self.inner.config.max_page_size)?;
        let page = self.inner.store.list_libraries(&q).await?;

        #[derive(Serialize)]
        struct List<'a> {
            libraries: Vec<LibraryItemJson<'a>>,
            pagination: LibraryPagination,
        }
        Ok(Reply::json_value(
            200,
            &List {
                libraries: page.items.iter().map(LibraryItemJson).collect(),
                pagination: LibraryPagination::new(q.page, q.limit, page.total),
            },
        ))
    }

    /// `GET /api/v1/libraries/{library_id}`: the detail of a published library; counts one
    /// view, and shows the count including it. A `HEAD` counts no view.
    ///
    /// With [`Config::detail_cache`] the rendered page is kept under the library's content
    /// version and reused, with the new view count, while the version stays the same.
    pub async fn get_library(&self, id: &str, req: RawRequest<'_>) -> Result<Reply, ApiError> {
        self.admit(Operation::GetLibrary, &req).await?;
        let id = validate::parse_id("library_id", id)?;
        let q = query::detail_query(req.query)?;
        let not_found = || ApiError::NotFound("Library not found");
        let store = &self.inner.store;
        let load = || async {
            store
                .load_library(id)
                .await?
                .filter(|r| r.library.published)
                .ok_or_else(not_found)
        };
        let render = |rows: &_| {
            let detail = tree::assemble(rows, q.include_assets, &self.inner.config.files_base_url);
            Reply::json_value(200, &detail)
        };
        if req.head {
            return Ok(render(&load().await?));
        }
        let seen = store.record_library_view(id).await?.ok_or_else(not_found)?;
        let key = (id, q.include_assets);
        let cache = self
            .inner
            .config
            .detail_cache
            .then_some(&self.inner.details);
        if let Some(body) = cache.and_then(|c| c.get(key, seen.version, seen.views)) {
            return Ok(Reply::json_bytes(200, body));
        }
        let mut rows = load().await?;
        rows.library.view_count = seen.views;
        let reply = render(&rows);
        if let Some(cache) = cache {
            cache.put(key, seen.version, seen.views, reply.body.clone());
        }
        Ok(reply)
    }

    /// `PUT /api/v1/libraries/{library_id}`: creates (201) or replaces (200) a whole library,
    /// answering its detail with assets (a write counts no view).
    pub async fn put_library(&self, id: &str, req: RawRequest<'_>) -> Result<Reply, ApiError> {
        let body = self.admit(Operation::PutLibrary, &req).await?;
        let id = validate::parse_id("library_id", id)?;
        let doc = validate::library_doc(body, &self.inner.config)?;
        self.check_entries(&doc).await?;
        let write = library_write(id, doc);
        let store = &self.inner.store;
        let outcome = store.put_library(write).await?;
        self.inner.details.forget(id);
        let rows = store
            .load_library(id)
            .await?
            .ok_or(ApiError::NotFound("Library not found"))?;
        let detail = tree::assemble(&rows, true, &self.inner.config.files_base_url);
        Ok(match outcome {
            PutOutcome::Created => Reply::json_value(201, &detail)
                .with_header("location", location(req.mount, "libraries", id)),
            PutOutcome::Replaced => Reply::json_value(200, &detail),
        })
    }

    /// The assets with these ids that exist, by id.
    async fn assets_by_id(&self, ids: &[Uuid]) -> Result<HashMap<Uuid, Asset>, ApiError> {
        let assets = self.inner.store.get_assets(ids).await?;
        Ok(assets.into_iter().map(|a| (a.id, a)).collect())
    }

    /// Checks that every entry's asset exists and may be placed in a library.
    async fn check_entries(&self, doc: &LibraryDoc) -> Result<(), ApiError> {
        let ids: Vec<Uuid> = doc.entries().map(|e| e.asset_id).collect();
        if ids.is_empty() {
            return Ok(());
        }
        let found = self.assets_by_id(&ids).await?;
        for entry in doc.entries() {
            match found.get(&entry.asset_id) {
                None => {
                    return Err(ApiError::validation(
                        &entry.path,
                        format!("asset {} does not exist", entry.asset_id),
                    ));
                }
                Some(a) if !a.asset_type.is_library_type() => {
                    return Err(ApiError::validation(
                        &entry.path,
                        format!(
                            "asset {} is of type {}; libraries hold pdf, image, video, audio \
                             and document assets",
                            a.id, a.asset_type
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// `DELETE /api/v1/libraries/{library_id}`: 204, or 404 if there is none.
    pub async fn delete_library(&self, id: &str, req: RawRequest<'_>) -> Result<Reply, ApiError> {
        self.admit(Operation::DeleteLibrary, &req).await?;
        let id = validate::parse_id("library_id", id)?;
        let deleted = self.inner.store.delete_library(id).await?;
        self.inner.details.forget(id);
        if deleted {
            Ok(Reply::empty(204))
        } else {
            Err(ApiError::NotFound("Library not found"))
        }
    }

    /// Makes a new API key with `scopes`, returning its record and the key itself (shown
    /// once; only its hash is stored).
    pub async fn create_key(
        &self,
        name: &str,
        scopes: Vec<Scope>,
        expires_at: Option<DateTime<Utc>>,
    ) -> Result<(ApiKey, String), ApiError> {
        let new = auth::generate_key().map_err(ApiError::internal)?;
        let record = ApiKey {
            id: Uuid::new_v4(),
            name: name.to_owned(),
            key_hash: new.hash,
            scopes,
            created_at: now(),
            expires_at,
            revoked_at: None,
        };
        self.inner.store.insert_key(record.clone()).await?;
        Ok((record, new.secret))
    }

    /// Every key record, oldest first.
    pub async fn list_keys(&self) -> Result<Vec<ApiKey>, ApiError> {
        Ok(self.inner.store.list_keys().await?)
    }

    /// Revokes a key; `false` if there is no such key.
    pub async fn revoke_key(&self, id: Uuid) -> Result<bool, ApiError> {
        Ok(self.inner.store.revoke_key(id, now()).await?)
    }
}

/// Turns a validated document into the records the store keeps; order comes from position.
fn library_write(id: Uuid, doc: LibraryDoc) -> LibraryWrite {
    let now = now();
    let slug_given = doc.slug.is_some();
    let slug = doc
        .slug
        .unwrap_or_else(|| validate::slug_from_title(&doc.title, "library"));
    let mut sections = Vec::with_capacity(doc.sections.len());
    let mut entries = Vec::new();
    let entry = |section_id, display_order, e: validate::EntryDoc| LibraryEntry {
        asset_id: e.asset_id,
        section_id,
        display_order,
        title: e.title,
        description: e.description,
    };
    for (i, s) in doc.sections.into_iter().enumerate() {
        let section_id = s.id.unwrap_or_else(Uuid::new_v4);
        for (j, e) in s.assets.into_iter().enumerate() {
            entries.push(entry(Some(section_id), j as u32, e));
        }
        sections.push(Section {
            id: section_id,
            title: s.title,
            description: s.description,
            display_order: i as u32,
            collapsed_by_default: s.collapsed_by_default,
        });
    }
    for (j, e) in doc.unsectioned_assets.into_iter().enumerate() {
        entries.push(entry(None, j as u32, e));
    }
    LibraryWrite {
        library: Library {
            id,
            title: doc.title,
            slug,
            description: doc.description,
            workspace_id: doc.workspace_id,
            cover_image_path: doc.cover_image_path,
            cover_overlay_color: doc.cover_overlay_color,
            cover_overlay_opacity: doc.cover_overlay_opacity,
            show_asset_count: doc.show_asset_count,
            allow_individual_downloads: doc.allow_individual_downloads,
            allow_bulk_download: doc.allow_bulk_download,
            is_paid: doc.is_paid,
            price: doc.price,
            currency: doc.currency,
            published: doc.published,
            published_at: None,
            view_count: 0,
            created_at: now,
            updated_at: now,
        },
        slug_given,
        sections,
        entries,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(path: &str, method: &str) -> Option<(Operation, Option<String>)> {
        match match_route(path) {
            RouteMatch::Route { route, id } => route
                .operation(method)
                .map(|op| (op, id.map(|i| i.into_owned()))),
            _ => None,
        }
    }

    #[test]
    fn routes_match_by_segment() {
        assert_eq!(
            op("/api/v1/assets", "GET"),
            Some((Operation::ListAssets, None))
        );
        assert_eq!(
            op("/api/v1/assets", "HEAD"),
            Some((Operation::ListAssets, None))
        );
        assert_eq!(
            op("/api/v1/assets", "POST"),
            Some((Operation::CreateAsset, None))
        );
        assert_eq!(op("/api/v1/assets", "PUT"), None);
        assert_eq!(
            op("/api/v1/assets/abc", "GET"),
            Some((Operation::GetAsset, Some("abc".into())))
        );
        assert_eq!(
            op("/api/v1/assets/a%2Db", "GET"),
            Some((Operation::GetAsset, Some("a-b".into())))
        );
        assert_eq!(
            op("/api/v1/libraries/x", "DELETE"),
            Some((Operation::DeleteLibrary, Some("x".into())))
        );
        assert_eq!(
            op("/api/v1/libraries/x", "PUT"),
            Some((Operation::PutLibrary, Some("x".into())))
        );
        for missing in [
            "/api/v1",
            "/api/v1/",
            "/api/v1/assets/",
            "/api/v1/assets//",
            "/api/v1/assets/a/b",
            "/api/v1/nope",
        ] {
            assert_eq!(match_route(missing), RouteMatch::NotFound, "{missing}");
        }
        for outside in ["/", "/api", "/api/v10/assets", "/files/x", ""] {
            assert_eq!(match_route(outside), RouteMatch::Outside, "{outside}");
        }
    }

    #[test]
    fn every_route_allows_what_it_serves() {
        for route in ROUTES {
            for (method, _) in route.methods {
                assert!(
                    route.allow.split(", ").any(|m| m == *method),
                    "{}",
                    route.path
                );
            }
            if route.operation("GET").is_some() {
                assert!(route.allow.contains("HEAD"), "{}", route.path);
            }
        }
    }
}
