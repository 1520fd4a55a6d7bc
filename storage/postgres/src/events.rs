//! The event log: the `events` table (migration 11), written by every write in its own
//! statement or transaction, and read as a feed.
//!
//! Order and exactly-once: each row carries the id of the transaction that wrote it (`xid`,
//! `pg_current_xact_id()`) and a sequence number (`seq`); the log's order is `(xid, seq)`. A
//! page shows only rows of transactions older than every transaction still running (`xid <
//! pg_snapshot_xmin(pg_current_snapshot())`): every transaction below that horizon has ended,
//! so no row can appear later before a row the page shows. A transaction that started first
//! but commits last holds back the rows of those after it until it ends.

use assetlib_core::events::{
    Actor, Event, EventCursor, EventPage, EventQuery, EventType, Log, Written,
};
use assetlib_core::{EventStore, StoreError, async_trait};
use chrono::{DateTime, Utc};
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::PgStore;
use crate::error::Failure;

/// The event `log` makes of `written`, for a write whose statement appends exactly one (every
/// write but an asset change, which may append none).
pub(crate) fn one_event(log: &Log, written: Written<'_>) -> Result<EventParams, Failure> {
    log.event(written)
        .map(EventParams::new)
        .ok_or(Failure::NoEvent("a write of one record"))
}

/// The columns an event is written with, in this order.
const COLS: &str = "id, type, occurred_at, actor_key_id, actor_key_name, resource_type, \
     resource_id, changed, workspace_id";

/// An event's values as statement parameters.
pub(crate) struct EventParams {
    id: Uuid,
    kind: &'static str,
    occurred_at: DateTime<Utc>,
    actor_key_id: Option<Uuid>,
    actor_key_name: Option<String>,
    resource_type: &'static str,
    resource_id: Uuid,
    changed: Vec<String>,
    workspace_id: Option<String>,
}

impl EventParams {
    /// The event's type, as the log stores it.
    pub(crate) fn kind(&self) -> &'static str {
        self.kind
    }

    /// The type of the resource the event is about, as the log stores it.
    pub(crate) fn resource_type(&self) -> &'static str {
        self.resource_type
    }

    /// `event`'s values.
    pub(crate) fn new(event: Event) -> Self {
        let (actor_key_id, actor_key_name) = match event.actor {
            Some(Actor { key_id, key_name }) => (Some(key_id), Some(key_name)),
            None => (None, None),
        };
        Self {
            id: event.id,
            kind: event.kind.as_str(),
            occurred_at: event.occurred_at,
            actor_key_id,
            actor_key_name,
            resource_type: event.resource_type.as_str(),
            resource_id: event.resource_id,
            changed: event.changed,
            workspace_id: event.workspace_id,
        }
    }

    /// The nine values, for [`insert_sql`].
    pub(crate) fn all(&self) -> [&(dyn ToSql + Sync); 9] {
        [
            &self.id,
            &self.kind,
            &self.occurred_at,
            &self.actor_key_id,
            &self.actor_key_name,
            &self.resource_type,
            &self.resource_id,
            &self.changed,
            &self.workspace_id,
        ]
    }

    /// The values but the type, resource type and resource id, for [`log_rows_sql`] (at
    /// [`At::from`] its first): id, occurred_at, actor key id and name, changed, workspace.
    pub(crate) fn per_row(&self) -> [&(dyn ToSql + Sync); 6] {
        [
            &self.id,
            &self.occurred_at,
            &self.actor_key_id,
            &self.actor_key_name,
            &self.changed,
            &self.workspace_id,
        ]
    }
}

/// A statement's parameters: `values` (`$1` on), then `event`'s [`EventParams::per_row`], for
/// a statement whose [`log_rows_sql`] is at `At::from(values.len() + 1)`.
pub(crate) fn then_logged<'a, const N: usize>(
    values: [&'a (dyn ToSql + Sync); N],
    event: &'a EventParams,
) -> Vec<&'a (dyn ToSql + Sync)> {
    values.into_iter().chain(event.per_row()).collect()
}

