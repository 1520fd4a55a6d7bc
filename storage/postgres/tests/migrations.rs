//! Migrations: concurrent first connects, reconnects, an upgrade of a database with data in
//! it, and a schema newer than this crate.

use assetlib_core::testing::sample_asset;
use assetlib_core::{AssetChange, AssetQuery, AssetStatus, AssetType, Store};
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

/// A database at version 2 with drafts in it is upgraded at connect: the drafts are counted,
/// and every list total is exact from then on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_from_version_2_counts_the_drafts_there() {
    let db = TestCluster::shared().empty_database().await;
    let (client, conn) = tokio_postgres::connect(db.url(), tokio_postgres::NoTls)
        .await
        .expect("connect");
    let conn = tokio::spawn(conn);
    let fill = |sql: &str| {
        sql.replace("__SCHEMA__", "\"assetlib\"")
            .replace("__TRGM__", "\"public\"")
    };
    client
        .batch_execute(&format!(
            "CREATE EXTENSION pg_trgm; CREATE SCHEMA assetlib; \
             CREATE TABLE assetlib.schema_migrations ( \
                 version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now()); \
             {}; {}; \
             INSERT INTO assetlib.schema_migrations (version) VALUES (1), (2); \
             INSERT INTO assetlib.assets (id, title, title_lower, slug, asset_type, is_public, \
                 published, created_at, updated_at) \
             SELECT gen_random_uuid(), 'Old ' || i, 'old ' || i, 'old-' || i, \
                 (ARRAY['pdf', 'image'])[1 + i % 2], true, i % 3 <> 0, now(), now() \
             FROM generate_series(1, 12) AS i; \
             INSERT INTO assetlib.asset_counters (asset_id) SELECT id FROM assetlib.assets;",
            fill(include_str!("../migrations/0001_initial.sql")),
            fill(include_str!("../migrations/0002_sharded_asset_counts.sql")),
        ))
        .await
        .expect("a version 2 database");
    drop(client);
    let _ = conn.await;

    let store = PgStore::connect(db.url()).await.expect("upgrade");
    assert_eq!(
        versions(&store, "assetlib").await,
        (1..=SCHEMA_VERSION).collect::<Vec<_>>()
    );
    let total = |status: AssetStatus, asset_type: Option<AssetType>| {
        let store = store.clone();
        async move {
            let q = AssetQuery {
                status,
                asset_type,
                ..AssetQuery::default()
            };
            store.list_assets(&q).await.expect("list").total
        }
    };
    // i = 3, 6, 9, 12 are drafts: 6 and 12 pdfs, 3 and 9 images.
    assert_eq!(total(AssetStatus::Published, None).await, 8);
    assert_eq!(total(AssetStatus::Draft, None).await, 4);
    assert_eq!(total(AssetStatus::Any, None).await, 12);
    assert_eq!(total(AssetStatus::Draft, Some(AssetType::Pdf)).await, 2);
    assert_eq!(total(AssetStatus::Draft, Some(AssetType::Image)).await, 2);

    // Counted from then on: a draft published, a new draft.
    let drafts = store
        .list_assets(&AssetQuery {
            status: AssetStatus::Draft,
            ..AssetQuery::default()
        })
        .await
        .expect("drafts");
    let first = &drafts.items[0];
    let mut publish = AssetChange::at(first.updated_at);
    publish.published = Some(true);
    store
        .update_asset(first.id, &publish)
        .await
        .expect("publish")
        .expect("exists");
    let mut draft = sample_asset("New draft", AssetType::Pdf, 1);
    draft.published = false;
    store.insert_asset(draft).await.expect("insert");
    assert_eq!(total(AssetStatus::Published, None).await, 9);
    assert_eq!(total(AssetStatus::Draft, None).await, 4);
    assert_eq!(total(AssetStatus::Any, None).await, 13);
}
