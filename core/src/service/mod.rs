//! [`Service`]: every operation of the API, from raw request parts to a [`Reply`].
//!
//! Adapters hand the service what they have — the operation of the route, the path id, the
//! raw header values, the query string and the body as it arrives ([`RawRequest`]) — and copy
//! its [`Reply`] into their framework's response. Both adapters enter through
//! [`Service::answer`] with the route they matched, which answers `OPTIONS`, 405 and 404
//! itself and runs the route's operation for the method through [`Service::handle`] (also
//! there for apps that route to an operation themselves).
//! Everything observable over HTTP is decided here, in one order for every operation:
//! authentication (401) and scope (403) from the head alone, then body size (413), content
//! type (415), validation (400) and lookup (404).
//!
//! Apps that embed the API also get a small typed API that runs the same validate → ingest →
//! store path as HTTP: [`Service::create_asset`], [`Service::save_library`],
//! [`Service::update_asset`], [`Service::delete_asset`], [`Service::asset_usage`],
//! [`Service::create_key`], [`Service::list_keys`] and [`Service::revoke_key`].
//!
//! The operations live in child modules by concern: `assets` (list, read, create, upload),
//! `lifecycle` (change, file replacement, delete, usage), `libraries` (list, read, write,
//! delete), `downloads` (files, zips, thumbnails), `websites` (signed links, the signing
//! secret, libraries by slug) and `maintenance` (upgrades of data an earlier version wrote).
//! `access` says who a request acts as (a key, a keyless public read, a signed link) and
//! which assets it sees; `dispatch` is the one place an admitted request becomes its
//! operation, and `Service::asset_for` the one loader of an asset for every kind of caller.

mod access;
mod admit;
mod assets;
#[cfg(feature = "webhooks")]
mod deliveries;
mod downloads;
mod events;
#[cfg(feature = "variants")]
mod images;
mod import;
mod key_records;
#[cfg(feature = "keys")]
pub(crate) mod keys;
mod libraries;
mod lifecycle;
mod maintenance;
mod organize;
mod passes;
mod previews;
mod resumes;
#[cfg(feature = "search")]
mod search;

pub use import::{ImportFile, ImportLibrary, ImportOptions, Imported};
pub use organize::{BulkItem, BulkResult};
pub use previews::Backfill;
#[cfg(feature = "search")]
pub use search::Reindex;
mod direct;
mod lease;
mod uploads;
#[cfg(feature = "webhooks")]
mod webhooks;
mod websites;

use std::sync::Arc;

use bytes::Bytes;
use chrono::Utc;
use uuid::Uuid;

use self::access::Access;
use crate::config::Config;
use crate::detail_cache::DetailCache;
use crate::error::ApiError;
use crate::events::{Actor, Log};
use crate::files::Files;
use crate::key_cache::KeyCache;
#[cfg(feature = "rate-limits")]
use crate::limit::Budgets;
use crate::memory::MemoryStore;
use crate::page_cache::{AssetPages, Rendered, RenderedAsset};
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::routes::{Operation, Route};
use crate::store::Store;
use crate::web;

// `GET /api/v1/openapi.json`: the OpenAPI document, or a 404 without the `openapi` feature.
#[cfg(feature = "openapi")]
use crate::openapi::reply as openapi_document;
#[cfg(not(feature = "openapi"))]
use crate::routes::route_not_found as openapi_document;

/// The Digital Assets and Libraries API over a [`Store`] and a file store ([`Files`]).
/// Cheap to clone (an `Arc`).
///
/// The events of what a service writes name no key; [`Service::acting_as`] gives a handle
/// whose writes name one (the HTTP service runs each request's operation so, as its key).
#[derive(Clone)]
pub struct Service {
    inner: Arc<Inner>,
    /// Who this handle's writes are made by, for their events.
    log: Log,
}

