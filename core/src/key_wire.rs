//! Keys and browser tokens as the API writes them (`/api/v1/keys`, `POST /api/v1/tokens`).

use serde::Serialize;
use uuid::Uuid;

use crate::model::ApiKey;
use crate::render::{Timestamp, opt_ts};

/// A key as the API shows it (never its secret, but in [`NewKeyWire`]).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct KeyWire<'a> {
    id: Uuid,
    /// A name to tell keys apart.
    name: &'a str,
    /// What the key may do.
    scopes: Vec<&'static str>,
    /// The workspace whose records alone it reads and writes; null: a global key.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[A-Za-z0-9_-]{1,64}$"))]
    workspace_id: Option<&'a str>,
    created_at: Timestamp,
    /// When it stops working; null: until revoked.
    expires_at: Option<Timestamp>,
    /// When it was revoked; null while it works.
    revoked_at: Option<Timestamp>,
}

impl<'a> KeyWire<'a> {
    pub(crate) fn of(key: &'a ApiKey) -> Self {
        KeyWire {
            id: key.id,
            name: &key.name,
            scopes: key.scopes.iter().map(|s| s.as_str()).collect(),
            workspace_id: key.workspace_id.as_deref(),
            created_at: Timestamp(key.created_at),
            expires_at: opt_ts(key.expires_at),
            revoked_at: opt_ts(key.revoked_at),
        }
    }
}

/// A key just minted: its fields and, this once, the key itself.
#[derive(Debug, Serialize)]
pub(crate) struct NewKeyWire<'a> {
    #[serde(flatten)]
    pub(crate) key: KeyWire<'a>,
    /// The key itself (`alk_...`): shown only in this answer.
    pub(crate) secret: &'a str,
}

/// A browser token just minted.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct TokenWire<'a> {
    /// The token (`alt_...`), sent as `Authorization: Bearer <token>`.
    #[cfg_attr(feature = "openapi", schema(pattern = "^alt_[A-Za-z0-9_-]+$"))]
    pub(crate) token: &'a str,
    /// When it stops working.
    pub(crate) expires_at: Timestamp,
    /// The read scopes it carries.
    pub(crate) scopes: Vec<&'static str>,
    /// The libraries it is limited to; null: not limited to libraries.
    pub(crate) library_ids: Option<&'a [Uuid]>,
    /// The workspace it opens (its minting key's); null: every workspace.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[A-Za-z0-9_-]{1,64}$"))]
    pub(crate) workspace_id: Option<&'a str>,
}
