//! The delivery workers, started with each [`Service`] inside a Tokio runtime (unless
//! [`crate::Config::webhook_workers`] is 0); nothing of them runs in a request, a write only
//! wakes them, and they hold the service weakly, so they end when it is dropped.
//!
//! - **Streams**: for each enabled webhook, the process that holds its stream's lease reads
//!   the events it has not had from the log, sends each wanted event's first attempt (at
//!   most `webhook_workers` sends at once in all), and records the page's deliveries with
//!   the stream's new place in one store call. Nothing is written per event before it is
//!   sent, and a delivery that succeeds at once is one write.
//! - **Retries**: first attempts that failed are pending deliveries; the retry sender claims
//!   those that are due (with a lease), sends them and records how they went, in batches.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::{Notify, Semaphore, mpsc};
use uuid::Uuid;

use super::Inner;
use crate::config::Config;
use crate::error::{ApiError, StoreError};
use crate::events::{Actor, EventQuery, Log};
use crate::records::now;
use crate::store::WebhookStore;
use crate::webhooks::client::{Outcome, Sender};
use crate::webhooks::{
    Attempt, Claimed, Delivery, Next, Webhook, WebhookChange, body_of, next_attempt, test_payload,
};

/// The name of the workers' thread (and of the threads it starts for blocking work).
const WORKER_THREAD: &str = "assetlib-hooks";

