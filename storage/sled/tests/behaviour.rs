//! The store's behaviour through the `Store` trait, much of it checked against core's
//! `MemoryStore` as the reference.

use assetlib_core::store::prelude::*;
use assetlib_core::{
    ApiKey, AssetQuery, AssetType, LibraryQuery, LibraryRows, MemoryStore, PutOutcome, Scope,
    StoreError,
};
use assetlib_sled::SledStore;
use uuid::Uuid;

use crate::common::{
    all_orders, asset, at, fast_store, library, reopen, reopen_after_raw, reopen_raw, store, walk,
};

const TITLES: &[&str] = &[
    "Alpha",
    "alpha",
    "Beta",
    "ÉCOLE",
    "école",
    "Zebra",
    "zebra",
    "a",
    "A",
    "中文",
    "Ωmega",
    "beta\0x",
    "beta",
    "Brand Kit",
    "brand kit 2",
];

/// Inserts the same assets into both stores: varied titles, all types, shared timestamps,
/// some unpublished, some with descriptions.
async fn same_assets(sled: &SledStore, memory: &MemoryStore, n: usize) -> Vec<Uuid> {
    let mut ids = Vec::new();
    for i in 0..n {
        let mut a = asset(
            TITLES[i % TITLES.len()],
            AssetType::ALL[i % AssetType::ALL.len()],
            (i % 7) as i64,
        );
        a.updated_at = at((i % 5) as i64 * 3);
        a.description = (i % 4 == 0).then(|| format!("Description {i} with a NEEDLE inside"));
        a.published = i % 11 != 5;
        a.download_count = i as u64 % 3;
        let s = sled
            .insert_asset(a.clone(), Log::ANONYMOUS)
            .await
            .expect("sled insert");
        let m = memory
            .insert_asset(a, Log::ANONYMOUS)
            .await
            .expect("memory insert");
        assert_eq!(s, m, "inserted asset {i}");
        ids.push(s.id);
    }
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asset_lists_agree_with_the_memory_store() {
    let (sled, _dir) = fast_store();
    let memory = MemoryStore::new();
    same_assets(&sled, &memory, 160).await;

    let mut types = vec![None];
    types.extend(
        AssetType::ALL
            .into_iter()
            .filter(|t| t.is_filterable())
            .map(Some),
    );
    let searches = [
        None,
        Some("needle"),
        Some("ALPHA"),
        Some("é"),
        Some("nothing at all"),
    ];
    let mut checked = 0;
    for base in all_orders() {
        for &asset_type in &types {
            for search in searches {
                for per_page in [1u32, 7, 100] {
                    let q = AssetQuery {
                        asset_type,
                        search: search.map(str::to_owned),
                        per_page,
                        ..base.clone()
                    };
                    let total = memory.list_assets(&q).await.expect("memory").total;
                    let pages = total.div_ceil(u64::from(per_page));
                    let mut wanted: Vec<u64> = if per_page == 1 {
                        vec![1, 2, 3, pages.saturating_sub(1), pages, pages + 1]
                    } else {
                        (1..=pages + 1).collect()
                    };
                    wanted.push(u64::MAX);
                    for page in wanted.into_iter().filter(|p| *p > 0) {
                        let q = AssetQuery { page, ..q.clone() };
                        let s = sled.list_assets(&q).await.expect("sled list");
                        let m = memory.list_assets(&q).await.expect("memory list");
                        assert_eq!(s, m, "query {q:?}");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 1000);
    let integrity = sled.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
}

/// Sections and entries may come in any order; compare them sorted.
fn normalised(rows: Option<LibraryRows>) -> Option<LibraryRows> {
    rows.map(|mut r| {
        r.sections.sort_by_key(|s| (s.display_order, s.id));
        r.entries
            .sort_by_key(|e| (e.entry.section_id, e.entry.display_order, e.entry.asset_id));
        r
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn libraries_agree_with_the_memory_store() {
    let (sled, _dir) = fast_store();
    let memory = MemoryStore::new();
    let assets = same_assets(&sled, &memory, 60).await;
    let mut ids = Vec::new();
    for i in 0..24usize {
        let id = Uuid::new_v4();
        let start = i % 20;
        let mut w = library(
            id,
            &format!("Kit {}", i % 5),
            &assets[start..start + 12],
            i % 3,
            3,
        );
        w.library.settings.workspace_id =
            [None, Some("ws-a".to_owned()), Some("ws-b".to_owned())][i % 3].clone();
        w.library.settings.published = i % 4 != 3;
        // Shared times, so the id decides the order of equals.
        w.library.updated_at = at((i % 6) as i64);
        w.library.created_at = w.library.updated_at;
        if i % 7 == 0 {
            w.library.slug = format!("given-{}", i % 2);
            w.slug_given = true;
        }
        let s = sled.put_library(w.clone(), Log::ANONYMOUS).await;
        let m = memory.put_library(w, Log::ANONYMOUS).await;
        match (s, m) {
            (Ok(s), Ok(m)) => assert_eq!(s, m),
            (Err(StoreError::SlugTaken { slug: a }), Err(StoreError::SlugTaken { slug: b })) => {
                assert_eq!(a, b)
            }
            (s, m) => panic!("library {i}: sled {s:?}, memory {m:?}"),
        }
        ids.push(id);
    }
    // Views, replaces (publishing, unpublishing, moving workspace, fewer entries) and deletes.
    for (i, &id) in ids.iter().enumerate() {
        for _ in 0..(i % 3) {
            assert_eq!(
                sled.record_library_view(id)
                    .await
                    .expect("view")
                    .map(|v| v.views),
                memory
                    .record_library_view(id)
                    .await
                    .expect("view")
                    .map(|v| v.views)
            );
        }
        if i % 5 == 1 {
            let mut w = library(id, &format!("Replaced {}", i % 2), &assets[i..i + 4], 1, 2);
            w.library.settings.published = i % 2 == 0;
            w.library.settings.workspace_id = Some("ws-b".into());
            w.library.updated_at = at(100 + i as i64);
            assert_eq!(
                sled.put_library(w.clone(), Log::ANONYMOUS)
                    .await
                    .expect("replace"),
                memory
                    .put_library(w, Log::ANONYMOUS)
                    .await
                    .expect("replace")
            );
        }
        if i % 6 == 2 {
            assert_eq!(
                sled.delete_library(id, Log::ANONYMOUS)
                    .await
                    .expect("delete"),
                memory
                    .delete_library(id, Log::ANONYMOUS)
                    .await
                    .expect("delete")
            );
        }
    }
    assert!(
        !sled
            .delete_library(Uuid::new_v4(), Log::ANONYMOUS)
            .await
            .expect("delete missing")
    );

    for &id in &ids {
        let s = normalised(sled.load_library(id).await.expect("sled load"));
        let m = normalised(memory.load_library(id).await.expect("memory load"));
        assert_eq!(s, m, "library {id}");
    }
    for workspace_id in [None, Some("ws-a"), Some("ws-b"), Some("nobody")] {
        for limit in [1u32, 2, 5, 100] {
            for page in 1..=30 {
                let q = LibraryQuery {
                    page,
                    limit,
                    workspace_id: workspace_id.map(str::to_owned),
                };
                let s = sled.list_libraries(&q).await.expect("sled list");
                let m = memory.list_libraries(&q).await.expect("memory list");
                assert_eq!(s, m, "query {q:?}");
            }
        }
    }
    let integrity = sled.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asset_slugs_take_the_first_free_suffix_across_reopens() {
    let (sled, dir) = store();
    let mut slugs = Vec::new();
    for _ in 0..3 {
        slugs.push(
            sled.insert_asset(asset("Logo", AssetType::Image, 1), Log::ANONYMOUS)
                .await
                .expect("insert")
                .slug,
        );
    }
    let mut wanted = asset("Logo 5", AssetType::Image, 1);
    wanted.slug = "logo-5".into();
    slugs.push(
        sled.insert_asset(wanted, Log::ANONYMOUS)
            .await
            .expect("insert")
            .slug,
    );
    drop(sled);
    let sled = reopen(&dir.path().join("db"));
    for _ in 0..2 {
        slugs.push(
            sled.insert_asset(asset("Logo", AssetType::Image, 1), Log::ANONYMOUS)
                .await
                .expect("insert")
                .slug,
        );
    }
    assert_eq!(
        slugs,
        ["logo", "logo-2", "logo-3", "logo-5", "logo-4", "logo-6"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn library_slugs_are_unique_and_released() {
    let (sled, _dir) = store();
    let a = Uuid::new_v4();
    let b = Uuid::new_v4();
    let mut wa = library(a, "Brand kit", &[], 0, 0);
    wa.library.slug = "brand".into();
    wa.slug_given = true;
    assert_eq!(
        sled.put_library(wa.clone(), Log::ANONYMOUS)
            .await
            .expect("put a"),
        PutOutcome::Created
    );
    // Replacing with its own slug is no clash.
    assert_eq!(
        sled.put_library(wa.clone(), Log::ANONYMOUS)
            .await
            .expect("replace a"),
        PutOutcome::Replaced
    );

    let mut wb = library(b, "Other", &[], 0, 0);
    wb.library.slug = "brand".into();
    wb.slug_given = true;
    match sled.put_library(wb.clone(), Log::ANONYMOUS).await {
        Err(StoreError::SlugTaken { slug }) => assert_eq!(slug, "brand"),
        other => panic!("expected a taken slug, got {other:?}"),
    }
    assert!(
        sled.load_library(b).await.expect("load").is_none(),
        "a refused put stores nothing"
    );

    // A slug made from the title gets a suffix.
    wb.slug_given = false;
    sled.put_library(wb.clone(), Log::ANONYMOUS)
        .await
        .expect("put b");
    let slug_of = |rows: Option<LibraryRows>| rows.expect("library").library.slug;
    assert_eq!(
        slug_of(sled.load_library(b).await.expect("load")),
        "brand-2"
    );

    // Renaming a frees its slug; deleting frees the new one.
    wa.library.slug = "renamed".into();
    sled.put_library(wa.clone(), Log::ANONYMOUS)
        .await
        .expect("rename a");
    wb.library.slug = "brand".into();
    wb.slug_given = true;
    sled.put_library(wb, Log::ANONYMOUS)
        .await
        .expect("b takes the freed slug");
    assert_eq!(slug_of(sled.load_library(b).await.expect("load")), "brand");
    assert!(
        sled.delete_library(a, Log::ANONYMOUS)
            .await
            .expect("delete a")
    );
    let c = Uuid::new_v4();
    let mut wc = library(c, "Third", &[], 0, 0);
    wc.library.slug = "renamed".into();
    wc.slug_given = true;
    sled.put_library(wc, Log::ANONYMOUS)
        .await
        .expect("c takes a's slug");
    let integrity = sled.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_keeps_created_views_and_first_publication() {
    let (sled, _dir) = store();
    let assets: Vec<Uuid> = {
        let mut v = Vec::new();
        for i in 0..6 {
            v.push(
                sled.insert_asset(asset("Pic", AssetType::Image, i), Log::ANONYMOUS)
                    .await
                    .expect("insert")
                    .id,
            );
        }
        v
    };
    let id = Uuid::new_v4();
    let mut w = library(id, "Kit", &assets, 2, 2);
    w.library.settings.published = false;
    w.library.created_at = at(10);
    w.library.updated_at = at(10);
    sled.put_library(w.clone(), Log::ANONYMOUS)
        .await
        .expect("create draft");
    assert_eq!(
        sled.list_libraries(&LibraryQuery::default())
            .await
            .expect("list")
            .total,
        0
    );
    let draft = sled.load_library(id).await.expect("load").expect("library");
    assert_eq!(draft.library.published_at, None);
    assert_eq!(draft.entries.len(), 6);
    assert_eq!(draft.sections.len(), 2);

    assert_eq!(view(&sled, id).await, None, "a draft counts no view");

    w.library.settings.published = true;
    w.library.created_at = at(20);
    w.library.updated_at = at(20);
    sled.put_library(w.clone(), Log::ANONYMOUS)
        .await
        .expect("publish");
    assert_eq!(view(&sled, id).await, Some(1));
    assert_eq!(view(&sled, id).await, Some(2));
    w.library.updated_at = at(30);
    w.entries.truncate(1);
    w.sections.truncate(1);
    sled.put_library(w, Log::ANONYMOUS).await.expect("replace");

    let rows = sled.load_library(id).await.expect("load").expect("library");
    assert_eq!(rows.library.created_at, at(10));
    assert_eq!(rows.library.updated_at, at(30));
    assert_eq!(rows.library.published_at, Some(at(20)));
    assert_eq!(rows.library.view_count, 2);
    assert_eq!(rows.entries.len(), 1);
    assert_eq!(rows.sections.len(), 1);
    let list = sled
        .list_libraries(&LibraryQuery::default())
        .await
        .expect("list");
    assert_eq!(list.total, 1);
    assert_eq!(list.items[0].asset_count, 1);
    assert_eq!(list.items[0].library.view_count, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_of_missing_or_unpublished_assets() {
    let (sled, _dir) = store();
    let shown = sled
        .insert_asset(asset("Shown", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert")
        .id;
    let mut draft = asset("Draft", AssetType::Pdf, 2);
    draft.published = false;
    let draft = sled
        .insert_asset(draft, Log::ANONYMOUS)
        .await
        .expect("insert")
        .id;
    let missing = Uuid::new_v4();
    let id = Uuid::new_v4();
    match sled
        .put_library(
            library(id, "Kit", &[shown, draft, missing], 1, 2),
            Log::ANONYMOUS,
        )
        .await
    {
        Err(StoreError::UnknownAsset { id }) => assert_eq!(id, missing),
        other => panic!("expected an unknown asset, got {other:?}"),
    }
    assert_eq!(sled.load_library(id).await.expect("load"), None);
    assert!(sled.asset_usage(shown).await.expect("usage").is_empty());

    sled.put_library(library(id, "Kit", &[shown, draft], 1, 2), Log::ANONYMOUS)
        .await
        .expect("put");
    let rows = sled.load_library(id).await.expect("load").expect("library");
    let mut found: Vec<(Uuid, bool)> = rows
        .entries
        .iter()
        .map(|e| (e.entry.asset_id, e.asset.published))
        .collect();
    found.sort();
    let mut expected = vec![(shown, true), (draft, false)];
    expected.sort();
    assert_eq!(found, expected);
    let list = sled
        .list_libraries(&LibraryQuery::default())
        .await
        .expect("list");
    assert_eq!(list.items[0].asset_count, 1, "only published assets count");
    let integrity = sled.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_of_unknown_and_unpublished_records() {
    let (sled, _dir) = store();
    let mut draft = asset("Draft", AssetType::Pdf, 2);
    draft.published = false;
    let draft = sled
        .insert_asset(draft, Log::ANONYMOUS)
        .await
        .expect("insert");
    assert_eq!(
        sled.get_asset(draft.id).await.expect("get"),
        Some(draft.clone())
    );
    let page = sled
        .list_assets(&AssetQuery::default())
        .await
        .expect("list");
    assert_eq!(
        (page.items.len(), page.total),
        (0, 0),
        "drafts are not listed"
    );
    let unknown = Uuid::new_v4();
    assert_eq!(sled.get_asset(unknown).await.expect("get"), None);
    assert_eq!(
        sled.get_assets(&[unknown, draft.id, draft.id])
            .await
            .expect("get"),
        vec![draft]
    );
    assert_eq!(sled.load_library(unknown).await.expect("load"), None);
    assert_eq!(sled.record_library_view(unknown).await.expect("view"), None);
    sled.record_download(unknown).await.expect("download");
    assert_eq!(sled.get_asset(unknown).await.expect("get"), None);
    assert!(
        !sled
            .delete_library(unknown, Log::ANONYMOUS)
            .await
            .expect("delete")
    );
    assert!(
        !sled
            .revoke_key(unknown, at(0), Log::ANONYMOUS)
            .await
            .expect("revoke")
    );
    assert_eq!(sled.find_key(&[9; 32]).await.expect("find"), None);

    let mut again = asset("Again", AssetType::Pdf, 2);
    let taken = page_id(&sled).await;
    again.id = taken;
    match sled.insert_asset(again, Log::ANONYMOUS).await {
        Err(StoreError::DuplicateId { id }) => assert_eq!(id, taken),
        other => panic!("expected an id conflict, got {other:?}"),
    }
}

async fn page_id(sled: &SledStore) -> Uuid {
    sled.insert_asset(asset("First", AssetType::Link, 0), Log::ANONYMOUS)
        .await
        .expect("insert")
        .id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_count_and_survive_reopen() {
    let (sled, dir) = store();
    let a = sled
        .insert_asset(asset("File", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    sled.record_download(a.id).await.expect("download");
    sled.record_download(a.id).await.expect("download");
    drop(sled);
    let sled = reopen(&dir.path().join("db"));
    let stored = sled.get_asset(a.id).await.expect("get").expect("asset");
    assert_eq!(stored.download_count, 2);
    let listed = sled
        .list_assets(&AssetQuery::default())
        .await
        .expect("list");
    assert_eq!(listed.items, vec![stored]);
}

fn key(name: &str, created: i64, hash: u8) -> ApiKey {
    ApiKey {
        id: Uuid::new_v4(),
        name: name.to_owned(),
        key_hash: [hash; 32],
        scopes: vec![Scope::ReadAssets, Scope::WriteLibraries],
        created_at: at(created),
        expires_at: hash.is_multiple_of(2).then(|| at(1000)),
        revoked_at: None,
        workspace_id: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_keys() {
    let (sled, dir) = store();
    let keys = [key("c", 30, 3), key("a", 10, 1), key("b", 20, 2)];
    for k in &keys {
        sled.insert_key(k.clone(), Log::ANONYMOUS)
            .await
            .expect("insert key");
    }
    match sled.insert_key(key("dup", 40, 1), Log::ANONYMOUS).await {
        Err(StoreError::DuplicateKeyHash) => {}
        other => panic!("expected a hash conflict, got {other:?}"),
    }
    let names: Vec<String> = sled
        .list_keys()
        .await
        .expect("list")
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(
        sled.find_key(&[2; 32]).await.expect("find"),
        Some(keys[2].clone())
    );
    assert!(
        sled.revoke_key(keys[0].id, at(50), Log::ANONYMOUS)
            .await
            .expect("revoke")
    );
    assert!(
        sled.revoke_key(keys[0].id, at(60), Log::ANONYMOUS)
            .await
            .expect("revoke again")
    );
    drop(sled);
    let sled = reopen(&dir.path().join("db"));
    let found = sled.find_key(&[3; 32]).await.expect("find").expect("key");
    assert_eq!(
        found.revoked_at,
        Some(at(50)),
        "the first revocation time stays"
    );
    assert_eq!(sled.verify().await.expect("verify").keys, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_views_and_downloads_are_never_lost() {
    let (sled, _dir) = store();
    let a = sled
        .insert_asset(asset("File", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    let lib = Uuid::new_v4();
    sled.put_library(library(lib, "Kit", &[a.id], 0, 0), Log::ANONYMOUS)
        .await
        .expect("put");
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..500 {
        let sled = sled.clone();
        tasks.spawn(async move {
            if i % 2 == 0 {
                let seen = sled.record_library_view(lib).await.expect("view");
                Some(seen.expect("exists").views)
            } else {
                sled.record_download(a.id).await.expect("download");
                None
            }
        });
    }
    let mut seen = Vec::new();
    while let Some(n) = tasks.join_next().await {
        seen.extend(n.expect("task"));
    }
    seen.sort_unstable();
    let expected: Vec<u64> = (1..=250).collect();
    assert_eq!(seen, expected, "every view got its own count");
    let rows = sled
        .load_library(lib)
        .await
        .expect("load")
        .expect("library");
    assert_eq!(rows.library.view_count, 250);
    assert_eq!(
        sled.get_asset(a.id)
            .await
            .expect("get")
            .expect("asset")
            .download_count,
        250
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walks_see_every_published_asset_once_in_order() {
    let (sled, _dir) = fast_store();
    for i in 0..250 {
        sled.insert_asset(
            asset(
                TITLES[i % TITLES.len()],
                AssetType::ALL[i % 9],
                (i % 13) as i64,
            ),
            Log::ANONYMOUS,
        )
        .await
        .expect("insert");
    }
    for q in all_orders() {
        let ids = walk(&sled, &q).await;
        assert_eq!(ids.len(), 250);
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 250, "no asset twice in {q:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_finds_a_damaged_index() {
    let (sled, dir) = store();
    sled.insert_asset(asset("One", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    sled.insert_asset(asset("Two", AssetType::Pdf, 2), Log::ANONYMOUS)
        .await
        .expect("insert");
    assert!(sled.verify().await.expect("verify").is_ok());
    drop(sled);
    {
        let db = reopen_raw(&dir.path().join("db"));
        let tree = db.open_tree("asset_idx_title").expect("tree");
        let first = tree.first().expect("read").expect("a key");
        tree.remove(first.0).expect("remove");
        db.flush().expect("flush");
    }
    let sled = reopen_after_raw(&dir.path().join("db"));
    let integrity = sled.verify().await.expect("verify");
    assert_eq!(integrity.assets, 2);
    assert!(!integrity.is_ok());
    assert!(
        integrity
            .problems
            .iter()
            .any(|p| p.contains("asset_idx_title")),
        "{:?}",
        integrity.problems
    );
}

async fn view(sled: &SledStore, id: Uuid) -> Option<u64> {
    sled.record_library_view(id)
        .await
        .expect("view")
        .map(|v| v.views)
}
