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

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use axum::Router;
use axum::http::header::CONTENT_TYPE;
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
    #[arg(long)]
    library: PathBuf,
    /// Body of `GET /api/v1/assets`.
    #[arg(long)]
    list: PathBuf,
    /// Body of `GET /api/v1/assets/{id}`.
    #[arg(long)]
    asset: PathBuf,
}

fn read(path: &PathBuf) -> Result<Bytes, String> {
    std::fs::read(path)
        .map(Bytes::from)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn fixed(body: Bytes) -> axum::routing::MethodRouter {
    get(move || {
        let body = body.clone();
        async move { ([(CONTENT_TYPE, "application/json")], body) }
    })
}

async fn run(args: Args) -> Result<(), String> {
    let app = Router::new()
        .route("/api/v1/libraries/{id}", fixed(read(&args.library)?))
        .route("/api/v1/assets", fixed(read(&args.list)?))
        .route("/api/v1/assets/{id}", fixed(read(&args.asset)?));
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
