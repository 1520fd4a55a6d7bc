//! Workspaces on PostgreSQL: the upgrade of a database of version 14 (no workspaces on
//! assets and keys, library slugs unique over every workspace).

use assetlib_core::store::prelude::*;
use assetlib_core::testing::{sample_asset, sample_library};
use assetlib_core::{AssetQuery, AssetType, LibraryWrite, SlugHolder, StoreError};
use assetlib_postgres::PgStore;
use assetlib_testkit::postgres::TestCluster;

use crate::common::raw_client;
use crate::migrations::at_version;

/// A database at version 14 with an asset, a key and two libraries named `kit` and `plain`
/// (the first of workspace `acme`) is upgraded at connect: every record is kept, of no
/// workspace but the library; slugs are then unique per workspace, and workspaces' lists and
/// counts work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_from_version_14_keeps_every_record_of_no_workspace() {
    let db = TestCluster::shared().empty_database().await;
    let (client, conn) = raw_client(db.url()).await;
    at_version(&client, 14).await;
    let logo = uuid::Uuid::new_v4();
    let (kit, plain) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    client
        .batch_execute(&format!(
            "INSERT INTO assetlib.assets (id, title, title_lower, slug, asset_type, is_public, \
                 published, created_at, updated_at, tags, tag_keys) \
             VALUES ('{logo}', 'Logo', 'logo', 'logo', 'image', false, true, \
                     '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z', '{{Brand}}', '{{brand}}'); \
             INSERT INTO assetlib.asset_counters (asset_id, download_count) \
                 VALUES ('{logo}', 3); \
             INSERT INTO assetlib.api_keys (id, name, key_hash, scopes, created_at) \
                 VALUES (gen_random_uuid(), 'admin', '\\x{hash}', '{{read:assets}}', now()); \
             INSERT INTO assetlib.libraries (id, title, slug, workspace_id, show_asset_count, \
                 allow_individual_downloads, allow_bulk_download, is_paid, currency, \
                 published, published_at, created_at, updated_at) \
             VALUES ('{kit}', 'Kit', 'kit', 'acme', true, true, true, false, 'USD', true, \
                     now(), now(), now()), \
                    ('{plain}', 'Plain', 'plain', NULL, true, true, true, false, 'USD', true, \
                     now(), now(), now()); \
             INSERT INTO assetlib.library_counters (library_id, content_version, published) \
                 SELECT id, nextval('assetlib.content_versions'), true \
                 FROM assetlib.libraries;",
            hash = "09".repeat(32),
        ))
        .await
        .expect("records of version 14");
    drop(client);
    let _ = conn.await;

    let store = PgStore::connect(db.url()).await.expect("upgrade");
    let asset = store.get_asset(logo).await.expect("get").expect("logo");
    assert_eq!((asset.slug.as_str(), asset.download_count), ("logo", 3));
    assert_eq!(asset.workspace_id, None);
    let key = store.find_key(&[9; 32]).await.expect("key").expect("admin");
    assert_eq!(key.workspace_id, None);
    assert_eq!(
        store.libraries_by_slug("kit").await.expect("slug"),
        [SlugHolder {
            workspace_id: Some("acme".into()),
            id: kit
        }]
    );
    assert_eq!(
        store.libraries_by_slug("plain").await.expect("slug"),
        [SlugHolder {
            workspace_id: None,
            id: plain
        }]
    );

    // Slugs are unique per workspace from now on.
    let mut mine = sample_asset("Logo", AssetType::Image, 5);
    mine.workspace_id = Some("acme".into());
    mine.tags = vec!["Brand".into()];
    let stored = store
        .insert_asset(mine.clone(), Log::ANONYMOUS)
        .await
        .expect("insert");
    assert_eq!(stored.slug, "logo");
    let again = store
        .insert_asset(sample_asset("Logo", AssetType::Image, 6), Log::ANONYMOUS)
        .await
        .expect("insert");
    assert_eq!(
        again.slug, "logo-2",
        "the slug is taken where there is no workspace"
    );
    let put = |workspace: &str, slug_given| {
        let mut library = sample_library("Kit", 7);
        library.settings.workspace_id = Some(workspace.to_owned());
        LibraryWrite {
            library,
            slug_given,
            sections: vec![],
            entries: vec![],
        }
    };
    store
        .put_library(put("globex", true), Log::ANONYMOUS)
        .await
        .expect("kit is free in globex");
    match store.put_library(put("acme", true), Log::ANONYMOUS).await {
        Err(StoreError::SlugTaken { slug }) => assert_eq!(slug, "kit"),
        other => panic!("expected SlugTaken, got {other:?}"),
    }
    let third = put("acme", false);
    let id = third.library.id;
    store.put_library(third, Log::ANONYMOUS).await.expect("put");
    let loaded = store.load_library(id).await.expect("load").expect("kit-2");
    assert_eq!(loaded.library.slug, "kit-2");

    // A workspace's list, with its total, and the tag list without workspaces.
    let of_acme = AssetQuery {
        workspace_id: Some("acme".into()),
        ..AssetQuery::default()
    };
    let page = store.list_assets(&of_acme).await.expect("list");
    assert_eq!(
        (
            page.total,
            page.items.iter().map(|a| a.id).collect::<Vec<_>>()
        ),
        (1, vec![mine.id])
    );
    let tags = store.list_tags(10).await.expect("tags");
    assert_eq!(tags.len(), 1);
    assert_eq!((tags[0].tag.as_str(), tags[0].count), ("brand", 2));
}
