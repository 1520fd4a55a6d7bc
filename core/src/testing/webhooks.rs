//! The cases of `WebhookStore`: webhook records and their events, streams leased to one holder
//! at a time, claims with leases, attempts and the disabling of failing webhooks.

use super::*;
use crate::events::{EventCursor, EventQuery, EventType, Log, ResourceType};
use crate::webhooks::{Delivery, EventFilter, Webhook, WebhookChange};

/// A webhook made at `t0 + secs`, enabled, for every event; of the workspace `ws{n}` for an
/// odd `n`, of none for an even one.
pub(super) fn sample_webhook(n: u8, secs: i64) -> Webhook {
    let at = t0() + Duration::seconds(secs);
    Webhook {
        id: Uuid::new_v4(),
        url: format!("https://hooks.example.com/{n}"),
        event_types: EventFilter::All,
        enabled: true,
        secret: format!("whsec_{n}"),
        created_at: at,
        updated_at: at,
        failing_since: None,
        workspace_id: (n % 2 == 1).then(|| format!("ws{n}")),
    }
}

/// A pending delivery to `webhook`, made and due at `t0 + secs`.
pub(super) fn sample_delivery(webhook: Uuid, secs: i64) -> Delivery {
    let at = t0() + Duration::seconds(secs);
    // A place no store hands out (sled and memory places are (0, n); PostgreSQL transaction
    // ids are not near 2^40 here).
    let nowhere = EventCursor(1 << 40, u64::try_from(secs).unwrap_or(0));
    Delivery::new(webhook, (Uuid::new_v4(), "asset.created", nowhere), at)
}

/// Stores `deliveries` as they are.
pub(super) async fn insert_all(store: &Arc<dyn Store>, deliveries: &[Delivery]) {
    for d in deliveries {
        webhook_store(store)
            .insert_delivery(d.clone())
            .await
            .expect("insert_delivery");
    }
}

