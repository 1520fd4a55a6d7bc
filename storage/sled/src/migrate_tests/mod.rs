//! The upgrades: from format 1, a directory written key by key in format 1's layout, opened;
//! from format 2 (in `v2`), a directory whose entries are stored as format 2 stored them,
//! opened; from format 3 (in `v3`), a directory whose keys know format 3's scopes only,
//! opened; from format 4 (in `v4`), a directory whose asset records and entry copies have no
//! preview fields, opened; from format 6 (in `v6`), one whose records have no workspace;
//! from format 7 (in `v7`), one whose webhooks and events have none.
//! The helpers here serve them all.

use assetlib_core::store::prelude::*;
use std::path::Path;

use assetlib_core::testing::{entry_copies, sample_asset_at, sample_library};
use assetlib_core::{
    AssetChange, AssetDeletion, AssetQuery, AssetSort, AssetStatus, AssetType, EntryAsset, Library,
    LibraryEntry, LibraryQuery, LibraryUse, LibraryWrite, Section, SortOrder,
};
use chrono::{DateTime, TimeZone, Utc};
use uuid::Uuid;

use crate::record::{AssetRec, ItemRec, LibraryRec, decode, encode};
use crate::tree_keys::{self, type_code};
use crate::{FORMAT_KEY, SledStore};

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + secs, 0)
        .single()
        .expect("valid time")
}

fn id(n: u8) -> Uuid {
    Uuid::from_bytes([n; 16])
}

const P1: u8 = 1;
const P2: u8 = 2;
const DRAFT: u8 = 3;
/// Inserted after library A placed its id, so A's stored count left it out.
const LATE: u8 = 4;
/// Never stored; library A has an entry of it.
const GHOST: u8 = 5;
const LIB_A: u8 = 10;
const LIB_B: u8 = 11;
const SECTION: u8 = 20;

/// Cuts the last field (`None`, one zero byte) from every record of the trees `trees` of
/// `db`, as an older format wrote them; how many records were cut.
pub(crate) fn cut_trailing_none(db: &sled::Db, trees: &[&str]) -> usize {
    let mut cut = 0;
    for tree in trees {
        let tree = db.open_tree(tree).expect("tree");
        for kv in tree.iter() {
            let (key, value) = kv.expect("record");
            assert_eq!(
                value.last(),
                Some(&0),
                "a record of no workspace ends with None"
            );
            tree.insert(key, &value[..value.len() - 1]).expect("write");
            cut += 1;
        }
    }
    cut
}

