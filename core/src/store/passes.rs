//! [`PassStore`]: library passes.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::error::StoreError;
use crate::events::Log;
use crate::model::{LibraryPass, Page, PassSpend};

/// Library passes: what buyers of a paid library get, found by the SHA-256 of the pass, with
/// their download counters (the `passes` capability; a store hands it out through
/// [`crate::MetaStore::pass_store`]).
#[async_trait]
pub trait PassStore: Send + Sync + 'static {
    /// Stores a new pass. The library must exist when the change lands (a pass made while its
    /// library is deleted either fails or goes with it): else [`StoreError::UnknownLibrary`].
    /// A pass with the same id is [`StoreError::DuplicateId`], one with the same hash
    /// [`StoreError::DuplicateKeyHash`]; nothing changes then.
    async fn insert_pass(&self, pass: LibraryPass, log: &Log) -> Result<(), StoreError>;

    /// The pass with this SHA-256 hash, revoked or expired ones included.
    async fn find_pass(&self, token_hash: &[u8; 32]) -> Result<Option<LibraryPass>, StoreError>;

    /// The pass with this id.
    async fn get_pass(&self, id: Uuid) -> Result<Option<LibraryPass>, StoreError>;

    /// One page of the passes of the library `library_id` (`limit` of them from `offset`),
    /// newest `created_at` first, then by id descending; and how many it has in all.
    async fn list_passes(
        &self,
        library_id: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<LibraryPass>, StoreError>;

    /// Marks a pass revoked at `at` (a pass already revoked keeps its first time), durably.
    /// `false` if there is no such pass.
    async fn revoke_pass(&self, id: Uuid, at: DateTime<Utc>, log: &Log)
    -> Result<bool, StoreError>;

    /// Spends one download of the pass `id` at `now`, atomically: when the pass exists, is
    /// not revoked, expires after `now` and has downloads left (`downloads_used <
    /// max_downloads`, or no limit), `downloads_used` grows by one, durably, and the answer is
    /// [`PassSpend::Spent`] with the pass as it is then. Otherwise nothing changes:
    /// [`PassSpend::Exhausted`] for a live pass without downloads left, [`PassSpend::Dead`]
    /// for a missing, revoked or expired one. Concurrent calls, from any process sharing the
    /// store, never spend past the limit and never lose a download.
    async fn spend_pass(&self, id: Uuid, now: DateTime<Utc>) -> Result<PassSpend, StoreError>;
}
