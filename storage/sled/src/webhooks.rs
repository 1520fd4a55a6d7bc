//! Webhooks and their deliveries ([`WebhookStore`]).
//!
//! | tree | key | value |
//! |---|---|---|
//! | `webhooks` | webhook `id` | [`WebhookRec`] |
//! | `webhook_streams` | webhook `id` | where its stream stands in the event log, and who holds it until when |
//! | `webhook_counts` | webhook `id` | its number of deliveries (big-endian `u64`) |
//! | `deliveries` | delivery `id` | a delivery record (its event's place in the log, not its body) |
//! | `delivery_due` | `ts(next_attempt_at)` + delivery `id` | the webhook's `id` (pending deliveries only) |
//! | `webhook_deliveries` | webhook `id` + `ts(created_at)` + delivery `id` | empty |
//!
//! A webhook's writes append their event in their transaction, as every write does. Delivery
//! bookkeeping (`deliveries.rs`) uses no transaction and no flush of its own (sled's
//! background flush and the next durable write take it to disk): after a crash a delivery may
//! only go out again.

use assetlib_core::events::EventCursor;
use assetlib_core::events::{Log, Written};
use assetlib_core::webhooks::{Attempt, Claimed, Delivery, EventFilter, Webhook, WebhookChange};
use assetlib_core::{Page, StoreError, WebhookStore, async_trait};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sled::Transactional;
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::error::{Error, TxError, abort};
use crate::events::EventSlot;
use crate::record::{Ts, decode, encode};
use crate::{Inner, SledStore};

/// A webhook, without its id (the key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WebhookRec {
    pub(crate) url: String,
    /// `["*"]` or event type names.
    event_types: Vec<String>,
    pub(crate) enabled: bool,
    secret: String,
    created_at: Ts,
    updated_at: Ts,
    pub(crate) failing_since: Option<Ts>,
    /// The place in the event log of its `webhook.created` event, where its stream starts.
    pub(crate) stream_start: u64,
    /// The workspace whose events it receives (format 8 on; the upgrade gives older records
    /// `None`).
    workspace_id: Option<String>,
}

impl WebhookRec {
    pub(crate) const WHAT: &'static str = "webhook";

    /// The record of `w`, its stream starting before every event (see
    /// [`WebhookRec::starting_at`]).
    pub(crate) fn new(w: &Webhook) -> Self {
        WebhookRec {
            url: w.url.clone(),
            event_types: w
                .event_types
                .names()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            enabled: w.enabled,
            secret: w.secret.clone(),
            created_at: (&w.created_at).into(),
            updated_at: (&w.updated_at).into(),
            failing_since: w.failing_since.as_ref().map(Ts::from),
            stream_start: 0,
            workspace_id: w.workspace_id.clone(),
        }
    }

    /// The record with its stream starting at `place`.
    pub(crate) fn starting_at(self, place: u64) -> Self {
        WebhookRec {
            stream_start: place,
            ..self
        }
    }

    pub(crate) fn into_webhook(self, id: Uuid) -> Result<Webhook, Error> {
        let event_types = EventFilter::from_names(self.event_types.iter().map(String::as_str))
            .ok_or_else(|| {
                Error::invalid(Self::WHAT, format!("event types {:?}", self.event_types))
            })?;
        Ok(Webhook {
            id,
            url: self.url,
            event_types,
            enabled: self.enabled,
            secret: self.secret,
            created_at: self.created_at.time()?,
            updated_at: self.updated_at.time()?,
            failing_since: self.failing_since.map(Ts::time).transpose()?,
            workspace_id: self.workspace_id,
        })
    }
}

/// The webhook record `id` in a transaction.
fn read_hook(hooks: &TransactionalTree, id: Uuid) -> Result<Option<WebhookRec>, TxError> {
    hooks
        .get(id.as_bytes())?
        .map(|v| decode(WebhookRec::WHAT, &v).map_err(abort))
        .transpose()
}

fn write_hook(hooks: &TransactionalTree, id: Uuid, rec: &WebhookRec) -> Result<(), TxError> {
    let value = encode(WebhookRec::WHAT, rec).map_err(abort)?;
    hooks.insert(&id.as_bytes()[..], value)?;
    Ok(())
}

impl Inner {
    pub(crate) fn hook_rec(&self, id: Uuid) -> Result<Option<WebhookRec>, Error> {
        self.get(&self.webhooks, id.as_bytes())?
            .map(|v| decode(WebhookRec::WHAT, &v))
            .transpose()
    }

    fn insert_webhook(&self, w: &Webhook, event: &EventSlot) -> Result<(), Error> {
        // Its stream starts after its own event: at the end of the log.
        let rec = WebhookRec::new(w).starting_at(event.place());
        (&self.webhooks, &self.events).transaction(|(hooks, events)| {
            if hooks.get(w.id.as_bytes())?.is_some() {
                return Err(abort(Error::DuplicateId(w.id)));
            }
            write_hook(hooks, w.id, &rec)?;
            event.put(events, Written::WebhookCreated(w.id))?;
            Ok(())
        })?;
        Ok(())
    }

