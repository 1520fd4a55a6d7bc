//! The README's "Embed it in a warp app": the whole API as a warp filter next to routes of
//! your own, with records in a sled database and uploaded files in a directory next to it.
//!
//! Run: `cargo run --example embed_warp` (data under `./data`, listening on
//! `127.0.0.1:8080`).

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use assetlib::sled::SledStore;
use assetlib::{Config, Files, Service};
use warp::Filter;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let store = SledStore::open("data/db")?;
    let files = Files::local("data/files")?;
    let service = Service::new(store, files, Config::default());

    let home = warp::path::end().map(|| "my site");
    let app = home
        .or(assetlib::warp::routes(service.clone()))
        .or(assetlib::warp::thumbnails(service))
        .recover(assetlib::warp::recover);
    warp::serve(app).run(([127, 0, 0, 1], 8080)).await;
    Ok(())
}
