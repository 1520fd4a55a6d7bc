//! [`TransferStore`] of the [`SledStore`] (feature `transfer`): every record out and in, for
//! `migrate`, `backup` and `restore`.
//!
//! The export (`transfer/export.rs`) is a blocking task that walks the trees in the order of
//! [`Record`]'s kinds and hands each record to the stream through a bounded channel, so the
//! stream holds at most a channel's worth of records whatever the size of the store. Assets
//! come in the order of the created-time index and keys in the order of theirs, deliveries
//! by merging their webhooks' lists (each in creation order); libraries, passes and webhooks
//! are ordered by collecting their creation times and ids (not their records) first.
//!
//! The import (`transfer/import.rs`) writes one call's records in one transaction over every
//! tree they touch, with the write helpers the store's own writes use (slug claims, the asset
//! index keys and counts, asset uses, library items, pass lists), then makes it durable. Its
//! events are appended at places reserved from the log's sequence, so the sequence goes on
//! after them. Webhook streams and deliveries, which live in the second database, are
//! written after that transaction (see `transfer/import.rs`).
//!
//! An import looks events up by id (to leave those the log has, and to find where a webhook's
//! stream and a delivery's event stand) in the tree `transfer_events` (event id -> place),
//! brought up to the log before each call that needs it (`transfer/import/places.rs`); clearing the
//! transfer mark, which ends a move, drops it.
//!
//! | tree | key | value |
//! |---|---|---|
//! | `meta` | `transfer_mark` | the mark of the move in progress (UTF-8) |
//! | `meta` | `transfer_events_through` | the last place of the log `transfer_events` holds (`u64`) |
//! | `transfer_events` | event `id` | its place in the log (`u64`) |

mod export;
mod import;

use assetlib_core::store::TransferStore;
use assetlib_core::transfer::{Record, RecordCounts};
use assetlib_core::{StoreError, async_trait};
use futures_util::stream::BoxStream;

use crate::SledStore;
use crate::error::Error;

/// The key of the transfer mark in the `meta` tree.
const MARK_KEY: &[u8] = b"transfer_mark";

#[async_trait]
impl TransferStore for SledStore {
    async fn export(&self) -> Result<BoxStream<'static, Result<Record, StoreError>>, StoreError> {
        Ok(export::records(self.clone()))
    }

    async fn record_counts(&self) -> Result<RecordCounts, StoreError> {
        self.blocking(export::record_counts).await
    }

    async fn import(&self, records: &[Record]) -> Result<(), StoreError> {
        self.import_records(records.to_vec()).await
    }

    /// sled keeps every write of a transaction (some 80 for an asset with search) in memory
    /// until it commits: smaller batches keep a move's memory down.
    fn import_batch(&self) -> usize {
        50
    }

    async fn transfer_mark(&self) -> Result<Option<String>, StoreError> {
        self.blocking(|inner| {
            let meta = inner.db.open_tree("meta")?;
            meta.get(MARK_KEY)?
                .map(|v| {
                    String::from_utf8(v.to_vec())
                        .map_err(|e| Error::invalid("transfer mark", e.to_string()))
                })
                .transpose()
        })
        .await
    }

    async fn set_transfer_mark(&self, mark: Option<&str>) -> Result<(), StoreError> {
        let mark = mark.map(str::to_owned);
        self.blocking(move |inner| {
            let meta = inner.db.open_tree("meta")?;
            match mark {
                Some(mark) => {
                    meta.insert(MARK_KEY, mark.as_bytes())?;
                }
                None => {
                    meta.remove(MARK_KEY)?;
                    // The move is over: the events it looked up by id need not be found so.
                    import::forget_places(inner)?;
                }
            }
            // Durable whatever the store's durability: a move trusts the mark it reads back.
            inner.db.flush()?;
            Ok(())
        })
        .await
    }
}
