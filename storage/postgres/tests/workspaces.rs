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

/// A database at version 15 with a webhook and an event is upgraded at connect: both are
/// kept, of no workspace; new events carry theirs, and the feed filters by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_from_version_15_keeps_webhooks_and_events_of_no_workspace() {
    use assetlib_core::events::{EventCursor, EventQuery, EventType};
    use assetlib_core::store::{EventStore, WebhookStore};
    let db = TestCluster::shared().empty_database().await;
    let (client, conn) = raw_client(db.url()).await;
    at_version(&client, 15).await;
    let (hook, event, asset) = (
        uuid::Uuid::new_v4(),
        uuid::Uuid::new_v4(),
        uuid::Uuid::new_v4(),
    );
    client
        .batch_execute(&format!(
            "INSERT INTO assetlib.webhooks (id, url, event_types, enabled, secret, created_at, \
                 updated_at, stream_xid, stream_seq) \
             VALUES ('{hook}', 'https://hooks.example.com/a', '{{*}}', false, 'whsec_a', \
                     now(), now(), 0, 0); \
             INSERT INTO assetlib.events (id, type, occurred_at, resource_type, resource_id, \
                 changed) \
             VALUES ('{event}', 'asset.created', now(), 'asset', '{asset}', '{{}}');"
        ))
        .await
        .expect("records of version 15");
    drop(client);
    let _ = conn.await;

    let store = PgStore::connect(db.url()).await.expect("upgrade");
    let kept = store.get_webhook(hook).await.expect("get").expect("kept");
    assert_eq!(kept.workspace_id, None);
    let feed = |workspace: Option<&str>| EventQuery {
        after: EventCursor::START,
        kind: None,
        resource: None,
        workspace: workspace.map(str::to_owned),
        limit: 100,
    };
    let old = store.list_events(&feed(None)).await.expect("feed").events;
    assert_eq!(old.len(), 1);
    assert_eq!((old[0].id, old[0].workspace_id.as_deref()), (event, None));

    let mut mine = sample_asset("Mine", AssetType::Image, 5);
    mine.workspace_id = Some("acme".into());
    store
        .insert_asset(mine.clone(), Log::ANONYMOUS)
        .await
        .expect("insert");
    // The feed holds an event back while an older transaction of the cluster runs (other
    // tests share it).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let acme = loop {
        let page = store.list_events(&feed(Some("acme"))).await.expect("feed");
        if !page.events.is_empty() || std::time::Instant::now() > deadline {
            break page.events;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    };
    assert_eq!(acme.len(), 1);
    assert_eq!(
        (
            acme[0].kind,
            acme[0].resource_id,
            acme[0].workspace_id.as_deref()
        ),
        (EventType::AssetCreated, mine.id, Some("acme"))
    );
    assert_eq!(
        store
            .list_events(&feed(None))
            .await
            .expect("feed")
            .events
            .len(),
        2
    );
}
