//! The cases of `LibraryStore`: whole writes and loads, slugs, lists, deletes, view
//! counters and versions.

use super::*;
use crate::events::Log;

pub(super) async fn library_round_trip(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("A", AssetType::Pdf, 1)).await;
    let b = insert(&store, sample_asset("B", AssetType::Image, 2)).await;
    let c = insert(&store, sample_asset("C", AssetType::Audio, 3)).await;
    let mut lib = sample_library("Brand kit", 10);
    lib.settings.description = Some("All of it".into());
    lib.settings.workspace_id = Some("ws-1".into());
    lib.settings.cover_overlay_color = Some("#1A2B3C".into());
    lib.settings.cover_overlay_opacity = Some(0.4);
    lib.settings.is_paid = true;
    lib.settings.price = Some(19.99);
    lib.settings.currency = "EUR".into();
    let s1 = section("Logos", 0);
    let s2 = section("Docs", 1);
    let mut e1 = entry(&a, Some(&s1), 0);
    e1.title = Some("Custom".into());
    e1.description = Some("Custom text".into());
    let entries = vec![e1, entry(&b, Some(&s1), 1), entry(&c, None, 0)];
    let outcome = store
        .put_library(
            write(lib.clone(), vec![s1.clone(), s2.clone()], entries.clone()),
            Log::ANONYMOUS,
        )
        .await
        .unwrap();
    assert_eq!(outcome, PutOutcome::Created);
    let rows = store.load_library(lib.id).await.unwrap().expect("library");
    let mut want = lib.clone();
    want.published_at = Some(lib.updated_at);
    assert_eq!(rows.library, want);
    let mut sections = rows.sections.clone();
    sections.sort_by_key(|s| s.display_order);
    assert_eq!(sections, vec![s1, s2]);
    let mut got: Vec<LibraryEntry> = rows.entries.iter().map(|r| r.entry.clone()).collect();
    got.sort_by_key(|e| (e.section_id.is_none(), e.display_order));
    assert_eq!(got, entries);
    for row in &rows.entries {
        let asset = [&a, &b, &c]
            .into_iter()
            .find(|x| x.id == row.entry.asset_id)
            .expect("entry of a known asset");
        assert_eq!(row.asset, crate::model::EntryAsset::from(asset));
    }
}

pub(super) async fn library_replace_keeps_counters_and_first_publication(store: Arc<dyn Store>) {
    let mut draft = sample_library("Draft", 1);
    draft.settings.published = false;
    let id = draft.id;
    let created_at = draft.created_at;
    assert_eq!(
        store
            .put_library(write(draft.clone(), vec![], vec![]), Log::ANONYMOUS)
            .await
            .unwrap(),
        PutOutcome::Created
    );
    let rows = store.load_library(id).await.unwrap().unwrap();
    assert_eq!(
        rows.library.published_at, None,
        "a draft has no published_at"
    );
    assert_eq!(
        store.record_library_view(id).await.unwrap(),
        None,
        "a draft counts no view"
    );
    // Publish: published_at becomes the write's updated_at; created_at stays.
    let mut v2 = sample_library("Published now", 50);
    v2.id = id;
    v2.view_count = 0;
    assert_eq!(
        store
            .put_library(write(v2.clone(), vec![], vec![]), Log::ANONYMOUS)
            .await
            .unwrap(),
        PutOutcome::Replaced
    );
    for _ in 0..3 {
        store.record_library_view(id).await.unwrap();
    }
    let rows = store.load_library(id).await.unwrap().unwrap();
    assert_eq!(rows.library.settings.title, "Published now");
    assert_eq!(rows.library.view_count, 3);
    assert_eq!(rows.library.created_at, created_at);
    assert_eq!(rows.library.updated_at, v2.updated_at);
    assert_eq!(rows.library.published_at, Some(v2.updated_at));
    // A later replace keeps the first publication time.
    let mut v3 = sample_library("Again", 90);
    v3.id = id;
    store
        .put_library(write(v3, vec![], vec![]), Log::ANONYMOUS)
        .await
        .unwrap();
    let rows = store.load_library(id).await.unwrap().unwrap();
    assert_eq!(rows.library.published_at, Some(v2.updated_at));
    assert_eq!(rows.library.view_count, 3);
}

