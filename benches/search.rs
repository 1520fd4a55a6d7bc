//! Search at scale, on both stores side by side: `SearchStore::search` page 1 for a term that
//! matches 0.1% of the assets (in the title, and in the text), one that matches 10% (in the
//! text), a prefix, a phrase, and the asset list's `search=` page 1, on a database of N assets
//! of which a tenth have ten pages of text.
//!
//! ```text
//! cargo bench --features sled,postgres,search --bench search
//! ASSETLIB_SEARCH_SIZE=100000 cargo bench --features sled,postgres,search --bench search
//! ```
//!
//! Environment:
//! - `ASSETLIB_SEARCH_SIZE`: assets (default 1,000,000); every tenth has a text.
//! - `ASSETLIB_BENCH_STORES`: `sled`, `postgres` or both (default both).
//! - `ASSETLIB_SEARCH_RUNS`: timed calls per query (default 40), after 3 untimed ones.
//! - `ASSETLIB_BENCH_DATA`: where the databases are kept (default `target/bench-data`), each
//!   built once (sled `search-N/` with a `complete` marker; PostgreSQL database `search_N` in
//!   the cluster `pg/`, marked by its comment) and reused by later runs.
//!
//! The data, for i in 0..N: title `Report {i} t{i % 1000}` (so `t7` is in 0.1% of the
//! titles), published, types pdf, image, video by turns; when i is a multiple of 10 a text of
//! ten pages of 30 words each from a vocabulary of 400 (`w0`..`w399`), the word `common` on
//! page 4 (10% of the assets) and `rare{i / 10 % 100} notes` on page 8 (0.1%). Both stores are
//! filled through their own writes (`insert_asset`, `set_asset_text`), so their indexes are
//! what serving keeps; sled with periodic flushes, PostgreSQL as it runs.
//!
//! Printed per store and query: hits in all, and the p50 and p95 of page 1 (20 hits), as a
//! request with every scope asks (drafts and paid text count); and first how long the first
//! search after the store opens takes, with the process's resident memory before and after
//! it (sled reads the words of the assets' fields into memory then).

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use assetlib::store::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use assetlib::postgres::{PgConfig, PgStore};
use assetlib::search::parse_query;
use assetlib::sled::{Durability, SledConfig, SledStore};
use assetlib::store::{AssetText, SearchRequest};
use assetlib::testing::sample_asset;
use assetlib::{AssetQuery, AssetType, Store};
use assetlib_testkit::postgres::TestCluster;

#[path = "common/memory.rs"]
mod memory;

const MARKER: &str = "complete";
/// The version of the fill: a database of another is rebuilt.
const FILL: &str = "search-fill=1";

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn data_root() -> PathBuf {
    std::env::var_os("ASSETLIB_BENCH_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data"))
}

/// The title of asset `i`.
fn title(i: usize) -> String {
    format!("Report {i} t{}", i % 1000)
}

/// The text of asset `i`, when it has one (every tenth).
fn text(i: usize) -> Option<AssetText> {
    if !i.is_multiple_of(10) {
        return None;
    }
    let pages = (0..10)
        .map(|page| {
            let mut words: Vec<String> = (0..30)
                .map(|k| format!("w{}", (i / 10 + page * 37 + k * 101) % 400))
                .collect();
            if page == 3 {
                words[12] = "common".into();
            }
            if page == 7 {
                words[20] = format!("rare{}", i / 10 % 100);
                words[21] = "notes".into();
            }
            words.join(" ")
        })
        .collect();
    Some(AssetText { pages, paged: true })
}

/// Fills `store` with `size` assets and their texts, `tasks` writers at once.
async fn fill(store: Arc<dyn Store>, size: usize, tasks: usize) {
    let started = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for t in 0..tasks {
        let store = Arc::clone(&store);
        set.spawn(async move {
            let search = store.search_store().expect("a store with search");
            for i in (t..size).step_by(tasks) {
                let kind = [AssetType::Pdf, AssetType::Image, AssetType::Video][i % 3];
                let a = sample_asset(&title(i), kind, i as i64);
                let a = store.insert_asset(a, Log::ANONYMOUS).await.expect("insert");
                if let Some(text) = text(i) {
                    assert!(search.set_asset_text(a.id, text).await.expect("text"));
                }
                if t == 0 && i % 100_000 < tasks && i > 0 {
                    println!("  {i} assets, {:.0?}", started.elapsed());
                }
            }
        });
    }
    while let Some(done) = set.join_next().await {
        done.expect("filler");
    }
}

fn sled_open_or_build(rt: &tokio::runtime::Runtime, size: usize) -> Arc<dyn Store> {
    let dir = data_root().join(format!("search-{size}"));
    let marker = dir.join(MARKER);
    let config = SledConfig::default().durability(Durability::Periodic { every_ms: 1000 });
    if std::fs::read_to_string(&marker).is_ok_and(|m| m.trim() == FILL) {
        println!("sled: using {} ({size} assets)", dir.display());
        return Arc::new(SledStore::open_with(dir.join("db"), config).expect("open"));
    }
    println!("sled: building {} ({size} assets, once)...", dir.display());
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench dir");
    let store = SledStore::open_with(dir.join("db"), config).expect("open");
    let started = Instant::now();
    rt.block_on(async {
        fill(Arc::new(store.clone()), size, 8).await;
        store.flush().await.expect("flush");
    });
    println!("sled: built in {:.1?}", started.elapsed());
    std::fs::write(&marker, FILL).expect("marker");
    Arc::new(store)
}

