//! The cases of `AssetStore`: records, lists (order, filters, search, paging, totals),
//! the assets version and download counters.

use super::*;
use crate::events::Log;

mod list_versions;
pub(super) use list_versions::list_versions_move_with_what_lists_hold;

pub(super) async fn asset_round_trip(store: Arc<dyn Store>) {
    let mut a = sample_asset("Quarterly report", AssetType::Pdf, 1);
    a.description = Some("Numbers".into());
    a.file_path = Some("reports/q1.pdf".into());
    a.file_size = Some(1234);
    a.mime_type = Some("application/pdf".into());
    a.page_count = Some(3);
    a.word_count = Some(456);
    a.thumbnail_path = Some("thumbnails/q1.png".into());
    a.thumbnail_placeholder = Some("1QcSHQRnh493V4dIh4eXh1h4kJUI".into());
    a.is_public = true;
    let stored = insert(&store, a.clone()).await;
    assert_eq!(stored, a, "insert returns the asset as stored");
    assert_eq!(store.get_asset(a.id).await.unwrap(), Some(a.clone()));
    let mut v = sample_asset("Clip", AssetType::ExternalVideo, 2);
    v.external_url = Some("https://youtu.be/dQw4w9WgXcQ".into());
    v.video_embed = Some("https://www.youtube.com/embed/dQw4w9WgXcQ".into());
    v.width = Some(1);
    insert(&store, v.clone()).await;
    assert_eq!(store.get_asset(v.id).await.unwrap(), Some(v));
    let mut m = sample_asset("Interview", AssetType::Video, 3);
    m.width = Some(1080);
    m.height = Some(1920);
    m.media = crate::model::Media {
        duration_ms: Some(3_600_001),
        sample_rate: Some(44_100),
        channels: Some(6),
        bitrate: Some(u32::MAX),
        video_codec: Some("av1".into()),
    };
    insert(&store, m.clone()).await;
    assert_eq!(store.get_asset(m.id).await.unwrap(), Some(m));
}

pub(super) async fn get_assets_returns_existing_ones_once(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("A", AssetType::Image, 1)).await;
    let b = insert(&store, sample_asset("B", AssetType::Image, 2)).await;
    insert(&store, sample_asset("C", AssetType::Image, 3)).await;
    let got = store
        .get_assets(&[b.id, Uuid::new_v4(), a.id, b.id])
        .await
        .unwrap();
    let ids: HashSet<Uuid> = got.iter().map(|x| x.id).collect();
    assert_eq!(got.len(), 2);
    assert_eq!(ids, HashSet::from([a.id, b.id]));
    assert!(store.get_assets(&[]).await.unwrap().is_empty());
}

/// A title's slug, then its numbered forms. Once the asset holding the slug itself is
/// deleted, the next asset of that title gets the slug (PostgreSQL, memory) or a numbered form
/// not given before (sled keeps the slug's claim); numbered forms may be left out, never
/// shared.
pub(super) async fn asset_slugs_are_unique(store: Arc<dyn Store>) {
    let mut assets = Vec::new();
    for i in 0..3 {
        assets.push(insert(&store, sample_asset("Brand Guide", AssetType::Pdf, i)).await);
    }
    let slugs: Vec<&str> = assets.iter().map(|a| a.slug.as_str()).collect();
    assert_eq!(slugs, ["brand-guide", "brand-guide-2", "brand-guide-3"]);
    let other = insert(&store, sample_asset("Other", AssetType::Pdf, 9)).await;
    assert_eq!(other.slug, "other");
    force_delete(&store, assets[0].id).await;
    let mut given = HashSet::new();
    for i in 4..6 {
        let slug = insert(&store, sample_asset("Brand Guide", AssetType::Pdf, i))
            .await
            .slug;
        let n = slug.strip_prefix("brand-guide-").map(str::parse::<u64>);
        assert!(
            slug == "brand-guide" || matches!(n, Some(Ok(n)) if n >= 4),
            "slug {slug:?}"
        );
        assert!(given.insert(slug.clone()), "{slug:?} given twice");
    }
}