pub(super) async fn library_slugs(store: Arc<dyn Store>) {
    let first = sample_library("Brand kit", 1);
    store
        .put_library(write(first.clone(), vec![], vec![]), Log::ANONYMOUS)
        .await
        .unwrap();
    let second = sample_library("Brand kit", 2);
    store
        .put_library(write(second.clone(), vec![], vec![]), Log::ANONYMOUS)
        .await
        .unwrap();
    let slug_of = |id| {
        let store = store.clone();
        async move { store.load_library(id).await.unwrap().unwrap().library.slug }
    };
    assert_eq!(slug_of(first.id).await, "brand-kit");
    assert_eq!(slug_of(second.id).await, "brand-kit-2");
    // Replacing a library never clashes with itself.
    store
        .put_library(write(first.clone(), vec![], vec![]), Log::ANONYMOUS)
        .await
        .unwrap();
    assert_eq!(slug_of(first.id).await, "brand-kit");
    // A given slug that another library holds is a conflict on `slug`, and changes nothing.
    let mut third = sample_library("Third", 3);
    third.slug = "brand-kit".into();
    let err = store
        .put_library(
            LibraryWrite {
                library: third.clone(),
                slug_given: true,
                sections: vec![],
                entries: vec![],
            },
            Log::ANONYMOUS,
        )
        .await
        .unwrap_err();
    match err {
        StoreError::SlugTaken { slug } => assert_eq!(slug, "brand-kit"),
        other => panic!("expected a taken slug, got {other:?}"),
    }
    assert_eq!(store.load_library(third.id).await.unwrap(), None);
    // A given free slug is kept; its old slug is then free for others.
    let mut renamed = first.clone();
    renamed.slug = "renamed".into();
    store
        .put_library(
            LibraryWrite {
                library: renamed,
                slug_given: true,
                sections: vec![],
                entries: vec![],
            },
            Log::ANONYMOUS,
        )
        .await
        .unwrap();
    assert_eq!(slug_of(first.id).await, "renamed");
    let mut fourth = sample_library("Brand kit", 4);
    fourth.slug = "brand-kit".into();
    store
        .put_library(write(fourth.clone(), vec![], vec![]), Log::ANONYMOUS)
        .await
        .unwrap();
    assert_eq!(slug_of(fourth.id).await, "brand-kit");
}

pub(super) async fn library_list_order_filter_and_counts(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("A", AssetType::Pdf, 1)).await;
    let b = insert(&store, sample_asset("B", AssetType::Pdf, 2)).await;
    let mut hidden = sample_asset("hidden", AssetType::Pdf, 3);
    hidden.published = false;
    insert(&store, hidden.clone()).await;
    let mut ids = Vec::new();
    for i in 0..7 {
        let mut lib = sample_library(&format!("Lib {i}"), i * 10);
        lib.settings.workspace_id = Some(if i % 2 == 0 { "even" } else { "odd" }.into());
        let s = section("S", 0);
        let entries = vec![
            entry(&a, Some(&s), 0),
            entry(&b, None, 0),
            entry(&hidden, None, 1),
        ];
        store
            .put_library(write(lib.clone(), vec![s], entries), Log::ANONYMOUS)
            .await
            .unwrap();
        ids.push(lib.id);
    }
    let mut draft = sample_library("Draft", 1000);
    draft.settings.published = false;
    store
        .put_library(write(draft, vec![], vec![]), Log::ANONYMOUS)
        .await
        .unwrap();
    ids.reverse();
    let page = store
        .list_libraries(&LibraryQuery::default())
        .await
        .unwrap();
    assert_eq!(page.total, 7, "drafts are not listed");
    assert_eq!(
        page.items.iter().map(|l| l.library.id).collect::<Vec<_>>(),
        ids
    );
    assert!(
        page.items.iter().all(|l| l.asset_count == 2),
        "published assets only"
    );
    let q = LibraryQuery {
        page: 2,
        limit: 3,
        workspace_id: None,
    };
    let page = store.list_libraries(&q).await.unwrap();
    assert_eq!(
        page.items.iter().map(|l| l.library.id).collect::<Vec<_>>(),
        ids[3..6]
    );
    let q = LibraryQuery {
        workspace_id: Some("odd".into()),
        ..LibraryQuery::default()
    };
    let page = store.list_libraries(&q).await.unwrap();
    assert_eq!(page.total, 3);
    assert!(
        page.items
            .iter()
            .all(|l| l.library.settings.workspace_id.as_deref() == Some("odd"))
    );
    let q = LibraryQuery {
        workspace_id: Some("none such".into()),
        ..LibraryQuery::default()
    };
    assert_eq!(store.list_libraries(&q).await.unwrap().total, 0);
    let q = LibraryQuery {
        page: 9,
        ..LibraryQuery::default()
    };
    let page = store.list_libraries(&q).await.unwrap();
    assert!(page.items.is_empty());
    assert_eq!(page.total, 7);
}

