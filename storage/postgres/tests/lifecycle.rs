//! The asset lifecycle under concurrency, beyond core's conformance cases: changes from two
//! stores (two pools) on one database, a forced delete racing a library write, and a mix of
//! changes, deletes and library writes that must neither deadlock nor leave an entry whose
//! asset is gone.

use assetlib_core::store::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use assetlib_core::testing::{sample_asset, sample_library};
use assetlib_core::{
    AssetChange, AssetDeletion, AssetQuery, AssetStatus, AssetType, LibraryEntry, LibraryQuery,
    LibraryWrite, StoreError,
};
use assetlib_postgres::{PgConfig, PgStore};
use assetlib_testkit::postgres::TestCluster;
use chrono::{Duration, Utc};
use uuid::Uuid;

use crate::common::store;

/// What a change is judged by: every change sets one field to a value never set before, so
/// each state of the asset is one of these, different from every other.
type State = (String, Option<String>);

/// Concurrent changes of one asset through two stores, each with a pool of its own, never lose
/// one: every change applies to the state another left (or the first state), no two to the
/// same, so the changes form one chain that ends in the stored asset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_from_two_stores_never_lose_one() {
    const ROUNDS: i64 = 25;
    let db = TestCluster::shared().database().await;
    let connect = || PgStore::connect_with(db.url(), PgConfig::new().pool_size(2));
    let (one, two) = (connect().await.expect("one"), connect().await.expect("two"));
    let a = one
        .insert_asset(sample_asset("Start", AssetType::Pdf, 0), Log::ANONYMOUS)
        .await
        .expect("insert");
    let writers: Vec<_> = [
        (&one, "A", true),
        (&one, "B", false),
        (&two, "C", true),
        (&two, "D", false),
    ]
    .into_iter()
    .map(|(store, who, title)| {
        let store = store.clone();
        tokio::spawn(async move {
            let mut seen = Vec::new();
            for i in 0..ROUNDS {
                let mut c = AssetChange::at(a.created_at + Duration::seconds(i + 1));
                let value = format!("{who}{i}");
                if title {
                    c.title = Some(value);
                } else {
                    c.description = Some(Some(value));
                }
                let done = store
                    .update_asset(a.id, &c, Log::ANONYMOUS)
                    .await
                    .expect("update");
                let done = done.expect("the asset exists");
                let state = |x: &assetlib_core::Asset| (x.title.clone(), x.description.clone());
                seen.push((state(&done.before), state(&done.after)));
            }
            seen
        })
    })
    .collect();
    let mut next: HashMap<State, State> = HashMap::new();
    for w in writers {
        for (before, after) in w.await.expect("writer") {
            assert_ne!(before, after, "every change changes the asset");
            if let Some(other) = next.insert(before.clone(), after) {
                panic!("two changes applied to {before:?}: one was lost (other: {other:?})");
            }
        }
    }
    let mut at: State = (a.title.clone(), a.description.clone());
    let mut steps = 0;
    while let Some(after) = next.remove(&at) {
        at = after;
        steps += 1;
    }
    assert_eq!(steps, 4 * ROUNDS, "the changes form one chain");
    let stored = two.get_asset(a.id).await.expect("get").expect("exists");
    assert_eq!((stored.title, stored.description), at);
}

/// A small deterministic generator, so a failing mix can be run again.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

fn library_write(id: Uuid, n: i64, assets: &[Uuid]) -> LibraryWrite {
    let mut library = sample_library(&format!("Mix {n}"), n);
    library.id = id;
    library.settings.published = n % 2 == 0;
    LibraryWrite {
        library,
        slug_given: false,
        sections: vec![],
        entries: assets
            .iter()
            .enumerate()
            .map(|(i, &asset_id)| LibraryEntry {
                asset_id,
                section_id: None,
                display_order: i as u32,
                title: None,
                description: None,
            })
            .collect(),
    }
}

