//! Many writers and readers at once: nothing lost, totals exact, library loads whole.

use assetlib_core::store::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use assetlib_core::{AssetQuery, AssetType, LibraryQuery};
use assetlib_sled::SledStore;
use uuid::Uuid;

use crate::common::{all_orders, asset, library, store, walk};

const WRITERS: usize = 8;
const PER_WRITER: usize = 200;
const SEED: usize = 20;

/// Checks that a loaded library is one whole document: its title names its entry count.
async fn check_library(sled: &SledStore, id: Uuid) {
    let rows = sled
        .load_library(id)
        .await
        .expect("load")
        .expect("library exists");
    let n: usize = rows
        .library
        .settings
        .title
        .trim_start_matches('n')
        .parse()
        .expect("title n<count>");
    assert_eq!(rows.entries.len(), n, "a load saw a mix of two documents");
    assert_eq!(rows.sections.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_writers_with_readers_lose_nothing() {
    let (sled, _dir) = store();
    let mut seed = Vec::new();
    for i in 0..SEED {
        seed.push(
            sled.insert_asset(asset("Seed", AssetType::Image, i as i64), Log::ANONYMOUS)
                .await
                .expect("seed")
                .id,
        );
    }
    let seed = Arc::new(seed);
    let lib = Uuid::new_v4();
    sled.put_library(library(lib, "n1", &seed[..1], 1, 0), Log::ANONYMOUS)
        .await
        .expect("library");
    let done = Arc::new(AtomicBool::new(false));

    let mut writers = tokio::task::JoinSet::new();
    for w in 0..WRITERS {
        let sled = sled.clone();
        writers.spawn(async move {
            let mut mine = Vec::with_capacity(PER_WRITER);
            let mut last_total = 0;
            for i in 0..PER_WRITER {
                let a = asset(&format!("W{w} {i}"), AssetType::ALL[i % 9], (i % 17) as i64);
                mine.push(
                    sled.insert_asset(a, Log::ANONYMOUS)
                        .await
                        .expect("insert")
                        .id,
                );
                if i % 10 == 0 {
                    let page = sled
                        .list_assets(&AssetQuery::default())
                        .await
                        .expect("list");
                    assert!(page.total >= last_total, "totals only grow");
                    assert!(
                        page.total >= (SEED + mine.len()) as u64,
                        "own writes are visible"
                    );
                    last_total = page.total;
                    check_library(&sled, lib).await;
                }
            }
            mine
        });
    }
    // One task rewrites the library with documents of 1 to 20 entries, another reads it.
    let replacer = {
        let (sled, seed, done) = (sled.clone(), Arc::clone(&seed), Arc::clone(&done));
        tokio::spawn(async move {
            let mut k = 0;
            while !done.load(Ordering::Relaxed) {
                let n = 1 + k % SEED;
                sled.put_library(
                    library(lib, &format!("n{n}"), &seed[..n], 1, n / 2),
                    Log::ANONYMOUS,
                )
                .await
                .expect("replace");
                k += 1;
            }
            k
        })
    };
    let reader = {
        let (sled, done) = (sled.clone(), Arc::clone(&done));
        tokio::spawn(async move {
            let mut reads = 0;
            while !done.load(Ordering::Relaxed) {
                check_library(&sled, lib).await;
                let libs = sled
                    .list_libraries(&LibraryQuery::default())
                    .await
                    .expect("list");
                assert_eq!(libs.total, 1);
                reads += 1;
            }
            reads
        })
    };

    let mut all: HashSet<Uuid> = seed.iter().copied().collect();
    while let Some(mine) = writers.join_next().await {
        all.extend(mine.expect("writer"));
    }
    done.store(true, Ordering::Relaxed);
    let replaces = replacer.await.expect("replacer");
    let reads = reader.await.expect("reader");
    assert!(replaces > 0 && reads > 0);

    assert_eq!(all.len(), SEED + WRITERS * PER_WRITER);
    for q in all_orders() {
        let walked: HashSet<Uuid> = walk(&sled, &q).await.into_iter().collect();
        assert_eq!(walked, all, "{q:?}");
    }
    let mut by_type = 0;
    for t in AssetType::ALL {
        let q = AssetQuery {
            asset_type: Some(t),
            ..AssetQuery::default()
        };
        by_type += sled.list_assets(&q).await.expect("list").total;
    }
    assert_eq!(by_type, all.len() as u64);
    let integrity = sled.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
    assert_eq!(integrity.published_assets, all.len() as u64);
}
