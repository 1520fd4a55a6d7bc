//! Keys over HTTP (scope `admin:keys`): mint, list, read and revoke them; and browser tokens
//! (`POST /api/v1/tokens`, any key). A key mints only scopes it has, in its own workspace; a
//! token carries read scopes of its minting key, in that key's workspace.

use std::sync::Arc;

use chrono::{Duration, Utc};
use uuid::Uuid;

use super::access::{in_workspace, named_workspace};
use super::{Service, location, unix_now};
use crate::auth;
use crate::error::ApiError;
use crate::key_wire::{KeyWire, NewKeyWire, TokenWire};
use crate::model::{ApiKey, Scope};
use crate::page::AssetPagination;
use crate::query;
use crate::records::now;
use crate::render::{Envelope, Timestamp, data};
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::tokens::{self, Claims};
use crate::validate::{self, KeyDoc, TokenDoc};

/// The 404 of a key that does not exist (or is of another workspace).
const NO_KEY: ApiError = ApiError::NotFound("Key not found");
/// The 403 of a browser token asking for another.
pub(super) const TOKEN_MINTS_NONE: ApiError =
    ApiError::NotPermitted("A browser token cannot mint browser tokens; this needs an API key");

impl Service {
    /// `POST /api/v1/keys`: 201 with the key, its secret shown this once, and its
    /// `Location`.
    pub(super) async fn post_key(
        &self,
        req: RawRequest<'_>,
        caller: &ApiKey,
    ) -> Result<Reply, ApiError> {
        let mount = req.mount;
        let body = self.json_body(req).await?;
        let doc = validate::key_doc(&body)?;
        let (key, secret) = self.mint_key(caller, doc).await?;
        Ok(data(
            201,
            NewKeyWire {
                key: KeyWire::of(&key),
                secret: &secret,
            },
        )
        .with_header("location", location(mount, "keys", key.id)))
    }

    /// Mints a key from a validated body as `caller` may: only scopes `caller` has (403 naming
    /// the first it lacks), in `caller`'s workspace when it has one (403 naming another).
    /// Returns the record and the key itself (shown once; only its SHA-256 is stored).
    ///
    /// # Errors
    /// 403 as above; 500 when the store fails.
    pub async fn mint_key(
        &self,
        caller: &ApiKey,
        doc: KeyDoc,
    ) -> Result<(ApiKey, String), ApiError> {
        auth::require_scopes(caller, &doc.scopes)?;
        let workspace = named_workspace(caller.workspace_id.as_deref(), doc.workspace_id)?;
        let expires_at = doc
            .expires_in
            .map(|s| now() + Duration::seconds(i64::try_from(s).unwrap_or(i64::MAX)));
        self.create_workspace_key(&doc.name, doc.scopes, expires_at, workspace.as_deref())
            .await
    }

    /// The keys `ws` sees (every one for a global key), newest first.
    async fn keys_seen(&self, ws: Option<&str>) -> Result<Vec<ApiKey>, ApiError> {
        let mut keys: Vec<ApiKey> = self
            .inner
            .store
            .list_keys()
            .await?
            .into_iter()
            .filter(|k| in_workspace(ws, k.workspace_id.as_deref()))
            .collect();
        keys.sort_by_key(|k| std::cmp::Reverse((k.created_at, k.id)));
        Ok(keys)
    }

    /// `GET /api/v1/keys?page&per_page`: newest first, never secrets; a workspace key's
    /// workspace's alone.
    pub(super) async fn key_list(
        &self,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let q = query::page_query(req.query, self.inner.config.max_page_size)?;
        let page = crate::page::of_all(self.keys_seen(ws).await?, q.page, q.per_page);
        let items: Vec<KeyWire<'_>> = page.items.iter().map(KeyWire::of).collect();
        Ok(Reply::json_value(
            200,
            &Envelope {
                data: items,
                pagination: Some(AssetPagination::new(q.page, q.per_page, page.total)),
            },
        ))
    }

    /// The key of a path id as `ws` sees it: 400 when it is not an id, 404 when there is
    /// none (of that workspace).
    async fn key_seen(&self, id: &str, ws: Option<&str>) -> Result<ApiKey, ApiError> {
        let id = validate::parse_id("key_id", id)?;
        self.inner
            .store
            .get_key(id)
            .await?
            .filter(|k| in_workspace(ws, k.workspace_id.as_deref()))
            .ok_or(NO_KEY)
    }

