//! Library replaces on PostgreSQL beyond core's conformance cases: a replace writes only the
//! section and entry rows that differ from the stored ones (their row versions, `xmin`, show
//! which rows a transaction wrote).

use assetlib_core::store::prelude::*;
use assetlib_core::testing::{sample_asset, sample_library};
use assetlib_core::{AssetType, LibraryEntry, LibraryWrite, Section};
use tokio_postgres::Client;
use uuid::Uuid;

use crate::common::{raw_client, store};

/// The transaction that last wrote each section and entry row of library `id`, by the row's
/// id (a section's id, an entry's asset id).
async fn writers(client: &Client, id: Uuid) -> Vec<(Uuid, String)> {
    let sql = "SELECT id, xmin::text FROM assetlib.library_sections WHERE library_id = $1 \
               UNION ALL \
               SELECT asset_id, xmin::text FROM assetlib.library_entries WHERE library_id = $1 \
               ORDER BY 1";
    client
        .query(sql, &[&id])
        .await
        .expect("row versions")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replace_writes_only_the_rows_that_differ() {
    let (store, db) = store().await;
    let (client, _conn) = raw_client(db.url()).await;
    let mut assets = Vec::new();
    for n in 0..4 {
        let asset = sample_asset(&format!("Asset {n}"), AssetType::Pdf, n);
        assets.push(
            store
                .insert_asset(asset, Log::ANONYMOUS)
                .await
                .expect("insert"),
        );
    }
    let mut library = sample_library("Kit", 1);
    let section = Section {
        id: Uuid::new_v4(),
        title: "Part".into(),
        description: None,
        display_order: 0,
        collapsed_by_default: false,
    };
    let entry = |n: usize, order: u32| LibraryEntry {
        asset_id: assets[n].id,
        section_id: n.is_multiple_of(2).then_some(section.id),
        display_order: order,
        title: None,
        description: None,
    };
    let put = |library: &assetlib_core::Library, entries: Vec<LibraryEntry>| LibraryWrite {
        library: library.clone(),
        slug_given: false,
        sections: vec![section.clone()],
        entries,
    };
    let entries: Vec<_> = (0..3).map(|n| entry(n, n as u32)).collect();
    store
        .put_library(put(&library, entries.clone()), Log::ANONYMOUS)
        .await
        .expect("create");
    let first = writers(&client, library.id).await;
    assert_eq!(first.len(), 4, "one section and three entries");

    // New settings, the same sections and entries: no row is written again.
    library.settings.title = "Kit, renamed".into();
    library.settings.description = Some("Now described".into());
    store
        .put_library(put(&library, entries.clone()), Log::ANONYMOUS)
        .await
        .expect("replace the settings");
    assert_eq!(writers(&client, library.id).await, first);
    let rows = store
        .load_library(library.id)
        .await
        .expect("load")
        .expect("there");
    assert_eq!(rows.library.settings.title, "Kit, renamed");
    assert_eq!(rows.entries.len(), 3);

    // One entry moved, one added, one gone: only those rows change.
    let changed = vec![entry(0, 0), entry(1, 7), entry(3, 2)];
    store
        .put_library(put(&library, changed), Log::ANONYMOUS)
        .await
        .expect("replace the entries");
    let now = writers(&client, library.id).await;
    let of = |rows: &[(Uuid, String)], id: Uuid| {
        rows.iter()
            .find(|(row, _)| *row == id)
            .map(|(_, x)| x.clone())
    };
    assert_eq!(
        of(&now, section.id),
        of(&first, section.id),
        "the section is as it was"
    );
    assert_eq!(
        of(&now, assets[0].id),
        of(&first, assets[0].id),
        "entry 0 is as it was"
    );
    assert_ne!(
        of(&now, assets[1].id),
        of(&first, assets[1].id),
        "entry 1 moved"
    );
    assert_eq!(of(&now, assets[2].id), None, "entry 2 is gone");
    assert!(of(&now, assets[3].id).is_some(), "entry 3 is new");
    let rows = store
        .load_library(library.id)
        .await
        .expect("load")
        .expect("there");
    let mut placed: Vec<_> = rows
        .entries
        .iter()
        .map(|r| (r.entry.asset_id, r.entry.display_order))
        .collect();
    placed.sort();
    let mut want = vec![(assets[0].id, 0), (assets[1].id, 7), (assets[3].id, 2)];
    want.sort();
    assert_eq!(placed, want);
    assert!(
        store
            .asset_usage(assets[2].id)
            .await
            .expect("usage")
            .is_empty()
    );
}
