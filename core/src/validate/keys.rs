//! `POST /api/v1/keys` and `POST /api/v1/tokens` bodies: what a key minted over HTTP and a
//! browser token are made from.

use serde_json::{Map, Value};
use uuid::Uuid;

use super::pass::{MAX_PASS_SECONDS, ids, whole};
use super::{Fields, check_title, json_object};
use crate::error::ApiError;
use crate::model::Scope;

/// The longest key `name`, in characters.
pub const MAX_KEY_NAME: usize = 200;
/// The longest a key minted over HTTP may live (`expires_in`): 10 years, in seconds.
pub const MAX_KEY_SECONDS: u64 = MAX_PASS_SECONDS;
/// The longest a browser token may live, in seconds (24 hours).
pub const MAX_TOKEN_SECONDS: u64 = 86_400;
/// How long a browser token lives when `expires_in` is not given, in seconds.
pub const DEFAULT_TOKEN_SECONDS: u64 = 3600;
/// The most libraries a browser token may be limited to.
pub const MAX_TOKEN_LIBRARIES: usize = 20;

/// The scopes a browser token may carry: the reading ones.
pub const READ_SCOPES: [Scope; 4] = [
    Scope::ReadAssets,
    Scope::ReadLibraries,
    Scope::ReadPaid,
    Scope::ReadEvents,
];

/// A validated `POST /api/v1/keys` body. Whether the caller may mint those scopes in that
/// workspace is for the service to say.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeyDoc {
    /// A name to tell keys apart: non-blank, at most [`MAX_KEY_NAME`] characters.
    pub name: String,
    /// Its scopes, each once, in the order given (at least one).
    pub scopes: Vec<Scope>,
    /// The workspace named ([`super::workspace_id`]); `None`: none named.
    pub workspace_id: Option<String>,
    /// Seconds it works from now (1 to [`MAX_KEY_SECONDS`]); `None`: until revoked.
    pub expires_in: Option<u64>,
}

/// A validated `POST /api/v1/tokens` body.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TokenDoc {
    /// Its scopes, each once (at least one, each among [`READ_SCOPES`]).
    pub scopes: Vec<Scope>,
    /// The libraries it is limited to (1 to [`MAX_TOKEN_LIBRARIES`], each once); `None`: not
    /// limited to libraries.
    pub library_ids: Option<Vec<Uuid>>,
    /// Seconds it works from now: 1 to [`MAX_TOKEN_SECONDS`], [`DEFAULT_TOKEN_SECONDS`]
    /// when not given.
    pub expires_in: u64,
}

/// `scopes`: a non-empty array of scope names, each kept once; `allowed` says which may be
/// named (else 400 on `scopes[i]`, `why` saying which).
fn scopes(map: &Map<String, Value>, allowed: &[Scope], why: &str) -> Result<Vec<Scope>, ApiError> {
    let list = match map.get("scopes") {
        Some(Value::Array(list)) if !list.is_empty() => list,
        None | Some(Value::Null) => {
            return Err(ApiError::validation("scopes", "scopes is required"));
        }
        Some(_) => {
            return Err(ApiError::validation(
                "scopes",
                "scopes must be a non-empty array of scope names",
            ));
        }
    };
    let mut out = Vec::with_capacity(list.len());
    for (n, value) in list.iter().enumerate() {
        let path = format!("scopes[{n}]");
        let scope = value
            .as_str()
            .and_then(Scope::parse)
            .filter(|s| allowed.contains(s))
            .ok_or_else(|| ApiError::validation(&path, format!("{path} must be {why}")))?;
        if !out.contains(&scope) {
            out.push(scope);
        }
    }
    Ok(out)
}