    /// Every webhook record (there are few), newest first, then by id descending.
    fn list_webhooks(&self, offset: u64, limit: u32) -> Result<Page<Webhook>, Error> {
        let mut all = Vec::new();
        for item in self.webhooks.iter() {
            let (key, value) = item?;
            self.touched(1);
            let id = crate::record::decode_id("webhook id", &key)?;
            all.push(decode::<WebhookRec>(WebhookRec::WHAT, &value)?.into_webhook(id)?);
        }
        all.sort_unstable_by_key(|w| std::cmp::Reverse((w.created_at, w.id)));
        let total = all.len() as u64;
        let items = all
            .into_iter()
            .skip(usize::try_from(offset).unwrap_or(usize::MAX))
            .take(limit as usize)
            .collect();
        Ok(Page { items, total })
    }

    /// Applies `change` to the webhook `id` in one transaction; `event` names the change.
    fn update_webhook(
        &self,
        id: Uuid,
        change: &WebhookChange,
        now: DateTime<Utc>,
        event: &EventSlot,
    ) -> Result<Option<Webhook>, Error> {
        let updated = (&self.webhooks, &self.events).transaction(|(hooks, events)| {
            let Some(rec) = read_hook(hooks, id)? else {
                return Ok(None);
            };
            let start = rec.stream_start;
            let old = rec.into_webhook(id).map_err(abort)?;
            let Some((new, changed)) = change.apply(&old, now) else {
                return Ok(Some(old));
            };
            write_hook(hooks, id, &WebhookRec::new(&new).starting_at(start))?;
            event.put(
                events,
                Written::WebhookChanged {
                    id,
                    changed: &changed,
                },
            )?;
            Ok(Some(new))
        })?;
        Ok(updated)
    }

    /// Removes the record (with its event) in one transaction, then its deliveries, which no
    /// write can add to once the record is gone.
    fn delete_webhook(&self, id: Uuid, event: &EventSlot) -> Result<bool, Error> {
        let found = (&self.webhooks, &self.events).transaction(|(hooks, events)| {
            if hooks.remove(id.as_bytes())?.is_none() {
                return Ok(false);
            }
            event.put(events, Written::WebhookDeleted(id))?;
            Ok(true)
        })?;
        if found {
            self.remove_deliveries_of(id, None)?;
        }
        Ok(found)
    }
}

#[async_trait]
impl WebhookStore for SledStore {
    async fn insert_webhook(&self, webhook: Webhook, log: &Log) -> Result<(), StoreError> {
        self.logged_write(log, move |inner, event| {
            inner.insert_webhook(&webhook, event)
        })
        .await
    }

    async fn get_webhook(&self, id: Uuid) -> Result<Option<Webhook>, StoreError> {
        self.point_read(|inner| inner.hook_rec(id)?.map(|r| r.into_webhook(id)).transpose())
    }

    async fn list_webhooks(&self, offset: u64, limit: u32) -> Result<Page<Webhook>, StoreError> {
        self.blocking(move |inner| inner.list_webhooks(offset, limit))
            .await
    }

    async fn update_webhook(
        &self,
        id: Uuid,
        change: &WebhookChange,
        now: DateTime<Utc>,
        log: &Log,
    ) -> Result<Option<Webhook>, StoreError> {
        let change = change.clone();
        self.logged_write(log, move |inner, event| {
            inner.update_webhook(id, &change, now, event)
        })
        .await
    }

    async fn delete_webhook(&self, id: Uuid, log: &Log) -> Result<bool, StoreError> {
        self.logged_write(log, move |inner, event| inner.delete_webhook(id, event))
            .await
    }

    async fn lease_stream(
        &self,
        id: Uuid,
        holder: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<EventCursor>, StoreError> {
        self.blocking(move |inner| inner.lease_stream(id, holder, now, until))
            .await
    }

    async fn advance_stream(
        &self,
        id: Uuid,
        holder: Uuid,
        span: (EventCursor, EventCursor),
        deliveries: Vec<Delivery>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        self.blocking(move |inner| inner.advance_stream(id, holder, span, &deliveries, until))
            .await
    }

    async fn insert_delivery(&self, delivery: Delivery) -> Result<bool, StoreError> {
        self.blocking(move |inner| inner.insert_delivery(&delivery))
            .await
    }

    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Claimed>, StoreError> {
        self.blocking(move |inner| inner.claim(now, until, limit))
            .await
    }

    async fn record_attempts(&self, attempts: &[Attempt]) -> Result<(), StoreError> {
        let attempts = attempts.to_vec();
        self.blocking(move |inner| {
            for (id, outcome) in inner.record(&attempts)? {
                inner.note_failures(id, outcome)?;
            }
            Ok(())
        })
        .await
    }

    async fn list_deliveries(
        &self,
        webhook_id: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<Delivery>, StoreError> {
        self.blocking(move |inner| inner.list_deliveries(webhook_id, offset, limit))
            .await
    }

    async fn retry_delivery(
        &self,
        webhook_id: Uuid,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<Delivery>, StoreError> {
        self.blocking(move |inner| inner.retry(webhook_id, id, now))
            .await
    }

    async fn purge_deliveries(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        self.blocking(move |inner| inner.purge_deliveries(before))
            .await
    }
}
