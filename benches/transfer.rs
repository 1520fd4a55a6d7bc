//! Moving data at scale: `copy_records` (what `migrate` runs) from a sled store of N assets
//! into a fresh PostgreSQL database, and the archive of it written and restored into a fresh
//! sled store (what `backup` and `restore` run), each timed, with the process's resident
//! memory sampled every 10 ms; all of it for N/4 assets and for N, so memory that grew with
//! the number of assets would show.
//!
//! ```text
//! cargo bench --features sled,postgres,transfer --bench transfer
//! ASSETLIB_MIGRATE_SIZE=20000 cargo bench --features sled,postgres,transfer --bench transfer
//! ```
//!
//! Environment: `ASSETLIB_MIGRATE_SIZE` (N, default 100,000). The data: N assets (titles of
//! their own, two tags each, pdf, image and video by turns, the event of each create), one
//! library of 50 entries for every 1,000 assets, each with a view, written through the
//! store's own writes (sled with periodic flushes while it is filled, its page cache held to
//! 64 MiB as the ready server's `--sled-cache-mb 64` holds it). The PostgreSQL server
//! is the test kit's, started on 127.0.0.1 for the run and stopped by its PID at the end.
//! Records go by in batches of 500, each a durable transaction of the target.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use assetlib::postgres::PgStore;
use assetlib::sled::{Durability, SledConfig, SledStore};
use assetlib::store::prelude::*;
use assetlib::testing::{sample_asset, sample_library};
use assetlib::transfer::{archive, copy_records};
use assetlib::{AssetType, Files, LibraryEntry, LibraryWrite, Store};
use assetlib_testkit::postgres::TestCluster;

#[path = "common/memory.rs"]
mod memory;

fn size() -> usize {
    std::env::var("ASSETLIB_MIGRATE_SIZE")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(100_000)
}

/// Runs `work`, sampling the resident set every 10 ms: its result, the seconds it took, and
/// how far the resident set rose above where it started (MiB).
async fn measured<T>(work: impl std::future::Future<Output = T>) -> (T, f64, f64) {
    let start = memory::rss_kib();
    let peak = Arc::new(AtomicU64::new(start));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(memory::rss_kib(), Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        })
    };
    let began = Instant::now();
    let out = work.await;
    let took = began.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let rose = peak.load(Ordering::Relaxed).saturating_sub(start) as f64 / 1024.0;
    (out, took, rose)
}

/// sled with its page cache held to 64 MiB: at its default of 1 GiB the cache grows with what
/// is written until it is full, which is no cost of a move.
fn sled_config() -> SledConfig {
    SledConfig::default().cache_capacity(64 * 1024 * 1024)
}

/// A sled store in `dir` filled with `n` assets and their libraries.
async fn filled(dir: &std::path::Path, n: usize) -> SledStore {
    let config = sled_config().durability(Durability::Periodic { every_ms: 1000 });
    let store = SledStore::open_with(dir, config).expect("open sled");
    let shared: Arc<dyn Store> = Arc::new(store.clone());
    let mut set = tokio::task::JoinSet::new();
    const TASKS: usize = 8;
    for t in 0..TASKS {
        let store = Arc::clone(&shared);
        set.spawn(async move {
            let mut ids = Vec::new();
            for i in (t..n).step_by(TASKS) {
                let kind = [AssetType::Pdf, AssetType::Image, AssetType::Video][i % 3];
                let mut a = sample_asset(&format!("Asset {i}"), kind, i as i64);
                a.tags = vec![format!("t{}", i % 50), "moved".into()];
                let a = store.insert_asset(a, Log::ANONYMOUS).await.expect("insert");
                ids.push(a.id);
            }
            ids
        });
    }
    let mut ids = Vec::with_capacity(n);
    while let Some(done) = set.join_next().await {
        ids.extend(done.expect("filler"));
    }
    for (k, chunk) in ids.chunks(1000).enumerate() {
        let library = sample_library(&format!("Library {k}"), k as i64);
        let id = library.id;
        let entries = chunk
            .iter()
            .take(50)
            .enumerate()
            .map(|(order, asset)| LibraryEntry {
                asset_id: *asset,
                section_id: None,
                display_order: order as u32,
                title: None,
                description: None,
            })
            .collect();
        let write = LibraryWrite {
            library,
            slug_given: false,
            sections: Vec::new(),
            entries,
        };
        shared
            .put_library(write, Log::ANONYMOUS)
            .await
            .expect("library");
        shared.record_library_view(id).await.expect("view");
    }
    shared.flush().await.expect("flush");
    store
}

async fn run(n: usize, cluster: &TestCluster, work: &std::path::Path) {
    let filled_at = Instant::now();
    let source = filled(&work.join(format!("source-{n}")), n).await;
    println!("{n} assets: filled in {:.1?}", filled_at.elapsed());
    let source: Arc<dyn Store> = Arc::new(source);
    let from = source.transfer_store().expect("sled moves");

    let database = cluster.database().await;
    let target = PgStore::connect(database.url()).await.expect("connect");
    let to = target.transfer_store().expect("PostgreSQL moves");
    let (counts, took, rose) = measured(copy_records(from, to, |_| {})).await;
    let counts = counts.expect("copy");
    println!(
        "{n} assets: migrate sled -> PostgreSQL: {} records in {took:.1} s, {:.0} assets/s, {:.0} records/s, memory +{rose:.0} MiB",
        counts.total(),
        counts.assets as f64 / took,
        counts.total() as f64 / took
    );

    let files = Files::memory();
    let out = work.join(format!("backup-{n}.zip"));
    let (made, took, rose) = measured(archive::write(from, &files, &out, "bench", |_| {})).await;
    made.expect("backup");
    let bytes = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    println!(
        "{n} assets: backup: {took:.1} s, {:.0} assets/s, {} MiB, memory +{rose:.0} MiB",
        n as f64 / took,
        bytes / (1024 * 1024)
    );
    let restored =
        SledStore::open_with(work.join(format!("restored-{n}")), sled_config()).expect("open");
    let restored: Arc<dyn Store> = Arc::new(restored);
    let into = restored.transfer_store().expect("sled moves");
    let (done, took, rose) = measured(archive::restore(&out, into, &Files::memory(), |_| {})).await;
    done.expect("restore");
    println!(
        "{n} assets: restore into sled (the archive checked first): {took:.1} s, {:.0} assets/s, memory +{rose:.0} MiB",
        n as f64 / took
    );
}

fn main() {
    // `cargo bench` passes criterion's flags; this bench has no groups to filter.
    let n = size();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let work = tempfile::tempdir().expect("work dir");
    let cluster = TestCluster::start();
    runtime.block_on(async {
        run(n / 4, &cluster, work.path()).await;
        run(n, &cluster, work.path()).await;
    });
}
