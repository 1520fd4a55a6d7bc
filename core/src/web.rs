//! What browsers and caches need of every answer: CORS headers and preflights, and `ETag` /
//! `If-None-Match` on JSON reads.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::reply::Reply;
use crate::routes::Route;

/// Headers a page's script may read from an answer.
const EXPOSE: &str = "ETag, Content-Range, Content-Disposition, Content-Length, Location, Retry-After, WWW-Authenticate, \
     Upload-Offset, Upload-Length, Upload-Expires, Upload-Metadata, Asset-Location, Tus-Resumable, Tus-Version, Tus-Extension, Tus-Max-Size, Tus-Checksum-Algorithm";
/// Headers a page's script may send.
const ALLOW_HEADERS: &str = "Authorization, Content-Type, Range, If-None-Match, If-Range, \
     Tus-Resumable, Upload-Length, Upload-Offset, Upload-Metadata, Upload-Checksum, Upload-Defer-Length";

/// Sets the `Cache-Control` of an answer, so a shared cache (a CDN) never hands an answer
/// made for one key to someone else: `private, no-cache` for a request that sent a key
/// (whatever its answer); for a keyless one (a public asset, a signed link, a public
/// thumbnail, the OpenAPI document) `public, max-age=60` on success, so an asset made private
/// stops being served within a minute, and `no-store` on an error.
pub(crate) fn cache_control(reply: &mut Reply, keyed: bool) {
    let value = match (keyed, reply.status) {
        (true, _) => "private, no-cache",
        (false, ..400) => "public, max-age=60",
        (false, _) => "no-store",
    };
    reply.headers.retain(|(name, _)| *name != "cache-control");
    reply.headers.push(("cache-control", value.to_owned()));
}

/// The CORS policy of [`crate::Config::cors_origins`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cors<'c> {
    pub(crate) origins: &'c [String],
}

impl Cors<'_> {
    /// The request's origin when it is allowed.
    fn allowed<'o>(&self, origin: Option<&'o [u8]>) -> Option<&'o str> {
        if self.origins.is_empty() {
            return None;
        }
        let origin = std::str::from_utf8(origin?).ok()?;
        // An origin is sent back in a header: only printable ASCII is ever echoed.
        if origin.is_empty() || !origin.bytes().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        self.origins
            .iter()
            .any(|o| o == "*" || o == origin)
            .then_some(origin)
    }

    /// Adds the CORS headers of an answer to `origin`: `Vary: Origin` whenever CORS is on, and
    /// the `Access-Control-*` headers only for an allowed origin.
    pub(crate) fn apply(&self, reply: &mut Reply, origin: Option<&[u8]>) {
        if self.origins.is_empty() {
            return;
        }
        reply.headers.push(("vary", "Origin".to_owned()));
        if let Some(origin) = self.allowed(origin) {
            reply
                .headers
                .push(("access-control-allow-origin", origin.to_owned()));
            reply
                .headers
                .push(("access-control-expose-headers", EXPOSE.to_owned()));
        }
    }

    /// The answer to `OPTIONS` on `route`: 204 with `Allow`, no key needed; for an allowed
    /// origin also the preflight headers (the route's methods, the headers a page may send,
    /// and ten minutes to keep them).
    pub(crate) fn preflight(&self, route: &Route, origin: Option<&[u8]>) -> Reply {
        let mut reply = Reply::empty(204).with_header("allow", route.allow);
        let allowed = self.allowed(origin).is_some();
        self.apply(&mut reply, origin);
        if allowed {
            reply = reply
                .with_header("access-control-allow-methods", route.allow)
                .with_header("access-control-allow-headers", ALLOW_HEADERS)
                .with_header("access-control-max-age", "600");
        }
        reply
    }
}

/// A strong `ETag` of a JSON body: its XXH3-128 hash.
///
/// A validator needs no resistance to a forger: whoever could make two bodies of one URL
/// hash alike could only keep their own client's stale copy. What it needs is that a
/// change of the body changes it, which 128 bits of XXH3 give as surely as a cryptographic
/// hash, at a tenth of SHA-256's cost on a library page (it was a tenth of a cold page's
/// time).
pub(crate) fn etag_of(parts: &[&[u8]]) -> String {
    let mut hash = xxhash_rust::xxh3::Xxh3::new();
    for part in parts {
        hash.update(part);
    }
    format!(
        "\"{}\"",
        URL_SAFE_NO_PAD.encode(hash.digest128().to_be_bytes())
    )
}

/// Whether an `If-None-Match` value names `etag` (or is `*`), compared weakly as RFC 9110
/// says for `If-None-Match`.
pub(crate) fn none_match(if_none_match: Option<&[u8]>, etag: &str) -> bool {
    let Some(value) = if_none_match.and_then(|v| std::str::from_utf8(v).ok()) else {
        return false;
    };
    let bare = |tag: &str| tag.trim().trim_start_matches("W/").to_owned();
    let wanted = bare(etag);
    value
        .split(',')
        .any(|tag| tag.trim() == "*" || bare(tag) == wanted)
}

/// Turns a 200 JSON answer into 304 when `If-None-Match` names its `ETag` (adding the `ETag`
/// from the body when the operation set none).
pub(crate) fn conditional(mut reply: Reply, if_none_match: Option<&[u8]>) -> Reply {
    if reply.status != 200 || reply.stream.is_some() {
        return reply;
    }
    let etag = match reply.header("etag") {
        Some(etag) => etag.to_owned(),
        None => {
            let etag = etag_of(&[&reply.body]);
            reply.headers.push(("etag", etag.clone()));
            etag
        }
    };
    if none_match(if_none_match, &etag) {
        reply.status = 304;
        reply.body = bytes::Bytes::new();
        reply.headers.retain(|(name, _)| *name != "content-type");
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_compares_weakly_and_takes_lists() {
        let etag = "\"abc\"";
        assert!(none_match(Some(b"\"abc\""), etag));
        assert!(none_match(Some(b"W/\"abc\""), etag));
        assert!(none_match(Some(b"\"x\", \"abc\""), etag));
        assert!(none_match(Some(b"*"), etag));
        assert!(!none_match(Some(b"\"abcd\""), etag));
        assert!(!none_match(None, etag));
    }

    #[test]
    fn only_allowed_origins_get_access_control_headers() {
        let origins = vec!["https://a.example".to_owned()];
        let cors = Cors { origins: &origins };
        let mut r = Reply::empty(200);
        cors.apply(&mut r, Some(b"https://a.example"));
        assert_eq!(
            r.header("access-control-allow-origin"),
            Some("https://a.example")
        );
        let mut r = Reply::empty(200);
        cors.apply(&mut r, Some(b"https://b.example"));
        assert!(
            r.headers
                .iter()
                .all(|(n, _)| !n.starts_with("access-control"))
        );
        assert_eq!(r.header("vary"), Some("Origin"));
        let none: Vec<String> = Vec::new();
        let mut r = Reply::empty(200);
        Cors { origins: &none }.apply(&mut r, Some(b"https://a.example"));
        assert!(r.headers.is_empty());
    }
}