/// 64 concurrent creates of one title all land, each with a slug of its own: the title's
/// slug or a numbered one (numbers may be left out, never shared).
pub(super) async fn concurrent_creates_of_one_title_get_unique_slugs(store: Arc<dyn Store>) {
    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .insert_asset(sample_asset("Logo", AssetType::Image, i), Log::ANONYMOUS)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut slugs = HashSet::new();
    for t in tasks {
        let stored = t.await.unwrap();
        let n = stored.slug.strip_prefix("logo-").map(|n| n.parse::<u64>());
        assert!(
            stored.slug == "logo" || matches!(n, Some(Ok(n)) if n >= 2),
            "slug {:?}",
            stored.slug
        );
        assert!(
            slugs.insert(stored.slug.clone()),
            "{:?} given twice",
            stored.slug
        );
        let read = store.get_asset(stored.id).await.unwrap().unwrap();
        assert_eq!(read.slug, stored.slug);
    }
    assert!(slugs.contains("logo"));
    let (_, total) = list(&store, AssetQuery::default()).await;
    assert_eq!(total, 64);
}

pub(super) async fn default_order_is_newest_first(store: Arc<dyn Store>) {
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(
            insert(&store, sample_asset(&format!("A{i}"), AssetType::Pdf, i))
                .await
                .id,
        );
    }
    ids.reverse();
    let (items, total) = list(&store, AssetQuery::default()).await;
    assert_eq!(total, 5);
    assert_eq!(items.iter().map(|a| a.id).collect::<Vec<_>>(), ids);
}

pub(super) async fn paging_through_ties_never_repeats_or_skips(store: Arc<dyn Store>) {
    let mut all = Vec::new();
    for i in 0..57 {
        // Three timestamps and two titles (differing only in case) for 57 assets.
        let title = if i % 2 == 0 {
            "Same title"
        } else {
            "SAME TITLE"
        };
        let a = insert(&store, sample_asset(title, AssetType::Document, i % 3)).await;
        all.push(a);
    }
    let by_id: HashMap<Uuid, &Asset> = all.iter().map(|a| (a.id, a)).collect();
    for sort in [AssetSort::CreatedAt, AssetSort::Title, AssetSort::UpdatedAt] {
        for order in [SortOrder::Asc, SortOrder::Desc] {
            for per_page in [1, 7, 20, 100] {
                let ids = walk(&store, query(sort, order, per_page)).await;
                let unique: HashSet<Uuid> = ids.iter().copied().collect();
                assert_eq!(ids.len(), 57, "{sort:?} {order:?} {per_page}: count");
                assert_eq!(unique.len(), 57, "{sort:?} {order:?} {per_page}: repeats");
                let keys: Vec<(String, Uuid)> = ids
                    .iter()
                    .map(|id| {
                        let a = by_id[id];
                        let k = match sort {
                            AssetSort::CreatedAt => a.created_at.to_rfc3339(),
                            AssetSort::UpdatedAt => a.updated_at.to_rfc3339(),
                            AssetSort::Title => a.title.to_lowercase(),
                        };
                        (k, a.id)
                    })
                    .collect();
                let mut sorted = keys.clone();
                sorted.sort();
                if order == SortOrder::Desc {
                    sorted.reverse();
                }
                assert_eq!(keys, sorted, "{sort:?} {order:?} {per_page}: order");
            }
        }
    }
}

pub(super) async fn title_sort_is_case_insensitive(store: Arc<dyn Store>) {
    for (i, t) in ["banana", "Apple", "cherry", "Äpfel", "apricot"]
        .iter()
        .enumerate()
    {
        insert(&store, sample_asset(t, AssetType::Image, i as i64)).await;
    }
    let (items, _) = list(&store, query(AssetSort::Title, SortOrder::Asc, 10)).await;
    let titles: Vec<&str> = items.iter().map(|a| a.title.as_str()).collect();
    // Unicode lowercase, compared as strings: "äpfel" sorts after the ASCII letters.
    assert_eq!(titles, ["Apple", "apricot", "banana", "cherry", "Äpfel"]);
    let (items, _) = list(&store, query(AssetSort::Title, SortOrder::Desc, 10)).await;
    assert_eq!(items[0].title, "Äpfel");
    assert_eq!(items[4].title, "Apple");
}

