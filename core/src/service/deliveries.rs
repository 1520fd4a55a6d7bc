//! The delivery worker: one task per [`Service`], started with it inside a Tokio runtime
//! (unless [`crate::Config::webhook_workers`] is 0), that turns new events into deliveries,
//! claims due deliveries, sends them (at most `webhook_workers` at once, each on a task of its
//! own) and records how they went, in batches. Nothing of it runs in a request: a write only
//! wakes it. It holds the service weakly, so it ends when the service is dropped.

use std::sync::{Arc, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, Semaphore, mpsc};

use super::Inner;
use crate::config::Config;
use crate::error::{ApiError, StoreError};
use crate::events::EventQuery;
use crate::records::now;
use crate::webhooks::client::Sender;
use crate::webhooks::{Attempt, Claimed, Delivery, Next, Webhook, next_attempt, payload};

/// Events read from the log per step of a dispatch.
const DISPATCH_PAGE: usize = 500;
/// Steps of one dispatch at most (then the worker claims and sends before it reads on).
const DISPATCH_STEPS: usize = 20;
/// How long the worker gathers more work after it is woken, so that a busy server records
/// and claims in batches.
const GATHER: Duration = Duration::from_millis(5);
/// Outcomes kept while the store cannot take them; older ones are dropped (their
/// deliveries are sent again when their lease ends).
const MAX_UNRECORDED: usize = 10_000;
/// What an attempt's lease adds to the timeout: a claim that is not recorded by then is
/// claimed again.
const LEASE_MARGIN: Duration = Duration::from_secs(30);

/// The worker's handle in the service: what wakes it, and how it sends.
pub(super) struct Deliveries {
    wake: Arc<Notify>,
    sender: Result<Sender, String>,
}

impl Deliveries {
    /// The handle; the sender is made from the configuration (a failure is logged, and
    /// answered as 500 by what needs it).
    pub(super) fn new(config: &Config) -> Self {
        let sender =
            Sender::new(config.webhook_timeout, config.webhook_allow_private).map_err(|e| {
                tracing::error!(error = %e, "cannot make the webhook HTTP client");
                e.to_string()
            });
        Deliveries {
            wake: Arc::new(Notify::new()),
            sender,
        }
    }

    /// Wakes the worker (after a write, or a retry asked for).
    pub(super) fn wake(&self) {
        self.wake.notify_one();
    }

    /// Starts the worker of `inner` on the current Tokio runtime, when there is one and the
    /// configuration asks for workers.
    pub(super) fn start(inner: &Arc<Inner>) {
        let workers = inner.config.webhook_workers;
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Ok(sender) = inner.deliveries.sender.clone() else {
            return;
        };
        if workers == 0 {
            return;
        }
        let worker = Worker {
            inner: Arc::downgrade(inner),
            wake: Arc::clone(&inner.deliveries.wake),
            sender,
            permits: Arc::new(Semaphore::new(workers)),
            schedule: inner.config.webhook_retry_schedule.clone().into(),
        };
        runtime.spawn(worker.run());
    }

    /// One attempt of `delivery` to `webhook` now, with no retry to follow (a test delivery).
    pub(super) async fn attempt(
        &self,
        webhook: &Webhook,
        delivery: &Delivery,
    ) -> Result<Attempt, ApiError> {
        let sender = self
            .sender
            .as_ref()
            .map_err(|e| ApiError::internal(e.clone()))?;
        let attempt = send(sender, &webhook.url, &webhook.secret, delivery, &[]).await;
        Ok(attempt)
    }
}

/// Sends `delivery` to `url` and says what follows: after a failure, the schedule's next
/// attempt for the delivery's attempt count.
async fn send(
    sender: &Sender,
    url: &str,
    secret: &str,
    delivery: &Delivery,
    schedule: &[Duration],
) -> Attempt {
    let id = format!("evt_{}", delivery.event_id.simple());
    let timestamp = Utc::now().timestamp();
    let outcome = sender
        .send(url, secret, &id, timestamp, &delivery.payload)
        .await;
    let at = now();
    let next = match outcome.error {
        None => Next::Succeeded,
        Some(_) => next_attempt(schedule, delivery.attempts, at),
    };
    Attempt {
        delivery_id: delivery.id,
        webhook_id: delivery.webhook_id,
        at,
        response_status: outcome.status,
        error: outcome.error,
        next,
    }
}

struct Worker {
    inner: Weak<Inner>,
    wake: Arc<Notify>,
    sender: Sender,
    permits: Arc<Semaphore>,
    schedule: Arc<[Duration]>,
}

