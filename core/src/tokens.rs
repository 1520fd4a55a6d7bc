//! Browser tokens (`alt_...`): short-lived read credentials a server hands a web page, minted
//! with `POST /api/v1/tokens` and sent as `Authorization: Bearer alt_...`.
//!
//! A token is its claims (the minting key's id and workspace, read scopes, the libraries it
//! is limited to, its expiry) and an HMAC-SHA256 of them under the store's signing secret
//! ([`crate::MetaStore::signing_secret`]), in base64url. Nothing is stored: every replica
//! checks a token alike, a signing-secret rotation refuses every token minted before it, and
//! the service refuses a token whose minting key is revoked or expired (it looks the key up
//! by id, as it looks keys up by hash). Signatures are compared in constant time.
//!
//! Layout of the signed bytes: a version byte (1), the key id (16 bytes), the expiry (Unix
//! seconds, big-endian `u64`), the scopes (a big-endian `u16` bit set over [`Scope::ALL`]'s
//! order), the workspace (a length byte, 0 for none, then its bytes), the libraries (a count
//! byte, then 16 bytes each); then the 32-byte MAC.
//!
//! ```
//! use assetlib_core::Scope;
//! use assetlib_core::tokens::{Claims, mint, verify};
//!
//! let secret = [7u8; 32];
//! let claims = Claims {
//!     key_id: uuid::Uuid::nil(),
//!     workspace_id: Some("acme".into()),
//!     scopes: vec![Scope::ReadAssets, Scope::ReadLibraries],
//!     library_ids: vec![],
//!     expires: 2_000_000_000,
//! };
//! let token = mint(&secret, &claims)?;
//! assert!(token.starts_with("alt_"));
//! assert_eq!(verify(&secret, &token, 1_999_999_000)?, claims);
//! assert!(verify(&[8u8; 32], &token, 1_999_999_000).is_err(), "another secret");
//! assert!(verify(&secret, &token, 2_000_000_000).is_err(), "expired");
//! # Ok::<(), assetlib_core::ApiError>(())
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

use crate::error::ApiError;
use crate::model::Scope;

pub use crate::auth::TOKEN_PREFIX as PREFIX;
/// The longest a token may live, in seconds (24 hours).
pub use crate::validate::MAX_TOKEN_SECONDS as MAX_EXPIRES_IN;
/// How far a replica's clock may run behind the one that minted, in seconds.
const CLOCK_SKEW: u64 = 300;
/// The longest a token can be (its claims at their largest), in characters.
const MAX_LEN: usize = 1024;
const VERSION: u8 = 1;
/// Keeps a token's MAC from ever matching a signed link's or anything else signed with the
/// same secret.
const DOMAIN: &[u8] = b"assetlib browser token\0";
const MAC_LEN: usize = 32;

/// The refusal of a malformed or tampered token (or one signed with a secret since rotated).
pub const INVALID: ApiError = ApiError::Unauthorized("Invalid browser token");
/// The refusal of a token past its expiry.
pub const EXPIRED: ApiError = ApiError::Unauthorized("Browser token has expired");

/// What a token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    /// The key that minted it.
    pub key_id: Uuid,
    /// That key's workspace: the one the token opens (`None`: a global key's).
    pub workspace_id: Option<String>,
    /// The read scopes it carries, in [`Scope::ALL`]'s order (as read back).
    pub scopes: Vec<Scope>,
    /// The libraries it is limited to; empty: not limited to libraries.
    pub library_ids: Vec<Uuid>,
    /// When it stops working (Unix seconds).
    pub expires: u64,
}

impl Claims {
    /// When the token stops working, as a time.
    pub fn expires_at(&self) -> chrono::DateTime<chrono::Utc> {
        let secs = i64::try_from(self.expires).unwrap_or(i64::MAX);
        chrono::DateTime::from_timestamp(secs, 0)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC)
    }
}

fn mac(secret: &[u8; 32], payload: &[u8]) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    mac.update(DOMAIN);
    mac.update(payload);
    mac
}

fn scope_bits(scopes: &[Scope]) -> u16 {
    Scope::ALL
        .iter()
        .enumerate()
        .filter(|(_, s)| scopes.contains(s))
        .fold(0, |bits, (i, _)| bits | (1 << i))
}

/// The signed bytes of `claims`, or `None` when they do not fit the layout (a workspace id
/// over 255 bytes or more than 255 libraries, which validation never lets through).
fn payload(claims: &Claims) -> Option<Vec<u8>> {
    let workspace = claims.workspace_id.as_deref().unwrap_or("").as_bytes();
    let mut out = Vec::with_capacity(29 + workspace.len() + 16 * claims.library_ids.len());
    out.push(VERSION);
    out.extend_from_slice(claims.key_id.as_bytes());
    out.extend_from_slice(&claims.expires.to_be_bytes());
    out.extend_from_slice(&scope_bits(&claims.scopes).to_be_bytes());
    out.push(u8::try_from(workspace.len()).ok()?);
    out.extend_from_slice(workspace);
    out.push(u8::try_from(claims.library_ids.len()).ok()?);
    for id in &claims.library_ids {
        out.extend_from_slice(id.as_bytes());
    }
    Some(out)
}

/// The token of `claims` under `secret`.
///
/// # Errors
/// 500 when the claims do not fit a token (a workspace id over 255 bytes, more than 255
/// libraries): validation keeps both far below.
pub fn mint(secret: &[u8; 32], claims: &Claims) -> Result<String, ApiError> {
    let payload = payload(claims).ok_or_else(|| ApiError::internal("token claims too large"))?;
    let signature = mac(secret, &payload).finalize().into_bytes();
    Ok(format!(
        "{PREFIX}{}",
        URL_SAFE_NO_PAD.encode([&payload[..], &signature[..]].concat())
    ))
}

