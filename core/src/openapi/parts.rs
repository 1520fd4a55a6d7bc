//! What operations share: parameters ([`crate::query`] and the path ids), response headers,
//! and the error answers of [`crate::ApiError`].

use serde_json::{Map, Value, json};

use super::build::{
    byte_count, header, json_content, narrowed, one_of_strings, only, schema, string, uuid,
};
use crate::model::AssetType;

/// Every parameter of `components.parameters`.
pub(super) fn parameters() -> Value {
    let filterable: Vec<&str> = AssetType::ALL
        .iter()
        .filter(|t| t.is_filterable())
        .map(|t| t.as_str())
        .collect();
    let size = |name: &str| {
        query(
            name,
            json!({"type": "integer", "minimum": 1, "default": 20}),
            "Page size: a positive whole number (digits only); values above 100 are clamped \
             to 100, and the answer's pagination says the size used.",
        )
    };
    // A boolean: `true` or `false`, which the server also takes as `1` and `0`.
    let flag = |name: &str, description: &str| {
        query(
            name,
            json!({"type": "boolean", "default": false}),
            &format!("{description} `true` or `false` (`1` and `0` are taken too)."),
        )
    };
    let mut all = json!({
        "AssetId": path("asset_id", uuid(), "The asset's id (a hyphenated UUID; anything \
            else is 400 on `asset_id`)."),
        "LibraryId": path("library_id", uuid(), "The library's id (a hyphenated UUID; anything \
            else is 400 on `library_id`)."),
        "Slug": path("slug", json!({"type": "string", "minLength": 1}), "The library's slug."),
        "PassId": path("pass_id", uuid(), "The pass's id (a hyphenated UUID; anything else \
            is 400 on `pass_id`)."),
        "WebhookId": path("webhook_id", uuid(), "The webhook's id (a hyphenated UUID; \
            anything else is 400 on `webhook_id`)."),
        "KeyId": path("key_id", uuid(), "The key's id (a hyphenated UUID; anything else is \
            400 on `key_id`)."),
        "DeliveryId": path("delivery_id", uuid(), "The delivery's id (a hyphenated UUID; \
            anything else is 400 on `delivery_id`)."),
        "Page": query("page", json!({"type": "integer", "minimum": 1, "default": 1}),
            "1-based page: a positive whole number (digits only); a page past the end is \
             empty."),
        "PerPage": size("per_page"),
        "Limit": size("limit"),
        "After": query("after", json!({"type": "string", "pattern": "^[0-9a-f]{32}$"}),
            "Only events after this place of the log: the `next` of a page of events (absent: \
             from the oldest event kept)."),
        "EventTypeFilter": query("type", one_of_strings(crate::events::EventType::ALL
            .iter().map(|t| t.as_str()).collect::<Vec<_>>().as_slice()),
            "Only events of this type."),
        "Resource": query("resource", json!({"type": "string",
            "pattern": "^(asset|library|key|pass|webhook):[0-9a-fA-F-]{36}$"}),
            "Only events about this resource: `asset:{id}`, `library:{id}`, `key:{id}`, \
             `pass:{id}` or `webhook:{id}`."),
        "EventLimit": query("limit", json!({"type": "integer", "minimum": 1,
            "default": 100}),
            "At most this many events: a positive whole number (digits only); values above \
             1000 are clamped to 1000."),
        "AssetTypeFilter": query("asset_type", narrowed("AssetType", &filterable),
            "Only assets of this type (every type but external_video)."),
        "Search": query("search", string(),
            "Only assets whose title or description contains this, ignoring case; empty \
             means no filter."),
        "Sort": query("sort", json!({"type": "string",
            "enum": ["created_at", "title", "updated_at"], "default": "created_at"}),
            "Sort key; ties are broken by id, so paging never repeats or skips an asset."),
        "Order": query("order", json!({"type": "string", "enum": ["asc", "desc"],
            "default": "desc"}), "Sort direction."),
        "Status": query("status", json!({"type": "string",
            "enum": ["published", "draft", "any"], "default": "published"}),
            "Published assets, drafts, or both; `draft` and `any` need `write:assets` \
             (else 403)."),
        "WorkspaceId": query("workspace_id", workspace_filter(),
            "Only libraries of this workspace; empty means no filter. A workspace id is 1 to \
             64 letters, digits, `_` and `-` (else 400 on `workspace_id`)."),
        "AssetWorkspaceFilter": query("workspace_id", workspace_filter(),
            "Only assets of this workspace; empty means no filter. A workspace id is 1 to 64 \
             letters, digits, `_` and `-` (else 400 on `workspace_id`)."),
        "SlugWorkspace": query("workspace_id", workspace_filter(),
            "The workspace whose library has the slug (slugs are unique per workspace). \
             Without it (or empty): the library of no workspace with the slug, else the only \
             library with it. A workspace id is 1 to 64 letters, digits, `_` and `-` (else \
             400 on `workspace_id`)."),
        "IncludeAssets": flag("include_assets",
            "Whether sections list their assets (else their asset count)."),
        "Force": flag("force",
            "Delete also when libraries hold the asset, removing it from them in the same \
             change."),
        "ExpiresIn": query("expires_in", json!({"type": "integer", "minimum": 1,
            "maximum": 604_800, "default": 3600}),
            "Seconds the link works: 1 to 604800 (7 days), digits only."),
        "Expires": query("expires", string(),
            "A signed link's expiry, in Unix seconds (from `download-url`). Read only on a \
             request without `Authorization`."),
        "Signature": query("signature", string(),
            "A signed link's signature (from `download-url`). Read only on a request without \
             `Authorization`."),
        "Grant": query("grant", string(),
            "`paid` in a signed link minted by a key with `read:paid` (from `download-url`): \
             the link downloads paid files. Covered by the signature; read only on a request \
             without `Authorization`."),
        "PassLink": query("pass", string(),
            "A pass's id (a UUID) in a signed link minted with a library pass (from \
             `download-url`), checked against the pass when the link is used. Covered by the \
             signature; read only on a request without `Authorization`."),
        "W": query("w", json!({"type": "integer", "minimum": 1, "maximum": 4096}),
            "The variant's box width in pixels, 1 to 4096 (digits only)."),
        "H": query("h", json!({"type": "integer", "minimum": 1, "maximum": 4096}),
            "The variant's box height in pixels, 1 to 4096 (digits only)."),
        "Fit": query("fit", json!({"type": "string", "enum": ["inside", "cover", "contain"],
            "default": "inside"}),
            "`inside`: the whole image as large as fits the box; `cover`: the box filled, the              overflow cut evenly; `contain`: the whole image centred on a box-sized canvas              (white for JPEG, transparent otherwise)."),
        "Format": query("format", json!({"type": "string",
            "enum": ["auto", "jpeg", "png", "webp"], "default": "auto"}),
            "`auto`: WebP when `Accept` names `image/webp`, else JPEG, or PNG for a source              with transparency (the answer then has `Vary: Accept`)."),
        "Quality": query("q", json!({"type": "integer", "minimum": 1, "maximum": 100,
            "default": 80}), "JPEG and WebP quality, 1 to 100 (digits only)."),
        "Dpr": query("dpr", json!({"type": "number", "minimum": 1, "maximum": 3,
            "default": 1}),
            "Device pixel ratio, 1 to 3 (`2`, `1.5`): multiplies `w` and `h` (the product is              at most 4096)."),
        "Preset": query("preset", string(),
            "A named variant of the server's (the ready server: `thumb` 320 inside, `card`              640 x 400 cover, `cover` 1600 x 600 cover, `full` 2048 inside), alone: with any              other variant parameter it is 400."),
        "Accept": request_header("Accept",
            "With `format=auto`, `image/webp` here gets a WebP variant."),
        "IfNoneMatch": request_header("If-None-Match",
            "`ETag`s of copies the client holds (or `*`): when one matches, the answer is 304 \
             without a body."),
        "Range": request_header("Range",
            "One byte range, e.g. `bytes=0-99`: 206 with that part, or 416 when it starts past \
             the end. Anything else (several ranges, a malformed value) gets the whole file."),
        "IfRange": request_header("If-Range",
            "The range is served only while this names the file's current `ETag`; otherwise \
             the whole file is sent."),
    });
    // The upload parameters, in an object of their own (one json! of them all would pass
    // the macro's recursion limit).
    let uploads = json!({
        "UploadId": path("upload_id", uuid(), "The upload's id (a hyphenated UUID; anything \
            else is 400 on `upload_id`)."),
        "TusResumable": tus_header("Tus-Resumable", true, schema("TusVersion"),
            "The tus version the client speaks: `1.0.0` (else 412, with `Tus-Version`)."),
        "UploadLength": tus_header("Upload-Length", true, byte_count(),
            "The upload's size in bytes (digits only), at most `Tus-Max-Size` (else 413)."),
        "UploadOffset": tus_header("Upload-Offset", true, byte_count(),
            "Where the body's bytes go: the upload's offset (digits only)."),
        "UploadMetadata": tus_header("Upload-Metadata", false, string(),
            "Comma-separated pairs of a key and its value in base64: `filename`, `title`, \
             `description`, `asset_type`, `is_public`, `published`, `tags` (tags separated \
             by commas), `on_duplicate` (`allow`, `reject` or `reuse`) and `workspace_id` \
             (the asset's workspace: a workspace key's own, or another named by a global key; \
             a workspace key naming another is 403); other keys are ignored."),
        "UploadChecksum": tus_header("Upload-Checksum", false, string(),
            "`sha256 ` and the base64 of the body's SHA-256: the body is kept only when it \
             matches (else 460)."),
    });
    // The parameters of tags, checksums and duplicates, likewise.
    let organize = json!({
        "TagFilter": tags_query("tag", "Only assets with this tag (repeatable: \
            `tag=logo&tag=2026` is assets with all of them), compared ignoring case and \
            surrounding spaces. Each value: 1 to 64 characters once trimmed, no comma, \
            control or invisible format character; at most 32 different tags (else 400 on \
            `tag`)."),
        "AnyTagFilter": query("any_tag", json!({"type": "string", "minLength": 1}),
            "Only assets with at least one of these tags, separated by commas \
             (`any_tag=logo,icon`), compared ignoring case. Each tag as for `tag`; an empty \
             piece (`a,,b`) or more than 32 tags is 400 on `any_tag`. With `tag`, an asset \
             must have all of those and one of these."),
        "ChecksumFilter": query("checksum", json!({"type": "string",
            "pattern": "^[0-9a-fA-F]{64}$"}),
            "Only assets whose file has this SHA-256: 64 hexadecimal digits, either case \
             (else 400 on `checksum`); compared with `checksum_sha256`."),
        "Q": required_query("q", json!({"type": "string", "minLength": 1, "maxLength": 500}),
            "What to find: words (all must occur; the last also as the beginning of a word), \
             `\"quoted phrases\"`, `-word` to leave out, `a OR b`. Case and accents are \
             ignored. Empty, punctuation only, only exclusions, or longer than 500 characters \
             is 400 on `q`."),
        "SearchTag": query("tag", json!({"type": "string"}),
            "Only assets with this tag, compared ignoring case and surrounding spaces; empty \
             means no filter. 1 to 64 characters once trimmed, no comma, control or invisible \
             format character (else 400 on `tag`)."),
        "SearchLibrary": query("library_id", json!({"type": "string",
            "pattern": "^$|^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"}),
            "Only assets placed in this library (its id, a hyphenated UUID; else 400 on \
             `library_id`); empty means no filter."),
        "TagLimit": query("limit", json!({"type": "integer", "minimum": 1,
            "default": 100}),
            "At most this many tags: a positive whole number (digits only); values above \
             1000 are clamped to 1000."),
        "OnDuplicate": query("on_duplicate", schema("OnDuplicate"),
            "What to do when an asset's file has the same bytes (the same SHA-256) as the \
             upload: `allow` (the default; empty is the same) stores a new asset anyway; \
             `reject` answers 409 naming that asset (`asset_id`) and stores nothing; `reuse` \
             answers 200 with that asset and stores nothing. Drafts count. The check runs \
             once the file has arrived, so two uploads of the same bytes at the same time \
             may both be stored."),
    });
    for more in [uploads, organize] {
        if let (Value::Object(all), Value::Object(more)) = (&mut all, more) {
            all.extend(more);
        }
    }
    all
}

