//! # assetlib-axum
//!
//! Mounts the Digital Assets and Libraries API of [`assetlib_core`] on an
//! [axum](https://docs.rs/axum/0.8) [`Router`](axum::Router).
//!
//! [`router`] registers every route of [`assetlib_core::ROUTES`] and hands each request's raw
//! parts to [`Service::answer`](assetlib_core::Service::answer) with its route;
//! [`ApiResponse`] copies core's
//! [`Reply`](assetlib_core::Reply) into an axum response. Nothing else happens here: every
//! status code, error body, header rule, scope and validation is core's, so this adapter and
//! any other answer every request alike. `adapters/README.md` states the contract.
//!
//! ```
//! use assetlib_core::{Config, Service};
//!
//! let service = Service::in_memory(Config::default());
//! let app: axum::Router = axum::Router::new()
//!     .route("/", axum::routing::get(|| async { "my own page" }))
//!     .merge(assetlib_axum::router(service));
//! # let _ = app;
//! ```
//!
//! Serving it (`router` returns a `Router<S>` for any state, so it also merges into an app
//! that has its own state, or nests under a prefix):
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! # let service = assetlib_core::Service::in_memory(assetlib_core::Config::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, assetlib_axum::router(service)).await
//! # }
//! ```
//!
//! ## What the router answers
//! | request | answer |
//! |---|---|
//! | a route of [`ROUTES`](assetlib_core::ROUTES) this build has, with one of its methods | [`Service::answer`](assetlib_core::Service::answer), which runs the operation through [`Service::handle`](assetlib_core::Service::handle) |
//! | such a route with `OPTIONS` | 204 with `Allow` (and CORS preflight headers for an allowed origin), from [`Service::answer`](assetlib_core::Service::answer) |
//! | such a route with another method | [`method_not_allowed`](assetlib_core::method_not_allowed) (JSON 405 with `Allow`) |
//! | a route of a capability the build leaves out, or any other path under `/api/v1` | [`route_not_found`](assetlib_core::route_not_found) (JSON 404) |
//! | anything else | not matched: the fallback of the app it is merged into |
//!
//! `HEAD` is answered like `GET`, without the body.

// Unit tests share the dev-dependencies of the crate's other test targets.
#![cfg_attr(test, allow(unused_crate_dependencies))]

mod response;
mod routes;

pub use response::ApiResponse;
pub use routes::{router, thumbnails};
