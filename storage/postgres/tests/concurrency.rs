//! Exact counters and race-free slugs under concurrency, over a pool.

use assetlib_core::store::prelude::*;
use std::collections::HashSet;

use assetlib_core::testing::{sample_asset, sample_library};
use assetlib_core::{
    AssetChange, AssetDeletion, AssetQuery, AssetStatus, AssetType, LibraryWrite, StoreError,
};
use assetlib_postgres::PgConfig;

use crate::common::store;

const TASKS: usize = 8;
const EACH: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_and_downloads_are_exact() {
    let (store, db) = store().await;
    let lib = sample_library("Busy", 1);
    store
        .put_library(
            LibraryWrite {
                library: lib.clone(),
                slug_given: false,
                sections: vec![],
                entries: vec![],
            },
            Log::ANONYMOUS,
        )
        .await
        .expect("put");
    let asset = store
        .insert_asset(sample_asset("Busy file", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut seen = Vec::with_capacity(EACH);
                for _ in 0..EACH {
                    let view = store.record_library_view(lib.id).await.expect("view");
                    store.record_download(asset.id).await.expect("download");
                    seen.push(view.expect("published").views);
                }
                seen
            })
        })
        .collect();
    let mut views = HashSet::new();
    for t in tasks {
        for v in t.await.expect("task") {
            assert!(views.insert(v), "two views got count {v}");
        }
    }
    let n = (TASKS * EACH) as u64;
    assert_eq!(views, (1..=n).collect());
    let rows = store.load_library(lib.id).await.unwrap().unwrap();
    assert_eq!(rows.library.view_count, n);
    let stored = store.get_asset(asset.id).await.unwrap().unwrap();
    assert_eq!(stored.download_count, n);
    // Written to the database: a second store over it (another replica) sees them all.
    store.flush().await.expect("flush");
    let other = crate::common::replica(&db).await;
    let rows = other.load_library(lib.id).await.unwrap().unwrap();
    assert_eq!(rows.library.view_count, n);
    let stored = other.get_asset(asset.id).await.unwrap().unwrap();
    assert_eq!(stored.download_count, n);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_inserts_take_distinct_slugs() {
    let (store, _db) = store().await;
    let tasks: Vec<_> = (0..TASKS)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut slugs = Vec::new();
                for j in 0..10 {
                    let a = sample_asset("Same title", AssetType::Image, (i * 10 + j) as i64);
                    slugs.push(
                        store
                            .insert_asset(a, Log::ANONYMOUS)
                            .await
                            .expect("insert")
                            .slug,
                    );
                }
                slugs
            })
        })
        .collect();
    let mut slugs = HashSet::new();
    for t in tasks {
        slugs.extend(t.await.expect("task"));
    }
    let mut want: HashSet<String> = (2..=TASKS * 10)
        .map(|n| format!("same-title-{n}"))
        .collect();
    want.insert("same-title".into());
    assert_eq!(slugs, want);
}

/// A slug an insert found taken goes straight to its counter next time (one shared commit,
/// not two), and is still taken itself once it is free again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slug_found_taken_is_taken_again_once_free() {
    let (store, _db) = store().await;
    let insert = |i: i64| {
        let store = store.clone();
        async move {
            store
                .insert_asset(
                    sample_asset("Reused title", AssetType::Pdf, i),
                    Log::ANONYMOUS,
                )
                .await
                .expect("insert")
        }
    };
    let first = insert(1).await;
    assert_eq!(first.slug, "reused-title");
    assert_eq!(insert(2).await.slug, "reused-title-2");
    assert_eq!(insert(3).await.slug, "reused-title-3");
    let deleted = store
        .delete_asset(first.id, true, Log::ANONYMOUS)
        .await
        .expect("delete");
    assert!(matches!(deleted, AssetDeletion::Deleted(_)));
    assert_eq!(insert(4).await.slug, "reused-title");
    let next = insert(5).await.slug;
    assert!(
        next.strip_prefix("reused-title-")
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n >= 4),
        "{next}"
    );
}

