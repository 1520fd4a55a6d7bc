//! Moving data on PostgreSQL (feature `transfer`) beyond core's conformance cases: a store
//! filled through its API and by an import, with counts still in memory, copied into a fresh
//! database, exports alike and keeps every list, count and slug number; the other replicas
//! of the target learn of the copy; and a schema of version 21 takes the transfer mark.

use std::time::{Duration, Instant};

use assetlib_core::store::TransferStore;
use assetlib_core::store::prelude::*;
use assetlib_core::testing::{sample_asset, sample_library, sample_pass};
use assetlib_core::transfer::{Record, copy_records};
use assetlib_core::{
    ApiKey, AssetQuery, AssetStatus, AssetType, LibraryEntry, LibraryWrite, Scope, Section,
};
use assetlib_postgres::{PgStore, SCHEMA_VERSION};
use assetlib_testkit::postgres::TestCluster;
use futures_util::TryStreamExt as _;
use uuid::Uuid;

use crate::common::{raw_client, replica, store};

/// Every record `store` exports, each library's sections and entries in a fixed order.
async fn exported(store: &PgStore) -> Vec<Record> {
    let mut records: Vec<Record> = TransferStore::export(store)
        .await
        .expect("export")
        .try_collect()
        .await
        .expect("every record");
    for record in &mut records {
        if let Record::Library(l) = record {
            l.sections.sort_by_key(|s| s.id);
            l.entries.sort_by_key(|e| e.asset_id);
        }
    }
    records
}