/// Opens the raw sled database at `path`, waiting while a dropped handle's threads still
/// hold its lock.
pub(crate) fn raw(path: &Path) -> sled::Db {
    for _ in 0..200 {
        match sled::open(path) {
            Ok(db) => return db,
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    }
    sled::open(path).expect("raw open")
}

fn open(path: &Path) -> SledStore {
    for _ in 0..200 {
        match SledStore::open(path) {
            Err(crate::OpenError::Locked { .. }) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other.expect("open"),
        }
    }
    SledStore::open(path).expect("open")
}

/// A store at `path` holding `assets` and `library`, which places them in this order (no
/// sections), closed again.
async fn store_shelf(path: &Path, assets: &[&assetlib_core::Asset], library: &Library) {
    let store = open(path);
    for a in assets {
        store
            .insert_asset((*a).clone(), Log::ANONYMOUS)
            .await
            .expect("insert asset");
    }
    let entries = assets
        .iter()
        .enumerate()
        .map(|(i, a)| LibraryEntry {
            asset_id: a.id,
            section_id: None,
            display_order: u32::try_from(i).expect("small"),
            title: None,
            description: None,
        })
        .collect();
    store
        .put_library(
            LibraryWrite {
                library: library.clone(),
                slug_given: false,
                sections: vec![],
                entries,
            },
            Log::ANONYMOUS,
        )
        .await
        .expect("put");
}

/// Format 1's index keys of a published asset: scope 0 and `1 + type code`, per sort tree.
fn v1_index(db: &sled::Db, asset: &assetlib_core::Asset, insert: bool) {
    for (name, sort) in [
        ("asset_idx_created", AssetSort::CreatedAt),
        ("asset_idx_updated", AssetSort::UpdatedAt),
        ("asset_idx_title", AssetSort::Title),
    ] {
        let tree = db.open_tree(name).expect("tree");
        for scope in [0, 1 + type_code(asset.asset_type)] {
            let key = tree_keys::asset_index(
                scope,
                sort,
                asset.id,
                &asset.created_at,
                &asset.updated_at,
                &asset.title,
            );
            if insert {
                tree.insert(key, &[][..]).expect("index key");
            } else {
                tree.remove(key).expect("index key");
            }
        }
    }
}

fn assets() -> Vec<assetlib_core::Asset> {
    let mut out = Vec::new();
    for (n, title, asset_type, published) in [
        (P1, "Alpha", AssetType::Pdf, true),
        (P2, "beta", AssetType::Image, true),
        (DRAFT, "Gamma draft", AssetType::Pdf, false),
        (LATE, "Late", AssetType::Pdf, true),
    ] {
        let mut a = sample_asset_at(title, asset_type, at(i64::from(n)));
        a.id = id(n);
        a.published = published;
        out.push(a);
    }
    out
}

fn library(n: u8, title: &str, published: bool, secs: i64) -> Library {
    let mut l = sample_library(title, 0);
    l.id = id(n);
    l.settings.published = published;
    l.settings.workspace_id = published.then(|| "ws".to_owned());
    l.created_at = at(secs);
    l.updated_at = at(secs);
    l.published_at = published.then(|| at(secs));
    l
}

/// An entry as formats 1 and 2 stored it.
fn entry(asset: u8, section: Option<u8>, order: u32) -> ItemRec {
    ItemRec::BareEntry {
        asset_id: [asset; 16],
        section_id: section.map(|s| [s; 16]),
        display_order: order,
        title: None,
        description: None,
    }
}

/// Writes a database as format 1 left it.
fn write_v1(path: &Path) {
    let db = raw(path);
    let tree = |name: &str| db.open_tree(name).expect("tree");
    tree("meta")
        .insert(FORMAT_KEY, &1u32.to_be_bytes())
        .expect("format");
    let (records, slugs, counters) = (tree("assets"), tree("asset_slugs"), tree("counters"));
    for a in assets() {
        records
            .insert(
                a.id.as_bytes(),
                encode(AssetRec::WHAT, &AssetRec::new(&a)).expect("rec"),
            )
            .expect("asset");
        slugs
            .insert(tree_keys::asset_slug(None, &a.slug), a.id.as_bytes())
            .expect("slug");
        let downloads: u64 = if a.id == id(P1) { 3 } else { 0 };
        counters
            .insert(tree_keys::downloads(a.id), &downloads.to_be_bytes())
            .expect("counter");
        if a.published {
            v1_index(&db, &a, true);
        }
    }
    let counts = tree("counts");
    for (key, n) in [
        (vec![0], 3u64),
        (vec![1, type_code(AssetType::Pdf)], 2),
        (vec![1, type_code(AssetType::Image)], 1),
        (vec![2], 1),
        (tree_keys::count_workspace("ws"), 1),
    ] {
        counts.insert(key, &n.to_be_bytes()).expect("count");
    }

    // Library A: published, in a workspace; its count (2) was taken while LATE was missing.
    let a = library(LIB_A, "Kit", true, 10);
    let items = [
        ItemRec::Section {
            id: [SECTION; 16],
            title: "S".into(),
            description: None,
            display_order: 0,
            collapsed_by_default: false,
        },
        entry(P1, Some(SECTION), 0),
        entry(DRAFT, None, 0),
        entry(LATE, None, 1),
        entry(GHOST, None, 2),
        entry(P2, None, 3),
    ];
    // Library B: a draft holding P2.
    let b = library(LIB_B, "Draft kit", false, 20);
    let libraries = tree("libraries");
    let library_items = tree("library_items");
    for (lib, generation, items, count, views) in [
        (&a, 7u64, &items[..], 2u64, 4u64),
        (&b, 9, &[entry(P2, None, 0)][..], 1, 0),
    ] {
        let rec = LibraryRec::new(lib, generation, items.len() as u32, count);
        libraries
            .insert(
                lib.id.as_bytes(),
                encode(LibraryRec::WHAT, &rec).expect("rec"),
            )
            .expect("library");
        for (position, item) in (0u32..).zip(items) {
            library_items
                .insert(
                    tree_keys::item(lib.id, generation, position),
                    encode(ItemRec::WHAT, item).expect("item"),
                )
                .expect("item");
        }
        tree("library_slugs")
            .insert(lib.slug.as_bytes(), lib.id.as_bytes())
            .expect("slug");
        counters
            .insert(tree_keys::views(lib.id), &views.to_be_bytes())
            .expect("views");
    }
    tree("library_idx_published")
        .insert(tree_keys::library_published(&at(10), a.id), &[][..])
        .expect("index");
    tree("library_idx_workspace")
        .insert(tree_keys::library_workspace("ws", &at(10), a.id), &[][..])
        .expect("index");
    // The sequence, the asset epoch and each library's own version.
    let versions = tree("versions");
    for (key, v) in [
        (b"n".to_vec(), 7u64),
        (b"a".to_vec(), 7),
        (crate::versions::library(a.id).to_vec(), 5),
        (crate::versions::library(b.id).to_vec(), 6),
    ] {
        versions.insert(key, &v.to_be_bytes()).expect("version");
    }
    db.flush().expect("flush");
}

async fn ids(store: &SledStore, query: AssetQuery) -> (Vec<Uuid>, u64) {
    let page = store.list_assets(&query).await.expect("list");
    (page.items.into_iter().map(|a| a.id).collect(), page.total)
}

fn listing(status: AssetStatus, asset_type: Option<AssetType>) -> AssetQuery {
    AssetQuery {
        status,
        asset_type,
        sort: AssetSort::CreatedAt,
        order: SortOrder::Asc,
        ..AssetQuery::default()
    }
}

fn users(store_ids: &[u8]) -> Vec<Uuid> {
    store_ids.iter().map(|&n| id(n)).collect()
}

fn use_ids(uses: Vec<LibraryUse>) -> Vec<Uuid> {
    uses.into_iter().map(|u| u.id).collect()
}

async fn check_v1_data(store: &SledStore) {
    let integrity = store.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
    assert_eq!((integrity.published_assets, integrity.draft_assets), (3, 1));
    assert_eq!(
        ids(store, listing(AssetStatus::Published, None)).await,
        (users(&[P1, P2, LATE]), 3)
    );
    assert_eq!(
        ids(store, listing(AssetStatus::Draft, None)).await,
        (users(&[DRAFT]), 1)
    );
    assert_eq!(
        ids(store, listing(AssetStatus::Any, None)).await,
        (users(&[P1, P2, DRAFT, LATE]), 4)
    );
    assert_eq!(
        ids(store, listing(AssetStatus::Any, Some(AssetType::Pdf))).await,
        (users(&[P1, DRAFT, LATE]), 3)
    );
    let mut search = listing(AssetStatus::Draft, None);
    search.search = Some("GAMMA".into());
    assert_eq!(ids(store, search).await, (users(&[DRAFT]), 1));

    assert_eq!(
        use_ids(store.asset_usage(id(P2)).await.expect("usage")),
        users(&[LIB_B, LIB_A])
    );
    assert_eq!(
        use_ids(store.asset_usage(id(LATE)).await.expect("usage")),
        users(&[LIB_A])
    );
    assert!(
        store
            .asset_usage(id(GHOST))
            .await
            .expect("usage")
            .is_empty()
    );

    let libraries = store
        .list_libraries(&LibraryQuery::default())
        .await
        .expect("list libraries");
    assert_eq!(libraries.total, 1);
    assert_eq!(
        libraries.items[0].asset_count, 3,
        "recounted: P1, LATE and P2"
    );
    let rows = store
        .load_library(id(LIB_A))
        .await
        .expect("load")
        .expect("library");
    let mut held: Vec<Uuid> = rows.entries.iter().map(|e| e.entry.asset_id).collect();
    held.sort();
    assert_eq!(
        held,
        users(&[P1, P2, DRAFT, LATE]),
        "the ghost's entry is gone"
    );
    assert_eq!(rows.sections.len(), 1);
    assert_eq!(
        store
            .get_asset(id(P1))
            .await
            .expect("get")
            .expect("asset")
            .download_count,
        3
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_format_1_directory_is_upgraded_on_open() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    write_v1(&path);

    let store = open(&path);
    check_v1_data(&store).await;
    let view = store
        .record_library_view(id(LIB_A))
        .await
        .expect("view")
        .expect("published");
    assert_eq!((view.views, view.version), (5, 7), "the epoch is folded in");

    // The lifecycle works on the upgraded data.
    let mut publish = AssetChange::at(at(100));
    publish.published = Some(true);
    store
        .update_asset(id(DRAFT), &publish, Log::ANONYMOUS)
        .await
        .expect("update")
        .expect("asset");
    let libraries = store
        .list_libraries(&LibraryQuery::default())
        .await
        .expect("list libraries");
    assert_eq!(libraries.items[0].asset_count, 4);
    let after = store
        .record_library_view(id(LIB_A))
        .await
        .expect("view")
        .expect("published");
    assert!(after.version > view.version);
    match store
        .delete_asset(id(P2), false, Log::ANONYMOUS)
        .await
        .expect("delete")
    {
        AssetDeletion::InUse(by) => assert_eq!(use_ids(by), users(&[LIB_B, LIB_A])),
        other => panic!("expected InUse, got {other:?}"),
    }
    assert!(matches!(
        store
            .delete_asset(id(P2), true, Log::ANONYMOUS)
            .await
            .expect("delete"),
        AssetDeletion::Deleted(_)
    ));
    let rows = store
        .load_library(id(LIB_B))
        .await
        .expect("load")
        .expect("library");
    assert!(rows.entries.is_empty());
    let integrity = store.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_upgrade_runs_again_cleanly() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    write_v1(&path);
    drop(open(&path));

    // As if the upgrade had not recorded its end, and format 1 had then renamed P1 (moving
    // only the keys it knew) and advanced its asset epoch.
    {
        let db = raw(&path);
        let meta = db.open_tree("meta").expect("meta");
        assert_eq!(
            meta.get(FORMAT_KEY).expect("read").as_deref(),
            Some(&crate::FORMAT_VERSION.to_be_bytes()[..])
        );
        meta.insert(FORMAT_KEY, &1u32.to_be_bytes())
            .expect("format");
        let old = assets().remove(0);
        let mut renamed = old.clone();
        renamed.title = "Zulu".into();
        renamed.updated_at = at(50);
        v1_index(&db, &old, false);
        v1_index(&db, &renamed, true);
        db.open_tree("assets")
            .expect("assets")
            .insert(
                old.id.as_bytes(),
                encode(AssetRec::WHAT, &AssetRec::new(&renamed)).expect("rec"),
            )
            .expect("asset");
        let versions = db.open_tree("versions").expect("versions");
        for key in [b"n", b"a"] {
            versions
                .insert(key, &100u64.to_be_bytes())
                .expect("version");
        }
        db.flush().expect("flush");
    }

    let store = open(&path);
    check_v1_data(&store).await;
    let by_title = AssetQuery {
        status: AssetStatus::Any,
        sort: AssetSort::Title,
        order: SortOrder::Asc,
        ..AssetQuery::default()
    };
    let titles: Vec<String> = store
        .list_assets(&by_title)
        .await
        .expect("list")
        .items
        .into_iter()
        .map(|a| a.title)
        .collect();
    assert_eq!(titles, ["beta", "Gamma draft", "Late", "Zulu"]);
    let view = store
        .record_library_view(id(LIB_A))
        .await
        .expect("view")
        .expect("published");
    assert_eq!(view.version, 100);
}

mod v2;
mod v3;
mod v4;
mod v5;
mod v6;
mod v7;
