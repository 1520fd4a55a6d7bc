//! Core's store conformance suite, each case on a fresh store in its own directory.

use crate::common::store;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite() {
    assetlib_core::testing::run_all(|| async { store() }).await;
}

/// The stemming cases, on stores whose search stems in English.
#[cfg(feature = "search")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stemming_cases() {
    use assetlib_core::search::Language;
    use assetlib_core::testing::{STEMMING_CASES, run_cases};
    use assetlib_sled::SledConfig;
    let english = SledConfig::default().search_language(Some(Language::English));
    let mut make = || {
        let config = english.clone();
        async move { crate::common::store_with(config) }
    };
    run_cases(STEMMING_CASES, &mut make).await;
}