/// Changes, deletes (forced or not), library writes and library deletes of overlapping assets
/// and libraries, from several tasks at once: no call fails (a deadlock would), no entry is left whose asset
/// is gone, and the list totals and library counts are exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_lifecycle_writes_stay_consistent() {
    const TASKS: usize = 4;
    const OPS: usize = 40;
    let (store, _db) = store().await;
    let mut slots = Vec::new();
    for i in 0..6 {
        let a = store
            .insert_asset(
                sample_asset(&format!("m{i}"), AssetType::Pdf, i),
                Log::ANONYMOUS,
            )
            .await
            .expect("insert");
        slots.push(a.id);
    }
    let libraries: Vec<Uuid> = (0..3).map(|_| Uuid::new_v4()).collect();
    let slots = Arc::new(Mutex::new(slots));
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let (store, slots, libraries) = (store.clone(), slots.clone(), libraries.clone());
            tokio::spawn(async move {
                let mut rng = Lcg(t as u64 + 1);
                for op in 0..OPS {
                    let now: Vec<Uuid> = slots.lock().expect("slots").clone();
                    let slot = rng.below(now.len());
                    let id = now[slot];
                    match rng.below(5) {
                        0 => {
                            let mut c = AssetChange::at(Utc::now());
                            c.published = Some(rng.below(2) == 0);
                            c.title = Some(format!("t{t}-{op}"));
                            store
                                .update_asset(id, &c, Log::ANONYMOUS)
                                .await
                                .expect("update");
                        }
                        1 => {
                            let lib = rng.below(libraries.len());
                            let placed: Vec<Uuid> =
                                now.iter().copied().filter(|_| rng.below(2) == 0).collect();
                            let write = library_write(libraries[lib], lib as i64, &placed);
                            match store.put_library(write, Log::ANONYMOUS).await {
                                Ok(_) | Err(StoreError::UnknownAsset { .. }) => {}
                                Err(e) => panic!("put_library: {e}"),
                            }
                        }
                        2 => {
                            let force = rng.below(2) == 0;
                            match store
                                .delete_asset(id, force, Log::ANONYMOUS)
                                .await
                                .expect("delete")
                            {
                                AssetDeletion::Deleted(_) => {
                                    let a = sample_asset(&format!("r{t}-{op}"), AssetType::Pdf, 1);
                                    let a = store
                                        .insert_asset(a, Log::ANONYMOUS)
                                        .await
                                        .expect("reinsert");
                                    let mut slots = slots.lock().expect("slots");
                                    if let Some(s) = slots.iter_mut().find(|s| **s == id) {
                                        *s = a.id;
                                    }
                                }
                                AssetDeletion::InUse(by) => assert!(!force && !by.is_empty()),
                                AssetDeletion::NotFound => {}
                            }
                        }
                        3 => {
                            let lib = libraries[rng.below(libraries.len())];
                            store
                                .delete_library(lib, Log::ANONYMOUS)
                                .await
                                .expect("delete library");
                        }
                        _ => {
                            let lib = libraries[rng.below(libraries.len())];
                            store.record_library_view(lib).await.expect("view");
                            store.asset_usage(id).await.expect("usage");
                        }
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }

    let client = store.pool().get().await.expect("connection");
    let dangling: i64 = client
        .query_one(
            "SELECT count(*) FROM assetlib.library_entries e \
             WHERE NOT EXISTS (SELECT 1 FROM assetlib.assets a WHERE a.id = e.asset_id)",
            &[],
        )
        .await
        .expect("dangling")
        .get(0);
    assert_eq!(dangling, 0, "an entry outlived its asset");
    for (status, published) in [
        (AssetStatus::Published, Some(true)),
        (AssetStatus::Draft, Some(false)),
        (AssetStatus::Any, None),
    ] {
        let counted: i64 = client
            .query_one(
                "SELECT count(*) FROM assetlib.assets \
                 WHERE $1::boolean IS NULL OR published = $1",
                &[&published],
            )
            .await
            .expect("count")
            .get(0);
        let q = AssetQuery {
            status,
            ..AssetQuery::default()
        };
        let listed = store.list_assets(&q).await.expect("list").total;
        assert_eq!(listed, counted as u64, "{status:?}");
    }
    let page = store
        .list_libraries(&LibraryQuery::default())
        .await
        .expect("libraries");
    for summary in page.items {
        let rows = store
            .load_library(summary.library.id)
            .await
            .expect("load")
            .expect("listed");
        let published = rows.entries.iter().filter(|r| r.asset.published).count();
        assert_eq!(summary.asset_count, published as u64);
        for row in &rows.entries {
            let holders = store.asset_usage(row.entry.asset_id).await.expect("usage");
            assert!(holders.iter().any(|h| h.id == summary.library.id));
        }
    }
}

/// A forced delete racing a library write that places the asset never leaves the library with
/// an entry of the deleted asset: either the write fails (the asset is gone) or the delete
/// removes the entry it wrote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forced_delete_racing_library_write_leaves_no_entry() {
    let (store, _db) = store().await;
    let keep = store
        .insert_asset(sample_asset("Kept", AssetType::Pdf, 0), Log::ANONYMOUS)
        .await
        .expect("insert");
    for round in 0..30 {
        let x = store
            .insert_asset(
                sample_asset(&format!("x{round}"), AssetType::Pdf, round),
                Log::ANONYMOUS,
            )
            .await
            .expect("insert");
        let lib = Uuid::new_v4();
        let writer = {
            let store = store.clone();
            tokio::spawn(async move {
                let write = library_write(lib, round, &[keep.id, x.id]);
                store.put_library(write, Log::ANONYMOUS).await
            })
        };
        let deleter = {
            let store = store.clone();
            tokio::spawn(async move { store.delete_asset(x.id, true, Log::ANONYMOUS).await })
        };
        let written = writer.await.expect("writer");
        let deleted = deleter.await.expect("deleter").expect("delete");
        assert!(matches!(deleted, AssetDeletion::Deleted(_)), "{deleted:?}");
        let rows = store.load_library(lib).await.expect("load");
        match written {
            Ok(_) => {
                let rows = rows.expect("written");
                let ids: Vec<Uuid> = rows.entries.iter().map(|r| r.entry.asset_id).collect();
                assert_eq!(ids, vec![keep.id], "round {round}");
            }
            Err(StoreError::UnknownAsset { id }) => {
                assert_eq!(id, x.id);
                assert!(
                    rows.is_none(),
                    "round {round}: a refused write changed nothing"
                );
            }
            Err(e) => panic!("round {round}: put_library: {e}"),
        }
        let client = store.pool().get().await.expect("connection");
        let entries: i64 = client
            .query_one(
                "SELECT count(*) FROM assetlib.library_entries WHERE asset_id = $1",
                &[&x.id],
            )
            .await
            .expect("entries")
            .get(0);
        assert_eq!(entries, 0, "round {round}: an entry outlived its asset");
    }
}