/// The schemas of values parameters and bodies share: `on_duplicate` and the tus version.
pub(super) fn add_schemas(add: &mut impl FnMut(&str, Value)) {
    add(
        "OnDuplicate",
        json!({"type": "string", "enum": ON_DUPLICATE, "default": "allow",
            "description": "What to do when an asset's file has the same bytes as the upload: \
                `allow`, `reject` or `reuse` (empty is `allow`)."}),
    );
    add(
        "TusVersion",
        json!({"type": "string", "enum": [crate::tus::VERSION],
            "description": "A version of the tus protocol: this server speaks 1.0.0."}),
    );
}

/// `allow`, `reject`, `reuse`, or empty (`allow`), as [`crate::validate::OnDuplicate::parse`]
/// takes them.
const ON_DUPLICATE: &[&str] = &["allow", "reject", "reuse", ""];

fn path(name: &str, schema: Value, description: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "schema": schema,
        "description": description})
}

/// A repeatable query parameter of tags: `name=a&name=b`.
fn tags_query(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "required": false, "style": "form", "explode": true,
        "schema": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "description": description})
}

/// A `workspace_id` filter: a workspace id, or empty for none.
fn workspace_filter() -> Value {
    json!({"type": "string", "pattern": "^([A-Za-z0-9_-]{1,64})?$"})
}

