//! The ready server on warp: the same program as `examples/server/main.rs` (same commands, flags,
//! data directory, keys, demo data, logs and clean shutdown), serving the API with the warp
//! adapter. Everything but the serving loop is shared (`examples/server/app/`).
//!
//! ```text
//! cargo run --release --features full --example warp_server -- serve --demo
//! ```
//!
//! - `serve [--data DIR] [--addr HOST:PORT] [--demo]` (the default command);
//! - `keys create --scopes a,b [--name N] [--expires-in-days D] [--data DIR]`, `keys list`,
//!   `keys revoke ID`, `keys rotate-signing-secret`.
//!
//! Logs go to standard error, filtered by `RUST_LOG` (default `info`), one line per request.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

#[path = "server/app/mod.rs"]
mod app;

use std::process::ExitCode;

use tokio::net::TcpListener;
use warp::Filter as _;
use warp::http::Method;
use warp::path::FullPath;

use app::BoxError;
use assetlib::Service;

fn main() -> ExitCode {
    app::main(serve_http)
}

/// Serves the API on `listener` with warp until the shutdown signal (see `app::http` for the
/// timeouts), one log line a request (warp's own, with any key in the path or the referer
/// redacted).
/// Thumbnails are public under `/files/thumbnails/`, the example page under `/site/`
/// (`app::site`); other paths outside `/api/v1` get the contract's JSON 404 too
/// (`recover`).
async fn serve_http(service: Service, listener: TcpListener) -> Result<(), BoxError> {
    let site = warp::path::full()
        .and_then(|path: FullPath| async move {
            if app::site::PATHS.contains(&path.as_str()) {
                Ok(path)
            } else {
                Err(warp::reject::not_found())
            }
        })
        .and(warp::method())
        .and(warp::query::raw().or(warp::any().map(String::new)).unify())
        .and_then(|path: FullPath, method: Method, query: String| async move {
            app::site::response(&method, path.as_str(), Some(query.as_str()))
                .ok_or_else(warp::reject::not_found)
        });
    let app = assetlib::warp::routes(service.clone())
        .or(assetlib::warp::thumbnails(service))
        .unify()
        .or(site)
        .recover(assetlib::warp::recover);
    // The request log's span and its wrapping cost something on every request: only when its
    // lines are written (`RUST_LOG` at `info` or finer for this server).
    let logged = tracing::enabled!(tracing::Level::INFO)
        || tracing::enabled!(target: "warp::filters::trace", tracing::Level::INFO);
    if !logged {
        return app::http::serve(listener, warp::service(app), app::shutdown_signal()).await;
    }
    let app = app.with(warp::trace(|info: warp::trace::Info<'_>| {
        let span = tracing::info_span!(
            "request",
            method = %info.method(),
            path = %app::site::redact_key(info.path()),
            version = ?info.version(),
            referer = tracing::field::Empty,
        );
        if let Some(referer) = info.referer() {
            span.record(
                "referer",
                tracing::field::display(app::site::redact_key(referer)),
            );
        }
        span
    }));
    app::http::serve(listener, warp::service(app), app::shutdown_signal()).await
}
