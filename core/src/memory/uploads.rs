//! [`UploadStore`] of the [`MemoryStore`]: uploads in progress and their leases.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::MemoryStore;
use crate::error::StoreError;
use crate::store::{UploadLease, UploadStore};
use crate::tus::Upload;

/// An upload as kept, with who holds it until when.
#[derive(Debug, Clone)]
pub(super) struct Held {
    upload: Upload,
    lease: Option<(Uuid, DateTime<Utc>)>,
}

impl Held {
    /// Whether a lease other than `holder`'s runs at `now`.
    fn busy(&self, holder: Option<Uuid>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.lease
            .filter(|(h, until)| Some(*h) != holder && *until > now)
            .map(|(_, until)| until)
    }
}

#[async_trait]
impl UploadStore for MemoryStore {
    async fn insert_upload(
        &self,
        upload: &Upload,
        holder: Uuid,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut state = self.write();
        if state.uploads.contains_key(&upload.id) {
            return Err(StoreError::DuplicateId { id: upload.id });
        }
        let held = Held {
            upload: upload.clone(),
            lease: Some((holder, until)),
        };
        state.uploads.insert(upload.id, held);
        Ok(())
    }

    async fn get_upload(&self, id: Uuid) -> Result<Option<Upload>, StoreError> {
        Ok(self.read().uploads.get(&id).map(|h| h.upload.clone()))
    }

    async fn lease_upload(
        &self,
        id: Uuid,
        holder: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<UploadLease, StoreError> {
        let mut state = self.write();
        let Some(held) = state.uploads.get_mut(&id) else {
            return Ok(UploadLease::Missing);
        };
        if let Some(until) = held.busy(Some(holder), now) {
            return Ok(UploadLease::Busy(until));
        }
        held.lease = Some((holder, until));
        Ok(UploadLease::Taken(Box::new(held.upload.clone())))
    }

    async fn save_upload(
        &self,
        upload: &Upload,
        holder: Uuid,
        until: Option<DateTime<Utc>>,
    ) -> Result<bool, StoreError> {
        let mut state = self.write();
        let Some(held) = state.uploads.get_mut(&upload.id) else {
            return Ok(false);
        };
        if held.lease.map(|(h, _)| h) != Some(holder) {
            return Ok(false);
        }
        held.upload = upload.clone();
        held.lease = until.map(|until| (holder, until));
        Ok(true)
    }

    async fn delete_upload(&self, id: Uuid) -> Result<bool, StoreError> {
        Ok(self.write().uploads.remove(&id).is_some())
    }

    async fn expired_uploads(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Upload>, StoreError> {
        let state = self.read();
        let mut expired: Vec<&Held> = state
            .uploads
            .values()
            .filter(|h| h.upload.expires_at <= now && h.busy(None, now).is_none())
            .collect();
        expired.sort_by_key(|h| (h.upload.expires_at, h.upload.id));
        Ok(expired
            .into_iter()
            .take(limit as usize)
            .map(|h| h.upload.clone())
            .collect())
    }
}
