//! Each operation of the route table, described: where it lives, what it reads, what it
//! answers. The services it describes are in [`crate::Service`]'s modules (`assets`,
//! `lifecycle`, `libraries`, `downloads`, `websites`).

use serde_json::{Map, Value, json};

use super::build::{json_content, parameter, response, schema};
use super::parts::{ERRORS, named_headers};
use crate::routes::Operation;

/// Where an operation lives in the document. Paths name their parameter (`asset_id`,
/// `library_id`, `slug`) where the route table says `{id}`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Described {
    pub(super) operation: Operation,
    pub(super) method: &'static str,
    pub(super) path: &'static str,
}

const fn at(operation: Operation, method: &'static str, path: &'static str) -> Described {
    Described {
        operation,
        method,
        path,
    }
}

/// Every operation of the document.
pub(super) const DESCRIBED: &[Described] = &[
    at(Operation::ListAssets, "GET", "/api/v1/assets"),
    at(Operation::CreateAsset, "POST", "/api/v1/assets"),
    at(Operation::UploadAsset, "POST", "/api/v1/assets/upload"),
    at(Operation::GetAsset, "GET", "/api/v1/assets/{asset_id}"),
    at(Operation::UpdateAsset, "PATCH", "/api/v1/assets/{asset_id}"),
    at(
        Operation::DeleteAsset,
        "DELETE",
        "/api/v1/assets/{asset_id}",
    ),
    at(
        Operation::ReplaceAssetFile,
        "PUT",
        "/api/v1/assets/{asset_id}/file",
    ),
    at(
        Operation::AssetDownloadUrl,
        "GET",
        "/api/v1/assets/{asset_id}/download-url",
    ),
    at(
        Operation::AssetUsage,
        "GET",
        "/api/v1/assets/{asset_id}/usage",
    ),
    at(
        Operation::DownloadAsset,
        "GET",
        "/api/v1/assets/{asset_id}/download",
    ),
    at(Operation::ListLibraries, "GET", "/api/v1/libraries"),
    at(
        Operation::GetLibraryBySlug,
        "GET",
        "/api/v1/libraries/slug/{slug}",
    ),
    at(
        Operation::GetLibrary,
        "GET",
        "/api/v1/libraries/{library_id}",
    ),
    at(
        Operation::PutLibrary,
        "PUT",
        "/api/v1/libraries/{library_id}",
    ),
    at(
        Operation::DeleteLibrary,
        "DELETE",
        "/api/v1/libraries/{library_id}",
    ),
    at(
        Operation::DownloadLibrary,
        "GET",
        "/api/v1/libraries/{library_id}/download",
    ),
    at(
        Operation::LibraryDownloadUrl,
        "GET",
        "/api/v1/libraries/{library_id}/download-url",
    ),
    at(Operation::OpenApi, "GET", "/api/v1/openapi.json"),
];

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

