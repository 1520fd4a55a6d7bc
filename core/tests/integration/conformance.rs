use assetlib_core::MemoryStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_passes_the_conformance_suite() {
    assetlib_core::testing::run_all(|| async { (MemoryStore::new(), ()) }).await;
}

#[cfg(feature = "search")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_stemming_in_english_passes_the_stemming_cases() {
    use assetlib_core::search::Language;
    use assetlib_core::testing::{STEMMING_CASES, run_cases};
    let mut make = || async { (MemoryStore::with_search_language(Language::English), ()) };
    run_cases(STEMMING_CASES, &mut make).await;
}