/// Inserts that arrive together share a transaction and its commit, and each still lands
/// whole with its own answer: 32 tasks insert 8 assets each, half of them all titled alike
/// (each takes a numbered slug), and two tasks insert one id at once (one of them is told
/// the id exists, the other's insert stands, and the rest of their batches land).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inserts_that_arrive_together_share_commits_and_each_lands() {
    let (store, _db) = store().await;
    let twice = sample_asset("Twice", AssetType::Pdf, 0);
    let tasks: Vec<_> = (0..32)
        .map(|t| {
            let (store, twice) = (store.clone(), twice.clone());
            tokio::spawn(async move {
                let mut answers = Vec::new();
                if t < 2 {
                    answers.push(store.insert_asset(twice, Log::ANONYMOUS).await);
                }
                for i in 0..8 {
                    let title = if i % 2 == 0 {
                        "Logo".to_owned()
                    } else {
                        format!("Own {t} {i}")
                    };
                    let asset = sample_asset(&title, AssetType::Pdf, (t * 8 + i) as i64);
                    answers.push(store.insert_asset(asset, Log::ANONYMOUS).await);
                }
                answers
            })
        })
        .collect();
    let (mut stored, mut duplicates) = (Vec::new(), 0);
    for task in tasks {
        for answer in task.await.expect("task") {
            match answer {
                Ok(asset) => stored.push(asset),
                Err(StoreError::DuplicateId { id }) if id == twice.id => duplicates += 1,
                Err(e) => panic!("insert: {e}"),
            }
        }
    }
    assert_eq!((stored.len(), duplicates), (32 * 8 + 1, 1));
    let slugs: HashSet<&str> = stored.iter().map(|a| a.slug.as_str()).collect();
    assert_eq!(
        slugs.len(),
        stored.len(),
        "every asset has a slug of its own"
    );
    let mut logos: Vec<&str> = slugs
        .iter()
        .copied()
        .filter(|s| s.starts_with("logo"))
        .collect();
    logos.sort_unstable();
    let mut want: Vec<String> = (2..=128).map(|n| format!("logo-{n}")).collect();
    want.push("logo".into());
    want.sort_unstable();
    assert_eq!(logos, want);
    for asset in &stored {
        let read = store
            .get_asset(asset.id)
            .await
            .expect("get")
            .expect("stored");
        assert_eq!(&read, asset, "what was answered is what is stored");
    }
    let page = store
        .list_assets(&AssetQuery {
            status: AssetStatus::Any,
            ..AssetQuery::default()
        })
        .await
        .expect("list");
    assert_eq!(page.total, stored.len() as u64);
    let (writes, commits) = store.insert_commits();
    assert!(
        writes >= stored.len() as u64 && commits < writes / 2,
        "{writes} inserts in {commits} commits: inserts that arrive together share them"
    );
}

