//! A webhook receiver: checks each delivery's Standard Webhooks signature and timestamp with
//! `assetlib::webhooks::sign`, prints the event, and answers 204 (401 to a delivery it cannot
//! verify). It is the receiver of the README's webhook walkthrough and of the load test's
//! webhook row.
//!
//! ```text
//! cargo run --release --example webhook_receiver --features axum -- \
//!     --addr 127.0.0.1:9000 --secret whsec_...
//! ```
//!
//! Without `--secret` (or `WEBHOOK_SECRET`) it prints every delivery unverified. `--quiet`
//! prints nothing (for load runs). Runs until SIGTERM or Ctrl-C.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use clap::Parser;

/// Command line of the receiver.
#[derive(Debug, Parser)]
#[command(about = "Receives assetlib webhook deliveries and checks their signatures")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:9000")]
    addr: SocketAddr,
    /// The webhook's secret (`whsec_...`), shown once when it was registered.
    #[arg(long, env = "WEBHOOK_SECRET")]
    secret: Option<String>,
    /// Print nothing.
    #[arg(long)]
    quiet: bool,
}

/// Checks one delivery: 204 when its signature is good (or no secret was given), 401 else.
async fn receive(State(args): State<Arc<Args>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    };
    let (id, signature) = (header("webhook-id"), header("webhook-signature"));
    let timestamp: i64 = header("webhook-timestamp").parse().unwrap_or(0);
    let verdict = match &args.secret {
        None => "unverified",
        Some(secret) => {
            let now = chrono::Utc::now().timestamp();
            let delivery = (id, timestamp, body.as_ref());
            if assetlib::webhooks::sign::verify_at(secret, delivery, signature, now) {
                "verified"
            } else {
                "REFUSED"
            }
        }
    };
    if !args.quiet {
        println!("{verdict} {id}: {}", String::from_utf8_lossy(&body));
    }
    match verdict {
        "REFUSED" => StatusCode::UNAUTHORIZED,
        _ => StatusCode::NO_CONTENT,
    }
}

async fn run(args: Args) -> Result<(), String> {
    let addr = args.addr;
    let app = Router::new()
        .route("/{*path}", post(receive))
        .route("/", post(receive))
        .with_state(Arc::new(args));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    eprintln!("receiving webhooks at http://{addr}/");
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
        .map_err(|e| format!("serving failed: {e}"))
}

#[tokio::main]
async fn main() -> ExitCode {
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("webhook_receiver: {e}");
            ExitCode::FAILURE
        }
    }
}
