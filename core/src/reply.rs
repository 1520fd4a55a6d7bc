//! [`Reply`]: a framework-free HTTP answer that adapters copy into their own response type.

use bytes::Bytes;

/// The `Content-Type` of every JSON answer.
pub const JSON: &str = "application/json";

/// An HTTP answer decided by core: status, headers and body.
///
/// Adapters copy it into their framework's response unchanged, so every adapter answers
/// every request alike.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Headers, names in lower case.
    pub headers: Vec<(&'static str, String)>,
    /// Body.
    pub body: Bytes,
}

impl Reply {
    /// A JSON answer with already serialized bytes.
    pub fn json_bytes(status: u16, body: impl Into<Bytes>) -> Self {
        Reply {
            status,
            headers: vec![("content-type", JSON.to_owned())],
            body: body.into(),
        }
    }

    /// A JSON answer serialized from `value`.
    pub fn json_value<T: serde::Serialize + ?Sized>(status: u16, value: &T) -> Self {
        // Serializing our own types to a Vec cannot fail: they have string keys and
        // no fallible Serialize impls.
        let body = serde_json::to_vec(value).unwrap_or_else(|_| b"{}".to_vec());
        Self::json_bytes(status, body)
    }

    /// An empty answer (for example 204).
    pub fn empty(status: u16) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: Bytes::new(),
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
