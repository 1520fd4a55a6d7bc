//! Who a request acts as, decided from its head alone (`Service::admit`): a key with its
//! scopes and rate limit, a library pass, a signed link, a keyless public read, or nobody
//! (401); and the records stores keep for the capabilities (`Service::keeps_records_of`).

use std::net::IpAddr;
use std::sync::Arc;

use chrono::Utc;

use super::access::{self, Access};
use super::{Service, passes, unix_now};
use crate::auth;
use crate::error::ApiError;
#[cfg(feature = "keys")]
use crate::model::ApiKey;
use crate::routes::{NO_ROUTE, Operation};
use crate::signed;
use crate::store::{EventStore, PassStore, UploadStore, WebhookStore};

use crate::variant;

impl Service {
    /// Whether the store keeps the records `op`'s capability needs: an operation of passes,
    /// events, webhooks or uploads over a store that does not hand out that trait
    /// ([`crate::MetaStore::pass_store`], ...) has no route.
    pub(super) fn keeps_records_of(&self, op: Operation) -> bool {
        op.capability().is_none_or(|c| self.inner.store.keeps(c))
    }

    /// The store's library passes; the unknown route's 404 when it keeps none.
    pub(super) fn pass_store(&self) -> Result<&dyn PassStore, ApiError> {
        self.inner.store.pass_store().ok_or(NO_ROUTE)
    }

    /// The store's event log; the unknown route's 404 when it keeps none.
    pub(super) fn event_store(&self) -> Result<&dyn EventStore, ApiError> {
        self.inner.store.event_store().ok_or(NO_ROUTE)
    }

    /// The store's webhooks; the unknown route's 404 when it keeps none.
    #[cfg_attr(not(feature = "webhooks"), allow(dead_code))]
    pub(super) fn webhook_store(&self) -> Result<&dyn WebhookStore, ApiError> {
        self.inner.store.webhook_store().ok_or(NO_ROUTE)
    }

    /// The store's resumable and direct uploads; the unknown route's 404 when it keeps none.
    pub(super) fn upload_store(&self) -> Result<&dyn UploadStore, ApiError> {
        self.inner.store.upload_store().ok_or(NO_ROUTE)
    }

    /// Who may run `op`: an operation that needs no scope needs no key (any key sent is not
    /// looked at); otherwise a request with an `Authorization` header is judged by its key and
    /// scopes, or by its library pass, alone, from the head. Without one, a download with a
    /// signed link's parameters is judged by them, and a read or download of one asset may go
    /// on as a public request (served only for a published, public asset); anything else is
    /// 401, as is a keyless request with a pass in its query (a pass goes in the header only:
    /// a query leaks into logs and `Referer`). With a rate limit, a request with a key spends
    /// its key's budget, any other its client address's.
    pub(super) async fn admit(
        &self,
        op: Operation,
        id: &str,
        authorization: Option<&[u8]>,
        query: Option<&str>,
        client: Option<IpAddr>,
    ) -> Result<Access, ApiError> {
        if !op.needs_key() {
            return Ok(Access::Open);
        }
        if authorization.is_none() {
            self.spend_address_budget(client)?;
            if passes::in_query(query) {
                return Err(passes::PASS_IN_QUERY);
            }
            let spec = op.spec();
            if spec.row.link && signed::is_signed(query) {
                return Box::pin(self.admit_link(op, id, query)).await;
            }
            if spec.row.public {
                return Ok(Access::Public);
            }
        }
        let secret = match auth::credential(authorization)? {
            auth::Credential::Key(secret) => secret,
            auth::Credential::Pass(secret) => {
                self.spend_address_budget(client)?;
                return Box::pin(self.admit_pass(op, secret)).await;
            }
            auth::Credential::Token(token) => return Box::pin(self.admit_token(op, token)).await,
        };
        let hash = auth::hash_key(secret);
        let version = self.inner.store.keys_version();
        let key = match self.inner.keys.get(&hash, version) {
            Some(kept) => kept,
            None => {
                let found = self.inner.store.find_key(&hash).await?;
                let found = Arc::new(found.ok_or(auth::KEY_UNKNOWN)?);
                if found.revoked_at.is_none() {
                    self.inner.keys.put(hash, Arc::clone(&found), version);
                }
                found
            }
        };
        auth::check_live(&key, Utc::now())?;
        auth::require_scopes(&key, op.scopes())?;
        #[cfg(feature = "rate-limits")]
        if let Some(limits) = &self.inner.limiter {
            limits.check_key(key.id)?;
        }
        Ok(Access::Key(key))
    }

