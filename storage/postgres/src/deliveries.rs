//! Webhook deliveries (migration 12): enqueued with a compare-and-set of the dispatch cursor
//! in one statement, claimed with `FOR UPDATE SKIP LOCKED` and leased, attempts recorded in one
//! transaction; all of it committed with `synchronous_commit = off` (a crash can only make a
//! delivery go out again).

use std::collections::HashMap;

use assetlib_core::Page;
use assetlib_core::events::EventCursor;
use assetlib_core::webhooks::{Attempt, Claimed, Delivery, DeliveryStatus};
use chrono::{DateTime, Utc};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::error::Failure;
use crate::events::{event_cols, event_from_row};
use crate::store::{PgStore, columns, to_i64, to_u64};

const DELIVERY_COLUMNS: [&str; 13] = [
    "id",
    "webhook_id",
    "event_id",
    "event_type",
    "event_xid",
    "event_seq",
    "status",
    "attempts",
    "created_at",
    "last_attempt_at",
    "last_response_status",
    "last_error",
    "next_attempt_at",
];

/// Commits the statement's own transaction without waiting for the disk.
const ASYNC_COMMIT: &str = "SELECT set_config('synchronous_commit', 'off', true) AS off";

/// The delivery columns, each prefixed with `p`, in the order [`delivery_from_row`] reads.
pub(crate) fn delivery_cols(p: &str) -> String {
    columns(p, &DELIVERY_COLUMNS)
}

/// Decodes the columns of [`delivery_cols`] starting at `at`.
pub(crate) fn delivery_from_row(row: &Row, at: usize) -> Result<Delivery, Failure> {
    let status: String = row.try_get(at + 6)?;
    let attempts: i32 = row.try_get(at + 7)?;
    let code: Option<i32> = row.try_get(at + 10)?;
    Ok(Delivery {
        id: row.try_get(at)?,
        webhook_id: row.try_get(at + 1)?,
        event_id: row.try_get(at + 2)?,
        event_type: row.try_get(at + 3)?,
        event_at: EventCursor(
            to_u64("event xid", row.try_get(at + 4)?)?,
            to_u64("event seq", row.try_get(at + 5)?)?,
        ),
        status: DeliveryStatus::parse(&status)
            .ok_or_else(|| Failure::invalid("delivery status", status.clone()))?,
        attempts: u32::try_from(attempts)
            .map_err(|_| Failure::invalid("delivery attempts", attempts.to_string()))?,
        created_at: row.try_get(at + 8)?,
        last_attempt_at: row.try_get(at + 9)?,
        last_response_status: code
            .map(|c| u16::try_from(c).map_err(|_| Failure::invalid("status code", c.to_string())))
            .transpose()?,
        last_error: row.try_get(at + 11)?,
        next_attempt_at: row.try_get(at + 12)?,
    })
}

/// What a batch of attempts says of one webhook.
struct HookOutcome {
    /// An attempt succeeded: the failure time starts afresh.
    reset: bool,
    /// The first failure after the last success.
    since: Option<DateTime<Utc>>,
}

impl PgStore {
    /// One statement: the webhook's row taken with `FOR UPDATE SKIP LOCKED` (a replica
    /// advancing it now holds it) when it is enabled and its lease is free, run out or this
    /// holder's, and the lease written.
    pub(crate) async fn lease_stream_impl(
        &self,
        id: Uuid,
        holder: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<EventCursor>, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "WITH off AS ({ASYNC_COMMIT}), \
             free AS (SELECT id FROM {s}.webhooks WHERE id = $1 AND enabled \
                 AND (stream_until IS NULL OR stream_until <= $3 OR stream_holder = $2) \
                 FOR UPDATE SKIP LOCKED) \
             UPDATE {s}.webhooks w SET stream_holder = $2, stream_until = $4 \
             FROM free, off WHERE w.id = free.id \
             RETURNING w.stream_xid, w.stream_seq"
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query_opt(&stmt, &[&id, &holder, &now, &until])
            .await?
            .map(|row| {
                Ok(EventCursor(
                    to_u64("stream xid", row.try_get(0)?)?,
                    to_u64("stream seq", row.try_get(1)?)?,
                ))
            })
            .transpose()
    }

