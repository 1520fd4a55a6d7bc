//! The stores at scale, side by side: `SledStore` and `PgStore`, list page 1 and library loads
//! on a small and a large database, and durable create latency from 1 and 32 concurrent
//! writers.
//!
//! ```text
//! cargo bench --features sled,postgres --bench store
//! ASSETLIB_BENCH_SIZES=2000,20000 ASSETLIB_BENCH_SECS=1 cargo bench --features sled,postgres --bench store
//! ASSETLIB_BENCH_STORES=postgres cargo bench --features sled,postgres --bench store
//! ```
//!
//! Environment:
//! - `ASSETLIB_BENCH_STORES`: the stores, comma-separated, of `sled` and `postgres` (default
//!   both).
//! - `ASSETLIB_BENCH_SIZES`: database sizes in assets, comma-separated (default
//!   `10000,1000000`). Ratios are printed for the largest against the smallest, per store.
//! - `ASSETLIB_BENCH_SECS`: criterion measurement time per benchmark (default 3).
//! - `ASSETLIB_BENCH_CREATES`: durable creates in the 32-writer run (default 6400).
//! - `ASSETLIB_BENCH_DATA`: where the databases are kept (default `target/bench-data`).
//! - `ASSETLIB_PG_BIN`: the directory of `initdb`, `pg_ctl` and `postgres` (default: found on
//!   `PATH`, else the newest `/usr/lib/postgresql/*/bin`).
//!
//! Each database is built once and reused by later runs.
//!
//! - sled: `DATA/store-N/` holds the sled directory and a `complete` marker, written only
//!   after the fill was flushed, naming the libraries in it. A directory without the marker is
//!   rebuilt.
//! - PostgreSQL: one cluster in `DATA/pg/` (made with `initdb` on first use; as root it belongs
//!   to the `postgres` system user and every server binary runs as that user). The bench starts
//!   it with `pg_ctl` on 127.0.0.1 and a free port, with `fsync=on` and
//!   `synchronous_commit=on`, and stops it by its PID when it ends (a watchdog process stops
//!   it too if the bench dies first). Database `assets_N` holds size N; its comment, written
//!   last, names the libraries. A database without that comment, or whose `list_assets`
//!   totals or first page are not as filled, is rebuilt. The fill is set-based SQL (see
//!   [`pg_fill`]), not one round trip per asset.
//!
//! Measured per store and size: `list_assets` page 1 (20 per page, newest first) sorted by
//! created_at, title and updated_at, filtered by one tag (`featured`, 10% of the assets,
//! `q1`, 25%: see [`bench_tags`]), by both (5%) and by either (`any_tag`, 30%), and by one
//! workspace (`ws7`: the assets are spread over 100 workspaces, see [`bench_workspace`]);
//! `load_library` of a 100-entry and a 1,000-entry library;
//! `record_library_view` (what every read of a cached library page costs the store).
//! After the criterion groups it prints, from a timing loop in the same process, each call's
//! median at every size (and for sled the records read), each tag-filtered page against the
//! unfiltered one, and the ratio largest/smallest; then
//! the durable create runs per store: creates per second, p50 and p99 latency, with 1 and with
//! 32 writers. PostgreSQL's creates go to a fresh database in the same cluster (`fsync=on`,
//! `synchronous_commit=on`, printed from the server), through a pool of one connection per
//! writer.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use assetlib::store::prelude::*;
use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use assetlib::postgres::deadpool_postgres::tokio_postgres::{self, NoTls};
use assetlib::postgres::{PgConfig, PgStore};
use assetlib::sled::{Durability, SledConfig, SledStore};
use assetlib::testing::sample_asset;
use assetlib::{
    AssetQuery, AssetSort, AssetType, LibraryEntry, LibraryWrite, Section, SortOrder, Store,
};
use assetlib_testkit::postgres::TestCluster;
use criterion::{BenchmarkId, Criterion};
use uuid::Uuid;

const MARKER: &str = "complete";
const WRITERS: usize = 32;
/// The store's schema in the bench databases (`PgConfig`'s default).
const PG_SCHEMA: &str = "assetlib";

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn sizes() -> Vec<usize> {
    let raw = std::env::var("ASSETLIB_BENCH_SIZES").unwrap_or_else(|_| "10000,1000000".into());
    let mut sizes: Vec<usize> = raw
        .split(',')
        .filter_map(|s| s.trim().replace('_', "").parse().ok())
        .filter(|&n| n > 0)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    assert!(!sizes.is_empty(), "ASSETLIB_BENCH_SIZES names no size");
    sizes
}

