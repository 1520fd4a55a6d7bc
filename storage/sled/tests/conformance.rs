//! Core's store conformance suite, each case on a fresh store in its own directory.

use crate::common::store;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite() {
    assetlib_core::testing::run_all(|| async { store() }).await;
}
