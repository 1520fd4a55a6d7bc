//! The store conformance suite: every sentence of the store traits' docs, as checks any
//! backend runs with one call ([`run_all`]). The cases are grouped by the trait they check
//! ([`SUITES`]: [`ASSET_CASES`], [`LIBRARY_CASES`], [`KEY_CASES`], [`META_CASES`], and
//! [`SHARED_CASES`] for what spans them); [`run_cases`] runs one group.
//!
//! ```
//! # tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap().block_on(async {
//! // In a backend's tests the builder opens the backend in a fresh temporary directory and
//! // returns the directory as the guard.
//! assetlib_core::testing::run_all(|| async { (assetlib_core::MemoryStore::new(), ()) }).await;
//! # });
//! ```
//!
//! Each case gets a fresh store from the builder; the builder's second value (a guard such as
//! a `TempDir`) lives until the case ends. A failing case panics with its name.
//!
//! The servers tests run against (PostgreSQL, an S3-compatible server) are not here: they are
//! the workspace's test kit (`tests/kit`, unpublished).

mod lifecycle;
mod websites;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use uuid::Uuid;

use crate::error::StoreError;
use crate::model::{
    ApiKey, Asset, AssetType, Library, LibraryEntry, LibrarySettings, LibraryWrite, PutOutcome,
    Scope, Section,
};
use crate::query::{AssetQuery, AssetSort, LibraryQuery, SortOrder};
use crate::store::Store;
use lifecycle::{
    concurrent_changes_never_mix, delete_racing_library_write_is_consistent,
    delete_refuses_held_assets_unless_forced, drafts_are_listed_by_status,
    library_loads_follow_asset_changes, library_writes_place_existing_assets_only,
    publication_changes_library_counts_and_versions, update_asset_merges_and_keeps_identity,
    update_asset_replaces_file_fields,
};

use websites::{
    a_rotated_signing_secret_replaces_the_old_one, concurrent_first_secrets_agree,
    libraries_are_found_by_slug, the_signing_secret_is_made_once,
};

type CaseFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One named conformance check.
#[derive(Clone, Copy)]
pub struct Case {
    /// The rule it checks.
    pub name: &'static str,
    /// The check, on a fresh store.
    pub run: fn(Arc<dyn Store>) -> CaseFuture,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

macro_rules! suite {
    ($(#[$doc:meta])* $name:ident: $($case:ident),* $(,)?) => {
        $(#[$doc])*
        pub const $name: &[Case] = &[$(Case {
            name: stringify!($case),
            run: |store| Box::pin($case(store)),
        }),*];
    };
}

suite!(
    /// The cases of [`AssetStore`](crate::AssetStore): records, lists (order, filters,
    /// search, paging, totals), changes, deletes, download counters and the assets version.
    ASSET_CASES:
    asset_round_trip,
    get_assets_returns_existing_ones_once,
    asset_slugs_are_unique,
    default_order_is_newest_first,
    paging_through_ties_never_repeats_or_skips,
    title_sort_is_case_insensitive,
    updated_at_sort,
    type_filter_and_counts,
    search_title_and_description_case_insensitive,
    page_past_the_end_is_empty,
    unpublished_assets_are_not_listed,
    totals_follow_creates,
    assets_version_follows_asset_writes,
    update_asset_merges_and_keeps_identity,
    update_asset_replaces_file_fields,
    drafts_are_listed_by_status,
    concurrent_changes_never_mix,
    delete_refuses_held_assets_unless_forced,
    concurrent_downloads_are_all_counted,
);

suite!(
    /// The cases of [`LibraryStore`](crate::LibraryStore): whole writes and loads, slugs,
    /// lists, deletes, view counters and versions, and how libraries follow their assets.
    LIBRARY_CASES:
    library_round_trip,
    library_replace_keeps_counters_and_first_publication,
    library_slugs,
    library_list_order_filter_and_counts,
    library_replace_is_atomic,
    library_delete,
    concurrent_views_are_all_counted,
    library_version_follows_writes,
    library_loads_follow_asset_changes,
    publication_changes_library_counts_and_versions,
    library_writes_place_existing_assets_only,
    delete_racing_library_write_is_consistent,
    libraries_are_found_by_slug,
);

suite!(
    /// The cases of [`KeyStore`](crate::KeyStore).
    KEY_CASES:
    keys_lookup_list_expiry_revocation,
);

suite!(
    /// The cases of [`MetaStore`](crate::MetaStore): the signing secret.
    META_CASES:
    the_signing_secret_is_made_once,
    a_rotated_signing_secret_replaces_the_old_one,
    concurrent_first_secrets_agree,
);

suite!(
    /// Cases that span the traits: missing records of every kind, and ids and key hashes
    /// that are taken.
    SHARED_CASES:
    missing_records_are_none,
    duplicate_ids_and_key_hashes_are_refused,
);

/// Every suite, named after the trait it checks.
pub const SUITES: &[(&str, &[Case])] = &[
    ("AssetStore", ASSET_CASES),
    ("LibraryStore", LIBRARY_CASES),
    ("KeyStore", KEY_CASES),
    ("MetaStore", META_CASES),
    ("Store", SHARED_CASES),
];

/// Runs every suite ([`SUITES`]), each case on a fresh store from `make`. Panics naming the
/// first failing case.
pub async fn run_all<S, G, F, Fut>(mut make: F)
where
    S: Store,
    F: FnMut() -> Fut,
    Fut: Future<Output = (S, G)>,
{
    for (_, cases) in SUITES {
        run_cases(cases, &mut make).await;
    }
}

/// Runs `cases` (one suite of [`SUITES`], say), each on a fresh store from `make`. Panics
/// naming the first failing case.
pub async fn run_cases<S, G, F, Fut>(cases: &[Case], make: &mut F)
where
    S: Store,
    F: FnMut() -> Fut,
    Fut: Future<Output = (S, G)>,
{
    for case in cases {
        let (store, guard) = make().await;
        let store: Arc<dyn Store> = Arc::new(store);
        let outcome = tokio::spawn((case.run)(store)).await;
        drop(guard);
        if let Err(e) = outcome {
            match e.try_into_panic() {
                Ok(payload) => {
                    eprintln!("conformance case `{}` failed", case.name);
                    std::panic::resume_unwind(payload)
                }
                Err(e) => panic!("conformance case `{}` did not finish: {e}", case.name),
            }
        }
    }
}

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .expect("valid date")
}

/// An asset record for tests, published, created at `t0 + secs`.
pub fn sample_asset(title: &str, asset_type: AssetType, secs: i64) -> Asset {
    sample_asset_at(title, asset_type, t0() + Duration::seconds(secs))
}

/// An asset record for tests, published, created (and last updated) `at`, as the API would
/// make it: a new id, the slug from the title, no file, no counts.
pub fn sample_asset_at(title: &str, asset_type: AssetType, at: DateTime<Utc>) -> Asset {
    Asset {
        id: Uuid::new_v4(),
        title: title.to_owned(),
        slug: crate::validate::slug_from_title(title, "asset"),
        description: None,
        asset_type,
        file_path: None,
        file_size: None,
        mime_type: None,
        thumbnail_path: None,
        page_count: None,
        word_count: None,
        width: None,
        height: None,
        external_url: None,
        video_embed: None,
        download_count: 0,
        is_public: false,
        published: true,
        created_at: at,
        updated_at: at,
    }
}

/// A library record for tests, published, updated at `t0 + secs`.
pub fn sample_library(title: &str, secs: i64) -> Library {
    let at = t0() + Duration::seconds(secs);
    Library {
        id: Uuid::new_v4(),
        slug: crate::validate::slug_from_title(title, "library"),
        settings: LibrarySettings {
            title: title.to_owned(),
            description: None,
            workspace_id: None,
            cover_image_path: None,
            cover_overlay_color: None,
            cover_overlay_opacity: None,
            show_asset_count: true,
            allow_individual_downloads: true,
            allow_bulk_download: false,
            is_paid: false,
            price: None,
            currency: "USD".to_owned(),
            published: true,
        },
        published_at: None,
        view_count: 0,
        created_at: at,
        updated_at: at,
    }
}

fn section(title: &str, order: u32) -> Section {
    Section {
        id: Uuid::new_v4(),
        title: title.to_owned(),
        description: None,
        display_order: order,
        collapsed_by_default: false,
    }
}

fn entry(asset: &Asset, section: Option<&Section>, order: u32) -> LibraryEntry {
    LibraryEntry {
        asset_id: asset.id,
        section_id: section.map(|s| s.id),
        display_order: order,
        title: None,
        description: None,
    }
}

fn write(library: Library, sections: Vec<Section>, entries: Vec<LibraryEntry>) -> LibraryWrite {
    LibraryWrite {
        library,
        slug_given: false,
        sections,
        entries,
    }
}

async fn insert(store: &Arc<dyn Store>, asset: Asset) -> Asset {
    store.insert_asset(asset).await.expect("insert_asset")
}

async fn list(store: &Arc<dyn Store>, q: AssetQuery) -> (Vec<Asset>, u64) {
    let page = store.list_assets(&q).await.expect("list_assets");
    (page.items, page.total)
}

fn query(sort: AssetSort, order: SortOrder, per_page: u32) -> AssetQuery {
    AssetQuery {
        per_page,
        sort,
        order,
        ..AssetQuery::default()
    }
}

/// Walks every page of `q` and returns the ids in order.
async fn walk(store: &Arc<dyn Store>, mut q: AssetQuery) -> Vec<Uuid> {
    let mut ids = Vec::new();
    for page in 1.. {
        q.page = page;
        let (items, total) = list(store, q.clone()).await;
        if items.is_empty() {
            assert_eq!(ids.len() as u64, total, "walk ended before total");
            break;
        }
        assert!(items.len() <= q.per_page as usize);
        ids.extend(items.iter().map(|a| a.id));
    }
    ids
}

async fn asset_round_trip(store: Arc<dyn Store>) {
    let mut a = sample_asset("Quarterly report", AssetType::Pdf, 1);
    a.description = Some("Numbers".into());
    a.file_path = Some("reports/q1.pdf".into());
    a.file_size = Some(1234);
    a.mime_type = Some("application/pdf".into());
    a.page_count = Some(3);
    a.word_count = Some(456);
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
}

async fn missing_records_are_none(store: Arc<dyn Store>) {
    let id = Uuid::new_v4();
    assert_eq!(store.get_asset(id).await.unwrap(), None);
    assert_eq!(store.load_library(id).await.unwrap(), None);
    assert!(!store.delete_library(id).await.unwrap());
    assert_eq!(store.record_library_view(id).await.unwrap(), None);
    assert_eq!(store.record_download(id).await.unwrap(), None);
    assert_eq!(store.find_key(&[7; 32]).await.unwrap(), None);
    assert!(!store.revoke_key(id, t0()).await.unwrap());
    let (items, total) = list(&store, AssetQuery::default()).await;
    assert!(items.is_empty());
    assert_eq!(total, 0);
    let libs = store
        .list_libraries(&LibraryQuery::default())
        .await
        .unwrap();
    assert!(libs.items.is_empty());
    assert_eq!(libs.total, 0);
}

async fn get_assets_returns_existing_ones_once(store: Arc<dyn Store>) {
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

async fn asset_slugs_are_unique(store: Arc<dyn Store>) {
    let mut slugs = Vec::new();
    for i in 0..3 {
        slugs.push(
            insert(&store, sample_asset("Brand Guide", AssetType::Pdf, i))
                .await
                .slug,
        );
    }
    assert_eq!(slugs, ["brand-guide", "brand-guide-2", "brand-guide-3"]);
    let other = insert(&store, sample_asset("Other", AssetType::Pdf, 9)).await;
    assert_eq!(other.slug, "other");
}

async fn default_order_is_newest_first(store: Arc<dyn Store>) {
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

async fn paging_through_ties_never_repeats_or_skips(store: Arc<dyn Store>) {
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

async fn title_sort_is_case_insensitive(store: Arc<dyn Store>) {
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

async fn updated_at_sort(store: Arc<dyn Store>) {
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

async fn type_filter_and_counts(store: Arc<dyn Store>) {
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

async fn search_title_and_description_case_insensitive(store: Arc<dyn Store>) {
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

async fn page_past_the_end_is_empty(store: Arc<dyn Store>) {
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

async fn unpublished_assets_are_not_listed(store: Arc<dyn Store>) {
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

async fn totals_follow_creates(store: Arc<dyn Store>) {
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

async fn library_round_trip(store: Arc<dyn Store>) {
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
        .put_library(write(
            lib.clone(),
            vec![s1.clone(), s2.clone()],
            entries.clone(),
        ))
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

async fn library_replace_keeps_counters_and_first_publication(store: Arc<dyn Store>) {
    let mut draft = sample_library("Draft", 1);
    draft.settings.published = false;
    let id = draft.id;
    let created_at = draft.created_at;
    assert_eq!(
        store
            .put_library(write(draft.clone(), vec![], vec![]))
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
            .put_library(write(v2.clone(), vec![], vec![]))
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
    store.put_library(write(v3, vec![], vec![])).await.unwrap();
    let rows = store.load_library(id).await.unwrap().unwrap();
    assert_eq!(rows.library.published_at, Some(v2.updated_at));
    assert_eq!(rows.library.view_count, 3);
}

async fn library_slugs(store: Arc<dyn Store>) {
    let first = sample_library("Brand kit", 1);
    store
        .put_library(write(first.clone(), vec![], vec![]))
        .await
        .unwrap();
    let second = sample_library("Brand kit", 2);
    store
        .put_library(write(second.clone(), vec![], vec![]))
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
        .put_library(write(first.clone(), vec![], vec![]))
        .await
        .unwrap();
    assert_eq!(slug_of(first.id).await, "brand-kit");
    // A given slug that another library holds is a conflict on `slug`, and changes nothing.
    let mut third = sample_library("Third", 3);
    third.slug = "brand-kit".into();
    let err = store
        .put_library(LibraryWrite {
            library: third.clone(),
            slug_given: true,
            sections: vec![],
            entries: vec![],
        })
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
        .put_library(LibraryWrite {
            library: renamed,
            slug_given: true,
            sections: vec![],
            entries: vec![],
        })
        .await
        .unwrap();
    assert_eq!(slug_of(first.id).await, "renamed");
    let mut fourth = sample_library("Brand kit", 4);
    fourth.slug = "brand-kit".into();
    store
        .put_library(write(fourth.clone(), vec![], vec![]))
        .await
        .unwrap();
    assert_eq!(slug_of(fourth.id).await, "brand-kit");
}

async fn library_list_order_filter_and_counts(store: Arc<dyn Store>) {
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
            .put_library(write(lib.clone(), vec![s], entries))
            .await
            .unwrap();
        ids.push(lib.id);
    }
    let mut draft = sample_library("Draft", 1000);
    draft.settings.published = false;
    store
        .put_library(write(draft, vec![], vec![]))
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

async fn library_replace_is_atomic(store: Arc<dyn Store>) {
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
    store.put_library(version(0)).await.unwrap();
    let writer = {
        let store = store.clone();
        let versions: Vec<LibraryWrite> = (1..=20).map(version).collect();
        tokio::spawn(async move {
            for v in versions {
                store.put_library(v).await.unwrap();
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

async fn library_delete(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("A", AssetType::Pdf, 1)).await;
    let lib = sample_library("Gone soon", 1);
    let s = section("S", 0);
    store
        .put_library(write(
            lib.clone(),
            vec![s.clone()],
            vec![entry(&a, Some(&s), 0)],
        ))
        .await
        .unwrap();
    assert!(store.delete_library(lib.id).await.unwrap());
    assert_eq!(store.load_library(lib.id).await.unwrap(), None);
    assert!(!store.delete_library(lib.id).await.unwrap());
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
        .put_library(write(lib.clone(), vec![], vec![]))
        .await
        .unwrap();
    let rows = store.load_library(lib.id).await.unwrap().unwrap();
    assert_eq!(rows.library.slug, "gone-soon");
    assert!(rows.sections.is_empty() && rows.entries.is_empty());
    assert_eq!(rows.library.view_count, 0);
}

async fn concurrent_views_are_all_counted(store: Arc<dyn Store>) {
    let lib = sample_library("Popular", 1);
    store
        .put_library(write(lib.clone(), vec![], vec![]))
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

async fn library_version_follows_writes(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("Held", AssetType::Pdf, 1)).await;
    let lib = sample_library("Versioned", 1);
    let id = lib.id;
    let put = |title: &str| {
        let mut l = lib.clone();
        l.settings.title = title.to_owned();
        write(l, vec![], vec![entry(&a, None, 0)])
    };
    store.put_library(put("One")).await.unwrap();
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
    store.put_library(put("One")).await.unwrap();
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
        .update_asset(a.id, &changed)
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
    assert!(store.delete_library(id).await.unwrap());
    assert_eq!(store.record_library_view(id).await.unwrap(), None);
    store.put_library(put("One")).await.unwrap();
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
        .put_library(write(draft, vec![], vec![]))
        .await
        .unwrap();
    assert_eq!(store.record_library_view(id).await.unwrap(), None);
    let rows = store.load_library(id).await.unwrap().unwrap();
    assert_eq!(rows.library.view_count, 1);
}

async fn assets_version_follows_asset_writes(store: Arc<dyn Store>) {
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
        .put_library(write(lib, vec![], vec![entry(&a, None, 0)]))
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
    assert_eq!(store.record_download(Uuid::new_v4()).await.unwrap(), None);

    let mut change = crate::change::AssetChange::at(t0() + Duration::seconds(5));
    change.title = Some("Versioned, renamed".into());
    store.update_asset(a.id, &change).await.unwrap().unwrap();
    moved(version().await, "a change");
    let (items, _) = list(&store, AssetQuery::default()).await;
    assert_eq!(items[0].title, "Versioned, renamed");

    assert!(matches!(
        store.delete_asset(a.id, true).await.unwrap(),
        crate::change::AssetDeletion::Deleted(_)
    ));
    moved(version().await, "a delete");
    assert_eq!(store.get_asset(a.id).await.unwrap(), None);
}

async fn concurrent_downloads_are_all_counted(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("Hot", AssetType::Pdf, 1)).await;
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.record_download(a.id).await.unwrap() })
        })
        .collect();
    for t in tasks {
        assert!(t.await.unwrap().is_some());
    }
    let stored = store.get_asset(a.id).await.unwrap().unwrap();
    assert_eq!(stored.download_count, 200);
    // The count shows in lists too.
    let (items, _) = list(&store, AssetQuery::default()).await;
    assert_eq!(items[0].download_count, 200);
}

async fn keys_lookup_list_expiry_revocation(store: Arc<dyn Store>) {
    let key = |n: u8, secs: i64, expires: Option<i64>| ApiKey {
        id: Uuid::new_v4(),
        name: format!("key {n}"),
        key_hash: [n; 32],
        scopes: vec![Scope::ReadAssets, Scope::WriteLibraries],
        created_at: t0() + Duration::seconds(secs),
        expires_at: expires.map(|e| t0() + Duration::seconds(e)),
        revoked_at: None,
    };
    let k2 = key(2, 20, Some(3600));
    let k1 = key(1, 10, None);
    store.insert_key(k2.clone()).await.unwrap();
    store.insert_key(k1.clone()).await.unwrap();
    assert_eq!(store.find_key(&[1; 32]).await.unwrap(), Some(k1.clone()));
    assert_eq!(store.find_key(&[2; 32]).await.unwrap(), Some(k2.clone()));
    assert_eq!(store.find_key(&[3; 32]).await.unwrap(), None);
    assert_eq!(
        store.list_keys().await.unwrap(),
        vec![k1.clone(), k2.clone()]
    );
    let first = t0() + Duration::days(1);
    assert!(store.revoke_key(k1.id, first).await.unwrap());
    assert!(
        store
            .revoke_key(k1.id, first + Duration::days(1))
            .await
            .unwrap()
    );
    let revoked = store.find_key(&[1; 32]).await.unwrap().unwrap();
    assert_eq!(
        revoked.revoked_at,
        Some(first),
        "the first revocation time is kept"
    );
    assert_eq!(
        store.find_key(&[2; 32]).await.unwrap().unwrap().revoked_at,
        None
    );
}

/// `insert_asset` and `insert_key` refuse an id that exists, and `insert_key` a hash that
/// exists, with their kinds, changing nothing.
async fn duplicate_ids_and_key_hashes_are_refused(store: Arc<dyn Store>) {
    let asset = sample_asset("Original", AssetType::Pdf, 1);
    store.insert_asset(asset.clone()).await.unwrap();
    let mut again = sample_asset("Impostor", AssetType::Image, 2);
    again.id = asset.id;
    match store.insert_asset(again).await {
        Err(StoreError::DuplicateId { id }) => assert_eq!(id, asset.id),
        other => panic!("expected a duplicate id, got {other:?}"),
    }
    assert_eq!(store.get_asset(asset.id).await.unwrap(), Some(asset));

    let key = ApiKey {
        id: Uuid::new_v4(),
        name: "first".into(),
        key_hash: [7; 32],
        scopes: vec![Scope::ReadAssets],
        created_at: t0(),
        expires_at: None,
        revoked_at: None,
    };
    store.insert_key(key.clone()).await.unwrap();
    let same_id = ApiKey {
        key_hash: [8; 32],
        ..key.clone()
    };
    match store.insert_key(same_id).await {
        Err(StoreError::DuplicateId { id }) => assert_eq!(id, key.id),
        other => panic!("expected a duplicate id, got {other:?}"),
    }
    let same_hash = ApiKey {
        id: Uuid::new_v4(),
        ..key.clone()
    };
    match store.insert_key(same_hash).await {
        Err(StoreError::DuplicateKeyHash) => {}
        other => panic!("expected a duplicate hash, got {other:?}"),
    }
    assert_eq!(store.list_keys().await.unwrap(), vec![key.clone()]);
    assert_eq!(store.find_key(&[8; 32]).await.unwrap(), None);
}
