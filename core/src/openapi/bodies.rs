//! The schemas of request bodies: the JSON of create ([`crate::validate::new_asset`]),
//! change ([`crate::validate::asset_patch`]) and library writes
//! ([`crate::validate::library_doc`]), and the multipart forms of uploads.
//!
//! These are written here, with the limits and rules validation applies; a test holds the
//! create body's fields against those `validate::AssetFields` derives and `tags`, read beside
//! them (`wire_tests`), so a field a create reads cannot be missing. Bulk changes
//! ([`crate::validate::bulk_doc`]) have one schema per action. A schema here is never stricter than validation: what it refuses, the API refuses too
//! (400). Rules no schema can state — an entry's asset must exist, a file must be of the
//! asset's type — are in the descriptions. `null` for an optional field means "not given".

use serde_json::{Value, json};

use super::build::{
    array, boolean, describe, narrowed, object, one_of_strings, or_null, string, uuid,
};
use crate::model::AssetType;
use crate::validate::{
    MAX_GIVEN_SLUG_LEN, MAX_PASS_ASSETS, MAX_PASS_DOWNLOADS, MAX_PASS_LABEL, MAX_PASS_SECONDS,
    MAX_SHORT_TEXT,
};

/// The longest title of the default configuration.
const MAX_TITLE: usize = 500;

/// Adds the request body schemas.
pub(super) fn add_all(add: &mut impl FnMut(&str, Value), organize: super::build::Registrar) {
    add("NewAsset", new_asset());
    add("AssetPatch", asset_patch());
    add("LibraryDocument", library_document());
    add("SectionDocument", section_document());
    add("EntryDocument", entry_document());
    add("UploadForm", upload_form());
    add("FileForm", file_form());
    add("PassDocument", pass_document());
    add("WebhookDocument", webhook_document(true));
    add("WebhookPatch", webhook_document(false));
    add("DirectUploadDocument", direct_upload_document());
    organize(add);
}

/// One tag as a body gives it: [`crate::validate::tags`] trims it and holds it to 1 to 64
/// characters without commas or control characters (the length is in the description: a
/// longer string with spaces around it may pass).
pub(super) fn tag() -> Value {
    json!({"type": "string", "minLength": 1})
}

/// A body's `tags`: an array of tags, `null` or `[]` for none.
pub(super) fn tags(description: &str) -> Value {
    describe(
        or_null(array(tag())),
        &format!(
            "{description} Each tag is trimmed and must be 1 to 64 characters, without commas, \
             control or invisible format characters (Unicode Cf: zero-width spaces, bidi \
             controls, ...) (else 400 on `tags[i]`); a tag that differs from an \
             earlier one only in case is left out (the first spelling is kept); at most 32 \
             remain (else 400 on `tags`). `null` or `[]`: no tags."
        ),
    )
}

/// `on_duplicate` in a body or upload metadata.
fn on_duplicate() -> Value {
    describe(
        or_null(super::build::schema("OnDuplicate")),
        "What to do when an asset's file has the same bytes (the same SHA-256) once the \
         file is there: `allow` (default; empty is the same) stores a new asset anyway, \
         `reject` refuses with 409 naming that asset (`asset_id`) and removes the upload, \
         `reuse` answers with that asset and stores nothing. Checked now: another value \
         (spaces around one too) is 400 on `on_duplicate`.",
    )
}

/// `POST /api/v1/uploads/direct` ([`crate::validate::direct_upload_doc`]).
fn direct_upload_document() -> Value {
    let optional = |schema: Value, description: &str| describe(or_null(schema), description);
    let file_types: Vec<&str> = AssetType::ALL
        .iter()
        .filter(|t| t.is_file_based())
        .map(|t| t.as_str())
        .collect();
    object(
        vec![
            (
                "filename",
                describe(
                    json!({"type": "string", "minLength": 1, "maxLength": 255}),
                    "The file's name (not blank): the default title.",
                ),
            ),
            (
                "size",
                describe(
                    super::build::byte_count(),
                    "The file's size in bytes: the file put must have it.",
                ),
            ),
            (
                "sha256",
                optional(
                    json!({"type": "string", "pattern": "^[0-9a-fA-F]{64}$"}),
                    "The file's SHA-256 in hex: checked when the upload completes.",
                ),
            ),
            ("title", optional(string(), "The asset's title.")),
            (
                "description",
                optional(string(), "The asset's description."),
            ),
            (
                "asset_type",
                optional(
                    narrowed("AssetType", &file_types),
                    "The asset's type (else inferred from the content): one with a file.",
                ),
            ),
            ("is_public", optional(boolean(), "Default false.")),
            ("published", optional(boolean(), "Default true.")),
            ("tags", tags("The asset's tags, in order.")),
            ("on_duplicate", on_duplicate()),
            (
                "workspace_id",
                workspace_id(
                    "The asset's workspace: a workspace key's own (naming another is 403), or \
                     the one a global key names. Default: the key's, or none.",
                ),
            ),
        ],
        &["filename", "size"],
    )
}

