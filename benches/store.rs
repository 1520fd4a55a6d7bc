//! SledStore at scale: list page 1 and library loads on a small and a large database, and
//! durable create latency under 32 concurrent writers.
//!
//! ```text
//! cargo bench --features sled --bench store
//! ASSETLIB_BENCH_SIZES=2000,20000 ASSETLIB_BENCH_SECS=1 cargo bench --features sled --bench store
//! ```
//!
//! Environment:
//! - `ASSETLIB_BENCH_SIZES`: database sizes in assets, comma-separated (default
//!   `10000,1000000`). Ratios are printed for the largest against the smallest.
//! - `ASSETLIB_BENCH_SECS`: criterion measurement time per benchmark (default 3).
//! - `ASSETLIB_BENCH_CREATES`: durable creates in the latency run (default 6400).
//! - `ASSETLIB_BENCH_DATA`: where the databases are kept (default `target/bench-data`).
//!
//! Each database is built once (a 1,000,000-asset one takes a few minutes) and reused by
//! later runs: its directory holds a `complete` marker, written only after the fill was
//! flushed, that names the libraries in it. A directory without the marker is rebuilt.
//!
//! Measured per size: `list_assets` page 1 (20 per page, newest first) sorted by
//! created_at, title and updated_at; `load_library` of a 100-entry and a 1,000-entry library.
//! After the criterion groups it prints, from a timing loop in the same process, each call's
//! median and records read at every size and the ratio largest/smallest; then the durable
//! create run: creates per second, p50 and p99 latency, with 1 and with 32 writers.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assetlib::sled::{Durability, SledConfig, SledStore};
use assetlib::testing::sample_asset;
use assetlib::{
    AssetQuery, AssetSort, AssetType, LibraryEntry, LibraryWrite, Section, SortOrder, Store,
};
use criterion::{BenchmarkId, Criterion};
use uuid::Uuid;

const MARKER: &str = "complete";
const WRITERS: usize = 32;

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
    size: usize,
    store: SledStore,
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

/// Opens the database of `size` assets, building it first unless a complete one exists.
fn open_or_build(rt: &tokio::runtime::Runtime, size: usize) -> Db {
    let dir = data_root().join(format!("store-{size}"));
    let marker = dir.join(MARKER);
    if let Ok(text) = std::fs::read_to_string(&marker) {
        let ids: HashMap<&str, Uuid> = text
            .lines()
            .filter_map(|l| l.split_once('='))
            .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
            .collect();
        if let (Some(&lib100), Some(&lib1000)) = (ids.get("lib100"), ids.get("lib1000")) {
            let store = SledStore::open(dir.join("db")).expect("open bench database");
            println!("using {} ({size} assets)", dir.display());
            return Db {
                size,
                store,
                lib100,
                lib1000,
            };
        }
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("remove incomplete bench database");
    }
    std::fs::create_dir_all(&dir).expect("create bench data directory");
    println!("building {} ({size} assets, once)...", dir.display());
    let started = Instant::now();
    let config = SledConfig::default().durability(Durability::Periodic { every_ms: 1000 });
    let store = SledStore::open_with(dir.join("db"), config).expect("open new bench database");
    let ids = rt.block_on(fill(&store, size));
    let (lib100, lib1000) = (Uuid::new_v4(), Uuid::new_v4());
    rt.block_on(async {
        let n100 = ids.len().min(100);
        let n1000 = ids.len().min(1000);
        store
            .put_library(library(lib100, "Brand kit", &ids[..n100], 10))
            .await
            .expect("put 100-entry library");
        store
            .put_library(library(lib1000, "Archive", &ids[..n1000], 50))
            .await
            .expect("put 1,000-entry library");
        store.flush().await.expect("flush");
    });
    drop(store);
    std::fs::write(&marker, format!("lib100={lib100}\nlib1000={lib1000}\n")).expect("write marker");
    println!("built in {:.1?}", started.elapsed());
    open_or_build(rt, size)
}

