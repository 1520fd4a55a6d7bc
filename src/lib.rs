//! # assetlib
//!
//! The Digital Assets and Libraries API for Rust web apps: assets (files and links) and
//! published libraries of them, behind bearer API keys with scopes, under `/api/v1`. Mount it
//! in an existing app with a few lines, or run the ready server (`examples/server/main.rs`).
//!
//! ```no_run
//! # #[cfg(all(feature = "axum", feature = "sled"))]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = assetlib::sled::SledStore::open("data/db")?;
//! let files = assetlib::Files::local("data/files")?;
//! let service = assetlib::Service::new(store, files, assetlib::Config::default());
//! let app = axum::Router::new().merge(assetlib::axum::router(service));
//! # let _: axum::Router = app;
//! # Ok(())
//! # }
//! # #[cfg(not(all(feature = "axum", feature = "sled")))]
//! # fn main() {}
//! ```
//!
//! Records live in a store and files in a file store, both named when the service is built,
//! so uploaded files survive a restart just as the records do.
//!
//! Everything that decides an answer — parsing, validation, scopes, pagination, library
//! trees, every status code and error body — lives in the core, re-exported here
//! ([`Service`], [`Config`], [`Store`], [`MemoryStore`], ...). Adapters only translate HTTP
//! for one framework; stores only keep records.
//!
//! The [`Service`] also works without any web framework:
//!
//! ```
//! use assetlib::{Config, Operation, RawRequest, Scope, Service};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let service = Service::in_memory(Config::default());
//! let (_, key) = service.create_key("docs", vec![Scope::ReadLibraries], None).await?;
//! let auth = format!("Bearer {key}");
//! let reply = service
//!     .handle(Operation::ListLibraries, &[], RawRequest {
//!         authorization: Some(auth.as_bytes()),
//!         ..RawRequest::default()
//!     })
//!     .await;
//! assert_eq!(reply.status, 200);
//! # Ok::<(), assetlib::ApiError>(())
//! # }).unwrap();
//! ```
//!
//! ## Features
//! Core is the contract; every capability is a feature, forwarded to `assetlib-core` under
//! the same name. A feature that is off has no route (its paths answer 404, as unknown paths
//! do) and builds none of its crates. README's Features table says what each one adds, in
//! routes and in crates, and whether it builds C.
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `axum` | yes | `assetlib::axum::router(service)`, the API as an axum 0.8 `Router` (crate `assetlib-axum`) |
//! | `warp` | yes | `assetlib::warp::routes(service)`, the API as a warp 0.4 filter (crate `assetlib-warp`) |
//! | `sled` | yes | `assetlib::sled::SledStore`, an embedded, durable store in one directory (crate `assetlib-sled`) |
//! | `openapi` | yes | `assetlib::openapi`, the OpenAPI 3.1 document, served without a key at `GET /api/v1/openapi.json` |
//! | `passes` | yes | library passes (`/api/v1/libraries/{id}/passes`) |
//! | `events` | yes | the change feed (`GET /api/v1/events`) |
//! | `uploads` | yes | resumable (tus) and direct uploads (`/api/v1/uploads`) |
//! | `organize` | yes | tags and bulk changes (`GET /api/v1/tags`, `POST /api/v1/assets/bulk`) |
//! | `rate-limits` | yes | `Config::rate_limit` |
//! | `previews` | no | thumbnails and previews of every asset type, audio and video facts, `POST /api/v1/assets/{id}/thumbnail` |
//! | `variants` | no | image variants (`GET /api/v1/assets/{id}/image`, `/image-url`) |
//! | `jpeg-turbo`, `webp-lossy` | no | native codecs for variants (build C) |
//! | `webhooks` | no | `/api/v1/webhooks` (rustls over graviola, in Rust: no C) |
//! | `postgres` | no | `assetlib::postgres::PgStore`, a store in PostgreSQL for several replicas over one database (crate `assetlib-postgres`) |
//! | `s3` | no | `Files::s3("s3://bucket/prefix")`, asset files in a bucket of any S3-compatible service (rustls with ring: builds C) |
//! | `full` | no | every feature: the ready servers (`cargo run --release --features full --example server -- serve --demo`, or `--example warp_server`) |
//!
//! An app that needs one adapter takes `default-features = false` and names what it uses:
//! `features = ["axum", "sled"]` is the contract alone, with no C to build.

// Unit tests share the dev-dependencies of the crate's other test targets.
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub use assetlib_core::*;

/// The axum adapter (crate `assetlib-axum`).
#[cfg(feature = "axum")]
pub use assetlib_axum as axum;

/// The warp adapter (crate `assetlib-warp`).
#[cfg(feature = "warp")]
pub use assetlib_warp as warp;

/// The sled store (crate `assetlib-sled`).
#[cfg(feature = "sled")]
pub use assetlib_sled as sled;

/// The PostgreSQL store (crate `assetlib-postgres`).
#[cfg(feature = "postgres")]
pub use assetlib_postgres as postgres;
