//! What websites use: libraries by slug, signed download links, and keyless reads of public
//! assets.

use uuid::Uuid;

use super::access::{Access, FileRight, named_workspace};
use super::{Service, unix_now};
use crate::error::ApiError;
use crate::query;
use crate::render::{SignedLink, Timestamp, data};
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::signed::{self, Grant, Target};

use crate::validate;

/// 32 random bytes for a signing secret.
fn random_secret() -> Result<[u8; 32], ApiError> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(ApiError::internal)?;
    Ok(secret)
}

impl Service {
    /// The store's signing secret (made on the store's first use), read again at most every
    /// [`crate::KEY_CACHE_TTL`], so a rotation through another process sharing the store
    /// takes effect here within that time.
    pub(super) async fn signing_secret(&self) -> Result<[u8; 32], ApiError> {
        if let Some(secret) = self.inner.secret.get() {
            return Ok(secret);
        }
        let candidate = random_secret()?;
        let secret = self.inner.store.signing_secret(candidate).await?;
        self.inner.secret.put(secret);
        Ok(secret)
    }

    /// Makes a new signing secret and keeps it in the store: every link signed before stops
    /// working, at once through this service and within [`crate::KEY_CACHE_TTL`] through
    /// any other process sharing the store (the ready server's `keys
    /// rotate-signing-secret`). The way to revoke signed links that leaked.
    ///
    /// # Errors
    /// 500 when the store fails.
    pub async fn rotate_signing_secret(&self) -> Result<(), ApiError> {
        let secret = random_secret()?;
        self.inner.store.rotate_signing_secret(secret).await?;
        self.inner.secret.put(secret);
        Ok(())
    }

    /// `GET /api/v1/libraries/slug/{slug}`: exactly what `GET /api/v1/libraries/{id}` answers
    /// for the library with that slug.
    pub(super) async fn get_library_by_slug(
        &self,
        slug: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let id = self.library_of_slug(slug, req.query, ws).await?;
        self.library_page(id, req, ws).await
    }

    /// The library a slug route names (404 when none): the one with `slug` in the workspace
    /// its query names (`workspace_id`; a workspace key's own, `seen`, and 403 for another),
    /// else the one with it in no workspace, else the only library with it (so a slug that
    /// names one library finds it without the workspace).
    pub(super) async fn library_of_slug(
        &self,
        slug: &str,
        query: Option<&str>,
        seen: Option<&str>,
    ) -> Result<Uuid, ApiError> {
        let wanted = named_workspace(seen, query::slug_workspace(query)?)?;
        let holders = self.inner.store.libraries_by_slug(slug).await?;
        let found = match wanted.as_deref() {
            Some(w) => holders
                .iter()
                .find(|h| h.workspace_id.as_deref() == Some(w)),
            None => {
                holders
                    .iter()
                    .find(|h| h.workspace_id.is_none())
                    .or(match holders.as_slice() {
                        [only] => Some(only),
                        _ => None,
                    })
            }
        };
        found.map(|h| h.id).ok_or(ApiError::LibraryNotFound)
    }

    /// `GET /api/v1/assets/{asset_id}/download-url?expires_in=S`: a link that downloads the
    /// asset without a key for `S` seconds (1 to 604800, default 3600), for a caller that may
    /// download it now ([`Service::may_download`]). The link carries what minted it (a key
    /// with `read:paid`, or the pass) and is judged by that again when used.
    pub(super) async fn asset_download_url(
        &self,
        id: &str,
        req: RawRequest<'_>,
        access: &Access,
    ) -> Result<Reply, ApiError> {
        let asset = self.asset_for(id, access.reader()).await?;
        self.may_download(&asset, access.files()).await?;
        let expires_in = expires_in(req.query)?;
        self.signed_link(
            Target::Asset(asset.id),
            grant(access.files()),
            &format!("assets/{}/download", asset.id),
            expires_in,
            req.mount,
        )
        .await
    }

    /// `GET /api/v1/libraries/{library_id}/download-url?expires_in=S`: a link to the library's
    /// zip, for a caller that may download the zip now (else 403, as the zip itself).
    pub(super) async fn library_download_url(
        &self,
        id: &str,
        req: RawRequest<'_>,
        access: &Access,
    ) -> Result<Reply, ApiError> {
        let id = validate::parse_id("library_id", id)?;
        let rows = self.published_library_in(id, access.workspace()).await?;
        self.zip_plan(&rows, access.files()).await?;
        let expires_in = expires_in(req.query)?;
        self.signed_link(
            Target::Library(id),
            grant(access.files()),
            &format!("libraries/{id}/download"),
            expires_in,
            req.mount,
        )
        .await
    }

    /// The link to `path` (below the API prefix, with its own query if any) for `target`,
    /// minted with `grant`, valid for `expires_in` seconds.
    pub(super) async fn signed_link(
        &self,
        target: Target<'_>,
        grant: Grant,
        path: &str,
        expires_in: u64,
        mount: &str,
    ) -> Result<Reply, ApiError> {
        let expires = unix_now().saturating_add(expires_in);
        let query = signed::query(&self.signing_secret().await?, target, expires, grant);
        let join = if path.contains('?') { '&' } else { '?' };
        let url = format!(
            "{}{}/{path}{join}{query}",
            mount.trim_end_matches('/'),
            crate::routes::API_PREFIX
        );
        let expires_at = chrono::DateTime::from_timestamp(expires as i64, 0)
            .ok_or_else(|| ApiError::internal("expiry out of range"))?;
        Ok(data(
            200,
            SignedLink {
                expires_at: Timestamp(expires_at),
                url,
            },
        ))
    }
}

/// What a link minted with `right` carries.
pub(super) fn grant(right: FileRight<'_>) -> Grant {
    match right {
        FileRight::All => Grant::Paid,
        FileRight::Free => Grant::Free,
        FileRight::Pass(pass) => Grant::Pass(pass.id),
    }
}

/// The `expires_in` parameter: seconds from 1 to 604800 (7 days), default 3600.
pub(super) fn expires_in(query: Option<&str>) -> Result<u64, ApiError> {
    let mut found = None;
    for (name, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        if name == "expires_in" && found.replace(value).is_some() {
            return Err(ApiError::validation(
                "expires_in",
                "expires_in must be given at most once",
            ));
        }
    }
    let Some(value) = found else {
        return Ok(signed::DEFAULT_EXPIRES_IN);
    };
    value
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| value.parse::<u64>().ok())
        .flatten()
        .filter(|s| (1..=signed::MAX_EXPIRES_IN).contains(s))
        .ok_or_else(|| {
            ApiError::validation(
                "expires_in",
                format!(
                    "expires_in must be a whole number of seconds from 1 to {}",
                    signed::MAX_EXPIRES_IN
                ),
            )
        })
}
