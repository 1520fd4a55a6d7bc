//! The store conformance suite: every sentence of the store traits' docs, as checks any
//! backend runs with one call ([`run_all`]). The cases are grouped by the trait they check
//! ([`SUITES`]: [`ASSET_CASES`], [`LIBRARY_CASES`], [`KEY_CASES`], [`META_CASES`],
//! [`PASS_CASES`], [`EVENT_CASES`], [`WEBHOOK_CASES`], [`UPLOAD_CASES`], [`SHARED_CASES`]
//! for what spans them; `SEARCH_CASES`, `TRANSFER_CASES` of their features); [`run_cases`]
//! runs one group.
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

mod assets;
mod deletes;
mod deliveries;
mod events;
mod keys;
mod libraries;
mod lifecycle;
mod moves;
mod organize;
mod passes;
#[cfg(feature = "search")]
mod search;
mod shared;
#[cfg(feature = "search")]
mod stemming;
#[cfg(feature = "transfer")]
mod transfer;
mod uploads;
mod webhooks;
mod websites;
mod workspaces;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use uuid::Uuid;

use crate::error::StoreError;
use crate::events::Log;
use crate::model::{
    ApiKey, Asset, AssetType, EntryAsset, Library, LibraryEntry, LibrarySettings, LibraryWrite,
    PutOutcome, Scope, Section,
};
use crate::operations::Capability;
use crate::query::{AssetQuery, AssetSort, LibraryQuery, SortOrder};
use crate::store::{EventStore, PassStore, Store, UploadStore, WebhookStore};
use assets::*;
use deletes::{
    delete_racing_library_write_is_consistent, delete_refuses_held_assets_unless_forced,
    library_writes_place_existing_assets_only,
};
use deliveries::{
    attempts_are_recorded_and_failing_webhooks_disabled,
    claims_lease_due_deliveries_of_enabled_webhooks, old_deliveries_are_purged,
};
use events::{
    a_reader_following_the_feed_sees_each_concurrent_write_once,
    cursors_the_log_never_handed_out_are_refused,
    events_keep_their_workspace_and_the_feed_filters_by_it, every_change_appends_one_event,
    old_events_are_purged,
};
use keys::*;
use libraries::*;
use lifecycle::{
    concurrent_changes_never_mix, drafts_are_listed_by_status, library_loads_follow_asset_changes,
    publication_changes_library_counts_and_versions, update_asset_merges_and_keeps_identity,
    update_asset_replaces_file_fields,
};
use moves::{
    a_library_write_racing_a_move_is_consistent,
    a_move_waits_for_the_libraries_that_hold_the_asset,
    an_asset_moves_with_its_slug_or_the_first_free_one,
};
use organize::*;
pub use passes::sample_pass;
use passes::*;
#[cfg(feature = "search")]
use search::*;
use shared::*;
#[cfg(feature = "search")]
use stemming::*;
#[cfg(feature = "transfer")]
pub use transfer::{TRANSFER_CASES, TransferCase, run_transfer_cases};
use uploads::*;
use webhooks::{
    streams_are_leased_to_one_holder_and_advance_with_their_deliveries,
    webhooks_round_trip_change_and_delete_with_their_events,
};
use websites::{
    a_rotated_signing_secret_replaces_the_old_one, concurrent_first_secrets_agree,
    libraries_are_found_by_slug, the_signing_secret_is_made_once,
};
use workspaces::{
    asset_slugs_are_unique_per_workspace, assets_keep_their_workspace_and_lists_filter_by_it,
    keys_keep_their_workspace, library_slugs_are_unique_per_workspace,
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
    concurrent_creates_of_one_title_get_unique_slugs,
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
    asset_version_follows_that_assets_writes,
    list_versions_move_with_what_lists_hold,
    update_asset_merges_and_keeps_identity,
    update_asset_replaces_file_fields,
    drafts_are_listed_by_status,
    concurrent_changes_never_mix,
    delete_refuses_held_assets_unless_forced,
    concurrent_downloads_are_all_counted,
    downloads_start_over_for_an_asset_made_again,
    tags_filter_lists_ignoring_case,
    tag_counts_follow_changes,
    entries_show_their_assets_tags,
    checksum_filter_finds_same_bytes,
    bulk_updates_land_whole_or_not_at_all,
    bulk_deletes_land_whole_or_not_at_all,
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
    replacing_the_settings_alone_keeps_entries_and_uses,
    library_delete,
    concurrent_views_are_all_counted,
    views_start_over_for_a_library_made_again,
    library_version_follows_writes,
    library_loads_follow_asset_changes,
    publication_changes_library_counts_and_versions,
    library_writes_place_existing_assets_only,
    delete_racing_library_write_is_consistent,
    libraries_are_found_by_slug,
    published_holders_say_how_an_asset_is_sold,
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
    /// The cases of [`PassStore`]: records, lists, revocation, spending
    /// (exact under concurrency), passes going with their library.
    PASS_CASES:
    passes_round_trip_and_list_newest_first,
    passes_need_their_library_and_fresh_ids,
    revoking_keeps_the_first_time,
    spending_counts_up_to_the_limit_and_only_live_passes,
    concurrent_spends_never_pass_the_limit,
    a_deleted_library_takes_its_passes,
);

