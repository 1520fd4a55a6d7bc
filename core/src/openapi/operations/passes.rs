//! The library pass operations, described: make, list, read and revoke.

use serde_json::json;

use super::{JSON_BODY_RECORD_ERRORS, Keys, Spec, created, json_body, read_answer};
use crate::openapi::build::{parameter as p, schema};

/// `Operation::CreatePass`.
pub(super) fn create_pass() -> Spec {
    Spec {
        id: "createPass",
        tag: "passes",
        summary: "Make a library pass",
        description: "Makes a pass for the library (published or not): what a buyer of a \
            paid library gets. The answer shows the pass's `token` this once; only its \
            SHA-256 is kept. A buyer sends it as `Authorization: Pass <token>`: it opens the \
            library (by id and by slug), its zip (when the library allows bulk download), and \
            the downloads and download links of its assets (only `asset_ids` when given), \
            while it is not expired, not revoked and has downloads left.",
        keys: Keys::Required,
        parameters: vec![p("LibraryId")],
        body: Some(json_body("PassDocument")),
        answers: vec![(
            "201",
            created(
                "Made: the pass, with its token.",
                schema("NewPassEnvelope"),
                json!({
                    "GetPass": {"operationId": "getPass", "parameters":
                        {"library_id": "$response.body#/data/library_id",
                         "pass_id": "$response.body#/data/id"}},
                }),
            ),
        )],
        errors: JSON_BODY_RECORD_ERRORS,
    }
}

/// `Operation::ListPasses`.
pub(super) fn list_passes() -> Spec {
    Spec {
        id: "listPasses",
        tag: "passes",
        summary: "List a library's passes",
        description: "A page of the library's passes, newest first, revoked and expired \
            ones included; never their tokens.",
        keys: Keys::Required,
        parameters: vec![p("LibraryId"), p("Page"), p("PerPage"), p("IfNoneMatch")],
        body: None,
        answers: vec![("200", read_answer("A page of passes.", schema("PassList")))],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::GetPass`.
pub(super) fn get_pass() -> Spec {
    Spec {
        id: "getPass",
        tag: "passes",
        summary: "Read a library pass",
        description: "One pass of the library, with the downloads it has made; never its \
            token.",
        keys: Keys::Required,
        parameters: vec![p("LibraryId"), p("PassId"), p("IfNoneMatch")],
        body: None,
        answers: vec![("200", read_answer("The pass.", schema("PassEnvelope")))],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::RevokePass`.
pub(super) fn revoke_pass() -> Spec {
    Spec {
        id: "revokePass",
        tag: "passes",
        summary: "Revoke a library pass",
        description: "The pass stops working at once, on every server sharing the store, and \
            so do the links minted with it (401). The pass is kept, so that reading it shows \
            when it was revoked (`revoked_at`) and what it downloaded; revoking it again is \
            204 and keeps the first time.",
        keys: Keys::Required,
        parameters: vec![p("LibraryId"), p("PassId")],
        body: None,
        answers: vec![("204", json!({"description": "Revoked."}))],
        errors: &["BadRequest", "NotFound"],
    }
}
