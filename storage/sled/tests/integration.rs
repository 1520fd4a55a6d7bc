//! Integration tests of `SledStore`, compiled into one binary.

mod common;

mod behaviour;
mod concurrency;
mod conformance;
mod crash;
mod open;
mod scale;
