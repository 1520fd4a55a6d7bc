//! The error table's answers: statuses, bodies and headers.

use super::*;
use serde_json::{Value, json};

fn body(r: &Reply) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

#[test]
fn method_not_allowed_carries_allow() {
    let r = ApiError::MethodNotAllowed {
        method: "PATCH".into(),
        allow: "GET, HEAD",
    }
    .into_reply();
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    assert_eq!(
        body(&r),
        json!({"error": "Method not allowed",
            "message": "Method PATCH is not allowed here; allowed: GET, HEAD"})
    );
}

#[test]
fn internal_errors_hide_their_cause() {
    let r = ApiError::internal("disk on fire at /var/secret").into_reply();
    assert_eq!(r.status, 500);
    assert_eq!(
        body(&r),
        json!({"error": "Internal server error",
            "message": "The server could not complete the request"})
    );
    let r = ApiError::from(StoreError::backend("io")).into_reply();
    assert_eq!(r.status, 500);
    assert!(!String::from_utf8_lossy(&r.body).contains("io"));
}

#[test]
fn a_taken_slug_is_a_validation_error_on_slug() {
    let e = ApiError::from(StoreError::SlugTaken {
        slug: "press".into(),
    });
    assert_eq!(
        body(&e.into_reply()),
        json!({"error": "Validation error",
            "message": "slug \"press\" is taken by another library", "field": "slug"})
    );
}

#[test]
fn a_cursor_the_log_never_handed_out_is_a_validation_error_on_after() {
    let r = ApiError::from(StoreError::UnknownCursor).into_reply();
    assert_eq!(r.status, 400);
    assert_eq!(body(&r)["field"], json!("after"));
}

#[test]
fn clashes_of_ids_the_service_chose_are_internal() {
    for e in [
        StoreError::DuplicateId {
            id: uuid::Uuid::nil(),
        },
        StoreError::DuplicateKeyHash,
    ] {
        assert_eq!(ApiError::from(e).into_reply().status, 500);
    }
}

#[test]
fn not_found_and_unauthorized() {
    let r = ApiError::NotFound("No such route").into_reply();
    assert_eq!(
        (r.status, body(&r)),
        (
            404,
            json!({"error": "Not found", "message": "No such route"})
        )
    );
    let r = ApiError::Unauthorized("Invalid API key").into_reply();
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
}
