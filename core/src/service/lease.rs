//! [`Lease`]: one request's hold on an upload, saved to the store with its progress.

use std::sync::Arc;
use std::time::{Duration, Instant};

use uuid::Uuid;

use crate::error::ApiError;
use crate::records::now;
use crate::store::{Store, UploadStore};
use crate::tus::Upload;
use crate::tus::storage::Progress;

/// One request's hold on an upload ([`crate::store::UploadStore::lease_upload`]): it alone
/// writes the upload's bytes and record while the lease runs, and renews it with each save.
pub(super) struct Lease {
    store: Arc<dyn Store>,
    holder: Uuid,
    /// How long a lease runs from its last renewal.
    term: Duration,
    renewed: Instant,
}

impl Lease {
    /// The lease `holder` took just now for `term`.
    pub(super) fn new(store: Arc<dyn Store>, holder: Uuid, term: Duration) -> Self {
        Lease {
            store,
            holder,
            term,
            renewed: Instant::now(),
        }
    }

    /// The store's uploads: a lease is only ever taken on a store that keeps them.
    fn uploads(&self) -> Result<&dyn UploadStore, ApiError> {
        self.store.upload_store().ok_or(crate::routes::NO_ROUTE)
    }

    /// When a lease taken now ends.
    pub(super) fn until(term: Duration) -> chrono::DateTime<chrono::Utc> {
        now() + chrono::Duration::from_std(term).unwrap_or(chrono::Duration::MAX)
    }

    /// Saves `upload` and renews the lease; 423 when the lease was lost (it ran out and
    /// another request took the upload over), and the request stops.
    async fn renew(&mut self, upload: &Upload) -> Result<(), ApiError> {
        let until = Self::until(self.term);
        if !self
            .uploads()?
            .save_upload(upload, self.holder, Some(until))
            .await?
        {
            return Err(ApiError::Locked { retry_after: 1 });
        }
        self.renewed = Instant::now();
        Ok(())
    }

    /// Saves `upload` and ends the lease; `false` when it was lost already.
    pub(super) async fn release(&self, upload: &Upload) -> Result<bool, ApiError> {
        Ok(self
            .uploads()?
            .save_upload(upload, self.holder, None)
            .await?)
    }
}

impl Progress for Lease {
    async fn save(&mut self, upload: &Upload) -> Result<(), ApiError> {
        self.renew(upload).await
    }

    /// Saves `upload` again when a third of the term has passed since the last save, so a
    /// slow request keeps its lease.
    async fn keep(&mut self, upload: &Upload) -> Result<(), ApiError> {
        if self.renewed.elapsed() >= self.term / 3 {
            self.renew(upload).await?;
        }
        Ok(())
    }
}
