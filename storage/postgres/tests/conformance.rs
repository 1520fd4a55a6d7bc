//! Core's store conformance suite, each case on a fresh database.

use assetlib_postgres::PgStore;
use assetlib_testkit::postgres::TestCluster;

/// The suite runs on a server of its own: the event feed shows an event only once every
/// transaction of the server that started before it has ended (`crate::events`), so the other
/// tests' transactions on the shared server would hold back the events its cases count right
/// after a write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite() {
    let cluster = TestCluster::start();
    let cluster = &cluster;
    assetlib_core::testing::run_all(move || async move {
        let db = cluster.database().await;
        let store = PgStore::connect(db.url()).await.expect("connect");
        (store, db)
    })
    .await;
}

/// The stemming cases (core's `STEMMING_CASES`), on databases whose store stems in English.
#[cfg(feature = "search")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stemming_cases() {
    use assetlib_core::search::Language;
    use assetlib_core::testing::{STEMMING_CASES, run_cases};
    use assetlib_postgres::PgConfig;
    let config = || PgConfig::new().search_language(Some(Language::English));
    let cluster = TestCluster::start();
    let cluster = &cluster;
    let mut make = move || async move {
        let db = cluster.database().await;
        let store = PgStore::connect_with(db.url(), config())
            .await
            .expect("connect");
        (store, db)
    };
    run_cases(STEMMING_CASES, &mut make).await;
}
