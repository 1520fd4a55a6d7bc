//! The conformance cases of [`crate::WebhookStore`]'s deliveries: claims, attempts and
//! purges (the webhooks' records and streams are in `webhooks`).

use super::*;
use crate::events::{EventType, Log, ResourceType};
use crate::webhooks::{Attempt, Delivery, DeliveryStatus, Next, WebhookChange};

/// A webhook made at `t0 + secs`, enabled, for every event.
use super::webhooks::{
    insert_all, sample_delivery, sample_webhook, webhook_events, webhook_events_of,
};

pub(super) async fn claims_lease_due_deliveries_of_enabled_webhooks(store: Arc<dyn Store>) {
    let (hook, off) = (sample_webhook(1, 0), sample_webhook(2, 0));
    webhook_store(&store)
        .insert_webhook(hook.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    webhook_store(&store)
        .insert_webhook(off.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    let change = WebhookChange::disable();
    webhook_store(&store)
        .update_webhook(off.id, &change, t0(), Log::ANONYMOUS)
        .await
        .unwrap();
    let due: Vec<Delivery> = (0..5).map(|n| sample_delivery(hook.id, 10 - n)).collect();
    let later = sample_delivery(hook.id, 500);
    let mut all = due.clone();
    all.extend([later.clone(), sample_delivery(off.id, 1)]);
    insert_all(&store, &all).await;
    let now = t0() + Duration::seconds(100);
    let until = now + Duration::seconds(60);
    let first = webhook_store(&store)
        .claim_deliveries(now, until, 2)
        .await
        .unwrap();
    // The earliest due first, with one more attempt and the lease as their next time.
    let ids: Vec<Uuid> = first.iter().map(|c| c.delivery.id).collect();
    assert_eq!(ids, [due[4].id, due[3].id]);
    for claim in &first {
        assert_eq!(claim.delivery.attempts, 1);
        assert_eq!(claim.delivery.next_attempt_at, Some(until));
        assert_eq!(
            (claim.url.as_str(), claim.secret.as_str()),
            (hook.url.as_str(), "whsec_1")
        );
    }
    let rest = webhook_store(&store)
        .claim_deliveries(now, until, 10)
        .await
        .unwrap();
    let rest: Vec<Uuid> = rest.iter().map(|c| c.delivery.id).collect();
    assert_eq!(
        rest,
        [due[2].id, due[1].id, due[0].id],
        "no disabled, none not yet due"
    );
    assert!(
        webhook_store(&store)
            .claim_deliveries(now, until, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // Once a lease ends, its delivery is claimed again (its sender died).
    let after = webhook_store(&store)
        .claim_deliveries(until, until + Duration::seconds(60), 10)
        .await
        .unwrap();
    assert_eq!(after.len(), 5);
    assert!(after.iter().all(|c| c.delivery.attempts == 2));

    // A claim carries the delivery's event while the log has it.
    let asset = store
        .insert_asset(sample_asset("Logo", AssetType::Image, 0), Log::ANONYMOUS)
        .await
        .expect("insert_asset");
    let logged = webhook_events_of(&store, ResourceType::Asset, asset.id).await;
    let mut of_event = sample_delivery(hook.id, 600);
    of_event.event_id = logged.id;
    of_event.event_at = logged.at;
    webhook_store(&store)
        .insert_delivery(of_event.clone())
        .await
        .expect("insert_delivery");
    let late = t0() + Duration::seconds(700);
    let claims = webhook_store(&store)
        .claim_deliveries(late, late + Duration::seconds(60), 10)
        .await
        .unwrap();
    let claim = claims
        .iter()
        .find(|c| c.delivery.id == of_event.id)
        .expect("claimed");
    assert_eq!(claim.event.as_ref(), Some(&logged));
    assert!(
        claims
            .iter()
            .filter(|c| c.delivery.id != of_event.id)
            .all(|c| c.event.is_none())
    );

    // Claimers at once never share a delivery.
    let many: Vec<Delivery> = (0..40).map(|n| sample_delivery(hook.id, n)).collect();
    insert_all(&store, &many).await;
    let at = t0() + Duration::seconds(1000);
    let claimers: Vec<_> = (0..8)
        .map(|_| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                let mut got = Vec::new();
                loop {
                    let claimed = webhook_store(&store)
                        .claim_deliveries(at, at + Duration::hours(1), 3)
                        .await
                        .expect("claim");
                    if claimed.is_empty() {
                        return got;
                    }
                    got.extend(claimed.into_iter().map(|c| c.delivery.id));
                }
            })
        })
        .collect();
    let mut seen = Vec::new();
    for claimer in claimers {
        seen.extend(claimer.await.expect("claimer"));
    }
    let unique: HashSet<Uuid> = seen.iter().copied().collect();
    assert_eq!(seen.len(), unique.len(), "a delivery was claimed twice");
    assert!(many.iter().all(|d| unique.contains(&d.id)));
}

pub(super) async fn attempts_are_recorded_and_failing_webhooks_disabled(store: Arc<dyn Store>) {
    let hook = sample_webhook(1, 0);
    webhook_store(&store)
        .insert_webhook(hook.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    let (a, b) = (sample_delivery(hook.id, 1), sample_delivery(hook.id, 2));
    insert_all(&store, &[a.clone(), b.clone()]).await;
    let now = t0() + Duration::seconds(10);
    let claimed = webhook_store(&store)
        .claim_deliveries(now, now + Duration::seconds(60), 10)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 2);
    let attempt = |d: &Delivery, secs: i64, status: Option<u16>, next: Next| Attempt {
        delivery_id: d.id,
        webhook_id: d.webhook_id,
        at: t0() + Duration::seconds(secs),
        response_status: status,
        error: (next != Next::Succeeded).then(|| "the endpoint answered 500".to_owned()),
        next,
    };
    let retry_at = t0() + Duration::seconds(15);
    let failed = attempt(&b, 11, Some(500), Next::RetryAt(retry_at));
    let ok = attempt(&a, 11, Some(204), Next::Succeeded);
    let ghost = attempt(&sample_delivery(Uuid::new_v4(), 3), 11, None, Next::Failed);
    webhook_store(&store)
        .record_attempts(&[ok, failed.clone(), ghost])
        .await
        .unwrap();
    let listed = webhook_store(&store)
        .list_deliveries(hook.id, 0, 10)
        .await
        .unwrap()
        .items;
    let of = |id: Uuid| listed.iter().find(|d| d.id == id).cloned().expect("listed");
    let (done, waiting) = (of(a.id), of(b.id));
    assert_eq!(done.status, DeliveryStatus::Succeeded);
    assert_eq!((done.attempts, done.next_attempt_at), (1, None));
    assert_eq!(done.last_response_status, Some(204));
    assert_eq!(done.last_error, None);
    assert_eq!(waiting.status, DeliveryStatus::Pending);
    assert_eq!(waiting.next_attempt_at, Some(retry_at));
    assert_eq!(waiting.last_attempt_at, Some(failed.at));
    assert_eq!(
        waiting.last_error.as_deref(),
        Some("the endpoint answered 500")
    );
    let failing = webhook_store(&store)
        .get_webhook(hook.id)
        .await
        .unwrap()
        .expect("hook");
    assert_eq!(
        failing.failing_since,
        Some(failed.at),
        "the first failure is kept"
    );
    assert!(failing.enabled);

    // A retry of it is due at once and keeps its attempts; another webhook's is no retry.
    let now = t0() + Duration::seconds(12);
    let retried = webhook_store(&store)
        .retry_delivery(hook.id, b.id, now)
        .await
        .unwrap();
    let retried = retried.expect("retried");
    assert_eq!(
        (retried.status, retried.next_attempt_at),
        (DeliveryStatus::Pending, Some(now))
    );
    assert_eq!(retried.attempts, 1);
    let other = webhook_store(&store)
        .retry_delivery(Uuid::new_v4(), b.id, now)
        .await
        .unwrap();
    assert_eq!(other, None);
    let done_again = webhook_store(&store)
        .retry_delivery(hook.id, a.id, now)
        .await
        .unwrap();
    assert_eq!(done_again.map(|d| d.status), Some(DeliveryStatus::Pending));

    // The service's rule for a webhook that failed too long, applied to the record as it
    // stands: failing since later than the cutoff keeps it on; at or before, it is disabled,
    // with its event.
    let last = attempt(&b, 20, None, Next::Failed);
    webhook_store(&store)
        .record_attempts(&[last])
        .await
        .unwrap();
    let at = t0() + Duration::seconds(21);
    let early = WebhookChange::disable_if_failing_since(failed.at - Duration::seconds(1));
    let kept = webhook_store(&store)
        .update_webhook(hook.id, &early, at, Log::ANONYMOUS)
        .await
        .unwrap()
        .expect("hook");
    assert!(kept.enabled, "not failing long enough");
    let rule = WebhookChange::disable_if_failing_since(failed.at);
    let off = webhook_store(&store)
        .update_webhook(hook.id, &rule, at, Log::ANONYMOUS)
        .await
        .unwrap()
        .expect("hook");
    assert!(!off.enabled);
    assert_eq!(off.failing_since, Some(failed.at));
    let gone = webhook_store(&store)
        .list_deliveries(hook.id, 0, 10)
        .await
        .unwrap()
        .items;
    let b_now = gone.iter().find(|d| d.id == b.id).expect("b");
    assert_eq!(
        (b_now.status, b_now.next_attempt_at),
        (DeliveryStatus::Failed, None)
    );
    let events = webhook_events(&store, hook.id, 2).await;
    assert_eq!(
        events,
        [
            (EventType::WebhookCreated, vec![]),
            (EventType::WebhookUpdated, vec!["enabled".to_owned()]),
        ]
    );

    // Enabled again, it starts afresh; a success clears a failure.
    let on = WebhookChange {
        enabled: Some(true),
        ..WebhookChange::default()
    };
    let back = webhook_store(&store)
        .update_webhook(hook.id, &on, t0() + Duration::seconds(30), Log::ANONYMOUS)
        .await;
    assert_eq!(back.unwrap().map(|w| w.failing_since), Some(None));
    let fail = attempt(&a, 31, None, Next::Failed);
    webhook_store(&store)
        .record_attempts(&[fail])
        .await
        .unwrap();
    let ok = attempt(&a, 32, Some(200), Next::Succeeded);
    webhook_store(&store).record_attempts(&[ok]).await.unwrap();
    let healthy = webhook_store(&store)
        .get_webhook(hook.id)
        .await
        .unwrap()
        .expect("hook");
    assert_eq!((healthy.enabled, healthy.failing_since), (true, None));
}

pub(super) async fn old_deliveries_are_purged(store: Arc<dyn Store>) {
    let hook = sample_webhook(1, 0);
    webhook_store(&store)
        .insert_webhook(hook.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    let old = sample_delivery(hook.id, 1);
    let new = sample_delivery(hook.id, 100);
    insert_all(&store, &[old, new.clone()]).await;
    let removed = webhook_store(&store)
        .purge_deliveries(t0() + Duration::seconds(50))
        .await;
    assert_eq!(removed.unwrap(), 1);
    let left = webhook_store(&store)
        .list_deliveries(hook.id, 0, 10)
        .await
        .unwrap();
    assert_eq!((left.items, left.total), (vec![new], 1));
}
