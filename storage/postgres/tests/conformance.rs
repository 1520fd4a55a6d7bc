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
