//! [`Reply`]: a framework-free HTTP answer that adapters copy into their own response type.

use std::pin::Pin;

use bytes::Bytes;
use futures_util::Stream;

/// A body streamed to the client as it is read (a download, a zip).
pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, std::io::Error>> + Send>>;

/// The `Content-Type` of every JSON answer.
pub const JSON: &str = "application/json";

/// An HTTP answer decided by core: status, headers and body.
///
/// Adapters copy it into their framework's response unchanged, so every adapter answers
/// every request alike.
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Headers, names in lower case.
    pub headers: Vec<(&'static str, String)>,
    /// Body, when it is in memory.
    pub body: Bytes,
    /// Body streamed from the file store (a download), sent instead of `body`. Its length is
    /// in the `content-length` header.
    pub stream: Option<ByteStream>,
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reply")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("body", &self.body)
            .field("stream", &self.stream.as_ref().map(|_| "..."))
            .finish()
    }
}

impl Reply {
    /// A JSON answer with already serialized bytes.
    pub fn json_bytes(status: u16, body: impl Into<Bytes>) -> Self {
        Reply {
            status,
            headers: vec![("content-type", JSON.to_owned())],
            body: body.into(),
            stream: None,
        }
    }

    /// A JSON answer serialized from `value` (its body starts from 128 bytes, as
    /// `serde_json::to_vec` does).
    pub fn json_value<T: serde::Serialize + ?Sized>(status: u16, value: &T) -> Self {
        Self::json_bytes(status, to_json(value, Vec::with_capacity(128)))
    }

    /// A JSON answer of a page (a list, a library's detail). Pages run to kilobytes, so the
    /// body starts from 4 KiB, sparing most of the growing (each a copy of all written so
    /// far); it is shrunk when more than half of it is unused, as a kept page holds its
    /// body for long.
    pub(crate) fn json_page<T: serde::Serialize + ?Sized>(status: u16, value: &T) -> Self {
        let mut body = to_json(value, Vec::with_capacity(4096));
        if body.capacity() > 2 * body.len() {
            body.shrink_to_fit();
        }
        Self::json_bytes(status, body)
    }

    /// An empty answer (for example 204).
    pub fn empty(status: u16) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: Bytes::new(),
            stream: None,
        }
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// The value of a header, if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// `value` as JSON, written after what `body` holds.
fn to_json<T: serde::Serialize + ?Sized>(value: &T, mut body: Vec<u8>) -> Vec<u8> {
    // Serializing our own types to a Vec cannot fail: they have string keys and no
    // fallible Serialize impls.
    if serde_json::to_writer(&mut body, value).is_err() {
        body = b"{}".to_vec();
    }
    body
}