/// Events read from the log per step of a stream; the wanted ones among them are sent and
/// recorded together (one store write).
const STREAM_PAGE: usize = 100;
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
    /// Wakes the streams (a write appended an event).
    written: Arc<Notify>,
    /// Wakes the retry sender (a retry asked for, or a first attempt failed).
    due: Arc<Notify>,
    sender: Result<Sender, String>,
    /// What the running workers share, once they are started.
    shared: std::sync::OnceLock<Arc<Shared>>,
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
            shared: std::sync::OnceLock::new(),
        }
    }

    /// Stops the workers and gives back the stream leases this process holds, so another
    /// process (this one started again, say) sends those webhooks' events at once rather than
    /// when the leases run out. Streams sending a page finish it first, for at most `wait`.
    /// Retries claimed and being sent keep their claim, and are claimed again when it ends.
    pub(super) async fn stop(&self, store: &dyn crate::Store, wait: Duration) {
        let (Some(shared), Some(store)) = (self.shared.get(), store.webhook_store()) else {
            return;
        };
        shared.stopped.store(true, Ordering::Release);
        shared.permits.close();
        self.written.notify_waiters();
        self.due.notify_waiters();
        let deadline = tokio::time::Instant::now() + wait;
        while !lock(&shared.streaming).is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let held: Vec<Uuid> = lock(&shared.leased).drain().collect();
        let at = now();
        for id in held {
            // Renewed to end now: the same holder may shorten its own lease.
            if let Err(e) = store.lease_stream(id, shared.holder, at, at).await {
                tracing::warn!(error = %e, webhook = %id, "a stream lease was not given back");
            }
        }
    }

    /// Wakes the streams after a write.
    pub(super) fn wake(&self) {
        self.written.notify_one();
    }

    /// Wakes the retry sender: a delivery is due now.
    pub(super) fn due_now(&self) {
        self.due.notify_one();
    }

    /// Starts the workers of `inner` on the current Tokio runtime, when there is one and the
    /// configuration asks for senders.
    pub(super) fn start(inner: &Arc<Inner>) {
        // Over a store that keeps no webhooks (or no event log to send) there is nothing to
        // deliver.
        if !inner.store.keeps(crate::Capability::Webhooks) {
            return;
        }
        let workers = inner.config.webhook_workers;
        let Ok(sender) = inner.deliveries.sender.clone() else {
            return;
        };
        if workers == 0 {
            return;
        }
        let shared = Arc::new(Shared {
            sender,
            permits: Arc::new(Semaphore::new(workers)),
            schedule: inner.config.webhook_retry_schedule.clone().into(),
            holder: Uuid::new_v4(),
            streaming: Mutex::new(HashSet::new()),
            leased: Mutex::new(HashSet::new()),
            stopped: AtomicBool::new(false),
            due: Arc::clone(&inner.deliveries.due),
        });
        if inner.deliveries.shared.set(Arc::clone(&shared)).is_err() {
            return; // started already
        }
        let this = Arc::downgrade(inner);
        let written = Arc::clone(&inner.deliveries.written);
        let work = async move {
            let streams = streams(Weak::clone(&this), written, Arc::clone(&shared));
            let retries = SendWorker {
                inner: this,
                shared: Arc::clone(&shared),
            }
            .run();
            tokio::join!(streams, retries);
            // Stopped, with the service still there: the runtime stays, for the connections
            // a store opened on it (PostgreSQL's are driven by tasks of the runtime they were
            // opened on), which serve the rest of the process.
            if shared.stopped.load(Ordering::Acquire) {
                std::future::pending::<()>().await;
            }
        };
        let thread = std::thread::Builder::new()
            .name(WORKER_THREAD.to_owned())
            .spawn(move || {
                lower_priority();
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .thread_name(WORKER_THREAD)
                    .build();
                match runtime {
                    Ok(runtime) => runtime.block_on(work),
                    Err(e) => tracing::error!(error = %e, "cannot start the webhook workers"),
                }
            });
        if let Err(e) = thread {
            tracing::error!(error = %e, "cannot start the webhook workers");
        }
    }

    /// One attempt of a test delivery to `webhook` now, asked for by `actor`, with no retry
    /// to follow.
    pub(super) async fn attempt(
        &self,
        webhook: &Webhook,
        delivery: &Delivery,
        actor: Option<&Actor>,
    ) -> Result<Attempt, ApiError> {
        let sender = self
            .sender
            .as_ref()
            .map_err(|e| ApiError::internal(e.clone()))?;
        let body = test_payload(delivery, delivery.created_at, actor);
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

/// What the workers of one service share.
struct Shared {
    sender: Sender,
    /// Places to send from (the configured number of deliveries at once).
    permits: Arc<Semaphore>,
    schedule: Arc<[Duration]>,
    /// This process, as the holder of stream leases.
    holder: Uuid,
    /// The webhooks whose streams run in this process now.
    streaming: Mutex<HashSet<Uuid>>,
    /// The webhooks whose stream leases this process took (and may still hold).
    leased: Mutex<HashSet<Uuid>>,
    /// Set when the workers are stopped: nothing more is leased or sent.
    stopped: AtomicBool,
    /// Wakes the retry sender.
    due: Arc<Notify>,
}

/// Starts a stream task for each enabled webhook that has none in this process, whenever a
/// write of this process wakes it and every poll interval (for other processes' writes).
async fn streams(inner: Weak<Inner>, written: Arc<Notify>, shared: Arc<Shared>) {
    loop {
        let Some(strong) = inner.upgrade() else {
            return;
        };
        if shared.stopped.load(Ordering::Acquire) {
            return;
        }
        let poll = strong.config.webhook_poll_interval;
        let Some(webhooks) = strong.store.webhook_store() else {
            return;
        };
        match webhooks.list_webhooks(0, u32::MAX).await {
            Ok(page) => {
                for hook in page.items.into_iter().filter(|w| w.enabled) {
                    let fresh = lock(&shared.streaming).insert(hook.id);
                    if fresh {
                        tokio::spawn(stream(Weak::clone(&inner), hook, Arc::clone(&shared)));
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "webhook streams wait for the store"),
        }
        drop(strong);
        tokio::select! {
            () = written.notified() => {}
            () = tokio::time::sleep(poll) => {}
        }
        tokio::time::sleep(GATHER).await;
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Takes the webhook off the set of running streams when its task ends, however it ends.
struct Streaming<'a>(&'a Shared, Uuid);

impl Drop for Streaming<'_> {
    fn drop(&mut self) {
        lock(&self.0.streaming).remove(&self.1);
    }
}

/// Sends `hook`'s new events while this process holds its stream: a page of the log at a
/// time, each wanted event's first attempt at once (within the senders' places), then the
/// page's deliveries recorded with the stream's new place. Ends when the log is read, the
/// lease is lost, or the service is gone.
async fn stream(inner: Weak<Inner>, hook: Webhook, shared: Arc<Shared>) {
    let _running = Streaming(&shared, hook.id);
    loop {
        let Some(strong) = inner.upgrade() else {
            return;
        };
        match stream_page(&strong, &hook, &shared).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                tracing::warn!(error = %e, webhook = %hook.id, "a webhook stream waits for the store");
                return;
            }
        }
    }
}

/// One page of a stream; whether there may be more.
async fn stream_page(inner: &Inner, hook: &Webhook, shared: &Shared) -> Result<bool, StoreError> {
    let (Some(store), Some(log)) = (inner.store.webhook_store(), inner.store.event_store()) else {
        return Ok(false);
    };
    let lease = lease_of(&inner.config);
    let at = now();
    if shared.stopped.load(Ordering::Acquire) {
        return Ok(false);
    }
    lock(&shared.leased).insert(hook.id);
    let Some(from) = store
        .lease_stream(hook.id, shared.holder, at, at + lease)
        .await?
    else {
        return Ok(false);
    };
    let page = log
        .list_events(&EventQuery {
            after: from,
            kind: None,
            resource: None,
            workspace: hook.workspace_id.clone(),
            limit: STREAM_PAGE,
        })
        .await?;
    if page.next == from {
        return Ok(false);
    }
    let to = page.next;
    let wanted = page.events.into_iter().filter(|event| {
        hook.event_types.wants(event.kind.as_str()) && event.occurred_at >= hook.created_at
    });
    let mut sends = tokio::task::JoinSet::new();
    for event in wanted {
        let Ok(permit) = Arc::clone(&shared.permits).acquire_owned().await else {
            return Ok(false);
        };
        let (sender, schedule) = (shared.sender.clone(), Arc::clone(&shared.schedule));
        let (url, secret) = (hook.url.clone(), hook.secret.clone());
        let mut delivery = Delivery::new(hook.id, (event.id, event.kind.as_str(), event.at), now());
        delivery.attempts = 1;
        sends.spawn(async move {
            let body = crate::webhooks::payload(&event);
            let attempt = send(&sender, &url, &secret, &delivery, Some(&body), &schedule).await;
            drop(permit);
            (delivery.after(&attempt), attempt)
        });
    }
    let mut deliveries = Vec::new();
    let mut attempts = Vec::new();
    while let Some(done) = sends.join_next().await {
        if let Ok((delivery, attempt)) = done {
            deliveries.push(delivery);
            attempts.push(attempt);
        }
    }
    let failed = attempts.iter().any(|a| !a.succeeded());
    let until = now() + lease;
    if !store
        .advance_stream(hook.id, shared.holder, (from, to), deliveries, until)
        .await?
    {
        return Ok(false);
    }
    // A failure, or a success after failures, changes what the webhook's record says.
    if failed || (hook.failing_since.is_some() && !attempts.is_empty()) {
        record(store, &attempts, &inner.config).await?;
        shared.due.notify_one();
    }
    Ok(true)
}

/// How long a lease (of a stream, or of a claimed retry) lasts: long enough for a batch of
/// attempts to time out in turns.
fn lease_of(config: &Config) -> chrono::Duration {
    let lease = config.webhook_timeout * 4 + LEASE_MARGIN;
    chrono::Duration::from_std(lease).unwrap_or(chrono::Duration::MAX)
}

/// The retry sender: claims due retries, sends them and records how they went.
struct SendWorker {
    inner: Weak<Inner>,
    shared: Arc<Shared>,
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
            if self.shared.stopped.load(Ordering::Acquire) {
                // What was sent and not recorded is claimed again when its claim ends.
                return;
            }
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
                () = self.shared.due.notified() => {}
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
        let Some(store) = inner.store.webhook_store() else {
            return Ok(Vec::new());
        };
        if !unrecorded.is_empty() {
            record(store, unrecorded, &inner.config).await?;
            unrecorded.clear();
        }
        let free = u32::try_from(self.shared.permits.available_permits()).unwrap_or(u32::MAX);
        if free == 0 {
            return Ok(Vec::new());
        }
        let at = now();
        store
            .claim_deliveries(at, at + lease_of(&inner.config), free)
            .await
    }

    /// Sends one claimed delivery on a task of its own, holding a sender's place.
    async fn spawn_send(&self, claim: Claimed, done: mpsc::UnboundedSender<Attempt>) {
        let Ok(permit) = Arc::clone(&self.shared.permits).acquire_owned().await else {
            return;
        };
        let sender = self.shared.sender.clone();
        let schedule = Arc::clone(&self.shared.schedule);
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

/// Lowers the priority of the calling thread, and so of the threads it starts (nice 10 on
/// Linux: under a full CPU, API requests get about nine tenths of it and deliveries the
/// rest, catching up when the requests ease). Where that cannot be done, it stays as it is.
fn lower_priority() {
    use thread_priority::{ThreadPriority, ThreadPriorityValue};
    // The crate maps 0..=99 onto niceness 19..=-20; 22 is niceness 10.
    let priority = ThreadPriorityValue::try_from(22u8).map(ThreadPriority::Crossplatform);
    let set = priority
        .map_err(|e| e.to_string())
        .and_then(|p| thread_priority::set_current_thread_priority(p).map_err(|e| e.to_string()));
    if let Err(e) = set {
        tracing::debug!(error = %e, "the webhook workers run at the usual priority");
    }
}

/// Records `attempts`, then disables each webhook among them that has failed for longer than
/// [`Config::webhook_disable_after`] (the rule is decided here and applied by the store to
/// the record as it stands: a success recorded meanwhile keeps the webhook on).
async fn record(
    store: &dyn WebhookStore,
    attempts: &[Attempt],
    config: &Config,
) -> Result<(), StoreError> {
    store.record_attempts(attempts).await?;
    let failed: HashSet<Uuid> = attempts
        .iter()
        .filter(|a| !a.succeeded())
        .map(|a| a.webhook_id)
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    let at = now();
    let rule = WebhookChange::disable_if_failing_since(before(at, config.webhook_disable_after));
    for id in failed {
        // Its `webhook.updated` names its workspace, which never changes.
        let Some(hook) = store.get_webhook(id).await? else {
            continue;
        };
        let log = Log::ANONYMOUS.in_workspace(hook.workspace_id.as_deref());
        store.update_webhook(id, &rule, at, &log).await?;
    }
    Ok(())
}

/// `at` less `age` (the earliest time when `age` is more than there is).
fn before(at: DateTime<Utc>, age: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(age)
        .ok()
        .and_then(|age| at.checked_sub_signed(age))
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}
