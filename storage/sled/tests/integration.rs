//! Integration tests of `SledStore`, compiled into one binary.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

mod common;

mod behaviour;
mod concurrency;
mod conformance;
mod crash;
mod events;
mod lifecycle;
mod open;
mod passes;
mod scale;
#[cfg(feature = "search")]
mod search;
#[cfg(feature = "transfer")]
mod transfer;
