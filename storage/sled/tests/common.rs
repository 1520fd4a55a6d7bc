//! Builders shared by the tests.

use assetlib_core::testing::{sample_asset_at, sample_library};
use assetlib_core::{
    Asset, AssetQuery, AssetSort, AssetType, Library, LibraryEntry, LibrarySettings, LibraryWrite,
    Section, SortOrder, Store,
};
use assetlib_sled::{Durability, OpenError, SledConfig, SledStore};
use chrono::{DateTime, TimeZone, Utc};
use tempfile::TempDir;
use uuid::Uuid;

/// A fresh store in a temporary directory (durable on every write, as in production).
pub(crate) fn store() -> (SledStore, TempDir) {
    store_with(SledConfig::default())
}

/// A fresh store that leaves flushing to the background: for loading many records quickly.
pub(crate) fn fast_store() -> (SledStore, TempDir) {
    store_with(SledConfig::default().durability(Durability::Periodic { every_ms: 1000 }))
}

/// A fresh store opened with `config`.
pub(crate) fn store_with(config: SledConfig) -> (SledStore, TempDir) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = SledStore::open_with(dir.path().join("db"), config).expect("open store");
    (store, dir)
}

/// A time `secs` seconds after a fixed moment.
pub(crate) fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + secs, 0)
        .single()
        .expect("valid time")
}

/// A published asset, as the API would make it (core's test builder).
pub(crate) fn asset(title: &str, asset_type: AssetType, created: i64) -> Asset {
    sample_asset_at(title, asset_type, at(created))
}

/// A library document with `sections` sections of `per_section` entries each, and the rest
/// of `assets` unsectioned.
pub(crate) fn library(
    id: Uuid,
    title: &str,
    assets: &[Uuid],
    sections: usize,
    per_section: usize,
) -> LibraryWrite {
    let mut secs = Vec::new();
    let mut entries = Vec::new();
    let mut rest = assets.iter();
    for i in 0..sections {
        let section = Section {
            id: Uuid::new_v4(),
            title: format!("Section {i}"),
            description: None,
            display_order: i as u32,
            collapsed_by_default: i % 2 == 1,
        };
        for j in 0..per_section {
            if let Some(&asset_id) = rest.next() {
                entries.push(LibraryEntry {
                    asset_id,
                    section_id: Some(section.id),
                    display_order: j as u32,
                    title: (j % 3 == 0).then(|| format!("Custom {j}")),
                    description: None,
                });
            }
        }
        secs.push(section);
    }
    for (j, &asset_id) in rest.enumerate() {
        entries.push(LibraryEntry {
            asset_id,
            section_id: None,
            display_order: j as u32,
            title: None,
            description: Some("here".into()),
        });
    }
    let base = sample_library(title, 0);
    LibraryWrite {
        library: Library {
            id,
            settings: LibrarySettings {
                cover_overlay_color: Some("#1A2B3C".into()),
                cover_overlay_opacity: Some(0.4),
                ..base.settings.clone()
            },
            created_at: at(0),
            updated_at: at(0),
            ..base
        },
        slug_given: false,
        sections: secs,
        entries,
    }
}

/// Every query shape: each sort and order, with and without a type filter.
pub(crate) fn all_orders() -> Vec<AssetQuery> {
    let mut out = Vec::new();
    for sort in [AssetSort::CreatedAt, AssetSort::UpdatedAt, AssetSort::Title] {
        for order in [SortOrder::Asc, SortOrder::Desc] {
            out.push(AssetQuery {
                sort,
                order,
                ..AssetQuery::default()
            });
        }
    }
    out
}

/// Walks every page of `query` (page size 100) and returns the ids in order, checking that
/// each page reports the same total and that the walk finds exactly that many.
pub(crate) async fn walk(store: &impl Store, query: &AssetQuery) -> Vec<Uuid> {
    let mut ids = Vec::new();
    let mut q = AssetQuery {
        per_page: 100,
        page: 1,
        ..query.clone()
    };
    let mut total = None;
    loop {
        let page = store.list_assets(&q).await.expect("list assets");
        assert_eq!(
            *total.get_or_insert(page.total),
            page.total,
            "total changed during walk"
        );
        if page.items.is_empty() {
            break;
        }
        ids.extend(page.items.iter().map(|a| a.id));
        q.page += 1;
    }
    assert_eq!(ids.len() as u64, total.unwrap_or(0), "walk of {query:?}");
    ids
}

/// Retries `open` while it fails because the directory is still locked, with a bounded
/// backoff (about 10 s in all), and returns its first other answer, or the lock error after
/// that.
///
/// After a raw `sled::Db` is dropped, sled's own background threads can hold the directory's
/// lock for a moment longer, so an open right after it may see it locked. (A store's last
/// handle waits for that before its drop returns; a raw handle does not.) A lock that stays
/// held is still a failure.
fn retry_while_locked<T, E>(
    mut open: impl FnMut() -> Result<T, E>,
    is_locked: impl Fn(&E) -> bool,
) -> Result<T, E> {
    let mut wait = std::time::Duration::from_millis(1);
    let mut waited = std::time::Duration::ZERO;
    loop {
        match open() {
            Err(e) if is_locked(&e) && waited < std::time::Duration::from_secs(10) => {
                std::thread::sleep(wait);
                waited += wait;
                wait = (wait * 2).min(std::time::Duration::from_millis(200));
            }
            other => return other,
        }
    }
}

/// Opens the store at `path` right after a raw handle of its database was dropped: a `Locked`
/// answer is retried for a while, any other answer is returned.
pub(crate) fn open_after_raw(path: &std::path::Path) -> Result<SledStore, OpenError> {
    retry_while_locked(
        || SledStore::open(path),
        |e| matches!(e, OpenError::Locked { .. }),
    )
}

/// Opens the store at `path` again right after its previous handle was dropped, which closed
/// it: no retry.
pub(crate) fn reopen(path: &std::path::Path) -> SledStore {
    SledStore::open(path).expect("reopen right after the last handle was dropped")
}

/// Opens the store at `path` again right after a raw handle of its database was dropped.
pub(crate) fn reopen_after_raw(path: &std::path::Path) -> SledStore {
    open_after_raw(path).expect("reopen")
}

/// Opens the sled database at `path` directly after its previous handle (a store's or a raw
/// one) was dropped.
pub(crate) fn reopen_raw(path: &std::path::Path) -> sled::Db {
    retry_while_locked(
        || sled::open(path),
        |e| matches!(e, sled::Error::Io(io) if io.to_string().contains("could not acquire lock")),
    )
    .expect("raw reopen")
}
