//! Who a request acts as ([`Access`]), which assets that caller sees ([`Reader`]), and the one
//! loader of an asset by path id for every kind of caller ([`Service::asset_for`]).

use super::Service;
use crate::auth;
use crate::error::ApiError;
use crate::model::{ApiKey, Asset, Scope};
use crate::signed;
use crate::validate;

/// Who a request acts as, once admitted.
pub(super) enum Access {
    /// A valid key with the operation's scopes.
    Key(ApiKey),
    /// A keyless read or download of one asset, served only for a published, public asset.
    Public,
    /// A download through a valid signed link.
    Signed,
    /// An operation that needs no scope, so no key: the OpenAPI document.
    Open,
}

impl Access {
    /// The key, for an operation that needs one; the 401 of a keyless request otherwise (the
    /// admission lets no keyless request through to such an operation).
    pub(super) fn key(&self) -> Result<&ApiKey, ApiError> {
        match self {
            Access::Key(key) => Ok(key),
            Access::Public | Access::Signed | Access::Open => Err(no_key()),
        }
    }

    /// Which assets this caller sees.
    pub(super) fn reader(&self) -> Reader {
        match self {
            Access::Key(key) => Reader::of_key(key),
            Access::Signed => Reader::Published,
            Access::Public | Access::Open => Reader::Public,
        }
    }
}

/// Whether `key` sees drafts: keys with `write:assets` read and list them.
pub(super) fn sees_drafts(key: &ApiKey) -> bool {
    key.scopes.contains(&Scope::WriteAssets)
}

/// The 401 of a keyless request for an asset that is not served without a key.
pub(super) fn no_key() -> ApiError {
    auth::bearer_key(None).err().unwrap_or(signed::INVALID)
}

/// Which assets a caller sees; an asset read again (while a download starts, say) is judged
/// the same way as the first time.
#[derive(Debug, Clone, Copy)]
pub(super) enum Reader {
    /// A key that sees drafts (`write:assets`).
    Drafts,
    /// A key without `write:assets`, or a signed link: published assets.
    Published,
    /// No key: published public assets.
    Public,
}

impl Reader {
    /// What a key sees: drafts too with `write:assets`, else published assets.
    pub(super) fn of_key(key: &ApiKey) -> Reader {
        if sees_drafts(key) {
            Reader::Drafts
        } else {
            Reader::Published
        }
    }

    /// Whether an asset with these flags is seen.
    pub(super) fn sees(self, published: bool, is_public: bool) -> bool {
        match self {
            Reader::Drafts => true,
            Reader::Published => published,
            Reader::Public => published && is_public,
        }
    }

    /// The answer for an asset this reader does not see: 404 with a key or a signed link;
    /// without a key the 401 any asset that is not public gets, so nothing is told.
    pub(super) fn missing(self) -> ApiError {
        match self {
            Reader::Public => no_key(),
            Reader::Drafts | Reader::Published => ApiError::AssetNotFound,
        }
    }

    /// A path's asset id: 400 on `asset_id` when it is not one, or without a key the 401
    /// that tells nothing.
    pub(super) fn asset_id(self, raw: &str) -> Result<uuid::Uuid, ApiError> {
        match self {
            Reader::Public => validate::strict_id(raw).ok_or_else(no_key),
            Reader::Drafts | Reader::Published => validate::parse_id("asset_id", raw),
        }
    }
}

impl Service {
    /// The asset with the path id `id` as `reader` may see it, or the answer for one it does
    /// not see ([`Reader::missing`]).
    pub(super) async fn asset_for(&self, id: &str, reader: Reader) -> Result<Asset, ApiError> {
        let id = reader.asset_id(id)?;
        self.inner
            .store
            .get_asset(id)
            .await?
            .filter(|a| reader.sees(a.published, a.is_public))
            .ok_or_else(|| reader.missing())
    }
}