struct Inner {
    store: Arc<dyn Store>,
    files: Files,
    config: Config,
    details: DetailCache,
    /// Asset list pages and single assets, when [`Config::page_cache`] is on.
    pages: AssetPages,
    /// The store's signing secret, as read lately.
    secret: crate::key_cache::Kept<[u8; 32]>,
    /// The rate limits, when the configuration sets one.
    #[cfg(feature = "rate-limits")]
    limiter: Option<Budgets>,
    /// Keys read lately (see [`crate::KEY_CACHE_TTL`]).
    keys: KeyCache,
    /// The minting keys of browser tokens, by id.
    #[cfg(feature = "keys")]
    minters: KeyCache<Uuid>,
    /// Browser tokens checked lately, by the token itself (not a hash of it, as keys are
    /// kept: whoever reads this process's memory reads the signing secret too, which mints
    /// any token, so keeping them adds no exposure, and a lookup costs no SHA-256).
    #[cfg(feature = "keys")]
    tokens: KeyCache<Box<str>, keys::CheckedToken>,
    /// Where files are read for their metadata and previews ([`Config::preview_workers`]).
    previews: crate::ingest::Pool,
    /// Image variants being made ([`Config::image_workers`]).
    #[cfg(feature = "variants")]
    variants: images::Variants,
    /// The webhook delivery worker's handle.
    #[cfg(feature = "webhooks")]
    deliveries: deliveries::Deliveries,
    /// Downloads passes began, which ranges may continue without spending another.
    resumes: resumes::Resumes,
}

