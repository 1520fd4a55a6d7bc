//! Each operation of the route table, described: where it lives, what it reads, what it
//! answers. The services it describes are in [`crate::Service`]'s modules (`assets`,
//! `lifecycle`, `libraries`, `downloads`, `websites`, `passes`, `organize`); the descriptions
//! themselves are in `assets`, `organize`, `libraries`, `passes`, `events`, `webhooks` and
//! `uploads`.

use serde_json::{Map, Value, json};

mod assets;
mod events;
mod keys;
mod libraries;
mod organize;
mod passes;
mod search;
mod uploads;
mod webhooks;

use super::build::{json_content, raw_bytes, response, schema};
use super::parts::{ERRORS, named_headers};
use crate::routes::{Operation, OperationSpec};

/// Who may call an operation besides a key with its scopes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// Only a key.
    Required,
    /// A key, or none (a public asset, a signed link).
    Optional,
    /// No key at all.
    None,
}

/// What an operation is, before it becomes an OpenAPI operation object.
struct Spec {
    id: &'static str,
    tag: &'static str,
    summary: &'static str,
    description: &'static str,
    keys: Keys,
    parameters: Vec<Value>,
    body: Option<Value>,
    /// The answers other than the shared errors, by status.
    answers: Vec<(&'static str, Value)>,
    /// The shared error answers (names of `components.responses`) beyond those of every keyed
    /// operation (401, 403, 429, 500).
    errors: &'static [&'static str],
}