/// A webhook's body: to register one (`url` required) or to change one.
fn webhook_document(new: bool) -> Value {
    let mut types = vec!["*"];
    types.extend(crate::events::EventType::ALL.iter().map(|t| t.as_str()));
    // On a new webhook null means "not given" (the default); a change takes no null.
    let optional = |schema: Value| if new { or_null(schema) } else { schema };
    let mut fields = vec![
        (
            "url",
            describe(
                json!({"type": "string", "format": "uri", "maxLength": crate::webhooks::target::MAX_URL_LEN}),
                "Where deliveries go: an absolute `http` or `https` URL, not on port 0, whose \
                 host is, and resolves only to, public addresses (an IPv6 address carrying an \
                 IPv4 one, as `::ffff:127.0.0.1`, is judged by it), unless the server allows \
                 private ones.",
            ),
        ),
        (
            "event_types",
            describe(
                optional(json!({"type": "array", "minItems": 1, "items": one_of_strings(&types)})),
                "The event types to receive; `[\"*\"]` (the default) for all.",
            ),
        ),
        (
            "enabled",
            describe(
                optional(boolean()),
                "Whether deliveries are sent (default true).",
            ),
        ),
    ];
    if new {
        fields.push((
            "workspace_id",
            workspace_id(
                "The workspace whose events it receives: a workspace key's own (naming another \
                 is 403), or any for a global key; none (a global key's default) receives \
                 every event. Fixed once made (a change naming it is 400).",
            ),
        ));
    }
    let (required, description): (&[&str], &str) = match new {
        true => (&["url"], "A webhook to register."),
        false => (
            &[],
            "A change of a webhook: the fields given are set (none may be null).",
        ),
    };
    describe(object(fields, required), description)
}

fn pass_document() -> Value {
    let whole = |max: u64| json!({"type": "integer", "minimum": 1, "maximum": max});
    let fields = vec![
        (
            "label",
            describe(
                json!({"type": "string", "minLength": 1, "maxLength": MAX_PASS_LABEL}),
                "A name to tell passes apart (an order number, a buyer): not blank; at most \
                 200 characters.",
            ),
        ),
        (
            "expires_in",
            describe(
                or_null(whole(MAX_PASS_SECONDS)),
                "Seconds the pass works, from now: 1 to 315576000 (10 years). Give this or \
                 `expires_at`, not both.",
            ),
        ),
        (
            "expires_at",
            describe(
                or_null(json!({"type": "string", "format": "date-time"})),
                "When the pass stops working (RFC 3339): after now, at most 10 years ahead. \
                 Give this or `expires_in`, not both.",
            ),
        ),
        (
            "max_downloads",
            describe(
                or_null(whole(MAX_PASS_DOWNLOADS)),
                "How many downloads the pass allows (a whole file, a range from byte 0, a \
                 range that does not continue a download the pass began, or a zip each count \
                 one); null or absent: no limit.",
            ),
        ),
        (
            "asset_ids",
            describe(
                or_null(json!({"type": "array", "items": uuid(), "minItems": 1,
                    "maxItems": MAX_PASS_ASSETS})),
                "The library's assets the pass opens (each must be in the library, else 400 \
                 on `asset_ids[i]`); null or absent: all of them.",
            ),
        ),
    ];
    describe(
        object(fields, &["label"]),
        "A new library pass. Exactly one of `expires_in` and `expires_at` is required.",
    )
}

fn title() -> Value {
    describe(
        json!({"type": "string", "minLength": 1, "maxLength": MAX_TITLE}),
        "Not blank; at most 500 characters.",
    )
}

fn short_text(description: &str) -> Value {
    describe(
        or_null(json!({"type": "string", "maxLength": MAX_SHORT_TEXT})),
        description,
    )
}

/// The pattern of a workspace id ([`crate::validate::is_workspace_id`]).
pub(super) const WORKSPACE_PATTERN: &str = "^[A-Za-z0-9_-]{1,64}$";

pub(super) fn workspace_id(description: &str) -> Value {
    describe(
        or_null(json!({"type": "string", "pattern": WORKSPACE_PATTERN})),
        description,
    )
}

