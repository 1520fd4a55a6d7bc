//! Conformance cases of organizing assets: tags (lists, filters, counts, entry copies),
//! checksums, and bulk changes that land whole or not at all.

use std::sync::Arc;

use chrono::Duration;
use uuid::Uuid;

use super::{entry, insert, list, query, sample_asset, sample_library, t0, write};
use crate::change::{AssetChange, BulkOutcome, BulkRefusal, ChangeRefused, TagChange};
use crate::events::{EventCursor, EventQuery, EventType, Log};
use crate::model::{Asset, AssetType, TagCount};
use crate::query::{AssetQuery, AssetSort, AssetStatus, SortOrder};
use crate::store::Store;

fn tagged(title: &str, kind: AssetType, secs: i64, tags: &[&str]) -> Asset {
    let mut a = sample_asset(title, kind, secs);
    a.tags = tags.iter().map(|t| (*t).to_owned()).collect();
    a
}

fn with_tags(tags: &[&str], any: &[&str]) -> AssetQuery {
    let keys = |t: &[&str]| {
        let mut k: Vec<String> = t.iter().map(|t| crate::model::tag_key(t)).collect();
        k.sort();
        k
    };
    AssetQuery {
        tags: keys(tags),
        any_tags: keys(any),
        ..query(AssetSort::CreatedAt, SortOrder::Desc, 50)
    }
}

async fn titles(store: &Arc<dyn Store>, q: AssetQuery) -> (Vec<String>, u64) {
    let (items, total) = list(store, q).await;
    (items.into_iter().map(|a| a.title).collect(), total)
}

fn tag_change(secs: i64, change: TagChange) -> AssetChange {
    let mut c = AssetChange::at(t0() + Duration::seconds(secs));
    c.tags = Some(change);
    c
}

/// Tags round-trip in their order and spelling; `tag` keeps assets with every tag, `any_tag`
/// with one of them, compared ignoring case; every sort and page of a tag list is as the
/// unfiltered list's, and its total is exact.
pub(super) async fn tags_filter_lists_ignoring_case(store: Arc<dyn Store>) {
    let a = insert(&store, tagged("A", AssetType::Pdf, 1, &["Brand", "logo"])).await;
    insert(&store, tagged("B", AssetType::Image, 2, &["brand"])).await;
    insert(&store, tagged("C", AssetType::Image, 3, &["LOGO", "print"])).await;
    insert(&store, tagged("D", AssetType::Pdf, 4, &[])).await;
    let mut draft = tagged("E", AssetType::Pdf, 5, &["brand"]);
    draft.published = false;
    insert(&store, draft).await;

    let got = store.get_asset(a.id).await.expect("get").expect("asset");
    assert_eq!(got.tags, ["Brand", "logo"], "order and spelling kept");

    let t = |tags, any| with_tags(tags, any);
    assert_eq!(
        titles(&store, t(&["BRAND"], &[])).await,
        (vec!["B".into(), "A".into()], 2)
    );
    assert_eq!(
        titles(&store, t(&["brand", "logo"], &[])).await,
        (vec!["A".into()], 1)
    );
    assert_eq!(
        titles(&store, t(&[], &["print", "brand"])).await,
        (vec!["C".into(), "B".into(), "A".into()], 3)
    );
    assert_eq!(
        titles(&store, t(&["logo"], &["print"])).await,
        (vec!["C".into()], 1)
    );
    assert_eq!(titles(&store, t(&["none"], &[])).await, (vec![], 0));
    let drafts = AssetQuery {
        status: AssetStatus::Any,
        ..t(&["brand"], &[])
    };
    assert_eq!(titles(&store, drafts).await.1, 3);
    let typed = AssetQuery {
        asset_type: Some(AssetType::Image),
        ..t(&["logo"], &[])
    };
    assert_eq!(titles(&store, typed).await, (vec!["C".into()], 1));
    for sort in [AssetSort::CreatedAt, AssetSort::UpdatedAt, AssetSort::Title] {
        for order in [SortOrder::Asc, SortOrder::Desc] {
            let mut q = t(&["brand"], &[]);
            q.sort = sort;
            q.order = order;
            q.per_page = 1;
            let mut seen = Vec::new();
            for page in 1..=3 {
                q.page = page;
                let (page, total) = titles(&store, q.clone()).await;
                assert_eq!(total, 2, "{sort:?} {order:?}");
                seen.extend(page);
            }
            let want = if order == SortOrder::Asc {
                ["A", "B"]
            } else {
                ["B", "A"]
            };
            assert_eq!(seen, want, "{sort:?} {order:?}");
        }
    }
}