/// The OpenAPI operation object of the table's row `described`.
pub(super) fn describe(described: &OperationSpec) -> Value {
    let op = described.operation;
    let spec = spec(op);
    let scopes: Vec<&str> = op.scopes().iter().map(|s| s.as_str()).collect();
    let mut description = spec.description.to_owned();
    description.push_str("\n\n");
    if op.opens_with_pass() {
        description
            .push_str("A library pass (`Authorization: Pass`) for the library opens it too. ");
    }
    description.push_str(&match spec.keys {
        Keys::None => "No key needed.".to_owned(),
        _ if scopes.is_empty() => "Any key: no scope of its own.".to_owned(),
        _ => format!(
            "Scopes: {}.",
            scopes
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    });
    let mut security = match spec.keys {
        Keys::Required | Keys::Optional => vec![json!({"bearerAuth": scopes})],
        Keys::None => vec![],
    };
    if op.opens_with_pass() {
        security.push(json!({"passAuth": []}));
    }
    if spec.keys == Keys::Optional {
        security.push(json!({}));
    }

    let mut responses = Map::new();
    for (status, answer) in spec.answers {
        responses.insert(status.to_owned(), answer);
    }
    if op.answers_not_modified() {
        responses.insert("304".into(), response("NotModified"));
    }
    let mut errors: Vec<&str> = spec.errors.to_vec();
    if spec.keys != Keys::None {
        errors.extend(["Unauthorized", "TooManyRequests", "InternalError"]);
        if !errors.contains(&"ForbiddenOrNoBulk") && !errors.contains(&"ForbiddenFile") {
            errors.push("Forbidden");
        }
    }
    for name in errors {
        let status = ERRORS
            .iter()
            .find(|(n, ..)| *n == name)
            .map_or(500, |(_, status, ..)| *status);
        responses.insert(status.to_string(), response(name));
    }

    let mut operation = json!({
        "operationId": spec.id,
        "tags": [spec.tag],
        "summary": spec.summary,
        "description": description,
        "security": Value::Array(security),
        "responses": responses,
    });
    if !spec.parameters.is_empty() {
        operation["parameters"] = Value::Array(spec.parameters);
    }
    if let Some(body) = spec.body {
        operation["requestBody"] = body;
    }
    operation
}

/// A JSON answer of `schema`.
fn json_answer(description: &str, schema: Value) -> Value {
    json!({"description": description, "content": json_content(schema)})
}

/// A JSON answer of `schema` to a read, with its `ETag`.
fn read_answer(description: &str, schema: Value) -> Value {
    let mut answer = json_answer(description, schema);
    answer["headers"] = named_headers(&[("ETag", "ETag")]);
    answer
}

/// A 201 of `schema` with its `Location`, and `links` to what may follow.
fn created(description: &str, schema: Value, links: Value) -> Value {
    let mut answer = json_answer(description, schema);
    answer["headers"] = named_headers(&[("Location", "Location")]);
    answer["links"] = links;
    answer
}

/// A required JSON body of `schema`.
fn json_body(name: &str) -> Value {
    json!({"required": true, "content": json_content(schema(name))})
}

/// A required multipart body of `schema`.
fn multipart_body(name: &str) -> Value {
    json!({"required": true, "content": {"multipart/form-data": {"schema": schema(name)}}})
}

/// Links from an answer carrying an asset to the operations on it.
fn asset_links() -> Value {
    let mut links = Map::new();
    for (name, id) in [
        ("GetAsset", "getAsset"),
        ("UpdateAsset", "updateAsset"),
        ("DeleteAsset", "deleteAsset"),
        ("AssetUsage", "assetUsage"),
        ("RemakeThumbnail", "remakeThumbnail"),
        ("DownloadAsset", "downloadAsset"),
        ("AssetDownloadUrl", "assetDownloadUrl"),
        ("AssetImage", "assetImage"),
        ("AssetImageUrl", "assetImageUrl"),
    ] {
        links.insert(
            name.into(),
            json!({"operationId": id, "parameters": {"asset_id": "$response.body#/data/id"}}),
        );
    }
    Value::Object(links)
}

/// Links from an answer carrying a library to the operations on it.
fn library_links() -> Value {
    let mut links = Map::new();
    for (name, id) in [
        ("GetLibrary", "getLibrary"),
        ("DeleteLibrary", "deleteLibrary"),
        ("DownloadLibrary", "downloadLibrary"),
        ("LibraryDownloadUrl", "libraryDownloadUrl"),
    ] {
        links.insert(
            name.into(),
            json!({"operationId": id, "parameters": {"library_id": "$response.body#/id"}}),
        );
    }
    links.insert(
        "GetLibraryBySlug".into(),
        json!({"operationId": "getLibraryBySlug", "parameters": {"slug": "$response.body#/slug"}}),
    );
    Value::Object(links)
}

/// The errors of an operation that reads a JSON body.
const JSON_BODY_ERRORS: &[&str] = &[
    "BadRequest",
    "RequestTimeout",
    "PayloadTooLarge",
    "UnsupportedMediaType",
];

/// The errors of an operation that reads a JSON body and names a record.
const JSON_BODY_RECORD_ERRORS: &[&str] = &[
    "BadRequest",
    "NotFound",
    "RequestTimeout",
    "PayloadTooLarge",
    "UnsupportedMediaType",
];

/// `spec(op)`: the description of each operation, by the function its row in the operations
/// table names.
macro_rules! describers {
    ($($op:ident => $module:ident::$describe:ident,)*) => {
        fn spec(op: Operation) -> Spec {
            match op {
                $(Operation::$op => $module::$describe(),)*
            }
        }
    };
}
crate::operations::with_describers!(describers);

/// A download's 200 (`part: false`) or 206.
/// An image variant: its bytes, media type and strong `ETag`.
fn image_answer(description: &str) -> Value {
    json!({
        "description": description,
        "headers": named_headers(&[("Content-Length", "ContentLength"), ("ETag", "ETag")]),
        "content": {
            "image/jpeg": raw_bytes("image/jpeg"),
            "image/png": raw_bytes("image/png"),
            "image/webp": raw_bytes("image/webp"),
        },
    })
}

fn file_answer(description: &str, part: bool) -> Value {
    let mut headers = vec![
        ("Content-Length", "ContentLength"),
        ("Accept-Ranges", "AcceptRanges"),
        ("ETag", "ETag"),
        ("Content-Disposition", "ContentDisposition"),
    ];
    if part {
        headers.push(("Content-Range", "ContentRange"));
    }
    json!({
        "description": description,
        "headers": named_headers(&headers),
        // The file's own media type: any bytes.
        "content": {"*/*": raw_bytes("application/octet-stream")},
    })
}
