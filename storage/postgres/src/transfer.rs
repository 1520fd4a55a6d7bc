//! [`TransferStore`] of the [`PgStore`] (feature `transfer`): every record out and in, for
//! `migrate`, `backup` and `restore`.
//!
//! - The export (`transfer_export.rs`) reads from one `REPEATABLE READ READ ONLY`
//!   transaction on one pooled connection, held for the stream's life, after this process's
//!   unwritten views and downloads are written. Each kind is read through a server-side
//!   cursor (a portal of the extended protocol) a page at a time, by a task that feeds a
//!   bounded channel: memory stays bounded whatever the size of the store, and replicas go on
//!   serving meanwhile (a read-only transaction holds back neither writers nor the event
//!   feed's horizon).
//! - The import (`transfer_import.rs`) writes one call in one transaction, each kind in one
//!   or two multi-row statements (`unnest` of arrays), skipping ids held already. The
//!   triggers of the schema keep what they keep for any insert (list and tag counts,
//!   `asset_tags`, the assets versions and their notices, a library's notice); the import
//!   writes the rest itself: download and view counts, content versions, the entries' copies
//!   of their assets' fields, the search words, the slug counters, the places of events,
//!   streams and deliveries in this log. No event is appended.
//! - The mark is the one row of `transfer_mark` (migration 22).

use assetlib_core::store::TransferStore;
use assetlib_core::transfer::{Record, RecordCounts};
use assetlib_core::{StoreError, async_trait};
use futures_util::stream::BoxStream;

use crate::error::Failure;
use crate::notices::Notice;
use crate::store::{PgStore, to_u64};

#[async_trait]
impl TransferStore for PgStore {
    async fn export(&self) -> Result<BoxStream<'static, Result<Record, StoreError>>, StoreError> {
        crate::transfer_export::export(self).await
    }

    async fn record_counts(&self) -> Result<RecordCounts, StoreError> {
        let s = &self.schema.q;
        // Without search the kept texts are no records (the export leaves them out).
        let texts = if cfg!(feature = "search") {
            format!("(SELECT count(*) FROM {s}.asset_texts)")
        } else {
            "0::bigint".to_owned()
        };
        let sql = format!(
            "SELECT (SELECT count(*) FROM {s}.api_keys), (SELECT count(*) FROM {s}.assets), \
                 {texts}, (SELECT count(*) FROM {s}.libraries), \
                 (SELECT count(*) FROM {s}.passes), (SELECT count(*) FROM {s}.webhooks), \
                 (SELECT count(*) FROM {s}.events), \
                 (SELECT count(*) FROM {s}.webhook_deliveries)"
        );
        let client = self.client().await?;
        let row = client.query_one(&sql, &[]).await.map_err(Failure::from)?;
        let n = |i: usize| -> Result<u64, Failure> { to_u64("record count", row.try_get(i)?) };
        Ok(RecordCounts {
            keys: n(0)?,
            assets: n(1)?,
            texts: n(2)?,
            libraries: n(3)?,
            passes: n(4)?,
            webhooks: n(5)?,
            events: n(6)?,
            deliveries: n(7)?,
        })
    }

    async fn import(&self, records: &[Record]) -> Result<(), StoreError> {
        if records.is_empty() {
            return Ok(());
        }
        let imported = crate::transfer_import::import(self, records).await;
        // Other replicas learn of it from the notices sent at commit; this process moves its
        // own versions, also after a failure (a connection lost at the commit may have
        // committed).
        self.replica.changed(Notice::Everything);
        imported
    }

    async fn transfer_mark(&self) -> Result<Option<String>, StoreError> {
        let s = &self.schema.q;
        let client = self.client().await?;
        let row = client
            .query_opt(&format!("SELECT mark FROM {s}.transfer_mark"), &[])
            .await
            .map_err(Failure::from)?;
        Ok(row
            .map(|r| r.try_get::<_, String>(0))
            .transpose()
            .map_err(Failure::from)?)
    }

    async fn set_transfer_mark(&self, mark: Option<&str>) -> Result<(), StoreError> {
        let s = &self.schema.q;
        let client = self.client().await?;
        let done = match mark {
            Some(mark) => {
                client
                    .execute(
                        &format!(
                            "INSERT INTO {s}.transfer_mark (one, mark) VALUES (true, $1) \
                             ON CONFLICT (one) DO UPDATE SET mark = EXCLUDED.mark"
                        ),
                        &[&mark],
                    )
                    .await
            }
            None => {
                client
                    .execute(&format!("DELETE FROM {s}.transfer_mark"), &[])
                    .await
            }
        };
        done.map_err(Failure::from)?;
        Ok(())
    }
}