pub(super) async fn replacing_the_settings_alone_keeps_entries_and_uses(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("First", AssetType::Pdf, 1)).await;
    let b = insert(&store, sample_asset("Second", AssetType::Video, 2)).await;
    let c = insert(&store, sample_asset("Third", AssetType::Audio, 3)).await;
    let lib = sample_library("Settings", 1);
    let s = section("Part", 0);
    let entries = vec![
        entry(&a, Some(&s), 0),
        entry(&b, None, 0),
        entry(&c, None, 1),
    ];
    let doc = |title: &str, slug: &str, entries: &[LibraryEntry]| {
        let mut l = lib.clone();
        l.settings.title = title.to_owned();
        l.settings.description = Some(format!("{title}, described"));
        l.slug = slug.to_owned();
        write(l, vec![s.clone()], entries.to_vec())
    };
    store
        .put_library(doc("Settings", "settings", &entries), Log::ANONYMOUS)
        .await
        .unwrap();
    let before = store.load_library(lib.id).await.unwrap().unwrap();
    // The same sections and entries under a new title, description and slug.
    assert_eq!(
        store
            .put_library(doc("Renamed", "renamed", &entries), Log::ANONYMOUS)
            .await
            .unwrap(),
        PutOutcome::Replaced
    );
    let after = store.load_library(lib.id).await.unwrap().unwrap();
    assert_eq!(after.library.settings.title, "Renamed");
    assert_eq!(
        after.library.settings.description.as_deref(),
        Some("Renamed, described")
    );
    let placed = |rows: &crate::LibraryRows| {
        let mut placed: Vec<_> = rows
            .entries
            .iter()
            .map(|r| {
                (
                    r.entry.asset_id,
                    r.entry.section_id,
                    r.entry.display_order,
                    r.asset.title.clone(),
                )
            })
            .collect();
        placed.sort();
        placed
    };
    assert_eq!(placed(&after), placed(&before));
    assert_eq!(after.sections, before.sections);
    // The slug moved, and the uses name the library as it is now.
    assert_eq!(slug_ids(&*store, "settings").await, Vec::<Uuid>::new());
    assert_eq!(slug_ids(&*store, "renamed").await, vec![lib.id]);
    for asset in [&a, &b, &c] {
        let uses = store.asset_usage(asset.id).await.unwrap();
        assert_eq!(uses.len(), 1, "{} is held once", asset.title);
        assert_eq!((uses[0].id, uses[0].title.as_str()), (lib.id, "Renamed"));
    }
    let listed = store
        .list_libraries(&LibraryQuery::default())
        .await
        .unwrap();
    let summary = listed
        .items
        .iter()
        .find(|l| l.library.id == lib.id)
        .unwrap();
    assert_eq!(
        (summary.library.settings.title.as_str(), summary.asset_count),
        ("Renamed", 3)
    );
    // An asset change after the kept replace still shows, and dropping entries drops their
    // uses.
    let mut change = crate::change::AssetChange::at(b.updated_at + chrono::Duration::seconds(5));
    change.title = Some("Second, renamed".into());
    store
        .update_asset(b.id, &change, Log::ANONYMOUS)
        .await
        .unwrap();
    let rows = store.load_library(lib.id).await.unwrap().unwrap();
    let titles: Vec<_> = rows
        .entries
        .iter()
        .map(|r| r.asset.title.as_str())
        .collect();
    assert!(titles.contains(&"Second, renamed"), "{titles:?}");
    store
        .put_library(doc("Renamed", "renamed", &entries[..2]), Log::ANONYMOUS)
        .await
        .unwrap();
    let rows = store.load_library(lib.id).await.unwrap().unwrap();
    assert_eq!(rows.entries.len(), 2);
    assert_eq!(store.asset_usage(a.id).await.unwrap().len(), 1);
    assert!(
        store.asset_usage(c.id).await.unwrap().is_empty(),
        "no entry holds the third asset"
    );
    store
        .put_library(doc("Renamed", "renamed", &entries[1..2]), Log::ANONYMOUS)
        .await
        .unwrap();
    assert!(
        store.asset_usage(a.id).await.unwrap().is_empty(),
        "no entry holds the first asset"
    );
}