impl Worker {
    async fn run(self) {
        let (done, mut outcomes) = mpsc::unbounded_channel::<Attempt>();
        let mut unrecorded: Vec<Attempt> = Vec::new();
        loop {
            while let Ok(attempt) = outcomes.try_recv() {
                unrecorded.push(attempt);
            }
            let Some(inner) = self.inner.upgrade() else {
                return;
            };
            let poll = inner.config.webhook_poll_interval;
            match self.round(&inner, &mut unrecorded).await {
                Ok(claimed) => {
                    for claim in claimed {
                        self.spawn_send(claim, done.clone()).await;
                    }
                }
                Err(e) => tracing::warn!(error = %e, "webhook deliveries wait for the store"),
            }
            if unrecorded.len() > MAX_UNRECORDED {
                let extra = unrecorded.len() - MAX_UNRECORDED;
                unrecorded.drain(..extra);
            }
            drop(inner);
            tokio::select! {
                () = self.wake.notified() => {}
                Some(attempt) = outcomes.recv() => unrecorded.push(attempt),
                () = tokio::time::sleep(poll) => {}
            }
            tokio::time::sleep(GATHER).await;
        }
    }

    /// Records what came back, turns new events into deliveries, and claims as many due
    /// deliveries as there are free senders.
    async fn round(
        &self,
        inner: &Inner,
        unrecorded: &mut Vec<Attempt>,
    ) -> Result<Vec<Claimed>, StoreError> {
        let store = &inner.store;
        if !unrecorded.is_empty() {
            let disable_before = before(now(), inner.config.webhook_disable_after);
            store.record_attempts(unrecorded, disable_before).await?;
            unrecorded.clear();
        }
        dispatch(inner).await?;
        let free = u32::try_from(self.permits.available_permits()).unwrap_or(u32::MAX);
        if free == 0 {
            return Ok(Vec::new());
        }
        let at = now();
        let lease = inner.config.webhook_timeout + LEASE_MARGIN;
        let until = at + chrono::Duration::from_std(lease).unwrap_or(chrono::Duration::MAX);
        store.claim_deliveries(at, until, free).await
    }

    /// Sends one claimed delivery on a task of its own, holding a sender's place.
    async fn spawn_send(&self, claim: Claimed, done: mpsc::UnboundedSender<Attempt>) {
        let Ok(permit) = Arc::clone(&self.permits).acquire_owned().await else {
            return;
        };
        let sender = self.sender.clone();
        let schedule = Arc::clone(&self.schedule);
        tokio::spawn(async move {
            let attempt = send(
                &sender,
                &claim.url,
                &claim.secret,
                &claim.delivery,
                &schedule,
            )
            .await;
            drop(permit);
            let _ = done.send(attempt);
        });
    }
}

/// `at` less `age` (the earliest time when `age` is more than there is).
fn before(at: DateTime<Utc>, age: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(age)
        .ok()
        .and_then(|age| at.checked_sub_signed(age))
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// Turns the events after the store's cursor into deliveries, a page at a time, moving the
/// cursor with them (a page another process enqueued first ends it).
async fn dispatch(inner: &Inner) -> Result<(), StoreError> {
    let store = &inner.store;
    let mut hooks: Option<Vec<Webhook>> = None;
    for _ in 0..DISPATCH_STEPS {
        let from = store.webhook_cursor().await?;
        let page = store
            .list_events(&EventQuery {
                after: from,
                kind: None,
                resource: None,
                limit: DISPATCH_PAGE,
            })
            .await?;
        if page.next == from {
            return Ok(());
        }
        if hooks.is_none() && !page.events.is_empty() {
            let all = store.list_webhooks(0, u32::MAX).await?.items;
            hooks = Some(all.into_iter().filter(|w| w.enabled).collect());
        }
        let at = now();
        let mut deliveries = Vec::new();
        for event in &page.events {
            let mut body: Option<String> = None;
            let kind = event.kind.as_str();
            for hook in hooks.iter().flatten() {
                if hook.event_types.wants(kind) && event.occurred_at >= hook.created_at {
                    let payload = body.get_or_insert_with(|| payload(event)).clone();
                    deliveries.push(Delivery::new(hook.id, event.id, kind, payload, at));
                }
            }
        }
        let full = page.events.len() >= DISPATCH_PAGE;
        if !store
            .enqueue_deliveries(from, page.next, deliveries)
            .await?
            || !full
        {
            return Ok(());
        }
    }
    Ok(())
}