fn query(name: &str, schema: Value, description: &str) -> Value {
    json!({"name": name, "in": "query", "required": false, "schema": schema,
        "description": description})
}

fn required_query(name: &str, schema: Value, description: &str) -> Value {
    json!({"name": name, "in": "query", "required": true, "schema": schema,
        "description": description})
}

fn tus_header(name: &str, required: bool, schema: Value, description: &str) -> Value {
    json!({"name": name, "in": "header", "required": required, "schema": schema,
        "description": description})
}

fn request_header(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "header", "required": false, "schema": string(),
        "description": description})
}

/// Every header of `components.headers`.
pub(super) fn headers() -> Value {
    let always = |schema: Value, description: &str| json!({"required": true, "schema": schema, "description": description});
    json!({
        "ETag": always(string(), "A strong entity tag of the answer (quoted)."),
        "Location": always(string(), "Where the resource lives: `/api/v1/...` (behind the \
            path the API is mounted under), or for a redirect the link's address."),
        "RetryAfter": always(json!({"type": "integer", "minimum": 1}),
            "Whole seconds until the key may send again."),
        "WWWAuthenticate": always(only("Bearer"),
            "The scheme to authenticate with."),
        "ContentRange": always(json!({"type": "string",
            "pattern": "^bytes ([0-9]+-[0-9]+|\\*)/[0-9]+$"}),
            "`bytes first-last/size` of a part, or `bytes */size` when the range cannot be \
             satisfied."),
        "AcceptRanges": always(only("bytes"),
            "Ranges of bytes are served."),
        "ContentDisposition": always(string(),
            "`attachment` with the file's name (ASCII, and UTF-8 in `filename*` when needed)."),
        "ContentLength": always(byte_count(),
            "Bytes in the body."),
        "TusResumable": always(schema("TusVersion"),
            "The tus version the server speaks."),
        "TusVersion": always(schema("TusVersion"),
            "The tus versions the server speaks."),
        "UploadOffset": always(byte_count(),
            "The bytes of the upload kept: where the next `PATCH` starts."),
        "UploadLength": always(byte_count(),
            "The upload's size in bytes."),
        "UploadExpires": json!({"required": false, "schema": string(),
            "description": "When an unfinished upload is removed (an HTTP date)."}),
        "AssetLocation": json!({"required": false, "schema": string(),
            "description": "The asset the upload made, once its last byte arrived: \
                `/api/v1/assets/{id}`."}),
    })
}

