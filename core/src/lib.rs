//! # assetlib-core
//!
//! The framework-free core of assetlib, the Digital Assets and Libraries API for Rust web
//! apps. It holds every rule of the contract — query parsing, validation, pagination, API keys
//! and scopes, library-tree assembly, the error table — and the [`Service`] that composes them
//! with a [`Store`]. Web adapters (`assetlib-axum`, `assetlib-warp`) only translate HTTP to
//! [`RawRequest`] and [`Reply`]; stores (`assetlib-sled`, `assetlib-postgres`, [`MemoryStore`])
//! only keep records.
//!
//! ```
//! use assetlib_core::{Config, Operation, RawRequest, Scope, Service};
//!
//! # tokio_test_block_on(async {
//! let service = Service::in_memory(Config::default());
//! let (_, key) = service.create_key("docs", vec![Scope::ReadAssets], None).await.unwrap();
//! let auth = format!("Bearer {key}");
//! let reply = service
//!     .handle(Operation::ListAssets, &[], RawRequest {
//!         authorization: Some(auth.as_bytes()),
//!         query: Some("per_page=5"),
//!         ..RawRequest::default()
//!     })
//!     .await;
//! assert_eq!(reply.status, 200);
//! assert!(reply.body.starts_with(br#"{"success":true,"data":[]"#));
//! # });
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```
//!
//! Records are kept by a [`Store`] and files by [`Files`], both named when the service is
//! built: `Service::new(store, Files::local("data/files")?, config)` keeps uploads on disk next
//! to a durable store; [`Service::in_memory`] keeps everything in memory, for tests.
//!
//! ## Public API
//! Every public item has one path, but the store traits and `events::{Log, Written}`, which
//! [`store`] and its `prelude` hold too. The crate root holds the service and what it is built
//! from and answers with: [`Service`], [`Config`], [`Store`], [`MemoryStore`], [`Files`], the
//! records ([`Asset`], [`Library`], [`ApiKey`], ...), the validated queries a store answers
//! ([`AssetQuery`], [`LibraryQuery`]), the operations table ([`OPERATIONS`], [`Operation`],
//! [`Capability`]) and the routes derived from it ([`ROUTES`], [`match_route`], ...),
//! [`RawRequest`] and [`Reply`], and the errors
//! ([`ApiError`], [`StoreError`]). The pure parts are modules of their own:
//!
//! | module | what it does |
//! |---|---|
//! | [`page`] | pagination arithmetic and objects |
//! | [`auth`] | `Authorization` header -> key -> SHA-256 -> record; scope checks |
//! | [`tree`] | library, sections and entries -> the library detail |
//! | [`validate`] | create bodies, library documents, ids, slugs, file paths |
//! | [`embed`] | `video_embed` from an external video URL |
//! | [`extract`] | file metadata from content: MIME by magic bytes, pages, words, image size, thumbnails |
//! | [`download`] | `Range` selection and `Content-Disposition` of downloads |
//! | [`variant`] | image variants: their parameters, sizes, and making them (decode, resize, encode) |
//! | [`events`] | the event log: events, `Log` (who a write is made by, from `Service::acting_as`) and `Written` (what a store did), of which every store's event is made; the feed's cursor and query |
//! | [`webhooks`] | webhooks and their deliveries: the records, the retry schedule, Standard Webhooks signatures (to verify deliveries in a Rust receiver too), the address rules of targets |
//! | [`render`] | assets, library list items and timestamps on the wire |
//! | [`store`] | the store traits: [`Store`]'s four, each capability's own, and the rules stores share |
//! | `search` | the rules of search: the query language, words folded without case and accents (and stemmed when a store names a language), snippets, scores (feature `search`) |
//! | `tokens` | browser tokens (`alt_...`): their claims, minted and checked under the signing secret (feature `keys`) |
//! | [`tus`] | resumable uploads: their records, metadata and the tus protocol's headers |
//! | `openapi` | the OpenAPI 3.1 document of the API, served at `GET /api/v1/openapi.json` (feature `openapi`) |
//! | `testing` | the store conformance suite (feature `testing`) |
//! | `transfer` | moving data: every record of a store out and in (`TransferStore`), copies between stores and file stores, backup archives with checksums (feature `transfer`) |
//!
//! ## Features
//! None is on by default: core alone is the contract. Each capability is a feature; an
//! operation of one that is off has no route ([`match_route`] finds none, and
//! [`Service::handle`] answers it as an unknown route), and its crates are not built.
//!
//! | feature | what it adds |
//! |---|---|
//! | `passes` | library passes: `/api/v1/libraries/{id}/passes` |
//! | `events` | the change feed: `GET /api/v1/events` |
//! | `webhooks` | `/api/v1/webhooks`: deliveries of the events over HTTP(S) (reqwest with rustls over graviola: no C compiler); turns on `events` |
//! | `uploads` | resumable (tus 1.0) and direct uploads: `/api/v1/uploads` |
//! | `organize` | tags and bulk changes: `GET /api/v1/tags`, `POST /api/v1/assets/bulk` |
//! | `keys` | keys minted over HTTP (`/api/v1/keys`) and browser tokens (`POST /api/v1/tokens`) |
//! | `rate-limits` | `Config::rate_limit` (governor) |
//! | `previews` | thumbnails of images, PDFs (drawn in a bounded child process: `extract::PdfRenderer`), documents and audio covers, video poster frames, placeholders; audio and video facts; `POST /api/v1/assets/{id}/thumbnail` |
//! | `variants` | image variants: `GET /api/v1/assets/{id}/image` and `/image-url`; turns on `previews` |
//! | `webp-lossy` | lossy WebP variants through libwebp (built from source; without it WebP variants are lossless); turns on `variants` |
//! | `jpeg-turbo` | JPEG variants shrunk to a half or less decoded at a reduced size by libjpeg-turbo (built from source; its SIMD code needs `nasm` at build time); turns on `variants` |
//! | `search` | `assetlib_core::search` and `store::SearchStore`: the rules of search (the query language, words folded without case and accents, stemming in 18 languages through `rust-stemmers` when a store names one, snippets, scores) and the store contract, with [`MemoryStore`]'s reference and the conformance group; the route `GET /api/v1/search` comes with the sled and PostgreSQL indexes |
//! | `transfer` | `assetlib_core::transfer` and `store::TransferStore`: every record of a store out and in, `copy_records` and `copy_files`, backup archives (`transfer::archive`), with [`MemoryStore`]'s reference and the conformance group `TRANSFER_CASES` |
//! | `openapi` | `assetlib_core::openapi`: the OpenAPI 3.1 document of the API, served without a key at `GET /api/v1/openapi.json` |
//! | `s3` | `Files::s3`: files in a bucket of any S3-compatible service, through object_store's `aws` backend |
//! | `testing` | `assetlib_core::testing`: the conformance suite every [`Store`] runs (turns on `samples`) |
//! | `samples` | `assetlib_core::extract::samples`: small real files (PDF, DOCX, ODT, PNG, JPEG, ...) for tests and demos |

// Unit tests share the dev-dependencies of the crate's other test targets.
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod auth;
mod bulk;
mod change;
mod config;
mod detail_cache;
pub mod download;
pub mod embed;
mod error;
pub mod events;
pub mod extract;
mod files;
mod ingest;
mod key_cache;
#[cfg(any(feature = "keys", feature = "openapi"))]
mod key_wire;
#[cfg(feature = "rate-limits")]
mod limit;
mod memory;
mod model;
#[cfg(feature = "openapi")]
pub mod openapi;
mod operations;
pub mod page;
mod page_cache;
#[cfg(feature = "previews")]
mod poster;
mod query;
mod records;
pub mod render;
mod reply;
mod request;
mod routes;
#[cfg(feature = "search")]
pub mod search;
mod service;
mod signed;
pub mod store;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "keys")]
pub mod tokens;
#[cfg(feature = "transfer")]
pub mod transfer;
pub mod tree;
pub mod tus;
mod upload;
pub mod validate;
pub mod variant;
mod web;
pub mod webhooks;

pub use async_trait::async_trait;
pub use change::{
    AssetChange, AssetDeletion, AssetUpdate, BulkOutcome, BulkRefusal, ChangeRefused,
    ChecksumFound, FileFields, FileReread, LibraryUse, LinkFields, TagChange, ThumbnailMove,
};
pub use config::{Config, ReplicaSync};
pub use error::{ApiError, BoxError, FileError, StoreError, UploadLimit};
pub use files::{Files, FilesError, Resolved};
pub use key_cache::KEY_CACHE_TTL;
#[cfg(feature = "rate-limits")]
pub use limit::RateLimit;
pub use memory::MemoryStore;
pub use model::{
    ApiKey, Asset, AssetType, EntryAsset, EntryRow, Holders, Library, LibraryEntry, LibraryPass,
    LibraryRows, LibrarySettings, LibrarySummary, LibraryWrite, Media, Page, PassSpend, PutOutcome,
    Scope, Section, SlugHolder, TagCount, ViewCount, may_hold,
};
pub use page_cache::{CacheStats, Lookups};
pub use query::{AssetQuery, AssetSort, AssetStatus, DetailQuery, LibraryQuery, SortOrder};
pub use reply::{ByteStream, JSON, Reply};
pub use request::{BodyStream, PeerAddr, RawRequest, RequestBody, TusHeaders};
pub use routes::{
    API_PREFIX, Capability, OPERATIONS, Operation, OperationRow, OperationSpec, ROUTES, Route,
    RouteMatch, Routes, THUMBNAIL_ROUTE, match_route, method_not_allowed, route_not_found,
};
#[cfg(feature = "search")]
pub use service::Reindex;
pub use service::{
    Backfill, BulkItem, BulkResult, ImportFile, ImportLibrary, ImportOptions, Imported, Service,
};
pub use store::{
    AssetStore, EventStore, KeyStore, LibraryStore, MetaStore, PassStore, Store, UploadStore,
    WebhookStore,
};