/// A runtime that shuts down while its inserts are in shared transactions leaves the group
/// commit usable: inserts from another runtime are still answered, one after another (a
/// drainer dropped with its runtime gives its place back; one the runtime leaves undropped
/// is replaced by a waiting write after 5 s without progress).
#[test]
fn inserts_are_answered_after_the_runtime_of_a_group_shut_down() {
    let runtime = || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
    };
    let first = runtime();
    let (store, db) = first.block_on(store());
    for i in 0..512 {
        let store = store.clone();
        first.spawn(async move {
            let asset = sample_asset(&format!("First {i}"), AssetType::Pdf, i);
            let _ = store.insert_asset(asset, Log::ANONYMOUS).await;
        });
    }
    // Inserts are running in shared transactions when the runtime goes.
    first.block_on(async { tokio::time::sleep(std::time::Duration::from_millis(10)).await });
    first.shutdown_background();
    let second = runtime();
    second.block_on(async {
        for i in 0..16 {
            let asset = sample_asset(&format!("Second {i}"), AssetType::Pdf, 1000 + i);
            let answered = tokio::time::timeout(
                std::time::Duration::from_secs(30),
                store.insert_asset(asset, Log::ANONYMOUS),
            )
            .await;
            assert!(
                answered.is_ok(),
                "insert {i} of the second runtime was never answered"
            );
        }
    });
    drop(store);
    drop(second);
    drop(db);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_library_creates_take_distinct_slugs() {
    let (store, _db) = store().await;
    let tasks: Vec<_> = (0..TASKS)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let lib = sample_library("Kit", i as i64);
                store
                    .put_library(
                        LibraryWrite {
                            library: lib.clone(),
                            slug_given: false,
                            sections: vec![],
                            entries: vec![],
                        },
                        Log::ANONYMOUS,
                    )
                    .await
                    .expect("put");
                store
                    .load_library(lib.id)
                    .await
                    .unwrap()
                    .unwrap()
                    .library
                    .slug
            })
        })
        .collect();
    let mut slugs = HashSet::new();
    for t in tasks {
        slugs.insert(t.await.expect("task"));
    }
    let mut want: HashSet<String> = (2..=TASKS).map(|n| format!("kit-{n}")).collect();
    want.insert("kit".into());
    assert_eq!(slugs, want);
}

/// Library writes of one family of slugs (`kit`, `kit-2`, ...: derived from a title, or given)
/// race with each other and with writes of other families: each lands with a slug of its own
/// or, for a given slug another write took first, is refused as taken, never failing
/// otherwise (a unique violation would).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn library_writes_of_one_slug_family_and_of_others_take_distinct_slugs() {
    let (store, _db) = store().await;
    for round in 0..4 {
        let wanted: Vec<(&str, bool)> = [("kit", false); TASKS]
            .into_iter()
            .chain([("kit-2", true), ("kit-3", true), ("kit-9", true)])
            .chain([("tool", false); TASKS / 2])
            .collect();
        let tasks: Vec<_> = wanted
            .into_iter()
            .enumerate()
            .map(|(i, (slug, given))| {
                let store = store.clone();
                tokio::spawn(async move {
                    let mut lib = sample_library("Kit", i as i64);
                    lib.slug = slug.to_owned();
                    lib.settings.workspace_id = Some(format!("round-{round}"));
                    let put = store
                        .put_library(
                            LibraryWrite {
                                library: lib.clone(),
                                slug_given: given,
                                sections: vec![],
                                entries: vec![],
                            },
                            Log::ANONYMOUS,
                        )
                        .await;
                    match put {
                        Ok(_) => {
                            let stored = store.load_library(lib.id).await.expect("load");
                            let slug = stored.expect("stored").library.slug;
                            assert!(!given || slug == lib.slug, "a given slug is kept");
                            Some(slug)
                        }
                        Err(StoreError::SlugTaken { slug }) if given => {
                            assert_eq!(slug, lib.slug);
                            None
                        }
                        Err(e) => panic!("{slug}: {e:?}"),
                    }
                })
            })
            .collect();
        let mut slugs = Vec::new();
        for t in tasks {
            slugs.extend(t.await.expect("task"));
        }
        let distinct: HashSet<&String> = slugs.iter().collect();
        assert_eq!(distinct.len(), slugs.len(), "{slugs:?}");
        assert!(slugs.len() >= TASKS + TASKS / 2, "every derived slug lands");
        assert!(distinct.contains(&"kit".to_owned()) && distinct.contains(&"tool".to_owned()));
    }
}

