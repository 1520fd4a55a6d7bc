//! The schemas of what answers carry: assets ([`crate::render`]), libraries
//! ([`crate::tree`]), pagination ([`crate::page`]), signed links, uploads ([`crate::tus`]) and
//! errors ([`crate::ApiError`]), and of what requests send ([`super::bodies`]).
//!
//! Each wire type's fields are derived from the type ([`super::derived`]). What a derive
//! cannot say is written here: an asset's schema per group of types (which fields follow the
//! common ones, and its `asset_type`), the envelope, a page's sections and unsectioned
//! assets, and the error bodies. The feed's and webhooks' schemas are in [`super::feed`], the
//! bulk change's and the tag list's in [`super::organize`]. Tests render real values of each type and compare their keys
//! with these schemas (`super::wire_tests`).

use serde_json::{Map, Value, json};

use super::bodies;
use super::build::{
    array, describe, names, narrowed, object, one_of_strings, only, schema, string, uuid,
};
use super::derived;
use crate::change::LibraryUse;
use crate::model::AssetType;
use crate::page::{AssetPagination, LibraryPagination};
use crate::render::{
    AssetFields, LibraryList, LibraryListItem, PassFields, SignedLink, Timestamp, TypeFields,
};
use crate::tree::{LibraryAsset, LibraryHead, SectionContent, SectionHead};
use crate::tus::wire::{DirectWire, UploadWire};

/// Every schema of `components.schemas`.
/// Every schema of the document, in the order they are written: the feed's, the organizing
/// operations' and their bodies' come from `feed`, `organize` and `organize_bodies` (their
/// modules use this one's builders, so this one does not name them).
pub(super) fn all(
    [feed, organize, keys, search]: [super::build::Registrar; 4],
    organize_bodies: super::build::Registrar,
) -> Value {
    let mut all = Map::new();
    let mut add = |name: &str, schema: Value| {
        all.insert(name.to_owned(), schema);
    };
    add("AssetType", derived::of::<AssetType>());
    add("Timestamp", derived::of::<Timestamp>());
    add("Asset", asset());
    for (index, variant) in ASSET_VARIANTS.iter().enumerate() {
        add(variant.name, asset_variant(variant, index));
    }
    add("AssetEnvelope", envelope(schema("Asset"), None));
    add(
        "AssetList",
        envelope(array(schema("Asset")), Some(schema("AssetPagination"))),
    );
    add("AssetPagination", derived::of::<AssetPagination>());
    add("AssetUsage", envelope(array(schema("LibraryUse")), None));
    add("LibraryUse", derived::of::<LibraryUse>());
    add("DownloadLink", envelope(derived::of::<SignedLink>(), None));
    add("LibraryList", derived::of::<LibraryList>());
    add("LibraryListItem", derived::of::<LibraryListItem>());
    add("LibraryPagination", derived::of::<LibraryPagination>());
    add("LibraryDetail", library_detail());
    add("Section", section());
    add("SectionWithAssets", section_with(0));
    add("SectionWithAssetCount", section_with(1));
    add("LibraryAsset", library_asset());
    add("LibraryPass", pass(false));
    add("NewLibraryPass", pass(true));
    add("PassEnvelope", envelope(schema("LibraryPass"), None));
    add("NewPassEnvelope", envelope(schema("NewLibraryPass"), None));
    add(
        "PassList",
        envelope(
            array(schema("LibraryPass")),
            Some(schema("AssetPagination")),
        ),
    );
    feed(&mut add);
    add("Upload", upload());
    add("UploadEnvelope", envelope(schema("Upload"), None));
    add("DirectUpload", direct_upload());
    add(
        "DirectUploadEnvelope",
        envelope(schema("DirectUpload"), None),
    );
    add("ErrorKind", error_kind());
    add("Error", error());
    add("ValidationError", validation_error());
    add("ConflictError", conflict_error());
    add("DuplicateError", duplicate_error());
    add("UploadConflictError", upload_conflict_error());
    for (status, name, description) in super::parts::ERROR_SCHEMAS {
        add(name, status_error(*status, description));
    }
    organize(&mut add);
    keys(&mut add);
    search(&mut add);
    super::parts::add_schemas(&mut add);
    bodies::add_all(&mut add, organize_bodies);
    Value::Object(all)
}

/// An object of `properties` (in order), all required, with `description` when given.
pub(super) fn whole(properties: Vec<(String, Value)>, description: Option<&str>) -> Value {
    let properties: Vec<(&str, Value)> = properties
        .iter()
        .map(|(name, schema)| (name.as_str(), schema.clone()))
        .collect();
    let required = names(&properties);
    let schema = object(properties.clone(), &required);
    match description {
        Some(description) => describe(schema, description),
        None => schema,
    }
}

