//! API key records: made (global or of a workspace), listed and revoked, for the ready
//! servers' `keys` commands, for apps, and for the key API (`keys` feature).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Service;
use crate::auth;
use crate::error::ApiError;
use crate::model::{ApiKey, Scope};
use crate::records::now;

impl Service {
    /// Makes a new global API key with `scopes`, returning its record and the key itself
    /// (shown once; only its hash is stored).
    pub async fn create_key(
        &self,
        name: &str,
        scopes: Vec<Scope>,
        expires_at: Option<DateTime<Utc>>,
    ) -> Result<(ApiKey, String), ApiError> {
        self.create_workspace_key(name, scopes, expires_at, None)
            .await
    }

    /// Makes a new API key with `scopes` that reads and writes only the records of
    /// `workspace_id` (a global key, as [`Service::create_key`] makes, when `None`), returning
    /// its record and the key itself (shown once; only its hash is stored).
    ///
    /// # Errors
    /// 400 on `workspace_id` when it is not a workspace id
    /// ([`crate::validate::is_workspace_id`]).
    pub async fn create_workspace_key(
        &self,
        name: &str,
        scopes: Vec<Scope>,
        expires_at: Option<DateTime<Utc>>,
        workspace_id: Option<&str>,
    ) -> Result<(ApiKey, String), ApiError> {
        let workspace_id = workspace_id
            .map(|w| crate::validate::workspace_id("workspace_id", w))
            .transpose()?;
        let new = auth::generate_key().map_err(ApiError::internal)?;
        let record = ApiKey {
            id: Uuid::new_v4(),
            name: name.to_owned(),
            key_hash: new.hash,
            scopes,
            created_at: now(),
            expires_at,
            revoked_at: None,
            workspace_id,
        };
        self.inner
            .store
            .insert_key(record.clone(), &self.log)
            .await?;
        Ok((record, new.secret))
    }

    /// Every key record, oldest first.
    pub async fn list_keys(&self) -> Result<Vec<ApiKey>, ApiError> {
        Ok(self.inner.store.list_keys().await?)
    }

    /// Revokes a key; `false` if there is no such key. This service refuses it at once; other
    /// processes sharing the store do once their store's keys version moves
    /// ([`crate::KeyStore::keys_version`]: within 100 ms on PostgreSQL with change notices),
    /// else within [`crate::KEY_CACHE_TTL`].
    pub async fn revoke_key(&self, id: Uuid) -> Result<bool, ApiError> {
        // A key's workspace never changes: its event names the one read here.
        let Some(key) = self.inner.store.get_key(id).await? else {
            return Ok(false);
        };
        let log = self.log.in_workspace(key.workspace_id.as_deref());
        let revoked = self.inner.store.revoke_key(id, now(), &log).await?;
        self.inner.keys.forget(id);
        #[cfg(feature = "keys")]
        {
            self.inner.minters.forget(id);
            self.inner.tokens.forget(id);
        }
        Ok(revoked)
    }
}
