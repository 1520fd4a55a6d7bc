//! The example website page (`examples/server/site/`), which both ready servers serve at `/site/`
//! with the same bytes and headers.
//!
//! The page needs no key: the visitor's browser calls the API on the same origin with the
//! key given in the page's address or form. Its two files are embedded in the binary:
//!
//! - `/site/` and `/site/index.html`: the page (`text/html`);
//! - `/site/app.js`: its ES module (`text/javascript`);
//! - `/site/upload.html` and `/site/upload.js`: the upload page (resumable uploads with
//!   progress) and its script, which uses `/site/vendor/tus.min.js`, the official tus client's
//!   browser build, vendored (no CDN);
//! - `/site`: a permanent redirect to `/site/`, keeping the query.
//!
//! Every answer carries [`SECURITY_HEADERS`]: no sniffing, a content security policy that
//! lets the page load scripts, images and API answers from its own origin only, no referrer
//! (the address may hold a key), and no framing. Other methods than GET and HEAD get the
//! API's JSON 404, as any unknown route does.

use std::borrow::Cow;

use hyper::header::{CONTENT_TYPE, HeaderValue, LOCATION};
use hyper::{Method, Response, StatusCode};

/// The page.
pub(crate) const INDEX_HTML: &str = include_str!("../site/index.html");

/// The page's ES module.
pub(crate) const APP_JS: &str = include_str!("../site/app.js");

/// The upload page.
pub(crate) const UPLOAD_HTML: &str = include_str!("../site/upload.html");

/// The upload page's script.
pub(crate) const UPLOAD_JS: &str = include_str!("../site/upload.js");

/// `tus-js-client`'s browser build (`site/vendor/README.md`).
pub(crate) const TUS_JS: &str = include_str!("../site/vendor/tus.min.js");

/// The paths the pages answer on.
pub(crate) const PATHS: [&str; 7] = [
    "/site",
    "/site/",
    "/site/index.html",
    "/site/app.js",
    "/site/upload.html",
    "/site/upload.js",
    "/site/vendor/tus.min.js",
];

/// What the page's content security policy allows: scripts, API calls and images from its
/// own origin (and images over `https:`, for a cover or thumbnails hosted elsewhere), the inline style
/// sheet of `index.html`, nothing else; no plugin, no `<base>`, no framing.
pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     connect-src 'self'; img-src 'self' https:; style-src 'unsafe-inline'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The headers of every answer under `/site`.
pub(crate) const SECURITY_HEADERS: [(&str, &str); 6] = [
    ("x-content-type-options", "nosniff"),
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
    // Always checked again, so a new build's page is seen at once; the files are small.
    ("cache-control", "no-cache"),
];

/// The answer for a request of `method` on `path` (with its `query`, if any), or `None` when
/// it is not one of the page's: another path, or a method other than GET and HEAD (hyper
/// leaves the body out of an answer to HEAD).
pub(crate) fn response(
    method: &Method,
    path: &str,
    query: Option<&str>,
) -> Option<Response<&'static str>> {
    if method != Method::GET && method != Method::HEAD {
        return None;
    }
    let (status, content_type, body, location) = match path {
        "/site" => {
            let location = match query {
                Some(q) if !q.is_empty() => format!("/site/?{q}"),
                _ => "/site/".to_owned(),
            };
            (StatusCode::PERMANENT_REDIRECT, None, "", Some(location))
        }
        "/site/" | "/site/index.html" => (
            StatusCode::OK,
            Some("text/html; charset=utf-8"),
            INDEX_HTML,
            None,
        ),
        "/site/app.js" => (
            StatusCode::OK,
            Some("text/javascript; charset=utf-8"),
            APP_JS,
            None,
        ),
        "/site/upload.html" => (
            StatusCode::OK,
            Some("text/html; charset=utf-8"),
            UPLOAD_HTML,
            None,
        ),
        "/site/upload.js" => (
            StatusCode::OK,
            Some("text/javascript; charset=utf-8"),
            UPLOAD_JS,
            None,
        ),
        "/site/vendor/tus.min.js" => (
            StatusCode::OK,
            Some("text/javascript; charset=utf-8"),
            TUS_JS,
            None,
        ),
        _ => return None,
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    for (name, value) in SECURITY_HEADERS {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if let Some(content_type) = content_type {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    if let Some(location) = location {
        // The query came in a valid request target, so it is a valid header value; if not,
        // the redirect goes to the page without it.
        let value =
            HeaderValue::try_from(location).unwrap_or_else(|_| HeaderValue::from_static("/site/"));
        headers.insert(LOCATION, value);
    }
    Some(response)
}

/// `target` (a request's path and query, or a whole URL) fit for a request log: the value of
/// every `key` parameter (its name compared once percent-decoded, so `%6Bey=` is a `key` too)
/// and every path segment, parameter name or value that holds an API key (`alk_`) or a
/// library pass (`alp_`), percent-encoded or not, are replaced by `REDACTED`. The page may be
/// opened with its key in the address.
pub(crate) fn redact_key(target: &str) -> Cow<'_, str> {
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    let path_holds = path.split('/').any(holds_token);
    let query_holds = query.is_some_and(|q| q.split('&').any(is_secret_param));
    if !path_holds && !query_holds {
        return Cow::Borrowed(target);
    }
    let path: Vec<&str> = path
        .split('/')
        .map(|segment| {
            if holds_token(segment) {
                "REDACTED"
            } else {
                segment
            }
        })
        .collect();
    let mut redacted = path.join("/");
    if let Some(query) = query {
        let params: Vec<Cow<'_, str>> = query
            .split('&')
            .map(|param| match param.split_once('=') {
                _ if !is_secret_param(param) => Cow::Borrowed(param),
                Some((name, _)) if !holds_token(name) => Cow::Owned(format!("{name}=REDACTED")),
                _ => Cow::Borrowed("REDACTED=REDACTED"),
            })
            .collect();
        redacted.push('?');
        redacted.push_str(&params.join("&"));
    }
    Cow::Owned(redacted)
}

/// Whether a query parameter must not be logged: its decoded name is `key`, or its name or
/// value holds a token.
fn is_secret_param(param: &str) -> bool {
    let (name, value) = param.split_once('=').unwrap_or((param, ""));
    decoded(name) == "key" || holds_token(name) || holds_token(value)
}

/// Whether `part` of an address, percent-decoded, holds an API key or a library pass.
fn holds_token(part: &str) -> bool {
    let text = decoded(part);
    text.contains("alk_") || text.contains("alp_")
}

/// `part` of an address percent-decoded (and `+` read as a space, as in a query).
fn decoded(part: &str) -> Cow<'_, str> {
    if !part.contains(['%', '+']) {
        return Cow::Borrowed(part);
    }
    let spaced = part.replace('+', " ");
    Cow::Owned(
        percent_encoding::percent_decode_str(&spaced)
            .decode_utf8_lossy()
            .into_owned(),
    )
}