    /// One statement: the stream moved from `from` to `to` while `holder` holds it, and, when
    /// it moved, the deliveries inserted.
    pub(crate) async fn advance_stream_impl(
        &self,
        id: Uuid,
        holder: Uuid,
        (from, to): (EventCursor, EventCursor),
        deliveries: &[Delivery],
        until: DateTime<Utc>,
    ) -> Result<bool, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "WITH off AS ({ASYNC_COMMIT}), \
             moved AS (UPDATE {s}.webhooks SET stream_xid = $5, stream_seq = $6, \
                 stream_until = $7 \
                 WHERE id = $1 AND stream_holder = $2 AND stream_xid = $3 AND stream_seq = $4 \
                 RETURNING id), \
             ins AS (INSERT INTO {s}.webhook_deliveries ({cols}) \
                 SELECT d.id, $1, d.event_id, d.event_type, d.xid, d.seq, d.status, \
                     d.attempts, d.created_at, d.last_at, d.code, d.error, d.next \
                 FROM unnest($8::uuid[], $9::uuid[], $10::text[], $11::bigint[], \
                     $12::bigint[], $13::text[], $14::int[], $15::timestamptz[], \
                     $16::timestamptz[], $17::int[], $18::text[], $19::timestamptz[]) \
                     AS d(id, event_id, event_type, xid, seq, status, attempts, created_at, \
                     last_at, code, error, next) \
                 WHERE EXISTS (SELECT 1 FROM moved) \
                 RETURNING 1) \
             SELECT EXISTS (SELECT 1 FROM moved), (SELECT count(*) FROM ins) FROM off",
            cols = delivery_cols(""),
        );
        let column = |f: &dyn Fn(&Delivery) -> Result<i64, Failure>| {
            deliveries.iter().map(f).collect::<Result<Vec<i64>, _>>()
        };
        let ids: Vec<Uuid> = deliveries.iter().map(|d| d.id).collect();
        let events: Vec<Uuid> = deliveries.iter().map(|d| d.event_id).collect();
        let types: Vec<&str> = deliveries.iter().map(|d| d.event_type.as_str()).collect();
        let xids = column(&|d| to_i64("event xid", d.event_at.0))?;
        let seqs = column(&|d| to_i64("event seq", d.event_at.1))?;
        let statuses: Vec<&str> = deliveries.iter().map(|d| d.status.as_str()).collect();
        let attempts: Vec<i32> = deliveries
            .iter()
            .map(|d| i32::try_from(d.attempts).unwrap_or(i32::MAX))
            .collect();
        let made: Vec<DateTime<Utc>> = deliveries.iter().map(|d| d.created_at).collect();
        let lasts: Vec<Option<DateTime<Utc>>> =
            deliveries.iter().map(|d| d.last_attempt_at).collect();
        let codes: Vec<Option<i32>> = deliveries
            .iter()
            .map(|d| d.last_response_status.map(i32::from))
            .collect();
        let errors: Vec<Option<&str>> =
            deliveries.iter().map(|d| d.last_error.as_deref()).collect();
        let nexts: Vec<Option<DateTime<Utc>>> =
            deliveries.iter().map(|d| d.next_attempt_at).collect();
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let row = client
            .query_one(
                &stmt,
                &[
                    &id,
                    &holder,
                    &to_i64("stream xid", from.0)?,
                    &to_i64("stream seq", from.1)?,
                    &to_i64("stream xid", to.0)?,
                    &to_i64("stream seq", to.1)?,
                    &until,
                    &ids,
                    &events,
                    &types,
                    &xids,
                    &seqs,
                    &statuses,
                    &attempts,
                    &made,
                    &lasts,
                    &codes,
                    &errors,
                    &nexts,
                ],
            )
            .await?;
        Ok(row.try_get(0)?)
    }

    pub(crate) async fn insert_delivery_impl(&self, d: &Delivery) -> Result<bool, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "INSERT INTO {s}.webhook_deliveries ({}) \
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 \
             WHERE EXISTS (SELECT 1 FROM {s}.webhooks WHERE id = $2)",
            delivery_cols("")
        );
        let attempts = i32::try_from(d.attempts).unwrap_or(i32::MAX);
        let code = d.last_response_status.map(i32::from);
        let (xid, seq) = (
            to_i64("event xid", d.event_at.0)?,
            to_i64("event seq", d.event_at.1)?,
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let n = client
            .execute(
                &stmt,
                &[
                    &d.id,
                    &d.webhook_id,
                    &d.event_id,
                    &d.event_type,
                    &xid,
                    &seq,
                    &d.status.as_str(),
                    &attempts,
                    &d.created_at,
                    &d.last_attempt_at,
                    &code,
                    &d.last_error,
                    &d.next_attempt_at,
                ],
            )
            .await?;
        Ok(n == 1)
    }

    /// One statement: the due deliveries of enabled webhooks, earliest first, locked with
    /// `SKIP LOCKED` (a row another claimer holds is left to it; one it committed is no
    /// longer due when its lock is taken), each given one more attempt and the lease.
    pub(crate) async fn claim_impl(
        &self,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Claimed>, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "WITH off AS ({ASYNC_COMMIT}), \
             due AS (SELECT d.id, d.next_attempt_at AS was FROM {s}.webhook_deliveries d \
                 JOIN {s}.webhooks w ON w.id = d.webhook_id \
                 WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND w.enabled \
                 ORDER BY d.next_attempt_at, d.id LIMIT $3 FOR UPDATE OF d SKIP LOCKED), \
             claimed AS (UPDATE {s}.webhook_deliveries d \
                 SET attempts = d.attempts + 1, next_attempt_at = $2 \
                 FROM due, off WHERE d.id = due.id \
                 RETURNING {cols}, due.was) \
             SELECT c.*, w.url, w.secret, {event} FROM claimed c \
             JOIN {s}.webhooks w ON w.id = c.webhook_id \
             LEFT JOIN {s}.events e \
                 ON e.xid = c.event_xid::text::xid8 AND e.seq = c.event_seq \
             ORDER BY c.was, c.id",
            cols = delivery_cols("d."),
            event = event_cols("e."),
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let rows = client
            .query(&stmt, &[&now, &until, &i64::from(limit)])
            .await?;
        let width = DELIVERY_COLUMNS.len();
        let mut claimed = Vec::with_capacity(rows.len());
        for row in &rows {
            let delivery = delivery_from_row(row, 0)?;
            let first = width + 3;
            let event = match row.try_get::<_, Option<Uuid>>(first)? {
                Some(_) => Some(event_from_row(row, first, delivery.event_at)?),
                None => None,
            };
            claimed.push(Claimed {
                url: row.try_get(width + 1)?,
                secret: row.try_get(width + 2)?,
                delivery,
                event,
            });
        }
        Ok(claimed)
    }

    /// One transaction: each delivery's outcome and each webhook's failure time.
    pub(crate) async fn record_impl(&self, attempts: &[Attempt]) -> Result<(), Failure> {
        let s = &self.schema.q;
        let deliveries_sql = format!(
            "UPDATE {s}.webhook_deliveries d SET status = a.status, \
                 next_attempt_at = a.next, last_attempt_at = a.at, \
                 last_response_status = a.code, last_error = a.error \
             FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::timestamptz[], \
                 $5::int[], $6::text[]) AS a(id, status, next, at, code, error) \
             WHERE d.id = a.id"
        );
        // Per webhook: whether an attempt succeeded (the failure time starts afresh), and
        // the first failure after the last success.
        let hooks_sql = format!(
            "UPDATE {s}.webhooks w SET failing_since = CASE WHEN u.reset THEN u.since \
                 ELSE coalesce(w.failing_since, u.since) END \
             FROM unnest($1::uuid[], $2::bool[], $3::timestamptz[]) AS u(id, reset, since) \
             WHERE w.id = u.id"
        );
        let mut ids = Vec::with_capacity(attempts.len());
        let mut statuses = Vec::with_capacity(attempts.len());
        let mut nexts = Vec::with_capacity(attempts.len());
        let mut ats = Vec::with_capacity(attempts.len());
        let mut codes = Vec::with_capacity(attempts.len());
        let mut errors = Vec::with_capacity(attempts.len());
        let mut per_hook: HashMap<Uuid, HookOutcome> = HashMap::new();
        for attempt in attempts {
            let (status, next) = attempt.next.state();
            ids.push(attempt.delivery_id);
            statuses.push(status.as_str());
            nexts.push(next);
            ats.push(attempt.at);
            codes.push(attempt.response_status.map(i32::from));
            errors.push(attempt.error.clone());
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
        let hook_ids: Vec<Uuid> = per_hook.keys().copied().collect();
        let resets: Vec<bool> = hook_ids.iter().map(|id| per_hook[id].reset).collect();
        let sinces: Vec<Option<DateTime<Utc>>> =
            hook_ids.iter().map(|id| per_hook[id].since).collect();

        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        tx.batch_execute("SET LOCAL synchronous_commit = off")
            .await?;
        let (deliveries, hooks) = tokio::try_join!(
            tx.prepare_cached(&deliveries_sql),
            tx.prepare_cached(&hooks_sql)
        )?;
        tx.execute(
            &deliveries,
            &[&ids, &statuses, &nexts, &ats, &codes, &errors],
        )
        .await?;
        tx.execute(&hooks, &[&hook_ids, &resets, &sinces]).await?;
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn list_deliveries_impl(
        &self,
        webhook: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<Delivery>, Failure> {
        let s = &self.schema.q;
        let params: Vec<Box<dyn ToSql + Sync + Send>> = vec![
            Box::new(webhook),
            Box::new(i64::from(limit)),
            Box::new(i64::try_from(offset).unwrap_or(i64::MAX)),
        ];
        let sql = format!(
            "WITH m AS (SELECT count(*) AS n FROM {s}.webhook_deliveries WHERE webhook_id = $1) \
             SELECT m.n, {out} FROM m LEFT JOIN LATERAL ( \
                 SELECT {cols} FROM {s}.webhook_deliveries WHERE webhook_id = $1 \
                 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3 \
             ) d ON true \
             ORDER BY d.created_at DESC, d.id DESC",
            out = delivery_cols("d."),
            cols = delivery_cols(""),
        );
        self.query_page(&sql, &params, "delivery count", |row| {
            delivery_from_row(row, 1)
        })
        .await
    }

    pub(crate) async fn retry_impl(
        &self,
        webhook: Uuid,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<Delivery>, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "WITH off AS ({ASYNC_COMMIT}) \
             UPDATE {s}.webhook_deliveries SET status = 'pending', next_attempt_at = $3 \
             FROM off WHERE id = $2 AND webhook_id = $1 RETURNING {}",
            delivery_cols("")
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query_opt(&stmt, &[&webhook, &id, &now])
            .await?
            .map(|row| delivery_from_row(&row, 0))
            .transpose()
    }

    pub(crate) async fn purge_deliveries_impl(
        &self,
        before: DateTime<Utc>,
    ) -> Result<u64, Failure> {
        let s = &self.schema.q;
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "DELETE FROM {s}.webhook_deliveries WHERE created_at < $1"
            ))
            .await?;
        Ok(client.execute(&stmt, &[&before]).await?)
    }
}