/// Tag lists and counts follow every change: tags set, added and removed, publication, type
/// and deletes; the tag counts are of published assets, most used first.
pub(super) async fn tag_counts_follow_changes(store: Arc<dyn Store>) {
    let a = insert(&store, tagged("A", AssetType::Pdf, 1, &["x", "Y"])).await;
    let b = insert(&store, tagged("B", AssetType::Pdf, 2, &["x"])).await;
    let c = insert(&store, tagged("C", AssetType::Pdf, 3, &["z"])).await;
    let counts = |pairs: &[(&str, u64)]| -> Vec<TagCount> {
        pairs
            .iter()
            .map(|(tag, count)| TagCount {
                tag: (*tag).to_owned(),
                count: *count,
            })
            .collect()
    };
    let tags = || async { store.list_tags(10).await.expect("list_tags") };
    assert_eq!(tags().await, counts(&[("x", 2), ("y", 1), ("z", 1)]));
    assert_eq!(
        store.list_tags(1).await.expect("list_tags"),
        counts(&[("x", 2)])
    );

    store
        .update_asset(
            b.id,
            &tag_change(10, TagChange::Remove(vec!["X".into()])),
            Log::ANONYMOUS,
        )
        .await
        .expect("remove");
    store
        .update_asset(
            c.id,
            &tag_change(11, TagChange::Add(vec!["y".into(), "z".into()])),
            Log::ANONYMOUS,
        )
        .await
        .expect("add");
    assert_eq!(tags().await, counts(&[("y", 2), ("x", 1), ("z", 1)]));
    assert_eq!(
        titles(&store, with_tags(&["x"], &[])).await,
        (vec!["A".into()], 1)
    );

    let mut unpublish = AssetChange::at(t0() + Duration::seconds(12));
    unpublish.published = Some(false);
    store
        .update_asset(a.id, &unpublish, Log::ANONYMOUS)
        .await
        .expect("unpublish");
    assert_eq!(tags().await, counts(&[("y", 1), ("z", 1)]));
    assert_eq!(titles(&store, with_tags(&["x"], &[])).await.1, 0);
    let drafts = AssetQuery {
        status: AssetStatus::Draft,
        ..with_tags(&["x"], &[])
    };
    assert_eq!(titles(&store, drafts).await, (vec!["A".into()], 1));

    store
        .update_asset(
            c.id,
            &tag_change(13, TagChange::Set(vec![])),
            Log::ANONYMOUS,
        )
        .await
        .expect("clear");
    store
        .delete_asset(b.id, false, Log::ANONYMOUS)
        .await
        .expect("delete");
    assert_eq!(tags().await, vec![]);
    assert_eq!(titles(&store, with_tags(&[], &["y", "z"])).await.1, 0);

    // A change that would pass 32 tags is refused and changes nothing.
    let many = (0..33).map(|i| format!("t{i}")).collect();
    let refused = store
        .update_asset(c.id, &tag_change(14, TagChange::Add(many)), Log::ANONYMOUS)
        .await;
    assert!(
        matches!(refused, Err(crate::StoreError::Refused { id, reason: ChangeRefused::TooManyTags }) if id == c.id),
        "{refused:?}"
    );
    let still = store.get_asset(c.id).await.expect("get").expect("asset");
    assert!(still.tags.is_empty());
}

