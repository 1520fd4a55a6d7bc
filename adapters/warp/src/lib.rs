//! # assetlib-warp
//!
//! The warp adapter of assetlib: [`routes`] serves the Digital Assets and Libraries API as a
//! warp filter. It only translates: the path is matched against core's route table
//! ([`assetlib_core::match_route`]), and the route with the request's raw parts (path ids,
//! raw query, the `Authorization`, `Content-Type`, `Content-Length`, `Range`, `If-Range`,
//! `If-None-Match`, `Accept`, `Origin`, `X-Forwarded-For` and tus headers, the peer, the
//! mount path, the `HEAD` flag, and the unread body) goes to
//! [`assetlib_core::Service::answer`];
//! core's [`Reply`] comes back as the response. So it answers every request exactly as the
//! axum adapter does (a differential test in the facade checks this).
//!
//! ```no_run
//! use assetlib_core::{Config, Service};
//! use warp::Filter;
//!
//! # async fn run() {
//! let service = Service::in_memory(Config::default());
//! let health = warp::path("health").map(|| "ok");
//! let app = assetlib_warp::routes(service).or(health);
//! warp::serve(app).run(([127, 0, 0, 1], 8080)).await;
//! # }
//! ```
//!
//! Every request under `/api/v1` gets an answer in the contract's JSON shape (unknown route,
//! wrong method and oversized body included); other paths are rejected with warp's "not
//! found", so the filter composes with `or`. Mounted under a prefix
//! (`warp::path("dam").and(routes(service))`) it serves `/dam/api/v1/...`.
//!
//! [`thumbnails`] serves the file store's `thumbnails/` publicly at `/files/thumbnails/`, as
//! the ready server does.
//!
//! ## Downloads
//! warp 0.4 offers no public way to stream a response body of one's own, so a download
//! (`/api/v1/assets/{id}/download`) is gathered in memory before it is sent: at most the
//! file's size, or the requested range. The axum adapter streams it. Serve large files with
//! the axum adapter, or ask for them in ranges.

// Unit tests share the dev-dependencies of the crate's other test targets.
#![cfg_attr(test, allow(unused_crate_dependencies))]

use std::convert::Infallible;

use std::net::SocketAddr;

use assetlib_core::{
    API_PREFIX, ApiError, PeerAddr, RawRequest, Reply, RequestBody, RouteMatch, Service,
    THUMBNAIL_ROUTE, TusHeaders, match_route, route_not_found,
};
use bytes::{Buf, Bytes, BytesMut};
use futures_util::{Stream, StreamExt, TryStreamExt};
use warp::http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode, header};
use warp::path::{FullPath, Tail};
use warp::{Filter, Rejection};

/// Core's [`Reply`] as a warp response: its status, its headers and its body, copied
/// unchanged. A streamed body (a download) is gathered into memory when the response is made
/// ([`ApiResponse::gather`]): warp 0.4 has no public streaming body. The only `Reply` impl of
/// this crate.
#[derive(Debug)]
pub struct ApiResponse(Reply);

impl ApiResponse {
    /// Core's answer, with a streamed body gathered into memory. A stream that fails part way
    /// becomes core's internal error.
    pub async fn gather(mut reply: Reply) -> Self {
        if let Some(mut stream) = reply.stream.take() {
            let mut body = BytesMut::new();
            while let Some(chunk) = stream.next().await {
                match chunk {
                    Ok(chunk) => body.extend_from_slice(&chunk),
                    Err(e) => return ApiResponse(ApiError::internal(e).into_reply()),
                }
            }
            reply.body = body.freeze();
        }
        ApiResponse(reply)
    }
}

impl warp::Reply for ApiResponse {
    fn into_response(self) -> warp::reply::Response {
        into_response(self.0).into_response()
    }
}