/// Every response of `components.responses`: the error answers and 304.
pub(super) fn responses() -> Value {
    let mut all = Map::new();
    for (name, status, _, description) in ERRORS {
        let body = schema(error_schema(name, *status));
        let mut response = json!({"description": description, "content": json_content(body)});
        let named = match *status {
            401 => Some(("WWW-Authenticate", "WWWAuthenticate")),
            423 | 429 | 503 => Some(("Retry-After", "RetryAfter")),
            412 => Some(("Tus-Version", "TusVersion")),
            _ => None,
        };
        if let Some((name, component)) = named {
            response["headers"] = json!({ name: header(component) });
        }
        all.insert((*name).to_owned(), response);
    }
    all.insert(
        "NotModified".into(),
        json!({"description": "Not modified: `If-None-Match` names the current `ETag`; no body.",
            "headers": {"ETag": header("ETag")}}),
    );
    Value::Object(all)
}

/// The schema of the body of the shared error answer `name` of `status`: one per status, but
/// for 409, whose bodies have fields of their own.
pub(super) fn error_schema(name: &str, status: u16) -> &'static str {
    match (name, status) {
        (_, 400) => "ValidationError",
        ("Conflict", _) => "ConflictError",
        ("Duplicate", _) => "DuplicateError",
        // A resumable or direct upload's last step meets `on_duplicate=reject` too.
        ("UploadConflict", _) => "UploadConflictError",
        _ => ERROR_SCHEMAS
            .iter()
            .find(|(s, ..)| *s == status)
            .map_or("Error", |(_, schema, _)| *schema),
    }
}

