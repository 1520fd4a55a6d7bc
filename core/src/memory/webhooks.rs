//! [`WebhookStore`] of the [`MemoryStore`]: everything under its one lock.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{MemoryStore, Stream, newest_first};
use crate::error::StoreError;
use crate::events::{EventCursor, Log, Written};
use crate::model::Page;
use crate::store::WebhookStore;
use crate::webhooks::{Attempt, Claimed, Delivery, DeliveryStatus, Webhook, WebhookChange};

#[async_trait]
impl WebhookStore for MemoryStore {
    async fn insert_webhook(&self, webhook: Webhook, log: &Log) -> Result<(), StoreError> {
        let mut state = self.write();
        if state.webhooks.contains_key(&webhook.id) {
            return Err(StoreError::DuplicateId { id: webhook.id });
        }
        state.log(log, Written::WebhookCreated(webhook.id));
        let stream = Stream {
            at: EventCursor(0, state.last_event),
            holder: None,
        };
        state.streams.insert(webhook.id, stream);
        state.webhooks.insert(webhook.id, webhook);
        Ok(())
    }

    async fn get_webhook(&self, id: Uuid) -> Result<Option<Webhook>, StoreError> {
        Ok(self.read().webhooks.get(&id).cloned())
    }

    async fn list_webhooks(&self, offset: u64, limit: u32) -> Result<Page<Webhook>, StoreError> {
        let state = self.read();
        let all = state.webhooks.values().collect();
        Ok(newest_first(all, |w| (w.created_at, w.id), offset, limit))
    }

    async fn update_webhook(
        &self,
        id: Uuid,
        change: &WebhookChange,
        now: DateTime<Utc>,
        log: &Log,
    ) -> Result<Option<Webhook>, StoreError> {
        let mut state = self.write();
        let Some(old) = state.webhooks.get(&id) else {
            return Ok(None);
        };
        let Some((new, changed)) = change.apply(old, now) else {
            return Ok(Some(old.clone()));
        };
        state.log(
            log,
            Written::WebhookChanged {
                id,
                changed: &changed,
            },
        );
        state.webhooks.insert(id, new.clone());
        Ok(Some(new))
    }

    async fn delete_webhook(&self, id: Uuid, log: &Log) -> Result<bool, StoreError> {
        let mut state = self.write();
        if state.webhooks.remove(&id).is_none() {
            return Ok(false);
        }
        state.deliveries.retain(|_, d| d.webhook_id != id);
        state.streams.remove(&id);
        state.log(log, Written::WebhookDeleted(id));
        Ok(true)
    }

    async fn lease_stream(
        &self,
        id: Uuid,
        holder: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<EventCursor>, StoreError> {
        let mut state = self.write();
        if !state.webhooks.get(&id).is_some_and(|w| w.enabled) {
            return Ok(None);
        }
        let Some(stream) = state.streams.get_mut(&id) else {
            return Ok(None);
        };
        if stream
            .holder
            .is_some_and(|(other, end)| other != holder && end > now)
        {
            return Ok(None);
        }
        stream.holder = Some((holder, until));
        Ok(Some(stream.at))
    }

    async fn advance_stream(
        &self,
        id: Uuid,
        holder: Uuid,
        (from, to): (EventCursor, EventCursor),
        deliveries: Vec<Delivery>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut state = self.write();
        let Some(stream) = state.streams.get_mut(&id) else {
            return Ok(false);
        };
        if stream.at != from || stream.holder.map(|(h, _)| h) != Some(holder) {
            return Ok(false);
        }
        stream.at = to;
        stream.holder = Some((holder, until));
        for delivery in deliveries {
            state.deliveries.insert(delivery.id, delivery);
        }
        Ok(true)
    }

    async fn insert_delivery(&self, delivery: Delivery) -> Result<bool, StoreError> {
        let mut state = self.write();
        if !state.webhooks.contains_key(&delivery.webhook_id) {
            return Ok(false);
        }
        state.deliveries.insert(delivery.id, delivery);
        Ok(true)
    }

    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Claimed>, StoreError> {
        let mut state = self.write();
        let mut due: Vec<(DateTime<Utc>, Uuid)> = state
            .deliveries
            .values()
            .filter(|d| d.status == DeliveryStatus::Pending)
            .filter_map(|d| Some((d.next_attempt_at?, d.id, d.webhook_id)))
            .filter(|(at, _, hook)| {
                *at <= now && state.webhooks.get(hook).is_some_and(|w| w.enabled)
            })
            .map(|(at, id, _)| (at, id))
            .collect();
        due.sort_unstable();
        due.truncate(limit as usize);
        let mut claimed = Vec::with_capacity(due.len());
        for (_, id) in due {
            let Some(delivery) = state.deliveries.get_mut(&id) else {
                continue;
            };
            delivery.attempts += 1;
            delivery.next_attempt_at = Some(until);
            let delivery = delivery.clone();
            let event = match delivery.event_at {
                EventCursor(0, place) => state
                    .events
                    .binary_search_by_key(&place, |(at, _)| *at)
                    .ok()
                    .map(|n| state.events[n].1.clone()),
                _ => None,
            };
            if let Some(hook) = state.webhooks.get(&delivery.webhook_id) {
                claimed.push(Claimed {
                    url: hook.url.clone(),
                    secret: hook.secret.clone(),
                    delivery,
                    event,
                });
            }
        }
        Ok(claimed)
    }

    async fn record_attempts(&self, attempts: &[Attempt]) -> Result<(), StoreError> {
        let mut state = self.write();
        for attempt in attempts {
            if let Some(d) = state.deliveries.get_mut(&attempt.delivery_id) {
                *d = d.after(attempt);
            }
            let Some(hook) = state.webhooks.get_mut(&attempt.webhook_id) else {
                continue;
            };
            if attempt.succeeded() {
                hook.failing_since = None;
            } else {
                hook.failing_since.get_or_insert(attempt.at);
            }
        }
        Ok(())
    }

    async fn list_deliveries(
        &self,
        webhook_id: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<Delivery>, StoreError> {
        let state = self.read();
        let hits = state
            .deliveries
            .values()
            .filter(|d| d.webhook_id == webhook_id)
            .collect();
        Ok(newest_first(hits, |d| (d.created_at, d.id), offset, limit))
    }

    async fn retry_delivery(
        &self,
        webhook_id: Uuid,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<Delivery>, StoreError> {
        let mut state = self.write();
        let Some(d) = state
            .deliveries
            .get_mut(&id)
            .filter(|d| d.webhook_id == webhook_id)
        else {
            return Ok(None);
        };
        d.status = DeliveryStatus::Pending;
        d.next_attempt_at = Some(now);
        Ok(Some(d.clone()))
    }

    async fn purge_deliveries(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut state = self.write();
        let old = state.deliveries.len();
        state.deliveries.retain(|_, d| d.created_at >= before);
        Ok((old - state.deliveries.len()) as u64)
    }
}
