//! The load test's baseline: an axum server that answers the benchmarked routes with fixed
//! bytes from memory, with no key check, store or rendering, so the ready server's req/s can
//! be read as a share of what axum and the machine do at all with the same response sizes.
//!
//! ```text
//! cargo run --release --example bench_baseline --features axum -- \
//!     --addr 127.0.0.1:8090 --library detail.json --list list.json --asset asset.json
//! ```
//!
//! `GET /api/v1/libraries/{id}` answers the `--library` file, `GET /api/v1/assets` the
//! `--list` file and `GET /api/v1/assets/{id}` the `--asset` file, each as
//! `application/json` (the files are fetched from the real server first, see
//! `benches/load.sh`). Runs until SIGTERM or Ctrl-C.
//!
//! With `--site bodies.bin` (written by `site_load crawl`, see `benches/site.sh`) it answers
//! every URL of the realistic site run instead: a `GET` with the body kept for its path and
//! query (an image with its image type), a `PATCH` of an asset with that asset's body, a
//! `PUT` of a library with its detail, after reading the request's body; anything else 404.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::http::{Method, StatusCode, Uri};
use axum::response::IntoResponse;
use axum::routing::get;
use bytes::Bytes;
use clap::Parser;

/// Command line of the baseline server.
#[derive(Debug, Parser)]
#[command(about = "Serves fixed response bytes on the benchmarked API routes")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8090")]
    addr: SocketAddr,
    /// Body of `GET /api/v1/libraries/{id}`.
    #[arg(long, required_unless_present = "site")]
    library: Option<PathBuf>,
    /// Body of `GET /api/v1/assets`.
    #[arg(long, required_unless_present = "site")]
    list: Option<PathBuf>,
    /// Body of `GET /api/v1/assets/{id}`.
    #[arg(long, required_unless_present = "site")]
    asset: Option<PathBuf>,
    /// Every URL of the realistic site run and its body (`site_load crawl`).
    #[arg(long)]
    site: Option<PathBuf>,
}

fn read(path: Option<&PathBuf>) -> Result<Bytes, String> {
    let path = path.ok_or("no file given")?;
    std::fs::read(path)
        .map(Bytes::from)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The bodies of `site_load crawl`'s file by path and query.
fn site_bodies(path: &PathBuf) -> Result<HashMap<String, Bytes>, String> {
    let file = Bytes::from(
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?,
    );
    let mut bodies = HashMap::new();
    let mut at = 0usize;
    let take = |at: &mut usize| -> Result<Bytes, String> {
        let len = file
            .get(*at..*at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
            .ok_or("truncated site file")? as usize;
        let part = file
            .get(*at + 4..*at + 4 + len)
            .ok_or("truncated site file")?;
        *at += 4 + len;
        Ok(file.slice_ref(part))
    };
    while at < file.len() {
        let path = take(&mut at)?;
        let body = take(&mut at)?;
        bodies.insert(String::from_utf8_lossy(&path).into_owned(), body);
    }
    Ok(bodies)
}

/// Answers a request of the site run from `bodies`.
async fn site_answer(
    bodies: Arc<HashMap<String, Bytes>>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> axum::response::Response {
    let key = match method {
        Method::GET => uri
            .path_and_query()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_default(),
        Method::PATCH => uri.path().to_owned(),
        Method::PUT => format!("{}?include_assets=true", uri.path()),
        _ => String::new(),
    };
    drop(body);
    match bodies.get(&key) {
        Some(found) => {
            let kind = if uri.path().ends_with("/image") {
                "image/jpeg"
            } else {
                "application/json"
            };
            ([(CONTENT_TYPE, kind)], found.clone()).into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

fn fixed(body: Bytes) -> axum::routing::MethodRouter {
    get(move || {
        let body = body.clone();
        async move { ([(CONTENT_TYPE, "application/json")], body) }
    })
}

async fn run(args: Args) -> Result<(), String> {
    let app = match &args.site {
        Some(site) => {
            let bodies = Arc::new(site_bodies(site)?);
            Router::new().fallback(move |method: Method, uri: Uri, body: Bytes| {
                site_answer(Arc::clone(&bodies), method, uri, body)
            })
        }
        None => Router::new()
            .route(
                "/api/v1/libraries/{id}",
                fixed(read(args.library.as_ref())?),
            )
            .route("/api/v1/assets", fixed(read(args.list.as_ref())?))
            .route("/api/v1/assets/{id}", fixed(read(args.asset.as_ref())?)),
    };
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.addr))?;
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = async {
                    match term.as_mut() {
                        Some(t) => { t.recv().await; }
                        None => std::future::pending::<()>().await,
                    }
                } => {}
            }
        })
        .await
        .map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
