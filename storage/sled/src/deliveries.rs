//! Webhook streams and deliveries: streams leased and advanced, retries claimed, outcomes
//! recorded, deliveries listed, retried and purged (see `webhooks.rs` for the trees).
//!
//! A sled transaction takes the database's one write lock, which every other write waits
//! for, so delivery bookkeeping (writes for every event while an API writes) uses no
//! transaction: each operation is a few single-key writes, made one operation at a time
//! under a lock of this store ([`DeliveryLock`]; a sled directory is open in one process).
//! The record is the truth and the index keys follow it; a crash between two of its writes
//! can only leave an index key that the next claim finds stale and removes, or deliveries
//! stored while their stream had not moved yet (their events are sent again, with the same
//! `webhook-id`).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use assetlib_core::Page;
use assetlib_core::events::EventCursor;
use assetlib_core::webhooks::{Attempt, Claimed, Delivery, DeliveryStatus, Webhook};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::Error;
use crate::record::{Ts, decode, encode};
use crate::webhooks::WebhookRec;
use crate::{Inner, tree_keys};

/// Where a webhook's stream stands, and who holds it until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StreamRec {
    pub(crate) at: (u64, u64),
    pub(crate) holder: Option<([u8; 16], Ts)>,
}

impl StreamRec {
    pub(crate) const WHAT: &'static str = "webhook stream";
}

/// A delivery, without its id (the key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct DeliveryRec {
    webhook: [u8; 16],
    event: [u8; 16],
    event_type: String,
    event_at: (u64, u64),
    /// 0 pending, 1 succeeded, 2 failed.
    status: u8,
    attempts: u32,
    created_at: Ts,
    last_attempt_at: Option<Ts>,
    last_response_status: Option<u16>,
    last_error: Option<String>,
    next_attempt_at: Option<Ts>,
}

impl DeliveryRec {
    const WHAT: &'static str = "webhook delivery";

    fn new(d: &Delivery) -> Self {
        DeliveryRec {
            webhook: d.webhook_id.into_bytes(),
            event: d.event_id.into_bytes(),
            event_type: d.event_type.clone(),
            event_at: (d.event_at.0, d.event_at.1),
            status: match d.status {
                DeliveryStatus::Pending => 0,
                DeliveryStatus::Succeeded => 1,
                DeliveryStatus::Failed => 2,
            },
            attempts: d.attempts,
            created_at: (&d.created_at).into(),
            last_attempt_at: d.last_attempt_at.as_ref().map(Ts::from),
            last_response_status: d.last_response_status,
            last_error: d.last_error.clone(),
            next_attempt_at: d.next_attempt_at.as_ref().map(Ts::from),
        }
    }

    fn into_delivery(self, id: Uuid) -> Result<Delivery, Error> {
        Ok(Delivery {
            id,
            webhook_id: Uuid::from_bytes(self.webhook),
            event_id: Uuid::from_bytes(self.event),
            event_type: self.event_type,
            event_at: EventCursor(self.event_at.0, self.event_at.1),
            status: match self.status {
                0 => DeliveryStatus::Pending,
                1 => DeliveryStatus::Succeeded,
                2 => DeliveryStatus::Failed,
                other => return Err(Error::invalid(Self::WHAT, format!("status {other}"))),
            },
            attempts: self.attempts,
            created_at: self.created_at.time()?,
            last_attempt_at: self.last_attempt_at.map(Ts::time).transpose()?,
            last_response_status: self.last_response_status,
            last_error: self.last_error,
            next_attempt_at: self.next_attempt_at.map(Ts::time).transpose()?,
        })
    }
}

/// A delivery's key in `delivery_due` (pending deliveries only).
fn due_key(next: &DateTime<Utc>, id: Uuid) -> [u8; 28] {
    tree_keys::pass_place(next, id)
}

/// When a pending delivery is due.
fn due_of(d: &Delivery) -> Option<DateTime<Utc>> {
    d.next_attempt_at
        .filter(|_| d.status == DeliveryStatus::Pending)
}

