//! Credentials: the `Authorization` header -> an API key or a library pass -> SHA-256 ->
//! principal, and scope checks.
//!
//! Keys look like `alk_` followed by 43 base64url characters (32 random bytes), passes like
//! `alp_` followed by the same. Only their SHA-256 is stored. A key is sent as `Bearer alk_...`,
//! a pass as `Pass alp_...`.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::model::{ApiKey, Scope};

/// The prefix of every key.
pub const KEY_PREFIX: &str = "alk_";
/// Length of a whole key: the prefix and 43 base64url characters.
pub const KEY_LEN: usize = KEY_PREFIX.len() + 43;
/// The prefix of every library pass.
pub const PASS_PREFIX: &str = "alp_";

/// The 401 of every pass that does not work, whatever is wrong with it (malformed, unknown,
/// expired, revoked): one answer, so it tells nothing about which.
pub const PASS_INVALID: ApiError =
    ApiError::Unauthorized("Library pass is invalid, expired or revoked");

/// What an `Authorization` header carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential<'h> {
    /// `Bearer alk_...`: an API key of the right shape.
    Key(&'h str),
    /// `Pass alp_...`: a library pass of the right shape.
    Pass(&'h str),
    /// `Bearer alt_...`: a browser token (its signature is checked by the service).
    Token(&'h str),
}

/// The prefix of every browser token.
pub const TOKEN_PREFIX: &str = "alt_";

/// A freshly made key: the secret (shown once) and its hash (stored).
#[derive(Debug, Clone)]
pub struct NewKey {
    /// The key to hand to the user.
    pub secret: String,
    /// Its SHA-256.
    pub hash: [u8; 32],
}

/// Makes a new random key.
pub fn generate_key() -> Result<NewKey, getrandom::Error> {
    generate(KEY_PREFIX)
}

/// Makes a new random library pass (the same shape as a key, with [`PASS_PREFIX`]).
pub fn generate_pass() -> Result<NewKey, getrandom::Error> {
    generate(PASS_PREFIX)
}

fn generate(prefix: &str) -> Result<NewKey, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    let secret = format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes));
    let hash = hash_key(&secret);
    Ok(NewKey { secret, hash })
}

