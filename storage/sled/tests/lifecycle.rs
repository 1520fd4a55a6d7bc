//! The asset lifecycle (changes, drafts, deletes, usage) against core's `MemoryStore`, under
//! concurrency, and across a reopen.

use assetlib_core::store::prelude::*;
use std::sync::Arc;

use assetlib_core::{
    AssetChange, AssetDeletion, AssetQuery, AssetSort, AssetStatus, AssetType, LibraryQuery,
    LibraryRows, MemoryStore, SortOrder, StoreError, TagChange,
};
use assetlib_sled::SledStore;
use uuid::Uuid;

use crate::common::{asset, at, fast_store, library, reopen, reopen_after_raw, reopen_raw, store};

/// Sections and entries may come in any order; compare them sorted.
fn normalised(rows: Option<LibraryRows>) -> Option<LibraryRows> {
    rows.map(|mut r| {
        r.sections.sort_by_key(|s| (s.display_order, s.id));
        r.entries
            .sort_by_key(|e| (e.entry.section_id, e.entry.display_order, e.entry.asset_id));
        r
    })
}

async fn check_ok(sled: &SledStore) {
    let integrity = sled.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
}

/// Every list, library and usage answer of the two stores is the same.
async fn agree(sled: &SledStore, memory: &MemoryStore, assets: &[Uuid], libraries: &[Uuid]) {
    let mut types = vec![None];
    types.extend(AssetType::ALL.into_iter().map(Some));
    for status in [AssetStatus::Published, AssetStatus::Draft, AssetStatus::Any] {
        for sort in [AssetSort::CreatedAt, AssetSort::UpdatedAt, AssetSort::Title] {
            for order in [SortOrder::Asc, SortOrder::Desc] {
                for &asset_type in &types {
                    for (search, tags, any) in [
                        (None, vec![], vec![]),
                        (Some("renamed"), vec![], vec![]),
                        (Some("x"), vec![], vec![]),
                        (None, vec!["red"], vec![]),
                        (None, vec!["blue", "red"], vec![]),
                        (None, vec![], vec!["blue", "green"]),
                        (Some("x"), vec!["red"], vec!["green"]),
                    ] {
                        for page in [1, 2, 3] {
                            let q = AssetQuery {
                                status,
                                sort,
                                order,
                                asset_type,
                                search: search.map(str::to_owned),
                                per_page: 7,
                                page,
                                tags: tags.iter().map(|t| (*t).to_owned()).collect(),
                                any_tags: any.iter().map(|t| (*t).to_owned()).collect(),
                                ..AssetQuery::default()
                            };
                            let s = sled.list_assets(&q).await.expect("sled list");
                            let m = memory.list_assets(&q).await.expect("memory list");
                            assert_eq!(s, m, "query {q:?}");
                        }
                    }
                }
            }
        }
    }
    for &id in assets {
        assert_eq!(
            sled.asset_usage(id).await.expect("usage"),
            memory.asset_usage(id).await.expect("usage"),
            "usage of {id}"
        );
        assert_eq!(
            sled.get_asset(id).await.expect("get"),
            memory.get_asset(id).await.expect("get")
        );
    }
    for &id in libraries {
        assert_eq!(
            normalised(sled.load_library(id).await.expect("load")),
            normalised(memory.load_library(id).await.expect("load")),
            "library {id}"
        );
    }
    let q = LibraryQuery {
        limit: 100,
        ..LibraryQuery::default()
    };
    assert_eq!(
        sled.list_libraries(&q).await.expect("list"),
        memory.list_libraries(&q).await.expect("list")
    );
    assert_eq!(
        sled.list_tags(10).await.expect("tags"),
        memory.list_tags(10).await.expect("tags")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_agrees_with_the_memory_store() {
    let (sled, _dir) = fast_store();
    let memory = MemoryStore::new();
    let mut assets = Vec::new();
    for i in 0..40usize {
        let mut a = asset(
            &format!("Asset x{i}"),
            AssetType::ALL[i % AssetType::ALL.len()],
            (i % 9) as i64,
        );
        a.published = i % 3 != 0;
        a.description = (i % 4 == 0).then(|| "some X text".to_owned());
        let palette = ["Red", "blue", "GREEN"];
        a.tags = (0..i % 4)
            .map(|k| palette[(i + k) % 3].to_owned())
            .collect();
        let s = sled
            .insert_asset(a.clone(), Log::ANONYMOUS)
            .await
            .expect("sled insert");
        assert_eq!(
            s,
            memory
                .insert_asset(a, Log::ANONYMOUS)
                .await
                .expect("memory insert")
        );
        assets.push(s.id);
    }
    let mut libraries = Vec::new();
    for i in 0..10usize {
        let id = Uuid::new_v4();
        // Overlapping windows, some assets twice in one library.
        let mut held: Vec<Uuid> = assets[i * 3..i * 3 + 8].to_vec();
        held.push(assets[i * 3]);
        let mut w = library(id, &format!("Kit {i}"), &held, 1, 3);
        w.library.settings.published = i % 4 != 3;
        w.library.created_at = at((i % 3) as i64);
        w.library.updated_at = w.library.created_at;
        assert_eq!(
            sled.put_library(w.clone(), Log::ANONYMOUS)
                .await
                .expect("sled put"),
            memory
                .put_library(w, Log::ANONYMOUS)
                .await
                .expect("memory put")
        );
        libraries.push(id);
    }
    agree(&sled, &memory, &assets, &libraries).await;
    check_ok(&sled).await;

    // Changes: renames, descriptions, publication flips both ways, no-ops.
    for (i, &id) in assets.iter().enumerate() {
        let mut change = AssetChange::at(at(100 + i as i64));
        match i % 5 {
            0 => change.published = Some(true),
            1 => change.published = Some(false),
            2 => change.title = Some(format!("Renamed {}", 40 - i)),
            3 => change.description = Some(None),
            _ => change.tags = Some(TagChange::Add(vec!["Red".into(), "new".into()])),
        }
        let s = sled
            .update_asset(id, &change, Log::ANONYMOUS)
            .await
            .expect("sled update");
        let m = memory
            .update_asset(id, &change, Log::ANONYMOUS)
            .await
            .expect("memory update");
        assert_eq!(s, m, "change {i}");
    }
    agree(&sled, &memory, &assets, &libraries).await;
    check_ok(&sled).await;

    // Deletes: refused while held, forced, free.
    for (i, &id) in assets.iter().enumerate().filter(|(i, _)| i % 3 == 1) {
        let force = i % 2 == 1;
        let s = sled
            .delete_asset(id, force, Log::ANONYMOUS)
            .await
            .expect("sled delete");
        let m = memory
            .delete_asset(id, force, Log::ANONYMOUS)
            .await
            .expect("memory delete");
        assert_eq!(s, m, "delete {i} (force {force})");
    }
    agree(&sled, &memory, &assets, &libraries).await;
    check_ok(&sled).await;

    // Library writes and deletes after the deletes keep the uses exact.
    let kept: Vec<Uuid> = {
        let mut v = Vec::new();
        for &id in &assets {
            if sled.get_asset(id).await.expect("get").is_some() {
                v.push(id);
            }
        }
        v
    };
    let w = library(libraries[0], "Rewritten", &kept[..5], 1, 2);
    assert_eq!(
        sled.put_library(w.clone(), Log::ANONYMOUS)
            .await
            .expect("sled put"),
        memory
            .put_library(w, Log::ANONYMOUS)
            .await
            .expect("memory put")
    );
    assert!(
        sled.delete_library(libraries[1], Log::ANONYMOUS)
            .await
            .expect("delete")
    );
    assert!(
        memory
            .delete_library(libraries[1], Log::ANONYMOUS)
            .await
            .expect("delete")
    );
    agree(&sled, &memory, &assets, &libraries).await;
    check_ok(&sled).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_versions_only_the_libraries_holding_the_asset() {
    let (sled, _dir) = store();
    let held = sled
        .insert_asset(asset("Held", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    let other = sled
        .insert_asset(asset("Other", AssetType::Pdf, 2), Log::ANONYMOUS)
        .await
        .expect("insert");
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    sled.put_library(library(a, "A", &[held.id], 0, 0), Log::ANONYMOUS)
        .await
        .expect("put");
    sled.put_library(library(b, "B", &[other.id], 0, 0), Log::ANONYMOUS)
        .await
        .expect("put");
    let version = |id| {
        let sled = sled.clone();
        async move {
            sled.record_library_view(id)
                .await
                .expect("view")
                .expect("published")
                .version
        }
    };
    let (a1, b1) = (version(a).await, version(b).await);
    let mut change = AssetChange::at(at(10));
    change.title = Some("Held, renamed".into());
    sled.update_asset(held.id, &change, Log::ANONYMOUS)
        .await
        .expect("update");
    assert_ne!(version(a).await, a1);
    assert_eq!(version(b).await, b1, "B does not hold the asset");
    // A change that changes nothing versions nothing.
    let a2 = version(a).await;
    sled.update_asset(held.id, &change, Log::ANONYMOUS)
        .await
        .expect("update");
    assert_eq!(version(a).await, a2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_lifecycle_writes_stay_consistent() {
    let (sled, _dir) = store();
    let mut ids = Vec::new();
    for i in 0..24 {
        ids.push(
            sled.insert_asset(asset(&format!("A{i}"), AssetType::Image, i), Log::ANONYMOUS)
                .await
                .expect("insert")
                .id,
        );
    }
    let ids = Arc::new(ids);
    let libs: Arc<Vec<Uuid>> = Arc::new((0..4).map(|_| Uuid::new_v4()).collect());
    let mut tasks = tokio::task::JoinSet::new();
    // Library writers place windows of the assets; a placed asset may be gone meanwhile.
    for w in 0..2usize {
        let (sled, ids, libs) = (sled.clone(), Arc::clone(&ids), Arc::clone(&libs));
        tasks.spawn(async move {
            for round in 0..30usize {
                let lib = libs[(w + round) % libs.len()];
                let start = (w * 5 + round) % 16;
                match sled
                    .put_library(
                        library(lib, "Kit", &ids[start..start + 8], 1, 4),
                        Log::ANONYMOUS,
                    )
                    .await
                {
                    Ok(_) | Err(StoreError::UnknownAsset { .. }) => {}
                    Err(e) => panic!("put: {e}"),
                }
            }
        });
    }
    // A publisher flips assets; a deleter removes some, forced or not.
    {
        let (sled, ids) = (sled.clone(), Arc::clone(&ids));
        tasks.spawn(async move {
            for round in 0..60usize {
                let mut change = AssetChange::at(at(1000 + round as i64));
                change.published = Some(round % 2 == 0);
                change.title = Some(format!("T{round}"));
                sled.update_asset(ids[round % ids.len()], &change, Log::ANONYMOUS)
                    .await
                    .expect("update");
            }
        });
    }
    {
        let (sled, ids) = (sled.clone(), Arc::clone(&ids));
        tasks.spawn(async move {
            for (i, &id) in ids.iter().enumerate().filter(|(i, _)| i % 3 == 0) {
                tokio::task::yield_now().await;
                match sled
                    .delete_asset(id, i % 2 == 0, Log::ANONYMOUS)
                    .await
                    .expect("delete")
                {
                    AssetDeletion::Deleted(_) | AssetDeletion::InUse(_) => {}
                    AssetDeletion::NotFound => panic!("asset {id} vanished"),
                }
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("task");
    }
    check_ok(&sled).await;
    // Every library's entries are of existing assets, and usage says so.
    for &lib in libs.iter() {
        let Some(rows) = sled.load_library(lib).await.expect("load") else {
            continue;
        };
        for row in rows.entries {
            let users = sled.asset_usage(row.entry.asset_id).await.expect("usage");
            assert!(users.iter().any(|u| u.id == lib));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_state_survives_reopen() {
    let (sled, dir) = store();
    let a = sled
        .insert_asset(asset("Kept", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    let mut draft = asset("Draft", AssetType::Pdf, 2);
    draft.published = false;
    let draft = sled
        .insert_asset(draft, Log::ANONYMOUS)
        .await
        .expect("insert");
    let gone = sled
        .insert_asset(asset("Gone", AssetType::Pdf, 3), Log::ANONYMOUS)
        .await
        .expect("insert");
    let lib = Uuid::new_v4();
    sled.put_library(
        library(lib, "Kit", &[a.id, draft.id, gone.id], 0, 0),
        Log::ANONYMOUS,
    )
    .await
    .expect("put");
    let deleted = sled
        .delete_asset(gone.id, true, Log::ANONYMOUS)
        .await
        .expect("delete");
    assert!(matches!(deleted, AssetDeletion::Deleted(_)));
    drop(sled);

    let sled = reopen(&dir.path().join("db"));
    check_ok(&sled).await;
    let drafts = AssetQuery {
        status: AssetStatus::Draft,
        ..AssetQuery::default()
    };
    let page = sled.list_assets(&drafts).await.expect("list");
    assert_eq!((page.total, page.items[0].id), (1, draft.id));
    assert_eq!(sled.asset_usage(draft.id).await.expect("usage").len(), 1);
    let libraries = sled
        .list_libraries(&LibraryQuery::default())
        .await
        .expect("list");
    assert_eq!(libraries.items[0].asset_count, 1);
    let rows = sled
        .load_library(lib)
        .await
        .expect("load")
        .expect("library");
    assert_eq!(rows.entries.len(), 2);
    // The deleted asset's slug stays taken.
    let again = sled
        .insert_asset(asset("Gone", AssetType::Pdf, 4), Log::ANONYMOUS)
        .await
        .expect("insert");
    assert_eq!(again.slug, "gone-2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_finds_damaged_asset_uses() {
    let (sled, dir) = store();
    let a = sled
        .insert_asset(asset("Held", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    sled.put_library(
        library(Uuid::new_v4(), "Kit", &[a.id], 0, 0),
        Log::ANONYMOUS,
    )
    .await
    .expect("put");
    check_ok(&sled).await;
    drop(sled);
    {
        let db = reopen_raw(&dir.path().join("db"));
        let uses = db.open_tree("asset_uses").expect("tree");
        assert!(uses.remove(a.id.as_bytes()).expect("remove").is_some());
        db.flush().expect("flush");
    }
    let sled = reopen_after_raw(&dir.path().join("db"));
    let integrity = sled.verify().await.expect("verify");
    assert!(
        integrity.problems.iter().any(|p| p.contains("asset_uses")),
        "{:?}",
        integrity.problems
    );
}