suite!(
    /// The cases of [`EventStore`]: one event per change, made in the same
    /// atomic change, none for a refused write; filters; a feed that gives each event once
    /// to a reader following it while writes land; retention.
    EVENT_CASES:
    every_change_appends_one_event,
    a_reader_following_the_feed_sees_each_concurrent_write_once,
    old_events_are_purged,
    cursors_the_log_never_handed_out_are_refused,
    events_keep_their_workspace_and_the_feed_filters_by_it,
);

suite!(
    /// The cases of [`WebhookStore`]: records and their events, paging,
    /// streams leased to one holder and advanced with their deliveries, claims that lease (never one delivery to two
    /// claimers at once), attempts recorded, failing webhooks disabled, purges.
    WEBHOOK_CASES:
    webhooks_round_trip_change_and_delete_with_their_events,
    streams_are_leased_to_one_holder_and_advance_with_their_deliveries,
    claims_lease_due_deliveries_of_enabled_webhooks,
    attempts_are_recorded_and_failing_webhooks_disabled,
    old_deliveries_are_purged,
);

suite!(
    /// The cases of [`UploadStore`]: records, leases held by one holder
    /// at a time (one of many at once), saves by the holder only, expiry.
    UPLOAD_CASES:
    uploads_round_trip_and_only_their_holder_saves,
    one_of_many_concurrent_leases_is_taken,
    expired_uploads_are_listed_unless_held,
);

suite!(
    /// The cases of workspaces across [`Store`]'s traits: the workspace of assets and keys,
    /// lists filtered by it, slugs unique per workspace, moves of assets between workspaces.
    WORKSPACE_CASES:
    assets_keep_their_workspace_and_lists_filter_by_it,
    asset_slugs_are_unique_per_workspace,
    library_slugs_are_unique_per_workspace,
    keys_keep_their_workspace,
    an_asset_moves_with_its_slug_or_the_first_free_one,
    a_move_waits_for_the_libraries_that_hold_the_asset,
    a_library_write_racing_a_move_is_consistent,
);

#[cfg(feature = "search")]
suite!(
    /// The cases of [`SearchStore`](crate::store::SearchStore) (feature `search`; not in
    /// [`SUITES`], [`run_all`] runs them when the store hands one out that names no language):
    /// kept text, ranked hits by the rules of [`crate::search`], words not stemmed, filters,
    /// who sees drafts and paid text, paging, and hits that follow every write.
    SEARCH_CASES:
    text_is_kept_per_asset_and_replaced,
    hits_rank_by_their_best_fields_then_newest,
    matching_ignores_case_and_accents_and_the_last_word_is_a_prefix,
    words_are_not_stemmed_without_a_language,
    filters_drafts_and_paid_text,
    pages_of_hits_never_repeat_or_skip,
    hits_follow_every_write,
);

#[cfg(feature = "search")]
suite!(
    /// The cases of a [`SearchStore`](crate::store::SearchStore) that stems in English
    /// (`language()` is `Some(Language::English)`; [`run_all`] runs them, not
    /// [`SEARCH_CASES`], on such a store): every form of a word finds the others in each
    /// field, phrases stem by stem, the last word as the beginning of a stem, exclusions of
    /// every form, and hits that follow every write.
    STEMMING_CASES:
    every_form_of_a_word_finds_the_others,
    phrases_prefixes_and_exclusions_match_stem_by_stem,
    stemmed_hits_follow_every_write,
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
    ("PassStore", PASS_CASES),
    ("EventStore", EVENT_CASES),
    ("WebhookStore", WEBHOOK_CASES),
    ("UploadStore", UPLOAD_CASES),
    ("Workspaces", WORKSPACE_CASES),
    ("Store", SHARED_CASES),
];

