//! Migrations: concurrent first connects, reconnects, upgrades of databases with data in
//! them, and a schema newer than this crate.

use assetlib_core::store::prelude::*;
use assetlib_core::testing::{entry_copies, sample_asset};
use assetlib_core::{AssetChange, AssetQuery, AssetStatus, AssetType, EntryAsset, Scope};
use assetlib_postgres::{Error, PgConfig, PgStore, SCHEMA_VERSION};
use assetlib_testkit::postgres::TestCluster;

use crate::common::raw_client;

/// The versions a fully migrated schema records: 1 to [`SCHEMA_VERSION`].
fn all_versions() -> Vec<i32> {
    (1..=SCHEMA_VERSION).collect()
}

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
    assert_eq!(versions(&stores[0], "assetlib").await, all_versions());
    // Both work on the one schema.
    let a = stores[0]
        .insert_asset(sample_asset("Shared", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    assert_eq!(stores[1].get_asset(a.id).await.expect("get"), Some(a));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_is_a_no_op() {
    let db = TestCluster::shared().empty_database().await;
    let first = PgStore::connect(db.url()).await.expect("connect");
    let a = first
        .insert_asset(sample_asset("Kept", AssetType::Image, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    drop(first);
    let again = PgStore::connect(db.url()).await.expect("reconnect");
    assert_eq!(versions(&again, "assetlib").await, all_versions());
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

/// A migration's SQL as the store runs it: the store's schema `assetlib`, pg_trgm in `public`.
pub(crate) fn fill(sql: &str) -> String {
    sql.replace("__SCHEMA__", "\"assetlib\"")
        .replace("__TRGM__", "\"public\"")
}

/// Every migration's SQL, in order: version `n` is `MIGRATIONS[n - 1]`.
const MIGRATIONS: [&str; 23] = [
    include_str!("../migrations/0001_initial.sql"),
    include_str!("../migrations/0002_sharded_asset_counts.sql"),
    include_str!("../migrations/0003_drafts.sql"),
    include_str!("../migrations/0004_secrets.sql"),
    include_str!("../migrations/0005_asset_versions.sql"),
    include_str!("../migrations/0006_entry_copies.sql"),
    include_str!("../migrations/0007_passes.sql"),
    include_str!("../migrations/0008_notices.sql"),
    include_str!("../migrations/0009_row_versions.sql"),
    include_str!("../migrations/0010_previews.sql"),
    include_str!("../migrations/0011_events.sql"),
    include_str!("../migrations/0012_webhooks.sql"),
    include_str!("../migrations/0013_uploads.sql"),
    include_str!("../migrations/0014_tags.sql"),
    include_str!("../migrations/0015_workspaces.sql"),
    include_str!("../migrations/0016_event_workspaces.sql"),
    include_str!("../migrations/0017_asset_notices.sql"),
    include_str!("../migrations/0018_search.sql"),
    include_str!("../migrations/0019_search_fields.sql"),
    include_str!("../migrations/0020_text_facets.sql"),
    include_str!("../migrations/0021_search_language.sql"),
    include_str!("../migrations/0022_transfer_mark.sql"),
    include_str!("../migrations/0023_asset_notice_orders.sql"),
];

/// Lays out an empty database as the store at schema `version` left it: migrations 1 to
/// `version`, each recorded.
pub(crate) async fn at_version(client: &tokio_postgres::Client, version: usize) {
    assert_eq!(
        MIGRATIONS.len(),
        SCHEMA_VERSION as usize,
        "a migration is missing here"
    );
    let mut setup = String::from(
        "CREATE EXTENSION pg_trgm; CREATE SCHEMA assetlib; \
         CREATE TABLE assetlib.schema_migrations ( \
             version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());",
    );
    for (i, sql) in MIGRATIONS[..version].iter().enumerate() {
        setup.push_str(&fill(sql));
        setup.push_str(&format!(
            "; INSERT INTO assetlib.schema_migrations (version) VALUES ({});",
            i + 1
        ));
    }
    client
        .batch_execute(&setup)
        .await
        .unwrap_or_else(|e| panic!("a version {version} database: {e}"));
}

/// A published library `library` ("Kit"), paid or not, with its counter row, as the
/// migrations before 7 lay libraries out.
async fn insert_library(client: &tokio_postgres::Client, library: uuid::Uuid, paid: bool) {
    client
        .execute(
            "INSERT INTO assetlib.libraries (id, title, slug, show_asset_count, \
                 allow_individual_downloads, allow_bulk_download, is_paid, currency, published, \
                 published_at, created_at, updated_at) \
             VALUES ($1, 'Kit', 'kit', true, true, true, $2, 'USD', true, now(), now(), \
                     now())",
            &[&library, &paid],
        )
        .await
        .expect("library");
    client
        .execute(
            "INSERT INTO assetlib.library_counters (library_id, content_version, published) \
             VALUES ($1, nextval('assetlib.content_versions'), true)",
            &[&library],
        )
        .await
        .expect("library counter");
}

/// A database at version 2 with drafts in it is upgraded at connect: the drafts are counted,
/// and every list total is exact from then on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_from_version_2_counts_the_drafts_there() {
    let db = TestCluster::shared().empty_database().await;
    let (client, conn) = raw_client(db.url()).await;
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
    assert_eq!(versions(&store, "assetlib").await, all_versions());
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
        .update_asset(first.id, &publish, Log::ANONYMOUS)
        .await
        .expect("publish")
        .expect("exists");
    let mut draft = sample_asset("New draft", AssetType::Pdf, 1);
    draft.published = false;
    store
        .insert_asset(draft, Log::ANONYMOUS)
        .await
        .expect("insert");
    assert_eq!(total(AssetStatus::Published, None).await, 9);
    assert_eq!(total(AssetStatus::Draft, None).await, 4);
    assert_eq!(total(AssetStatus::Any, None).await, 13);
}

/// A database at version 4 with libraries in it (and an entry whose asset is gone, which
/// version 1 allowed) is upgraded at connect: every entry gets a copy of its asset's page
/// fields, the dangling entry goes, and the copies follow changes from then on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_from_version_4_copies_the_assets_into_the_entries() {
    let db = TestCluster::shared().empty_database().await;
    let (client, conn) = raw_client(db.url()).await;
    let library = uuid::Uuid::new_v4();
    let (pdf, image, gone) = (
        uuid::Uuid::new_v4(),
        uuid::Uuid::new_v4(),
        uuid::Uuid::new_v4(),
    );
    client
        .batch_execute(&format!(
            "CREATE EXTENSION pg_trgm; CREATE SCHEMA assetlib; \
             CREATE TABLE assetlib.schema_migrations ( \
                 version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now()); \
             {}; {}; {}; {}; \
             INSERT INTO assetlib.schema_migrations (version) VALUES (1), (2), (3), (4);",
            fill(include_str!("../migrations/0001_initial.sql")),
            fill(include_str!("../migrations/0002_sharded_asset_counts.sql")),
            fill(include_str!("../migrations/0003_drafts.sql")),
            fill(include_str!("../migrations/0004_secrets.sql")),
        ))
        .await
        .expect("a version 4 database");
    client
        .execute(
            "INSERT INTO assetlib.assets (id, title, title_lower, slug, description, \
                 asset_type, thumbnail_path, is_public, published, created_at, updated_at) \
             VALUES ($1, 'Report', 'report', 'report', 'yearly', 'pdf', 'thumbs/r.png', true, \
                     true, now(), now()), \
                    ($2, 'Photo', 'photo', 'photo', NULL, 'image', NULL, true, false, now(), \
                     now())",
            &[&pdf, &image],
        )
        .await
        .expect("assets");
    client
        .execute(
            "INSERT INTO assetlib.asset_counters (asset_id) SELECT id FROM assetlib.assets",
            &[],
        )
        .await
        .expect("counters");
    insert_library(&client, library, false).await;
    client
        .execute(
            "INSERT INTO assetlib.library_entries (library_id, asset_id, display_order) \
             VALUES ($1, $2, 0), ($1, $3, 1), ($1, $4, 2)",
            &[&library, &pdf, &gone, &image],
        )
        .await
        .expect("entries");
    drop(client);
    let _ = conn.await;

    let store = PgStore::connect(db.url()).await.expect("upgrade");
    assert_eq!(versions(&store, "assetlib").await, all_versions());
    let report = EntryAsset {
        title: "Report".into(),
        description: Some("yearly".into()),
        asset_type: AssetType::Pdf,
        thumbnail_path: Some("thumbs/r.png".into()),
        thumbnail_placeholder: None,
        duration_ms: None,
        published: true,
        tags: vec![],
    };
    let mut photo = EntryAsset {
        title: "Photo".into(),
        description: None,
        asset_type: AssetType::Image,
        thumbnail_path: None,
        thumbnail_placeholder: None,
        duration_ms: None,
        published: false,
        tags: vec![],
    };
    assert_eq!(
        entry_copies(&store, library).await,
        vec![(pdf, report.clone()), (image, photo.clone())]
    );
    let listed = store
        .list_libraries(&assetlib_core::LibraryQuery::default())
        .await
        .expect("list libraries");
    assert_eq!(listed.items[0].asset_count, 1);

    let mut change = AssetChange::at(chrono::Utc::now());
    change.title = Some("Photo, renamed".into());
    change.published = Some(true);
    store
        .update_asset(image, &change, Log::ANONYMOUS)
        .await
        .expect("update")
        .expect("asset");
    photo.title = "Photo, renamed".into();
    photo.published = true;
    assert_eq!(
        entry_copies(&store, library).await,
        vec![(pdf, report), (image, photo)]
    );
}

/// A database at version 6 with keys in it is upgraded at connect: every key that may write
/// assets gains `read:paid` (once, after its other scopes), the others keep their scopes, and
/// the libraries there can have passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_from_version_6_gives_writers_of_assets_read_paid() {
    let db = TestCluster::shared().empty_database().await;
    let (client, conn) = raw_client(db.url()).await;
    client
        .batch_execute(&format!(
            "CREATE EXTENSION pg_trgm; CREATE SCHEMA assetlib; \
             CREATE TABLE assetlib.schema_migrations ( \
                 version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now()); \
             {}; {}; {}; {}; {}; {}; \
             INSERT INTO assetlib.schema_migrations (version) \
             VALUES (1), (2), (3), (4), (5), (6);",
            fill(include_str!("../migrations/0001_initial.sql")),
            fill(include_str!("../migrations/0002_sharded_asset_counts.sql")),
            fill(include_str!("../migrations/0003_drafts.sql")),
            fill(include_str!("../migrations/0004_secrets.sql")),
            fill(include_str!("../migrations/0005_asset_versions.sql")),
            fill(include_str!("../migrations/0006_entry_copies.sql")),
        ))
        .await
        .expect("a version 6 database");
    let keys: [(&str, &[&str]); 4] = [
        ("writer", &["read:assets", "write:assets"]),
        ("reader", &["read:assets", "read:libraries"]),
        ("payer", &["write:assets", "read:paid"]),
        ("librarian", &["write:libraries"]),
    ];
    for (n, (name, scopes)) in keys.iter().enumerate() {
        client
            .execute(
                "INSERT INTO assetlib.api_keys (id, name, key_hash, scopes, created_at) \
                 VALUES (gen_random_uuid(), $1, $2, $3, $4)",
                &[
                    name,
                    &vec![n as u8; 32],
                    scopes,
                    &(chrono::Utc::now() + chrono::Duration::seconds(n as i64)),
                ],
            )
            .await
            .expect("key");
    }
    let library = uuid::Uuid::new_v4();
    insert_library(&client, library, true).await;
    drop(client);
    let _ = conn.await;

    let store = PgStore::connect(db.url()).await.expect("upgrade");
    assert_eq!(versions(&store, "assetlib").await, all_versions());
    let found: Vec<(String, Vec<Scope>)> = store
        .list_keys()
        .await
        .expect("keys")
        .into_iter()
        .map(|k| (k.name, k.scopes))
        .collect();
    assert_eq!(
        found,
        vec![
            (
                "writer".into(),
                vec![Scope::ReadAssets, Scope::WriteAssets, Scope::ReadPaid]
            ),
            (
                "reader".into(),
                vec![Scope::ReadAssets, Scope::ReadLibraries]
            ),
            ("payer".into(), vec![Scope::WriteAssets, Scope::ReadPaid]),
            ("librarian".into(), vec![Scope::WriteLibraries]),
        ]
    );

    let pass = assetlib_core::testing::sample_pass(library, 9, 0);
    store
        .insert_pass(pass.clone(), Log::ANONYMOUS)
        .await
        .expect("a pass");
    assert_eq!(store.find_pass(&[9; 32]).await.expect("find"), Some(pass));
}

/// A database at version 13 with assets and a library in it is upgraded at connect: every
/// asset and entry is kept as it was, with no tags and no checksum; tags then work (lists,
/// counts, entry copies) and checksums are kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_from_version_13_gives_every_asset_empty_tags() {
    use assetlib_core::{TagChange, TagCount};

    let db = TestCluster::shared().empty_database().await;
    let (client, conn) = raw_client(db.url()).await;
    at_version(&client, 13).await;
    // Assets written as version 13 wrote them: through the triggers of that version.
    let library = uuid::Uuid::new_v4();
    let (pdf, image) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    client
        .execute(
            "INSERT INTO assetlib.assets (id, title, title_lower, slug, description, \
                 description_lower, asset_type, file_path, file_size, thumbnail_path, \
                 is_public, published, created_at, updated_at, thumbnail_placeholder) \
             VALUES ($1, 'Report', 'report', 'report', 'yearly', 'yearly', 'pdf', \
                     'uploads/r.pdf', 1234, 'thumbs/r.png', true, true, \
                     '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z', 'AAAA'), \
                    ($2, 'Photo', 'photo', 'photo', NULL, NULL, 'image', NULL, NULL, NULL, \
                     false, false, '2026-01-01T00:00:02Z', '2026-01-01T00:00:02Z', NULL)",
            &[&pdf, &image],
        )
        .await
        .expect("assets");
    client
        .execute(
            "INSERT INTO assetlib.asset_counters (asset_id, download_count) \
             SELECT id, 7 FROM assetlib.assets",
            &[],
        )
        .await
        .expect("counters");
    insert_library(&client, library, false).await;
    client
        .execute(
            "INSERT INTO assetlib.library_entries (library_id, asset_id, display_order, \
                 a_title, a_description, a_type, a_thumbnail, a_published, a_placeholder) \
             SELECT $1, id, CASE WHEN id = $2 THEN 0 ELSE 1 END, title, description, \
                 asset_type, thumbnail_path, published, thumbnail_placeholder \
             FROM assetlib.assets",
            &[&library, &pdf],
        )
        .await
        .expect("entries");
    drop(client);
    let _ = conn.await;

    let store = PgStore::connect(db.url()).await.expect("upgrade");
    assert_eq!(versions(&store, "assetlib").await, all_versions());

    // Everything kept; no tags, no checksum.
    let report = store.get_asset(pdf).await.expect("get").expect("report");
    assert_eq!(report.title, "Report");
    assert_eq!(report.description.as_deref(), Some("yearly"));
    assert_eq!(report.file_path.as_deref(), Some("uploads/r.pdf"));
    assert_eq!(report.file_size, Some(1234));
    assert_eq!(report.thumbnail_placeholder.as_deref(), Some("AAAA"));
    assert_eq!(report.download_count, 7);
    assert!(report.published);
    assert!(report.tags.is_empty());
    assert_eq!(report.checksum_sha256, None);
    let photo = store.get_asset(image).await.expect("get").expect("photo");
    assert!(!photo.published && photo.tags.is_empty() && photo.checksum_sha256.is_none());
    let all = AssetQuery {
        status: AssetStatus::Any,
        ..AssetQuery::default()
    };
    let listed = store.list_assets(&all).await.expect("list");
    assert_eq!(listed.total, 2);
    assert_eq!(listed.items, vec![photo.clone(), report.clone()]);
    assert_eq!(store.list_tags(10).await.expect("tags"), vec![]);
    let shown = entry_copies(&store, library).await;
    assert_eq!(
        shown,
        vec![
            (pdf, EntryAsset::from(&report)),
            (image, EntryAsset::from(&photo))
        ]
    );

    // Tags work from then on: lists of a tag, their totals, the counts and the entry copies.
    let mut tag = AssetChange::at(chrono::Utc::now());
    tag.tags = Some(TagChange::Set(vec!["Brand".into(), "Print".into()]));
    tag.checksum_found = Some(assetlib_core::ChecksumFound {
        file_path: "uploads/r.pdf".into(),
        checksum: [9; 32],
    });
    let tagged = store
        .update_asset(pdf, &tag, Log::ANONYMOUS)
        .await
        .expect("tag")
        .expect("report")
        .after;
    assert_eq!(tagged.tags, ["Brand", "Print"]);
    assert_eq!(tagged.checksum_sha256, Some([9; 32]));
    let mut tag_photo = AssetChange::at(chrono::Utc::now());
    tag_photo.tags = Some(TagChange::Add(vec!["brand".into()]));
    store
        .update_asset(image, &tag_photo, Log::ANONYMOUS)
        .await
        .expect("tag")
        .expect("photo");
    let of_tag = |status| AssetQuery {
        status,
        tags: vec!["brand".into()],
        ..AssetQuery::default()
    };
    let published = store
        .list_assets(&of_tag(AssetStatus::Published))
        .await
        .expect("list");
    assert_eq!((published.total, published.items.len()), (1, 1));
    assert_eq!(published.items[0].id, pdf);
    let any = store
        .list_assets(&of_tag(AssetStatus::Any))
        .await
        .expect("list");
    assert_eq!(
        (
            any.total,
            any.items.iter().map(|a| a.id).collect::<Vec<_>>()
        ),
        (2, vec![image, pdf])
    );
    let by_sum = AssetQuery {
        checksum: Some([9; 32]),
        ..AssetQuery::default()
    };
    assert_eq!(store.list_assets(&by_sum).await.expect("list").total, 1);
    assert_eq!(
        store.list_tags(10).await.expect("tags"),
        vec![
            TagCount {
                tag: "brand".into(),
                count: 1
            },
            TagCount {
                tag: "print".into(),
                count: 1
            },
        ]
    );
    let shown = entry_copies(&store, library).await;
    assert_eq!(shown[0].1.tags, ["Brand", "Print"]);
    assert_eq!(shown[1].1.tags, ["brand"]);
}
