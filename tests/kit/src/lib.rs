//! What assetlib's tests need around them, written once: the tools they use, and the
//! throwaway servers they start. Unpublished: only this workspace's tests, benches and
//! `cargo xtask` use it.
//!
//! - [`tools`]: every tool the tests need ([`tools::TOOLS`]), where each is looked for, and
//!   where it comes from; [`setup`] finds or installs them all (`cargo xtask setup`), and a test
//!   finds one with [`tools::Tool::require`], which fails saying how to install it. Tests never
//!   skip.
//! - [`postgres`] (feature `postgres`): a throwaway PostgreSQL cluster on 127.0.0.1, and fresh
//!   databases with the store's schema in it.
//! - [`s3`] (feature `s3`): a throwaway S3-compatible server (SeaweedFS) on 127.0.0.1, every
//!   request signed, and fresh buckets on it.
//! - [`media`]: large media files made on the spot (a video of any size).
//! - [`receiver`] (feature `webhooks`): webhook receivers on 127.0.0.1, one answering as a test
//!   says (statuses, waits, redirects, resets, endless bodies) and one verifying every
//!   delivery with PyPI's `standardwebhooks`.
//!
//! Each server is stopped by its PID when it is dropped; one kept in a static for the whole
//! test binary (`shared()`) is stopped by a small watchdog process once the test binary exits,
//! however it exits. Without features the crate is std only, so `cargo xtask` builds in a
//! moment on a fresh clone.
//!
//! ```no_run
//! # #[cfg(feature = "postgres")]
//! # async fn run() {
//! use assetlib_testkit::postgres::TestCluster;
//!
//! let db = TestCluster::shared().database().await;
//! let store = assetlib_postgres::PgStore::connect(db.url()).await.expect("connect");
//! # let _ = store;
//! # }
//! ```

// Unit tests share the dev-dependencies of the crate's other test targets.
#![cfg_attr(test, allow(unused_crate_dependencies))]

pub mod install;
pub mod media;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(any(feature = "postgres", feature = "s3"))]
mod process;
#[cfg(feature = "webhooks")]
pub mod receiver;
#[cfg(feature = "s3")]
pub mod s3;
mod setup;
pub mod tools;

pub use setup::{NotProvided, setup};
