//! `GET /api/v1/openapi.json`: served without a key, with an `ETag`, and byte for byte the
//! repository's `openapi.json`.
//!
//! After a change of the API, write the new document with
//! `ASSETLIB_WRITE_OPENAPI=1 cargo test -p assetlib-core --all-features --test integration openapi`
//! and review its diff (every feature: the document has the paths of the capabilities built).

use std::path::PathBuf;

use assetlib_core::{Config, RawRequest, Reply, RouteMatch, Service, match_route};

async fn get(
    service: &Service,
    authorization: Option<&[u8]>,
    if_none_match: Option<&[u8]>,
) -> Reply {
    let RouteMatch::Route { route, ids } = match_route("/api/v1/openapi.json") else {
        panic!("no route for the document");
    };
    service
        .answer(
            "GET",
            Some(route),
            &ids.iter().map(AsRef::as_ref).collect::<Vec<&str>>(),
            RawRequest {
                authorization,
                if_none_match,
                ..RawRequest::default()
            },
        )
        .await
}

/// The repository's copy of the document.
fn committed() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../openapi.json")
}

#[tokio::test]
async fn the_served_document_is_the_committed_openapi_json() {
    let service = Service::in_memory(Config::default());
    let reply = get(&service, None, None).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let served = String::from_utf8(reply.body.to_vec()).expect("UTF-8");
    if std::env::var_os("ASSETLIB_WRITE_OPENAPI").is_some() {
        std::fs::write(committed(), &served).expect("write openapi.json");
        return;
    }
    let kept = std::fs::read_to_string(committed()).unwrap_or_default();
    assert!(
        served == kept,
        "openapi.json differs from the served document; write it anew with \
         `ASSETLIB_WRITE_OPENAPI=1 cargo test -p assetlib-core --all-features --test \
         integration openapi` and review its diff"
    );
}

#[tokio::test]
async fn the_document_needs_no_key_and_answers_304_to_its_etag() {
    let service = Service::in_memory(Config::default());
    // Any key, even a malformed one, is not looked at.
    let reply = get(&service, Some(b"Bearer nonsense"), None).await;
    assert_eq!(reply.status, 200);
    let etag = reply.header("etag").expect("ETag").to_owned();
    let again = get(&service, None, Some(etag.as_bytes())).await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
}
