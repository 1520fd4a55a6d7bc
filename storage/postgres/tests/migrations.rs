//! Migrations: concurrent first connects, reconnects, and a schema newer than this crate.

use assetlib_core::testing::sample_asset;
use assetlib_core::{AssetType, Store};
use assetlib_postgres::testing::TestCluster;
use assetlib_postgres::{Error, PgConfig, PgStore, SCHEMA_VERSION};

/// The versions recorded in `schema_migrations` of `schema`.
async fn versions(store: &PgStore, schema: &str) -> Vec<i32> {
    let client = store.pool().get().await.expect("connection");
    client
        .query(
            &format!("SELECT version FROM \"{schema}\".schema_migrations ORDER BY version"),
            &[],
        )
        .await
        .expect("versions")
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_connects_both_succeed() {
    let db = TestCluster::shared().empty_database().await;
    let connects: Vec<_> = (0..2)
        .map(|_| {
            let url = db.url().to_owned();
            tokio::spawn(async move { PgStore::connect(&url).await })
        })
        .collect();
    let mut stores = Vec::new();
    for c in connects {
        stores.push(c.await.expect("task").expect("connect"));
    }
    assert_eq!(
        versions(&stores[0], "assetlib").await,
        (1..=SCHEMA_VERSION).collect::<Vec<_>>()
    );
    // Both work on the one schema.
    let a = stores[0]
        .insert_asset(sample_asset("Shared", AssetType::Pdf, 1))
        .await
        .expect("insert");
    assert_eq!(stores[1].get_asset(a.id).await.expect("get"), Some(a));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_is_a_no_op() {
    let db = TestCluster::shared().empty_database().await;
    let first = PgStore::connect(db.url()).await.expect("connect");
    let a = first
        .insert_asset(sample_asset("Kept", AssetType::Image, 1))
        .await
        .expect("insert");
    drop(first);
    let again = PgStore::connect(db.url()).await.expect("reconnect");
    assert_eq!(
        versions(&again, "assetlib").await,
        (1..=SCHEMA_VERSION).collect::<Vec<_>>()
    );
    assert_eq!(again.get_asset(a.id).await.expect("get"), Some(a));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newer_schema_is_refused() {
    let db = TestCluster::shared().database().await;
    let store = PgStore::connect(db.url()).await.expect("connect");
    let client = store.pool().get().await.expect("connection");
    client
        .execute(
            "INSERT INTO assetlib.schema_migrations (version) VALUES ($1)",
            &[&(SCHEMA_VERSION + 1)],
        )
        .await
        .expect("record a newer version");
    drop(client);
    drop(store);
    let err = PgStore::connect(db.url())
        .await
        .expect_err("a newer schema is refused");
    match &err {
        Error::SchemaTooNew {
            schema,
            found,
            supported,
        } => {
            assert_eq!(schema, "assetlib");
            assert_eq!(*found, SCHEMA_VERSION + 1);
            assert_eq!(*supported, SCHEMA_VERSION);
        }
        other => panic!("expected SchemaTooNew, got {other:?}"),
    }
    let message = err.to_string();
    assert_eq!(
        message,
        format!(
            "schema \"assetlib\" is at version {}, newer than this version of \
             assetlib-postgres knows (it supports versions up to {}); run a newer \
             assetlib-postgres against this database",
            SCHEMA_VERSION + 1,
            SCHEMA_VERSION
        )
    );
}

#[tokio::test]
async fn schema_names_must_be_plain_identifiers() {
    for bad in [
        "",
        "Upper",
        "1st",
        "with-dash",
        "quote\"d",
        "pg_catalog",
        "white space",
        "ünïcode",
        &"x".repeat(64),
    ] {
        // The name is checked before any connection is tried.
        let err = PgStore::connect_with(
            "postgres://nobody@127.0.0.1:1/none",
            PgConfig::new().schema(bad),
        )
        .await
        .expect_err(bad);
        assert!(
            matches!(&err, Error::InvalidSchemaName { name } if name == bad),
            "{bad:?}: {err:?}"
        );
    }
}