fn external_url() -> Value {
    short_text(
        "An absolute http(s) URL with a host, without control characters. Required for link \
         and external_video (a YouTube, Vimeo or, when the server allows it, Dailymotion \
         address: it gives the asset its `video_embed`), accepted for git, refused for the \
         other types.",
    )
}

fn new_asset() -> Value {
    let fields = vec![
        ("title", title()),
        ("description", or_null(string())),
        ("asset_type", super::build::schema("AssetType")),
        ("external_url", external_url()),
        (
            "is_public",
            describe(
                or_null(boolean()),
                "Whether the published asset is read and downloaded without a key; default \
                 false.",
            ),
        ),
        (
            "published",
            describe(or_null(boolean()), "Default true; false makes a draft."),
        ),
        (
            "file_path",
            describe(
                or_null(json!({"type": "string", "minLength": 1, "maxLength": MAX_SHORT_TEXT})),
                "For pdf, document, image, video and audio only: a relative path of a file that \
                 exists in the server's file store (no `..`, `.` or empty segments, no \
                 absolute paths, not under `uploads/` or `thumbnails/`), of the asset's type. \
                 It is read for the asset's size, media type, pages, words, pixel size and \
                 thumbnail.",
            ),
        ),
        ("tags", tags("The asset's tags, in order.")),
        (
            "workspace_id",
            workspace_id(
                "The workspace the asset belongs to: 1 to 64 letters, digits, `_` and `-` \
                 (else 400 on `workspace_id`). Default: none. A global key's `PATCH` \
                 moves it.",
            ),
        ),
    ];
    describe(
        object(fields, &["title", "asset_type"]),
        "An asset to create. Text fields hold no NUL character; unknown fields are ignored.",
    )
}

fn asset_patch() -> Value {
    let mut patch = describe(
        object(patch_fields(true), &[]),
        "A change: the fields given replace the asset's, the others stay. The asset's other \
         fields (its id, slug, type, file fields, checksum, counts and times) cannot be set: \
         naming one is 400. Unknown fields are ignored.",
    );
    patch["propertyNames"] = json!({"not": {"enum": crate::validate::PATCH_FIXED}});
    patch
}

/// The fields of a change of one asset; `external_url` and `workspace_id` only when `link`
/// (a bulk patch takes all but them).
pub(super) fn patch_fields(link: bool) -> Vec<(&'static str, Value)> {
    let mut fields = vec![
        ("title", title()),
        (
            "description",
            describe(or_null(string()), "`null` clears it."),
        ),
        ("is_public", boolean()),
        ("published", boolean()),
        (
            "external_url",
            describe(
                or_null(json!({"type": "string", "maxLength": MAX_SHORT_TEXT})),
                "For link, external_video and git assets, as on create; `null` clears the \
                 address of a git asset.",
            ),
        ),
        (
            "tags",
            tags("The asset's new tags, in order: they replace all it had."),
        ),
    ];
    if link {
        fields.push((
            "workspace_id",
            workspace_id(
                "Moves the asset to this workspace (`null`: to none); a workspace key may \
                 name only its own. Its slug stays if free there, else takes the first free \
                 `-2`, `-3`, ... form. 409 while a library that may not hold it there holds \
                 it.",
            ),
        ));
    } else {
        fields.retain(|(name, _)| *name != "external_url");
    }
    fields
}

pub(super) fn flag(description: &str) -> Value {
    describe(or_null(boolean()), description)
}

fn library_document() -> Value {
    let fields = vec![
        ("title", title()),
        (
            "slug",
            describe(
                or_null(json!({"type": "string", "maxLength": MAX_GIVEN_SLUG_LEN,
                    "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"})),
                "Lower-case letters and digits in words joined by single hyphens; one another \
                 library holds is 400. Default: made from the title (with `-2`, `-3`, ... when \
                 taken).",
            ),
        ),
        ("description", or_null(string())),
        (
            "workspace_id",
            workspace_id(
                "The workspace the library belongs to: 1 to 64 letters, digits, `_` and `-` \
                 (else 400 on `workspace_id`). Default: none. Its slug is unique there.",
            ),
        ),
        (
            "cover_image_path",
            short_text("URL path of the cover image."),
        ),
        (
            "cover_overlay_color",
            describe(
                or_null(json!({"type": "string",
                    "pattern": "^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"})),
                "`#RGB` or `#RRGGBB`.",
            ),
        ),
        (
            "cover_overlay_opacity",
            or_null(json!({"type": "number", "minimum": 0, "maximum": 1})),
        ),
        ("show_asset_count", flag("Default true.")),
        ("allow_individual_downloads", flag("Default true.")),
        (
            "allow_bulk_download",
            flag("Default false: the zip and its signed links are 403 then."),
        ),
        (
            "is_paid",
            flag("Default false; a paid library needs a `price`."),
        ),
        (
            "price",
            or_null(json!({"type": "number", "exclusiveMinimum": 0})),
        ),
        (
            "currency",
            describe(
                or_null(json!({"type": "string", "pattern": "^[A-Z]{3}$"})),
                "Three upper-case letters; default `USD`.",
            ),
        ),
        (
            "published",
            flag("Default true; an unpublished library is 404 to every read."),
        ),
        (
            "sections",
            describe(
                or_null(array(super::build::schema("SectionDocument"))),
                "In display order.",
            ),
        ),
        (
            "unsectioned_assets",
            describe(
                or_null(array(super::build::schema("EntryDocument"))),
                "The assets in no section, in display order.",
            ),
        ),
    ];
    describe(
        object(fields, &["title"]),
        "A whole library: it replaces whatever the library held. Every entry's asset must exist \
         and be a pdf, document, image, video or audio asset, and appear once in the library \
         (else 400 naming the entry's path). Unknown fields are ignored.",
    )
}

