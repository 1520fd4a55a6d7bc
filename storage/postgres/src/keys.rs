//! API key records: insert, lookup by hash, list, revoke.

use assetlib_core::events::{Log, Written};
use assetlib_core::{ApiKey, KeyStore, Scope, StoreError, async_trait};
use chrono::{DateTime, Utc};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::events::{At, log_rows_sql, one_event, then_logged};

use crate::error::{Failure, duplicate_id, duplicate_key_hash, unique_violation};
use crate::store::PgStore;

/// The key columns, in the order [`key_from_row`] reads.
pub(crate) const KEY_COLS: &str =
    "id, name, key_hash, scopes, created_at, expires_at, revoked_at, workspace_id";

/// Decodes the columns of [`KEY_COLS`].
pub(crate) fn key_from_row(row: &Row) -> Result<ApiKey, Failure> {
    let hash: Vec<u8> = row.try_get(2)?;
    let key_hash: [u8; 32] = hash
        .as_slice()
        .try_into()
        .map_err(|_| Failure::invalid("key hash", format!("{} bytes, not 32", hash.len())))?;
    let scopes = row
        .try_get::<_, Vec<String>>(3)?
        .iter()
        .map(|s| Scope::parse(s).ok_or_else(|| Failure::invalid("scope", format!("unknown {s:?}"))))
        .collect::<Result<_, _>>()?;
    Ok(ApiKey {
        id: row.try_get(0)?,
        name: row.try_get(1)?,
        key_hash,
        scopes,
        created_at: row.try_get(4)?,
        expires_at: row.try_get(5)?,
        revoked_at: row.try_get(6)?,
        workspace_id: row.try_get(7)?,
    })
}

impl PgStore {
    pub(crate) async fn insert_key_impl(&self, key: ApiKey, log: &Log) -> Result<(), StoreError> {
        let s = &self.schema.q;
        let event = one_event(log, Written::KeyCreated(&key))?;
        let sql = format!(
            "WITH k AS (INSERT INTO {s}.api_keys ({KEY_COLS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id) {}",
            log_rows_sql(s, &event, "k", At::from(9))
        );
        let scopes: Vec<&str> = key.scopes.iter().map(|x| x.as_str()).collect();
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await.map_err(Failure::from)?;
        let hash = &key.key_hash[..];
        let params = then_logged(
            [
                &key.id,
                &key.name,
                &hash,
                &scopes,
                &key.created_at,
                &key.expires_at,
                &key.revoked_at,
                &key.workspace_id,
            ],
            &event,
        );
        let result = client.execute(&stmt, &params).await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => Err(match unique_violation(&e) {
                Some("api_keys_pkey") => duplicate_id(key.id),
                Some("api_keys_key_hash_key") => duplicate_key_hash(),
                _ => Failure::from(e).into(),
            }),
        }
    }

    pub(crate) async fn find_key_impl(&self, hash: &[u8; 32]) -> Result<Option<ApiKey>, Failure> {
        let s = &self.schema.q;
        let sql = format!("SELECT {KEY_COLS} FROM {s}.api_keys WHERE key_hash = $1");
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query_opt(&stmt, &[&&hash[..]])
            .await?
            .map(|row| key_from_row(&row))
            .transpose()
    }

    pub(crate) async fn get_key_impl(&self, id: Uuid) -> Result<Option<ApiKey>, Failure> {
        let s = &self.schema.q;
        let sql = format!("SELECT {KEY_COLS} FROM {s}.api_keys WHERE id = $1");
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query_opt(&stmt, &[&id])
            .await?
            .map(|row| key_from_row(&row))
            .transpose()
    }

    pub(crate) async fn list_keys_impl(&self) -> Result<Vec<ApiKey>, Failure> {
        let s = &self.schema.q;
        let sql = format!("SELECT {KEY_COLS} FROM {s}.api_keys ORDER BY created_at, id");
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query(&stmt, &[])
            .await?
            .iter()
            .map(key_from_row)
            .collect()
    }

    pub(crate) async fn revoke_key_impl(
        &self,
        id: Uuid,
        at: DateTime<Utc>,
        log: &Log,
    ) -> Result<bool, Failure> {
        self.revoke_once("api_keys", id, at, one_event(log, Written::KeyRevoked(id))?)
            .await
    }
}

#[async_trait]
impl KeyStore for PgStore {
    async fn insert_key(&self, key: ApiKey, log: &Log) -> Result<(), StoreError> {
        self.insert_key_impl(key, log).await
    }

    async fn find_key(&self, key_hash: &[u8; 32]) -> Result<Option<ApiKey>, StoreError> {
        Ok(self.find_key_impl(key_hash).await?)
    }

    async fn list_keys(&self) -> Result<Vec<ApiKey>, StoreError> {
        Ok(self.list_keys_impl().await?)
    }

    async fn get_key(&self, id: Uuid) -> Result<Option<ApiKey>, StoreError> {
        Ok(self.get_key_impl(id).await?)
    }

    async fn revoke_key(&self, id: Uuid, at: DateTime<Utc>, log: &Log) -> Result<bool, StoreError> {
        let revoked = self.revoke_key_impl(id, at, log).await;
        self.replica.changed(crate::notices::Notice::Key);
        Ok(revoked?)
    }

    fn keys_version(&self) -> Option<u64> {
        self.replica.keys_version()
    }
}
