//! The asset operations, described: list, read, create, upload, change, replace, delete,
//! usage, and the asset's download and signed link.

use serde_json::json;

use super::{
    JSON_BODY_ERRORS, JSON_BODY_RECORD_ERRORS, Keys, Spec, asset_links, created, file_answer,
    image_answer, json_answer, json_body, multipart_body, read_answer,
};
use crate::openapi::build::{parameter as p, schema};
use crate::openapi::parts::named_headers;

/// `Operation::ListAssets`.
pub(super) fn list_assets() -> Spec {
    Spec {
        id: "listAssets",
        tag: "assets",
        summary: "List assets",
        description: "A page of assets, newest first by default. Only published assets, \
            unless `status` asks for drafts (which needs `write:assets`). Filters combine: \
            `tag` (repeatable: every one), `any_tag` (at least one), tags compared ignoring \
            case; `checksum` finds the assets whose file has those bytes; `workspace_id` \
            keeps one workspace's.",
        keys: Keys::Required,
        parameters: vec![
            p("Page"),
            p("PerPage"),
            p("AssetTypeFilter"),
            p("Search"),
            p("TagFilter"),
            p("AnyTagFilter"),
            p("ChecksumFilter"),
            p("AssetWorkspaceFilter"),
            p("Sort"),
            p("Order"),
            p("Status"),
            p("IfNoneMatch"),
        ],
        body: None,
        answers: vec![("200", read_answer("A page of assets.", schema("AssetList")))],
        errors: &["BadRequest"],
    }
}

/// `Operation::CreateAsset`.
pub(super) fn create_asset() -> Spec {
    Spec {
        id: "createAsset",
        tag: "assets",
        summary: "Create an asset",
        description: "Creates an asset from JSON: a link, external video, git reference or \
            collection, or a file-based asset whose file is already in the server's file \
            store (`file_path`). `\"published\": false` makes a draft; `tags` tags it.",
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
    }
}

/// `Operation::UploadAsset`.
pub(super) fn upload_asset() -> Spec {
    Spec {
        id: "uploadAsset",
        tag: "assets",
        summary: "Upload a file as a new asset",
        description: "Creates a file-based asset from a multipart/form-data upload. The \
            file is streamed into the file store and read for its type, size, pages, \
            words, pixel size and thumbnail; a failed upload leaves no file and no asset. \
            A body declared or found larger than the limit is 413. The file's SHA-256 is \
            computed as it streams in (`checksum_sha256`).\n\n\
            `on_duplicate` says what happens when an asset's file has the same bytes: \
            `allow` (the default) stores a new asset; `reject` answers 409 naming that asset \
            in `asset_id`; `reuse` answers 200 with that asset. With `reject` and `reuse` \
            nothing new is stored. The check runs once the file has arrived, so two uploads \
            of the same bytes at the same time may both be stored.",
        keys: Keys::Required,
        parameters: vec![p("OnDuplicate")],
        body: Some(multipart_body("UploadForm")),
        answers: vec![
            (
                "201",
                created(
                    "The asset, created.",
                    schema("AssetEnvelope"),
                    asset_links(),
                ),
            ),
            ("200", {
                let mut answer = json_answer(
                    "`on_duplicate=reuse`: the asset whose file has the same bytes (the \
                     oldest, published or not), as it is; nothing was stored.",
                    schema("AssetEnvelope"),
                );
                answer["links"] = asset_links();
                answer
            }),
        ],
        errors: &[
            "BadRequest",
            "Duplicate",
            "RequestTimeout",
            "PayloadTooLarge",
            "UnsupportedMediaType",
        ],
    }
}

/// `Operation::GetAsset`.
pub(super) fn get_asset() -> Spec {
    Spec {
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
    }
}