    /// `GET /api/v1/keys/{key_id}`.
    pub(super) async fn key_detail(&self, id: &str, ws: Option<&str>) -> Result<Reply, ApiError> {
        let key = self.key_seen(id, ws).await?;
        Ok(data(200, KeyWire::of(&key)))
    }

    /// `DELETE /api/v1/keys/{key_id}`: revokes the key (204, also when it was revoked
    /// already: the first time is kept); 404 for one of another workspace.
    pub(super) async fn delete_key(&self, id: &str, ws: Option<&str>) -> Result<Reply, ApiError> {
        let key = self.key_seen(id, ws).await?;
        if self.revoke_key(key.id).await? {
            Ok(Reply::empty(204))
        } else {
            Err(NO_KEY)
        }
    }

    /// `POST /api/v1/tokens`: 201 with a browser token of `caller` (a key, never a token).
    pub(super) async fn post_token(
        &self,
        req: RawRequest<'_>,
        caller: &ApiKey,
    ) -> Result<Reply, ApiError> {
        let body = self.json_body(req).await?;
        let doc = validate::token_doc(&body)?;
        let (token, claims) = self.mint_token(caller, doc).await?;
        Ok(data(
            201,
            TokenWire {
                token: &token,
                expires_at: Timestamp(claims.expires_at()),
                scopes: claims.scopes.iter().map(|s| s.as_str()).collect(),
                library_ids: (!claims.library_ids.is_empty()).then_some(&claims.library_ids[..]),
                workspace_id: claims.workspace_id.as_deref(),
            },
        ))
    }

    /// Mints a browser token of `caller` from a validated body: scopes `caller` has (403
    /// naming the first it lacks), libraries of `caller`'s workspace (400 on
    /// `library_ids[i]` for one there is not), signed with the store's signing secret;
    /// nothing is stored. Returns the token and what it says.
    ///
    /// # Errors
    /// 403 and 400 as above; 500 when the store fails.
    pub async fn mint_token(
        &self,
        caller: &ApiKey,
        doc: TokenDoc,
    ) -> Result<(String, Claims), ApiError> {
        auth::require_scopes(caller, &doc.scopes)?;
        let ws = caller.workspace_id.as_deref();
        let library_ids = doc.library_ids.unwrap_or_default();
        for (n, &id) in library_ids.iter().enumerate() {
            let seen = match self.inner.store.library_workspace(id).await? {
                Some(found) => in_workspace(ws, found.as_deref()),
                None => false,
            };
            if !seen {
                let path = format!("library_ids[{n}]");
                return Err(ApiError::validation(
                    &path,
                    format!("{path}: library {id} does not exist"),
                ));
            }
        }
        let claims = Claims {
            key_id: caller.id,
            workspace_id: caller.workspace_id.clone(),
            scopes: Scope::ALL
                .into_iter()
                .filter(|s| doc.scopes.contains(s))
                .collect(),
            library_ids,
            expires: unix_now().saturating_add(doc.expires_in),
        };
        let secret = self.signing_secret().await?;
        Ok((tokens::mint(&secret, &claims)?, claims))
    }

    /// The caller a browser token acts as: its claims under the store's signing secret (401
    /// when tampered, signed under a rotated secret, or expired), and its minting key, which
    /// must still work and be of the same workspace (401 otherwise). The caller is that key
    /// with the token's scopes and expiry and no key hash of its own ([`TOKEN_HASH`]); with
    /// the libraries the token is limited to.
    ///
    /// A token checked lately is kept as keys are ([`crate::KEY_CACHE_TTL`], the store's keys
    /// version, dropped when its minting key is revoked here), with the secret it was checked
    /// under: a rotation of the secret refuses it as soon as this service reads the new one,
    /// and both expiries are checked on every use.
    pub(super) async fn token_caller(
        &self,
        token: &str,
    ) -> Result<(Arc<ApiKey>, Option<Arc<[Uuid]>>), ApiError> {
        let secret = self.signing_secret().await?;
        let version = self.inner.store.keys_version();
        let kept = self.inner.tokens.get(token, version);
        let checked = match kept.filter(|t| t.secret == secret) {
            Some(kept) => kept,
            None => {
                let checked = self.check_token(&secret, token).await?;
                self.inner
                    .tokens
                    .put(token.into(), checked.clone(), version);
                checked
            }
        };
        let now = Utc::now();
        if checked.caller.expires_at.is_some_and(|at| at <= now) {
            return Err(tokens::EXPIRED);
        }
        if checked.minter_expires.is_some_and(|at| at <= now) {
            return Err(MINTER_GONE);
        }
        Ok((checked.caller, checked.libraries))
    }