pub(super) async fn library_replace_is_atomic(store: Arc<dyn Store>) {
    let mut assets = Vec::new();
    for i in 0..40 {
        assets.push(insert(&store, sample_asset(&format!("a{i}"), AssetType::Image, i)).await);
    }
    let lib = sample_library("Atomic", 1);
    // Version k: k+1 sections, every entry's title override says "v{k}".
    let version = |k: usize| {
        let sections: Vec<Section> = (0..=k)
            .map(|i| section(&format!("v{k}"), i as u32))
            .collect();
        let entries = assets
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let mut e = entry(a, Some(&sections[i % sections.len()]), i as u32);
                e.title = Some(format!("v{k}"));
                e
            })
            .collect();
        write(lib.clone(), sections, entries)
    };
    store.put_library(version(0), Log::ANONYMOUS).await.unwrap();
    let writer = {
        let store = store.clone();
        let versions: Vec<LibraryWrite> = (1..=20).map(version).collect();
        tokio::spawn(async move {
            for v in versions {
                store.put_library(v, Log::ANONYMOUS).await.unwrap();
            }
        })
    };
    let mut readers = Vec::new();
    for _ in 0..4 {
        let store = store.clone();
        readers.push(tokio::spawn(async move {
            for _ in 0..30 {
                let rows = store.load_library(lib.id).await.unwrap().unwrap();
                let k = rows.sections.len() - 1;
                let tag = format!("v{k}");
                assert!(
                    rows.sections.iter().all(|s| s.title == tag),
                    "mixed sections"
                );
                assert_eq!(rows.entries.len(), 40, "entries of one version");
                assert!(
                    rows.entries
                        .iter()
                        .all(|e| e.entry.title.as_deref() == Some(&tag)),
                    "entries from another version than the sections"
                );
                tokio::task::yield_now().await;
            }
        }));
    }
    writer.await.unwrap();
    for r in readers {
        r.await.unwrap();
    }
    let rows = store.load_library(lib.id).await.unwrap().unwrap();
    assert_eq!(rows.sections.len(), 21);
}

pub(super) async fn library_delete(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("A", AssetType::Pdf, 1)).await;
    let lib = sample_library("Gone soon", 1);
    let s = section("S", 0);
    store
        .put_library(
            write(lib.clone(), vec![s.clone()], vec![entry(&a, Some(&s), 0)]),
            Log::ANONYMOUS,
        )
        .await
        .unwrap();
    assert!(store.delete_library(lib.id, Log::ANONYMOUS).await.unwrap());
    assert_eq!(store.load_library(lib.id).await.unwrap(), None);
    assert!(!store.delete_library(lib.id, Log::ANONYMOUS).await.unwrap());
    assert_eq!(
        store
            .list_libraries(&LibraryQuery::default())
            .await
            .unwrap()
            .total,
        0
    );
    assert_eq!(
        store.get_asset(a.id).await.unwrap().map(|x| x.id),
        Some(a.id)
    );
    // The slug is free again, and the id can be used for a new library.
    store
        .put_library(write(lib.clone(), vec![], vec![]), Log::ANONYMOUS)
        .await
        .unwrap();
    let rows = store.load_library(lib.id).await.unwrap().unwrap();
    assert_eq!(rows.library.slug, "gone-soon");
    assert!(rows.sections.is_empty() && rows.entries.is_empty());
    assert_eq!(rows.library.view_count, 0);
}