/// A delivery's key in `webhook_deliveries`.
fn listed_key(webhook: Uuid, created_at: &DateTime<Utc>, id: Uuid) -> Vec<u8> {
    let mut key = webhook.as_bytes().to_vec();
    key.extend_from_slice(&tree_keys::ts(created_at));
    key.extend_from_slice(id.as_bytes());
    key
}

/// Delivery bookkeeping runs one operation at a time in this process.
#[derive(Debug, Default)]
pub(crate) struct DeliveryLock(Mutex<()>);

impl DeliveryLock {
    /// Holds the lock until the guard is dropped.
    pub(crate) fn hold(&self) -> MutexGuard<'_, ()> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a batch of attempts says of one webhook.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HookOutcome {
    /// An attempt succeeded: the failure time starts afresh.
    pub(crate) reset: bool,
    /// The first failure after the last success.
    pub(crate) since: Option<DateTime<Utc>>,
}

impl Inner {
    /// The delivery `id`, if it is there.
    pub(crate) fn delivery(&self, id: Uuid) -> Result<Option<Delivery>, Error> {
        self.get(&self.deliveries, id.as_bytes())?
            .map(|v| decode::<DeliveryRec>(DeliveryRec::WHAT, &v)?.into_delivery(id))
            .transpose()
    }

    /// Writes `d` (new, or changed from `old`): the record, then its due key and list key.
    fn put_delivery(&self, d: &Delivery, old: Option<&Delivery>) -> Result<(), Error> {
        let value = encode(DeliveryRec::WHAT, &DeliveryRec::new(d))?;
        self.deliveries.insert(d.id.as_bytes(), value)?;
        let (before, after) = (old.and_then(due_of), due_of(d));
        if before != after {
            if let Some(next) = before {
                self.delivery_due.remove(due_key(&next, d.id))?;
            }
            if let Some(next) = after {
                self.delivery_due
                    .insert(due_key(&next, d.id), d.webhook_id.as_bytes())?;
            }
        }
        if old.is_none() {
            self.webhook_deliveries
                .insert(listed_key(d.webhook_id, &d.created_at, d.id), &[][..])?;
        }
        Ok(())
    }

    /// Adds `delta` to the delivery count of `webhook`.
    fn count_deliveries(&self, webhook: Uuid, delta: i64) -> Result<(), Error> {
        self.webhook_counts
            .update_and_fetch(webhook.as_bytes(), |old| {
                let old = old
                    .and_then(|v| <[u8; 8]>::try_from(v).ok())
                    .map_or(0, u64::from_be_bytes);
                Some(old.saturating_add_signed(delta).to_be_bytes().to_vec())
            })?;
        Ok(())
    }

    fn stream_rec(&self, id: Uuid) -> Result<Option<StreamRec>, Error> {
        self.get(&self.webhook_streams, id.as_bytes())?
            .map(|v| decode(StreamRec::WHAT, &v))
            .transpose()
    }

    /// Stores where the stream of webhook `id` stands (the caller holds the delivery lock).
    pub(crate) fn put_stream(&self, id: Uuid, rec: &StreamRec) -> Result<(), Error> {
        self.webhook_streams
            .insert(id.as_bytes(), encode(StreamRec::WHAT, rec)?)?;
        Ok(())
    }

