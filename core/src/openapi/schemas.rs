//! The schemas of what answers carry: assets ([`crate::render`]), libraries
//! ([`crate::tree`]), pagination ([`crate::page`]), signed links and errors
//! ([`crate::ApiError`]), and of what requests send ([`super::bodies`]).

use serde_json::{Map, Value, json};

use super::bodies;
use super::build::{
    array, boolean, count, describe, names, object, one_of_strings, or_null, schema, string,
    timestamp, uuid,
};
use crate::model::AssetType;

/// Every schema of `components.schemas`.
pub(super) fn all() -> Value {
    let mut all = Map::new();
    let mut add = |name: &str, schema: Value| {
        all.insert(name.to_owned(), schema);
    };
    add("AssetType", asset_type());
    add("Asset", asset());
    for variant in ASSET_VARIANTS {
        add(variant.name, asset_variant(variant));
    }
    add("AssetEnvelope", envelope(schema("Asset"), None));
    add(
        "AssetList",
        envelope(array(schema("Asset")), Some(schema("AssetPagination"))),
    );
    add("AssetPagination", asset_pagination());
    add("AssetUsage", envelope(array(schema("LibraryUse")), None));
    add("LibraryUse", library_use());
    add("DownloadLink", envelope(download_link(), None));
    add("LibraryList", library_list());
    add("LibraryListItem", library_list_item());
    add("LibraryPagination", library_pagination());
    add("LibraryDetail", library_detail());
    add("Section", section());
    add("SectionWithAssets", section_with(true));
    add("SectionWithAssetCount", section_with(false));
    add("LibraryAsset", library_asset());
    add("Error", error());
    add("ValidationError", validation_error());
    add("ConflictError", conflict_error());
    bodies::add_all(&mut add);
    Value::Object(all)
}

/// Asset types that share the same fields, and the fields they add to the common ones.
struct AssetVariant {
    name: &'static str,
    types: &'static [AssetType],
    description: &'static str,
}

const ASSET_VARIANTS: &[AssetVariant] = &[
    AssetVariant {
        name: "PdfOrDocumentAsset",
        types: &[AssetType::Pdf, AssetType::Document],
        description: "A pdf or document asset: the common fields and `word_count`.",
    },
    AssetVariant {
        name: "ImageAsset",
        types: &[AssetType::Image],
        description: "An image asset: the common fields and `width`, `height`.",
    },
    AssetVariant {
        name: "ExternalVideoAsset",
        types: &[AssetType::ExternalVideo],
        description: "A video hosted elsewhere: the common fields and `external_url`, \
            `video_embed`.",
    },
    AssetVariant {
        name: "LinkAsset",
        types: &[AssetType::Link],
        description: "A link: the common fields and `external_url`.",
    },
    AssetVariant {
        name: "GitAsset",
        types: &[AssetType::Git],
        description: "A git reference: the common fields and `external_url` (null when \
            cleared).",
    },
    AssetVariant {
        name: "VideoAudioOrCollectionAsset",
        types: &[AssetType::Video, AssetType::Audio, AssetType::Collection],
        description: "A video file, audio file or collection: the common fields only.",
    },
];

fn asset_type() -> Value {
    let names: Vec<&str> = AssetType::ALL.iter().map(|t| t.as_str()).collect();
    describe(
        one_of_strings(&names),
        "The kind of an asset. pdf, document, image, video and audio assets are files the \
         service keeps (and the only ones a library holds); link, external_video and git \
         carry an `external_url`; a collection is neither.",
    )
}

/// An asset: one schema per group of types, told apart by `asset_type`.
fn asset() -> Value {
    let mut mapping = Map::new();
    for variant in ASSET_VARIANTS {
        for t in variant.types {
            mapping.insert(
                t.as_str().to_owned(),
                format!("#/components/schemas/{}", variant.name).into(),
            );
        }
    }
    json!({
        "description": "An asset. Every asset has the common fields (null where unknown or \
            not applicable); the fields of its type follow them, and the fields of other types \
            are absent: `word_count` for pdf and document; `width` and `height` for image; \
            `external_url` for link, external_video and git; `video_embed` for external_video.",
        "oneOf": ASSET_VARIANTS.iter().map(|v| schema(v.name)).collect::<Vec<_>>(),
        "discriminator": {"propertyName": "asset_type", "mapping": mapping},
    })
}

/// The fields every asset has.
fn common_asset_fields(types: &[AssetType]) -> Vec<(&'static str, Value)> {
    let names: Vec<&str> = types.iter().map(|t| t.as_str()).collect();
    vec![
        ("id", uuid()),
        ("title", describe(string(), "At most 500 characters.")),
        (
            "slug",
            describe(string(), "URL-friendly name, unique among assets."),
        ),
        ("description", or_null(string())),
        ("asset_type", one_of_strings(&names)),
        (
            "file_path",
            describe(
                or_null(string()),
                "Path of the file in the file store (file-based types).",
            ),
        ),
        (
            "file_size",
            describe(or_null(count()), "Size of the file in bytes."),
        ),
        (
            "mime_type",
            describe(
                or_null(string()),
                "Media type of the file, read from its content.",
            ),
        ),
        (
            "thumbnail_path",
            describe(
                or_null(string()),
                "Path of the thumbnail in the file store (images).",
            ),
        ),
        (
            "page_count",
            describe(or_null(count()), "Pages of a paged document."),
        ),
        (
            "download_count",
            describe(count(), "Downloads of the whole file so far."),
        ),
        (
            "is_public",
            describe(
                boolean(),
                "Whether the asset, once published, is read and downloaded without a key.",
            ),
        ),
        (
            "published",
            describe(
                boolean(),
                "Whether the asset is published; a draft is seen only by keys with \
                 `write:assets`.",
            ),
        ),
        ("created_at", timestamp()),
        ("updated_at", timestamp()),
    ]
}

