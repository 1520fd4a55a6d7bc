//! [`TransferStore`]: every record of a store, out and in, for moving data between stores and
//! into archives (feature `transfer`).

use async_trait::async_trait;
use futures_util::stream::BoxStream;

use super::{Record, RecordCounts};
use crate::error::StoreError;

/// The records a store keeps, read out at one consistent moment and written back as they
/// were: what `migrate`, `backup` and `restore` move ([`crate::transfer`]).
///
/// A store implements it to be the source or the target of a move; it hands it out from
/// [`crate::store::MetaStore::transfer_store`]. The conformance group
/// `testing::TRANSFER_CASES` checks that a store's export, imported into a fresh store of
/// the same kind, answers every read as the original does.
#[async_trait]
pub trait TransferStore: Send + Sync {
    /// Every record, from one consistent moment (a snapshot, a repeatable-read transaction,
    /// or a store nobody writes to meanwhile, as a sled directory a server does not hold), in
    /// the order of [`Record`]'s kinds: the signing secret, keys, assets (each with its
    /// download count), their kept texts, libraries (each whole, with its view count),
    /// passes, the event log in its order, webhooks (each with where its stream stands),
    /// deliveries. Within a kind, records come oldest first (by creation time, then id), the
    /// texts in their assets' order and the events in the log's; a library's sections and
    /// entries in any order. Uploads in progress are not records. The stream keeps its moment until it
    /// ends or is dropped, and holds a bounded number of records in memory.
    async fn export(&self) -> Result<BoxStream<'static, Result<Record, StoreError>>, StoreError>;

    /// How many records of each kind the store keeps now (for a progress bar, and to check
    /// a copy).
    async fn record_counts(&self) -> Result<RecordCounts, StoreError>;

    /// Writes `records`, which come in the order [`TransferStore::export`] gives, as they
    /// are: ids, slugs, times, counts, hashes and secrets, with every index and count the
    /// store keeps of them. An asset's slug, a library's slug and a key's or pass's hash
    /// are the record's own (the target of a move holds nothing else). No event is appended
    /// for them (the events are records too, appended in the log's order, keeping their ids;
    /// their places are the target's own). A record whose id the store holds already is left
    /// as it is, so an import cut short can be run again from its start. The signing secret
    /// replaces the store's.
    ///
    /// All of one call lands or none does, and durably before it returns.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] for a record that cannot be kept (a library entry of an asset
    /// the store does not hold, a delivery of an unknown webhook); [`StoreError::Backend`]
    /// when the store fails.
    async fn import(&self, records: &[Record]) -> Result<(), StoreError>;

    /// How many records a move hands [`TransferStore::import`] at a time (500 by default): a
    /// store whose transactions grow in memory with their writes takes fewer.
    fn import_batch(&self) -> usize {
        500
    }

    /// The mark an import in progress left (a description of its source), or `None`: a move
    /// writes it before its first record and clears it after its check, so a target that is
    /// not empty is one this move may go on with only when it bears the same mark.
    async fn transfer_mark(&self) -> Result<Option<String>, StoreError>;

    /// Sets (or, with `None`, clears) [`TransferStore::transfer_mark`], durably.
    async fn set_transfer_mark(&self, mark: Option<&str>) -> Result<(), StoreError>;
}
