//! The document's schemas of keys minted over HTTP and browser tokens: `Key` (and `NewKey`,
//! with its secret), `BrowserToken`, their envelopes and list, and the bodies that make them
//! (`KeyDocument`, `TokenDocument`).

use serde_json::{Value, json};

use super::bodies::workspace_id;
use super::build::{array, describe, object, one_of_strings, or_null, schema, uuid};
use super::derived;
use super::schemas::{envelope, whole};
use crate::key_wire::{KeyWire, TokenWire};
use crate::model::Scope;
use crate::validate::{
    DEFAULT_TOKEN_SECONDS, MAX_KEY_NAME, MAX_KEY_SECONDS, MAX_TOKEN_LIBRARIES, MAX_TOKEN_SECONDS,
    READ_SCOPES,
};

/// Adds the schemas of keys and tokens, and of their bodies.
pub(super) fn add_schemas(add: &mut dyn FnMut(&str, Value)) {
    add("Key", key(false));
    add("NewKey", key(true));
    add("KeyEnvelope", envelope(schema("Key"), None));
    add("NewKeyEnvelope", envelope(schema("NewKey"), None));
    add(
        "KeyList",
        envelope(array(schema("Key")), Some(schema("AssetPagination"))),
    );
    add("BrowserToken", token());
    add("TokenEnvelope", envelope(schema("BrowserToken"), None));
    add("KeyDocument", key_document());
    add("TokenDocument", token_document());
}

fn scope_names(scopes: &[Scope]) -> Vec<&'static str> {
    scopes.iter().map(|s| s.as_str()).collect()
}

/// A key: the fields of [`KeyWire`], its scopes named, and its secret when just minted.
fn key(with_secret: bool) -> Value {
    let mut fields = derived::properties(&derived::of::<KeyWire>());
    for (name, schema) in &mut fields {
        if name == "scopes" {
            schema["items"] = one_of_strings(&scope_names(&Scope::ALL));
        }
    }
    if with_secret {
        fields.push((
            "secret".to_owned(),
            describe(
                json!({"type": "string", "pattern": "^alk_[A-Za-z0-9_-]{43}$"}),
                "The key itself, sent as `Authorization: Bearer <key>`: shown only in this \
                 answer.",
            ),
        ));
    }
    let description = match with_secret {
        true => "A key just minted, with its secret.",
        false => "An API key (never its secret).",
    };
    whole(fields, Some(description))
}

/// A browser token just minted: the fields of [`TokenWire`], its scopes named.
fn token() -> Value {
    let mut fields = derived::properties(&derived::of::<TokenWire>());
    for (name, schema) in &mut fields {
        if name == "scopes" {
            schema["items"] = one_of_strings(&scope_names(&READ_SCOPES));
        }
    }
    whole(fields, Some("A browser token just minted."))
}

fn scopes(names: &[&str], description: &str) -> Value {
    describe(
        json!({"type": "array", "minItems": 1, "items": one_of_strings(names)}),
        description,
    )
}

/// `POST /api/v1/keys` ([`crate::validate::key_doc`]).
fn key_document() -> Value {
    let fields = vec![
        (
            "name",
            describe(
                json!({"type": "string", "minLength": 1, "maxLength": MAX_KEY_NAME}),
                "A name to tell keys apart: not blank; at most 200 characters.",
            ),
        ),
        (
            "scopes",
            scopes(
                &scope_names(&Scope::ALL),
                "What the key may do: scopes the calling key has (403 naming one it lacks); \
                 each kept once.",
            ),
        ),
        (
            "workspace_id",
            workspace_id(
                "The key's workspace: a workspace key's own (naming another is 403), or any \
                 for a global key. Default: the caller's (none for a global key: the new key \
                 is global).",
            ),
        ),
        (
            "expires_in",
            describe(
                or_null(json!({"type": "integer", "minimum": 1, "maximum": MAX_KEY_SECONDS})),
                "Seconds the key works, from now (at most 10 years); null or absent: until \
                 revoked.",
            ),
        ),
    ];
    describe(
        object(fields, &["name", "scopes"]),
        "A key to mint. Unknown fields are ignored; a 400 names the field.",
    )
}

/// `POST /api/v1/tokens` ([`crate::validate::token_doc`]).
fn token_document() -> Value {
    let fields = vec![
        (
            "scopes",
            scopes(
                &scope_names(&READ_SCOPES),
                "The read scopes the token carries: scopes the calling key has (403 naming \
                 one it lacks); each kept once.",
            ),
        ),
        (
            "library_ids",
            describe(
                or_null(json!({"type": "array", "items": uuid(), "minItems": 1,
                    "maxItems": MAX_TOKEN_LIBRARIES})),
                "The libraries the token is limited to (each of the caller's workspace, else \
                 400 on `library_ids[i]`); null or absent: not limited to libraries.",
            ),
        ),
        (
            "expires_in",
            describe(
                or_null(
                    json!({"type": "integer", "minimum": 1, "maximum": MAX_TOKEN_SECONDS,
                    "default": DEFAULT_TOKEN_SECONDS}),
                ),
                "Seconds the token works, from now: at most 86400 (24 hours); default 3600.",
            ),
        ),
    ];
    describe(
        object(fields, &["scopes"]),
        "A browser token to mint. Unknown fields are ignored; a 400 names the field.",
    )
}