/// A library's entries show their assets' tags, and follow a change of them.
pub(super) async fn entries_show_their_assets_tags(store: Arc<dyn Store>) {
    let a = insert(&store, tagged("A", AssetType::Pdf, 1, &["one"])).await;
    let lib = sample_library("Shelf", 2);
    store
        .put_library(
            write(lib.clone(), vec![], vec![entry(&a, None, 0)]),
            Log::ANONYMOUS,
        )
        .await
        .expect("put");
    let tags_of = || async {
        let rows = store
            .load_library(lib.id)
            .await
            .expect("load")
            .expect("library");
        rows.entries[0].asset.tags.clone()
    };
    assert_eq!(tags_of().await, ["one"]);
    store
        .update_asset(
            a.id,
            &tag_change(5, TagChange::Add(vec!["Two".into()])),
            Log::ANONYMOUS,
        )
        .await
        .expect("add");
    assert_eq!(tags_of().await, ["one", "Two"]);
}

/// `checksum` keeps the assets whose file has that SHA-256, in the list's order.
pub(super) async fn checksum_filter_finds_same_bytes(store: Arc<dyn Store>) {
    let with_sum = |title, secs, sum: Option<[u8; 32]>| {
        let mut a = sample_asset(title, AssetType::Pdf, secs);
        a.checksum_sha256 = sum;
        a
    };
    insert(&store, with_sum("A", 1, Some([1; 32]))).await;
    insert(&store, with_sum("B", 2, Some([2; 32]))).await;
    let mut draft = with_sum("C", 3, Some([1; 32]));
    draft.published = false;
    insert(&store, draft).await;
    insert(&store, with_sum("D", 4, None)).await;
    let q = |sum, status| AssetQuery {
        checksum: Some(sum),
        status,
        ..query(AssetSort::CreatedAt, SortOrder::Asc, 10)
    };
    assert_eq!(
        titles(&store, q([1; 32], AssetStatus::Any)).await,
        (vec!["A".into(), "C".into()], 2)
    );
    assert_eq!(
        titles(&store, q([1; 32], AssetStatus::Published)).await.1,
        1
    );
    assert_eq!(titles(&store, q([3; 32], AssetStatus::Any)).await.1, 0);
    let found = store
        .get_asset(list(&store, q([2; 32], AssetStatus::Any)).await.0[0].id)
        .await
        .expect("get")
        .expect("asset");
    assert_eq!(found.checksum_sha256, Some([2; 32]));
}

