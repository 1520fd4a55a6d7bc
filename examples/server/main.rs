//! The ready server: the whole Digital Assets and Libraries API on axum, over one sled data
//! directory, with API-key commands, demo data, request logs and a clean shutdown.
//!
//! ```text
//! cargo run --release --features full --example server -- serve --demo
//! ```
//!
//! - `serve [--data DIR] [--addr HOST:PORT] [--demo]` (the default command): serves
//!   `/api/v1` on `HOST:PORT` (default `127.0.0.1:8080`) from `DIR` (default
//!   `./assetlib-data`). On a directory without keys it creates one with every scope and
//!   prints it, once. `--demo` adds sample assets and a published sample library, once.
//!   Stops cleanly on Ctrl-C or SIGTERM, flushing the store.
//! - `keys create --scopes a,b [--name N] [--expires-in-days D] [--data DIR]` prints the new
//!   key alone on the last line of standard output; `keys list`; `keys revoke ID`;
//!   `keys rotate-signing-secret` (every signed link made before stops working). They fail
//!   with a clear message while a server holds the directory.
//!
//! Logs go to standard error, filtered by `RUST_LOG` (default `info`), one line per request.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

mod app;

use std::process::ExitCode;

use axum::http::{Method, Request, Uri};
use axum::response::{IntoResponse as _, Response};
use tokio::net::TcpListener;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;

use app::BoxError;
use assetlib::Service;
use assetlib::axum::ApiResponse;
use assetlib::route_not_found;

fn main() -> ExitCode {
    app::main(serve_http)
}

/// Serves the API on `listener` with axum until the shutdown signal (see `app::http` for the
/// timeouts), one log line a request.
/// Thumbnails are public under `/files/thumbnails/`, the example page under `/site/`
/// (`app::site`); other paths outside `/api/v1` get the contract's JSON 404 too. Logged
/// addresses have their `key` parameter redacted.
async fn serve_http(service: Service, listener: TcpListener) -> Result<(), BoxError> {
    let mut app = axum::Router::new()
        .merge(assetlib::axum::router(service.clone()))
        .merge(assetlib::axum::thumbnails(service));
    for path in app::site::PATHS {
        app = app.route(path, axum::routing::any(site));
    }
    let app = app.fallback(|| async { ApiResponse(route_not_found()) });
    // The request log costs a span, a clock read and a wrapped body per request: only when
    // its lines are written (`RUST_LOG` at `info` or finer for this server).
    let logged = tracing::enabled!(Level::INFO)
        || tracing::enabled!(target: "tower_http::trace::on_response", Level::INFO);
    if !logged {
        return app::http::serve(listener, app, app::shutdown_signal()).await;
    }
    let app = app.layer(
        TraceLayer::new_for_http()
            .make_span_with(|request: &Request<_>| {
                let uri = request.uri();
                let target = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
                tracing::info_span!(
                    "request",
                    method = %request.method(),
                    uri = %app::site::redact_key(target),
                    version = ?request.version(),
                )
            })
            .on_response(DefaultOnResponse::new().level(Level::INFO)),
    );
    app::http::serve(listener, app, app::shutdown_signal()).await
}

/// The example page's files, or the JSON 404 for a method they do not take.
async fn site(method: Method, uri: Uri) -> Response {
    match app::site::response(&method, uri.path(), uri.query()) {
        Some(page) => page.map(axum::body::Body::from).into_response(),
        None => ApiResponse(route_not_found()).into_response(),
    }
}
