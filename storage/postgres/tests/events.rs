//! The event log on PostgreSQL beyond core's conformance cases: a transaction that started
//! first but commits last is not skipped by a reader that read in between.

use assetlib_core::AssetType;
use assetlib_core::events::{EventCursor, EventQuery, EventType};
use assetlib_core::store::prelude::*;
use assetlib_core::testing::sample_asset;
use uuid::Uuid;

use crate::common::{raw_client, store};

/// Every event after `after` (pages of 100), and where the feed then stands.
async fn read_from(
    store: &assetlib_postgres::PgStore,
    after: EventCursor,
) -> (Vec<(EventType, Uuid)>, EventCursor) {
    let mut query = EventQuery {
        after,
        kind: None,
        resource: None,
        workspace: None,
        limit: 100,
    };
    let mut seen = Vec::new();
    loop {
        let page = store.list_events(&query).await.expect("list_events");
        if page.events.is_empty() {
            return (seen, page.next);
        }
        seen.extend(page.events.iter().map(|e| (e.kind, e.resource_id)));
        query.after = page.next;
    }
}

/// [`read_from`] until it has given `want` events, or 10 s passed: the feed also holds events
/// back while transactions of other tests sharing the server run.
async fn read_until(
    store: &assetlib_postgres::PgStore,
    after: EventCursor,
    want: usize,
) -> Vec<(EventType, Uuid)> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let (mut seen, mut next) = read_from(store, after).await;
    while seen.len() < want && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let (more, last) = read_from(store, next).await;
        seen.extend(more);
        next = last;
    }
    seen
}

/// Transaction A starts and writes its event first (its `xid` and sequence number are taken);
/// then the store writes an asset (transaction B), which commits at once. A reader now must
/// not be shown B's event: A may still commit with a place before it. Once A commits, the
/// reader that follows `next` gets A's event and then B's, each once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_committing_after_a_later_one_is_not_skipped() {
    let (store, db) = store().await;
    let (_, start) = read_from(&store, EventCursor::START).await;

    let (mut raw, conn) = raw_client(db.url()).await;
    let a = raw.transaction().await.expect("begin A");
    let a_resource = Uuid::new_v4();
    a.execute(
        "INSERT INTO assetlib.events (id, type, occurred_at, resource_type, resource_id, changed) \
         VALUES ($1, 'asset.deleted', now(), 'asset', $2, '{}')",
        &[&Uuid::new_v4(), &a_resource],
    )
    .await
    .expect("A writes its event");

    let b = store
        .insert_asset(
            sample_asset("Committed first", AssetType::Image, 0),
            Log::ANONYMOUS,
        )
        .await
        .expect("B");
    let (while_open, cursor) = read_from(&store, start).await;
    assert!(
        while_open.is_empty(),
        "B's event waits for A, which started before it: {while_open:?}"
    );

    a.commit().await.expect("commit A");
    let after_commit = read_until(&store, cursor, 2).await;
    assert_eq!(
        after_commit,
        vec![
            (EventType::AssetDeleted, a_resource),
            (EventType::AssetCreated, b.id)
        ],
        "A's event, then B's, each once"
    );
    drop(raw);
    conn.abort();
}

/// A rolled-back transaction leaves no event and holds nothing back once it ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolled_back_transaction_leaves_no_event() {
    let (store, db) = store().await;
    let (_, start) = read_from(&store, EventCursor::START).await;
    let (mut raw, conn) = raw_client(db.url()).await;
    let a = raw.transaction().await.expect("begin");
    a.execute(
        "INSERT INTO assetlib.events (id, type, occurred_at, resource_type, resource_id, changed) \
         VALUES ($1, 'asset.deleted', now(), 'asset', $2, '{}')",
        &[&Uuid::new_v4(), &Uuid::new_v4()],
    )
    .await
    .expect("write");
    let b = store
        .insert_asset(sample_asset("After", AssetType::Image, 0), Log::ANONYMOUS)
        .await
        .expect("B");
    a.rollback().await.expect("rollback");
    let seen = read_until(&store, start, 1).await;
    assert_eq!(seen, vec![(EventType::AssetCreated, b.id)]);
    drop(raw);
    conn.abort();
}