/// `INSERT` of one event, from the nine values of [`EventParams::all`] (`$1` to `$9`).
pub(crate) fn insert_sql(s: &str) -> String {
    format!("INSERT INTO {s}.events ({COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)")
}

/// Where [`log_rows_sql`] finds its parameters: the first five values of
/// [`EventParams::per_row`] from `$first` on, and its workspace (the sixth) at `$workspace`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At {
    pub(crate) first: usize,
    pub(crate) workspace: usize,
}

impl At {
    /// The five values at `$first` on, the workspace right after them.
    pub(crate) const fn from(first: usize) -> Self {
        At {
            first,
            workspace: first + 5,
        }
    }
}

/// `INSERT` of `event` (its type and resource type; the rest are parameters) about each row of
/// `source` (a CTE with an `id` column: none when it has no row), with its parameters `at`.
pub(crate) fn log_rows_sql(s: &str, event: &EventParams, source: &str, at: At) -> String {
    log_rows_sql_as(
        s,
        &format!("'{}'", event.kind),
        event.resource_type,
        source,
        at,
    )
}

/// [`log_rows_sql`] with the event's type an SQL expression over `source`'s row.
pub(crate) fn log_rows_sql_as(s: &str, kind: &str, resource: &str, source: &str, at: At) -> String {
    let n = |k: usize| at.first + k;
    format!(
        "INSERT INTO {s}.events ({COLS}) SELECT ${}::uuid, {kind}, ${}::timestamptz, \
         ${}::uuid, ${}::text, '{}', id, ${}::text[], ${}::text FROM {source}",
        n(0),
        n(1),
        n(2),
        n(3),
        resource,
        n(4),
        at.workspace
    )
}

/// The feed's statement: the horizon (`xmin`, always one row), the first transaction id not
/// given out yet (`xmax`), and up to `$6` events after `($1, $2)` below the horizon, filtered
/// by type (`$3`), resource (`$4`, `$5`) and workspace (`$7`) when given.
fn feed_sql(s: &str) -> String {
    format!(
        "WITH h AS (SELECT pg_snapshot_xmin(c.s) AS xmin, pg_snapshot_xmax(c.s) AS xmax \
             FROM (SELECT pg_current_snapshot() AS s) c) \
         SELECT h.xmin::text::bigint, h.xmax::text::bigint, e.xid, e.seq, e.id, e.type, \
             e.occurred_at, \
             e.actor_key_id, e.actor_key_name, e.resource_type, e.resource_id, e.changed, \
             e.workspace_id \
         FROM h LEFT JOIN LATERAL ( \
             SELECT xid::text::bigint AS xid, seq, {COLS} FROM {s}.events \
             WHERE (xid, seq) > ($1::bigint::text::xid8, $2::bigint) AND xid < h.xmin \
                 AND ($3::text IS NULL OR type = $3) \
                 AND ($4::text IS NULL OR (resource_type = $4 AND resource_id = $5)) \
                 AND ($7::text IS NULL OR workspace_id = $7) \
             ORDER BY xid, seq LIMIT $6 \
         ) e ON true"
    )
}

/// The event in the columns [`COLS`] of `row` from `first` on, kept at `at`.
pub(crate) fn event_from_row(
    row: &tokio_postgres::Row,
    first: usize,
    at: EventCursor,
) -> Result<Event, Failure> {
    let kind: String = row.try_get(first + 1)?;
    let resource: String = row.try_get(first + 5)?;
    let actor = match (row.try_get(first + 3)?, row.try_get(first + 4)?) {
        (Some(key_id), Some(key_name)) => Some(Actor { key_id, key_name }),
        _ => None,
    };
    Ok(Event {
        id: row.try_get(first)?,
        kind: kind
            .parse()
            .map_err(|()| Failure::invalid("event type", kind.clone()))?,
        occurred_at: row.try_get(first + 2)?,
        actor,
        resource_type: resource
            .parse()
            .map_err(|()| Failure::invalid("event resource", resource.clone()))?,
        resource_id: row.try_get(first + 6)?,
        changed: row.try_get(first + 7)?,
        workspace_id: row.try_get(first + 8)?,
        at,
    })
}

