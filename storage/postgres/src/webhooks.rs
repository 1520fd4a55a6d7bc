//! Webhooks (migration 12): records with their events in the same statement or
//! transaction; their deliveries (`deliveries.rs`) enqueued with a compare-and-set of the dispatch
//! cursor in one statement; due deliveries claimed with `FOR UPDATE SKIP LOCKED` and leased,
//! so replicas never send one delivery at once; attempts recorded in one transaction.
//! Delivery bookkeeping commits with `synchronous_commit = off`.

use assetlib_core::events::Written;
use assetlib_core::events::{EventCursor, Log};
use assetlib_core::webhooks::{Attempt, Claimed, Delivery, EventFilter, Webhook, WebhookChange};
use assetlib_core::{Page, StoreError, WebhookStore, async_trait};
use chrono::{DateTime, Utc};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::error::{Failure, duplicate_id, unique_violation};
use crate::events::{At, EventParams, insert_sql, log_rows_sql, one_event, then_logged};
use crate::store::{PgStore, columns};

const HOOK_COLUMNS: [&str; 9] = [
    "id",
    "url",
    "event_types",
    "enabled",
    "secret",
    "created_at",
    "updated_at",
    "failing_since",
    "workspace_id",
];

/// The webhook columns, each prefixed with `p`, in the order [`hook_from_row`] reads.
pub(crate) fn hook_cols(p: &str) -> String {
    columns(p, &HOOK_COLUMNS)
}

/// Decodes the columns of [`hook_cols`] starting at `at`.
pub(crate) fn hook_from_row(row: &Row, at: usize) -> Result<Webhook, Failure> {
    let names: Vec<String> = row.try_get(at + 2)?;
    let event_types = EventFilter::from_names(names.iter().map(String::as_str))
        .ok_or_else(|| Failure::invalid("webhook event types", format!("{names:?}")))?;
    Ok(Webhook {
        id: row.try_get(at)?,
        url: row.try_get(at + 1)?,
        event_types,
        enabled: row.try_get(at + 3)?,
        secret: row.try_get(at + 4)?,
        created_at: row.try_get(at + 5)?,
        updated_at: row.try_get(at + 6)?,
        failing_since: row.try_get(at + 7)?,
        workspace_id: row.try_get(at + 8)?,
    })
}

/// The event types of a webhook as stored.
fn type_names(filter: &EventFilter) -> Vec<String> {
    filter.names().into_iter().map(str::to_owned).collect()
}