fn section_document() -> Value {
    let fields = vec![
        (
            "id",
            describe(
                or_null(uuid()),
                "Keep a section's id across writes; a new one is made when absent. Unique in \
                 the document.",
            ),
        ),
        ("title", title()),
        ("description", or_null(string())),
        ("collapsed_by_default", flag("Default false.")),
        (
            "assets",
            describe(
                or_null(array(super::build::schema("EntryDocument"))),
                "In display order.",
            ),
        ),
    ];
    object(fields, &["title"])
}

fn entry_document() -> Value {
    let fields = vec![
        ("asset_id", uuid()),
        (
            "title",
            describe(
                or_null(json!({"type": "string", "minLength": 1, "maxLength": MAX_TITLE})),
                "The library's title for the asset (not blank), shown instead of its own.",
            ),
        ),
        (
            "description",
            describe(
                or_null(string()),
                "The library's description for the asset, shown instead of its own.",
            ),
        ),
    ];
    describe(
        object(fields, &["asset_id"]),
        "An asset placed in a library.",
    )
}

/// The file part of a form: its bytes (`contentMediaType`, as OpenAPI 3.1 says), and
/// `format: binary`, by which client generators give it the type of a file.
fn file_part() -> Value {
    describe(
        json!({"type": "string", "format": "binary",
            "contentMediaType": "application/octet-stream"}),
        "The file, with its name in the part's `filename`. Its type is read from its content.",
    )
}

fn upload_form() -> Value {
    let types: Vec<&str> = AssetType::ALL
        .iter()
        .filter(|t| t.is_file_based())
        .map(|t| t.as_str())
        .collect();
    let text_flag =
        |description: &str| describe(one_of_strings(&["true", "false", ""]), description);
    let fields = vec![
        ("file", file_part()),
        (
            "title",
            describe(
                json!({"type": "string", "maxLength": MAX_TITLE}),
                "Text: not blank, at most 500 characters. Default: the file's name.",
            ),
        ),
        ("description", describe(string(), "Any text.")),
        (
            "asset_type",
            describe(
                json!({"anyOf": [
                    narrowed("AssetType", &types),
                    {"type": "string", "maxLength": 0},
                ]}),
                "A type with a file. Default (or empty): inferred from the content. When \
                 given, the file must be of that type.",
            ),
        ),
        ("is_public", text_flag("Default false.")),
        ("published", text_flag("Default true.")),
        (
            "tags",
            describe(
                string(),
                "Text: the asset's tags separated by commas (`logo, brand`); empty pieces \
                 are skipped. Each tag is trimmed and must be at most 64 characters without \
                 control or invisible format characters (else 400 on `tags[i]`, counting the \
                 pieces kept); one \
                 that differs from an earlier one only in case is left out; at most 32 remain \
                 (else 400 on `tags`).",
            ),
        ),
        (
            "workspace_id",
            describe(
                json!({"type": "string", "pattern": WORKSPACE_PATTERN}),
                "Text: the workspace the asset belongs to: 1 to 64 letters, digits, `_` \
                 and `-` (else 400 on `workspace_id`). Default: none.",
            ),
        ),
    ];
    describe(
        object(fields, &["file"]),
        "An upload: exactly one `file` part and optional text parts (UTF-8, at most 64 KiB \
         each); other parts are ignored.",
    )
}

fn file_form() -> Value {
    describe(
        object(vec![("file", file_part())], &["file"]),
        "A new file for a file-based asset, of the asset's type: exactly one `file` part; \
         other parts are ignored.",
    )
}
