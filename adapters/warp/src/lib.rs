//! # assetlib-warp
//!
//! The warp adapter of assetlib: [`routes`] serves the Digital Assets and Libraries API as a
//! warp filter. It only translates — method, path, raw query, `Authorization` and
//! `Content-Type` headers and body bytes go to [`assetlib_core::Service::dispatch`], and the
//! core's [`Reply`] comes back as the response — so it answers every request exactly as the
//! axum adapter does.
//!
//! ```no_run
//! use assetlib_core::{Config, MemoryStore, Service};
//! use warp::Filter;
//!
//! # async fn run() {
//! let service = Service::new(MemoryStore::new(), Config::default());
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

use std::convert::Infallible;

use assetlib_core::{Body, RawRequest, Reply, Service};
use bytes::{Buf, Bytes, BytesMut};
use futures_util::{Stream, StreamExt};
use warp::http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode, header};
use warp::path::Tail;
use warp::{Filter, Rejection};

/// The response type of [`routes`].
pub type ApiResponse = Response<Bytes>;

/// Every route of the API as one filter. Paths outside `/api/v1` are rejected (not found).
pub fn routes(
    service: Service,
) -> impl Filter<Extract = (ApiResponse,), Error = Rejection> + Clone {
    let query = warp::query::raw().or(warp::any().map(String::new)).unify();
    warp::path("api")
        .and(warp::path("v1"))
        .and(warp::method())
        .and(warp::path::tail())
        .and(query)
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .then(
            move |method: Method, tail: Tail, query: String, headers: HeaderMap, body| {
                let service = service.clone();
                async move { answer(service, method, tail, query, headers, body).await }
            },
        )
}

/// Turns a rejection from [`routes`] combined with other filters into the contract's JSON
/// 404, for servers where nothing else answers: `routes(service).recover(recover)`.
pub async fn recover(_: Rejection) -> Result<ApiResponse, Infallible> {
    Ok(into_response(assetlib_core::service::route_not_found()))
}

async fn answer<S, B>(
    service: Service,
    method: Method,
    tail: Tail,
    query: String,
    headers: HeaderMap,
    body: S,
) -> ApiResponse
where
    S: Stream<Item = Result<B, warp::Error>> + Unpin,
    B: Buf,
{
    let limit = service.config().max_json_body;
    let body = read_body(body, &headers, limit).await;
    let path = if tail.as_str().is_empty() {
        "/api/v1".to_owned()
    } else {
        format!("/api/v1/{}", tail.as_str())
    };
    let req = RawRequest {
        authorization: headers
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes),
        content_type: headers.get(header::CONTENT_TYPE).map(HeaderValue::as_bytes),
        query: (!query.is_empty()).then_some(query.as_str()),
        body: match &body {
            ReadBody::Complete(b) => Body::Complete(b),
            ReadBody::TooLarge => Body::TooLarge,
            ReadBody::Incomplete => Body::Incomplete,
        },
        range: headers.get(header::RANGE).map(HeaderValue::as_bytes),
        head: false,
    };
    let reply = service
        .dispatch(method.as_str(), &path, req)
        .await
        .unwrap_or_else(assetlib_core::service::route_not_found);
    into_response(reply)
}

enum ReadBody {
    Complete(Bytes),
    TooLarge,
    Incomplete,
}

/// Reads the body up to `limit` bytes, refusing early on a larger `Content-Length`.
async fn read_body<S, B>(mut body: S, headers: &HeaderMap, limit: usize) -> ReadBody
where
    S: Stream<Item = Result<B, warp::Error>> + Unpin,
    B: Buf,
{
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return ReadBody::TooLarge;
    }
    let mut buf = BytesMut::new();
    while let Some(chunk) = body.next().await {
        let Ok(mut chunk) = chunk else {
            return ReadBody::Incomplete;
        };
        if buf.len() + chunk.remaining() > limit {
            return ReadBody::TooLarge;
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            buf.extend_from_slice(part);
            let n = part.len();
            chunk.advance(n);
        }
    }
    ReadBody::Complete(buf.freeze())
}

/// Copies core's [`Reply`] into a warp response.
fn into_response(reply: Reply) -> ApiResponse {
    let mut response = Response::new(reply.body);
    *response.status_mut() =
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    for (name, value) in reply.headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.append(HeaderName::from_static(name), value);
        }
    }
    response
}