    pub(crate) fn lease_stream(
        &self,
        id: Uuid,
        holder: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<EventCursor>, Error> {
        let _one = self.delivery_lock.hold();
        let Some(hook) = self.hook_rec(id)?.filter(|w| w.enabled) else {
            return Ok(None);
        };
        // A new webhook's stream starts where its record says.
        let mut rec = self.stream_rec(id)?.unwrap_or(StreamRec {
            at: (0, hook.stream_start),
            holder: None,
        });
        if let Some((other, end)) = rec.holder
            && other != holder.into_bytes()
            && end.time()? > now
        {
            return Ok(None);
        }
        rec.holder = Some((holder.into_bytes(), (&until).into()));
        self.put_stream(id, &rec)?;
        Ok(Some(EventCursor(rec.at.0, rec.at.1)))
    }

    /// When the stream is still at `from` and held by `holder`: stores the deliveries, then
    /// moves the stream and its lease.
    pub(crate) fn advance_stream(
        &self,
        id: Uuid,
        holder: Uuid,
        (from, to): (EventCursor, EventCursor),
        deliveries: &[Delivery],
        until: DateTime<Utc>,
    ) -> Result<bool, Error> {
        let _one = self.delivery_lock.hold();
        let Some(mut rec) = self.stream_rec(id)? else {
            return Ok(false);
        };
        let held = rec.holder.is_some_and(|(h, _)| h == holder.into_bytes());
        if rec.at != (from.0, from.1) || !held || self.hook_rec(id)?.is_none() {
            return Ok(false);
        }
        for d in deliveries {
            self.put_delivery(d, None)?;
        }
        self.count_deliveries(id, i64::try_from(deliveries.len()).unwrap_or(i64::MAX))?;
        rec.at = (to.0, to.1);
        rec.holder = Some((holder.into_bytes(), (&until).into()));
        self.put_stream(id, &rec)?;
        Ok(true)
    }

    pub(crate) fn insert_delivery(&self, d: &Delivery) -> Result<bool, Error> {
        let _one = self.delivery_lock.hold();
        if self.hook_rec(d.webhook_id)?.is_none() {
            return Ok(false);
        }
        self.put_delivery(d, None)?;
        self.count_deliveries(d.webhook_id, 1)?;
        Ok(true)
    }

    /// Walks `delivery_due` up to `now`, leasing up to `limit` pending deliveries of enabled
    /// webhooks (and removing keys that are stale: of a delivery or webhook gone, or of a
    /// time the record no longer has).
    pub(crate) fn claim(
        &self,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Claimed>, Error> {
        let _one = self.delivery_lock.hold();
        let mut hooks: HashMap<Uuid, Option<Webhook>> = HashMap::new();
        let end = due_key(&now, Uuid::max());
        let mut claimed = Vec::new();
        // The keys are read as the walk goes (a lease moves a key past `now`, out of the
        // walk's range), and the walk stops at `limit` claims.
        for item in self.delivery_due.range(..=&end[..]) {
            if claimed.len() >= limit as usize {
                break;
            }
            let (key, value) = item?;
            self.touched(1);
            let webhook = crate::record::decode_id("due webhook", &value)?;
            let hook = match hooks.get(&webhook) {
                Some(hook) => hook.clone(),
                None => {
                    let hook = self
                        .hook_rec(webhook)?
                        .map(|rec| rec.into_webhook(webhook))
                        .transpose()?;
                    hooks.insert(webhook, hook.clone());
                    hook
                }
            };
            let id = tree_keys::trailing_id(&key)?;
            let old = self.delivery(id)?;
            let (Some(hook), Some(old)) = (hook, old) else {
                self.delivery_due.remove(&key)?;
                continue;
            };
            let current = due_of(&old).map(|t| due_key(&t, id));
            if current.as_ref().map(|k| &k[..]) != Some(&key[..]) {
                self.delivery_due.remove(&key)?;
                continue;
            }
            if !hook.enabled {
                continue;
            }
            let new = Delivery {
                attempts: old.attempts.saturating_add(1),
                next_attempt_at: Some(until),
                ..old.clone()
            };
            self.put_delivery(&new, Some(&old))?;
            let event = match new.event_at {
                EventCursor(0, place) if place > 0 => self.event_at(place)?,
                _ => None,
            };
            claimed.push(Claimed {
                delivery: new,
                url: hook.url,
                secret: hook.secret,
                event,
            });
        }
        Ok(claimed)
    }

    /// Records the attempts; answers what they say of each webhook, for
    /// [`Inner::note_failures`].
    pub(crate) fn record(&self, attempts: &[Attempt]) -> Result<HashMap<Uuid, HookOutcome>, Error> {
        let _one = self.delivery_lock.hold();
        let mut per_hook: HashMap<Uuid, HookOutcome> = HashMap::new();
        for attempt in attempts {
            if let Some(old) = self.delivery(attempt.delivery_id)? {
                self.put_delivery(&old.after(attempt), Some(&old))?;
            }
            let hook = per_hook.entry(attempt.webhook_id).or_insert(HookOutcome {
                reset: false,
                since: None,
            });
            if attempt.succeeded() {
                *hook = HookOutcome {
                    reset: true,
                    since: None,
                };
            } else {
                hook.since = hook.since.or(Some(attempt.at));
            }
        }
        Ok(per_hook)
    }

    /// Sets the failure time of webhook `id` after attempts, one atomic change of its
    /// record.
    pub(crate) fn note_failures(&self, id: Uuid, outcome: HookOutcome) -> Result<(), Error> {
        let HookOutcome { reset, since, .. } = outcome;
        let mut failure: Option<Error> = None;
        self.webhooks.update_and_fetch(id.as_bytes(), |old| {
            let old = old?;
            let mut rec: WebhookRec = match decode(WebhookRec::WHAT, old) {
                Ok(rec) => rec,
                Err(e) => {
                    failure = Some(e);
                    return Some(old.to_vec());
                }
            };
            let now = if reset {
                since.map(|t| Ts::from(&t))
            } else {
                rec.failing_since.or(since.map(|t| Ts::from(&t)))
            };
            rec.failing_since = now;
            match encode(WebhookRec::WHAT, &rec) {
                Ok(v) => Some(v),
                Err(e) => {
                    failure = Some(e);
                    Some(old.to_vec())
                }
            }
        })?;
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// One page of a webhook's deliveries from `webhook_deliveries`, newest first; the total
    /// is its count.
    pub(crate) fn list_deliveries(
        &self,
        webhook: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<Delivery>, Error> {
        let total = self
            .get(&self.webhook_counts, webhook.as_bytes())?
            .and_then(|v| <[u8; 8]>::try_from(&v[..]).ok())
            .map_or(0, u64::from_be_bytes);
        let mut items = Vec::new();
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        for item in self
            .scan(&self.webhook_deliveries, webhook.as_bytes(), true)
            .skip(skip)
        {
            if items.len() >= limit as usize {
                break;
            }
            let (key, _) = item?;
            if let Some(d) = self.delivery(tree_keys::trailing_id(&key)?)? {
                items.push(d);
            }
        }
        Ok(Page { items, total })
    }

    pub(crate) fn retry(
        &self,
        webhook: Uuid,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<Delivery>, Error> {
        let _one = self.delivery_lock.hold();
        let Some(old) = self.delivery(id)?.filter(|d| d.webhook_id == webhook) else {
            return Ok(None);
        };
        let new = Delivery {
            status: DeliveryStatus::Pending,
            next_attempt_at: Some(now),
            ..old.clone()
        };
        self.put_delivery(&new, Some(&old))?;
        Ok(Some(new))
    }

    /// Removes the deliveries of webhook `id` made before `before` (all, and its count, when
    /// `None`), oldest first; returns how many.
    pub(crate) fn remove_deliveries_of(
        &self,
        id: Uuid,
        before: Option<DateTime<Utc>>,
    ) -> Result<u64, Error> {
        let _one = self.delivery_lock.hold();
        let mut removed = 0;
        for item in self.webhook_deliveries.scan_prefix(id.as_bytes()) {
            let (key, _) = item?;
            let delivery = tree_keys::trailing_id(&key)?;
            if let Some(d) = self.delivery(delivery)? {
                if before.is_some_and(|b| d.created_at >= b) {
                    break;
                }
                if let Some(next) = due_of(&d) {
                    self.delivery_due.remove(due_key(&next, d.id))?;
                }
                self.deliveries.remove(d.id.as_bytes())?;
                removed += 1;
            }
            self.webhook_deliveries.remove(key)?;
        }
        match before {
            None => {
                self.webhook_counts.remove(id.as_bytes())?;
                self.webhook_streams.remove(id.as_bytes())?;
            }
            Some(_) => self.count_deliveries(id, -i64::try_from(removed).unwrap_or(i64::MAX))?,
        }
        Ok(removed)
    }

    pub(crate) fn purge_deliveries(&self, before: DateTime<Utc>) -> Result<u64, Error> {
        let mut ids = Vec::new();
        for item in self.webhooks.iter() {
            let (key, _) = item?;
            ids.push(crate::record::decode_id("webhook id", &key)?);
        }
        let mut removed = 0;
        for id in ids {
            removed += self.remove_deliveries_of(id, Some(before))?;
        }
        Ok(removed)
    }
}