/// Seconds since the Unix epoch, now.
fn unix_now() -> u64 {
    u64::try_from(Utc::now().timestamp()).unwrap_or(0)
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Service {
    /// A service keeping records in `store` and asset files in `files` (for example
    /// [`Files::local`] on a directory next to a sled store, so both survive a restart).
    pub fn new(store: impl Store, files: Files, config: Config) -> Self {
        Self::from_arc(Arc::new(store), files, config)
    }

    /// A service over a store shared with other parts of the app.
    pub fn from_arc(store: Arc<dyn Store>, files: Files, config: Config) -> Self {
        store.use_replica_sync(config.replica_sync);
        #[cfg(feature = "search")]
        let config = {
            let mut config = config;
            if store.search_store().is_some() {
                config.extract_limits.keep_text = config.search_text_limit;
            }
            config
        };
        #[cfg(feature = "rate-limits")]
        let limiter = config.rate_limit.map(Budgets::new);
        let previews = crate::ingest::Pool::new(config.preview_workers);
        #[cfg(feature = "variants")]
        let variants = images::Variants::new(config.image_workers, config.image_queue);
        #[cfg(feature = "webhooks")]
        let deliveries = deliveries::Deliveries::new(&config);
        let inner = Arc::new(Inner {
            store,
            files,
            config,
            details: DetailCache::default(),
            pages: AssetPages::default(),
            secret: crate::key_cache::Kept::default(),
            #[cfg(feature = "rate-limits")]
            limiter,
            keys: KeyCache::default(),
            #[cfg(feature = "keys")]
            minters: KeyCache::default(),
            #[cfg(feature = "keys")]
            tokens: KeyCache::default(),
            previews,
            #[cfg(feature = "variants")]
            variants,
            #[cfg(feature = "webhooks")]
            deliveries,
            resumes: resumes::Resumes::default(),
        });
        #[cfg(feature = "webhooks")]
        deliveries::Deliveries::start(&inner);
        let service = Service {
            inner,
            log: Log::default(),
        };
        service.start_reaper();
        service
    }

    /// This service, its writes' events naming `actor` (a key), or no key when `None`.
    ///
    /// ```
    /// use assetlib_core::events::{Actor, Log};
    /// use assetlib_core::{Config, Service};
    /// let service = Service::in_memory(Config::default());
    /// let actor = Actor { key_id: uuid::Uuid::nil(), key_name: "importer".into() };
    /// let importer = service.acting_as(Some(actor.clone()));
    /// assert_eq!(importer.log().actor(), Some(&actor));
    /// assert_eq!(service.log(), Log::ANONYMOUS);
    /// ```
    pub fn acting_as(&self, actor: Option<Actor>) -> Service {
        Service {
            inner: Arc::clone(&self.inner),
            log: Log::of(actor),
        }
    }

    /// Who this handle's writes are made by ([`Service::acting_as`]).
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// A service that keeps everything in memory ([`MemoryStore`] and [`Files::memory`]):
    /// for tests and examples; nothing survives the process.
    pub fn in_memory(config: Config) -> Self {
        Self::new(MemoryStore::new(), Files::memory(), config)
    }

    /// Stops this service's webhook delivery workers and gives back the stream leases it
    /// holds, for a graceful stop: another process (this one, started again) then sends those
    /// webhooks' events at once, not when the leases run out (`webhook_timeout` x 4 + 30 s).
    /// Streams finish the page they are sending first, for at most 5 seconds. A service
    /// whose workers did not start (`Config::webhook_workers` 0, or no runtime) has nothing
    /// to stop. There is no starting them again.
    pub async fn stop_deliveries(&self) {
        #[cfg(feature = "webhooks")]
        self.inner
            .deliveries
            .stop(self.inner.store.as_ref(), std::time::Duration::from_secs(5))
            .await;
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

    /// How often this process's read caches answered since it started: library detail
    /// pages, asset list pages and single assets (the ready server logs them when it stops,
    /// and the load runs report them).
    pub fn cache_stats(&self) -> crate::CacheStats {
        crate::CacheStats {
            details: self.inner.details.lookups(),
            lists: self.inner.pages.lists.lookups(),
            assets: self.inner.pages.assets.lookups(),
        }
    }

    /// Runs `op` (`ids` are the path's ids in order: none, the asset or library id, or a
    /// library id and a pass id) and always answers: errors become
    /// their contract replies here. The key and scope are checked from the head first; the
    /// body is read only after that, and only by operations that take one. A JSON `GET`
    /// answers with an `ETag` (304 when `If-None-Match` names it), and an answer to an origin
    /// of [`Config::cors_origins`] carries CORS headers.
    pub async fn handle(&self, op: Operation, ids: &[&str], req: RawRequest<'_>) -> Reply {
        let (origin, if_none_match) = (req.origin, req.if_none_match);
        let keyed = req.authorization.is_some();
        if !op.is_built() || !self.keeps_records_of(op) {
            return crate::routes::route_not_found();
        }
        let mut reply = self.run(op, ids, req).await;
        if op.is_read() {
            reply = web::conditional(reply, if_none_match);
        }
        web::cache_control(&mut reply, keyed);
        if op.is_tus() {
            crate::tus::mark(&mut reply);
        }
        self.cors().apply(&mut reply, origin);
        reply
    }

    /// Answers `method` on a path of the API that core's [`crate::match_route`] (or the
    /// adapter's router) matched to `route`, or to no route (`None`: 404): `OPTIONS` is 204
    /// with `Allow` (and the CORS preflight headers for an allowed origin) and needs no key; a
    /// method the route does not take is 405; anything else runs as [`Service::handle`].
    pub async fn answer(
        &self,
        method: &str,
        route: Option<&'static Route>,
        ids: &[&str],
        req: RawRequest<'_>,
    ) -> Reply {
        let (origin, keyed) = (req.origin, req.authorization.is_some());
        let mut reply = match route {
            None => crate::routes::route_not_found(),
            Some(route) if method == "OPTIONS" => {
                let mut reply = self.cors().preflight(route, origin);
                // The tus creation route (the one whose POST speaks tus) offers tus.
                if route.operation("POST").is_some_and(Operation::is_tus) {
                    crate::tus::offer(&mut reply, self.max_resumable());
                }
                return reply;
            }
            Some(route) => match route.operation(method) {
                Some(op) => return self.handle(op, ids, req).await,
                None => crate::routes::method_not_allowed(method, route),
            },
        };
        web::cache_control(&mut reply, keyed);
        self.cors().apply(&mut reply, origin);
        reply
    }

    /// The rendered asset `id` (`None` if there is none), from the page cache when it holds
    /// it at the store's current version of the asset ([`crate::AssetStore::asset_version`]);
    /// rendered and kept otherwise.
    async fn rendered_asset(&self, id: Uuid) -> Result<Option<Arc<RenderedAsset>>, ApiError> {
        let cache = if self.inner.config.page_cache {
            Some((&self.inner.pages, self.inner.store.asset_version(id).await?))
        } else {
            None
        };
        if let Some(kept) = cache.and_then(|(c, v)| c.assets.get(&id, v)) {
            return Ok(Some(kept));
        }
        let Some(asset) = self.inner.store.get_asset(id).await? else {
            return Ok(None);
        };
        let rendered = Arc::new(RenderedAsset {
            page: Rendered::of(&crate::render::data(200, crate::render::AssetJson(&asset))),
            asset: Arc::new(asset),
        });
        if let Some((cache, version)) = cache {
            cache.assets.put(id, version, Arc::clone(&rendered));
        }
        Ok(Some(rendered))
    }

    /// The asset page cache with the store's assets version, read now (before any read of
    /// the assets it may keep answers of); `None` when [`Config::page_cache`] is off.
    async fn page_cache(&self) -> Result<Option<(&AssetPages, u64)>, ApiError> {
        if !self.inner.config.page_cache {
            return Ok(None);
        }
        let version = self.inner.store.assets_version().await?;
        Ok(Some((&self.inner.pages, version)))
    }

    fn cors(&self) -> web::Cors<'_> {
        web::Cors {
            origins: &self.inner.config.cors_origins,
        }
    }

    async fn run(&self, op: Operation, ids: &[&str], req: RawRequest<'_>) -> Reply {
        let id = ids.first().copied().unwrap_or("");
        let client = req.client_address(self.inner.config.trusted_proxy_hops);
        let access = match self
            .admit(op, id, req.authorization, req.query, client)
            .await
        {
            Ok(access) => access,
            Err(e) => return e.into_reply(),
        };
        let sub = ids.get(1).copied().unwrap_or("");
        let reply = if op.is_read() {
            // A read writes nothing: it needs no actor.
            self.dispatch(op, (id, sub), req, &access).await
        } else {
            // The events of what the operation writes name its key.
            let actor = match &access {
                Access::Key(key) | Access::Token { key, .. } => Some(Actor::of(key)),
                _ => None,
            };
            self.acting_as(actor)
                .dispatch(op, (id, sub), req, &access)
                .await
        }
        .unwrap_or_else(ApiError::into_reply);
        #[cfg(feature = "webhooks")]
        if op.writes_events() {
            self.inner.deliveries.wake();
        }
        reply
    }

    /// Runs `op` as `access` may: the one place every operation is dispatched, whoever asks
    /// (a key, a library pass, a keyless public read, a signed link). Operations that read or
    /// download one asset load it as the caller sees assets ([`Service::asset_for`]), and
    /// every path a file leaves by asks [`Service::may_download`] (or, for a zip, the same rule
    /// over its files); the others need a key, which the admission made sure of.
    async fn dispatch(
        &self,
        op: Operation,
        (id, sub): (&str, &str),
        req: RawRequest<'_>,
        access: &Access,
    ) -> Result<Reply, ApiError> {
        let reader = access.reader();
        let ws = access.workspace();
        match access {
            Access::Pass(pass) => Box::pin(self.pass_may_open(op, (id, req.query), pass)).await?,
            #[cfg(feature = "keys")]
            Access::Token {
                libraries: Some(libraries),
                key,
            } => {
                let seen = (id, req.query, key.workspace_id.as_deref());
                Box::pin(self.token_may_open(op, seen, libraries)).await?;
            }
            _ => {}
        }
        // The cached reads run inline; every other operation's future is boxed, so the future
        // of every request is as small as a read's (a few hundred bytes, not the kilobytes of
        // an upload's or a zip's state), which is moved and copied on every request.
        match op {
            Operation::OpenApi => Ok(openapi_document()),
            Operation::GetAsset => self.get_asset(id, reader).await,
            Operation::ListAssets => self.list_assets(req, access.key()?).await,
            Operation::GetLibrary => self.get_library(id, req, ws).await,
            Operation::GetLibraryBySlug => self.get_library_by_slug(id, req, ws).await,
            Operation::DownloadAsset => {
                Box::pin(async {
                    let asset = self.asset_for(id, reader).await?;
                    self.may_open_file(&asset, access.files()).await?;
                    self.download_asset(asset, req, reader, access.files().pass())
                        .await
                })
                .await
            }
            Operation::DownloadLibrary => {
                Box::pin(self.download_library(id, req, access.files(), ws)).await
            }
            Operation::CreateAsset => Box::pin(self.post_asset(req, ws)).await,
            Operation::UploadAsset => Box::pin(self.upload_asset(req, ws)).await,
            Operation::UpdateAsset => Box::pin(self.patch_asset(id, req, ws)).await,
            Operation::ReplaceAssetFile => Box::pin(self.replace_file(id, req, ws)).await,
            Operation::DeleteAsset => Box::pin(self.delete_asset_request(id, req, ws)).await,
            Operation::AssetUsage => Box::pin(self.usage(id, access.key()?)).await,
            Operation::RemakeThumbnail => Box::pin(self.remake_thumbnail_request(id, ws)).await,
            Operation::AssetDownloadUrl => Box::pin(self.asset_download_url(id, req, access)).await,
            #[cfg(feature = "variants")]
            Operation::AssetImage => Box::pin(self.asset_image(id, req, access)).await,
            #[cfg(feature = "variants")]
            Operation::AssetImageUrl => Box::pin(self.asset_image_url(id, req, access)).await,
            Operation::ListLibraries => Box::pin(self.list_libraries(req, ws)).await,
            Operation::PutLibrary => Box::pin(self.put_library(id, req, ws)).await,
            Operation::DeleteLibrary => Box::pin(self.delete_library(id, ws)).await,
            Operation::LibraryDownloadUrl => {
                Box::pin(self.library_download_url(id, req, access)).await
            }
            Operation::CreatePass => Box::pin(self.post_pass(id, req, ws)).await,
            Operation::ListPasses => Box::pin(self.pass_list(id, req, ws)).await,
            Operation::GetPass => Box::pin(self.pass_detail(id, sub, ws)).await,
            Operation::RevokePass => Box::pin(self.delete_pass(id, sub, ws)).await,
            Operation::ListEvents => Box::pin(self.list_events(req, ws)).await,
            #[cfg(feature = "webhooks")]
            Operation::CreateWebhook => Box::pin(self.post_webhook(req, ws)).await,
            #[cfg(feature = "webhooks")]
            Operation::ListWebhooks => Box::pin(self.webhook_list(req, ws)).await,
            #[cfg(feature = "webhooks")]
            Operation::GetWebhook => Box::pin(self.webhook_detail(id, ws)).await,
            #[cfg(feature = "webhooks")]
            Operation::UpdateWebhook => Box::pin(self.patch_webhook(id, req, ws)).await,
            #[cfg(feature = "webhooks")]
            Operation::DeleteWebhook => Box::pin(self.delete_webhook(id, ws)).await,
            #[cfg(feature = "webhooks")]
            Operation::ListDeliveries => Box::pin(self.delivery_list(id, req, ws)).await,
            #[cfg(feature = "webhooks")]
            Operation::RetryDelivery => Box::pin(self.retry_delivery(id, sub, ws)).await,
            #[cfg(feature = "webhooks")]
            Operation::TestWebhook => Box::pin(self.test_webhook(id, ws)).await,
            Operation::CreateUpload => Box::pin(self.create_upload(req, ws)).await,
            Operation::GetUpload => Box::pin(self.upload_status(id, req, ws)).await,
            Operation::PatchUpload => Box::pin(self.patch_upload(id, req, ws)).await,
            Operation::DeleteUpload => Box::pin(self.delete_upload(id, req, ws)).await,
            Operation::CreateDirectUpload => Box::pin(self.create_direct_upload(req, ws)).await,
            Operation::CompleteDirectUpload => {
                Box::pin(self.complete_direct_upload(id, req, ws)).await
            }
            Operation::BulkAssets => Box::pin(self.bulk_request(req, ws)).await,
            #[cfg(feature = "keys")]
            Operation::ListKeys => Box::pin(self.key_list(req, ws)).await,
            #[cfg(feature = "keys")]
            Operation::CreateKey => Box::pin(self.post_key(req, access.key()?)).await,
            #[cfg(feature = "keys")]
            Operation::GetKey => Box::pin(self.key_detail(id, ws)).await,
            #[cfg(feature = "keys")]
            Operation::RevokeKey => Box::pin(self.delete_key(id, ws)).await,
            #[cfg(feature = "keys")]
            Operation::CreateToken => match access {
                Access::Key(key) => Box::pin(self.post_token(req, key)).await,
                _ => Err(keys::TOKEN_MINTS_NONE),
            },
            Operation::ListTags => Box::pin(self.tags_request(req, ws)).await,
            #[cfg(feature = "search")]
            Operation::Search => Box::pin(self.search_request(req, access.key()?)).await,
            // The operations of a capability this build leaves out have no arm (nor route).
            // With every feature on, the match stays exhaustive: an operation added to the
            // table without its handler does not build.
            #[cfg(not(all(
                feature = "variants",
                feature = "webhooks",
                feature = "keys",
                feature = "search"
            )))]
            _ => Ok(crate::routes::route_not_found()),
        }
    }

    /// Reads a JSON body: 413 when it is declared or found larger than
    /// [`Config::max_json_body`], 400 when it cannot be read, 415 when it is not JSON.
    async fn json_body(&self, req: RawRequest<'_>) -> Result<Bytes, ApiError> {
        let limit = self.inner.config.max_json_body;
        if req.declared_length().is_some_and(|len| len > limit as u64) {
            return Err(ApiError::PayloadTooLarge {
                limit: limit as u64,
            });
        }
        let body = req.body.read(limit, self.inner.config.body_timeout).await?;
        if !is_json_media_type(req.content_type) {
            return Err(ApiError::UnsupportedMediaType {
                expected: "application/json",
            });
        }
        Ok(body)
    }
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

/// The `Location` of a record made at `{mount}/api/v1/{collection}/{id}`.
fn location(mount: &str, collection: &str, id: Uuid) -> String {
    format!(
        "{}{}/{collection}/{id}",
        mount.trim_end_matches('/'),
        crate::routes::API_PREFIX
    )
}
