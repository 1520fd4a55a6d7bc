//! The ready server: the whole Digital Assets and Libraries API on axum, over one sled data
//! directory, with API-key commands, demo data, request logs and a clean shutdown.
//!
//! ```text
//! cargo run --release --example server --features axum,sled -- serve --demo
//! ```
//!
//! - `serve [--data DIR] [--addr HOST:PORT] [--demo]` (the default command): serves
//!   `/api/v1` on `HOST:PORT` (default `127.0.0.1:8080`) from `DIR` (default
//!   `./assetlib-data`). On a directory without keys it creates one with every scope and
//!   prints it, once. `--demo` adds sample assets and a published sample library, once.
//!   Stops cleanly on Ctrl-C or SIGTERM, flushing the store.
//! - `keys create --scopes a,b [--name N] [--expires-in-days D] [--data DIR]` prints the new
//!   key alone on the last line of standard output; `keys list`; `keys revoke ID`. They fail
//!   with a clear message while a server holds the directory.
//!
//! Logs go to standard error, filtered by `RUST_LOG` (default `info`), one line per request.

#[path = "common/mod.rs"]
mod common;

use std::process::ExitCode;

use clap::Parser as _;
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use tracing::Level;

use common::{BoxError, Cli, Command, ServeArgs};

fn main() -> ExitCode {
    let command = Cli::parse().command();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match command {
            Command::Serve(args) => serve(args).await,
            Command::Keys { command } => common::run_keys(command).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: ServeArgs) -> Result<(), BoxError> {
    common::init_logging();
    let service = common::open_service(&args.data.data)?;
    common::ensure_first_key(&service, args.addr).await?;
    if args.demo {
        common::demo::seed_and_show(&service, args.addr).await?;
    }

    let app = axum::Router::new()
        .merge(assetlib::axum::router(service.clone()))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
                .on_response(DefaultOnResponse::new().level(Level::INFO)),
        );
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.addr))?;
    tracing::info!(
        addr = %listener.local_addr()?,
        data = %args.data.data.display(),
        "serving the API at /api/v1"
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(common::shutdown_signal())
        .await?;
    service.store().flush().await?;
    tracing::info!("stopped; the store is flushed");
    Ok(())
}