/// `properties` with the schema of `name` replaced by `schema`.
pub(super) fn replaced(
    mut properties: Vec<(String, Value)>,
    name: &str,
    schema: Value,
) -> Vec<(String, Value)> {
    for (property, old) in &mut properties {
        if property == name {
            *old = schema.clone();
        }
    }
    properties
}

/// `properties` with the rules of `tags` (each tag as [`crate::validate::tags`] keeps it),
/// `checksum_sha256` (lower-case hex) and `workspace_id` stated, their descriptions kept.
fn organized(mut properties: Vec<(String, Value)>) -> Vec<(String, Value)> {
    for (name, schema) in &mut properties {
        let description = schema.get("description").cloned();
        let mut stated = match name.as_str() {
            "tags" => json!({
                "type": "array",
                "maxItems": crate::validate::MAX_TAGS,
                "items": {"type": "string", "minLength": 1,
                    "maxLength": crate::validate::MAX_TAG_CHARS},
            }),
            "checksum_sha256" => json!({"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"}),
            "workspace_id" => {
                json!({"type": ["string", "null"], "pattern": bodies::WORKSPACE_PATTERN})
            }
            _ => continue,
        };
        if let (Some(description), Value::Object(map)) = (description, &mut stated) {
            map.insert("description".into(), description);
        }
        *schema = stated;
    }
    properties
}

/// Asset types that share the same fields: one for each variant of [`TypeFields`], in its
/// order.
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
        name: "AudioAsset",
        types: &[AssetType::Audio],
        description: "An audio file: the common fields and `duration_seconds`, `sample_rate`, \
            `channels`, `bitrate`.",
    },
    AssetVariant {
        name: "VideoAsset",
        types: &[AssetType::Video],
        description: "A video file: the common fields and `duration_seconds`, `width`, \
            `height`, `video_codec`.",
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
        name: "CollectionAsset",
        types: &[AssetType::Collection],
        description: "A collection: the common fields only.",
    },
];

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
            are absent: `word_count` for pdf and document; `width` and `height` for image and \
            video; `duration_seconds` for audio and video; `sample_rate`, `channels` and \
            `bitrate` for audio; `video_codec` for video; `external_url` for link, \
            external_video and git; `video_embed` for external_video.",
        "oneOf": ASSET_VARIANTS.iter().map(|v| schema(v.name)).collect::<Vec<_>>(),
        "discriminator": {"propertyName": "asset_type", "mapping": mapping},
    })
}

/// The asset schema of the `index`th variant of [`TypeFields`]: the common fields (with
/// `asset_type` narrowed to the variant's types), then the variant's.
fn asset_variant(variant: &AssetVariant, index: usize) -> Value {
    let names: Vec<&str> = variant.types.iter().map(|t| t.as_str()).collect();
    let mut fields = organized(replaced(
        derived::properties(&derived::of::<AssetFields>()),
        "asset_type",
        narrowed("AssetType", &names),
    ));
    fields.extend(derived::variant::<TypeFields>(index));
    whole(fields, Some(variant.description))
}

/// A library pass: its id, its token when just made (`with_token`), and the fields of
/// [`PassFields`].
fn pass(with_token: bool) -> Value {
    let mut fields = vec![("id".to_owned(), uuid())];
    if with_token {
        fields.push((
            "token".to_owned(),
            describe(
                json!({"type": "string", "pattern": "^alp_[A-Za-z0-9_-]{43}$"}),
                "The pass: shown only in this answer (only its SHA-256 is kept). A buyer \
                 sends it as `Authorization: Pass <token>`.",
            ),
        ));
    }
    fields.extend(derived::properties(&derived::of::<PassFields>()));
    let description = match with_token {
        true => "A library pass just made, with its token.",
        false => "A library pass (never its token).",
    };
    whole(fields, Some(description))
}

/// `{"success": true, "data": data}`, with `pagination` when given.
pub(super) fn envelope(data: Value, pagination: Option<Value>) -> Value {
    let mut fields = vec![("success", only(true)), ("data", data)];
    if let Some(pagination) = pagination {
        fields.push(("pagination", pagination));
    }
    let required = names(&fields);
    object(fields.clone(), &required)
}

fn library_detail() -> Value {
    let mut fields = derived::properties(&derived::of::<LibraryHead>());
    fields.extend([
        (
            "sections".to_owned(),
            describe(array(schema("Section")), "In display order."),
        ),
        (
            "unsectioned_assets".to_owned(),
            describe(
                array(schema("LibraryAsset")),
                "The assets in no section, in display order: always full objects.",
            ),
        ),
    ]);
    whole(
        fields,
        Some(
            "A library's page: its settings, its sections in order and its assets. Unpublished \
             assets are left out and not counted.",
        ),
    )
}

fn section() -> Value {
    json!({
        "description": "A section: with `include_assets=true` (and in the answer to a write) \
            its assets, otherwise their number.",
        "oneOf": [schema("SectionWithAssets"), schema("SectionWithAssetCount")],
    })
}

