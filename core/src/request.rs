//! What an adapter hands core: the raw parts of a request's head ([`RawRequest`]) and its
//! body as it arrives ([`RequestBody`]).
//!
//! Core reads a body only after the key and scope are checked from the head, and never further
//! than the operation's limit, so a request without a valid key never has its body buffered
//! (and a client that sent `Expect: 100-continue` gets its 401 instead of `100 Continue`).

use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::{Stream, StreamExt as _, TryStreamExt as _};

use crate::error::{ApiError, BoxError};

/// A request body still arriving, chunk by chunk.
pub type BodyStream = Pin<Box<dyn Stream<Item = Result<Bytes, BoxError>> + Send>>;

/// The body of a request.
pub enum RequestBody {
    /// A body already in memory (empty when there is none).
    Bytes(Bytes),
    /// A body still arriving: core reads it when the operation takes one, after the key and
    /// scope are checked, and stops at the operation's limit.
    Stream(BodyStream),
}

impl RequestBody {
    /// A body read from `stream` as core needs it.
    pub fn stream<S, E>(stream: S) -> Self
    where
        S: Stream<Item = Result<Bytes, E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        RequestBody::Stream(Box::pin(stream.map_err(Into::into)))
    }

    /// The body as a stream, whichever form it has, ending in [`Stalled`] when no chunk
    /// arrives for `gap`.
    pub(crate) fn into_stream(self, gap: Duration) -> BodyStream {
        match self {
            RequestBody::Bytes(bytes) => {
                Box::pin(futures_util::stream::iter([Ok::<_, BoxError>(bytes)]))
            }
            RequestBody::Stream(stream) => with_gap(stream, gap),
        }
    }

    /// Reads the whole body: 413 as soon as it passes `limit` bytes, 408 when no part of it
    /// arrives for `gap`, 400 on `body` when it cannot be read to its end (the client went
    /// away or sent a malformed chunk).
    pub(crate) async fn read(self, limit: usize, gap: Duration) -> Result<Bytes, ApiError> {
        let too_large = || ApiError::PayloadTooLarge {
            limit: limit as u64,
        };
        match self {
            RequestBody::Bytes(bytes) if bytes.len() > limit => Err(too_large()),
            RequestBody::Bytes(bytes) => Ok(bytes),
            RequestBody::Stream(stream) => {
                let mut stream = with_gap(stream, gap);
                let mut buf = BytesMut::new();
                while let Some(chunk) = stream.next().await {
                    let chunk = chunk.map_err(|e| unreadable(e.as_ref()))?;
                    if buf.len() + chunk.len() > limit {
                        return Err(too_large());
                    }
                    buf.extend_from_slice(&chunk);
                }
                Ok(buf.freeze())
            }
        }
    }
}

/// A body stopped arriving: nothing came for longer than the allowed gap.
#[derive(Debug, thiserror::Error)]
#[error("no part of the request body arrived for {} seconds", .0.as_secs())]
pub(crate) struct Stalled(pub(crate) Duration);

/// What a client is told of a body that could not be read: 408 when it stalled, else 400.
pub(crate) fn unreadable(e: &(dyn std::error::Error + 'static)) -> ApiError {
    let mut cause = Some(e);
    while let Some(e) = cause {
        if let Some(Stalled(gap)) = e.downcast_ref::<Stalled>() {
            return ApiError::RequestTimeout {
                seconds: gap.as_secs(),
            };
        }
        cause = e.source();
    }
    ApiError::validation("body", "Request body could not be read")
}

/// `stream`, ending with [`Stalled`] when no chunk arrives for `gap`.
fn with_gap(stream: BodyStream, gap: Duration) -> BodyStream {
    Box::pin(futures_util::stream::unfold(
        Some(stream),
        move |state| async move {
            let mut stream = state?;
            match tokio::time::timeout(gap, stream.next()).await {
                Ok(Some(chunk)) => Some((chunk, Some(stream))),
                Ok(None) => None,
                Err(_) => Some((Err(Stalled(gap).into()), None)),
            }
        },
    ))
}

impl Default for RequestBody {
    fn default() -> Self {
        RequestBody::Bytes(Bytes::new())
    }
}

impl std::fmt::Debug for RequestBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestBody::Bytes(b) => f.debug_tuple("Bytes").field(b).finish(),
            RequestBody::Stream(_) => f.write_str("Stream(..)"),
        }
    }
}

impl From<Bytes> for RequestBody {
    fn from(bytes: Bytes) -> Self {
        RequestBody::Bytes(bytes)
    }
}

impl From<Vec<u8>> for RequestBody {
    fn from(bytes: Vec<u8>) -> Self {
        RequestBody::Bytes(bytes.into())
    }
}

impl From<String> for RequestBody {
    fn from(text: String) -> Self {
        RequestBody::Bytes(text.into())
    }
}

impl From<&'static [u8]> for RequestBody {
    fn from(bytes: &'static [u8]) -> Self {
        RequestBody::Bytes(Bytes::from_static(bytes))
    }
}

impl From<&'static str> for RequestBody {
    fn from(text: &'static str) -> Self {
        RequestBody::Bytes(Bytes::from_static(text.as_bytes()))
    }
}