pub(super) async fn updated_at_sort(store: Arc<dyn Store>) {
    let mut a = sample_asset("first created, last updated", AssetType::Pdf, 0);
    a.updated_at = t0() + Duration::seconds(100);
    let b = sample_asset("second", AssetType::Pdf, 10);
    insert(&store, a.clone()).await;
    insert(&store, b.clone()).await;
    let (items, _) = list(&store, query(AssetSort::UpdatedAt, SortOrder::Desc, 10)).await;
    assert_eq!(items.iter().map(|x| x.id).collect::<Vec<_>>(), [a.id, b.id]);
    let (items, _) = list(&store, query(AssetSort::CreatedAt, SortOrder::Desc, 10)).await;
    assert_eq!(items.iter().map(|x| x.id).collect::<Vec<_>>(), [b.id, a.id]);
}

pub(super) async fn type_filter_and_counts(store: Arc<dyn Store>) {
    let types = [
        AssetType::Pdf,
        AssetType::Image,
        AssetType::Image,
        AssetType::Video,
        AssetType::Link,
        AssetType::ExternalVideo,
        AssetType::Git,
    ];
    for (i, t) in types.iter().enumerate() {
        insert(&store, sample_asset(&format!("x{i}"), *t, i as i64)).await;
    }
    for t in AssetType::ALL {
        let q = AssetQuery {
            asset_type: Some(t),
            ..AssetQuery::default()
        };
        let (items, total) = list(&store, q).await;
        let want = types.iter().filter(|x| **x == t).count();
        assert_eq!(total as usize, want, "{t}");
        assert_eq!(items.len(), want, "{t}");
        assert!(items.iter().all(|a| a.asset_type == t));
    }
    let (_, total) = list(&store, AssetQuery::default()).await;
    assert_eq!(total, types.len() as u64);
    // Filter plus paging.
    let q = AssetQuery {
        asset_type: Some(AssetType::Image),
        per_page: 1,
        page: 2,
        ..AssetQuery::default()
    };
    let (items, total) = list(&store, q).await;
    assert_eq!((items.len(), total), (1, 2));
}

pub(super) async fn search_title_and_description_case_insensitive(store: Arc<dyn Store>) {
    let mut a = sample_asset("Ärger im Büro", AssetType::Document, 1);
    a.description = Some("Quarterly NUMBERS".into());
    let b = sample_asset("ÉCOLE guide", AssetType::Pdf, 2);
    let mut c = sample_asset("Unrelated", AssetType::Pdf, 3);
    c.description = Some("mentions the école once".into());
    let d = sample_asset("Plain", AssetType::Pdf, 4);
    for x in [&a, &b, &c, &d] {
        insert(&store, x.clone()).await;
    }
    let search = |s: &str, t: Option<AssetType>| AssetQuery {
        search: Some(s.to_owned()),
        asset_type: t,
        sort: AssetSort::CreatedAt,
        order: SortOrder::Asc,
        ..AssetQuery::default()
    };
    let ids = |v: Vec<Asset>| v.into_iter().map(|x| x.id).collect::<Vec<_>>();
    let (items, total) = list(&store, search("ärg", None)).await;
    assert_eq!((ids(items), total), (vec![a.id], 1));
    let (items, total) = list(&store, search("numbers", None)).await;
    assert_eq!((ids(items), total), (vec![a.id], 1));
    let (items, total) = list(&store, search("École", None)).await;
    assert_eq!((ids(items), total), (vec![b.id, c.id], 2));
    let (items, total) = list(&store, search("école", Some(AssetType::Pdf))).await;
    assert_eq!((ids(items), total), (vec![b.id, c.id], 2));
    let (items, total) = list(&store, search("école", Some(AssetType::Document))).await;
    assert_eq!((ids(items), total), (vec![], 0));
    let (items, total) = list(&store, search("nothing like it", None)).await;
    assert_eq!((items.len(), total), (0, 0));
    let mut q = search("L", None);
    q.per_page = 1;
    q.page = 2;
    let (items, total) = list(&store, q).await;
    assert_eq!(items.len(), 1);
    assert_eq!(total, 4, "every asset has an l in its title or description");
}

