//! # assetlib-core
//!
//! The framework-free core of assetlib, the Digital Assets and Libraries API for Rust web
//! apps. It holds every rule of the contract — query parsing, validation, pagination, API keys
//! and scopes, library-tree assembly, the error table — and the [`Service`] that composes them
//! with a [`Store`]. Web adapters (`assetlib-axum`, `assetlib-warp`) only translate HTTP to
//! [`RawRequest`] and [`Reply`]; stores (`assetlib-sled`, [`MemoryStore`]) only keep records.
//!
//! ```
//! use assetlib_core::{Body, Config, MemoryStore, Operation, RawRequest, Scope, Service};
//!
//! # tokio_test_block_on(async {
//! let service = Service::new(MemoryStore::new(), Config::default());
//! let (_, key) = service.create_key("docs", vec![Scope::ReadAssets], None).await.unwrap();
//! let auth = format!("Bearer {key}");
//! let reply = service
//!     .handle(Operation::ListAssets, None, RawRequest {
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
//! ## Modules
//! | module | what it does |
//! |---|---|
//! | [`query`] | raw query string -> [`AssetQuery`], [`LibraryQuery`], [`DetailQuery`] |
//! | [`page`] | pagination arithmetic and objects |
//! | [`auth`] | `Authorization` header -> key -> SHA-256 -> record; scope checks |
//! | [`tree`] | library, sections and entries -> the library detail |
//! | [`validate`] | create bodies, library documents, ids, slugs, file paths |
//! | [`embed`] | `video_embed` from an external video URL |
//! | [`extract`] | file metadata from content: MIME by magic bytes, pages, words, image size, thumbnails |
//! | [`files`] | [`Files`], the file store (any `object_store`), path resolution |
//! | [`download`] | `Range` selection and `Content-Disposition` of downloads |
//! | [`render`] | assets and library list items on the wire |
//! | [`error`] | [`ApiError`] (the error table) and [`StoreError`] |
//! | [`store`] | the [`Store`] trait |
//! | [`service`] | the [`Service`], the scope table and the route table |
//! | [`memory`] | [`MemoryStore`] |
//! | `testing` | the store conformance suite (feature `testing`) |
//!
//! ## Features
//! | feature | what it adds |
//! |---|---|
//! | `testing` | `assetlib_core::testing`: the conformance suite every [`Store`] runs |

pub mod auth;
mod bulk;
pub mod config;
mod detail_cache;
pub mod download;
pub mod embed;
pub mod error;
pub mod extract;
pub mod files;
mod ingest;
pub mod memory;
pub mod model;
pub mod page;
pub mod query;
pub mod render;
pub mod reply;
pub mod service;
pub mod store;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tree;
mod upload;
pub mod validate;

pub use async_trait::async_trait;
pub use config::Config;
pub use error::{ApiError, BoxError, StoreError};
pub use files::Files;
pub use memory::MemoryStore;
pub use model::*;
pub use query::{AssetQuery, AssetSort, DetailQuery, LibraryQuery, SortOrder};
pub use reply::Reply;
pub use service::{Body, Operation, ROUTES, RawRequest, Route, RouteMatch, Service, match_route};
pub use store::Store;