/// An atomic change of several assets changes all of them, each with its event, or none:
/// a missing asset or one that cannot take the change stops it, naming every such asset.
pub(super) async fn bulk_updates_land_whole_or_not_at_all(store: Arc<dyn Store>) {
    let a = insert(&store, tagged("A", AssetType::Pdf, 1, &["a"])).await;
    let b = insert(&store, tagged("B", AssetType::Pdf, 2, &[])).await;
    let full: Vec<String> = (0..32).map(|i| format!("t{i}")).collect();
    let c = insert(&store, {
        let mut c = sample_asset("C", AssetType::Pdf, 3);
        c.tags = full.clone();
        c
    })
    .await;
    let missing = Uuid::new_v4();
    let all_events = EventQuery {
        after: EventCursor::START,
        kind: Some(EventType::AssetUpdated),
        resource: None,
        workspace: None,
        limit: 10_000,
    };
    // The events are checked on a store that keeps a log.
    let log = store.event_store();
    let before = match log {
        Some(log) => log
            .list_events(&all_events)
            .await
            .expect("events")
            .events
            .len(),
        None => 0,
    };

    let add = tag_change(10, TagChange::Add(vec!["new".into()]));
    let refused = store
        .update_assets(&[a.id, missing, c.id, b.id], &add, Log::ANONYMOUS)
        .await
        .expect("update_assets");
    assert_eq!(
        refused,
        BulkOutcome::Refused(vec![
            (missing, BulkRefusal::NotFound),
            (c.id, BulkRefusal::Refused(ChangeRefused::TooManyTags)),
        ])
    );
    for id in [a.id, b.id] {
        let now = store.get_asset(id).await.expect("get").expect("asset");
        assert!(!now.tags.iter().any(|t| t == "new"), "nothing changed");
    }
    assert_eq!(titles(&store, with_tags(&["new"], &[])).await.1, 0);

    let done = store
        .update_assets(&[b.id, a.id], &add, Log::ANONYMOUS)
        .await
        .expect("update_assets");
    let BulkOutcome::Done(done) = done else {
        panic!("refused: {done:?}");
    };
    assert_eq!(
        done.iter().map(|u| u.after.id).collect::<Vec<_>>(),
        [b.id, a.id]
    );
    assert_eq!(done[1].after.tags, ["a", "new"]);
    assert_eq!(
        titles(&store, with_tags(&["new"], &[])).await,
        (vec!["B".into(), "A".into()], 2)
    );
    // A log may show an event only once older writes elsewhere have ended: wait a little.
    if let Some(log) = log {
        let mut seen = 0;
        for _ in 0..100 {
            seen = log
                .list_events(&all_events)
                .await
                .expect("events")
                .events
                .len()
                - before;
            if seen >= 2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(seen, 2, "one event per changed asset");
    }

    // Assets that already have the tags change nothing and log nothing.
    let again = store
        .update_assets(&[a.id], &add, Log::ANONYMOUS)
        .await
        .expect("again");
    let BulkOutcome::Done(again) = again else {
        panic!("refused");
    };
    assert_eq!(again[0].before, again[0].after);
}

/// An atomic delete of several assets deletes all of them or none: a held asset (unless
/// forced) or a missing one stops it.
pub(super) async fn bulk_deletes_land_whole_or_not_at_all(store: Arc<dyn Store>) {
    let a = insert(&store, tagged("A", AssetType::Pdf, 1, &["k"])).await;
    let b = insert(&store, tagged("B", AssetType::Pdf, 2, &["k"])).await;
    let held = insert(&store, tagged("Held", AssetType::Pdf, 3, &["k"])).await;
    let lib = sample_library("Shelf", 4);
    store
        .put_library(
            write(lib.clone(), vec![], vec![entry(&held, None, 0)]),
            Log::ANONYMOUS,
        )
        .await
        .expect("put");
    let missing = Uuid::new_v4();

    let refused = store
        .delete_assets(&[a.id, held.id, missing], false, Log::ANONYMOUS)
        .await
        .expect("delete_assets");
    let BulkOutcome::Refused(why) = refused else {
        panic!("not refused: {refused:?}");
    };
    assert_eq!(why.len(), 2);
    assert!(
        matches!(&why[0], (id, BulkRefusal::InUse(libs)) if *id == held.id && libs[0].id == lib.id)
    );
    assert_eq!(why[1], (missing, BulkRefusal::NotFound));
    assert_eq!(
        titles(&store, with_tags(&["k"], &[])).await.1,
        3,
        "nothing deleted"
    );

    let gone = store
        .delete_assets(&[held.id, a.id], true, Log::ANONYMOUS)
        .await
        .expect("delete_assets");
    let BulkOutcome::Done(gone) = gone else {
        panic!("refused: {gone:?}");
    };
    assert_eq!(
        gone.iter().map(|g| g.id).collect::<Vec<_>>(),
        [held.id, a.id]
    );
    assert_eq!(
        titles(&store, with_tags(&["k"], &[])).await,
        (vec!["B".into()], 1)
    );
    assert_eq!(store.list_tags(5).await.expect("tags")[0].count, 1);
    let rows = store
        .load_library(lib.id)
        .await
        .expect("load")
        .expect("library");
    assert!(rows.entries.is_empty(), "forced: out of its library");
    assert!(store.get_asset(b.id).await.expect("get").is_some());
}
