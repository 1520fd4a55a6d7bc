//! concurrency
