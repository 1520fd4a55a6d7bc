//! The README's "Embed it in an axum app": the whole API merged into an app of your own, with
//! records in a sled database and uploaded files in a directory next to it, so both survive a
//! restart.
//!
//! Run: `cargo run --example embed_axum` (data under `./data`, listening on
//! `127.0.0.1:8080`; the environment variables `DATA` and `ADDR` change them).

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use assetlib::sled::SledStore;
use assetlib::{Config, Files, Scope, Service};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let data = std::env::var("DATA").unwrap_or_else(|_| "data".into());
    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:8080".into());

    // Records in sled, files on disk: name both, so uploads outlive the process too.
    let store = SledStore::open(format!("{data}/db"))?;
    let files = Files::local(format!("{data}/files"))?;
    let service = Service::new(store, files, Config::default());

    if service.list_keys().await?.is_empty() {
        let (_, key) = service
            .create_key("admin", Scope::ALL.to_vec(), None)
            .await?;
        println!("API key (shown once): {key}");
    }

    let app = axum::Router::new()
        .route("/", axum::routing::get(|| async { "my site" }))
        .merge(assetlib::axum::router(service));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
