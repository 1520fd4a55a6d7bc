//! The OpenAPI 3.1 document of the API (feature `openapi`), served without a key at
//! `GET /api/v1/openapi.json`.
//!
//! Its paths are the operations table's ([`crate::OPERATIONS`]: each operation's method and
//! path, of the capabilities the build has; a test checks them against the routes derived
//! from the same table), each path and query parameter with its range, enumeration and default,
//! each request body (JSON and multipart), every status each operation can answer with its
//! body and headers (`ETag`, `Location`, `Retry-After`, `Content-Range`, ...), the
//! `bearerAuth` scheme, and each operation's scopes (in its description and as the roles of its
//! security requirement). It describes a service with the default [`crate::Config`]: limits
//! such as the largest page size or title length are those defaults.
//!
//! The schemas of answers come from the types that write them: assets, library list items,
//! library pages, sections, library assets, library uses, passes, paginations, signed links,
//! events, webhooks, deliveries, uploads, asset types, tag counts and timestamps derive
//! `utoipa::ToSchema` (`derived` turns those into JSON), so a field added to such a type is in
//! the document too. What a derive cannot say is JSON written here, by concern: `schemas` (the
//! asset schema per group of types and its discriminator, the envelope, a page's sections,
//! uploads, the error bodies), `feed` (events, webhooks, deliveries), `organize` (tags and bulk
//! changes), `bodies` (what requests send), `parts` (shared parameters, headers and error
//! answers) and `operations` (each operation of the route table). Tests render real values of
//! the hand-written answer schemas and of every error and compare their keys with the schemas
//! (`wire_tests`, `organize_wire_tests`). It is written for client generators too
//! (`client_tests`): one-value enums rather than `const`, named error bodies and `ErrorKind`,
//! `AssetType` referred to wherever it appears, byte counts of `format: int64`, raw bytes as
//! media types without a string schema. The document's keys are sorted, so the same
//! document is always the same bytes; the repository keeps a copy as `openapi.json`, which a
//! test compares with what is served.
//!
//! ```
//! let doc = assetlib_core::openapi::document();
//! assert_eq!(doc["openapi"], "3.1.0");
//! assert!(doc["paths"]["/api/v1/assets"]["get"].is_object());
//! ```

use std::sync::OnceLock;

use bytes::Bytes;
use serde_json::{Value, json};

use crate::reply::Reply;
use crate::routes::OPERATIONS;

mod bodies;
mod build;
#[cfg(test)]
mod client_tests;
mod derived;
mod feed;
mod keys;
mod operations;
mod organize;
#[cfg(test)]
mod organize_wire_tests;
mod parts;
mod schemas;
mod search;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod wire_tests;

/// The OpenAPI document, as a JSON value with sorted keys.
pub fn document() -> Value {
    let mut paths = serde_json::Map::new();
    for described in OPERATIONS.iter().filter(|d| d.operation.is_built()) {
        let item = paths.entry(described.row.path).or_insert_with(|| json!({}));
        item[described.row.method.to_ascii_lowercase()] = operations::describe(described);
    }
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "assetlib: the Digital Assets and Libraries API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": INTRO,
            "license": {"name": "MIT OR Apache-2.0", "identifier": "MIT OR Apache-2.0"},
        },
        "tags": [
            {"name": "assets", "description": "Files and links: list, read, create, upload, change, replace, delete; tags, checksums and bulk changes."},
            {"name": "libraries", "description": "Published, sectioned groupings of assets, written whole."},
            {"name": "downloads", "description": "Files, library zips, and signed links that download without a key."},
            {"name": "passes", "description": "Library passes: what buyers of a paid library get."},
            {"name": "events", "description": "The event log: the change feed and audit trail."},
            {"name": "webhooks", "description": "Endpoints that receive the events, signed (Standard Webhooks)."},
            {"name": "uploads", "description": "Large uploads: resumable (tus 1.0) and direct to the bucket."},
            {"name": "keys", "description": "API keys minted over HTTP, and short-lived browser tokens."},
            {"name": "meta", "description": "This document."},
        ],
        "paths": Value::Object(paths),
        "components": {
            "schemas": schemas::all(
                [
                    feed::add_schemas,
                    organize::add_schemas,
                    keys::add_schemas,
                    search::add_schemas,
                ],
                organize::add_bodies,
            ),
            "parameters": parts::parameters(),
            "headers": parts::headers(),
            "responses": parts::responses(),
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "alk_ followed by 43 base64url characters",
                    "description": "An API key: `Authorization: Bearer alk_...`. Keys carry \
                        scopes (`read:assets`, `write:assets`, `read:libraries`, \
                        `write:libraries`, `read:paid`, `write:passes`, `read:events`, \
                        `admin:webhooks`); each \
                        operation names \
                        those it needs. A missing, malformed, unknown, revoked or expired key \
                        is 401; a key without a needed scope is 403.",
                },
                "passAuth": {
                    "type": "http",
                    "scheme": "Pass",
                    "description": "A library pass: `Authorization: Pass alp_...` (from \
                        `createPass`). It opens its library, the library's zip and its assets' \
                        downloads and their links, and nothing else (403). A malformed, \
                        unknown, expired or revoked pass is 401, all alike. Never in a query \
                        string.",
                },
            },
        },
    });
    doc.sort_all_objects();
    doc
}

