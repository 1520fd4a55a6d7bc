//! The test cluster itself: a cluster of its own starts, serves, and is gone once dropped.

use std::time::Duration;

use assetlib_postgres::PgStore;
use assetlib_testkit::postgres::TestCluster;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_cluster_keeps_its_data_across_starts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("kept");
    let first = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || TestCluster::durable_in(path))
            .await
            .expect("start")
    };
    let db = first.database().await;
    let name = db.name().to_owned();
    let store = PgStore::connect(db.url()).await.expect("connect");
    let asset = assetlib_core::testing::sample_asset("Kept", assetlib_core::AssetType::Pdf, 0);
    let log = assetlib_core::events::Log::ANONYMOUS;
    assetlib_core::AssetStore::insert_asset(&store, asset.clone(), log)
        .await
        .expect("insert");
    drop(store);
    // Keep the database: dropping a TestDatabase drops it.
    std::mem::forget(db);
    tokio::task::spawn_blocking(move || drop(first))
        .await
        .expect("stop");
    assert!(
        path.join("data").join("PG_VERSION").is_file(),
        "the data stays"
    );

    let again = tokio::task::spawn_blocking(move || TestCluster::durable_in(path))
        .await
        .expect("start again");
    let store = PgStore::connect(&again.url(&name))
        .await
        .expect("reconnect");
    let kept = assetlib_core::AssetStore::get_asset(&store, asset.id)
        .await
        .expect("read");
    assert_eq!(kept.map(|a| a.title), Some("Kept".to_owned()));
    drop(store);
    tokio::task::spawn_blocking(move || drop(again))
        .await
        .expect("stop");
}