/// The OpenAPI operation object of `described`.
pub(super) fn describe(described: &Described) -> Value {
    let op = described.operation;
    let spec = spec(op);
    let scopes: Vec<&str> = op.scopes().iter().map(|s| s.as_str()).collect();
    let mut description = spec.description.to_owned();
    description.push_str("\n\n");
    description.push_str(&match spec.keys {
        Keys::None => "No key needed.".to_owned(),
        _ => format!(
            "Scopes: {}.",
            scopes
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    });
    let security = match spec.keys {
        Keys::Required => json!([{"bearerAuth": scopes}]),
        Keys::Optional => json!([{"bearerAuth": scopes}, {}]),
        Keys::None => json!([]),
    };

    let mut responses = Map::new();
    for (status, answer) in spec.answers {
        responses.insert(status.to_owned(), answer);
    }
    if op.is_read() {
        responses.insert("304".into(), response("NotModified"));
    }
    let mut errors: Vec<&str> = spec.errors.to_vec();
    if spec.keys != Keys::None {
        errors.extend(["Unauthorized", "TooManyRequests", "InternalError"]);
        if !errors.contains(&"ForbiddenOrNoBulk") {
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
        "security": security,
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
        ("DownloadAsset", "downloadAsset"),
        ("AssetDownloadUrl", "assetDownloadUrl"),
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

fn spec(op: Operation) -> Spec {
    let p = parameter;
    match op {
        Operation::ListAssets => Spec {
            id: "listAssets",
            tag: "assets",
            summary: "List assets",
            description: "A page of assets, newest first by default. Only published assets, \
                unless `status` asks for drafts (which needs `write:assets`).",
            keys: Keys::Required,
            parameters: vec![
                p("Page"),
                p("PerPage"),
                p("AssetTypeFilter"),
                p("Search"),
                p("Sort"),
                p("Order"),
                p("Status"),
                p("IfNoneMatch"),
            ],
            body: None,
            answers: vec![("200", read_answer("A page of assets.", schema("AssetList")))],
            errors: &["BadRequest"],
        },
        Operation::CreateAsset => Spec {
            id: "createAsset",
            tag: "assets",
            summary: "Create an asset",
            description: "Creates an asset from JSON: a link, external video, git reference or \
                collection, or a file-based asset whose file is already in the server's file \
                store (`file_path`). `\"published\": false` makes a draft.",
            keys: Keys::Required,
            parameters: vec![],
            body: Some(json_body("NewAsset")),
            answers: vec![(
                "201",
                created(
                    "The asset, created.",
                    schema("AssetEnvelope"),
                    asset_links(),
                ),
            )],
            errors: JSON_BODY_ERRORS,
        },
        Operation::UploadAsset => Spec {
            id: "uploadAsset",
            tag: "assets",
            summary: "Upload a file as a new asset",
            description: "Creates a file-based asset from a multipart/form-data upload. The \
                file is streamed into the file store and read for its type, size, pages, \
                words, pixel size and thumbnail; a failed upload leaves no file and no asset. \
                A body declared or found larger than the limit is 413.",
            keys: Keys::Required,
            parameters: vec![],
            body: Some(multipart_body("UploadForm")),
            answers: vec![(
                "201",
                created(
                    "The asset, created.",
                    schema("AssetEnvelope"),
                    asset_links(),
                ),
            )],
            errors: JSON_BODY_ERRORS,
        },
        Operation::GetAsset => Spec {
            id: "getAsset",
            tag: "assets",
            summary: "Read an asset",
            description: "One asset. A draft is 404 but for a key with `write:assets`. Without \
                a key, a published asset with `is_public: true` is answered; any other id is \
                401.",
            keys: Keys::Optional,
            parameters: vec![p("AssetId"), p("IfNoneMatch")],
            body: None,
            answers: vec![("200", read_answer("The asset.", schema("AssetEnvelope")))],
            errors: &["BadRequest", "NotFound"],
        },
        Operation::UpdateAsset => Spec {
            id: "updateAsset",
            tag: "assets",
            summary: "Change an asset",
            description: "Merges the body into the asset: `title`, `description`, \
                `is_public`, `published` and (for links, external videos and git references) \
                `external_url`. Every library holding the asset shows the change on its next \
                read.",
            keys: Keys::Required,
            parameters: vec![p("AssetId")],
            body: Some(json_body("AssetPatch")),
            answers: vec![(
                "200",
                json_answer("The asset, changed.", schema("AssetEnvelope")),
            )],
            errors: JSON_BODY_RECORD_ERRORS,
        },
        Operation::DeleteAsset => Spec {
            id: "deleteAsset",
            tag: "assets",
            summary: "Delete an asset",
            description: "Deletes the asset and the files the API stored for it. When \
                libraries hold it, the answer is 409 naming them, unless `force=true`, which \
                removes it from them in the same change.",
            keys: Keys::Required,
            parameters: vec![p("AssetId"), p("Force")],
            body: None,
            answers: vec![("204", json!({"description": "Deleted."}))],
            errors: &["BadRequest", "NotFound", "Conflict"],
        },
        Operation::ReplaceAssetFile => Spec {
            id: "replaceAssetFile",
            tag: "assets",
            summary: "Replace an asset's file",
            description: "A new file for a file-based asset (pdf, document, image, video, \
                audio), of the asset's type, from a multipart/form-data body with one `file` \
                part: same id and links, new bytes, metadata and thumbnail. The old file goes \
                once the new one is in place; a failed replacement leaves the asset as it was. \
                Other asset types are 400 on `file`.",
            keys: Keys::Required,
            parameters: vec![p("AssetId")],
            body: Some(multipart_body("FileForm")),
            answers: vec![(
                "200",
                json_answer("The asset with its new file.", schema("AssetEnvelope")),
            )],
            errors: JSON_BODY_RECORD_ERRORS,
        },
        Operation::AssetUsage => Spec {
            id: "assetUsage",
            tag: "assets",
            summary: "Libraries holding an asset",
            description: "The libraries (published or not) that hold the asset, newest first.",
            keys: Keys::Required,
            parameters: vec![p("AssetId"), p("IfNoneMatch")],
            body: None,
            answers: vec![(
                "200",
                read_answer("The libraries holding the asset.", schema("AssetUsage")),
            )],
            errors: &["BadRequest", "NotFound"],
        },
        Operation::AssetDownloadUrl => Spec {
            id: "assetDownloadUrl",
            tag: "downloads",
            summary: "A signed download link for an asset",
            description: "A link that downloads the asset's file without a key until it \
                expires.",
            keys: Keys::Required,
            parameters: vec![p("AssetId"), p("ExpiresIn"), p("IfNoneMatch")],
            body: None,
            answers: vec![("200", read_answer("The link.", schema("DownloadLink")))],
            errors: &["BadRequest", "NotFound"],
        },
        Operation::DownloadAsset => Spec {
            id: "downloadAsset",
            tag: "downloads",
            summary: "Download an asset's file",
            description: "The asset's file, streamed, with its media type. One `Range` gives \
                206, an unsatisfiable one 416; a link or external video answers 302 to its \
                address. A draft is 404 but for a key with `write:assets`; an asset without a \
                file is 404. A whole download counts one `download_count`. Without a key, a \
                published public asset, or any published asset through a signed link \
                (`expires` and `signature`), is downloaded; otherwise the answer is 401.",
            keys: Keys::Optional,
            parameters: vec![
                p("AssetId"),
                p("Range"),
                p("IfRange"),
                p("Expires"),
                p("Signature"),
            ],
            body: None,
            answers: vec![
                ("200", file_answer("The whole file.", false)),
                (
                    "206",
                    file_answer("The part of the file the range asked for.", true),
                ),
                (
                    "302",
                    json!({"description": "A link or external video: its address.",
                        "headers": named_headers(&[("Location", "Location")])}),
                ),
                (
                    "416",
                    json!({"description": "The range starts past the end of the file.",
                        "headers": named_headers(&[("Content-Range", "ContentRange"),
                            ("Accept-Ranges", "AcceptRanges"), ("ETag", "ETag")])}),
                ),
            ],
            errors: &["BadRequest", "NotFound"],
        },
        Operation::ListLibraries => Spec {
            id: "listLibraries",
            tag: "libraries",
            summary: "List libraries",
            description: "A page of published libraries, most recently published first.",
            keys: Keys::Required,
            parameters: vec![p("Page"), p("Limit"), p("WorkspaceId"), p("IfNoneMatch")],
            body: None,
            answers: vec![(
                "200",
                read_answer("A page of libraries.", schema("LibraryList")),
            )],
            errors: &["BadRequest"],
        },
        Operation::GetLibrary => Spec {
            id: "getLibrary",
            tag: "libraries",
            summary: "Read a library",
            description: "A published library's page; counts one view (a `HEAD` counts none) \
                and shows the count including it. Its `ETag` covers everything but \
                `view_count`, and a 304 still counts the view.",
            keys: Keys::Required,
            parameters: vec![p("LibraryId"), p("IncludeAssets"), p("IfNoneMatch")],
            body: None,
            answers: vec![(
                "200",
                read_answer("The library's page.", schema("LibraryDetail")),
            )],
            errors: &["BadRequest", "NotFound"],
        },
        Operation::GetLibraryBySlug => Spec {
            id: "getLibraryBySlug",
            tag: "libraries",
            summary: "Read a library by its slug",
            description: "Exactly what reading the library by its id answers, for websites \
                that route by slug.",
            keys: Keys::Required,
            parameters: vec![p("Slug"), p("IncludeAssets"), p("IfNoneMatch")],
            body: None,
            answers: vec![(
                "200",
                read_answer("The library's page.", schema("LibraryDetail")),
            )],
            errors: &["BadRequest", "NotFound"],
        },
        Operation::PutLibrary => Spec {
            id: "putLibrary",
            tag: "libraries",
            summary: "Create or replace a library",
            description: "Writes a whole library under the id: created (201) or replaced \
                (200), in one atomic change. The answer is its page with assets (a write \
                counts no view), published or not.",
            keys: Keys::Required,
            parameters: vec![p("LibraryId")],
            body: Some(json_body("LibraryDocument")),
            answers: vec![
                (
                    "200",
                    json!({"description": "Replaced: the library's page.",
                        "content": json_content(schema("LibraryDetail")),
                        "links": library_links()}),
                ),
                (
                    "201",
                    created(
                        "Created: the library's page.",
                        schema("LibraryDetail"),
                        library_links(),
                    ),
                ),
            ],
            errors: JSON_BODY_RECORD_ERRORS,
        },
        Operation::DeleteLibrary => Spec {
            id: "deleteLibrary",
            tag: "libraries",
            summary: "Delete a library",
            description: "Deletes the library (its assets stay).",
            keys: Keys::Required,
            parameters: vec![p("LibraryId")],
            body: None,
            answers: vec![("204", json!({"description": "Deleted."}))],
            errors: &["BadRequest", "NotFound"],
        },
        Operation::DownloadLibrary => Spec {
            id: "downloadLibrary",
            tag: "downloads",
            summary: "Download a library as a zip",
            description: "The files of a published library as one zip, streamed as it is \
                written, in page order with a folder per section; assets without a file are \
                left out. 403 unless the library allows bulk download. Without a key, a \
                signed link (`expires` and `signature`) downloads it; otherwise the answer is \
                401.",
            keys: Keys::Optional,
            parameters: vec![p("LibraryId"), p("Expires"), p("Signature")],
            body: None,
            answers: vec![(
                "200",
                json!({"description": "The zip.",
                    "headers": named_headers(&[("Content-Disposition", "ContentDisposition")]),
                    "content": {"application/zip":
                        {"schema": {"type": "string", "format": "binary"}}}}),
            )],
            errors: &["BadRequest", "NotFound", "ForbiddenOrNoBulk"],
        },
        Operation::LibraryDownloadUrl => Spec {
            id: "libraryDownloadUrl",
            tag: "downloads",
            summary: "A signed download link for a library's zip",
            description: "A link that downloads the library's zip without a key until it \
                expires; 403 unless the library allows bulk download.",
            keys: Keys::Required,
            parameters: vec![p("LibraryId"), p("ExpiresIn"), p("IfNoneMatch")],
            body: None,
            answers: vec![("200", read_answer("The link.", schema("DownloadLink")))],
            errors: &["BadRequest", "NotFound", "ForbiddenOrNoBulk"],
        },
        Operation::OpenApi => Spec {
            id: "openApi",
            tag: "meta",
            summary: "This document",
            description: "The OpenAPI 3.1 document of the API.",
            keys: Keys::None,
            parameters: vec![p("IfNoneMatch")],
            body: None,
            answers: vec![(
                "200",
                read_answer("The document.", json!({"type": "object"})),
            )],
            errors: &[],
        },
    }
}

/// A download's 200 (`part: false`) or 206.
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
        "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
    })
}