/// The schema of the body of each error status whose bodies have no fields of their own (all
/// but 400 and 409): its status, name and description. Its `error` is one of the texts of that
/// status's answers in [`ERRORS`]; generated clients get one class per status.
pub(super) const ERROR_SCHEMAS: &[(u16, &str, &str)] = &[
    (
        401,
        "UnauthorizedError",
        "A 401 answer: no usable key or pass.",
    ),
    (
        403,
        "ForbiddenError",
        "A 403 answer: the key lacks a scope, or the key or pass may not have this file or zip.",
    ),
    (
        404,
        "NotFoundError",
        "A 404 answer: no such record (or route).",
    ),
    (
        408,
        "RequestTimeoutError",
        "A 408 answer: the body stopped arriving.",
    ),
    (
        410,
        "GoneError",
        "A 410 answer: the upload expired before it was finished.",
    ),
    (
        412,
        "PreconditionFailedError",
        "A 412 answer: `Tus-Resumable` is missing or names another version.",
    ),
    (
        413,
        "PayloadTooLargeError",
        "A 413 answer: the body is larger than the limit.",
    ),
    (
        415,
        "UnsupportedMediaTypeError",
        "A 415 answer: the body is not of the media type the operation takes.",
    ),
    (
        423,
        "LockedError",
        "A 423 answer: another request is writing to this upload.",
    ),
    (
        429,
        "TooManyRequestsError",
        "A 429 answer: the key's rate limit is spent.",
    ),
    (
        460,
        "ChecksumMismatchError",
        "A 460 answer: the body's SHA-256 is not the one named.",
    ),
    (
        500,
        "InternalServerError",
        "A 500 answer: the server could not complete the request.",
    ),
    (
        503,
        "ServiceUnavailableError",
        "A 503 answer: the work cannot be done now.",
    ),
];

