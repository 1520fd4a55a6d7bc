//! [`WebhookStore`]: registered webhooks, their streams (how far in the event log each has had
//! its events), and their deliveries.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::error::StoreError;
use crate::events::{EventCursor, Log};
use crate::model::Page;
use crate::webhooks::{Attempt, Claimed, Delivery, Webhook, WebhookChange};

/// Webhooks and their deliveries ([`crate::webhooks`]). Like every write of the other
/// traits, a write that changes a webhook appends its event in the same atomic change
/// (`insert_webhook`: `webhook.created`; `update_webhook`, also when the service disables a
/// webhook that failed too long: `webhook.updated` with the changed fields; `delete_webhook`:
/// `webhook.deleted`). Delivery bookkeeping (enqueue, claim, attempts, retries, purges) is no
/// event, and need not be durable at once: a crash may only make a delivery go out again.
///
/// A webhook's new events go out by its stream ([`WebhookStore::lease_stream`]): one process
/// at a time reads them from the log, sends each once, and records them as deliveries with the
/// stream's new place ([`WebhookStore::advance_stream`]). A first attempt that failed is a
/// pending delivery, retried by whichever process claims it when it is due
/// ([`WebhookStore::claim_deliveries`]).
#[async_trait]
pub trait WebhookStore: Send + Sync + 'static {
    /// Stores a new webhook. One with the same id is [`StoreError::DuplicateId`]; nothing
    /// changes then.
    async fn insert_webhook(&self, webhook: Webhook, log: &Log) -> Result<(), StoreError>;

    /// The webhook with this id.
    async fn get_webhook(&self, id: Uuid) -> Result<Option<Webhook>, StoreError>;

    /// One page of the webhooks (`limit` from `offset`), newest `created_at` first, then by id
    /// descending; and how many there are.
    async fn list_webhooks(&self, offset: u64, limit: u32) -> Result<Page<Webhook>, StoreError>;

    /// Applies `change` ([`WebhookChange::apply`] at `now`, to the webhook as stored when the
    /// change lands) and returns the webhook after it (`None` if there is none). When `apply`
    /// answers `None`, nothing is written and no event appended.
    async fn update_webhook(
        &self,
        id: Uuid,
        change: &WebhookChange,
        now: DateTime<Utc>,
        log: &Log,
    ) -> Result<Option<Webhook>, StoreError>;

    /// Deletes a webhook and its deliveries: once it returns, none of them is listed or
    /// claimed any more. `false` if there was none.
    async fn delete_webhook(&self, id: Uuid, log: &Log) -> Result<bool, StoreError>;

    /// Leases the stream of webhook `id` to `holder` until `until`: the events of the log a
    /// webhook has not had yet, which its holder sends (each event's first attempt) and then
    /// records with [`WebhookStore::advance_stream`]. Answers where the stream stands when the
    /// webhook exists, is enabled, and no other holder's lease runs at `now` (the same
    /// holder renews its own); else `None`, changing nothing. So one process at a time, of
    /// all those sharing the store, sends a webhook's new events. A webhook's stream starts
    /// at the end of the log when it is made: the events of writes that start after it.
    async fn lease_stream(
        &self,
        id: Uuid,
        holder: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<EventCursor>, StoreError>;

    /// When webhook `id`'s stream is still at `from` and leased to `holder`: stores
    /// `deliveries` as they are (the first attempts its holder made: succeeded, failed, or
    /// pending a retry), moves the stream to `to` and the lease to `until`, and answers
    /// `true`. Otherwise (the webhook is gone, or another holder took the stream over)
    /// nothing changes and the answer is `false`. A store that cannot write both in one
    /// change writes the deliveries first; after a crash between the two, the holder sends
    /// those events again (with the same `webhook-id`), as at-least-once allows.
    async fn advance_stream(
        &self,
        id: Uuid,
        holder: Uuid,
        (from, to): (EventCursor, EventCursor),
        deliveries: Vec<Delivery>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError>;

    /// Stores one delivery as it is (a test delivery, already attempted). `false`, storing
    /// nothing, when its webhook does not exist.
    async fn insert_delivery(&self, delivery: Delivery) -> Result<bool, StoreError>;

    /// Claims up to `limit` pending deliveries (retries) due at `now` (`next_attempt_at <= now`) of
    /// enabled webhooks, earliest due first: each gets one more attempt and `next_attempt_at =
    /// until` (its lease), atomically, so no other call, from any process sharing the store,
    /// claims it again before `until`. Answers them with their webhook's URL and secret, and
    /// the event at their `event_at` while the log has it.
    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Claimed>, StoreError>;

    /// Records the outcome of attempts: each delivery that still exists becomes
    /// [`Delivery::after`] its attempt. For each webhook, a successful attempt clears
    /// `failing_since`; a failed one sets it to the attempt's time when it is `None`.
    /// Attempts of webhooks that are gone are ignored. (Whether a webhook has failed too long
    /// is the service's to decide: it then sends [`WebhookChange::disable_if_failing_since`].)
    async fn record_attempts(&self, attempts: &[Attempt]) -> Result<(), StoreError>;

    /// One page of a webhook's deliveries (`limit` from `offset`), newest `created_at` first,
    /// then by id descending; and how many it has.
    async fn list_deliveries(
        &self,
        webhook_id: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<Delivery>, StoreError>;

    /// Makes the delivery `id` of the webhook `webhook_id` pending and due at `now` (its
    /// attempts so far are kept) and returns it; `None` if the webhook has no such delivery.
    async fn retry_delivery(
        &self,
        webhook_id: Uuid,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<Delivery>, StoreError>;

    /// Removes the deliveries made before `before`; returns how many.
    async fn purge_deliveries(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;
}