pub(super) async fn page_past_the_end_is_empty(store: Arc<dyn Store>) {
    for i in 0..5 {
        insert(&store, sample_asset("x", AssetType::Pdf, i)).await;
    }
    for page in [2, 3, 1000, u64::MAX] {
        let q = AssetQuery {
            page,
            per_page: 5,
            ..AssetQuery::default()
        };
        let (items, total) = list(&store, q).await;
        assert!(items.is_empty(), "page {page}");
        assert_eq!(total, 5);
    }
    let q = AssetQuery {
        page: 2,
        per_page: 3,
        ..AssetQuery::default()
    };
    assert_eq!(list(&store, q).await.0.len(), 2);
}

pub(super) async fn unpublished_assets_are_not_listed(store: Arc<dyn Store>) {
    let mut hidden = sample_asset("Hidden draft", AssetType::Pdf, 1);
    hidden.published = false;
    insert(&store, hidden.clone()).await;
    let shown = insert(&store, sample_asset("Shown", AssetType::Pdf, 2)).await;
    let (items, total) = list(&store, AssetQuery::default()).await;
    assert_eq!((items.len(), total), (1, 1));
    assert_eq!(items[0].id, shown.id);
    let q = AssetQuery {
        search: Some("draft".into()),
        ..AssetQuery::default()
    };
    assert_eq!(list(&store, q).await.1, 0);
    let q = AssetQuery {
        asset_type: Some(AssetType::Pdf),
        ..AssetQuery::default()
    };
    assert_eq!(list(&store, q).await.1, 1);
    assert_eq!(store.get_asset(hidden.id).await.unwrap(), Some(hidden));
}

pub(super) async fn totals_follow_creates(store: Arc<dyn Store>) {
    for i in 0..30 {
        let t = if i % 3 == 0 {
            AssetType::Image
        } else {
            AssetType::Audio
        };
        insert(&store, sample_asset("n", t, i)).await;
        let (_, total) = list(&store, AssetQuery::default()).await;
        assert_eq!(total, i as u64 + 1);
    }
    let q = AssetQuery {
        asset_type: Some(AssetType::Image),
        ..AssetQuery::default()
    };
    assert_eq!(list(&store, q).await.1, 10);
}

/// Renames asset `id` to `title` (five seconds after [`t0`]).
async fn rename(store: &Arc<dyn Store>, id: Uuid, title: &str) {
    let mut change = crate::change::AssetChange::at(t0() + Duration::seconds(5));
    change.title = Some(title.into());
    store
        .update_asset(id, &change, Log::ANONYMOUS)
        .await
        .unwrap()
        .unwrap();
}

pub(super) async fn assets_version_follows_asset_writes(store: Arc<dyn Store>) {
    let mut seen = vec![store.assets_version().await.unwrap()];
    let mut moved = |v: u64, what: &str| {
        assert!(
            !seen.contains(&v),
            "{what} keeps or reuses the assets version"
        );
        seen.push(v);
    };
    let version = || async { store.assets_version().await.unwrap() };

    let a = insert(&store, sample_asset("Versioned", AssetType::Pdf, 1)).await;
    let after_insert = version().await;
    moved(after_insert, "an insert");
    let (items, _) = list(&store, AssetQuery::default()).await;
    assert_eq!(items.len(), 1, "a read after the version sees the insert");

    // Reads, library writes and views are no change of the assets.
    let lib = sample_library("Holder", 1);
    let lib_id = lib.id;
    store
        .put_library(write(lib, vec![], vec![entry(&a, None, 0)]), Log::ANONYMOUS)
        .await
        .unwrap();
    store.record_library_view(lib_id).await.unwrap();
    store.get_asset(a.id).await.unwrap();
    assert_eq!(
        version().await,
        after_insert,
        "no asset write, same version"
    );

    store.record_download(a.id).await.unwrap();
    let after_download = version().await;
    moved(after_download, "a download");
    assert_eq!(
        store.get_asset(a.id).await.unwrap().unwrap().download_count,
        1
    );
    let ghost = Uuid::new_v4();
    store.record_download(ghost).await.unwrap();
    assert_eq!(
        store.get_asset(ghost).await.unwrap(),
        None,
        "a missing asset counts nothing"
    );

    rename(&store, a.id, "Versioned, renamed").await;
    moved(version().await, "a change");
    let (items, _) = list(&store, AssetQuery::default()).await;
    assert_eq!(items[0].title, "Versioned, renamed");

    force_delete(&store, a.id).await;
    moved(version().await, "a delete");
    assert_eq!(store.get_asset(a.id).await.unwrap(), None);
}