fn names(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Validates a key body: a JSON object with `name` (required), `scopes` (required: a
/// non-empty array of scope names), optional `workspace_id` and optional `expires_in` (whole
/// seconds, 1 to 10 years; `null` or absent: until revoked). A 400 names the field. Unknown
/// fields are ignored.
///
/// ```
/// use assetlib_core::Scope;
/// use assetlib_core::validate::key_doc;
///
/// let doc = key_doc(br#"{"name": "acme site", "scopes": ["read:assets"], "workspace_id": "acme"}"#)
///     .unwrap();
/// assert_eq!(doc.scopes, [Scope::ReadAssets]);
/// assert!(key_doc(br#"{"name": "x", "scopes": ["read:everything"]}"#).is_err());
/// ```
///
/// # Errors
/// 400 naming the field (or `scopes[i]`) that is missing or wrong.
pub fn key_doc(body: &[u8]) -> Result<KeyDoc, ApiError> {
    let map = json_object(body)?;
    let f = Fields::new(&map, "");
    let name = f.req_str("name")?;
    check_title("name", name, MAX_KEY_NAME)?;
    let every = format!("a scope: {}", names(&Scope::ALL));
    Ok(KeyDoc {
        name: name.to_owned(),
        scopes: scopes(&map, &Scope::ALL, &every)?,
        workspace_id: f
            .opt_str("workspace_id")?
            .map(|w| super::workspace_id("workspace_id", w))
            .transpose()?,
        expires_in: whole(&map, "expires_in", MAX_KEY_SECONDS)?,
    })
}

/// Validates a browser token body: a JSON object with `scopes` (required: a non-empty array
/// of read scopes), optional `library_ids` (1 to 20 library ids; `null` or absent: not
/// limited to libraries) and optional `expires_in` (whole seconds, 1 to 86400; default
/// 3600). A 400 names the field. Unknown fields are ignored.
///
/// ```
/// use assetlib_core::validate::token_doc;
///
/// let doc = token_doc(br#"{"scopes": ["read:libraries", "read:assets"], "expires_in": 600}"#)
///     .unwrap();
/// assert_eq!(doc.expires_in, 600);
/// assert!(token_doc(br#"{"scopes": ["write:assets"]}"#).is_err());
/// assert!(token_doc(br#"{"scopes": ["read:assets"], "expires_in": 86401}"#).is_err());
/// ```
///
/// # Errors
/// 400 naming the field (or `scopes[i]`, `library_ids[i]`) that is missing or wrong.
pub fn token_doc(body: &[u8]) -> Result<TokenDoc, ApiError> {
    let map = json_object(body)?;
    let reading = format!(
        "a read scope (a browser token reads only): {}",
        names(&READ_SCOPES)
    );
    Ok(TokenDoc {
        scopes: scopes(&map, &READ_SCOPES, &reading)?,
        library_ids: ids(
            &map,
            "library_ids",
            ("a library id", "libraries"),
            MAX_TOKEN_LIBRARIES,
        )?,
        expires_in: whole(&map, "expires_in", MAX_TOKEN_SECONDS)?.unwrap_or(DEFAULT_TOKEN_SECONDS),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(made: Result<impl std::fmt::Debug, ApiError>) -> String {
        match made {
            Err(ApiError::Validation { field, .. }) => field,
            other => panic!("{other:?}"),
        }
    }

    fn key(body: Value) -> Result<KeyDoc, ApiError> {
        key_doc(body.to_string().as_bytes())
    }

    fn token(body: Value) -> Result<TokenDoc, ApiError> {
        token_doc(body.to_string().as_bytes())
    }

    #[test]
    fn a_key_body_is_checked_field_by_field() {
        let doc = key(
            json!({"name": "site", "scopes": ["read:assets", "admin:keys",
            "read:assets"], "expires_in": 60, "other": 1}),
        )
        .unwrap();
        assert_eq!(doc.scopes, [Scope::ReadAssets, Scope::AdminKeys]);
        assert_eq!((doc.expires_in, doc.workspace_id), (Some(60), None));
        for (body, named) in [
            (json!({"scopes": ["read:assets"]}), "name"),
            (json!({"name": " ", "scopes": ["read:assets"]}), "name"),
            (json!({"name": "x"}), "scopes"),
            (json!({"name": "x", "scopes": []}), "scopes"),
            (json!({"name": "x", "scopes": "read:assets"}), "scopes"),
            (
                json!({"name": "x", "scopes": ["read:assets", 7]}),
                "scopes[1]",
            ),
            (json!({"name": "x", "scopes": ["read:all"]}), "scopes[0]"),
            (
                json!({"name": "x", "scopes": ["read:assets"], "workspace_id": "a b"}),
                "workspace_id",
            ),
            (
                json!({"name": "x", "scopes": ["read:assets"], "expires_in": 0}),
                "expires_in",
            ),
        ] {
            assert_eq!(field(key(body.clone())), named, "{body}");
        }
    }

    #[test]
    fn a_token_body_takes_read_scopes_and_at_most_a_day() {
        let a = Uuid::new_v4();
        let doc = token(json!({"scopes": ["read:paid"], "library_ids": [a, a]})).unwrap();
        assert_eq!(
            (doc.scopes, doc.library_ids, doc.expires_in),
            (vec![Scope::ReadPaid], Some(vec![a]), DEFAULT_TOKEN_SECONDS)
        );
        let many: Vec<Uuid> = (0..=MAX_TOKEN_LIBRARIES).map(|_| Uuid::new_v4()).collect();
        for (body, named) in [
            (json!({"scopes": ["write:assets"]}), "scopes[0]"),
            (
                json!({"scopes": ["read:assets", "admin:keys"]}),
                "scopes[1]",
            ),
            (
                json!({"scopes": ["read:assets"], "expires_in": 86401}),
                "expires_in",
            ),
            (
                json!({"scopes": ["read:assets"], "library_ids": []}),
                "library_ids",
            ),
            (
                json!({"scopes": ["read:assets"], "library_ids": many}),
                "library_ids",
            ),
            (
                json!({"scopes": ["read:assets"], "library_ids": ["nope"]}),
                "library_ids[0]",
            ),
        ] {
            assert_eq!(field(token(body.clone())), named, "{body}");
        }
    }
}