/// `Operation::UpdateAsset`.
pub(super) fn update_asset() -> Spec {
    Spec {
        id: "updateAsset",
        tag: "assets",
        summary: "Change an asset",
        description: "Merges the body into the asset: `title`, `description`, \
            `is_public`, `published`, `tags` (the new set, replacing the old; `null` or `[]` \
            clears it) and (for links, external videos and git references) `external_url`. \
            Naming a field that cannot be set (`slug`, `checksum_sha256`, ...) is 400 on it. \
            Every library holding the asset shows the change on its next read. \
            `workspace_id` moves the asset to that workspace (`null`: to none; a global key \
            only: a workspace key may name only its own, else 403). It keeps its slug when \
            the slug is free there, else takes the first free `-2`, `-3`, ... form; while a \
            library that may not hold it there holds it, the answer is 409 naming those \
            libraries.",
        keys: Keys::Required,
        parameters: vec![p("AssetId")],
        body: Some(json_body("AssetPatch")),
        answers: vec![(
            "200",
            json_answer("The asset, changed.", schema("AssetEnvelope")),
        )],
        errors: &[
            "BadRequest",
            "NotFound",
            "Conflict",
            "RequestTimeout",
            "PayloadTooLarge",
            "UnsupportedMediaType",
        ],
    }
}

/// `Operation::DeleteAsset`.
pub(super) fn delete_asset() -> Spec {
    Spec {
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
    }
}

/// `Operation::ReplaceAssetFile`.
pub(super) fn replace_asset_file() -> Spec {
    Spec {
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
    }
}