pub(super) async fn concurrent_views_are_all_counted(store: Arc<dyn Store>) {
    let lib = sample_library("Popular", 1);
    store
        .put_library(write(lib.clone(), vec![], vec![]), Log::ANONYMOUS)
        .await
        .unwrap();
    let tasks: Vec<_> = (0..500)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.record_library_view(lib.id).await.unwrap() })
        })
        .collect();
    let mut seen = HashSet::new();
    for t in tasks {
        let count = t.await.unwrap().expect("library exists").views;
        assert!(seen.insert(count), "two views got the same count {count}");
    }
    assert_eq!(seen.len(), 500);
    assert_eq!(seen.iter().max(), Some(&500));
    let rows = store.load_library(lib.id).await.unwrap().unwrap();
    assert_eq!(rows.library.view_count, 500);
}

pub(super) async fn views_start_over_for_a_library_made_again(store: Arc<dyn Store>) {
    let lib = sample_library("Viewed", 1);
    let put = || write(lib.clone(), vec![], vec![]);
    store.put_library(put(), Log::ANONYMOUS).await.unwrap();
    for _ in 0..3 {
        store.record_library_view(lib.id).await.unwrap();
    }
    assert!(store.delete_library(lib.id, Log::ANONYMOUS).await.unwrap());
    assert_eq!(store.record_library_view(lib.id).await.unwrap(), None);
    // Made again under the same id: its views are its own.
    store.put_library(put(), Log::ANONYMOUS).await.unwrap();
    let rows = store.load_library(lib.id).await.unwrap().unwrap();
    assert_eq!(rows.library.view_count, 0);
    let view = store.record_library_view(lib.id).await.unwrap().unwrap();
    assert_eq!(view.views, 1);
}

pub(super) async fn library_version_follows_writes(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("Held", AssetType::Pdf, 1)).await;
    let lib = sample_library("Versioned", 1);
    let id = lib.id;
    let put = |title: &str| {
        let mut l = lib.clone();
        l.settings.title = title.to_owned();
        write(l, vec![], vec![entry(&a, None, 0)])
    };
    store.put_library(put("One"), Log::ANONYMOUS).await.unwrap();
    let view = || async {
        store
            .record_library_view(id)
            .await
            .unwrap()
            .expect("published")
    };
    let first = view().await;
    let again = view().await;
    assert_eq!(again.views, first.views + 1);
    assert_eq!(again.version, first.version, "a view is no content change");
    store.record_download(a.id).await.unwrap();
    let mut seen = vec![first.version];

    // A replace changes it, even with the same content.
    store.put_library(put("One"), Log::ANONYMOUS).await.unwrap();
    let replaced = view().await;
    assert!(!seen.contains(&replaced.version), "replace keeps version");
    seen.push(replaced.version);

    // A change of an asset the library holds changes it, and the load shows the change.
    let mut changed = crate::change::AssetChange::at(t0() + Duration::seconds(9));
    changed.title = Some("Held, renamed".into());
    changed.file = Some(crate::change::FileFields {
        thumbnail_path: Some("thumbs/held.png".into()),
        ..Default::default()
    });
    store
        .update_asset(a.id, &changed, Log::ANONYMOUS)
        .await
        .unwrap()
        .expect("asset exists");
    let after_asset = view().await;
    assert!(
        !seen.contains(&after_asset.version),
        "asset change keeps version"
    );
    seen.push(after_asset.version);
    let rows = store.load_library(id).await.unwrap().unwrap();
    assert_eq!(rows.entries[0].asset.title, "Held, renamed");
    assert_eq!(
        rows.entries[0].asset.thumbnail_path.as_deref(),
        Some("thumbs/held.png")
    );

    // Deleted and made again under the same id: never an old version.
    assert!(store.delete_library(id, Log::ANONYMOUS).await.unwrap());
    assert_eq!(store.record_library_view(id).await.unwrap(), None);
    store.put_library(put("One"), Log::ANONYMOUS).await.unwrap();
    let reborn = view().await;
    assert!(
        !seen.contains(&reborn.version),
        "re-creation reuses a version"
    );
    assert_eq!(reborn.views, 1);

    // A draft counts no view and tells no version.
    let mut draft = lib.clone();
    draft.settings.published = false;
    store
        .put_library(write(draft, vec![], vec![]), Log::ANONYMOUS)
        .await
        .unwrap();
    assert_eq!(store.record_library_view(id).await.unwrap(), None);
    let rows = store.load_library(id).await.unwrap().unwrap();
    assert_eq!(rows.library.view_count, 1);
}