/// Assets of a title many share, with tags, a workspace and drafts, written through the API;
/// then `bulk` more by an import (more than a page of the export and a batch of a copy).
async fn fill(store: &PgStore, bulk: usize) -> Vec<assetlib_core::Asset> {
    store.rotate_signing_secret([3; 32]).await.expect("secret");
    let key = ApiKey {
        id: Uuid::new_v4(),
        name: "ci".into(),
        key_hash: [1; 32],
        scopes: vec![Scope::ReadAssets, Scope::WriteAssets],
        created_at: chrono::Utc::now(),
        expires_at: None,
        revoked_at: None,
        workspace_id: Some("acme".into()),
    };
    store.insert_key(key, Log::ANONYMOUS).await.expect("key");
    let mut written = Vec::new();
    for n in 0..4i64 {
        let mut asset = sample_asset("Logo", AssetType::Image, n);
        asset.tags = vec!["Brand".into(), format!("v{n}")];
        asset.published = n != 2;
        asset.workspace_id = (n == 3).then(|| "acme".to_owned());
        written.push(
            store
                .insert_asset(asset, Log::ANONYMOUS)
                .await
                .expect("asset"),
        );
    }
    let slugs: Vec<&str> = written.iter().map(|a| a.slug.as_str()).collect();
    assert_eq!(slugs, ["logo", "logo-2", "logo-3", "logo"]);
    // Counted in memory, not yet written.
    for _ in 0..3 {
        store
            .record_download(written[0].id)
            .await
            .expect("download");
    }
    #[cfg(feature = "search")]
    {
        use assetlib_core::store::{AssetText, SearchStore as _};
        let text = AssetText {
            pages: vec!["harbour at dawn".into(), "it's a \\ test".into()],
            paged: true,
        };
        store
            .set_asset_text(written[0].id, text)
            .await
            .expect("text");
    }
    let library = sample_library("Press kit", 10);
    let logos = Section {
        id: Uuid::new_v4(),
        title: "Logos".into(),
        description: None,
        display_order: 0,
        collapsed_by_default: true,
    };
    let entries = written[..3]
        .iter()
        .zip(0u32..)
        .map(|(a, order)| LibraryEntry {
            asset_id: a.id,
            section_id: (order < 2).then_some(logos.id),
            display_order: order,
            title: (order == 1).then(|| "Their logo".to_owned()),
            description: None,
        })
        .collect();
    let library_id = library.id;
    store
        .put_library(
            LibraryWrite {
                library,
                slug_given: false,
                sections: vec![logos],
                entries,
            },
            Log::ANONYMOUS,
        )
        .await
        .expect("library");
    for _ in 0..2 {
        store.record_library_view(library_id).await.expect("view");
    }
    let mut pass = sample_pass(library_id, 4, 20);
    pass.asset_ids = Some(vec![written[0].id]);
    store.insert_pass(pass, Log::ANONYMOUS).await.expect("pass");
    let many: Vec<Record> = (0..bulk)
        .map(|n| {
            let secs = 100 + i64::try_from(n).expect("few");
            // `bulk-N`, then `bulk-N-2` to `bulk-N-4`, as inserts of one title number them.
            let mut asset = sample_asset(&format!("Bulk {}", n % 700), AssetType::Pdf, secs);
            if n >= 700 {
                asset.slug = format!("{}-{}", asset.slug, n / 700 + 1);
            }
            asset.tags = vec![format!("batch {}", n % 3)];
            asset.download_count = u64::try_from(n % 5).expect("small");
            Record::Asset(asset)
        })
        .collect();
    for batch in many.chunks(500) {
        TransferStore::import(store, batch).await.expect("import");
    }
    written
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filled_store_copied_into_a_fresh_database_exports_alike() {
    let (source, _source_db) = store().await;
    let logos = fill(&source, 2_400).await;
    let (target, target_db) = store().await;
    let watcher = replica(&target_db).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while !watcher.listening() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (assets_before, keys_before) = (
        watcher.assets_version().await.expect("version"),
        watcher.keys_version(),
    );

    let counts = copy_records(&source, &target, |_| {}).await.expect("copy");
    assert_eq!(counts.assets, 2_404);
    assert_eq!(counts, source.record_counts().await.expect("counts"));
    assert_eq!(counts, target.record_counts().await.expect("counts"));
    let records = exported(&source).await;
    assert!(
        records
            .iter()
            .any(|r| matches!(r, Record::Asset(a) if a.id == logos[0].id && a.download_count == 3)),
        "the downloads counted in memory are exported"
    );
    assert_eq!(exported(&target).await, records);

    // What the schema keeps beside the records: list totals, tag lists and counts,
    // workspace lists, the entries' copies, view counts.
    let lists = [
        AssetQuery {
            status: AssetStatus::Any,
            ..AssetQuery::default()
        },
        AssetQuery::default(),
        AssetQuery {
            status: AssetStatus::Draft,
            ..AssetQuery::default()
        },
        AssetQuery {
            tags: vec!["brand".into()],
            status: AssetStatus::Any,
            ..AssetQuery::default()
        },
        AssetQuery {
            tags: vec!["batch 1".into()],
            ..AssetQuery::default()
        },
        AssetQuery {
            workspace_id: Some("acme".into()),
            ..AssetQuery::default()
        },
    ];
    for q in &lists {
        let (a, b) = (
            source.list_assets(q).await.expect("list"),
            target.list_assets(q).await.expect("list"),
        );
        assert_eq!((a.total, a.items), (b.total, b.items), "{q:?}");
    }
    assert_eq!(
        target.list_tags(10).await.expect("tags"),
        source.list_tags(10).await.expect("tags")
    );
    let library = |store: &PgStore| {
        let store = store.clone();
        async move {
            let id = store
                .list_libraries(&Default::default())
                .await
                .expect("list")
                .items[0]
                .library
                .id;
            store
                .load_library(id)
                .await
                .expect("load")
                .expect("a library")
        }
    };
    let (a, b) = (library(&source).await, library(&target).await);
    assert_eq!(b.library.view_count, 2);
    assert_eq!(
        (a.library, a.sections, a.entries),
        (b.library, b.sections, b.entries)
    );

    // The next insert of a taken title takes the next number, here and in the imported bulk.
    let next = |title: &str, secs| {
        let target = target.clone();
        let asset = sample_asset(title, AssetType::Image, secs);
        async move {
            target
                .insert_asset(asset, Log::ANONYMOUS)
                .await
                .expect("insert")
                .slug
        }
    };
    assert_eq!(next("Logo", 9_000).await, "logo-4");
    assert_eq!(next("Bulk 5", 9_001).await, "bulk-5-5");

    // The other replica of the target learnt of the copy.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let moved = watcher.assets_version().await.expect("version") != assets_before
            && watcher.keys_version() != keys_before;
        if moved {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the replica did not learn of the copy"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A database at version 21 with an event in its log is upgraded at connect: the log is kept
/// and exported, and the mark is kept for every replica until it is cleared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_from_version_21_keeps_the_log_and_takes_the_mark() {
    let db = TestCluster::shared().empty_database().await;
    let (client, conn) = raw_client(db.url()).await;
    crate::migrations::at_version(&client, 21).await;
    let (event, asset) = (Uuid::new_v4(), Uuid::new_v4());
    client
        .execute(
            "INSERT INTO assetlib.events (id, type, occurred_at, resource_type, resource_id, \
                 changed) VALUES ($1, 'asset.created', now(), 'asset', $2, '{}')",
            &[&event, &asset],
        )
        .await
        .expect("event");
    drop(client);
    let _ = conn.await;

    let store = PgStore::connect(db.url()).await.expect("upgrade");
    let (client, conn) = raw_client(db.url()).await;
    let version: i32 = client
        .query_one("SELECT max(version) FROM assetlib.schema_migrations", &[])
        .await
        .expect("versions")
        .get(0);
    assert_eq!(version, SCHEMA_VERSION);
    drop(client);
    let _ = conn.await;

    let counts = store.record_counts().await.expect("counts");
    assert_eq!((counts.events, counts.total()), (1, 1));
    let records = exported(&store).await;
    assert!(
        matches!(&records[..], [Record::Event(e)] if e.id == event && e.resource_id == asset),
        "{records:?}"
    );
    assert_eq!(store.transfer_mark().await.expect("mark"), None);
    store
        .set_transfer_mark(Some("restore of backup-1"))
        .await
        .expect("set");
    let other = replica(&db).await;
    assert_eq!(
        other.transfer_mark().await.expect("mark").as_deref(),
        Some("restore of backup-1")
    );
    other.set_transfer_mark(None).await.expect("clear");
    assert_eq!(store.transfer_mark().await.expect("mark"), None);
}