async fn fill(store: &SledStore, size: usize) -> Vec<Uuid> {
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
                ids.push((i, store.insert_asset(a).await.expect("insert").id));
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

fn page1(sort: AssetSort) -> AssetQuery {
    AssetQuery {
        sort,
        order: SortOrder::Desc,
        per_page: 20,
        ..AssetQuery::default()
    }
}

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
    out.push(("load 100-entry library".into(), Call::Load(db.lib100)));
    out.push(("load 1,000-entry library".into(), Call::Load(db.lib1000)));
    out
}

#[derive(Clone)]
enum Call {
    List(AssetQuery),
    Load(Uuid),
}

impl Call {
    async fn run(&self, store: &SledStore) -> usize {
        match self {
            Call::List(q) => store.list_assets(q).await.expect("list").items.len(),
            Call::Load(id) => store
                .load_library(*id)
                .await
                .expect("load")
                .expect("library")
                .entries
                .len(),
        }
    }
}

fn bench(c: &mut Criterion, rt: &tokio::runtime::Runtime, dbs: &[Db]) {
    let mut group = c.benchmark_group("store");
    for db in dbs {
        for (name, call) in calls(db) {
            let id = name.replace(' ', "_").replace(',', "");
            group.bench_with_input(BenchmarkId::new(id, db.size), &call, |b, call| {
                b.iter(|| black_box(rt.block_on(call.run(&db.store))));
            });
        }
    }
    group.finish();
}

/// Median time and records read of each call on `db`, from a timing loop.
fn timings(rt: &tokio::runtime::Runtime, db: &Db) -> Vec<(String, Duration, u64)> {
    calls(db)
        .into_iter()
        .map(|(name, call)| {
            let before = db.store.records_read();
            rt.block_on(call.run(&db.store));
            let reads = db.store.records_read() - before;
            let mut times = Vec::new();
            let start = Instant::now();
            while times.len() < 2000
                && (times.len() < 20 || start.elapsed() < Duration::from_millis(700))
            {
                let t = Instant::now();
                black_box(rt.block_on(call.run(&db.store)));
                times.push(t.elapsed());
            }
            times.sort_unstable();
            (name, times[times.len() / 2], reads)
        })
        .collect()
}

fn print_ratios(rt: &tokio::runtime::Runtime, dbs: &[Db]) {
    let all: Vec<_> = dbs.iter().map(|db| (db.size, timings(rt, db))).collect();
    println!("\nstore: median per call (records read)");
    for (size, rows) in &all {
        for (name, time, reads) in rows {
            println!("  {size:>8} assets  {name:<26} {time:>10.1?}  ({reads} reads)");
        }
    }
    if let (Some((small, a)), Some((large, b))) = (all.first(), all.last()) {
        if small != large {
            println!("ratio {large}/{small} assets:");
            for ((name, ta, ra), (_, tb, rb)) in a.iter().zip(b) {
                println!(
                    "  {name:<26} {:.2}x time, reads {ra} -> {rb}",
                    tb.as_secs_f64() / ta.as_secs_f64()
                );
            }
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Durable creates (flushed before success) from `writers` concurrent tasks.
fn creates(rt: &tokio::runtime::Runtime, writers: usize, total: usize) {
    let root = data_root();
    std::fs::create_dir_all(&root).expect("bench data directory");
    let dir = tempfile::tempdir_in(&root).expect("temporary directory");
    let store = SledStore::open(dir.path().join("db")).expect("open");
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
                    store.insert_asset(a).await.expect("durable create");
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
}

fn main() {
    let rt = runtime();
    let dbs: Vec<Db> = sizes().into_iter().map(|n| open_or_build(&rt, n)).collect();
    let secs = env_or("ASSETLIB_BENCH_SECS", 3u64);
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(secs.max(1)))
        .configure_from_args();
    bench(&mut c, &rt, &dbs);
    c.final_summary();
    print_ratios(&rt, &dbs);
    let total = env_or("ASSETLIB_BENCH_CREATES", 6400usize);
    println!("\ndurable creates (each flushed before it returns):");
    creates(&rt, 1, (total / 16).max(50));
    creates(&rt, WRITERS, total);
}
