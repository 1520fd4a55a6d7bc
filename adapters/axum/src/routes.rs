//! [`router`]: every route of [`ROUTES`], each request's raw parts handed to core.

use assetlib_core::service::{API_PREFIX, method_not_allowed, route_not_found};
use assetlib_core::{ApiError, Body as CoreBody, Operation, ROUTES, RawRequest, Route, Service};
use axum::Router;
use axum::body::{Body, Bytes, HttpBody as _};
use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{OriginalUri, RawPathParams, Request, State};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, RANGE};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method};
use axum::routing::{MethodFilter, MethodRouter, any};
use http_body_util::{BodyExt as _, LengthLimitError, Limited};

use crate::response::ApiResponse;

/// The whole API as an axum [`Router`], ready to `merge` into an app or `nest` under a prefix.
///
/// Registers every route of [`ROUTES`] with its methods; a route's other methods answer core's
/// JSON 405 ([`method_not_allowed`], with `Allow`), and any other path under `/api/v1` answers
/// core's JSON 404 ([`route_not_found`]). Paths outside `/api/v1` are left to the app.
///
/// The service is attached with `with_state` here, so the router fits an app of any state `S`.
///
/// # Panics
/// If [`ROUTES`] names a method axum cannot route (a bug in core, found on the first call).
pub fn router<S>(service: Service) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let mut app = Router::new();
    for route in ROUTES {
        app = app.route(route.path, methods(route));
    }
    let not_found = || any(|| async { ApiResponse(route_not_found()) });
    app.route(API_PREFIX, not_found())
        .route(&format!("{API_PREFIX}/"), not_found())
        .route(&format!("{API_PREFIX}/{{*rest}}"), not_found())
        .with_state(service)
}

/// Serves the file store's `thumbnails/` at `/files/thumbnails/{name}` (`GET` and `HEAD`),
/// without a key: websites show them in `<img>` tags. The ready server merges it next to
/// [`router`].
pub fn thumbnails<S>(service: Service) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    Router::new()
        .route(
            "/files/thumbnails/{name}",
            axum::routing::get(
                |State(service): State<Service>,
                 method: Method,
                 axum::extract::Path(name): axum::extract::Path<String>| async move {
                    ApiResponse(service.thumbnail(&name, method == Method::HEAD).await)
                },
            ),
        )
        .with_state(service)
}

/// One route's methods, each calling core with its operation; any other method is a 405.
fn methods(route: &'static Route) -> MethodRouter<Service> {
    let mut router = MethodRouter::new();
    for &(method, op) in route.methods {
        let filter = Method::from_bytes(method.as_bytes())
            .ok()
            .and_then(|m| MethodFilter::try_from(m).ok())
            .unwrap_or_else(|| panic!("core route {} names method {method:?}", route.path));
        router = router.on(
            filter,
            move |State(service): State<Service>,
                  params: Result<RawPathParams, RawPathParamsRejection>,
                  request: Request| async move {
                handle(service, op, path_id(params), request).await
            },
        );
    }
    router.fallback(move |method: Method| async move {
        ApiResponse(method_not_allowed(method.as_str(), route))
    })
}

/// The route's path id, percent-decoded. An id that is not UTF-8 once decoded is handed on
/// as U+FFFD, which core refuses like any other id that is not a UUID (after checking the key).
fn path_id(params: Result<RawPathParams, RawPathParamsRejection>) -> Option<String> {
    match params {
        Ok(params) => params.iter().next().map(|(_, value)| value.to_owned()),
        Err(RawPathParamsRejection::InvalidUtf8InPathParam(_)) => {
            Some(char::REPLACEMENT_CHARACTER.to_string())
        }
        Err(_) => None,
    }
}

/// Hands the raw parts to core and its answer back.
async fn handle(
    service: Service,
    op: Operation,
    id: Option<String>,
    request: Request,
) -> ApiResponse {
    let (parts, body) = request.into_parts();
    if op == Operation::UploadAsset {
        return upload(service, &parts, body).await;
    }
    let read = if op.takes_json_body() {
        read_body(body, service.config().max_json_body).await
    } else {
        Ok(Bytes::new())
    };
    let header = |name| parts.headers.get(name).map(HeaderValue::as_bytes);
    let request = RawRequest {
        authorization: header(AUTHORIZATION),
        content_type: header(CONTENT_TYPE),
        query: parts.uri.query(),
        body: match &read {
            Ok(bytes) => CoreBody::Complete(bytes),
            Err(unread) => *unread,
        },
        range: header(RANGE),
        head: parts.method == Method::HEAD,
        mount: mount(&parts),
    };
    ApiResponse(service.handle(op, id.as_deref(), request).await)
}

/// Hands an upload's body to core as a stream: core reads the file part into the file store
/// as it arrives.
async fn upload(service: Service, parts: &Parts, body: Body) -> ApiResponse {
    let header = |name| parts.headers.get(name).map(HeaderValue::as_bytes);
    let request = RawRequest {
        authorization: header(AUTHORIZATION),
        content_type: header(CONTENT_TYPE),
        query: parts.uri.query(),
        body: CoreBody::Complete(&[]),
        range: None,
        head: false,
        mount: mount(parts),
    };
    let declared = body.size_hint().exact();
    let reply = service
        .upload_asset(request, declared, body.into_data_stream())
        .await;
    ApiResponse(reply.unwrap_or_else(ApiError::into_reply))
}

/// The path an app nested the router under: what the original URI has before the path the
/// router saw (`""` when merged at the root).
fn mount(parts: &Parts) -> &str {
    parts
        .extensions
        .get::<OriginalUri>()
        .and_then(|original| original.path().strip_suffix(parts.uri.path()))
        .unwrap_or("")
}

/// Reads the whole body; else says why not: [`CoreBody::TooLarge`] as soon as it is known to
/// exceed `limit` (at once when its `Content-Length` says so, else when the stream passes the
/// limit), or [`CoreBody::Incomplete`] when the stream fails before its end.
async fn read_body(body: Body, limit: usize) -> Result<Bytes, CoreBody<'static>> {
    if body.size_hint().lower() > limit as u64 {
        return Err(CoreBody::TooLarge);
    }
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<LengthLimitError>() => Err(CoreBody::TooLarge),
        Err(_) => Err(CoreBody::Incomplete),
    }
}
