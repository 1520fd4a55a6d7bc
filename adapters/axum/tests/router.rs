//! In-process tests of the router (`oneshot`): every route of core's table reaches core, and
//! what is left to the adapter — 404 and 405 outside the table, the body limit, path ids,
//! merging and nesting — answers core's JSON. The whole contract is tested over real sockets by
//! the facade's HTTP suite (`tests/http`).

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::pin::Pin;
use std::task::{Context, Poll};

use assetlib_core::{Config, ROUTES, Scope, Service};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode};
use http_body::Frame;
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use tower::ServiceExt as _;

async fn service_and_key(config: Config) -> (Service, String) {
    let service = Service::in_memory(config);
    let (_, key) = service
        .create_key("test", Scope::ALL.to_vec(), None)
        .await
        .unwrap();
    (service, format!("Bearer {key}"))
}

async fn send(app: &Router, request: Request<Body>) -> (StatusCode, axum::http::HeaderMap, Value) {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    (status, headers, body)
}

fn request(method: &str, uri: &str) -> axum::http::request::Builder {
    Request::builder().method(method).uri(uri)
}

#[tokio::test]
async fn every_route_and_method_of_the_table_reaches_core() {
    let (service, _) = service_and_key(Config::default()).await;
    let app = assetlib_axum::router::<()>(service);
    for route in ROUTES {
        let path = route
            .path
            .replace("{id}", "3f2504e0-4f89-41d3-9a0c-0305e82c3301");
        for (method, op) in route.methods {
            let (status, headers, body) =
                send(&app, request(method, &path).body(Body::empty()).unwrap()).await;
            if !op.needs_key() {
                // Needs no key (the OpenAPI document: 200, or 404 without core's feature).
                assert_ne!(status, StatusCode::UNAUTHORIZED, "{method} {path}");
                continue;
            }
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {path}");
            assert_eq!(headers["www-authenticate"], "Bearer", "{method} {path}");
            assert_eq!(body["error"], "Unauthorized", "{method} {path}");
        }
    }
}

#[tokio::test]
async fn other_methods_answer_cores_405_with_allow() {
    let (service, _) = service_and_key(Config::default()).await;
    let app = assetlib_axum::router::<()>(service);
    for route in ROUTES {
        let path = route.path.replace("{id}", "x");
        // OPTIONS is a preflight (204 with Allow), on every route.
        let (status, headers, _) =
            send(&app, request("OPTIONS", &path).body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "OPTIONS {path}");
        assert_eq!(headers["allow"], route.allow, "OPTIONS {path}");
        for method in ["PATCH", "TRACE", "PUT", "POST", "DELETE"] {
            if route.methods.iter().any(|(m, _)| *m == method) {
                continue;
            }
            let (status, headers, body) =
                send(&app, request(method, &path).body(Body::empty()).unwrap()).await;
            assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
            assert_eq!(headers["allow"], route.allow, "{method} {path}");
            assert_eq!(
                body,
                json!({"error": "Method not allowed",
                       "message": format!("Method {method} is not allowed here; allowed: {}",
                                          route.allow)})
            );
        }
    }
}

#[tokio::test]
async fn unknown_paths_under_the_prefix_answer_cores_404_and_others_are_left_alone() {
    let (service, _) = service_and_key(Config::default()).await;
    let app = assetlib_axum::router::<()>(service);
    for path in [
        "/api/v1",
        "/api/v1/",
        "/api/v1/nope",
        "/api/v1/assets/",
        "/api/v1/assets/x/y",
        "/api/v1/libraries/x/download/z",
    ] {
        let (status, headers, body) =
            send(&app, request("GET", path).body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(
            headers.get("content-type").map(|v| v.as_bytes()),
            Some(&b"application/json"[..]),
            "{path}"
        );
        assert_eq!(
            body,
            json!({"error": "Not found", "message": "No such route"}),
            "{path}"
        );
    }
    let (status, _, body) = send(
        &app,
        request("GET", "/elsewhere").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body, Value::Null, "paths outside /api/v1 are the app's");
}

#[tokio::test]
async fn a_path_id_that_is_not_utf8_is_cores_400_after_the_key_check() {
    let (service, auth) = service_and_key(Config::default()).await;
    let app = assetlib_axum::router::<()>(service);
    let (status, _, _) = send(
        &app,
        request("GET", "/api/v1/assets/%FF")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let req = request("GET", "/api/v1/assets/%FF").header("authorization", &auth);
    let (status, _, body) = send(&app, req.body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body,
        json!({"error": "Validation error", "message": "asset_id must be a UUID", "field": "asset_id"})
    );
}

/// A body of several chunks whose size is not known in advance.
struct Chunks(Vec<Bytes>);

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Poll::Ready(self.0.pop().map(|b| Ok(Frame::data(b))))
    }
}

#[tokio::test]
async fn bodies_over_the_limit_are_handed_to_core_as_too_large() {
    let mut config = Config::default();
    config.max_json_body = 64;
    let (service, auth) = service_and_key(config).await;
    let app = assetlib_axum::router::<()>(service);
    let too_large = json!({"error": "Payload too large",
                           "message": "Request body exceeds the limit of 64 bytes"});
    let create = |auth: Option<&str>, body: Body| {
        let mut r = request("POST", "/api/v1/assets").header("content-type", "application/json");
        if let Some(a) = auth {
            r = r.header("authorization", a);
        }
        r.body(body).unwrap()
    };

    // Known length over the limit.
    let (status, _, body) = send(&app, create(Some(&auth), Body::from(vec![b' '; 65]))).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body, too_large);
    // Unknown length, passing the limit while streaming.
    let chunks = Chunks(vec![Bytes::from(vec![b' '; 40]); 3]);
    let (status, _, body) = send(&app, create(Some(&auth), Body::new(chunks))).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body, too_large);
    // Core checks the key first.
    let (status, _, _) = send(&app, create(None, Body::from(vec![b' '; 65]))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // At the limit, streamed: read whole and validated by core.
    let doc = br#"{"title":"T","asset_type":"collection"}"#;
    let padded = [&doc[..], &[b' '; 64][..64 - doc.len()]].concat();
    let chunks = Chunks(vec![
        Bytes::copy_from_slice(&padded[32..]),
        Bytes::copy_from_slice(&padded[..32]),
    ]);
    let (status, headers, body) = send(&app, create(Some(&auth), Body::new(chunks))).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(body["data"]["title"], "T");
    assert!(
        headers["location"]
            .to_str()
            .unwrap()
            .starts_with("/api/v1/assets/")
    );
}

#[tokio::test]
async fn merges_into_an_app_with_state_and_nests_under_a_prefix() {
    #[derive(Clone)]
    struct AppState(&'static str);

    let (service, auth) = service_and_key(Config::default()).await;
    let app: Router = Router::new()
        .route(
            "/hello",
            axum::routing::get(
                |axum::extract::State(s): axum::extract::State<AppState>| async move { s.0 },
            ),
        )
        .merge(assetlib_axum::router(service.clone()))
        .with_state(AppState("hi"));
    let (status, _, body) = send(
        &app,
        request("GET", "/api/v1/assets")
            .header("authorization", &auth)
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["pagination"]["total"], 0);
    let response = app
        .clone()
        .oneshot(request("GET", "/hello").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(
        response.into_body().collect().await.unwrap().to_bytes(),
        "hi"
    );

    let nested: Router = Router::new().nest("/dal", assetlib_axum::router(service));
    let req = request("GET", "/dal/api/v1/libraries").header("authorization", &auth);
    let (status, _, body) = send(&nested, req.body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["libraries"], json!([]));
}