/// The stores to run, from `ASSETLIB_BENCH_STORES`: (sled, postgres).
fn stores() -> (bool, bool) {
    let raw = std::env::var("ASSETLIB_BENCH_STORES").unwrap_or_else(|_| "sled,postgres".into());
    let names: Vec<String> = raw
        .split(',')
        .map(|s| s.trim().to_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    for n in &names {
        assert!(
            n == "sled" || n == "postgres",
            "ASSETLIB_BENCH_STORES: unknown store {n:?} (sled, postgres)"
        );
    }
    let sled = names.iter().any(|n| n == "sled");
    let pg = names.iter().any(|n| n == "postgres");
    assert!(sled || pg, "ASSETLIB_BENCH_STORES names no store");
    (sled, pg)
}

fn data_root() -> PathBuf {
    std::env::var_os("ASSETLIB_BENCH_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// One built database and the libraries in it.
struct Db {
    /// `sled` or `postgres`.
    kind: &'static str,
    size: usize,
    store: Arc<dyn Store>,
    /// For the records each call reads (sled counts them; PostgreSQL does not).
    sled: Option<SledStore>,
    lib100: Uuid,
    lib1000: Uuid,
}

fn library(id: Uuid, title: &str, assets: &[Uuid], per_section: usize) -> LibraryWrite {
    let mut sections = Vec::new();
    let mut entries = Vec::new();
    for (s, chunk) in assets.chunks(per_section).enumerate() {
        let section = Section {
            id: Uuid::new_v4(),
            title: format!("Section {s}"),
            description: Some("Files for this part of the brand".into()),
            display_order: s as u32,
            collapsed_by_default: s % 2 == 1,
        };
        for (j, &asset_id) in chunk.iter().enumerate() {
            entries.push(LibraryEntry {
                asset_id,
                section_id: Some(section.id),
                display_order: j as u32,
                title: (j % 3 == 0).then(|| format!("Custom title {j}")),
                description: None,
            });
        }
        sections.push(section);
    }
    let mut lib = assetlib::testing::sample_library(title, 1);
    lib.id = id;
    LibraryWrite {
        library: lib,
        slug_given: false,
        sections,
        entries,
    }
}

/// The two libraries of every database: 100 entries in 10 sections of the assets 0..100, and
/// 1,000 in 20 sections of the assets 0..1000 (fewer in a smaller database).
async fn put_libraries(store: &dyn Store, ids: &[Uuid]) -> (Uuid, Uuid) {
    let (lib100, lib1000) = (Uuid::new_v4(), Uuid::new_v4());
    let n100 = ids.len().min(100);
    let n1000 = ids.len().min(1000);
    store
        .put_library(
            library(lib100, "Brand kit", &ids[..n100], 10),
            Log::ANONYMOUS,
        )
        .await
        .expect("put 100-entry library");
    store
        .put_library(
            library(lib1000, "Archive", &ids[..n1000], 50),
            Log::ANONYMOUS,
        )
        .await
        .expect("put 1,000-entry library");
    (lib100, lib1000)
}

// --- sled --------------------------------------------------------------------------------

/// Opens the sled database of `size` assets, building it first unless a complete one exists.
fn sled_open_or_build(rt: &tokio::runtime::Runtime, size: usize) -> Db {
    let dir = data_root().join(format!("store-{size}"));
    let marker = dir.join(MARKER);
    if let Ok(text) = std::fs::read_to_string(&marker)
        && text.contains(FILL)
        && let Some((lib100, lib1000)) = parse_libs(&text)
    {
        let store = SledStore::open(dir.join("db")).expect("open bench database");
        println!("sled: using {} ({size} assets)", dir.display());
        return Db {
            kind: "sled",
            size,
            store: Arc::new(store.clone()),
            sled: Some(store),
            lib100,
            lib1000,
        };
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("remove incomplete bench database");
    }
    std::fs::create_dir_all(&dir).expect("create bench data directory");
    println!("sled: building {} ({size} assets, once)...", dir.display());
    let started = Instant::now();
    let config = SledConfig::default().durability(Durability::Periodic { every_ms: 1000 });
    let store = SledStore::open_with(dir.join("db"), config).expect("open new bench database");
    let ids = rt.block_on(sled_fill(&store, size));
    let (lib100, lib1000) = rt.block_on(async {
        let libs = put_libraries(&store, &ids).await;
        store.flush().await.expect("flush");
        libs
    });
    drop(store);
    std::fs::write(
        &marker,
        format!("lib100={lib100}\nlib1000={lib1000}\n{FILL}\n"),
    )
    .expect("write marker");
    println!("sled: built in {:.1?}", started.elapsed());
    sled_open_or_build(rt, size)
}

/// `lib100=UUID` and `lib1000=UUID` lines.
fn parse_libs(text: &str) -> Option<(Uuid, Uuid)> {
    let ids: HashMap<&str, Uuid> = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .filter_map(|(k, v)| Some((k.trim(), v.trim().parse().ok()?)))
        .collect();
    Some((*ids.get("lib100")?, *ids.get("lib1000")?))
}

/// The tags of asset `i` of a bench database: one quarter (`Q1` to `Q4`, a quarter of the
/// assets each), and `Featured` on every tenth.
fn bench_tags(i: usize) -> Vec<String> {
    let mut tags = vec![format!("Q{}", i % 4 + 1)];
    if i.is_multiple_of(10) {
        tags.push("Featured".into());
    }
    tags
}

/// The workspace of asset `i` of a bench database: one of 100 (`ws0` to `ws99`), by turns,
/// but none for the first 1,000, which the two libraries (of no workspace) hold.
fn bench_workspace(i: usize) -> Option<String> {
    (i >= 1000).then(|| format!("ws{}", i % 100))
}

/// The workspace the workspace-filtered page lists (1% of the assets past the first 1,000).
const WORKSPACE: &str = "ws7";

/// What the marker of a complete sled database says besides its libraries: the fill's
/// version (a database of an older fill, without tags or workspaces, is rebuilt).
const FILL: &str = "fill=workspaces-2";

async fn sled_fill(store: &SledStore, size: usize) -> Vec<Uuid> {
    const TASKS: usize = 8;
    let mut tasks = tokio::task::JoinSet::new();
    for t in 0..TASKS {
        let store = store.clone();
        tasks.spawn(async move {
            let mut ids = Vec::with_capacity(size / TASKS + 1);
            for i in (t..size).step_by(TASKS) {
                let kind = [AssetType::Pdf, AssetType::Image, AssetType::Video][i % 3];
                let mut a = sample_asset(&format!("Asset {i} quarterly report"), kind, i as i64);
                a.description = Some(format!("Description of asset number {i}"));
                a.thumbnail_path = Some(format!("thumbs/{i}.png"));
                a.tags = bench_tags(i);
                a.workspace_id = bench_workspace(i);
                ids.push((
                    i,
                    store
                        .insert_asset(a, Log::ANONYMOUS)
                        .await
                        .expect("insert")
                        .id,
                ));
                if t == 0 && i % 100_000 == 0 && i > 0 {
                    println!("  {i} assets");
                }
            }
            ids
        });
    }
    let mut ids = Vec::with_capacity(size);
    while let Some(part) = tasks.join_next().await {
        ids.extend(part.expect("filler"));
    }
    ids.sort_unstable_by_key(|(i, _)| *i);
    ids.into_iter().map(|(_, id)| id).collect()
}

// --- PostgreSQL: the cluster ---------------------------------------------------------------

/// A plain connection (not the store's pool), its connection task on the current runtime.
async fn pg_connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

// --- PostgreSQL: the databases -------------------------------------------------------------

/// Opens database `assets_N` of the cluster, building it first unless a complete one exists.
fn pg_open_or_build(rt: &tokio::runtime::Runtime, server: &TestCluster, size: usize) -> Db {
    let name = format!("assets_{size}");
    let url = server.url(&name);
    rt.block_on(async {
        let admin = pg_connect(&server.url("postgres")).await;
        let comment: Option<String> = admin
            .query_opt(
                "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1",
                &[&name],
            )
            .await
            .expect("look up the bench database")
            .and_then(|row| row.get(0));
        if let Some((lib100, lib1000)) = comment.as_deref().and_then(parse_libs) {
            let store = PgStore::connect_with(&url, PgConfig::default().pool_size(4))
                .await
                .expect("connect to the bench database");
            match pg_check(&store, size).await {
                Ok(()) => {
                    println!("postgres: using database {name} ({size} assets, checked)");
                    return Db {
                        kind: "postgres",
                        size,
                        store: Arc::new(store),
                        sled: None,
                        lib100,
                        lib1000,
                    };
                }
                Err(e) => println!("postgres: database {name} is not as filled ({e}): rebuilding"),
            }
        }
        println!("postgres: building database {name} ({size} assets, once)...");
        let started = Instant::now();
        // Two messages: neither statement runs inside a transaction block.
        for sql in [
            format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            format!("CREATE DATABASE {name}"),
        ] {
            admin
                .batch_execute(&sql)
                .await
                .expect("create the bench database");
        }
        // Connecting migrates the store's schema into the new database.
        let store = PgStore::connect_with(&url, PgConfig::default().pool_size(4))
            .await
            .expect("connect to and migrate the bench database");
        pg_fill(&store, size).await;
        let client = store.pool().get().await.expect("connection");
        let ids: Vec<Uuid> = client
            .query(
                &format!(
                    "SELECT id FROM {PG_SCHEMA}.assets ORDER BY created_at LIMIT {}",
                    size.min(1000)
                ),
                &[],
            )
            .await
            .expect("the first assets")
            .iter()
            .map(|r| r.get(0))
            .collect();
        let (lib100, lib1000) = put_libraries(&store, &ids).await;
        // Statistics and the visibility map now, not from autovacuum during the measurements;
        // and a checkpoint, so the fill's dirty pages are not written during them either.
        client
            .batch_execute("VACUUM (ANALYZE)")
            .await
            .expect("vacuum the bench database");
        client
            .batch_execute("CHECKPOINT")
            .await
            .expect("checkpoint");
        drop(client);
        pg_check(&store, size)
            .await
            .unwrap_or_else(|e| panic!("the new database {name} is not as filled: {e}"));
        admin
            .batch_execute(&format!(
                "COMMENT ON DATABASE {name} IS 'lib100={lib100}\nlib1000={lib1000}'"
            ))
            .await
            .expect("mark the bench database complete");
        println!("postgres: built in {:.1?}", started.elapsed());
        Db {
            kind: "postgres",
            size,
            store: Arc::new(store),
            sled: None,
            lib100,
            lib1000,
        }
    })
}

/// Fills a freshly migrated database with `size` assets in one transaction of set-based SQL,
/// the same assets `sled_fill` inserts one by one: for i in 0..size, title `Asset {i}
/// quarterly report` (slug `asset-{i}-quarterly-report`), description `Description of asset
/// number {i}`, type pdf, image, video by turns, thumbnail `thumbs/{i}.png`, published, not
/// public, created and updated at 2026-01-01 + i seconds, no file, 0 downloads, tagged as
/// [`bench_tags`] says, in the workspace [`bench_workspace`] names (whose key follows the tag
/// keys in `tag_keys`, as the store writes it).
///
/// What it writes: the `assets` rows (one `INSERT ... SELECT ... FROM generate_series`, the
/// rows in random order on the heap, as a database that grew over years has them, not in
/// creation order), one `asset_counters` row per asset, and the `asset_counts` rows the
/// store's triggers would have kept (total and per type, one `INSERT ... SELECT ... GROUP
/// BY`), and the tag rows and tag counts those triggers keep. The triggers are off during the fill (`session_replication_role = replica`), as 1M
/// per-row count updates on one row would be the whole cost; [`pg_check`] checks afterwards
/// with the store's own `list_assets` that the counts are right. Every index of the
/// migration is in place and maintained by the inserts.
async fn pg_fill(store: &PgStore, size: usize) {
    let s = PG_SCHEMA;
    let n = size as i64;
    let sql = format!(
        "BEGIN;
         SET LOCAL session_replication_role = replica;
         SET LOCAL synchronous_commit = off;
         SET LOCAL work_mem = '256MB';
         SET LOCAL maintenance_work_mem = '256MB';
         INSERT INTO {s}.assets (id, title, title_lower, slug, description, description_lower,
             asset_type, thumbnail_path, is_public, published, created_at, updated_at,
             tags, tag_keys, workspace_id)
         SELECT gen_random_uuid(),
             'Asset ' || i || ' quarterly report', 'asset ' || i || ' quarterly report',
             'asset-' || i || '-quarterly-report',
             'Description of asset number ' || i, 'description of asset number ' || i,
             (ARRAY['pdf', 'image', 'video'])[i % 3 + 1], 'thumbs/' || i || '.png',
             false, true, t, t, spelled,
             CASE WHEN ws IS NULL THEN k ELSE k || (E'\\x01' || ws) END, ws
         FROM (SELECT i, timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second' AS t,
                   CASE WHEN i >= 1000 THEN 'ws' || (i % 100) END AS ws,
                   CASE WHEN i % 10 = 0 THEN ARRAY['q' || (i % 4 + 1), 'featured']
                        ELSE ARRAY['q' || (i % 4 + 1)] END AS k,
                   CASE WHEN i % 10 = 0 THEN ARRAY['Q' || (i % 4 + 1), 'Featured']
                        ELSE ARRAY['Q' || (i % 4 + 1)] END AS spelled
               FROM generate_series(0::bigint, {n} - 1) AS i) g
         ORDER BY random();
         INSERT INTO {s}.asset_counters (asset_id, download_count) SELECT id, 0 FROM {s}.assets;
         INSERT INTO {s}.asset_counts (scope, n)
             SELECT '', count(*) FROM {s}.assets WHERE published
             UNION ALL
             SELECT asset_type, count(*) FROM {s}.assets WHERE published GROUP BY asset_type;
         INSERT INTO {s}.asset_tags (tag_key, asset_id, published, asset_type, created_at,
                 updated_at, title_lower)
             SELECT k, a.id, a.published, a.asset_type, a.created_at, a.updated_at, a.title_lower
             FROM {s}.assets a CROSS JOIN LATERAL unnest(a.tag_keys) AS k;
         INSERT INTO {s}.tag_counts (tag_key, published, asset_type, shard, n)
             SELECT tag_key, published, '', 0, count(*) FROM {s}.asset_tags
             GROUP BY tag_key, published
             UNION ALL
             SELECT tag_key, published, asset_type, 0, count(*) FROM {s}.asset_tags
             GROUP BY tag_key, published, asset_type;
         COMMIT;"
    );
    let client = store.pool().get().await.expect("connection");
    client.batch_execute(&sql).await.expect("fill");
}

/// Checks a filled database with the store's own reads: the totals (all, and per type) and
/// page 1 by created_at, newest first: assets size-1 down to size-20, in order.
async fn pg_check(store: &PgStore, size: usize) -> Result<(), String> {
    let all = store
        .list_assets(&page1(AssetSort::CreatedAt))
        .await
        .map_err(|e| e.to_string())?;
    if all.total != size as u64 {
        return Err(format!("total {} instead of {size}", all.total));
    }
    for (k, kind) in [AssetType::Pdf, AssetType::Image, AssetType::Video]
        .into_iter()
        .enumerate()
    {
        let want = (0..size).filter(|i| i % 3 == k).count() as u64;
        let q = AssetQuery {
            asset_type: Some(kind),
            ..page1(AssetSort::CreatedAt)
        };
        let got = store
            .list_assets(&q)
            .await
            .map_err(|e| e.to_string())?
            .total;
        if got != want {
            return Err(format!("{} total {got} instead of {want}", kind.as_str()));
        }
    }
    let featured = AssetQuery {
        tags: vec!["featured".into()],
        ..page1(AssetSort::CreatedAt)
    };
    let got = store
        .list_assets(&featured)
        .await
        .map_err(|e| e.to_string())?
        .total;
    let want = size.div_ceil(10) as u64;
    if got != want {
        return Err(format!("featured total {got} instead of {want}"));
    }
    // Every tenth is featured and every fourth in q1: both on every twentieth.
    for (name, call, want) in [
        ("featured and q1", both_tags(), size.div_ceil(20)),
        (
            "featured or q1",
            either_tag(),
            size.div_ceil(10) + size.div_ceil(4) - size.div_ceil(20),
        ),
    ] {
        let got = store
            .list_assets(&call)
            .await
            .map_err(|e| e.to_string())?
            .total;
        if got != want as u64 {
            return Err(format!("{name} total {got} instead of {want}"));
        }
    }
    let got = store
        .list_assets(&in_workspace())
        .await
        .map_err(|e| e.to_string())?
        .total;
    let want = (0..size)
        .filter(|&i| bench_workspace(i).as_deref() == Some(WORKSPACE))
        .count() as u64;
    if got != want {
        return Err(format!("{WORKSPACE} total {got} instead of {want}"));
    }
    let want: Vec<String> = (0..size.min(20))
        .map(|k| format!("Asset {} quarterly report", size - 1 - k))
        .collect();
    let got: Vec<String> = all.items.iter().map(|a| a.title.clone()).collect();
    if got != want {
        return Err(format!("page 1 is {got:?}"));
    }
    Ok(())
}

// --- the measurements --------------------------------------------------------------------

fn page1(sort: AssetSort) -> AssetQuery {
    AssetQuery {
        sort,
        order: SortOrder::Desc,
        per_page: 20,
        ..AssetQuery::default()
    }
}

/// Page 1 of the assets with both tags `featured` and `q1` (5% of them).
fn both_tags() -> AssetQuery {
    AssetQuery {
        tags: vec!["featured".into(), "q1".into()],
        ..page1(AssetSort::CreatedAt)
    }
}

/// Page 1 of the assets with either tag, `featured` or `q1` (30% of them).
fn either_tag() -> AssetQuery {
    AssetQuery {
        any_tags: vec!["featured".into(), "q1".into()],
        ..page1(AssetSort::CreatedAt)
    }
}

/// Page 1 of the assets of workspace [`WORKSPACE`] (1% of them).
fn in_workspace() -> AssetQuery {
    AssetQuery {
        workspace_id: Some(WORKSPACE.into()),
        ..page1(AssetSort::CreatedAt)
    }
}

/// The filtered calls, each compared with the unfiltered page 1 by `created_at`.
const TAGGED: [&str; 5] = [
    "list page 1 tag=featured (10%)",
    "list page 1 tag=q1 (25%)",
    "list page 1 tag=featured&tag=q1 (5%)",
    "list page 1 any_tag=featured,q1 (30%)",
    "list page 1 workspace_id=ws7 (1%)",
];

const SORTS: [(AssetSort, &str); 3] = [
    (AssetSort::CreatedAt, "created_at"),
    (AssetSort::Title, "title"),
    (AssetSort::UpdatedAt, "updated_at"),
];

/// The calls measured, by name.
fn calls(db: &Db) -> Vec<(String, Call)> {
    let mut out: Vec<(String, Call)> = SORTS
        .iter()
        .map(|&(sort, name)| (format!("list page 1 by {name}"), Call::List(page1(sort))))
        .collect();
    for (tag, share) in [("featured", "10%"), ("q1", "25%")] {
        let q = AssetQuery {
            tags: vec![tag.to_owned()],
            ..page1(AssetSort::CreatedAt)
        };
        out.push((format!("list page 1 tag={tag} ({share})"), Call::List(q)));
    }
    out.push((TAGGED[2].into(), Call::List(both_tags())));
    out.push((TAGGED[3].into(), Call::List(either_tag())));
    out.push((TAGGED[4].into(), Call::List(in_workspace())));
    out.push(("load 100-entry library".into(), Call::Load(db.lib100)));
    out.push(("load 1,000-entry library".into(), Call::Load(db.lib1000)));
    out.push(("count a library view".into(), Call::View(db.lib100)));
    out
}

#[derive(Clone)]
enum Call {
    List(AssetQuery),
    Load(Uuid),
    /// `record_library_view`: what every read of a cached library page costs the store.
    View(Uuid),
}

impl Call {
    async fn run(&self, store: &dyn Store) -> usize {
        match self {
            Call::List(q) => store.list_assets(q).await.expect("list").items.len(),
            Call::Load(id) => store
                .load_library(*id)
                .await
                .expect("load")
                .expect("library")
                .entries
                .len(),
            Call::View(id) => store
                .record_library_view(*id)
                .await
                .expect("view")
                .map_or(0, |v| usize::from(v.views > 0)),
        }
    }
}

fn bench(c: &mut Criterion, rt: &tokio::runtime::Runtime, dbs: &[Db]) {
    let mut group = c.benchmark_group("store");
    for db in dbs {
        for (name, call) in calls(db) {
            let id = format!("{}_{}", db.kind, name.replace(' ', "_").replace(',', ""));
            group.bench_with_input(BenchmarkId::new(id, db.size), &call, |b, call| {
                b.iter(|| black_box(rt.block_on(call.run(db.store.as_ref()))));
            });
        }
    }
    group.finish();
}

/// Median time of each call on `db` from a timing loop, and the records it read (sled).
fn timings(rt: &tokio::runtime::Runtime, db: &Db) -> Vec<(String, Duration, Option<u64>)> {
    calls(db)
        .into_iter()
        .map(|(name, call)| {
            let before = db.sled.as_ref().map(SledStore::records_read);
            rt.block_on(call.run(db.store.as_ref()));
            let reads = db
                .sled
                .as_ref()
                .zip(before)
                .map(|(s, b)| s.records_read() - b);
            let mut times = Vec::new();
            let start = Instant::now();
            while times.len() < 2000
                && (times.len() < 20 || start.elapsed() < Duration::from_millis(700))
            {
                let t = Instant::now();
                black_box(rt.block_on(call.run(db.store.as_ref())));
                times.push(t.elapsed());
            }
            times.sort_unstable();
            (name, times[times.len() / 2], reads)
        })
        .collect()
}

fn reads_text(reads: Option<u64>) -> String {
    reads.map_or_else(|| "-".into(), |r| r.to_string())
}

fn print_ratios(rt: &tokio::runtime::Runtime, dbs: &[Db]) {
    let all: Vec<_> = dbs
        .iter()
        .map(|db| (db.kind, db.size, timings(rt, db)))
        .collect();
    println!("\nstore: median per call (records read, sled only)");
    for (kind, size, rows) in &all {
        for (name, time, reads) in rows {
            println!(
                "  {kind:<8} {size:>8} assets  {name:<26} {time:>10.1?}  ({} reads)",
                reads_text(*reads)
            );
        }
    }
    println!(
        "\nstore: a filtered page 1 (tags, workspace) against the unfiltered one (by created_at)"
    );
    for (kind, size, rows) in &all {
        let time = |name: &str| {
            rows.iter()
                .find(|(n, _, _)| n.as_str() == name)
                .map(|(_, t, _)| t.as_secs_f64())
        };
        if let Some(plain) = time("list page 1 by created_at") {
            for tag in TAGGED {
                if let Some(filtered) = time(tag) {
                    println!(
                        "  {kind:<8} {size:>8} assets  {tag:<38} {:.2}x",
                        filtered / plain
                    );
                }
            }
        }
    }
    for kind in ["sled", "postgres"] {
        let mine: Vec<_> = all.iter().filter(|(k, _, _)| *k == kind).collect();
        if let (Some((_, small, a)), Some((_, large, b))) = (mine.first(), mine.last())
            && small != large
        {
            println!("{kind}: ratio {large}/{small} assets:");
            for ((name, ta, ra), (_, tb, rb)) in a.iter().zip(b) {
                println!(
                    "  {name:<26} {:.2}x time, reads {} -> {}",
                    tb.as_secs_f64() / ta.as_secs_f64(),
                    reads_text(*ra),
                    reads_text(*rb)
                );
            }
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Durable creates (durable before success) into `store` from `writers` concurrent tasks;
/// prints the rate and latencies, and returns the run's wall time.
fn creates(
    rt: &tokio::runtime::Runtime,
    store: Arc<dyn Store>,
    writers: usize,
    total: usize,
) -> Duration {
    let per = (total / writers).max(1);
    let started = Instant::now();
    let mut latencies: Vec<Duration> = rt.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        for w in 0..writers {
            let store = store.clone();
            tasks.spawn(async move {
                let mut out = Vec::with_capacity(per);
                for i in 0..per {
                    let a = sample_asset(&format!("Created {w} {i}"), AssetType::Pdf, i as i64);
                    let t = Instant::now();
                    store
                        .insert_asset(a, Log::ANONYMOUS)
                        .await
                        .expect("durable create");
                    out.push(t.elapsed());
                }
                out
            });
        }
        let mut all = Vec::new();
        while let Some(part) = tasks.join_next().await {
            all.extend(part.expect("writer"));
        }
        all
    });
    let elapsed = started.elapsed();
    latencies.sort_unstable();
    println!(
        "  {writers:>2} writers: {:>6} creates in {elapsed:>8.2?}  {:>8.0}/s  p50 {:>9.2?}  p99 {:>9.2?}",
        latencies.len(),
        latencies.len() as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
    );
    elapsed
}

fn sled_creates(rt: &tokio::runtime::Runtime, total: usize) {
    println!("\nsled: durable creates (each flushed before it returns):");
    let root = data_root();
    std::fs::create_dir_all(&root).expect("bench data directory");
    for writers in [1, WRITERS] {
        let n = if writers == 1 {
            (total / 16).max(50)
        } else {
            total
        };
        let dir = tempfile::tempdir_in(&root).expect("temporary directory");
        let store = Arc::new(SledStore::open(dir.path().join("db")).expect("open"));
        let elapsed = creates(rt, store.clone(), writers, n);
        // Where the writers wait: a flush holds sled's global lock through its fsync, and no
        // transaction can run meanwhile, so the run is flushes and the transactions between.
        let stats = store.commit_stats();
        let flushes = stats.flushes.max(1);
        println!(
            "              {} flushes, {:.1} creates per flush, {:.2?} per flush, flushing {:.0}% of the run",
            stats.flushes,
            stats.commits as f64 / flushes as f64,
            stats.flush_time / u32::try_from(flushes).unwrap_or(u32::MAX),
            100.0 * stats.flush_time.as_secs_f64() / elapsed.as_secs_f64(),
        );
    }
}

fn pg_creates(rt: &tokio::runtime::Runtime, server: &TestCluster, total: usize) {
    let name = format!("creates_{}", std::process::id());
    let settings: Vec<String> = rt.block_on(async {
        let admin = pg_connect(&server.url("postgres")).await;
        let mut out = Vec::new();
        for s in [
            "server_version",
            "fsync",
            "synchronous_commit",
            "full_page_writes",
            "wal_sync_method",
            "commit_delay",
        ] {
            let row = admin
                .query_one(&format!("SHOW {s}"), &[])
                .await
                .expect("SHOW");
            out.push(format!("{s}={}", row.get::<_, String>(0)));
        }
        out
    });
    println!(
        "\npostgres: durable creates (each committed before it returns; {}):",
        settings.join(", ")
    );
    for writers in [1, WRITERS] {
        let n = if writers == 1 {
            (total / 16).max(50)
        } else {
            total
        };
        let url = server.url(&name);
        let store = rt.block_on(async {
            let admin = pg_connect(&server.url("postgres")).await;
            for sql in [
                format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
                format!("CREATE DATABASE {name}"),
            ] {
                admin
                    .batch_execute(&sql)
                    .await
                    .expect("create the creates database");
            }
            // One connection per writer.
            PgStore::connect_with(&url, PgConfig::default().pool_size(writers))
                .await
                .expect("connect to the creates database")
        });
        creates(rt, Arc::new(store.clone()), writers, n);
        drop(store);
    }
    rt.block_on(async {
        pg_connect(&server.url("postgres"))
            .await
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .await
            .expect("drop the creates database");
    });
}

fn main() {
    let rt = runtime();
    let (use_sled, use_pg) = stores();
    let sizes = sizes();
    // Declared before the databases, so dropped after them: the server outlives the pools.
    let pg = use_pg.then(|| TestCluster::durable_in(data_root().join("pg")));
    let mut dbs: Vec<Db> = Vec::new();
    if use_sled {
        dbs.extend(sizes.iter().map(|&n| sled_open_or_build(&rt, n)));
    }
    if let Some(server) = &pg {
        dbs.extend(sizes.iter().map(|&n| pg_open_or_build(&rt, server, n)));
    }
    let secs = env_or("ASSETLIB_BENCH_SECS", 3u64);
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(secs.max(1)))
        .configure_from_args();
    bench(&mut c, &rt, &dbs);
    c.final_summary();
    print_ratios(&rt, &dbs);
    drop(dbs);
    let total = env_or("ASSETLIB_BENCH_CREATES", 6400usize);
    if use_sled {
        sled_creates(&rt, total);
    }
    if let Some(server) = &pg {
        pg_creates(&rt, server, total);
    }
    drop(rt);
    drop(pg);
}
