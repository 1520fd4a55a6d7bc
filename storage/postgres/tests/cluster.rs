//! The test cluster itself: a cluster of its own starts, serves, and is gone once dropped.

use std::time::Duration;

use assetlib_postgres::PgStore;
use assetlib_postgres::testing::TestCluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_cluster_stops_its_server() {
    let cluster = tokio::task::spawn_blocking(TestCluster::start)
        .await
        .expect("start");
    assert_ne!(cluster.port(), TestCluster::shared().port());
    let url = cluster.url("postgres");
    assert!(url.starts_with("postgres://postgres@127.0.0.1:"), "{url}");
    let db = cluster.database().await;
    let store = PgStore::connect(db.url()).await.expect("connect");
    drop(store);
    drop(db);
    tokio::task::spawn_blocking(move || drop(cluster))
        .await
        .expect("stop");
    let refused = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::net::TcpStream::connect(
            url.trim_start_matches("postgres://postgres@")
                .trim_end_matches("/postgres"),
        ),
    )
    .await
    .expect("connect attempt timed out");
    assert!(refused.is_err(), "the server still listens after the drop");
}