/// `Operation::RemakeThumbnail`.
pub(super) fn remake_thumbnail() -> Spec {
    Spec {
        id: "remakeThumbnail",
        tag: "assets",
        summary: "Make an asset's thumbnail anew",
        description: "Reads the asset's file again and stores what it gives: the thumbnail \
            and `thumbnail_placeholder` made anew (a PDF's first page, an image, an audio \
            file's cover, a document's embedded picture, a video's poster frame when the \
            server has ffmpeg), and the other file fields (a video's or an audio file's \
            playing time, say). The old thumbnail goes once the new one is in place; \
            `updated_at` moves when anything changed. A file that gives no thumbnail leaves \
            the asset without one. Assets without a file are 400 on `asset_id`; a file that is \
            gone or unreadable is 400 on `file_path`.",
        keys: Keys::Required,
        parameters: vec![p("AssetId")],
        body: None,
        answers: vec![(
            "200",
            json_answer("The asset with its new thumbnail.", schema("AssetEnvelope")),
        )],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::AssetUsage`.
pub(super) fn asset_usage() -> Spec {
    Spec {
        id: "assetUsage",
        tag: "assets",
        summary: "Libraries holding an asset",
        description: "The libraries that hold the asset, newest first. Unpublished libraries are \
                      listed only to a key with `write:libraries`.",
        keys: Keys::Required,
        parameters: vec![p("AssetId"), p("IfNoneMatch")],
        body: None,
        answers: vec![(
            "200",
            read_answer("The libraries holding the asset.", schema("AssetUsage")),
        )],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::AssetDownloadUrl`.
pub(super) fn asset_download_url() -> Spec {
    Spec {
        id: "assetDownloadUrl",
        tag: "downloads",
        summary: "A signed download link for an asset",
        description: "A link that downloads the asset's file without a key until it \
            expires, for a caller that may download the file now: a paid file (one only a \
            paid library offers) needs `read:paid` or a library pass for a library holding \
            it. The link carries what minted it (`grant=paid` for a key with `read:paid`, \
            `pass=<id>` for a pass) and is judged by it again when used: a link of a revoked, \
            expired or used-up pass stops working.",
        keys: Keys::Required,
        parameters: vec![p("AssetId"), p("ExpiresIn"), p("IfNoneMatch")],
        body: None,
        answers: vec![("200", read_answer("The link.", schema("DownloadLink")))],
        errors: &["BadRequest", "NotFound", "ForbiddenFile"],
    }
}

/// The asset id and a variant's parameters, then `more`.
fn variant_parameters(more: &[&str]) -> Vec<serde_json::Value> {
    [
        "AssetId", "W", "H", "Fit", "Format", "Quality", "Dpr", "Preset",
    ]
    .iter()
    .chain(more)
    .map(|name| p(name))
    .collect()
}

/// `Operation::AssetImage`.
pub(super) fn asset_image() -> Spec {
    Spec {
        id: "assetImage",
        tag: "downloads",
        summary: "An image asset, or a PDF's page 1, in a size and format",
        description: "The variant the parameters (or a `preset`, alone) ask for, of an image \
            asset (PNG, JPEG, GIF: its first frame, WebP; EXIF orientation applied) or of a \
            pdf asset's page 1. It never scales the source up: a box larger than the source \
            shrinks, keeping its shape. Other assets: 404 `Asset has no image`; a source that \
            cannot be converted (damaged, or past the server's limits): 400 saying why. Bad \
            parameters: 400 naming the parameter.\n\n\
            Made once and kept for every replica; its strong `ETag` is made of the source \
            file's bytes (its checksum) and the parameters, so it stays valid when the data \
            moves (304 for `If-None-Match`). While the server makes as many \
            variants as it may and its queue is full, 503 with `Retry-After`.\n\n\
            Without a key: a preset of a published public asset, or any variant through a \
            signed link from `image-url`; otherwise 401. A variant larger than 640 pixels on \
            its long side of a paid file needs what downloading the file needs (`read:paid` \
            or a library pass), else 403.",
        keys: Keys::Optional,
        parameters: variant_parameters(&[
            "Accept",
            "IfNoneMatch",
            "Expires",
            "Grant",
            "PassLink",
            "Signature",
        ]),
        body: None,
        answers: vec![("200", image_answer("The variant."))],
        errors: &[
            "BadRequest",
            "NotFound",
            "ForbiddenFile",
            "ServiceUnavailable",
        ],
    }
}

/// `Operation::AssetImageUrl`.
pub(super) fn asset_image_url() -> Spec {
    Spec {
        id: "assetImageUrl",
        tag: "downloads",
        summary: "A signed link to an image variant",
        description: "A link to the variant the same parameters ask for from `image`, that \
            needs no key until it expires, for a caller that may see that variant now. The \
            link carries the variant's parameters in one canonical spelling, covered by the \
            signature with what minted it.",
        keys: Keys::Required,
        parameters: variant_parameters(&["ExpiresIn", "IfNoneMatch"]),
        body: None,
        answers: vec![("200", read_answer("The link.", schema("DownloadLink")))],
        errors: &["BadRequest", "NotFound", "ForbiddenFile"],
    }
}

/// `Operation::DownloadAsset`.
pub(super) fn download_asset() -> Spec {
    Spec {
        id: "downloadAsset",
        tag: "downloads",
        summary: "Download an asset's file",
        description: "The asset's file, streamed, with its media type. One `Range` gives \
            206, an unsatisfiable one 416; a link or external video answers 302 to its \
            address. A draft is 404 but for a key with `write:assets`; an asset without a \
            file is 404. A whole download counts one `download_count`. Without a key, a \
            published public asset, or any published asset through a signed link \
            (`expires` and `signature`), is downloaded; otherwise the answer is 401.\n\n\
            A paid file (the asset is not public, a published paid library holds it and no \
            published free one does) needs `read:paid`, a library pass for a library holding \
            it, or a link minted with either; else 403. Through a pass, each download (a \
            200, or a range from byte 0) spends one of its downloads: 403 `Pass download \
            limit reached` when none is left. A range that does not start at byte 0 spends \
            one too, unless it continues a download the same pass began of the same file \
            version (`ETag`) within 24 hours and the bytes served under it stay within the \
            file's size (plus what a broken connection had in flight: half the file, at most \
            8 MiB).\n\n\
            The `ETag` is made of the file's bytes (`\"sha256-` and the asset's \
            `checksum_sha256` in hex), so a copy a client holds stays valid when the data moves \
            to another file store; an asset whose checksum is not read yet has the file \
            store's tag. `If-None-Match` naming it answers 304 without a body, counts no \
            download and spends nothing of a pass.",
        keys: Keys::Optional,
        parameters: vec![
            p("AssetId"),
            p("IfNoneMatch"),
            p("Range"),
            p("IfRange"),
            p("Expires"),
            p("Grant"),
            p("PassLink"),
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
        errors: &[
            "BadRequest",
            "NotFound",
            "ForbiddenFile",
            "ServiceUnavailable",
        ],
    }
}