/// The first event about resource `id` of type `kind`, once the feed shows it.
pub(super) async fn webhook_events_of(
    store: &Arc<dyn Store>,
    kind: ResourceType,
    id: Uuid,
) -> crate::events::Event {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let page = event_store(store)
            .list_events(&EventQuery {
                after: EventCursor::START,
                kind: None,
                resource: Some((kind, id)),
                workspace: None,
                limit: 1,
            })
            .await
            .expect("list_events");
        if let Some(event) = page.events.into_iter().next() {
            return event;
        }
        assert!(std::time::Instant::now() < deadline, "no event of {id}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The events about webhook `id`, as `(type, changed)`, once there are at least `want` (the
/// feed may hold an event back while a transaction that started before it runs elsewhere).
pub(super) async fn webhook_events(
    store: &Arc<dyn Store>,
    id: Uuid,
    want: usize,
) -> Vec<(EventType, Vec<String>)> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let page = event_store(store)
            .list_events(&EventQuery {
                after: EventCursor::START,
                kind: None,
                resource: Some((ResourceType::Webhook, id)),
                workspace: None,
                limit: 100,
            })
            .await
            .expect("list_events");
        if page.events.len() >= want || std::time::Instant::now() > deadline {
            return page
                .events
                .into_iter()
                .map(|e| (e.kind, e.changed))
                .collect();
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

pub(super) async fn webhooks_round_trip_change_and_delete_with_their_events(store: Arc<dyn Store>) {
    let first = sample_webhook(1, 10);
    let second = sample_webhook(2, 20);
    let mut tied = [sample_webhook(3, 20), sample_webhook(4, 20)];
    tied.sort_by_key(|w| std::cmp::Reverse(w.id));
    for hook in [&first, &tied[1], &second, &tied[0]] {
        webhook_store(&store)
            .insert_webhook(hook.clone(), Log::ANONYMOUS)
            .await
            .expect("insert");
    }
    assert!(matches!(
        webhook_store(&store).insert_webhook(first.clone(), Log::ANONYMOUS).await,
        Err(StoreError::DuplicateId { id }) if id == first.id
    ));
    assert_eq!(
        webhook_store(&store).get_webhook(first.id).await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        webhook_store(&store)
            .get_webhook(Uuid::new_v4())
            .await
            .unwrap(),
        None
    );
    let mut newest: Vec<Webhook> = vec![second.clone(), tied[0].clone(), tied[1].clone()];
    newest.sort_by_key(|w| std::cmp::Reverse((w.created_at, w.id)));
    newest.push(first.clone());
    let all = webhook_store(&store).list_webhooks(0, 10).await.unwrap();
    assert_eq!((all.items, all.total), (newest.clone(), 4));
    let page = webhook_store(&store).list_webhooks(1, 2).await.unwrap();
    assert_eq!((page.items, page.total), (newest[1..3].to_vec(), 4));

    let at = t0() + Duration::seconds(100);
    let change = WebhookChange {
        url: Some("https://hooks.example.com/moved".into()),
        event_types: Some(EventFilter::Only(vec![EventType::AssetDeleted])),
        enabled: Some(false),
        if_failing_since: None,
    };
    let (expected, _) = change.apply(&first, at).expect("a change");
    let changed = webhook_store(&store)
        .update_webhook(first.id, &change, at, Log::ANONYMOUS)
        .await
        .unwrap();
    assert_eq!(changed, Some(expected.clone()));
    assert_eq!(
        webhook_store(&store).get_webhook(first.id).await.unwrap(),
        Some(expected.clone())
    );
    // The same change again changes nothing and records nothing.
    let again = webhook_store(&store)
        .update_webhook(first.id, &change, at, Log::ANONYMOUS)
        .await
        .unwrap();
    assert_eq!(again, Some(expected));
    let missing = webhook_store(&store)
        .update_webhook(Uuid::new_v4(), &change, at, Log::ANONYMOUS)
        .await;
    assert_eq!(missing.unwrap(), None);

    assert!(
        webhook_store(&store)
            .delete_webhook(first.id, Log::ANONYMOUS)
            .await
            .unwrap()
    );
    assert!(
        !webhook_store(&store)
            .delete_webhook(first.id, Log::ANONYMOUS)
            .await
            .unwrap()
    );
    assert_eq!(
        webhook_store(&store).get_webhook(first.id).await.unwrap(),
        None
    );
    assert_eq!(
        webhook_store(&store)
            .list_webhooks(0, 10)
            .await
            .unwrap()
            .total,
        3
    );

    let fields = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        webhook_events(&store, first.id, 3).await,
        [
            (EventType::WebhookCreated, vec![]),
            (
                EventType::WebhookUpdated,
                fields(&["url", "event_types", "enabled"])
            ),
            (EventType::WebhookDeleted, vec![]),
        ]
    );
}

pub(super) async fn streams_are_leased_to_one_holder_and_advance_with_their_deliveries(
    store: Arc<dyn Store>,
) {
    // An event before the webhook is not in its stream; one after it is.
    let before = insert(&store, sample_asset("Old", AssetType::Pdf, 0)).await;
    webhook_events_of(&store, ResourceType::Asset, before.id).await;
    let hook = sample_webhook(1, 0);
    webhook_store(&store)
        .insert_webhook(hook.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    let after = insert(&store, sample_asset("New", AssetType::Pdf, 1)).await;
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    let now = t0();
    let until = now + Duration::seconds(60);
    let start = webhook_store(&store)
        .lease_stream(hook.id, a, now, until)
        .await
        .unwrap();
    let start = start.expect("a stream of an enabled webhook");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let seen = loop {
        let page = event_store(&store)
            .list_events(&EventQuery {
                after: start,
                kind: None,
                resource: None,
                workspace: None,
                limit: 100,
            })
            .await
            .expect("list_events");
        let ids: Vec<Uuid> = page.events.iter().map(|e| e.resource_id).collect();
        if ids.contains(&after.id) || std::time::Instant::now() > deadline {
            break ids;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert!(seen.contains(&after.id), "{seen:?}");
    assert!(
        !seen.contains(&before.id),
        "an event before the webhook is in its stream"
    );

    // One holder at a time; the holder renews its lease.
    assert_eq!(
        webhook_store(&store)
            .lease_stream(hook.id, b, now, until)
            .await
            .unwrap(),
        None
    );
    let renewed = webhook_store(&store)
        .lease_stream(hook.id, a, now, until)
        .await
        .unwrap();
    assert_eq!(renewed, Some(start));
    let (older, newer) = (sample_delivery(hook.id, 1), sample_delivery(hook.id, 2));
    let to = EventCursor(start.0 + 1, 7);
    let batch = vec![older.clone(), newer.clone()];
    let by_b = webhook_store(&store)
        .advance_stream(hook.id, b, (start, to), batch.clone(), until)
        .await;
    assert!(!by_b.unwrap(), "only the holder advances");
    let wrong = webhook_store(&store)
        .advance_stream(hook.id, a, (to, to), batch.clone(), until)
        .await;
    assert!(!wrong.unwrap(), "only from where the stream stands");
    assert_eq!(
        webhook_store(&store)
            .list_deliveries(hook.id, 0, 10)
            .await
            .unwrap()
            .total,
        0
    );
    let later = until + Duration::seconds(60);
    let moved = webhook_store(&store)
        .advance_stream(hook.id, a, (start, to), batch, later)
        .await;
    assert!(moved.unwrap());
    let page = webhook_store(&store)
        .list_deliveries(hook.id, 0, 10)
        .await
        .unwrap();
    assert_eq!(
        (page.items, page.total),
        (vec![newer.clone(), older.clone()], 2)
    );
    let second = webhook_store(&store)
        .list_deliveries(hook.id, 1, 1)
        .await
        .unwrap();
    assert_eq!((second.items, second.total), (vec![older], 2));

    // The lease runs until the advance said; then another holder takes the stream over, and
    // the first one's advance is refused.
    let held = webhook_store(&store)
        .lease_stream(hook.id, b, until, later)
        .await
        .unwrap();
    assert_eq!(held, None, "the advance moved the lease");
    let taken = webhook_store(&store)
        .lease_stream(
            hook.id,
            b,
            later + Duration::seconds(1),
            later + Duration::seconds(60),
        )
        .await
        .unwrap();
    assert_eq!(taken, Some(to));
    let stale = webhook_store(&store)
        .advance_stream(hook.id, a, (to, EventCursor(to.0, to.1 + 1)), vec![], later)
        .await;
    assert!(!stale.unwrap());

    // A disabled or deleted webhook has no stream to lease.
    let off = sample_webhook(2, 0);
    webhook_store(&store)
        .insert_webhook(off.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    webhook_store(&store)
        .update_webhook(off.id, &WebhookChange::disable(), t0(), Log::ANONYMOUS)
        .await
        .unwrap();
    assert_eq!(
        webhook_store(&store)
            .lease_stream(off.id, a, now, until)
            .await
            .unwrap(),
        None
    );
    let gone = Uuid::new_v4();
    assert_eq!(
        webhook_store(&store)
            .lease_stream(gone, a, now, until)
            .await
            .unwrap(),
        None
    );
    let nowhere = webhook_store(&store)
        .advance_stream(gone, a, (start, to), vec![sample_delivery(gone, 3)], until)
        .await;
    assert!(!nowhere.unwrap());
    let orphan = sample_delivery(gone, 4);

    assert!(
        webhook_store(&store)
            .insert_delivery(sample_delivery(hook.id, 5))
            .await
            .unwrap()
    );
    assert!(!webhook_store(&store).insert_delivery(orphan).await.unwrap());
    assert_eq!(
        webhook_store(&store)
            .list_deliveries(hook.id, 0, 10)
            .await
            .unwrap()
            .total,
        3
    );
    assert_eq!(
        webhook_store(&store)
            .list_deliveries(gone, 0, 10)
            .await
            .unwrap()
            .total,
        0
    );
    // A webhook takes its deliveries along.
    assert!(
        webhook_store(&store)
            .delete_webhook(hook.id, Log::ANONYMOUS)
            .await
            .unwrap()
    );
    assert_eq!(
        webhook_store(&store)
            .list_deliveries(hook.id, 0, 10)
            .await
            .unwrap()
            .total,
        0
    );
}
