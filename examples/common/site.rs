//! The example website page (`examples/site/`), which both ready servers serve at `/site/`
//! with the same bytes and headers.
//!
//! The page needs no key: the visitor's browser calls the API on the same origin with the
//! key given in the page's address or form. Its two files are embedded in the binary:
//!
//! - `/site/` and `/site/index.html`: the page (`text/html`);
//! - `/site/app.js`: its ES module (`text/javascript`);
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

/// The paths the page answers on.
pub(crate) const PATHS: [&str; 4] = ["/site", "/site/", "/site/index.html", "/site/app.js"];

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

/// `path_and_query` with the value of every `key` query parameter replaced by `REDACTED`,
/// for request logs: the page may be opened with its API key in the address.
pub(crate) fn redact_key(path_and_query: &str) -> Cow<'_, str> {
    let Some((path, query)) = path_and_query.split_once('?') else {
        return Cow::Borrowed(path_and_query);
    };
    let has_key = query
        .split('&')
        .any(|p| p == "key" || p.starts_with("key="));
    if !has_key {
        return Cow::Borrowed(path_and_query);
    }
    let params: Vec<&str> = query
        .split('&')
        .map(|p| {
            if p == "key" || p.starts_with("key=") {
                "key=REDACTED"
            } else {
                p
            }
        })
        .collect();
    Cow::Owned(format!("{path}?{}", params.join("&")))
}
