//! Work grows with the answer, not with the database: the same calls read the same number of
//! records and index keys on a small and on a large database.
//!
//! The test compares 1,000 with 4,000 assets, which a test build fills in seconds. The same
//! comparison at 10,000 and 1,000,000 assets, with times, is the store bench
//! (`benches/store.rs`, see BENCHMARKS.md), which prints the records read per call at both
//! sizes.

use assetlib_core::store::prelude::*;
use assetlib_core::{AssetQuery, AssetStatus, AssetType, LibraryQuery, SortOrder};
use assetlib_sled::SledStore;
use uuid::Uuid;

use crate::common::{all_orders, asset, fast_store, library};

const LIBRARY_ENTRIES: usize = 1000;

async fn fill(sled: &SledStore, n: usize) -> Vec<Uuid> {
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..4 {
        let sled = sled.clone();
        tasks.spawn(async move {
            let mut ids = Vec::new();
            for i in (w..n).step_by(4) {
                let mut a = asset(&format!("Asset {i}"), AssetType::ALL[i % 9], i as i64);
                // Every fifth asset is a draft.
                a.published = i % 5 != 0;
                ids.push(
                    sled.insert_asset(a, Log::ANONYMOUS)
                        .await
                        .expect("insert")
                        .id,
                );
            }
            ids
        });
    }
    let mut ids = Vec::with_capacity(n);
    while let Some(part) = tasks.join_next().await {
        ids.extend(part.expect("filler"));
    }
    ids
}

/// Records read by each call of a fixed set, on a database of `n` assets.
async fn measure(n: usize) -> Vec<(String, u64)> {
    let (sled, _dir) = fast_store();
    let ids = fill(&sled, n).await;
    let lib = Uuid::new_v4();
    sled.put_library(
        library(lib, "Big", &ids[..LIBRARY_ENTRIES], 10, 50),
        Log::ANONYMOUS,
    )
    .await
    .expect("put library");
    for _ in 0..30 {
        let other = Uuid::new_v4();
        sled.put_library(library(other, "Small", &ids[..3], 1, 1), Log::ANONYMOUS)
            .await
            .expect("put");
    }

    let mut out = Vec::new();
    let mut queries: Vec<(String, AssetQuery)> = all_orders()
        .into_iter()
        .map(|q| (format!("page 1 {q:?}"), q))
        .collect();
    queries.push((
        "page 1 of pdfs".into(),
        AssetQuery {
            asset_type: Some(AssetType::Pdf),
            ..AssetQuery::default()
        },
    ));
    for status in [AssetStatus::Draft, AssetStatus::Any] {
        queries.push((
            format!("page 1 of {status:?}"),
            AssetQuery {
                status,
                ..AssetQuery::default()
            },
        ));
        queries.push((
            format!("page 1 of {status:?} pdfs"),
            AssetQuery {
                status,
                asset_type: Some(AssetType::Pdf),
                ..AssetQuery::default()
            },
        ));
    }
    let total = sled
        .list_assets(&AssetQuery::default())
        .await
        .expect("list")
        .total;
    queries.push((
        "last page".into(),
        AssetQuery {
            page: total.div_ceil(20),
            order: SortOrder::Desc,
            ..AssetQuery::default()
        },
    ));
    for (name, q) in queries {
        sled.forget_kept_assets();
        let before = sled.records_read();
        let page = sled.list_assets(&q).await.expect("list");
        assert_eq!(page.items.len(), 20, "{name}");
        out.push((name.clone(), sled.records_read() - before));
        // Read again, the page's assets are kept: only the index keys and counts are read.
        let before = sled.records_read();
        let again = sled.list_assets(&q).await.expect("list");
        assert_eq!(again, page, "{name}");
        out.push((format!("{name}, again"), sled.records_read() - before));
    }

    let before = sled.records_read();
    let rows = sled
        .load_library(lib)
        .await
        .expect("load")
        .expect("library");
    assert_eq!(rows.entries.len(), LIBRARY_ENTRIES);
    out.push((
        "load 1,000-entry library".into(),
        sled.records_read() - before,
    ));

    let before = sled.records_read();
    let libs = sled
        .list_libraries(&LibraryQuery::default())
        .await
        .expect("list");
    assert_eq!(libs.items.len(), 20);
    out.push(("library list page 1".into(), sled.records_read() - before));
    out
}

async fn compare(small: usize, large: usize) {
    let small = measure(small).await;
    let large = measure(large).await;
    for (name, reads) in &large {
        eprintln!("{reads:>6} reads: {name}");
    }
    assert_eq!(small, large, "reads per call, small vs large database");
    for (name, reads) in &large {
        let bound = if name.ends_with(", again") {
            // one or two counts + 20 index keys (a page 2-5 walk reads no more keys)
            2 + 20
        } else if name.starts_with("load") {
            // record + items (sections and entries, each entry with its asset's fields) +
            // views: no asset read
            1 + (LIBRARY_ENTRIES + 10) + 1
        } else {
            // one or two counts + 20 index keys + 20 records + 20 counters
            2 + 3 * 20
        };
        assert!(
            *reads <= bound as u64,
            "{name}: {reads} reads, expected at most {bound}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_follows_the_answer_not_the_database() {
    compare(1_000, 4_000).await;
}
