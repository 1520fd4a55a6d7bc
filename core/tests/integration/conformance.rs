use assetlib_core::MemoryStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_store_passes_the_conformance_suite() {
    assetlib_core::testing::run_all(|| async { (MemoryStore::new(), ()) }).await;
}
