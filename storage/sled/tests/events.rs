//! The event log of a sled store beyond core's conformance cases: places in the log never go
//! back behind a reader, after a refused write, a purge, or a restart.

use assetlib_core::AssetType;
use assetlib_core::events::{EventCursor, EventQuery};
use assetlib_core::store::prelude::*;
use assetlib_core::testing::sample_asset;
use assetlib_sled::SledStore;

async fn all_after(store: &SledStore, after: EventCursor) -> (Vec<uuid::Uuid>, EventCursor) {
    let page = store
        .list_events(&EventQuery {
            after,
            kind: None,
            resource: None,
            workspace: None,
            limit: 1000,
        })
        .await
        .expect("list_events");
    (
        page.events.iter().map(|e| e.resource_id).collect(),
        page.next,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_misses_nothing_after_a_purge_and_a_reopen() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    let store = SledStore::open(&path).expect("open");
    for n in 0..3 {
        let title = format!("Old {n}");
        store
            .insert_asset(sample_asset(&title, AssetType::Image, n), Log::ANONYMOUS)
            .await
            .expect("insert");
    }
    let (seen, cursor) = all_after(&store, EventCursor::START).await;
    assert_eq!(seen.len(), 3);
    // Every event is past its retention.
    let later = chrono::Utc::now() + chrono::Duration::seconds(1);
    assert_eq!(store.purge_events(later).await.expect("purge"), 3);
    drop(store);

    let store = SledStore::open(&path).expect("open again");
    let new = store
        .insert_asset(sample_asset("New", AssetType::Image, 9), Log::ANONYMOUS)
        .await
        .expect("insert");
    let (seen, _) = all_after(&store, cursor).await;
    assert_eq!(seen, vec![new.id], "the reader gets the new event");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_write_before_a_restart_hides_no_later_event() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    let store = SledStore::open(&path).expect("open");
    let asset = store
        .insert_asset(sample_asset("First", AssetType::Image, 0), Log::ANONYMOUS)
        .await
        .expect("insert");
    // Refused (the id is taken): its place in the log stays empty.
    assert!(
        store
            .insert_asset(asset.clone(), Log::ANONYMOUS)
            .await
            .is_err()
    );
    let (seen, cursor) = all_after(&store, EventCursor::START).await;
    assert_eq!(seen, vec![asset.id]);
    drop(store);

    let store = SledStore::open(&path).expect("open again");
    let new = store
        .insert_asset(sample_asset("Second", AssetType::Image, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    let (seen, _) = all_after(&store, cursor).await;
    assert_eq!(seen, vec![new.id], "the reader gets the new event");
}