    /// Checks a browser token not kept: its signature and claims, and its minting key.
    async fn check_token(&self, secret: &[u8; 32], token: &str) -> Result<CheckedToken, ApiError> {
        let claims = tokens::verify(secret, token, unix_now())?;
        let minter = self.key_by_id(claims.key_id).await?.ok_or(MINTER_GONE)?;
        if auth::check_live(&minter, Utc::now()).is_err()
            || minter.workspace_id != claims.workspace_id
        {
            return Err(MINTER_GONE);
        }
        let expires_at = Some(claims.expires_at());
        let caller = ApiKey {
            id: minter.id,
            name: minter.name.clone(),
            key_hash: TOKEN_HASH,
            scopes: claims
                .scopes
                .into_iter()
                .filter(|s| minter.scopes.contains(s))
                .collect::<Vec<Scope>>(),
            created_at: minter.created_at,
            expires_at,
            revoked_at: None,
            workspace_id: claims.workspace_id,
        };
        Ok(CheckedToken {
            caller: Arc::new(caller),
            libraries: (!claims.library_ids.is_empty()).then(|| claims.library_ids.into()),
            secret: *secret,
            minter_expires: minter.expires_at,
        })
    }
}

/// A browser token checked lately ([`Service::token_caller`]): the caller it acts as, the
/// libraries it is limited to, and what it was checked against.
#[derive(Clone)]
pub(super) struct CheckedToken {
    /// The minting key with the token's scopes and expiry.
    caller: Arc<ApiKey>,
    /// The libraries it opens alone, if it is limited to some.
    libraries: Option<Arc<[Uuid]>>,
    /// The signing secret its signature checked out under.
    secret: [u8; 32],
    /// When its minting key expires, if it does.
    minter_expires: Option<chrono::DateTime<Utc>>,
}

impl crate::key_cache::OfKey for CheckedToken {
    fn key_id(&self) -> Uuid {
        self.caller.id
    }
}

/// The 403 of a token limited to libraries, on an operation of none of them.
const LIBRARIES_ONLY: ApiError = ApiError::NotPermitted(
    "This browser token opens only its libraries (library_ids), their assets and their files",
);
/// The 403 of a token limited to libraries, on another library or an asset none of its
/// libraries shows.
const NOT_IN_TOKEN: ApiError =
    ApiError::NotPermitted("This browser token does not open this library or asset");

impl Service {
    /// For a browser token limited to `libraries`: that the operation reads one of them (by
    /// id, or by slug in the workspace `ws` with the request's `query`) or one of their
    /// published assets (path id `id`), else 403. Any other operation is 403 too.
    pub(super) async fn token_may_open(
        &self,
        op: crate::routes::Operation,
        (id, query, ws): (&str, Option<&str>, Option<&str>),
        libraries: &[Uuid],
    ) -> Result<(), ApiError> {
        use crate::routes::Operation as Op;
        let library = match op {
            Op::GetLibrary | Op::DownloadLibrary | Op::LibraryDownloadUrl => {
                validate::parse_id("library_id", id)?
            }
            Op::GetLibraryBySlug => self.library_of_slug(id, query, ws).await?,
            Op::GetAsset
            | Op::DownloadAsset
            | Op::AssetDownloadUrl
            | Op::AssetImage
            | Op::AssetImageUrl => {
                let asset = validate::parse_id("asset_id", id)?;
                for &library in libraries {
                    match self.published_library(library).await {
                        Ok(rows)
                            if rows
                                .entries
                                .iter()
                                .any(|r| r.entry.asset_id == asset && r.asset.published) =>
                        {
                            return Ok(());
                        }
                        Ok(_) | Err(ApiError::LibraryNotFound) => {}
                        Err(e) => return Err(e),
                    }
                }
                return Err(NOT_IN_TOKEN);
            }
            _ => return Err(LIBRARIES_ONLY),
        };
        if libraries.contains(&library) {
            Ok(())
        } else {
            Err(NOT_IN_TOKEN)
        }
    }
}

/// The key hash of the caller a browser token acts as: no key's (a SHA-256 of all zeros is
/// never met); the caller is never looked up by it.
pub(super) const TOKEN_HASH: [u8; 32] = [0; 32];

/// The 401 of a token whose minting key is revoked, expired or gone.
const MINTER_GONE: ApiError =
    ApiError::Unauthorized("The key that minted this browser token is revoked or has expired");
