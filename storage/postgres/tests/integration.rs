//! Integration tests of `PgStore` against a real PostgreSQL server, compiled into one binary.
//!
//! Every test uses the one [`TestCluster`](assetlib_testkit::postgres::TestCluster) of this
//! process, and a fresh database in it.

// Every test target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

mod common;

mod concurrency;
mod conformance;
mod events;
mod libraries;
mod lifecycle;
mod migrations;
mod notices;
mod passes;
mod schema;
#[cfg(feature = "search")]
mod search;
mod tags;
#[cfg(feature = "transfer")]
mod transfer;
mod workspaces;