impl PgStore {
    async fn insert_webhook_impl(&self, w: Webhook, log: &Log) -> Result<(), StoreError> {
        let s = &self.schema.q;
        // The stream starts at the end of the log: after every event of this transaction
        // (the webhook's own), and so of every transaction older than it.
        let event = one_event(log, Written::WebhookCreated(w.id))?;
        let sql = format!(
            "WITH w AS (INSERT INTO {s}.webhooks ({}, stream_xid, stream_seq) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
                     pg_current_xact_id()::text::bigint, 9223372036854775807) \
                 RETURNING id) {}",
            hook_cols(""),
            log_rows_sql(s, &event, "w", At::from(10))
        );
        let types = type_names(&w.event_types);
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await.map_err(Failure::from)?;
        let values: [&(dyn ToSql + Sync); 9] = [
            &w.id,
            &w.url,
            &types,
            &w.enabled,
            &w.secret,
            &w.created_at,
            &w.updated_at,
            &w.failing_since,
            &w.workspace_id,
        ];
        let params = then_logged(values, &event);
        match client.execute(&stmt, &params).await {
            Ok(_) => Ok(()),
            Err(e) if unique_violation(&e) == Some("webhooks_pkey") => Err(duplicate_id(w.id)),
            Err(e) => Err(Failure::from(e).into()),
        }
    }

    async fn get_webhook_impl(&self, id: Uuid) -> Result<Option<Webhook>, Failure> {
        let s = &self.schema.q;
        let sql = format!("SELECT {} FROM {s}.webhooks WHERE id = $1", hook_cols(""));
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query_opt(&stmt, &[&id])
            .await?
            .map(|row| hook_from_row(&row, 0))
            .transpose()
    }

    async fn list_webhooks_impl(&self, offset: u64, limit: u32) -> Result<Page<Webhook>, Failure> {
        let s = &self.schema.q;
        let params: Vec<Box<dyn ToSql + Sync + Send>> = vec![
            Box::new(i64::from(limit)),
            Box::new(i64::try_from(offset).unwrap_or(i64::MAX)),
        ];
        let sql = format!(
            "WITH m AS (SELECT count(*) AS n FROM {s}.webhooks) \
             SELECT m.n, {out} FROM m LEFT JOIN LATERAL ( \
                 SELECT {cols} FROM {s}.webhooks \
                 ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2 \
             ) w ON true \
             ORDER BY w.created_at DESC, w.id DESC",
            out = hook_cols("w."),
            cols = hook_cols(""),
        );
        self.query_page(&sql, &params, "webhook count", |row| hook_from_row(row, 1))
            .await
    }

    /// The webhook locked, the change applied by core's [`WebhookChange::apply`], then the row
    /// and its event written, in one transaction.
    async fn update_webhook_impl(
        &self,
        id: Uuid,
        change: &WebhookChange,
        now: DateTime<Utc>,
        log: &Log,
    ) -> Result<Option<Webhook>, Failure> {
        let s = &self.schema.q;
        let lock_sql = format!(
            "SELECT {} FROM {s}.webhooks WHERE id = $1 FOR UPDATE",
            hook_cols("")
        );
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let lock = tx.prepare_cached(&lock_sql).await?;
        let Some(old) = tx
            .query_opt(&lock, &[&id])
            .await?
            .map(|row| hook_from_row(&row, 0))
            .transpose()?
        else {
            tx.rollback().await?;
            return Ok(None);
        };
        let Some((new, changed)) = change.apply(&old, now) else {
            tx.rollback().await?;
            return Ok(Some(old));
        };
        let event = one_event(
            log,
            Written::WebhookChanged {
                id,
                changed: &changed,
            },
        )?;
        self.write_hook(&tx, &new, event).await?;
        tx.commit().await?;
        Ok(Some(new))
    }

    /// Writes the changing fields of `w` and logs `event`, in the transaction `tx`.
    async fn write_hook(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        w: &Webhook,
        event: EventParams,
    ) -> Result<(), Failure> {
        let s = &self.schema.q;
        let write_sql = format!(
            "UPDATE {s}.webhooks SET url = $2, event_types = $3, enabled = $4, \
                 updated_at = $5, failing_since = $6 WHERE id = $1"
        );
        let log_sql = insert_sql(s);
        let (write, log) =
            tokio::try_join!(tx.prepare_cached(&write_sql), tx.prepare_cached(&log_sql))?;
        let types = type_names(&w.event_types);
        let values: [&(dyn ToSql + Sync); 6] = [
            &w.id,
            &w.url,
            &types,
            &w.enabled,
            &w.updated_at,
            &w.failing_since,
        ];
        let logged = event.all();
        // Pipelined, run in this order.
        tokio::try_join!(tx.execute(&write, &values), tx.execute(&log, &logged))?;
        Ok(())
    }

    async fn delete_webhook_impl(&self, id: Uuid, log: &Log) -> Result<bool, Failure> {
        let s = &self.schema.q;
        let event = one_event(log, Written::WebhookDeleted(id))?;
        let sql = format!(
            "WITH d AS (DELETE FROM {s}.webhooks WHERE id = $1 RETURNING id), \
             logged AS ({}) SELECT EXISTS (SELECT 1 FROM d)",
            log_rows_sql(s, &event, "d", At::from(2))
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let params = then_logged([&id], &event);
        Ok(client.query_one(&stmt, &params).await?.try_get(0)?)
    }
}

#[async_trait]
impl WebhookStore for PgStore {
    async fn insert_webhook(&self, webhook: Webhook, log: &Log) -> Result<(), StoreError> {
        self.insert_webhook_impl(webhook, log).await
    }

    async fn get_webhook(&self, id: Uuid) -> Result<Option<Webhook>, StoreError> {
        Ok(self.get_webhook_impl(id).await?)
    }

    async fn list_webhooks(&self, offset: u64, limit: u32) -> Result<Page<Webhook>, StoreError> {
        Ok(self.list_webhooks_impl(offset, limit).await?)
    }

    async fn update_webhook(
        &self,
        id: Uuid,
        change: &WebhookChange,
        now: DateTime<Utc>,
        log: &Log,
    ) -> Result<Option<Webhook>, StoreError> {
        Ok(self.update_webhook_impl(id, change, now, log).await?)
    }

    async fn delete_webhook(&self, id: Uuid, log: &Log) -> Result<bool, StoreError> {
        Ok(self.delete_webhook_impl(id, log).await?)
    }

    async fn lease_stream(
        &self,
        id: Uuid,
        holder: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Option<EventCursor>, StoreError> {
        Ok(self.lease_stream_impl(id, holder, now, until).await?)
    }

    async fn advance_stream(
        &self,
        id: Uuid,
        holder: Uuid,
        span: (EventCursor, EventCursor),
        deliveries: Vec<Delivery>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        Ok(self
            .advance_stream_impl(id, holder, span, &deliveries, until)
            .await?)
    }

    async fn insert_delivery(&self, delivery: Delivery) -> Result<bool, StoreError> {
        Ok(self.insert_delivery_impl(&delivery).await?)
    }

    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Claimed>, StoreError> {
        Ok(self.claim_impl(now, until, limit).await?)
    }

    async fn record_attempts(&self, attempts: &[Attempt]) -> Result<(), StoreError> {
        Ok(self.record_impl(attempts).await?)
    }

    async fn list_deliveries(
        &self,
        webhook_id: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<Delivery>, StoreError> {
        Ok(self.list_deliveries_impl(webhook_id, offset, limit).await?)
    }

    async fn retry_delivery(
        &self,
        webhook_id: Uuid,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<Option<Delivery>, StoreError> {
        Ok(self.retry_impl(webhook_id, id, now).await?)
    }

    async fn purge_deliveries(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        Ok(self.purge_deliveries_impl(before).await?)
    }
}
