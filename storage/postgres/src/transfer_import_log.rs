//! The event log of an import (feature `transfer`; see `transfer_import.rs`): the events
//! appended in their order, webhooks with their streams and deliveries with their events at
//! their places in this log.

use std::collections::{HashMap, HashSet};

use assetlib_core::StoreError;
use assetlib_core::events::EventCursor;
use assetlib_core::transfer::{DeliveryRecord, EventRecord, WebhookRecord};
use uuid::Uuid;

use crate::error::Failure;
use crate::transfer_import::{Writer, col, corrupt, ids, json_list, text_array};

impl Writer<'_> {
    /// Where the events `ids` are in this log (`xid`, `seq`).
    async fn places(&self, ids: &[Uuid]) -> Result<HashMap<Uuid, (i64, i64)>, StoreError> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let sql = format!(
            "SELECT id, xid::text::bigint, seq FROM {}.events WHERE id = ANY($1) \
             ORDER BY xid, seq",
            self.s
        );
        let mut places = HashMap::new();
        for row in self.run("event", &sql, &[&ids]).await? {
            let place = (
                row.try_get(1).map_err(Failure::from)?,
                row.try_get(2).map_err(Failure::from)?,
            );
            places
                .entry(row.try_get(0).map_err(Failure::from)?)
                .or_insert(place);
        }
        Ok(places)
    }

    /// The events, appended to this log in their order (this transaction's places: after
    /// every event here), those whose id the log holds left out.
    pub(crate) async fn events(&self, events: &[&EventRecord]) -> Result<(), StoreError> {
        if events.is_empty() {
            return Ok(());
        }
        let parsed = events
            .iter()
            .map(|e| {
                e.event(EventCursor::START)
                    .ok_or_else(|| corrupt(format!("event {} is of an unknown type", e.id)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let e: Vec<&assetlib_core::events::Event> = parsed.iter().collect();
        // The order of the rows fed to the insert is the order their `seq` is taken in.
        let sql = format!(
            "INSERT INTO {s}.events (id, type, occurred_at, actor_key_id, actor_key_name, \
                 resource_type, resource_id, changed, workspace_id) \
             SELECT x.id, x.type, x.occurred_at, x.key_id, x.key_name, x.resource_type, \
                 x.resource_id, {changed}, x.workspace_id \
             FROM (SELECT u.* FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], \
                     $4::uuid[], $5::text[], $6::text[], $7::uuid[], $8::text[], $9::text[]) \
                     WITH ORDINALITY AS u(id, type, occurred_at, key_id, key_name, \
                         resource_type, resource_id, changed, workspace_id, n) \
                 WHERE NOT EXISTS (SELECT 1 FROM {s}.events h WHERE h.id = u.id) \
                 ORDER BY u.n) x",
            s = self.s,
            changed = text_array("x.changed", "text"),
        );
        self.run(
            "event",
            &sql,
            &[
                &col(&e, |e| e.id),
                &col(&e, |e| e.kind.as_str()),
                &col(&e, |e| e.occurred_at),
                &col(&e, |e| e.actor.as_ref().map(|a| a.key_id)),
                &col(&e, |e| e.actor.as_ref().map(|a| a.key_name.as_str())),
                &col(&e, |e| e.resource_type.as_str()),
                &col(&e, |e| e.resource_id),
                &col(&e, |e| json_list(&e.changed)),
                &col(&e, |e| e.workspace_id.as_deref()),
            ],
        )
        .await?;
        Ok(())
    }

    /// The webhooks, each stream at the place of the event it was delivered through in
    /// this log (the start when none, or when that event is not here), not leased.
    pub(crate) async fn webhooks(&self, hooks: &[&WebhookRecord]) -> Result<(), StoreError> {
        if hooks.is_empty() {
            return Ok(());
        }
        for w in hooks {
            if w.webhook().is_none() {
                return Err(corrupt(format!(
                    "webhook {} has an unknown event type",
                    w.id
                )));
            }
        }
        let through: Vec<Uuid> = hooks.iter().filter_map(|w| w.delivered_through).collect();
        let places = self.places(&through).await?;
        let at: Vec<(i64, i64)> = hooks
            .iter()
            .map(|w| {
                w.delivered_through
                    .and_then(|id| places.get(&id).copied())
                    .unwrap_or((0, 0))
            })
            .collect();
        let sql = format!(
            "INSERT INTO {s}.webhooks ({cols}, stream_xid, stream_seq) \
             SELECT x.id, x.url, {types}, x.enabled, x.secret, x.created_at, x.updated_at, \
                 x.failing_since, x.workspace_id, x.xid, x.seq \
             FROM unnest($1::uuid[], $2::text[], $3::text[], $4::boolean[], $5::text[], \
                 $6::timestamptz[], $7::timestamptz[], $8::timestamptz[], $9::text[], \
                 $10::bigint[], $11::bigint[]) \
                 AS x(id, url, event_types, enabled, secret, created_at, updated_at, \
                     failing_since, workspace_id, xid, seq) \
             ON CONFLICT (id) DO NOTHING",
            s = self.s,
            cols = crate::webhooks::hook_cols(""),
            types = text_array("x.event_types", "text"),
        );
        self.run(
            "webhook",
            &sql,
            &[
                &col(hooks, |w| w.id),
                &col(hooks, |w| w.url.as_str()),
                &col(hooks, |w| json_list(&w.event_types)),
                &col(hooks, |w| w.enabled),
                &col(hooks, |w| w.secret.as_str()),
                &col(hooks, |w| w.created_at),
                &col(hooks, |w| w.updated_at),
                &col(hooks, |w| w.failing_since),
                &col(hooks, |w| w.workspace_id.as_deref()),
                &at.iter().map(|p| p.0).collect::<Vec<_>>(),
                &at.iter().map(|p| p.1).collect::<Vec<_>>(),
            ],
        )
        .await?;
        Ok(())
    }

    /// The deliveries, each of a webhook here, its event at its place in this log (the
    /// start for a test delivery, whose event is in no log).
    pub(crate) async fn deliveries(
        &self,
        deliveries: &[&DeliveryRecord],
    ) -> Result<(), StoreError> {
        if deliveries.is_empty() {
            return Ok(());
        }
        let mut hooks: Vec<Uuid> = deliveries.iter().map(|d| d.webhook_id).collect();
        hooks.sort_unstable();
        hooks.dedup();
        let sql = format!("SELECT id FROM {}.webhooks WHERE id = ANY($1)", self.s);
        let known: HashSet<Uuid> = ids(&self.run("delivery", &sql, &[&hooks]).await?)?
            .into_iter()
            .collect();
        let logged: Vec<Uuid> = deliveries
            .iter()
            .filter(|d| d.in_log)
            .map(|d| d.event_id)
            .collect();
        let places = self.places(&logged).await?;
        let mut at = Vec::with_capacity(deliveries.len());
        for d in deliveries {
            if !known.contains(&d.webhook_id) {
                return Err(corrupt(format!(
                    "delivery {} is of webhook {}, which is not here",
                    d.id, d.webhook_id
                )));
            }
            if d.delivery(EventCursor::START).is_none() {
                return Err(corrupt(format!("delivery {} has an unknown status", d.id)));
            }
            at.push(match (d.in_log, places.get(&d.event_id)) {
                (false, _) => (0, 0),
                (true, Some(place)) => *place,
                (true, None) => {
                    return Err(corrupt(format!(
                        "delivery {} carries event {}, which is not in the log",
                        d.id, d.event_id
                    )));
                }
            });
        }
        let sql = format!(
            "INSERT INTO {s}.webhook_deliveries ({cols}) \
             SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], \
                 $5::bigint[], $6::bigint[], $7::text[], $8::int[], $9::timestamptz[], \
                 $10::timestamptz[], $11::int[], $12::text[], $13::timestamptz[]) \
             ON CONFLICT (id) DO NOTHING",
            s = self.s,
            cols = crate::deliveries::delivery_cols(""),
        );
        self.run(
            "delivery",
            &sql,
            &[
                &col(deliveries, |d| d.id),
                &col(deliveries, |d| d.webhook_id),
                &col(deliveries, |d| d.event_id),
                &col(deliveries, |d| d.event_type.as_str()),
                &at.iter().map(|p| p.0).collect::<Vec<_>>(),
                &at.iter().map(|p| p.1).collect::<Vec<_>>(),
                &col(deliveries, |d| d.status.as_str()),
                &col(deliveries, |d| {
                    i32::try_from(d.attempts).unwrap_or(i32::MAX)
                }),
                &col(deliveries, |d| d.created_at),
                &col(deliveries, |d| d.last_attempt_at),
                &col(deliveries, |d| d.last_response_status.map(i32::from)),
                &col(deliveries, |d| d.last_error.as_deref()),
                &col(deliveries, |d| d.next_attempt_at),
            ],
        )
        .await?;
        Ok(())
    }
}
