//! What websites need of the store: libraries by slug and the signing secret.

use assetlib_core::{
    EventStore, MetaStore, PassStore, SlugHolder, StoreError, UploadStore, WebhookStore,
    async_trait,
};

use crate::error::Failure;
use crate::store::PgStore;

impl PgStore {
    /// The workspace of the library `id`, if there is one: from memory for a published
    /// library this process knows and no notice has been about since it read it (a workspace
    /// changes only by a `PUT`, which sends one), else read.
    pub(crate) async fn library_workspace_impl(
        &self,
        id: uuid::Uuid,
    ) -> Result<Option<Option<String>>, StoreError> {
        if let Some(known) = self.replica.known_library(id) {
            return Ok(Some(known.workspace.as_deref().map(str::to_owned)));
        }
        let s = &self.schema.q;
        let sql = format!("SELECT workspace_id FROM {s}.libraries WHERE id = $1");
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await.map_err(Failure::from)?;
        let row = client
            .query_opt(&stmt, &[&id])
            .await
            .map_err(Failure::from)?;
        Ok(row
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(Failure::from)?)
    }

    /// The libraries holding `slug`, one per workspace, the one of no workspace first.
    pub(crate) async fn libraries_by_slug_impl(
        &self,
        slug: &str,
    ) -> Result<Vec<SlugHolder>, StoreError> {
        let s = &self.schema.q;
        let sql = format!(
            "SELECT workspace_id, id FROM {s}.libraries WHERE slug = $1 \
             ORDER BY workspace_id COLLATE \"C\" NULLS FIRST"
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await.map_err(Failure::from)?;
        let rows = client.query(&stmt, &[&slug]).await.map_err(Failure::from)?;
        let holders = rows
            .iter()
            .map(|r| {
                Ok(SlugHolder {
                    workspace_id: r.try_get(0)?,
                    id: r.try_get(1)?,
                })
            })
            .collect::<Result<_, tokio_postgres::Error>>()
            .map_err(Failure::from)?;
        Ok(holders)
    }

    /// Keeps `secret` in place of the signing secret (an upsert).
    pub(crate) async fn rotate_signing_secret_impl(
        &self,
        secret: [u8; 32],
    ) -> Result<(), StoreError> {
        let s = &self.schema.q;
        let upsert = format!(
            "INSERT INTO {s}.secrets (name, value) VALUES ('signing', $1) \
             ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value"
        );
        self.client()
            .await?
            .execute(&upsert, &[&&secret[..]])
            .await
            .map_err(Failure::from)?;
        Ok(())
    }

    /// Keeps `candidate` unless a secret is kept already (`ON CONFLICT DO NOTHING`), then
    /// reads the one kept: concurrent first calls all read the row that won.
    pub(crate) async fn signing_secret_impl(
        &self,
        candidate: [u8; 32],
    ) -> Result<[u8; 32], StoreError> {
        let s = &self.schema.q;
        let insert = format!(
            "INSERT INTO {s}.secrets (name, value) VALUES ('signing', $1) \
             ON CONFLICT (name) DO NOTHING"
        );
        let select = format!("SELECT value FROM {s}.secrets WHERE name = 'signing'");
        let client = self.client().await?;
        client
            .execute(&insert, &[&&candidate[..]])
            .await
            .map_err(Failure::from)?;
        let row = client
            .query_one(&select, &[])
            .await
            .map_err(Failure::from)?;
        let value: Vec<u8> = row.try_get(0).map_err(Failure::from)?;
        Ok(value.as_slice().try_into().map_err(|_| {
            Failure::invalid("signing secret", format!("{} bytes, not 32", value.len()))
        })?)
    }
}

#[async_trait]
impl MetaStore for PgStore {
    async fn signing_secret(&self, candidate: [u8; 32]) -> Result<[u8; 32], StoreError> {
        self.signing_secret_impl(candidate).await
    }

    async fn rotate_signing_secret(&self, secret: [u8; 32]) -> Result<(), StoreError> {
        self.rotate_signing_secret_impl(secret).await
    }

    /// Writes the views and downloads counted in memory.
    async fn flush(&self) -> Result<(), StoreError> {
        Ok(self
            .counters
            .flush(&self.pool, &self.schema, &self.replica)
            .await?)
    }

    fn use_replica_sync(&self, mode: assetlib_core::ReplicaSync) {
        self.replica.set_mode(mode);
    }

    fn pass_store(&self) -> Option<&dyn PassStore> {
        Some(self)
    }

    fn event_store(&self) -> Option<&dyn EventStore> {
        Some(self)
    }

    fn webhook_store(&self) -> Option<&dyn WebhookStore> {
        Some(self)
    }

    fn upload_store(&self) -> Option<&dyn UploadStore> {
        Some(self)
    }

    #[cfg(feature = "search")]
    fn search_store(&self) -> Option<&dyn assetlib_core::store::SearchStore> {
        Some(self)
    }

    #[cfg(feature = "transfer")]
    fn transfer_store(&self) -> Option<&dyn assetlib_core::store::TransferStore> {
        Some(self)
    }
}