/// The section schema of the `index`th variant of [`SectionContent`]: the section's fields,
/// then the variant's.
fn section_with(index: usize) -> Value {
    let mut fields = derived::properties(&derived::of::<SectionHead>());
    fields.extend(derived::variant::<SectionContent>(index));
    whole(fields, None)
}

/// A library asset, its `asset_type` narrowed to the types a library holds.
fn library_asset() -> Value {
    let derived = derived::of::<LibraryAsset>();
    let types: Vec<&str> = AssetType::ALL
        .iter()
        .filter(|t| t.is_library_type())
        .map(|t| t.as_str())
        .collect();
    let fields = organized(replaced(
        derived::properties(&derived),
        "asset_type",
        narrowed("AssetType", &types),
    ));
    whole(fields, derived["description"].as_str())
}

/// Every `error` text of the error table.
pub(super) const ERROR_TEXTS: &[&str] = &[
    "Validation error",
    "Unauthorized",
    "Insufficient permissions",
    "Bulk download disabled",
    "Pass download limit reached",
    "Not found",
    "Method not allowed",
    "Conflict",
    "Gone",
    "Precondition failed",
    "Locked",
    "Checksum mismatch",
    "Not applied",
    "Request timeout",
    "Payload too large",
    "Unsupported media type",
    "Too many requests",
    "Service unavailable",
    "Internal server error",
];

/// Every kind of error: the `error` texts. A schema of its own, so that generated clients name
/// it apart from the schema `Error` (openapi-generator's Rust client names an enum inside
/// `Error` `Error` too, and does not compile).
fn error_kind() -> Value {
    describe(
        one_of_strings(ERROR_TEXTS),
        "The kind of an error: its `error` text. Each error answer's schema names the kinds its \
         status has.",
    )
}

/// An error body's `error`: one of `texts`, kinds of [`error_kind`].
pub(super) fn kind(texts: &[&str]) -> Value {
    describe(narrowed("ErrorKind", texts), "The kind of error.")
}

/// `error` and `message`.
fn error_fields(kind: Value) -> Vec<(&'static str, Value)> {
    vec![
        ("error", kind),
        (
            "message",
            describe(string(), "What went wrong, for people."),
        ),
    ]
}

fn error() -> Value {
    describe(
        object(
            error_fields(describe(schema("ErrorKind"), "The kind of error.")),
            &["error", "message"],
        ),
        "An error answer.",
    )
}

/// The body of the errors of `status` (one of [`super::parts::ERROR_SCHEMAS`]): `error` is one
/// of the texts of the shared answers of that status.
fn status_error(status: u16, description: &str) -> Value {
    let texts: Vec<&str> = ERROR_TEXTS
        .iter()
        .copied()
        .filter(|text| {
            super::parts::ERRORS
                .iter()
                .any(|(_, s, texts, _)| *s == status && texts.contains(text))
        })
        .collect();
    describe(
        object(error_fields(kind(&texts)), &["error", "message"]),
        description,
    )
}

/// A 409 of an upload: it is not where the request says, or (`asset_id`) its bytes are an
/// asset's already and `on_duplicate` is `reject`.
fn upload_conflict_error() -> Value {
    let mut fields = error_fields(kind(&["Conflict"]));
    fields.push((
        "asset_id",
        describe(
            uuid(),
            "With `on_duplicate=reject`: the asset whose file has the same bytes (the same \
             SHA-256); the upload was removed and nothing was stored. Absent when the upload \
             is not where the request says (`Upload-Offset` names where it is) or a direct \
             upload's file is not there, or not of its size.",
        ),
    ));
    describe(
        object(fields, &["error", "message"]),
        "A 409 answer to an upload: it is not where the request says, or its bytes are an \
         asset's already (`asset_id`).",
    )
}

fn validation_error() -> Value {
    let fields = vec![
        ("error", kind(&["Validation error"])),
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
        ("error", kind(&["Conflict"])),
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

fn duplicate_error() -> Value {
    let fields = vec![
        ("error", kind(&["Conflict"])),
        ("message", string()),
        (
            "asset_id",
            describe(
                uuid(),
                "The asset whose file has the same bytes (the same SHA-256): the oldest one, \
                 published or not.",
            ),
        ),
    ];
    describe(
        object(fields, &["error", "message", "asset_id"]),
        "A 409 answer to an upload with `on_duplicate=reject`: an asset has its bytes \
         already, and nothing was stored.",
    )
}

/// A resumable or direct upload: the fields of [`UploadWire`].
fn upload() -> Value {
    derived::of::<UploadWire>()
}

/// A direct upload just made: the fields of [`DirectWire`], its method the only one it takes.
fn direct_upload() -> Value {
    let mut schema = derived::of::<DirectWire>();
    let method = &mut schema["properties"]["method"];
    *method = describe(
        only("PUT"),
        method["description"].as_str().unwrap_or_default(),
    );
    schema
}