    /// Spends a request of the client address's budget (429 when it is spent), with a rate
    /// limit set.
    #[cfg_attr(
        not(feature = "rate-limits"),
        allow(clippy::unused_self, clippy::unnecessary_wraps)
    )]
    fn spend_address_budget(&self, client: Option<IpAddr>) -> Result<(), ApiError> {
        #[cfg(feature = "rate-limits")]
        if let Some(limits) = &self.inner.limiter {
            limits.check_address(client)?;
        }
        #[cfg(not(feature = "rate-limits"))]
        let _ = client;
        Ok(())
    }

    /// A download through a signed link: what minted it, checked; a link minted with a pass
    /// acts as that pass, which must still work (else the link's 401).
    async fn admit_link(
        &self,
        op: Operation,
        id: &str,
        query: Option<&str>,
    ) -> Result<Access, ApiError> {
        let id = crate::validate::strict_id(id).ok_or(signed::INVALID)?;
        // A link is minted with valid parameters only: any other is the link's 401, never a
        // 400 judged before the link is.
        let spec = match op {
            Operation::AssetImage => variant::parse(query, &self.inner.config.image_presets)
                .map_err(|_| signed::INVALID)?
                .spec
                .canonical(),
            _ => String::new(),
        };
        let target = match op {
            Operation::DownloadAsset => signed::Target::Asset(id),
            Operation::AssetImage => signed::Target::Image(id, &spec),
            _ => signed::Target::Library(id),
        };
        let secret = self.signing_secret().await?;
        match signed::verify(&secret, target, query, unix_now())? {
            signed::Grant::Free => Ok(Access::Signed { paid: false }),
            signed::Grant::Paid => Ok(Access::Signed { paid: true }),
            signed::Grant::Pass(pass) => {
                // A store that keeps no passes knows none: the link's 401.
                let passes = self.inner.store.pass_store().ok_or(signed::INVALID)?;
                let pass = passes.get_pass(pass).await?;
                match pass.filter(|p| p.is_live(Utc::now())) {
                    Some(pass) => Ok(Access::Pass(pass)),
                    None => Err(signed::INVALID),
                }
            }
        }
    }

    /// A request with `Authorization: Bearer alt_...`: a browser token that checks out
    /// ([`Service::token_caller`]), with the operation's scopes (403 otherwise), spending its
    /// minting key's budget. Without the `keys` feature there are no tokens: the 401 of an
    /// unknown key.
    async fn admit_token(&self, op: Operation, token: &str) -> Result<Access, ApiError> {
        #[cfg(feature = "keys")]
        {
            let (key, libraries) = self.token_caller(token).await?;
            auth::require_scopes(&key, op.scopes())?;
            #[cfg(feature = "rate-limits")]
            if let Some(limits) = &self.inner.limiter {
                limits.check_key(key.id)?;
            }
            Ok(Access::Token { key, libraries })
        }
        #[cfg(not(feature = "keys"))]
        {
            let _ = (op, token);
            Err(auth::KEY_UNKNOWN)
        }
    }

    /// The key record `id`, kept as keys found by hash are ([`crate::key_cache`]): the
    /// minting key of a browser token, looked up on each of its requests.
    #[cfg(feature = "keys")]
    pub(super) async fn key_by_id(&self, id: uuid::Uuid) -> Result<Option<Arc<ApiKey>>, ApiError> {
        let version = self.inner.store.keys_version();
        if let Some(kept) = self.inner.minters.get(&id, version) {
            return Ok(Some(kept));
        }
        let Some(found) = self.inner.store.get_key(id).await? else {
            return Ok(None);
        };
        let found = Arc::new(found);
        if found.revoked_at.is_none() {
            self.inner.minters.put(id, Arc::clone(&found), version);
        }
        Ok(Some(found))
    }

    /// A request with `Authorization: Pass`: the pass must be known, not revoked and not
    /// expired (one 401 for all three, read from the store every time, so a revocation
    /// anywhere counts at once), and `op` one a pass opens (else 403).
    async fn admit_pass(&self, op: Operation, secret: &str) -> Result<Access, ApiError> {
        // A store that keeps no passes knows none: the pass's 401.
        let passes = self.inner.store.pass_store().ok_or(auth::PASS_INVALID)?;
        let pass = passes
            .find_pass(&auth::hash_key(secret))
            .await?
            .filter(|p| p.is_live(Utc::now()))
            .ok_or(auth::PASS_INVALID)?;
        if !op.opens_with_pass() {
            return Err(access::NOT_FOR_PASSES);
        }
        Ok(Access::Pass(pass))
    }
}
