//! [`router`]: every route of [`ROUTES`], each request's raw parts handed to core.

use std::net::SocketAddr;

use assetlib_core::{
    API_PREFIX, Operation, PeerAddr, ROUTES, RawRequest, RequestBody, Route, Service,
    THUMBNAIL_ROUTE,
};
use axum::Router;
use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{ConnectInfo, OriginalUri, RawPathParams, Request, State};
use axum::http::header::{
    AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, IF_NONE_MATCH, IF_RANGE, ORIGIN, RANGE,
};
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, Method};
use axum::routing::{MethodFilter, MethodRouter, any};

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
    let not_found = || {
        any(
            |State(service): State<Service>, request: Request| async move {
                handle(service, Target::Other(None), None, request).await
            },
        )
    };
    app.route(API_PREFIX, not_found())
        .route(&format!("{API_PREFIX}/"), not_found())
        .route(&format!("{API_PREFIX}/{{*rest}}"), not_found())
        .with_state(service)
}

/// Serves the file store's `thumbnails/` at core's [`THUMBNAIL_ROUTE`] (`GET` and `HEAD`),
/// without a key: websites show them in `<img>` tags. The ready server merges it next to
/// [`router`].
pub fn thumbnails<S>(service: Service) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    Router::new()
        .route(
            THUMBNAIL_ROUTE,
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
                handle(service, Target::Operation(op), path_id(params), request).await
            },
        );
    }
    router.fallback(
        move |State(service): State<Service>,
              params: Result<RawPathParams, RawPathParamsRejection>,
              request: Request| async move {
            handle(
                service,
                Target::Other(Some(route)),
                path_id(params),
                request,
            )
            .await
        },
    )
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

/// Hands the raw parts to core and its answer back. The body goes to core unread: core reads
/// it only after the key and scope are checked, and only as far as the operation's limit.
async fn handle(
    service: Service,
    target: Target,
    id: Option<String>,
    request: Request,
) -> ApiResponse {
    let (parts, body) = request.into_parts();
    let header = |name| parts.headers.get(name).map(HeaderValue::as_bytes);
    let request = RawRequest {
        authorization: header(AUTHORIZATION),
        content_type: header(CONTENT_TYPE),
        content_length: header(CONTENT_LENGTH),
        query: parts.uri.query(),
        range: header(RANGE),
        if_range: header(IF_RANGE),
        if_none_match: header(IF_NONE_MATCH),
        origin: header(ORIGIN),
        head: parts.method == Method::HEAD,
        mount: mount(&parts),
        peer: peer(&parts),
        forwarded_for: header(X_FORWARDED_FOR),
        body: RequestBody::stream(body.into_data_stream()),
    };
    let id = id.as_deref();
    ApiResponse(match target {
        Target::Operation(op) => service.handle(op, id, request).await,
        Target::Other(route) => {
            service
                .answer(parts.method.as_str(), route, id, request)
                .await
        }
    })
}

/// What a request runs in core.
#[derive(Clone, Copy)]
enum Target {
    /// A route's operation for the method.
    Operation(Operation),
    /// No operation: `OPTIONS` or a method the route does not take (405) on a route, or no
    /// route at all (404); core's [`Service::answer`] answers, CORS headers included.
    Other(Option<&'static Route>),
}

/// The `X-Forwarded-For` header, handed to core, which reads it only when the app trusts
/// proxies in front of it.
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// The connection's peer address: from axum's `ConnectInfo` (an app served with
/// `into_make_service_with_connect_info::<SocketAddr>()`), or core's [`PeerAddr`] put in the
/// extensions by a server's own connection loop.
fn peer(parts: &Parts) -> Option<std::net::IpAddr> {
    let ext = &parts.extensions;
    ext.get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip())
        .or_else(|| ext.get::<PeerAddr>().map(|PeerAddr(addr)| addr.ip()))
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