/// The address of a connection's peer, for servers that run their own connection loop: put
/// it in each request's extensions (`request.extensions_mut().insert(PeerAddr(addr))`) and
/// the adapters hand it to core. An axum app served with
/// `into_make_service_with_connect_info::<SocketAddr>()`, or a warp app served by
/// `warp::serve`, needs nothing more: the adapters read the framework's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// The raw parts of a request that core needs: header values as the client sent them, the
/// raw query string, and the body. Adapters build one per request and hand it to
/// [`crate::Service::handle`].
#[derive(Debug, Default)]
pub struct RawRequest<'a> {
    /// The `Authorization` header value.
    pub authorization: Option<&'a [u8]>,
    /// The `Content-Type` header value.
    pub content_type: Option<&'a [u8]>,
    /// The `Content-Length` header value: a body declared larger than the operation's limit
    /// is refused (413) before any of it is read.
    pub content_length: Option<&'a [u8]>,
    /// The query string, without `?`.
    pub query: Option<&'a str>,
    /// The `Range` header value (downloads answer 206/416 by it).
    pub range: Option<&'a [u8]>,
    /// The `If-Range` header value: a range is served only while it names the file's current
    /// strong `ETag`; otherwise the whole file is sent.
    pub if_range: Option<&'a [u8]>,
    /// The `If-None-Match` header value: a JSON `GET` (or an image variant) whose `ETag` it
    /// names answers 304.
    pub if_none_match: Option<&'a [u8]>,
    /// The `Accept` header value: an image variant of format `auto` is WebP when it names
    /// `image/webp`.
    pub accept: Option<&'a [u8]>,
    /// The `Origin` header value: answers to an origin in [`crate::Config::cors_origins`]
    /// carry CORS headers.
    pub origin: Option<&'a [u8]>,
    /// The request is a `HEAD`: it runs the `GET` operation and gets the same status and
    /// headers, but counts nothing (no library view, no download). The adapter's server drops
    /// the body.
    pub head: bool,
    /// The path the API is mounted under, without a trailing slash: `""` at the root,
    /// `"/dam"` when an app nests it there. `Location` headers start with it.
    pub mount: &'a str,
    /// The address of the connection's peer, when the server knows it (see [`PeerAddr`]):
    /// requests without a key are rate-limited per client address.
    pub peer: Option<IpAddr>,
    /// The `X-Forwarded-For` header value, read only when
    /// [`crate::Config::trusted_proxy_hops`] trusts proxies in front of the API.
    pub forwarded_for: Option<&'a [u8]>,
    /// The headers of the tus protocol, for resumable uploads.
    pub tus: TusHeaders<'a>,
    /// The body, read by core only when the operation takes one and the key is admitted.
    pub body: RequestBody,
}

/// The header values of the tus protocol a request sent, as sent ([`crate::tus`]). Adapters
/// fill them with [`TusHeaders::from_lookup`].
#[derive(Debug, Default, Clone, Copy)]
#[non_exhaustive]
pub struct TusHeaders<'a> {
    /// `Tus-Resumable`.
    pub resumable: Option<&'a [u8]>,
    /// `Upload-Length`.
    pub upload_length: Option<&'a [u8]>,
    /// `Upload-Offset`.
    pub upload_offset: Option<&'a [u8]>,
    /// `Upload-Metadata`.
    pub upload_metadata: Option<&'a [u8]>,
    /// `Upload-Checksum`.
    pub upload_checksum: Option<&'a [u8]>,
    /// `Upload-Defer-Length` (not offered: refused).
    pub upload_defer_length: Option<&'a [u8]>,
}

impl<'a> TusHeaders<'a> {
    /// The tus headers, each looked up by its lower-case name with `header`.
    ///
    /// Without `Tus-Resumable` only that one is looked up and the others are left out: every
    /// tus request must send it, and core refuses one that does not before reading any other
    /// (`412`), so the requests of the rest of the API pay one lookup, not six.
    pub fn from_lookup(header: impl Fn(&'static str) -> Option<&'a [u8]>) -> Self {
        let Some(resumable) = header("tus-resumable") else {
            return TusHeaders::default();
        };
        TusHeaders {
            resumable: Some(resumable),
            upload_length: header("upload-length"),
            upload_offset: header("upload-offset"),
            upload_metadata: header("upload-metadata"),
            upload_checksum: header("upload-checksum"),
            upload_defer_length: header("upload-defer-length"),
        }
    }
}

impl RawRequest<'_> {
    /// The client's address, as far as it can be trusted: with `trusted_proxy_hops` N above
    /// 0, the Nth address from the right of `X-Forwarded-For` (what the outermost trusted
    /// proxy saw), or the leftmost one when the header holds fewer; otherwise, or when the
    /// header holds no valid address there, the connection's peer. `None` when neither is
    /// known.
    pub fn client_address(&self, trusted_proxy_hops: usize) -> Option<IpAddr> {
        if trusted_proxy_hops > 0 {
            let listed = self
                .forwarded_for
                .and_then(|h| std::str::from_utf8(h).ok())
                .map(|h| h.rsplit(',').map(str::trim).take(trusted_proxy_hops).last());
            if let Some(Some(address)) = listed
                && let Ok(ip) = address.parse::<IpAddr>()
            {
                return Some(ip);
            }
        }
        self.peer
    }

    /// The length the client declared for the body, if it declared a valid one.
    pub(crate) fn declared_length(&self) -> Option<u64> {
        std::str::from_utf8(self.content_length?)
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}