/// Every route of the API as one filter. Paths outside `/api/v1` are rejected (not found).
pub fn routes(
    service: Service,
) -> impl Filter<Extract = (ApiResponse,), Error = Rejection> + Clone {
    let query = warp::query::raw().or(warp::any().map(String::new)).unify();
    warp::path::full()
        .and(warp::path("api"))
        .and(warp::path("v1"))
        .and(warp::method())
        .and(warp::path::tail())
        .and(query)
        .and(warp::header::headers_cloned())
        .and(peer())
        .and(warp::body::stream())
        .then(
            move |full: FullPath,
                  method: Method,
                  tail: Tail,
                  query: String,
                  headers: HeaderMap,
                  peer: Option<SocketAddr>,
                  body| {
                let service = service.clone();
                let request = Incoming {
                    full,
                    method,
                    tail,
                    query,
                    headers,
                    peer,
                };
                async move { answer(service, request, body).await }
            },
        )
}

/// Turns a rejection from [`routes`] combined with other filters into the contract's JSON
/// 404, for servers where nothing else answers: `routes(service).recover(recover)`.
pub async fn recover(_: Rejection) -> Result<ApiResponse, Infallible> {
    Ok(ApiResponse(route_not_found()))
}

/// The connection's peer address: warp's own (an app served by `warp::serve`), or core's
/// [`PeerAddr`] put in the extensions by a server's own connection loop.
fn peer() -> impl Filter<Extract = (Option<SocketAddr>,), Error = Infallible> + Copy {
    warp::addr::remote()
        .and(warp::ext::optional::<PeerAddr>())
        .map(|remote: Option<SocketAddr>, put: Option<PeerAddr>| {
            remote.or(put.map(|PeerAddr(addr)| addr))
        })
}

/// The `X-Forwarded-For` header, handed to core, which reads it only when the app trusts
/// proxies in front of it.
const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// The parts of a request under `/api/v1` besides its body.
struct Incoming {
    full: FullPath,
    method: Method,
    tail: Tail,
    query: String,
    headers: HeaderMap,
    peer: Option<SocketAddr>,
}

impl Incoming {
    /// The path the filter is mounted under: what the full path has before `/api/v1`.
    fn mount(&self) -> &str {
        let full = self.full.as_str();
        let routed = match self.tail.as_str() {
            "" => full.strip_suffix('/').unwrap_or(full),
            tail => full
                .strip_suffix(tail)
                .and_then(|p| p.strip_suffix('/'))
                .unwrap_or(full),
        };
        routed.strip_suffix(API_PREFIX).unwrap_or("")
    }
}

/// Routes by core's table and hands the raw parts to core. The body goes to core unread: core
/// reads it only after the key and scope are checked, and only as far as the operation's
/// limit.
async fn answer<S, B>(service: Service, request: Incoming, body: S) -> ApiResponse
where
    S: Stream<Item = Result<B, warp::Error>> + Send + 'static,
    B: Buf + Send,
{
    let Incoming {
        method,
        tail,
        query,
        headers,
        peer,
        ..
    } = &request;
    let path = if tail.as_str().is_empty() {
        API_PREFIX.to_owned()
    } else {
        format!("{API_PREFIX}/{}", tail.as_str())
    };
    let (route, ids) = match match_route(&path) {
        RouteMatch::Route { route, ids } => (Some(route), ids),
        RouteMatch::NotFound | RouteMatch::Outside => (None, Vec::new()),
    };
    let ids: Vec<&str> = ids.iter().map(AsRef::as_ref).collect();
    let header = |name| headers.get(name).map(HeaderValue::as_bytes);
    let req = RawRequest {
        authorization: header(header::AUTHORIZATION),
        content_type: header(header::CONTENT_TYPE),
        content_length: header(header::CONTENT_LENGTH),
        query: (!query.is_empty()).then_some(query.as_str()),
        range: header(header::RANGE),
        if_range: header(header::IF_RANGE),
        if_none_match: header(header::IF_NONE_MATCH),
        accept: header(header::ACCEPT),
        origin: header(header::ORIGIN),
        head: method == Method::HEAD,
        mount: request.mount(),
        peer: peer.map(|addr| addr.ip()),
        forwarded_for: header(X_FORWARDED_FOR),
        tus: TusHeaders::from_lookup(|name| headers.get(name).map(HeaderValue::as_bytes)),
        body: RequestBody::stream(body.map_ok(|mut chunk| chunk.copy_to_bytes(chunk.remaining()))),
    };
    // Core answers what its table gives no operation for: OPTIONS, 405 and 404.
    let reply = service.answer(method.as_str(), route, &ids, req).await;
    ApiResponse::gather(reply).await
}