/// Each shared error answer: its name, status, `error` texts and description.
pub(super) const ERRORS: &[(&str, u16, &[&str], &str)] = &[
    (
        "BadRequest",
        400,
        &["Validation error"],
        "Validation error: a query parameter, path id, body field or part is not valid; \
         `field` names it.",
    ),
    (
        "Unauthorized",
        401,
        &["Unauthorized"],
        "No usable key or pass: missing, malformed, unknown, revoked or expired (or, without \
         a key, an asset that is not public, a signed link that is invalid or expired, or a \
         pass sent in the query).",
    ),
    (
        "Forbidden",
        403,
        &["Insufficient permissions"],
        "The key lacks a scope the operation needs; the message names it.",
    ),
    (
        "ForbiddenFile",
        403,
        &["Insufficient permissions", "Pass download limit reached"],
        "The key lacks a scope the operation needs, or may not download this file: a paid \
         file needs `read:paid` or a library pass; a pass opens only its library's assets (its \
         `asset_ids` when given) while it has downloads left.",
    ),
    (
        "ForbiddenOrNoBulk",
        403,
        &[
            "Insufficient permissions",
            "Bulk download disabled",
            "Pass download limit reached",
        ],
        "The key lacks a scope the operation needs, the library does not allow bulk \
         download, the zip holds a paid file and the key lacks `read:paid`, or the library \
         pass is for another library or has no downloads left.",
    ),
    (
        "NotFound",
        404,
        &["Not found"],
        "No such record (or one the key may not see: a draft asset without `write:assets`, an \
         unpublished library).",
    ),
    (
        "Conflict",
        409,
        &["Conflict"],
        "Libraries hold the asset; `libraries` names them.",
    ),
    (
        "UploadConflict",
        409,
        &["Conflict"],
        "The upload is not where the request says: `Upload-Offset` names the offset to send \
         from; or a direct upload's file is not there yet, or not of the size declared; or \
         (`on_duplicate=reject`) the finished file has the bytes of an asset that exists: \
         `asset_id` names it, the upload is removed and nothing was stored.",
    ),
    (
        "Duplicate",
        409,
        &["Conflict"],
        "`on_duplicate=reject`, and an asset's file has the same bytes (the same SHA-256): \
         `asset_id` names that asset; nothing was stored.",
    ),
    (
        "Gone",
        410,
        &["Gone"],
        "The upload expired before it was finished; start a new one.",
    ),
    (
        "PreconditionFailed",
        412,
        &["Precondition failed"],
        "`Tus-Resumable` is missing or names a version this server does not speak \
         (`Tus-Version` says which it does).",
    ),
    (
        "Locked",
        423,
        &["Locked"],
        "Another request is writing to this upload; retry after `Retry-After` seconds.",
    ),
    (
        "ChecksumMismatch",
        460,
        &["Checksum mismatch"],
        "The body's SHA-256 is not the one named; none of it was kept.",
    ),
    (
        "RequestTimeout",
        408,
        &["Request timeout"],
        "No part of the body arrived for 30 seconds.",
    ),
    (
        "PayloadTooLarge",
        413,
        &["Payload too large"],
        "The body is larger than the limit, which the message names (1 MiB of JSON; 100 MiB \
         of file in one request, `max_upload`; a resumable upload's `Upload-Length` or a \
         direct upload's `size` past 10 GiB, `max_resumable_upload`, whatever the asset type; \
         more bytes than the upload lacks).",
    ),
    (
        "UnsupportedMediaType",
        415,
        &["Unsupported media type"],
        "The body is not of the media type the operation takes; the message names it.",
    ),
    (
        "TooManyRequests",
        429,
        &["Too many requests"],
        "The key's rate limit is spent (when the server sets one).",
    ),
    (
        "ServiceUnavailable",
        503,
        &["Service unavailable"],
        "The work cannot be done now (a file kept changing while it was opened); retry after \
         `Retry-After` seconds.",
    ),
    (
        "InternalError",
        500,
        &["Internal server error"],
        "The server could not complete the request (the store or file store failed).",
    ),
];

/// The `headers` of a response: each header's name and its component's name.
pub(super) fn named_headers(names: &[(&str, &str)]) -> Value {
    let mut map = Map::new();
    for (name, component) in names {
        map.insert((*name).to_owned(), header(component));
    }
    Value::Object(map)
}