/// Counters commit with `synchronous_commit = off` by sending `SET LOCAL` with the update in
/// one message, which PostgreSQL runs as one transaction: the setting holds for it and no
/// longer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_local_in_one_message_holds_for_that_message_only() {
    let (store, _db) = store().await;
    let client = store.pool().get().await.expect("connection");
    let shown = |messages: Vec<tokio_postgres::SimpleQueryMessage>| -> Vec<String> {
        messages
            .into_iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
                _ => None,
            })
            .collect()
    };
    let inside = client
        .simple_query("SET LOCAL synchronous_commit = off; SHOW synchronous_commit")
        .await
        .expect("inside");
    assert_eq!(shown(inside), ["off"]);
    let after = client
        .simple_query("SHOW synchronous_commit")
        .await
        .expect("after");
    assert_eq!(shown(after), ["on"]);
}

/// A small pool still serves many concurrent callers (they wait for a connection).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_of_two_serves_many_callers() {
    let db = assetlib_testkit::postgres::TestCluster::shared()
        .database()
        .await;
    let store = assetlib_postgres::PgStore::connect_with(db.url(), PgConfig::new().pool_size(2))
        .await
        .expect("connect");
    let a = store
        .insert_asset(sample_asset("Pooled", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.record_download(a.id).await.expect("download") })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }
    assert_eq!(
        store.get_asset(a.id).await.unwrap().unwrap().download_count,
        50
    );
}

/// The counts behind list totals follow concurrent inserts, publication changes and deletes
/// exactly, for published assets, drafts and both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_totals_follow_concurrent_writes() {
    let (store, _db) = store().await;
    let types = [AssetType::Pdf, AssetType::Image, AssetType::Audio];
    let tasks: Vec<_> = (0..TASKS)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                for j in 0..12 {
                    let mut a = sample_asset(&format!("n{i}-{j}"), types[j % 3], j as i64);
                    a.published = j % 4 != 0;
                    let a = store.insert_asset(a, Log::ANONYMOUS).await.expect("insert");
                    if j % 2 == 0 {
                        let mut flip = AssetChange::at(a.updated_at);
                        flip.published = Some(!a.published);
                        store
                            .update_asset(a.id, &flip, Log::ANONYMOUS)
                            .await
                            .expect("update");
                    }
                    if j % 6 == 5 {
                        let gone = store
                            .delete_asset(a.id, false, Log::ANONYMOUS)
                            .await
                            .expect("delete");
                        assert!(matches!(gone, AssetDeletion::Deleted(_)), "{gone:?}");
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }
    let client = store.pool().get().await.expect("connection");
    let total = |status: AssetStatus, t: Option<AssetType>| {
        let store = store.clone();
        async move {
            let q = AssetQuery {
                asset_type: t,
                status,
                ..AssetQuery::default()
            };
            store.list_assets(&q).await.expect("list").total
        }
    };
    for status in [AssetStatus::Published, AssetStatus::Draft, AssetStatus::Any] {
        for t in [
            None,
            Some(AssetType::Pdf),
            Some(AssetType::Image),
            Some(AssetType::Audio),
            Some(AssetType::Link),
        ] {
            let counted: i64 = client
                .query_one(
                    "SELECT count(*) FROM assetlib.assets \
                     WHERE ($1::boolean IS NULL OR published = $1) \
                       AND ($2::text IS NULL OR asset_type = $2)",
                    &[
                        &match status {
                            AssetStatus::Published => Some(true),
                            AssetStatus::Draft => Some(false),
                            AssetStatus::Any => None,
                        },
                        &t.map(|t| t.as_str()),
                    ],
                )
                .await
                .expect("count")
                .get(0);
            assert_eq!(total(status, t).await, counted as u64, "{status:?} {t:?}");
        }
    }
    // Per task: 12 inserted, 2 deleted (j = 5, 11: published, not flipped); of the other 10,
    // j = 0, 4, 8 start as drafts and are published, j = 2, 6, 10 are unpublished.
    assert_eq!(total(AssetStatus::Any, None).await, (TASKS * 10) as u64);
    assert_eq!(total(AssetStatus::Draft, None).await, (TASKS * 3) as u64);
    assert_eq!(
        total(AssetStatus::Published, None).await,
        (TASKS * 7) as u64
    );
}
