//! Uploads in progress ([`UploadStore`]): one row each, its record as JSON, its lease in two
//! columns checked by the statement that changes it.

use assetlib_core::store::{UploadLease, UploadStore};
use assetlib_core::tus::Upload;
use assetlib_core::{StoreError, async_trait};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::error::{Failure, duplicate_id, to_i64};
use crate::store::PgStore;

/// An upload's record as stored.
fn encode(upload: &Upload) -> Result<String, Failure> {
    serde_json::to_string(upload).map_err(|e| Failure::invalid("upload", e.to_string()))
}

/// An upload from its stored record.
fn decode(record: &str) -> Result<Upload, Failure> {
    serde_json::from_str(record).map_err(|e| Failure::invalid("upload", e.to_string()))
}

impl PgStore {
    async fn insert_upload_impl(
        &self,
        upload: &Upload,
        holder: Uuid,
        until: DateTime<Utc>,
    ) -> Result<bool, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "INSERT INTO {s}.uploads (id, expires_at, holder, held_until, record) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING"
        );
        let record = encode(upload)?;
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let inserted = client
            .execute(
                &stmt,
                &[&upload.id, &upload.expires_at, &holder, &until, &record],
            )
            .await?;
        Ok(inserted == 1)
    }

    async fn get_upload_impl(&self, id: Uuid) -> Result<Option<Upload>, Failure> {
        let s = &self.schema.q;
        let sql = format!("SELECT record FROM {s}.uploads WHERE id = $1");
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query_opt(&stmt, &[&id])
            .await?
            .map(|row| decode(row.try_get(0)?))
            .transpose()
    }

    async fn lease_upload_impl(
        &self,
        id: Uuid,
        holder: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<UploadLease, Failure> {
        let s = &self.schema.q;
        // The UPDATE takes the lease when it is free; a concurrent one waits for it and checks
        // its WHERE again on the row as the first left it, so only one of them takes it.
        let take = format!(
            "UPDATE {s}.uploads SET holder = $2, held_until = $4 \
             WHERE id = $1 AND (holder IS NULL OR holder = $2 OR held_until <= $3) \
             RETURNING record"
        );
        // Read in a statement of its own, after the UPDATE: its snapshot sees the lease a
        // concurrent request took (a sub-select of the UPDATE's statement would not).
        let held = format!("SELECT holder, held_until FROM {s}.uploads WHERE id = $1");
        let client = self.client().await?;
        let take = client.prepare_cached(&take).await?;
        let held = client.prepare_cached(&held).await?;
        loop {
            if let Some(row) = client
                .query_opt(&take, &[&id, &holder, &now, &until])
                .await?
            {
                let record: String = row.try_get(0)?;
                return Ok(UploadLease::Taken(Box::new(decode(&record)?)));
            }
            let Some(row) = client.query_opt(&held, &[&id]).await? else {
                return Ok(UploadLease::Missing);
            };
            let holder: Option<Uuid> = row.try_get(0)?;
            let until: Option<DateTime<Utc>> = row.try_get(1)?;
            match (holder, until) {
                (Some(_), Some(until)) if until > now => return Ok(UploadLease::Busy(until)),
                // Released (or run out) since the UPDATE looked: try again.
                _ => {}
            }
        }
    }

    async fn save_upload_impl(
        &self,
        upload: &Upload,
        holder: Uuid,
        until: Option<DateTime<Utc>>,
    ) -> Result<bool, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "UPDATE {s}.uploads SET record = $3, held_until = $4, \
                 holder = CASE WHEN $4::timestamptz IS NULL THEN NULL ELSE holder END \
             WHERE id = $1 AND holder = $2"
        );
        let record = encode(upload)?;
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let saved = client
            .execute(&stmt, &[&upload.id, &holder, &record, &until])
            .await?;
        Ok(saved == 1)
    }

    async fn delete_upload_impl(&self, id: Uuid) -> Result<bool, Failure> {
        let s = &self.schema.q;
        let sql = format!("DELETE FROM {s}.uploads WHERE id = $1");
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        Ok(client.execute(&stmt, &[&id]).await? == 1)
    }

    async fn expired_uploads_impl(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Upload>, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "SELECT record FROM {s}.uploads \
             WHERE expires_at <= $1 AND (holder IS NULL OR held_until <= $1) \
             ORDER BY expires_at, id LIMIT $2"
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let limit = to_i64("upload batch", u64::from(limit))?;
        client
            .query(&stmt, &[&now, &limit])
            .await?
            .iter()
            .map(|row| decode(row.try_get(0)?))
            .collect()
    }
}

#[async_trait]
impl UploadStore for PgStore {
    async fn insert_upload(
        &self,
        upload: &Upload,
        holder: Uuid,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        if self.insert_upload_impl(upload, holder, until).await? {
            Ok(())
        } else {
            Err(duplicate_id(upload.id))
        }
    }

    async fn get_upload(&self, id: Uuid) -> Result<Option<Upload>, StoreError> {
        Ok(self.get_upload_impl(id).await?)
    }

    async fn lease_upload(
        &self,
        id: Uuid,
        holder: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<UploadLease, StoreError> {
        Ok(self.lease_upload_impl(id, holder, now, until).await?)
    }

    async fn save_upload(
        &self,
        upload: &Upload,
        holder: Uuid,
        until: Option<DateTime<Utc>>,
    ) -> Result<bool, StoreError> {
        Ok(self.save_upload_impl(upload, holder, until).await?)
    }

    async fn delete_upload(&self, id: Uuid) -> Result<bool, StoreError> {
        Ok(self.delete_upload_impl(id).await?)
    }

    async fn expired_uploads(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Upload>, StoreError> {
        Ok(self.expired_uploads_impl(now, limit).await?)
    }
}
