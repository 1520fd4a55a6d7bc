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
//! | feature | what it adds |
//! |---|---|
//! | `axum` | `assetlib::axum::router(service)`, the API as an axum 0.8 `Router` (crate `assetlib-axum`) |
//! | `warp` | `assetlib::warp::routes(service)`, the API as a warp 0.4 filter (crate `assetlib-warp`) |
//! | `sled` | `assetlib::sled::SledStore`, an embedded, durable store in one directory (crate `assetlib-sled`) |
//! | `postgres` | `assetlib::postgres::PgStore`, a store in PostgreSQL for several replicas over one database (crate `assetlib-postgres`); not on by default |
//! | `openapi` | `assetlib::openapi`, the OpenAPI 3.1 document of the API, served without a key at `GET /api/v1/openapi.json` (without it, that route answers 404) |
//! | `s3` | `Files::s3("s3://bucket/prefix")`, asset files in a bucket of any S3-compatible service, configured from the `AWS_*` environment variables; not on by default |
//!
//! `axum`, `warp`, `sled` and `openapi` are on by default, so the ready servers run with no flags
//! (`cargo run --release --example server -- serve --demo`, or `--example warp_server`); an app
//! that needs one adapter takes `default-features = false` and names what it uses.

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