/// Runs the suites of [`Store`]'s four traits and of each capability's trait the store
/// hands out ([`crate::MetaStore::pass_store`], ...), each case on a fresh store from
/// `make`. Panics naming the first failing case.
pub async fn run_all<S, G, F, Fut>(mut make: F)
where
    S: Store,
    F: FnMut() -> Fut,
    Fut: Future<Output = (S, G)>,
{
    let (store, guard) = make().await;
    let probe: &dyn Store = &store;
    let kept = |name: &str| match name {
        "PassStore" => probe.keeps(Capability::Passes),
        "EventStore" => probe.keeps(Capability::Events),
        "WebhookStore" => probe.keeps(Capability::Webhooks),
        "UploadStore" => probe.keeps(Capability::Uploads),
        _ => true,
    };
    #[allow(unused_mut)]
    let mut suites: Vec<&[Case]> = SUITES
        .iter()
        .filter(|(n, _)| kept(n))
        .map(|s| s.1)
        .collect();
    #[cfg(feature = "search")]
    match probe.search_store().map(|s| s.language()) {
        Some(None) => suites.push(SEARCH_CASES),
        Some(Some(crate::search::Language::English)) => suites.push(STEMMING_CASES),
        _ => {}
    }
    #[cfg(feature = "transfer")]
    let moves = probe.transfer_store().is_some();
    drop((store, guard));
    for cases in suites {
        run_cases(cases, &mut make).await;
    }
    #[cfg(feature = "transfer")]
    transfer::run_when(moves, &mut make).await;
}

/// The store's [`PassStore`], which the cases of [`PASS_CASES`] need.
fn pass_store(store: &Arc<dyn Store>) -> &dyn PassStore {
    store
        .pass_store()
        .expect("the store hands out its PassStore")
}

/// The store's [`EventStore`], which the cases of [`EVENT_CASES`] need.
fn event_store(store: &Arc<dyn Store>) -> &dyn EventStore {
    store
        .event_store()
        .expect("the store hands out its EventStore")
}

/// The store's [`WebhookStore`], which the cases of [`WEBHOOK_CASES`] need.
fn webhook_store(store: &Arc<dyn Store>) -> &dyn WebhookStore {
    store
        .webhook_store()
        .expect("the store hands out its WebhookStore")
}

/// The store's [`UploadStore`], which the cases of [`UPLOAD_CASES`] need.
fn upload_store(store: &Arc<dyn Store>) -> &dyn UploadStore {
    store
        .upload_store()
        .expect("the store hands out its UploadStore")
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

/// The ids of the libraries `store` finds by `slug` ([`Store::libraries_by_slug`]), one per
/// workspace. Panics when the lookup fails.
pub async fn slug_ids(store: &dyn Store, slug: &str) -> Vec<Uuid> {
    store
        .libraries_by_slug(slug)
        .await
        .expect("libraries_by_slug")
        .into_iter()
        .map(|h| h.id)
        .collect()
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
        thumbnail_placeholder: None,
        page_count: None,
        word_count: None,
        width: None,
        height: None,
        media: crate::model::Media::default(),
        external_url: None,
        video_embed: None,
        download_count: 0,
        is_public: false,
        published: true,
        tags: Vec::new(),
        checksum_sha256: None,
        created_at: at,
        updated_at: at,
        workspace_id: None,
    }
}

/// The entries of `library` in `store`, in display order: each one's asset and the copy of
/// it the library's page shows. Panics when the library is missing or the load fails.
pub async fn entry_copies(store: &dyn Store, library: Uuid) -> Vec<(Uuid, EntryAsset)> {
    store
        .load_library(library)
        .await
        .expect("load_library")
        .expect("library exists")
        .entries
        .into_iter()
        .map(|row| (row.entry.asset_id, row.asset))
        .collect()
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

/// A task writing `library` with `asset` as its one entry: what races another write.
fn spawn_library_write(
    store: &Arc<dyn Store>,
    library: &Library,
    asset: &Asset,
) -> tokio::task::JoinHandle<Result<PutOutcome, StoreError>> {
    let (store, library) = (store.clone(), library.clone());
    let entries = vec![entry(asset, None, 0)];
    tokio::spawn(async move {
        store
            .put_library(write(library, vec![], entries), Log::ANONYMOUS)
            .await
    })
}

async fn insert(store: &Arc<dyn Store>, asset: Asset) -> Asset {
    store
        .insert_asset(asset, Log::ANONYMOUS)
        .await
        .expect("insert_asset")
}

/// Deletes asset `id` (with `force`) and returns it as it went; panics unless it was deleted.
async fn force_delete(store: &Arc<dyn Store>, id: Uuid) -> Asset {
    match store
        .delete_asset(id, true, Log::ANONYMOUS)
        .await
        .expect("delete_asset")
    {
        crate::change::AssetDeletion::Deleted(asset) => asset,
        other => panic!("asset {id} was not deleted: {other:?}"),
    }
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