/// The document as the served bytes: pretty-printed JSON with sorted keys and a final line
/// break (the form of the repository's `openapi.json`).
pub fn to_json() -> String {
    // A `Value` always serializes: its keys are strings.
    let mut text = serde_json::to_string_pretty(&document()).unwrap_or_default();
    text.push('\n');
    text
}

/// The answer of `GET /api/v1/openapi.json`: the document, built once per process, with its
/// `ETag`.
pub(crate) fn reply() -> Reply {
    static SERVED: OnceLock<(Bytes, String)> = OnceLock::new();
    let (body, etag) = SERVED.get_or_init(|| {
        let body = Bytes::from(to_json());
        let etag = crate::web::etag_of(&[&body]);
        (body, etag)
    });
    Reply::json_bytes(200, body.clone()).with_header("etag", etag.clone())
}

/// The document's introduction: what holds for every operation.
const INTRO: &str = "\
Assets are files and links (PDFs, documents, images, videos, audio, links, collections, git \
references, externally hosted videos); libraries are published, sectioned groupings of assets \
that a website renders as a page. Everything lives under `/api/v1` and speaks JSON.

**Keys.** Every operation but this document and the keyless reads below needs an API key as a \
bearer token (`bearerAuth`); each operation's description names the scopes it needs, and so do \
the roles of its security requirement.

**Keyless access.** A published asset with `is_public: true` is read (`GET \
/api/v1/assets/{asset_id}`) and downloaded without a key; any other asset answers such a \
request with the same 401 as a missing key. A signed link (from a `download-url` operation) \
downloads without a key until it expires; a tampered, expired or malformed link is 401.

**Workspaces.** Assets and libraries carry a `workspace_id` (null: none). A key is global \
(it sees every workspace, sets `workspace_id` on writes and filters lists by it) or of one \
workspace: that key's lists show its workspace's records, what it creates lands there, a \
record of another workspace answers exactly as a missing one, and naming another workspace \
in a body or a filter is 403. Slugs are unique per workspace. Events and webhooks carry \
the workspace of what they are about: a workspace key's feed and webhooks see its own \
workspace's events alone.

**Paid libraries.** An asset's file is paid when the asset is not public, a published paid \
library (`is_paid`) holds it, and no published free library does. Downloading a paid file \
(directly, through a signed link, in a zip) needs a key with `read:paid` or a library pass \
(`passAuth`) for a library holding it; a key with only `read:assets` gets 403. Metadata and \
thumbnails stay readable with `read:assets`.

**Errors.** Every error is JSON: `{\"error\", \"message\"}`, with `field` on a 400 (the offending \
field or path, e.g. `sections[0].assets[2].asset_id`), `libraries` on a 409 of an asset \
libraries hold and `asset_id` on a 409 of an upload whose bytes an asset has already \
(`on_duplicate=reject`). The checks run \
in one order: route (404 for an unknown path under `/api/v1`; 405 with `Allow` for a method the \
path does not take), key (401 with `WWW-Authenticate: Bearer`), scope (403), rate limit (429 \
with `Retry-After`, when the server sets one), then body size (413), content type (415), \
validation (400) and lookup (404). A request body that stops arriving for 30 seconds is 408.

**Caching.** Every JSON `GET` answers with an `ETag` and answers 304 to a matching \
`If-None-Match` (a library page's `ETag` leaves out its `view_count`).

**Methods.** `HEAD` is answered wherever `GET` is, with the same status and headers and no \
body (it counts no library view and no download). `OPTIONS` on every path answers 204 with \
`Allow`, and with the CORS preflight headers for an origin the server allows.

**Limits.** The limits shown are the defaults of a server: page sizes above 100 are clamped, \
titles have at most 500 characters, JSON bodies at most 1 MiB, a file sent in one request at \
most 100 MiB, and a resumable or direct upload (of any asset type) at most 10 GiB.";
