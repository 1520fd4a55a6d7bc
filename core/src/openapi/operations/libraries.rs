//! The library operations, described: list, read (by id and by slug), write, delete, the
//! zip and its signed link; and this document.

use serde_json::json;

use super::{JSON_BODY_RECORD_ERRORS, Keys, Spec, created, json_body, library_links, read_answer};
use crate::openapi::build::{json_content, parameter as p, raw_bytes, schema};
use crate::openapi::parts::named_headers;

/// `Operation::ListLibraries`.
pub(super) fn list_libraries() -> Spec {
    Spec {
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
    }
}

/// `Operation::GetLibrary`.
pub(super) fn get_library() -> Spec {
    Spec {
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
    }
}

/// `Operation::GetLibraryBySlug`.
pub(super) fn get_library_by_slug() -> Spec {
    Spec {
        id: "getLibraryBySlug",
        tag: "libraries",
        summary: "Read a library by its slug",
        description: "Exactly what reading the library by its id answers, for websites \
            that route by slug. Slugs are unique per workspace: `workspace_id` names the \
            workspace.",
        keys: Keys::Required,
        parameters: vec![
            p("Slug"),
            p("SlugWorkspace"),
            p("IncludeAssets"),
            p("IfNoneMatch"),
        ],
        body: None,
        answers: vec![(
            "200",
            read_answer("The library's page.", schema("LibraryDetail")),
        )],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::PutLibrary`.
pub(super) fn put_library() -> Spec {
    Spec {
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
    }
}

/// `Operation::DeleteLibrary`.
pub(super) fn delete_library() -> Spec {
    Spec {
        id: "deleteLibrary",
        tag: "libraries",
        summary: "Delete a library",
        description: "Deletes the library (its assets stay).",
        keys: Keys::Required,
        parameters: vec![p("LibraryId")],
        body: None,
        answers: vec![("204", json!({"description": "Deleted."}))],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::DownloadLibrary`.
pub(super) fn download_library() -> Spec {
    Spec {
        id: "downloadLibrary",
        tag: "downloads",
        summary: "Download a library as a zip",
        description: "The files of a published library as one zip, streamed as it is \
            written, in page order with a folder per section; assets without a file are \
            left out. 403 unless the library allows bulk download. Without a key, a \
            signed link (`expires` and `signature`) downloads it; otherwise the answer is \
            401.\n\n\
            A zip holding a paid file is 403 for a key without `read:paid` (and a link it \
            minted). Through a library pass the zip holds the assets the pass opens and is \
            one of its downloads (403 `Pass download limit reached` when none is left).",
        keys: Keys::Optional,
        parameters: vec![
            p("LibraryId"),
            p("Expires"),
            p("Grant"),
            p("PassLink"),
            p("Signature"),
        ],
        body: None,
        answers: vec![(
            "200",
            json!({"description": "The zip.",
                "headers": named_headers(&[("Content-Disposition", "ContentDisposition")]),
                "content": {"application/zip": raw_bytes("application/zip")}}),
        )],
        errors: &["BadRequest", "NotFound", "ForbiddenOrNoBulk"],
    }
}

/// `Operation::LibraryDownloadUrl`.
pub(super) fn library_download_url() -> Spec {
    Spec {
        id: "libraryDownloadUrl",
        tag: "downloads",
        summary: "A signed download link for a library's zip",
        description: "A link that downloads the library's zip without a key until it \
            expires, for a caller that may download the zip now (else 403, as the zip \
            itself); it carries what minted it, as an asset's link does.",
        keys: Keys::Required,
        parameters: vec![p("LibraryId"), p("ExpiresIn"), p("IfNoneMatch")],
        body: None,
        answers: vec![("200", read_answer("The link.", schema("DownloadLink")))],
        errors: &["BadRequest", "NotFound", "ForbiddenOrNoBulk"],
    }
}

/// `Operation::OpenApi`.
pub(super) fn open_api() -> Spec {
    Spec {
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
    }
}
