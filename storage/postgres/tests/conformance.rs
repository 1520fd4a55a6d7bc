//! Core's store conformance suite, each case on a fresh database.

use crate::common::store;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite() {
    assetlib_core::testing::run_all(store).await;
}