/// Serves the file store's `thumbnails/` at core's [`THUMBNAIL_ROUTE`] (`GET` and `HEAD`),
/// without a key: websites show them in `<img>` tags. Other paths are rejected (not found).
pub fn thumbnails(
    service: Service,
) -> impl Filter<Extract = (ApiResponse,), Error = Rejection> + Clone {
    let prefix = THUMBNAIL_ROUTE
        .trim_start_matches('/')
        .trim_end_matches("{name}");
    warp::get()
        .or(warp::head())
        .unify()
        .and(warp::path::tail())
        .and(warp::method())
        .and_then(move |tail: Tail, method: Method| {
            let service = service.clone();
            let name = tail
                .as_str()
                .strip_prefix(prefix)
                .filter(|name| !name.is_empty() && !name.contains('/'))
                .map(|name| {
                    percent_encoding::percent_decode_str(name)
                        .decode_utf8_lossy()
                        .into_owned()
                });
            async move {
                let name = name.ok_or_else(warp::reject::not_found)?;
                let reply = service.thumbnail(&name, method == Method::HEAD).await;
                Ok::<_, Rejection>(ApiResponse::gather(reply).await)
            }
        })
}

/// Copies core's [`Reply`] into a warp response: status, headers and body unchanged. A reply
/// HTTP cannot carry is a bug in core; core's internal error logs it and answers instead.
fn into_response(reply: Reply) -> Response<Bytes> {
    copy(reply).unwrap_or_else(|bad| {
        let reply = ApiError::internal(bad).into_reply();
        copy(reply).unwrap_or_else(|_| {
            let mut response = Response::new(Bytes::new());
            *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            response
        })
    })
}

/// Copies a reply into a response, or says which part of it HTTP cannot carry.
fn copy(reply: Reply) -> Result<Response<Bytes>, String> {
    let Reply {
        status,
        headers,
        body,
        stream: _,
    } = reply;
    let status = StatusCode::from_u16(status).map_err(|_| format!("invalid status {status}"))?;
    let mut response = Response::new(body);
    *response.status_mut() = status;
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("invalid header name {name:?}"))?;
        let value =
            HeaderValue::try_from(value).map_err(|_| format!("invalid value of header {name}"))?;
        response.headers_mut().append(name, value);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_status_headers_and_body() {
        let reply = Reply::json_bytes(201, &b"{}"[..])
            .with_header("location", "/api/v1/assets/1")
            .with_header("vary", "a")
            .with_header("vary", "b");
        let response = into_response(reply);
        assert_eq!(response.status(), StatusCode::CREATED);
        let h = response.headers();
        assert_eq!(h["content-type"], "application/json");
        assert_eq!(h["location"], "/api/v1/assets/1");
        let vary: Vec<_> = h.get_all("vary").iter().collect();
        assert_eq!(vary, ["a", "b"]);
        assert_eq!(response.body().as_ref(), b"{}");
    }

    #[test]
    fn a_reply_http_cannot_carry_becomes_cores_internal_error() {
        for reply in [
            Reply::empty(1000),
            Reply::empty(200).with_header("bad name", "x"),
            Reply::empty(200).with_header("x-bad", "line\nbreak"),
        ] {
            let response = into_response(reply);
            assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
            assert_eq!(response.headers()["content-type"], "application/json");
        }
    }
}