fn asset_variant(variant: &AssetVariant) -> Value {
    let mut fields = common_asset_fields(variant.types);
    let url = || describe(string(), "An absolute http(s) URL, in normalised form.");
    match variant.types[0] {
        AssetType::Pdf => fields.push((
            "word_count",
            describe(
                or_null(count()),
                "Words of the text, when it could be read.",
            ),
        )),
        AssetType::Image => {
            let side = || {
                describe(
                    or_null(json!({"type": "integer", "minimum": 0, "maximum": u32::MAX})),
                    "Pixels as displayed, when the image could be read.",
                )
            };
            fields.push(("width", side()));
            fields.push(("height", side()));
        }
        AssetType::ExternalVideo => {
            fields.push(("external_url", url()));
            fields.push((
                "video_embed",
                describe(
                    string(),
                    "The embeddable player address derived from `external_url`.",
                ),
            ));
        }
        AssetType::Link => fields.push(("external_url", url())),
        AssetType::Git => fields.push(("external_url", or_null(url()))),
        _ => {}
    }
    let required = names(&fields);
    describe(object(fields.clone(), &required), variant.description)
}

/// `{"success": true, "data": data}`, with `pagination` when given.
fn envelope(data: Value, pagination: Option<Value>) -> Value {
    let mut fields = vec![
        ("success", json!({"type": "boolean", "const": true})),
        ("data", data),
    ];
    if let Some(pagination) = pagination {
        fields.push(("pagination", pagination));
    }
    let required = names(&fields);
    object(fields.clone(), &required)
}

fn asset_pagination() -> Value {
    let fields = vec![
        ("page", describe(positive(), "The page returned.")),
        (
            "per_page",
            describe(positive(), "The page size used, after clamping."),
        ),
        ("total", describe(count(), "Matching assets in all.")),
        ("total_pages", describe(count(), "Pages in all.")),
    ];
    let required = names(&fields);
    object(fields.clone(), &required)
}

fn library_pagination() -> Value {
    let fields = vec![
        ("page", describe(positive(), "The page returned.")),
        (
            "limit",
            describe(positive(), "The page size used, after clamping."),
        ),
        ("total", describe(count(), "Matching libraries in all.")),
        ("total_pages", describe(count(), "Pages in all.")),
        (
            "has_next",
            describe(boolean(), "Whether a later page has items."),
        ),
        (
            "has_prev",
            describe(boolean(), "Whether an earlier page exists."),
        ),
    ];
    let required = names(&fields);
    object(fields.clone(), &required)
}

fn positive() -> Value {
    json!({"type": "integer", "minimum": 1})
}

fn library_use() -> Value {
    let fields = vec![
        ("id", uuid()),
        ("title", string()),
        ("slug", string()),
        (
            "published",
            describe(boolean(), "Whether the library is published."),
        ),
    ];
    let required = names(&fields);
    describe(
        object(fields.clone(), &required),
        "A library that holds the asset (published or not).",
    )
}

fn download_link() -> Value {
    let fields = vec![
        (
            "url",
            describe(
                string(),
                "The download path with `expires` and `signature`: it downloads without a key \
                 until `expires_at`.",
            ),
        ),
        ("expires_at", timestamp()),
    ];
    let required = names(&fields);
    object(fields.clone(), &required)
}

fn library_list() -> Value {
    let fields = vec![
        ("libraries", array(schema("LibraryListItem"))),
        ("pagination", schema("LibraryPagination")),
    ];
    let required = names(&fields);
    object(fields.clone(), &required)
}

/// The settings shown by both the list and the detail.
fn price_fields() -> Vec<(&'static str, Value)> {
    vec![
        ("is_paid", boolean()),
        (
            "price",
            describe(
                or_null(json!({"type": "number", "exclusiveMinimum": 0})),
                "The amount, for a paid library.",
            ),
        ),
        (
            "currency",
            describe(string(), "Three upper-case letters, e.g. `USD`."),
        ),
    ]
}

fn library_list_item() -> Value {
    let mut fields = vec![
        ("id", uuid()),
        ("title", string()),
        ("slug", string()),
        ("description", or_null(string())),
        ("cover_image_path", or_null(string())),
        (
            "published_at",
            describe(
                or_null(timestamp()),
                "When the library was first published.",
            ),
        ),
    ];
    fields.extend(price_fields());
    fields.extend([
        (
            "asset_count",
            describe(count(), "Published assets in the library."),
        ),
        ("view_count", count()),
        ("created_at", timestamp()),
        ("workspace_id", or_null(string())),
    ]);
    let required = names(&fields);
    describe(
        object(fields.clone(), &required),
        "A published library as listed.",
    )
}

