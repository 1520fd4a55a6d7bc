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
