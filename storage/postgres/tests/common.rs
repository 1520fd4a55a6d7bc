//! Helpers shared by the tests.

use assetlib_postgres::PgStore;
use assetlib_testkit::postgres::{TestCluster, TestDatabase};

/// A store over a fresh, migrated database; the database lives as long as the guard.
pub(crate) async fn store() -> (PgStore, TestDatabase) {
    let db = TestCluster::shared().database().await;
    let store = PgStore::connect(db.url()).await.expect("connect");
    (store, db)
}

/// Another store over the same database: a second replica.
pub(crate) async fn replica(db: &TestDatabase) -> PgStore {
    PgStore::connect(db.url()).await.expect("connect")
}

/// A plain connection to the database at `url` (and the task driving it): to write a schema as
/// an older version of this crate left it, or to read what the store keeps behind its API.
pub(crate) async fn raw_client(url: &str) -> (tokio_postgres::Client, tokio::task::JoinHandle<()>) {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    let conn = tokio::spawn(async move {
        let _ = conn.await;
    });
    (client, conn)
}
