//! The upload operations, described: the tus 1.0 protocol at `/api/v1/uploads` (create,
//! read, append, terminate) and direct uploads to S3 (a presigned `PUT`, then complete).

use serde_json::{Value, json};

use super::{Keys, Spec, asset_links, created, json_answer, json_body};
use crate::openapi::build::{parameter as p, raw_bytes, schema};
use crate::openapi::parts::named_headers;

/// An answer without a body, with `headers` (name and component pairs).
fn headers_only(description: &str, headers: &[(&str, &str)]) -> Value {
    json!({"description": description, "headers": named_headers(headers)})
}

/// The headers that say where an upload stands.
const STATE: &[(&str, &str)] = &[
    ("Tus-Resumable", "TusResumable"),
    ("Upload-Offset", "UploadOffset"),
    ("Upload-Length", "UploadLength"),
    ("Upload-Expires", "UploadExpires"),
    ("Asset-Location", "AssetLocation"),
];

/// `Operation::CreateUpload`.
pub(super) fn create_upload() -> Spec {
    Spec {
        id: "createUpload",
        tag: "uploads",
        summary: "Start a resumable upload (tus)",
        description: "Creates a tus 1.0 upload of `Upload-Length` bytes (`creation`), for the \
            asset `Upload-Metadata` describes: comma-separated pairs of a key and its value in \
            base64, of `filename`, `title` (default: the file's name), `description`, \
            `asset_type` (default: from the content), `is_public` and `published` (`true` or \
            `false`), `tags` (separated by commas) and `on_duplicate` (`allow`, `reject` or \
            `reuse`, as `uploadAsset` takes it), checked now as an upload form's fields are \
            (400 naming the key). The answer's `Location` is the upload's URL. A body (`application/offset+octet-stream`, \
            `creation-with-upload`) is its first bytes. `OPTIONS` on this path answers \
            `Tus-Version`, `Tus-Extension` (`creation,creation-with-upload,termination,\
            expiration,checksum`), `Tus-Max-Size` and `Tus-Checksum-Algorithm` (`sha256`). An \
            upload not finished within the server's expiry (24 h by default) is removed.",
        keys: Keys::Required,
        parameters: vec![
            p("TusResumable"),
            p("UploadLength"),
            p("UploadMetadata"),
            p("UploadChecksum"),
        ],
        body: Some(json!({"required": false, "content": {
            "application/offset+octet-stream": raw_bytes("application/offset+octet-stream"),
        }})),
        answers: vec![(
            "201",
            headers_only(
                "Created: `Location` is the upload's URL; with a body, `Upload-Offset` says \
                 how much of it was kept (and `Asset-Location` names the asset when it was \
                 the whole file).",
                &[
                    ("Location", "Location"),
                    ("Tus-Resumable", "TusResumable"),
                    ("Upload-Offset", "UploadOffset"),
                    ("Upload-Expires", "UploadExpires"),
                    ("Asset-Location", "AssetLocation"),
                ],
            ),
        )],
        errors: &[
            "BadRequest",
            "Duplicate",
            "RequestTimeout",
            "PreconditionFailed",
            "PayloadTooLarge",
            "UnsupportedMediaType",
            "ChecksumMismatch",
        ],
    }
}

/// `Operation::GetUpload`.
pub(super) fn get_upload() -> Spec {
    Spec {
        id: "getUpload",
        tag: "uploads",
        summary: "Where a resumable upload stands",
        description: "`HEAD` (the tus way: `Tus-Resumable` required) answers with headers \
            only; `GET` also with the upload as JSON. `Upload-Offset` is the bytes kept, \
            where the next `PATCH` starts. A finished upload names its asset \
            (`Asset-Location`, `asset_id`) until it expires; one that expired unfinished is \
            410 until it is removed, then 404.",
        keys: Keys::Required,
        parameters: vec![p("UploadId")],
        body: None,
        answers: vec![("200", {
            let mut answer = json_answer("The upload.", schema("UploadEnvelope"));
            answer["headers"] = named_headers(STATE);
            answer["headers"]["Upload-Metadata"] = json!({"required": false,
                "schema": {"type": "string"},
                "description": "The `Upload-Metadata` the upload was made with, exactly as \
                    the client sent it (absent when it sent none)."});
            answer
        })],
        errors: &["BadRequest", "NotFound", "Duplicate", "Gone"],
    }
}