fn pg_open_or_build(
    rt: &tokio::runtime::Runtime,
    server: &TestCluster,
    size: usize,
) -> Arc<dyn Store> {
    let name = format!("search_{size}");
    let url = server.url(&name);
    rt.block_on(async {
        let (admin, conn) = tokio_postgres_connect(&server.url("postgres")).await;
        let comment: Option<String> = admin
            .query_opt(
                "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1",
                &[&name],
            )
            .await
            .expect("look up the bench database")
            .and_then(|row| row.get(0));
        let config = PgConfig::default().pool_size(8);
        if comment.as_deref() == Some(FILL) {
            println!("postgres: using database {name} ({size} assets)");
            drop(conn);
            return Arc::new(PgStore::connect_with(&url, config).await.expect("connect"))
                as Arc<dyn Store>;
        }
        println!("postgres: building database {name} ({size} assets, once)...");
        let started = Instant::now();
        for sql in [
            format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            format!("CREATE DATABASE {name}"),
        ] {
            admin
                .batch_execute(&sql)
                .await
                .expect("create the database");
        }
        let store = PgStore::connect_with(&url, config)
            .await
            .expect("connect and migrate");
        let store: Arc<dyn Store> = Arc::new(store);
        fill(Arc::clone(&store), size, 16).await;
        let (client, conn2) = tokio_postgres_connect(&url).await;
        // Two messages: VACUUM runs in no transaction block.
        for sql in ["VACUUM (ANALYZE)", "CHECKPOINT"] {
            client.batch_execute(sql).await.expect("vacuum");
        }
        drop((client, conn2));
        admin
            .batch_execute(&format!("COMMENT ON DATABASE {name} IS '{FILL}'"))
            .await
            .expect("mark the database complete");
        println!("postgres: built in {:.1?}", started.elapsed());
        drop(conn);
        store
    })
}

/// A plain connection and the task driving it.
async fn tokio_postgres_connect(
    url: &str,
) -> (
    assetlib::postgres::deadpool_postgres::tokio_postgres::Client,
    tokio::task::JoinHandle<()>,
) {
    use assetlib::postgres::deadpool_postgres::tokio_postgres;
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to {url}: {e}"));
    let task = tokio::spawn(async move {
        let _ = conn.await;
    });
    (client, task)
}

/// Page 1 of `q`, as a request with every scope asks.
fn request(q: &str) -> SearchRequest {
    SearchRequest::new(parse_query(q).expect("a query"))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// Times `call` `runs` times after three untimed ones: (hits, p50, p95).
fn time<F, Fut>(rt: &tokio::runtime::Runtime, runs: usize, call: F) -> (u64, Duration, Duration)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = u64>,
{
    let mut total = 0;
    for _ in 0..3 {
        total = rt.block_on(call());
    }
    let mut took: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(rt.block_on(call()));
            started.elapsed()
        })
        .collect();
    took.sort_unstable();
    (total, percentile(&took, 0.5), percentile(&took, 0.95))
}

fn measure(rt: &tokio::runtime::Runtime, kind: &str, store: &Arc<dyn Store>, size: usize) {
    let runs = env_or("ASSETLIB_SEARCH_RUNS", 40usize);
    // The last word of `q` also matches as a prefix (`rare7` is `rare7`, `rare70`..`rare79`);
    // quoted, a word is matched whole.
    let queries = [
        ("title word, 0.1%", "\"t7\""),
        ("text word, 0.1%", "\"rare7\""),
        ("text word, 10%", "common"),
        ("two words, 0.1%", "rare7 common"),
        ("as typed, 1.1%", "rare7"),
        ("phrase, 0.1%", "\"rare7 notes\""),
    ];
    println!(
        "\n{kind}, {size} assets ({} with text): page 1 of 20",
        size / 10
    );
    // The first search after the store opens: sled reads the words of every asset's fields
    // into memory then (storage/sled/src/field_words.rs).
    let (rss, started) = (memory::rss_kib() / 1024, Instant::now());
    let first = rt.block_on(async {
        let search = store.search_store().expect("search");
        search
            .search(&request("first"))
            .await
            .expect("search")
            .total
    });
    println!(
        "  first search after open: {:.2?} ({first} hits), resident memory {rss} -> {} MiB",
        started.elapsed(),
        memory::rss_kib() / 1024
    );
    for (what, q) in queries {
        let store = Arc::clone(store);
        let (hits, p50, p95) = time(rt, runs, || {
            let store = Arc::clone(&store);
            async move {
                let search = store.search_store().expect("search");
                search.search(&request(q)).await.expect("search").total
            }
        });
        println!("  search {what:<18} q={q:<14} {hits:>7} hits  p50 {p50:>9.2?}  p95 {p95:>9.2?}");
    }
    let store = Arc::clone(store);
    let (hits, p50, p95) = time(rt, runs.min(10), || {
        let store = Arc::clone(&store);
        async move {
            let q = AssetQuery {
                search: Some("Report 4242 ".into()),
                ..AssetQuery::default()
            };
            store.list_assets(&q).await.expect("list").total
        }
    });
    println!(
        "  list search=\"Report 4242 \"          {hits:>7} hits  p50 {p50:>9.2?}  p95 {p95:>9.2?}"
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let size = env_or("ASSETLIB_SEARCH_SIZE", 1_000_000usize);
    let stores = std::env::var("ASSETLIB_BENCH_STORES").unwrap_or_else(|_| "sled,postgres".into());
    let pg = stores
        .contains("postgres")
        .then(|| TestCluster::durable_in(data_root().join("pg")));
    if stores.contains("sled") {
        let store = sled_open_or_build(&rt, size);
        measure(&rt, "sled", &store, size);
    }
    if let Some(server) = &pg {
        let store = pg_open_or_build(&rt, server, size);
        measure(&rt, "postgres", &store, size);
    }
    drop(rt);
    drop(pg);
}