/// SHA-256 of a key.
pub fn hash_key(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// Whether `key` has the shape of a key (so malformed ones are refused without a lookup).
pub fn is_well_formed(key: &str) -> bool {
    has_shape(key, KEY_PREFIX)
}

/// Whether `pass` has the shape of a library pass.
pub fn is_well_formed_pass(pass: &str) -> bool {
    has_shape(pass, PASS_PREFIX)
}

fn has_shape(secret: &str, prefix: &str) -> bool {
    secret.len() == KEY_LEN
        && secret.starts_with(prefix)
        && secret[prefix.len()..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Takes the key out of an `Authorization` header value: `Bearer <key>` (the scheme in any
/// case, as RFC 9110 allows). A missing header, another scheme, or a malformed key is 401.
pub fn bearer_key(header: Option<&[u8]>) -> Result<&str, ApiError> {
    match credential(header)? {
        Credential::Key(key) => Ok(key),
        Credential::Pass(_) => Err(bad_header()),
        Credential::Token(_) => Err(ApiError::Unauthorized("Invalid API key")),
    }
}

/// What an `Authorization` header value carries: `Bearer <key>`, `Bearer <browser token>` or
/// `Pass <library pass>` (the scheme in any case, as RFC 9110 allows). A missing header,
/// another scheme, or a malformed key is 401; a malformed pass is [`PASS_INVALID`].
pub fn credential(header: Option<&[u8]>) -> Result<Credential<'_>, ApiError> {
    let header = header.ok_or(ApiError::Unauthorized("Missing Authorization header"))?;
    let header = std::str::from_utf8(header).map_err(|_| bad_header())?;
    let (scheme, secret) = header.split_once(' ').ok_or_else(bad_header)?;
    let secret = secret.trim_matches(' ');
    if scheme.eq_ignore_ascii_case("pass") {
        return match is_well_formed_pass(secret) {
            true => Ok(Credential::Pass(secret)),
            false => Err(PASS_INVALID),
        };
    }
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(bad_header());
    }
    if secret.starts_with(TOKEN_PREFIX) {
        return Ok(Credential::Token(secret));
    }
    if !is_well_formed(secret) {
        return Err(ApiError::Unauthorized("Invalid API key"));
    }
    Ok(Credential::Key(secret))
}

fn bad_header() -> ApiError {
    ApiError::Unauthorized("Authorization header must be 'Bearer <API key>'")
}

/// Checks a looked-up key record: it must exist, not be revoked, and not be expired at `now`.
pub fn check_record(record: Option<ApiKey>, now: DateTime<Utc>) -> Result<ApiKey, ApiError> {
    let key = record.ok_or(KEY_UNKNOWN)?;
    check_live(&key, now)?;
    Ok(key)
}

/// The 401 of a key the store does not know.
pub(crate) const KEY_UNKNOWN: ApiError = ApiError::Unauthorized("Invalid API key");

/// Checks that a known key is neither revoked nor expired at `now` (401 otherwise), as
/// [`check_record`] does.
pub(crate) fn check_live(key: &ApiKey, now: DateTime<Utc>) -> Result<(), ApiError> {
    if key.revoked_at.is_some() {
        return Err(ApiError::Unauthorized("API key has been revoked"));
    }
    if key.expires_at.is_some_and(|at| at <= now) {
        return Err(ApiError::Unauthorized("API key has expired"));
    }
    Ok(())
}

/// Checks that `key` carries every scope in `required`; the first missing one is 403.
pub fn require_scopes(key: &ApiKey, required: &[Scope]) -> Result<(), ApiError> {
    match required.iter().find(|s| !key.scopes.contains(s)) {
        Some(missing) => Err(ApiError::Forbidden(*missing)),
        None => Ok(()),
    }
}

/// Parses a comma-separated scope list such as `read:assets,write:assets`.
pub fn parse_scopes(list: &str) -> Result<Vec<Scope>, String> {
    let mut scopes = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let scope = Scope::parse(name).ok_or_else(|| {
            let all: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
            format!("unknown scope {name:?}; scopes are {}", all.join(", "))
        })?;
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    if scopes.is_empty() {
        return Err("at least one scope is required".to_owned());
    }
    scopes.sort();
    Ok(scopes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;
    use uuid::Uuid;

    fn record(scopes: &[Scope]) -> ApiKey {
        ApiKey {
            id: Uuid::new_v4(),
            name: "test".into(),
            key_hash: [0; 32],
            scopes: scopes.to_vec(),
            created_at: Utc::now(),
            expires_at: None,
            revoked_at: None,
            workspace_id: None,
        }
    }

    fn unauthorized_message(e: ApiError) -> &'static str {
        match e {
            ApiError::Unauthorized(m) => m,
            other => panic!("expected 401, got {other:?}"),
        }
    }

    #[test]
    fn generated_keys_are_well_formed_unique_and_hash_to_their_hash() {
        let a = generate_key().unwrap();
        let b = generate_key().unwrap();
        assert!(is_well_formed(&a.secret), "{}", a.secret);
        assert_eq!(a.secret.len(), KEY_LEN);
        assert_ne!(a.secret, b.secret);
        assert_eq!(hash_key(&a.secret), a.hash);
        assert_ne!(a.hash, b.hash);
    }

    #[test]
    fn bearer_header_forms() {
        let key = generate_key().unwrap().secret;
        assert_eq!(
            bearer_key(Some(format!("Bearer {key}").as_bytes())).unwrap(),
            key
        );
        assert_eq!(
            bearer_key(Some(format!("bearer {key}").as_bytes())).unwrap(),
            key
        );
        assert_eq!(
            bearer_key(Some(format!("BEARER  {key} ").as_bytes())).unwrap(),
            key
        );
        assert_eq!(
            unauthorized_message(bearer_key(None).unwrap_err()),
            "Missing Authorization header"
        );
        for bad in [
            format!("Basic {key}"),
            key.clone(),
            "Bearer".to_owned(),
            format!("Token {key}"),
        ] {
            let e = bearer_key(Some(bad.as_bytes())).unwrap_err();
            assert_eq!(e.status(), 401, "{bad}");
        }
        assert_eq!(
            unauthorized_message(bearer_key(Some(b"Bearer nope")).unwrap_err()),
            "Invalid API key"
        );
        assert_eq!(
            bearer_key(Some(b"Bearer \xff\xfe")).unwrap_err().status(),
            401
        );
        let wrong_alphabet = format!("{KEY_PREFIX}{}", "+".repeat(43));
        assert!(bearer_key(Some(format!("Bearer {wrong_alphabet}").as_bytes())).is_err());
    }

    #[test]
    fn pass_header_forms() {
        let pass = generate_pass().unwrap().secret;
        assert!(pass.starts_with(PASS_PREFIX) && is_well_formed_pass(&pass));
        assert!(!is_well_formed(&pass), "a pass is not a key");
        for header in [format!("Pass {pass}"), format!("pass  {pass} ")] {
            assert_eq!(
                credential(Some(header.as_bytes())).unwrap(),
                Credential::Pass(&pass)
            );
        }
        let key = generate_key().unwrap().secret;
        assert!(!is_well_formed_pass(&key), "a key is not a pass");
        for bad in [
            format!("Pass {key}"),
            "Pass alp_short".to_owned(),
            format!("Pass {}", &pass[..pass.len() - 1]),
            format!("Pass {}+", &pass[..pass.len() - 1]),
        ] {
            let e = credential(Some(bad.as_bytes())).unwrap_err();
            assert_eq!(e.message(), PASS_INVALID.message(), "{bad}");
        }
        // A pass sent as a key is a malformed key; a key-only path refuses a pass.
        assert_eq!(
            unauthorized_message(
                credential(Some(format!("Bearer {pass}").as_bytes())).unwrap_err()
            ),
            "Invalid API key"
        );
        assert_eq!(
            bearer_key(Some(format!("Pass {pass}").as_bytes()))
                .unwrap_err()
                .status(),
            401
        );
    }

    #[test]
    fn records_unknown_revoked_expired() {
        let now = Utc::now();
        assert_eq!(
            unauthorized_message(check_record(None, now).unwrap_err()),
            "Invalid API key"
        );
        let mut k = record(&[Scope::ReadAssets]);
        assert!(check_record(Some(k.clone()), now).is_ok());
        k.expires_at = Some(now + Duration::seconds(10));
        assert!(check_record(Some(k.clone()), now).is_ok());
        k.expires_at = Some(now);
        assert_eq!(
            unauthorized_message(check_record(Some(k.clone()), now).unwrap_err()),
            "API key has expired"
        );
        k.expires_at = None;
        k.revoked_at = Some(now);
        assert_eq!(
            unauthorized_message(check_record(Some(k), now).unwrap_err()),
            "API key has been revoked"
        );
    }

    #[test]
    fn scope_check_names_the_missing_scope() {
        let k = record(&[Scope::ReadAssets, Scope::ReadLibraries]);
        assert!(require_scopes(&k, &[Scope::ReadAssets]).is_ok());
        assert!(require_scopes(&k, &[Scope::ReadLibraries, Scope::ReadAssets]).is_ok());
        let e = require_scopes(&k, &[Scope::WriteAssets]).unwrap_err();
        assert_eq!(e.status(), 403);
        assert_eq!(e.message(), "API key lacks required scope: write:assets");
    }

    #[test]
    fn scope_lists() {
        assert_eq!(
            parse_scopes("write:assets, read:assets,read:assets").unwrap(),
            vec![Scope::ReadAssets, Scope::WriteAssets]
        );
        assert!(parse_scopes("").is_err());
        assert!(parse_scopes("admin").unwrap_err().contains("admin"));
    }
}
