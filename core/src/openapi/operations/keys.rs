//! The key operations, described: mint, list, read and revoke keys; mint browser tokens.

use serde_json::json;

use super::{JSON_BODY_ERRORS, Keys, Spec, created, json_answer, json_body, read_answer};
use crate::openapi::build::{parameter as p, schema};

/// `Operation::CreateKey`.
pub(super) fn create_key() -> Spec {
    Spec {
        id: "createKey",
        tag: "keys",
        summary: "Mint a key",
        description: "Mints an API key. A key mints only scopes it has (403 naming the first \
            it lacks), and a workspace key only keys of its own workspace (403 naming \
            another; without `workspace_id` the new key is of the caller's workspace, or \
            global for a global caller). The answer shows the key (`secret`, `alk_...`) this \
            once; only its SHA-256 is kept.",
        keys: Keys::Required,
        parameters: vec![],
        body: Some(json_body("KeyDocument")),
        answers: vec![(
            "201",
            created(
                "Minted: the key, with its secret.",
                schema("NewKeyEnvelope"),
                json!({
                    "GetKey": {"operationId": "getKey",
                        "parameters": {"key_id": "$response.body#/data/id"}},
                }),
            ),
        )],
        errors: JSON_BODY_ERRORS,
    }
}

/// `Operation::ListKeys`.
pub(super) fn list_keys() -> Spec {
    Spec {
        id: "listKeys",
        tag: "keys",
        summary: "List keys",
        description: "A page of the keys, newest first, revoked and expired ones included \
            (a workspace key sees its workspace's alone); never their secrets.",
        keys: Keys::Required,
        parameters: vec![p("Page"), p("PerPage"), p("IfNoneMatch")],
        body: None,
        answers: vec![("200", read_answer("A page of keys.", schema("KeyList")))],
        errors: &["BadRequest"],
    }
}

/// `Operation::GetKey`.
pub(super) fn get_key() -> Spec {
    Spec {
        id: "getKey",
        tag: "keys",
        summary: "Read a key",
        description: "One key: its name, scopes, workspace and times; never its secret.",
        keys: Keys::Required,
        parameters: vec![p("KeyId"), p("IfNoneMatch")],
        body: None,
        answers: vec![("200", read_answer("The key.", schema("KeyEnvelope")))],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::RevokeKey`.
pub(super) fn revoke_key() -> Spec {
    Spec {
        id: "revokeKey",
        tag: "keys",
        summary: "Revoke a key",
        description: "The key stops working at once in this server, and on every server \
            sharing the store within seconds; so do the browser tokens it minted (401). The \
            key is kept, showing when it was revoked (`revoked_at`); revoking it again is 204 \
            and keeps the first time. A key of another workspace is 404, as a missing one.",
        keys: Keys::Required,
        parameters: vec![p("KeyId")],
        body: None,
        answers: vec![("204", json!({"description": "Revoked."}))],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::CreateToken`.
pub(super) fn create_token() -> Spec {
    Spec {
        id: "createToken",
        tag: "keys",
        summary: "Mint a browser token",
        description: "Mints a short-lived token (`alt_...`) for a web page, sent as \
            `Authorization: Bearer <token>`. It carries read scopes the calling key has (403 \
            naming one it lacks), the key's workspace, and at most 24 hours; with \
            `library_ids` it opens only those libraries (by id and slug, their zips and \
            links) and the published assets they show (reads, downloads, images, links), \
            403 for anything else. Nothing is stored: the token is signed with the server's \
            signing secret. It is refused (401) once expired or changed, once its key is \
            revoked or expires, and after the signing secret is rotated. A browser token \
            cannot mint another (403).",
        keys: Keys::Required,
        parameters: vec![],
        body: Some(json_body("TokenDocument")),
        answers: vec![(
            "201",
            json_answer("Minted: the token.", schema("TokenEnvelope")),
        )],
        errors: JSON_BODY_ERRORS,
    }
}