/// Reads bytes off the front of a payload.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn id(&mut self) -> Option<Uuid> {
        self.take(16)
            .and_then(|b| <[u8; 16]>::try_from(b).ok())
            .map(Uuid::from_bytes)
    }
}

fn parse(payload: &[u8]) -> Option<Claims> {
    let mut r = Reader(payload);
    if r.byte()? != VERSION {
        return None;
    }
    let key_id = r.id()?;
    let expires = u64::from_be_bytes(r.take(8)?.try_into().ok()?);
    let bits = u16::from_be_bytes(r.take(2)?.try_into().ok()?);
    if u32::from(bits) >> Scope::ALL.len() != 0 {
        return None;
    }
    let scopes = Scope::ALL
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1 << i) != 0)
        .map(|(_, s)| *s)
        .collect();
    let len = usize::from(r.byte()?);
    let workspace_id = match len {
        0 => None,
        n => Some(String::from_utf8(r.take(n)?.to_vec()).ok()?),
    };
    let count = usize::from(r.byte()?);
    let library_ids = (0..count).map(|_| r.id()).collect::<Option<Vec<_>>>()?;
    r.0.is_empty().then_some(Claims {
        key_id,
        workspace_id,
        scopes,
        library_ids,
        expires,
    })
}

/// Checks `token` (with its prefix) under `secret` at `now` (Unix seconds) and answers its
/// claims: 401 [`INVALID`] for a malformed or tampered token, or one signed under another
/// secret, or one that claims to live longer than a token may; 401 [`EXPIRED`] past its
/// expiry. Whether its minting key still works is for the caller to check.
pub fn verify(secret: &[u8; 32], token: &str, now: u64) -> Result<Claims, ApiError> {
    let body = token.strip_prefix(PREFIX).ok_or(INVALID)?;
    if body.len() > MAX_LEN {
        return Err(INVALID);
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(body.as_bytes())
        .map_err(|_| INVALID)?;
    let split = bytes.len().checked_sub(MAC_LEN).ok_or(INVALID)?;
    let (payload, signature) = bytes.split_at(split);
    mac(secret, payload)
        .verify_slice(signature)
        .map_err(|_| INVALID)?;
    let claims = parse(payload).ok_or(INVALID)?;
    if claims.expires <= now {
        return Err(EXPIRED);
    }
    if claims.expires > now.saturating_add(MAX_EXPIRES_IN + CLOCK_SKEW) {
        return Err(INVALID);
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: [u8; 32] = [7; 32];
    const NOW: u64 = 1_800_000_000;

    /// The 401's message of a refused token.
    fn refusal(checked: Result<Claims, ApiError>) -> String {
        match checked {
            Err(ApiError::Unauthorized(message)) => message.to_owned(),
            other => panic!("expected a 401, got {other:?}"),
        }
    }

    const INVALID_TEXT: &str = "Invalid browser token";
    const EXPIRED_TEXT: &str = "Browser token has expired";

    fn claims() -> Claims {
        Claims {
            key_id: Uuid::from_bytes([1; 16]),
            workspace_id: Some("acme".into()),
            scopes: vec![Scope::ReadAssets, Scope::ReadLibraries],
            library_ids: vec![Uuid::from_bytes([2; 16]), Uuid::from_bytes([3; 16])],
            expires: NOW + 600,
        }
    }

    #[test]
    fn a_token_carries_its_claims_until_it_expires() {
        let token = mint(&SECRET, &claims()).unwrap();
        assert!(token.starts_with(PREFIX));
        assert_eq!(verify(&SECRET, &token, NOW).unwrap(), claims());
        assert_eq!(verify(&SECRET, &token, NOW + 599).unwrap(), claims());
        assert_eq!(refusal(verify(&SECRET, &token, NOW + 600)), EXPIRED_TEXT);
        let global = Claims {
            workspace_id: None,
            library_ids: vec![],
            scopes: Scope::ALL.to_vec(),
            ..claims()
        };
        let token = mint(&SECRET, &global).unwrap();
        assert_eq!(verify(&SECRET, &token, NOW).unwrap(), global);
    }

    #[test]
    fn a_changed_byte_or_another_secret_is_refused() {
        let token = mint(&SECRET, &claims()).unwrap();
        let mut bytes = URL_SAFE_NO_PAD.decode(&token[PREFIX.len()..]).unwrap();
        for i in 0..bytes.len() {
            bytes[i] ^= 1;
            let tampered = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&bytes));
            assert_eq!(
                refusal(verify(&SECRET, &tampered, NOW)),
                INVALID_TEXT,
                "byte {i}"
            );
            bytes[i] ^= 1;
        }
        assert_eq!(refusal(verify(&[8; 32], &token, NOW)), INVALID_TEXT);
        for bad in [
            "alt_",
            "alt_!!!",
            "alk_x",
            &format!("{token}A"),
            &token[..40],
        ] {
            assert_eq!(refusal(verify(&SECRET, bad, NOW)), INVALID_TEXT, "{bad}");
        }
        let long = format!("{PREFIX}{}", "A".repeat(MAX_LEN + 1));
        assert_eq!(refusal(verify(&SECRET, &long, NOW)), INVALID_TEXT);
    }

    #[test]
    fn a_token_claiming_more_than_a_day_is_refused() {
        let far = Claims {
            expires: NOW + MAX_EXPIRES_IN + CLOCK_SKEW + 1,
            ..claims()
        };
        let token = mint(&SECRET, &far).unwrap();
        assert_eq!(refusal(verify(&SECRET, &token, NOW)), INVALID_TEXT);
    }
}