fn library_detail() -> Value {
    let mut fields = vec![
        ("id", uuid()),
        ("title", string()),
        ("slug", string()),
        ("description", or_null(string())),
        ("cover_image_path", or_null(string())),
        (
            "cover_overlay_color",
            describe(or_null(string()), "`#RGB` or `#RRGGBB`."),
        ),
        (
            "cover_overlay_opacity",
            or_null(json!({"type": "number", "minimum": 0, "maximum": 1})),
        ),
        ("published_at", or_null(timestamp())),
    ];
    fields.extend(price_fields());
    fields.extend([
        ("show_asset_count", boolean()),
        ("allow_individual_downloads", boolean()),
        (
            "allow_bulk_download",
            describe(
                boolean(),
                "Whether the library's zip (and a signed link to it) may be had.",
            ),
        ),
        (
            "view_count",
            describe(count(), "Reads of the detail, this one included."),
        ),
        ("created_at", timestamp()),
        ("updated_at", timestamp()),
        ("workspace_id", or_null(string())),
        (
            "sections",
            describe(array(schema("Section")), "In display order."),
        ),
        (
            "unsectioned_assets",
            describe(
                array(schema("LibraryAsset")),
                "The assets in no section, in display order: always full objects.",
            ),
        ),
    ]);
    let required = names(&fields);
    describe(
        object(fields.clone(), &required),
        "A library's page: its settings, its sections in order and its assets. Unpublished \
         assets are left out and not counted.",
    )
}

fn section() -> Value {
    json!({
        "description": "A section: with `include_assets=true` (and in the answer to a write) \
            its assets, otherwise their number.",
        "oneOf": [schema("SectionWithAssets"), schema("SectionWithAssetCount")],
    })
}

fn section_with(assets: bool) -> Value {
    let mut fields = vec![
        ("id", uuid()),
        ("title", string()),
        ("description", or_null(string())),
        ("display_order", count()),
        ("collapsed_by_default", boolean()),
    ];
    if assets {
        fields.push(("assets", array(schema("LibraryAsset"))));
    } else {
        fields.push(("asset_count", count()));
    }
    let required = names(&fields);
    object(fields.clone(), &required)
}

fn library_asset() -> Value {
    let types: Vec<&str> = AssetType::ALL
        .iter()
        .filter(|t| t.is_library_type())
        .map(|t| t.as_str())
        .collect();
    let fields = vec![
        ("id", describe(uuid(), "The asset's id.")),
        (
            "title",
            describe(string(), "The library's title for the asset, else its own."),
        ),
        (
            "description",
            describe(
                or_null(string()),
                "The library's description for the asset, else its own.",
            ),
        ),
        ("asset_type", one_of_strings(&types)),
        (
            "thumbnail_url",
            describe(
                or_null(string()),
                "The thumbnail's path joined to the server's files base URL (`/files/` by \
                 default).",
            ),
        ),
        ("display_order", count()),
    ];
    let required = names(&fields);
    describe(
        object(fields.clone(), &required),
        "An asset as a library shows it.",
    )
}

/// Every `error` text of the error table.
pub(super) const ERROR_TEXTS: &[&str] = &[
    "Validation error",
    "Unauthorized",
    "Insufficient permissions",
    "Bulk download disabled",
    "Not found",
    "Method not allowed",
    "Conflict",
    "Request timeout",
    "Payload too large",
    "Unsupported media type",
    "Too many requests",
    "Internal server error",
];

fn error() -> Value {
    let fields = vec![
        (
            "error",
            describe(one_of_strings(ERROR_TEXTS), "The kind of error."),
        ),
        (
            "message",
            describe(string(), "What went wrong, for people."),
        ),
    ];
    describe(object(fields, &["error", "message"]), "An error answer.")
}

fn validation_error() -> Value {
    let fields = vec![
        (
            "error",
            json!({"type": "string", "const": "Validation error"}),
        ),
        ("message", string()),
        (
            "field",
            describe(
                string(),
                "The offending field or path: a query parameter, `body`, a body field \
                 (`title`, `sections[0].assets[2].asset_id`), a part (`file`) or a path id \
                 (`asset_id`, `library_id`).",
            ),
        ),
    ];
    describe(
        object(fields, &["error", "message", "field"]),
        "A 400 answer: the request is not valid, and `field` says where.",
    )
}

fn conflict_error() -> Value {
    let holder = object(
        vec![("id", uuid()), ("title", string()), ("slug", string())],
        &["id", "title", "slug"],
    );
    let fields = vec![
        ("error", json!({"type": "string", "const": "Conflict"})),
        ("message", string()),
        (
            "libraries",
            describe(array(holder), "The libraries that hold the asset."),
        ),
    ];
    describe(
        object(fields, &["error", "message", "libraries"]),
        "A 409 answer: libraries hold the asset.",
    )
}
