//! [`UploadStore`]: resumable and direct uploads in progress ([`crate::tus`]), so that any
//! process sharing the store continues an upload another began.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::error::StoreError;
use crate::tus::Upload;

/// What [`UploadStore::lease_upload`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadLease {
    /// The upload, now leased to the caller.
    Taken(Box<Upload>),
    /// Another holder's lease runs until then; nothing changed.
    Busy(DateTime<Utc>),
    /// There is no such upload.
    Missing,
}

/// Uploads in progress. An upload is written by one request at a time, the holder of its
/// lease: it takes the lease ([`UploadStore::lease_upload`]), saves its progress as it goes
/// ([`UploadStore::save_upload`], which renews the lease) and ends it with a last save. A
/// lease that runs out (its process died) may be taken by anyone. None of these writes is
/// an event; an upload's asset is, when it is made (by [`crate::store::AssetStore::insert_asset`]).
///
/// Every write is durable when it returns: the offset it records says which bytes are kept.
#[async_trait]
pub trait UploadStore: Send + Sync + 'static {
    /// Stores a new upload, leased to `holder` until `until` (the request that made it goes on
    /// to write its first bytes). One with the same id is [`StoreError::DuplicateId`], and
    /// nothing changes.
    async fn insert_upload(
        &self,
        upload: &Upload,
        holder: Uuid,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError>;

    /// The upload with this id, as last saved.
    async fn get_upload(&self, id: Uuid) -> Result<Option<Upload>, StoreError>;

    /// Leases upload `id` to `holder` until `until` when no other holder's lease runs at
    /// `now` (an ended or run-out lease is taken over), atomically: of two callers at once,
    /// one gets [`UploadLease::Taken`] and the other [`UploadLease::Busy`].
    async fn lease_upload(
        &self,
        id: Uuid,
        holder: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<UploadLease, StoreError>;

    /// When upload `upload.id` is leased to `holder`: stores `upload` as it is, and the lease
    /// until `until` (`None` ends it), and answers `true`. Otherwise (it is gone, or another
    /// holder took it over) nothing changes and the answer is `false`.
    async fn save_upload(
        &self,
        upload: &Upload,
        holder: Uuid,
        until: Option<DateTime<Utc>>,
    ) -> Result<bool, StoreError>;

    /// Removes upload `id` whatever its lease; `false` if there was none.
    async fn delete_upload(&self, id: Uuid) -> Result<bool, StoreError>;

    /// Up to `limit` uploads whose `expires_at` is at or before `now` and that no lease holds
    /// at `now`, earliest expiry first.
    async fn expired_uploads(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Upload>, StoreError>;
}
