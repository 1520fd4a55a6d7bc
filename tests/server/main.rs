//! The ready servers end to end (`examples/server/main.rs` on axum, `examples/warp_server.rs`
//! on warp, each case run against both): their binaries built once, started on free ports of
//! 127.0.0.1 and stopped by their PIDs, with real requests over real sockets.
//!
//! - `bulk`: an atomic bulk change of 100 assets across a SIGKILL, all or nothing;
//! - `commands`: `keys` commands, `serve`, SIGTERM and restarts, the first key, memory under
//!   large downloads and stalled bodies, connection timeouts, the request log;
//! - `events`: one event per acknowledged write across a SIGKILL;
//! - `import`: a tree imported three times (new files only), a run killed with SIGKILL and
//!   finished by the next, and a bucket's prefix imported into PostgreSQL and a bucket;
//! - `previews`: `thumbnails backfill` on assets stored without a thumbnail;
//! - `runaway`: PDFs whose page never finishes drawing: memory of 32 such renders at once,
//!   and SIGTERM while pages are drawn;
//! - `transfer`: `backup` and `restore` of a rich sled directory and of a PostgreSQL database
//!   while it serves, `migrate` of a rich sled directory to PostgreSQL and a bucket, each
//!   answering the same after; damaged archives refused; each command killed with SIGKILL
//!   and finished by a second run;
//! - `site`: the example website page in a real headless browser (Chromium);
//! - `replicas` (features `postgres` and `s3`): two replicas over one PostgreSQL database and
//!   one bucket of a real S3 server, both started by the test kit;
//! - `uploads` (features `postgres` and `s3`): resumable uploads by the official tus clients
//!   through cut connections across two replicas, their expiry, and direct uploads;
//! - `upload_page`: the upload page in Chromium, through a dropped connection.
//!
//! Run: `cargo test --test server` (the HTTP suite of every adapter is `--test http`).

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

mod bulk;
mod commands;
mod events;
mod import;
mod previews;
#[cfg(all(feature = "postgres", feature = "s3"))]
mod replicas;
mod runaway;
mod running;
mod search;
mod site;
mod transfer;
mod tus_kit;
mod upload_page;
#[cfg(all(feature = "postgres", feature = "s3"))]
mod uploads;
mod workspaces;
