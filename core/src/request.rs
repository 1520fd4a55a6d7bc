//! What an adapter hands core: the raw parts of a request's head ([`RawRequest`]) and its
//! body as it arrives ([`RequestBody`]).
//!
//! Core reads a body only after the key and scope are checked from the head, and never further
//! than the operation's limit, so a request without a valid key never has its body buffered
//! (and a client that sent `Expect: 100-continue` gets its 401 instead of `100 Continue`).

use std::pin::Pin;

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

    /// The body as a stream, whichever form it has.
    pub(crate) fn into_stream(self) -> BodyStream {
        match self {
            RequestBody::Bytes(bytes) => {
                Box::pin(futures_util::stream::iter([Ok::<_, BoxError>(bytes)]))
            }
            RequestBody::Stream(stream) => stream,
        }
    }

    /// Reads the whole body: 413 as soon as it passes `limit` bytes, 400 on `body` when it
    /// cannot be read to its end (the client went away or sent a malformed chunk).
    pub(crate) async fn read(self, limit: usize) -> Result<Bytes, ApiError> {
        let too_large = || ApiError::PayloadTooLarge {
            limit: limit as u64,
        };
        match self {
            RequestBody::Bytes(bytes) if bytes.len() > limit => Err(too_large()),
            RequestBody::Bytes(bytes) => Ok(bytes),
            RequestBody::Stream(mut stream) => {
                let mut buf = BytesMut::new();
                while let Some(chunk) = stream.next().await {
                    let chunk = chunk.map_err(|_| {
                        ApiError::validation("body", "Request body could not be read")
                    })?;
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
    /// The request is a `HEAD`: it runs the `GET` operation and gets the same status and
    /// headers, but counts nothing (no library view, no download). The adapter's server drops
    /// the body.
    pub head: bool,
    /// The path the API is mounted under, without a trailing slash: `""` at the root,
    /// `"/dam"` when an app nests it there. `Location` headers start with it.
    pub mount: &'a str,
    /// The body, read by core only when the operation takes one and the key is admitted.
    pub body: RequestBody,
}

impl RawRequest<'_> {
    /// The length the client declared for the body, if it declared a valid one.
    pub(crate) fn declared_length(&self) -> Option<u64> {
        std::str::from_utf8(self.content_length?)
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}
