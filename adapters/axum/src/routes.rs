//! [`router`]: every route of [`ROUTES`], each request's raw parts handed to core.

use std::net::SocketAddr;

use assetlib_core::{
    API_PREFIX, PeerAddr, ROUTES, RawRequest, RequestBody, Route, Service, THUMBNAIL_ROUTE,
    TusHeaders,
};
use axum::Router;
use axum::extract::rejection::{PathRejection, RawPathParamsRejection};
use axum::extract::{ConnectInfo, OriginalUri, RawPathParams, Request, State};
use axum::http::header::{
    ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, IF_NONE_MATCH, IF_RANGE, ORIGIN, RANGE,
};
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, Method};
use axum::routing::{MethodRouter, any};

use crate::response::ApiResponse;

/// The whole API as an axum [`Router`], ready to `merge` into an app or `nest` under a prefix.
///
/// Registers every path of [`ROUTES`]; each request on a route of this build
/// ([`Route::is_built`]) goes to core's [`Service::answer`] with its route, which runs the
/// operation for the method, or answers `OPTIONS` and the JSON 405 (with `Allow`) itself. Any
/// other path under `/api/v1`, a route of a capability this build leaves out among them, is
/// core's JSON 404 ([`assetlib_core::route_not_found`]): so `POST /api/v1/assets/bulk` without
/// `organize` is a 404, not a 405 of `/api/v1/assets/{id}`. Paths outside `/api/v1` are left
/// to the app.
///
/// The service is attached with `with_state` here, so the router fits an app of any state `S`.
pub fn router<S>(service: Service) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let mut app = Router::new();
    for route in ROUTES {
        app = if route.is_built() {
            app.route(route.path, methods(route))
        } else {
            app.route(route.path, not_found())
        };
    }
    app.route(API_PREFIX, not_found())
        .route(&format!("{API_PREFIX}/"), not_found())
        .route(&format!("{API_PREFIX}/{{*rest}}"), not_found())
        .with_state(service)
}

/// Core's JSON 404, on every method.
fn not_found() -> MethodRouter<Service> {
    any(
        |State(service): State<Service>, request: Request| async move {
            handle(service, None, &[], request).await
        },
    )
}

/// Serves the file store's `thumbnails/` at core's [`THUMBNAIL_ROUTE`] (`GET` and `HEAD`),
/// without a key: websites show them in `<img>` tags. The ready server merges it next to
/// [`router`]. A name that is not UTF-8 once percent-decoded is core's JSON 404, as any other
/// name no thumbnail has.
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
                 name: Result<axum::extract::Path<String>, PathRejection>| async move {
                    let name = name
                        .map(|axum::extract::Path(name)| name)
                        .unwrap_or_default();
                    ApiResponse(service.thumbnail(&name, method == Method::HEAD).await)
                },
            ),
        )
        .with_state(service)
}

/// Every method of one route, handed to core's [`Service::answer`] with the route: core runs
/// the route's operation for the method, and answers `OPTIONS` and a 405 for any other
/// method, as it does for the warp adapter.
fn methods(route: &'static Route) -> MethodRouter<Service> {
    any(
        move |State(service): State<Service>,
              params: Result<RawPathParams, RawPathParamsRejection>,
              request: Request| async move {
            let mut ids = [""; MAX_IDS];
            let n = path_ids(&params, &mut ids);
            handle(service, Some(route), &ids[..n], request).await
        },
    )
}

/// The most ids a route's path has.
const MAX_IDS: usize = 2;

/// The route's path ids in path order, percent-decoded, borrowed from `params` into `ids`;
/// returns how many. Ids that are not UTF-8 once decoded are handed on as U+FFFD, which core
/// refuses like any other id that is not a UUID (after checking the key).
fn path_ids<'a>(
    params: &'a Result<RawPathParams, RawPathParamsRejection>,
    ids: &mut [&'a str; MAX_IDS],
) -> usize {
    match params {
        Ok(params) => {
            let mut n = 0;
            for (slot, (_, value)) in ids.iter_mut().zip(params.iter()) {
                *slot = value;
                n += 1;
            }
            n
        }
        Err(RawPathParamsRejection::InvalidUtf8InPathParam(_)) => {
            *ids = ["\u{FFFD}"; MAX_IDS];
            MAX_IDS
        }
        Err(_) => 0,
    }
}

/// Hands the raw parts to core and its answer back. The body goes to core unread: core reads
/// it only after the key and scope are checked, and only as far as the operation's limit.
async fn handle(
    service: Service,
    route: Option<&'static Route>,
    ids: &[&str],
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
        accept: header(ACCEPT),
        origin: header(ORIGIN),
        head: parts.method == Method::HEAD,
        mount: mount(&parts),
        peer: peer(&parts),
        forwarded_for: header(X_FORWARDED_FOR),
        tus: TusHeaders::from_lookup(|name| parts.headers.get(name).map(HeaderValue::as_bytes)),
        body: RequestBody::stream(body.into_data_stream()),
    };
    ApiResponse(
        service
            .answer(parts.method.as_str(), route, ids, request)
            .await,
    )
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
