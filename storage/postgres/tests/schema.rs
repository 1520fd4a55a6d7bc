//! A schema of its own: a custom name, tables qualified whatever the `search_path`, and two
//! stores in two schemas of one database that do not see each other.

use assetlib_core::store::prelude::*;
use assetlib_core::testing::sample_asset;
use assetlib_core::{AssetQuery, AssetType};
use assetlib_postgres::{PgConfig, PgStore};
use assetlib_testkit::postgres::TestCluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_schema_holds_every_table() {
    let db = TestCluster::shared().empty_database().await;
    // An app whose own search_path leads elsewhere: every name must be qualified.
    {
        let setup = PgStore::connect_with(db.url(), PgConfig::new().schema("setup"))
            .await
            .expect("connect");
        let client = setup.pool().get().await.expect("connection");
        client
            .batch_execute(&format!(
                "CREATE SCHEMA app; ALTER DATABASE {} SET search_path = app",
                db.name()
            ))
            .await
            .expect("search_path");
    }
    let tenant = PgStore::connect_with(db.url(), PgConfig::new().schema("tenant_a"))
        .await
        .expect("connect tenant_a");
    assert_eq!(tenant.schema(), "tenant_a");
    let other = PgStore::connect_with(db.url(), PgConfig::new().schema("tenant_b"))
        .await
        .expect("connect tenant_b");
    let a = tenant
        .insert_asset(sample_asset("Only in A", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    assert_eq!(tenant.get_asset(a.id).await.unwrap(), Some(a.clone()));
    assert_eq!(other.get_asset(a.id).await.unwrap(), None);
    assert_eq!(
        other
            .list_assets(&AssetQuery::default())
            .await
            .unwrap()
            .total,
        0
    );
    let client = tenant.pool().get().await.expect("connection");
    let tables: Vec<String> = client
        .query(
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = 'tenant_a' ORDER BY 1",
            &[],
        )
        .await
        .expect("tables")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        tables,
        [
            "api_keys",
            "asset_counters",
            "asset_counts",
            "asset_draft_counts",
            "asset_tags",
            "asset_text_words",
            "asset_texts",
            "asset_versions",
            "assets",
            "events",
            "libraries",
            "library_counters",
            "library_entries",
            "library_sections",
            "passes",
            "schema_migrations",
            "search_index",
            "secrets",
            "slug_counters",
            "tag_counts",
            "transfer_mark",
            "uploads",
            "webhook_deliveries",
            "webhooks",
        ]
    );
    let stray: i64 = client
        .query_one(
            "SELECT count(*) FROM information_schema.tables \
             WHERE table_schema IN ('assetlib', 'app', 'public')",
            &[],
        )
        .await
        .expect("count")
        .get(0);
    assert_eq!(stray, 0, "no table outside the store's schemas");
}