/// `Operation::PatchUpload`.
pub(super) fn patch_upload() -> Spec {
    Spec {
        id: "patchUpload",
        tag: "uploads",
        summary: "Append to a resumable upload",
        description: "Appends the body (`application/offset+octet-stream`) at \
            `Upload-Offset`, which must be the upload's offset (else 409 with the right one \
            in `Upload-Offset`). A body that breaks off keeps the bytes that arrived; with \
            `Upload-Checksum: sha256 <base64>`, none of it is kept unless it arrived whole \
            and matches (460). More bytes than the upload lacks are 413. While another \
            request writes the same upload, 423 with `Retry-After`. The last byte makes the \
            asset exactly as `POST /api/v1/assets/upload` does (its metadata, thumbnail and \
            `asset.created` event), once: the answer names it in `Asset-Location`. Content \
            that makes no asset (a type that cannot be inferred, or is not the one declared) \
            is 400, and the upload is removed. With `on_duplicate` in its metadata, the whole \
            file's SHA-256 is compared then: `reject` answers 409 naming the asset that has \
            those bytes (`asset_id`) and removes the upload; `reuse` answers as usual, with \
            that asset in `Asset-Location`, and keeps no file of its own.",
        keys: Keys::Required,
        parameters: vec![
            p("UploadId"),
            p("TusResumable"),
            p("UploadOffset"),
            p("UploadChecksum"),
        ],
        body: Some(json!({"required": true, "content": {
            "application/offset+octet-stream": raw_bytes("application/offset+octet-stream"),
        }})),
        answers: vec![(
            "204",
            headers_only("Appended: `Upload-Offset` is the new offset.", STATE),
        )],
        errors: &[
            "BadRequest",
            "NotFound",
            "UploadConflict",
            "RequestTimeout",
            "Gone",
            "PreconditionFailed",
            "PayloadTooLarge",
            "UnsupportedMediaType",
            "Locked",
            "ChecksumMismatch",
        ],
    }
}

/// `Operation::DeleteUpload`.
pub(super) fn delete_upload() -> Spec {
    Spec {
        id: "deleteUpload",
        tag: "uploads",
        summary: "Terminate a resumable upload",
        description: "Removes the upload and the bytes it kept (`termination`). The asset a \
            finished upload made stays.",
        keys: Keys::Required,
        parameters: vec![p("UploadId"), p("TusResumable")],
        body: None,
        answers: vec![(
            "204",
            headers_only("Terminated.", &[("Tus-Resumable", "TusResumable")]),
        )],
        errors: &["BadRequest", "NotFound", "PreconditionFailed", "Locked"],
    }
}

/// `Operation::CreateDirectUpload`.
pub(super) fn create_direct_upload() -> Spec {
    Spec {
        id: "createDirectUpload",
        tag: "uploads",
        summary: "Start a direct upload to the bucket",
        description: "For a server whose files are in an S3 bucket (else 404): a presigned \
            `PUT` URL for the file the body describes, valid as long as the upload (at most 7 \
            days). The client puts the file there itself (no byte passes through the API; \
            the bucket's CORS rules apply to a browser), then calls `complete_url`. At most \
            5 GiB (one `PUT`). `tags` and `on_duplicate` are those of the asset to make, \
            checked now (400 naming them).",
        keys: Keys::Required,
        parameters: vec![],
        body: Some(json_body("DirectUploadDocument")),
        answers: vec![(
            "201",
            created(
                "The upload: where to put the file, and where to complete it.",
                schema("DirectUploadEnvelope"),
                json!({
                    "CompleteDirectUpload": {"operationId": "completeDirectUpload",
                        "parameters": {"upload_id": "$response.body#/data/upload_id"}},
                }),
            ),
        )],
        errors: &[
            "BadRequest",
            "RequestTimeout",
            "PayloadTooLarge",
            "UnsupportedMediaType",
            "NotFound",
        ],
    }
}

/// `Operation::CompleteDirectUpload`.
pub(super) fn complete_direct_upload() -> Spec {
    Spec {
        id: "completeDirectUpload",
        tag: "uploads",
        summary: "Complete a direct upload",
        description: "Checks the file put at the upload's URL before any asset exists: its \
            size (the one declared; over the limit 413), and its SHA-256 when the upload \
            named one (else 460); either way a wrong file is removed, to be put again. No \
            file yet is 409. Then makes the asset exactly as an upload does: 201 with it, or \
            200 with the same asset when it was made already. With the upload's \
            `on_duplicate`, `reject` is 409 naming the asset that has the same bytes \
            (`asset_id`; the upload and its file are removed), and `reuse` answers with that \
            asset instead of a new one.",
        keys: Keys::Required,
        parameters: vec![p("UploadId")],
        body: None,
        answers: vec![
            (
                "201",
                created(
                    "The asset, created.",
                    schema("AssetEnvelope"),
                    asset_links(),
                ),
            ),
            (
                "200",
                json_answer("The asset, made before.", schema("AssetEnvelope")),
            ),
        ],
        errors: &[
            "BadRequest",
            "NotFound",
            "UploadConflict",
            "Gone",
            "PayloadTooLarge",
            "Locked",
            "ChecksumMismatch",
        ],
    }
}