pub(super) async fn asset_version_follows_that_assets_writes(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("Own version", AssetType::Pdf, 1)).await;
    let b = insert(&store, sample_asset("Its neighbour", AssetType::Pdf, 2)).await;
    let version = |id: Uuid| {
        let store = Arc::clone(&store);
        async move { store.asset_version(id).await.unwrap() }
    };
    let first = version(a.id).await;
    assert_eq!(version(a.id).await, first, "no write, same version");
    let mut seen = vec![first];
    let mut moved = |v: u64, what: &str| {
        assert!(!seen.contains(&v), "{what} keeps or reuses a's version");
        seen.push(v);
    };

    store.record_download(a.id).await.unwrap();
    moved(version(a.id).await, "a download");
    assert_eq!(
        store.get_asset(a.id).await.unwrap().unwrap().download_count,
        1,
        "a read after the version sees the download"
    );

    rename(&store, a.id, "Own version, renamed").await;
    moved(version(a.id).await, "a change");
    assert_eq!(
        store.get_asset(a.id).await.unwrap().unwrap().title,
        "Own version, renamed"
    );

    // A bulk change moves each asset it changes.
    let b_before = version(b.id).await;
    let mut tags = crate::change::AssetChange::at(t0() + Duration::seconds(6));
    tags.tags = Some(crate::change::TagChange::Add(vec!["bulk".into()]));
    let done = store
        .update_assets(&[a.id, b.id], &tags, Log::ANONYMOUS)
        .await
        .unwrap();
    assert!(
        matches!(done, crate::change::BulkOutcome::Done(_)),
        "{done:?}"
    );
    moved(version(a.id).await, "a bulk change");
    assert_ne!(version(b.id).await, b_before, "a bulk change of b");

    force_delete(&store, a.id).await;
    moved(version(a.id).await, "a delete");
    assert_eq!(store.get_asset(a.id).await.unwrap(), None);

    let b_before = version(b.id).await;
    let gone = store
        .delete_assets(&[b.id], true, Log::ANONYMOUS)
        .await
        .unwrap();
    assert!(
        matches!(gone, crate::change::BulkOutcome::Done(_)),
        "{gone:?}"
    );
    assert_ne!(version(b.id).await, b_before, "a bulk delete");
    assert_eq!(store.get_asset(b.id).await.unwrap(), None);
}

pub(super) async fn downloads_start_over_for_an_asset_made_again(store: Arc<dyn Store>) {
    let asset = sample_asset("Counted", AssetType::Pdf, 1);
    let a = insert(&store, asset.clone()).await;
    for _ in 0..3 {
        store.record_download(a.id).await.unwrap();
    }
    assert_eq!(
        store.get_asset(a.id).await.unwrap().unwrap().download_count,
        3
    );
    let gone = force_delete(&store, a.id).await;
    assert_eq!(
        gone.download_count, 3,
        "the deleted record reports its whole count"
    );
    // Made again under the same id: its count is its own, not the deleted one's.
    insert(&store, asset).await;
    assert_eq!(
        store.get_asset(a.id).await.unwrap().unwrap().download_count,
        0
    );
    store.record_download(a.id).await.unwrap();
    let (items, _) = list(&store, AssetQuery::default()).await;
    assert_eq!(items[0].download_count, 1);
}

pub(super) async fn concurrent_downloads_are_all_counted(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("Hot", AssetType::Pdf, 1)).await;
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.record_download(a.id).await.unwrap() })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let stored = store.get_asset(a.id).await.unwrap().unwrap();
    assert_eq!(stored.download_count, 200);
    // The count shows in lists too.
    let (items, _) = list(&store, AssetQuery::default()).await;
    assert_eq!(items[0].download_count, 200);
}
