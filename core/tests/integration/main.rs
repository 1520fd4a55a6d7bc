//! Integration tests of assetlib-core: the conformance suite on MemoryStore, and the Service
//! end to end over MemoryStore, and (feature `s3`) over files in a real S3 server.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

#[cfg(feature = "transfer")]
mod archive;
mod backfill;
mod conformance;
mod detail_cache;
mod docs;
#[cfg(feature = "keys")]
mod keys;
mod list_versions;
mod modules;
#[cfg(feature = "openapi")]
mod openapi;
#[cfg(feature = "openapi")]
mod openapi_client;
mod page_cache;
mod render_turns;
#[cfg(feature = "s3")]
mod s3;
mod service;
mod workers;
mod workspaces;