/// The columns of an event, each prefixed with `p`, in the order [`event_from_row`] reads.
pub(crate) fn event_cols(p: &str) -> String {
    COLS.split(", ")
        .map(|c| format!("{p}{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_u64(what: &'static str, v: i64) -> Result<u64, Failure> {
    u64::try_from(v).map_err(|_| Failure::invalid(what, v.to_string()))
}

impl PgStore {
    /// Sets `revoked_at` of the row `id` of `table` (keys, passes) to `at` unless it is set
    /// already, and logs `event` when it sets it, in one statement: a second revoke changes
    /// nothing and logs nothing. Whether the row exists.
    pub(crate) async fn revoke_once(
        &self,
        table: &str,
        id: Uuid,
        at: DateTime<Utc>,
        event: EventParams,
    ) -> Result<bool, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "WITH r AS (UPDATE {s}.{table} SET revoked_at = $2 \
                 WHERE id = $1 AND revoked_at IS NULL RETURNING id), \
             logged AS ({}) \
             SELECT EXISTS (SELECT 1 FROM r) OR EXISTS (SELECT 1 FROM {s}.{table} WHERE id = $1)",
            log_rows_sql(s, &event, "r", At::from(3))
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let params = then_logged([&id, &at], &event);
        Ok(client.query_one(&stmt, &params).await?.try_get(0)?)
    }

    /// A page of the feed; `None` when `q.after` names a transaction that has not begun yet
    /// or a sequence number past `bigint` (the horizons handed out have `i64::MAX`): no page
    /// ever handed such a cursor out.
    async fn list_events_impl(&self, q: &EventQuery) -> Result<Option<EventPage>, Failure> {
        let s = &self.schema.q;
        let client = self.client().await?;
        let stmt = client.prepare_cached(&feed_sql(s)).await?;
        let kind = q.kind.map(EventType::as_str);
        let (resource_type, resource_id) = match q.resource {
            Some((t, id)) => (Some(t.as_str()), Some(id)),
            None => (None, None),
        };
        let limit = i64::try_from(q.limit).unwrap_or(i64::MAX);
        let rows = client
            .query(
                &stmt,
                &[
                    &to_i64(q.after.0),
                    &to_i64(q.after.1),
                    &kind,
                    &resource_type,
                    &resource_id,
                    &limit,
                    &q.workspace,
                ],
            )
            .await?;
        let mut events = Vec::with_capacity(rows.len());
        let mut last = None;
        let (mut xmin, mut xmax) = (0, 0);
        for row in &rows {
            xmin = to_u64("xmin", row.try_get(0)?)?;
            xmax = to_u64("xmax", row.try_get(1)?)?;
            let Some(xid) = row.try_get::<_, Option<i64>>(2)? else {
                continue;
            };
            let seq: i64 = row.try_get(3)?;
            let at = EventCursor(to_u64("xid", xid)?, to_u64("seq", seq)?);
            last = Some(at);
            events.push(event_from_row(row, 4, at)?);
        }
        if q.after.0 >= xmax || q.after.1 > i64::MAX.unsigned_abs() {
            return Ok(None);
        }
        // A full page goes on after its last event; a page that reached the horizon after
        // every transaction below it, as none of them can add an event any more.
        let horizon = EventCursor(xmin.saturating_sub(1), i64::MAX.unsigned_abs());
        let next = match last {
            Some(at) if events.len() >= q.limit => at,
            _ => q.after.max(horizon).max(last.unwrap_or_default()),
        };
        Ok(Some(EventPage { events, next }))
    }

    async fn purge_events_impl(&self, before: DateTime<Utc>) -> Result<u64, Failure> {
        let s = &self.schema.q;
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!("DELETE FROM {s}.events WHERE occurred_at < $1"))
            .await?;
        Ok(client.execute(&stmt, &[&before]).await?)
    }
}

#[async_trait]
impl EventStore for PgStore {
    async fn list_events(&self, query: &EventQuery) -> Result<EventPage, StoreError> {
        self.list_events_impl(query)
            .await?
            .ok_or(StoreError::UnknownCursor)
    }

    async fn purge_events(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        Ok(self.purge_events_impl(before).await?)
    }
}
