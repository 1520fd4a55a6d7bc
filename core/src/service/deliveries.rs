//! The delivery worker: two tasks per [`Service`], started with it inside a Tokio runtime
//! (unless [`crate::Config::webhook_workers`] is 0). The dispatcher turns new events into
//! deliveries; the sender claims due deliveries, sends them (at most `webhook_workers` at once,
//! each on a task of its own) and records how they went, in batches. Nothing of it runs in a
//! request: a write only wakes them. Both hold the service weakly, so they end when it is
//! dropped.

use std::sync::{Arc, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, Semaphore, mpsc};

use super::Inner;
use crate::config::Config;
use crate::error::{ApiError, StoreError};
use crate::events::EventQuery;
use crate::records::now;
use crate::webhooks::client::{Outcome, Sender};
use crate::webhooks::{
    Attempt, Claimed, Delivery, Next, Webhook, body_of, next_attempt, test_payload,
};

/// Events read from the log per step of a dispatch (each step one store write).
const DISPATCH_PAGE: usize = 200;
/// How long a worker gathers more work after it is woken, so that a busy server writes in
/// batches.
const GATHER: Duration = Duration::from_millis(5);
/// Outcomes kept while the store cannot take them; older ones are dropped (their
/// deliveries are sent again when their lease ends).
const MAX_UNRECORDED: usize = 10_000;
/// What an attempt's lease adds to the timeout: a claim that is not recorded by then is
/// claimed again.
const LEASE_MARGIN: Duration = Duration::from_secs(30);

/// The workers' handle in the service: what wakes them, and how they send.
pub(super) struct Deliveries {
    /// Wakes the dispatcher (a write appended an event).
    written: Arc<Notify>,
    /// Wakes the sender (deliveries were enqueued, or a retry asked for).
    due: Arc<Notify>,
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
            written: Arc::new(Notify::new()),
            due: Arc::new(Notify::new()),
            sender,
        }
    }

    /// Wakes the dispatcher after a write.
    pub(super) fn wake(&self) {
        self.written.notify_one();
    }

    /// Wakes the sender: a delivery is due now.
    pub(super) fn due_now(&self) {
        self.due.notify_one();
    }

    /// Starts the workers of `inner` on the current Tokio runtime, when there is one and the
    /// configuration asks for senders.
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
        let (this, written, due) = (
            Arc::downgrade(inner),
            Arc::clone(&inner.deliveries.written),
            Arc::clone(&inner.deliveries.due),
        );
        runtime.spawn(dispatcher(Weak::clone(&this), written, Arc::clone(&due)));
        let worker = SendWorker {
            inner: this,
            due,
            sender,
            permits: Arc::new(Semaphore::new(workers)),
            schedule: inner.config.webhook_retry_schedule.clone().into(),
        };
        runtime.spawn(worker.run());
    }

    /// One attempt of a test delivery to `webhook` now, with no retry to follow.
    pub(super) async fn attempt(
        &self,
        webhook: &Webhook,
        delivery: &Delivery,
    ) -> Result<Attempt, ApiError> {
        let sender = self
            .sender
            .as_ref()
            .map_err(|e| ApiError::internal(e.clone()))?;
        let body = test_payload(delivery, delivery.created_at);
        Ok(send(
            sender,
            &webhook.url,
            &webhook.secret,
            delivery,
            Some(&body),
            &[],
        )
        .await)
    }
}

/// Sends `delivery` with `body` (`None`: its event is gone, which fails the attempt) to
/// `url`, and says what follows: after a failure, the schedule's next attempt for the
/// delivery's attempt count.
async fn send(
    sender: &Sender,
    url: &str,
    secret: &str,
    delivery: &Delivery,
    body: Option<&str>,
    schedule: &[Duration],
) -> Attempt {
    let outcome = match body {
        Some(body) => {
            let id = format!("evt_{}", delivery.event_id.simple());
            let timestamp = Utc::now().timestamp();
            sender.send(url, secret, &id, timestamp, body).await
        }
        None => Outcome {
            status: None,
            error: Some("the event is no longer kept in the log".to_owned()),
        },
    };
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

/// The dispatcher: follows the event log from the store's cursor and enqueues deliveries,
/// woken by this process's writes and every poll interval (for other processes' writes).
async fn dispatcher(inner: Weak<Inner>, written: Arc<Notify>, due: Arc<Notify>) {
    loop {
        let Some(strong) = inner.upgrade() else {
            return;
        };
        let poll = strong.config.webhook_poll_interval;
        match dispatch(&strong).await {
            Ok(0) => {}
            Ok(_) => due.notify_one(),
            Err(e) => tracing::warn!(error = %e, "webhook dispatch waits for the store"),
        }
        drop(strong);
        tokio::select! {
            () = written.notified() => {}
            () = tokio::time::sleep(poll) => {}
        }
        tokio::time::sleep(GATHER).await;
    }
}

/// Turns the events after the store's cursor into deliveries, a page at a time, moving the
/// cursor with them, until the log is read (or another process enqueued a page first);
/// returns how many deliveries it enqueued.
async fn dispatch(inner: &Inner) -> Result<usize, StoreError> {
    let store = &inner.store;
    let mut hooks: Option<Vec<Webhook>> = None;
    let mut enqueued = 0;
    loop {
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
            return Ok(enqueued);
        }
        if hooks.is_none() && !page.events.is_empty() {
            let all = store.list_webhooks(0, u32::MAX).await?.items;
            hooks = Some(all.into_iter().filter(|w| w.enabled).collect());
        }
        let at = now();
        let mut deliveries = Vec::new();
        for event in &page.events {
            let kind = event.kind.as_str();
            for hook in hooks.iter().flatten() {
                if hook.event_types.wants(kind) && event.occurred_at >= hook.created_at {
                    let what = (event.id, kind, event.at);
                    deliveries.push(Delivery::new(hook.id, what, at));
                }
            }
        }
        let full = page.events.len() >= DISPATCH_PAGE;
        let count = deliveries.len();
        if !store
            .enqueue_deliveries(from, page.next, deliveries)
            .await?
        {
            return Ok(enqueued);
        }
        enqueued += count;
        if !full {
            return Ok(enqueued);
        }
    }
}

struct SendWorker {
    inner: Weak<Inner>,
    due: Arc<Notify>,
    sender: Sender,
    permits: Arc<Semaphore>,
    schedule: Arc<[Duration]>,
}

impl SendWorker {
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
                () = self.due.notified() => {}
                Some(attempt) = outcomes.recv() => unrecorded.push(attempt),
                () = tokio::time::sleep(poll) => {}
            }
            tokio::time::sleep(GATHER).await;
        }
    }

    /// Records what came back and claims as many due deliveries as there are free senders.
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
            let body = body_of(&claim, now());
            let attempt = send(
                &sender,
                &claim.url,
                &claim.secret,
                &claim.delivery,
                body.as_deref(),
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
