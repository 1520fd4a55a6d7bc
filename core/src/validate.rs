//! Validation of request bodies and path values: `POST /api/v1/assets`, `PATCH
//! /api/v1/assets/{id}`, the library document of `PUT /api/v1/libraries/{id}`, ids, slugs and
//! file paths. Pure functions, no I/O.
//!
//! Every failure is a 400 naming the field or path, e.g. `title` or
//! `sections[0].assets[2].asset_id`. A wrong JSON type is an error naming the field; `null`
//! for an optional field means "not given"; unknown fields are ignored.

use serde_json::{Map, Value};
use uuid::Uuid;

use crate::config::Config;
use crate::embed::video_embed;
use crate::error::ApiError;
use crate::model::AssetType;

mod bulk;
mod direct;
mod duplicate;
mod keys;
mod library;
mod pass;
mod patch;
mod tags;
mod webhook;

pub use bulk::{BulkAction, BulkDoc, MAX_BULK, bulk_doc};
pub use direct::{DirectUploadDoc, direct_upload_doc};
pub use duplicate::OnDuplicate;
pub use keys::{
    DEFAULT_TOKEN_SECONDS, KeyDoc, MAX_KEY_NAME, MAX_KEY_SECONDS, MAX_TOKEN_LIBRARIES,
    MAX_TOKEN_SECONDS, READ_SCOPES, TokenDoc, key_doc, token_doc,
};
pub use library::{EntryDoc, LibraryDoc, SectionDoc, library_doc};
pub use pass::{
    MAX_PASS_ASSETS, MAX_PASS_DOWNLOADS, MAX_PASS_LABEL, MAX_PASS_SECONDS, PassDoc, pass_doc,
};
#[cfg(feature = "openapi")]
pub(crate) use patch::FIXED as PATCH_FIXED;
pub use patch::{AssetPatch, asset_patch};
pub use tags::{MAX_TAG_CHARS, MAX_TAGS, tag_key, tags};
pub(crate) use tags::{json_tags, listed_tags};
pub use webhook::{WebhookDoc, webhook_change, webhook_doc};

/// Longest slug made from a title, in bytes.
pub const MAX_SLUG_LEN: usize = 80;
/// Longest slug given by a user, in bytes.
pub const MAX_GIVEN_SLUG_LEN: usize = 200;
/// Longest short text field (workspace ids, paths, URLs), in characters.
pub const MAX_SHORT_TEXT: usize = 2048;

/// A validated `POST /api/v1/assets` body: only validation makes one ([`new_asset`] from
/// request bytes, [`NewAsset::from_json`] from a JSON value), so every asset a
/// [`crate::Service`] creates has passed the same rules, whichever way it came in.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NewAsset {
    /// Title, non-blank, at most the configured characters.
    pub title: String,
    /// Description.
    pub description: Option<String>,
    /// Type.
    pub asset_type: AssetType,
    /// Absolute http(s) URL, for link, external_video and git.
    pub external_url: Option<String>,
    /// Embeddable address derived from `external_url`, for external_video.
    pub video_embed: Option<String>,
    /// Whether the asset may be shared without a key.
    pub is_public: bool,
    /// Whether the asset is published (else a draft); default true.
    pub published: bool,
    /// Relative path in the file store, for file-based types.
    pub file_path: Option<String>,
    /// Its tags ([`tags`]).
    pub tags: Vec<String>,
    /// The workspace it is made in ([`workspace_id`]); `None`: none named.
    pub workspace_id: Option<String>,
}

/// The one spelling of an id: the hyphenated UUID users see in responses (either case).
/// Braced, `urn:uuid:` and unhyphenated forms are not ids, wherever an id is read: a path,
/// a keyless or signed request, a body.
pub fn strict_id(raw: &str) -> Option<Uuid> {
    // 36 characters leave only the hyphenated form to `try_parse`.
    if raw.len() == 36 {
        Uuid::try_parse(raw).ok()
    } else {
        None
    }
}

/// Parses a path id (`asset_id` or `library_id`) with [`strict_id`], else 400 naming `field`.
pub fn parse_id(field: &'static str, raw: &str) -> Result<Uuid, ApiError> {
    strict_id(raw).ok_or_else(|| ApiError::validation(field, format!("{field} must be a UUID")))
}

/// Makes a slug from a title: transliterated to ASCII, lower case, words joined by hyphens,
/// at most [`MAX_SLUG_LEN`] bytes; `fallback` when nothing is left.
pub fn slug_from_title(title: &str, fallback: &str) -> String {
    let mut slug = slug::slugify(title);
    if slug.len() > MAX_SLUG_LEN {
        // slugify output is ASCII, so any byte index is a char boundary.
        slug.truncate(MAX_SLUG_LEN);
        let trimmed = slug.trim_end_matches('-').len();
        slug.truncate(trimmed);
    }
    if slug.is_empty() {
        fallback.to_owned()
    } else {
        slug
    }
}

/// Whether `s` is a well-formed slug: lower-case ASCII letters and digits in words joined by
/// single hyphens.
pub fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_GIVEN_SLUG_LEN
        && s.split('-').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// The longest workspace id, in characters.
pub const MAX_WORKSPACE_ID: usize = 64;

/// Whether `s` is a well-formed workspace id: 1 to [`MAX_WORKSPACE_ID`] ASCII letters,
/// digits, `_` and `-`.
pub fn is_workspace_id(s: &str) -> bool {
    (1..=MAX_WORKSPACE_ID).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Checks a workspace id given as `field` ([`is_workspace_id`]), else 400 naming `field`.
pub fn workspace_id(field: &str, raw: &str) -> Result<String, ApiError> {
    if is_workspace_id(raw) {
        Ok(raw.to_owned())
    } else {
        Err(ApiError::validation(
            field,
            format!(
                "{field} must be 1 to {MAX_WORKSPACE_ID} characters, each a letter, digit, _ or -"
            ),
        ))
    }
}

/// Checks a `file_path` without touching a file system: a non-empty relative path inside the
/// file store, with no `..`, `.` or empty segments, no control characters, no drive letters,
/// and no percent-encoded form of those.
pub fn check_file_path(path: &str) -> Result<(), ApiError> {
    let err = |m: &str| ApiError::validation("file_path", format!("file_path {m}"));
    if path.is_empty() {
        return Err(err("must not be empty"));
    }
    if path.chars().count() > MAX_SHORT_TEXT {
        return Err(err(&format!("must be at most {MAX_SHORT_TEXT} characters")));
    }
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    for p in [path, decoded.as_ref()] {
        if p.chars().any(char::is_control) {
            return Err(err("must not contain control characters"));
        }
        let b = p.as_bytes();
        if b.first().is_some_and(|c| *c == b'/' || *c == b'\\')
            || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':')
        {
            return Err(err("must be a relative path inside the file store"));
        }
        for segment in p.split(['/', '\\']) {
            if segment == ".." {
                return Err(err("must not contain '..' segments"));
            }
            if segment.is_empty() || segment == "." {
                return Err(err("must not contain empty or '.' segments"));
            }
        }
    }
    Ok(())
}

/// Checks that `url` is an absolute http(s) URL with a host, and returns it parsed: what is
/// stored is its normalised form (`Url::as_str`), so a stored URL is always safe to send in a
/// `Location` header. Control characters (tabs, line breaks, NUL, DEL, ...) anywhere are
/// refused rather than silently dropped, as a URL parser would.
pub fn check_http_url(field: &str, url: &str) -> Result<url::Url, ApiError> {
    let bad = || ApiError::validation(field, format!("{field} must be an absolute http(s) URL"));
    if url.chars().count() > MAX_SHORT_TEXT {
        return Err(ApiError::validation(
            field,
            format!("{field} must be at most {MAX_SHORT_TEXT} characters"),
        ));
    }
    if url.chars().any(char::is_control) {
        return Err(ApiError::validation(
            field,
            format!("{field} must not contain control characters"),
        ));
    }
    let parsed = url::Url::parse(url).map_err(|_| bad())?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none_or(str::is_empty) {
        return Err(bad());
    }
    Ok(parsed)
}

/// Parses a JSON body into its top-level object.
pub fn json_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::validation("body", format!("Request body is not valid JSON: {e}"))
    })?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::validation(
            "body",
            "Request body must be a JSON object",
        )),
    }
}

/// `s`, the text of field `path`, when it holds no U+0000: no stored text holds one (a NUL ends
/// strings in C and is refused by PostgreSQL's `text`), so every store keeps what every other
/// keeps.
pub(crate) fn text<'s>(path: &str, s: &'s str) -> Result<&'s str, ApiError> {
    if s.contains('\0') {
        return Err(ApiError::validation(
            path,
            format!("{path} must not contain NUL characters"),
        ));
    }
    Ok(s)
}

/// Typed access to the fields of one JSON object, naming each by its full path.
struct Fields<'a> {
    map: &'a Map<String, Value>,
    prefix: String,
}

impl<'a> Fields<'a> {
    fn new(map: &'a Map<String, Value>, prefix: impl Into<String>) -> Self {
        Fields {
            map,
            prefix: prefix.into(),
        }
    }

    fn path(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    fn type_error(&self, name: &str, what: &str) -> ApiError {
        let path = self.path(name);
        ApiError::validation(&path, format!("{path} must be {what}"))
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// A string field, if given, without NUL ([`text`]).
    fn opt_str(&self, name: &str) -> Result<Option<&'a str>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => text(&self.path(name), s).map(Some),
            Some(_) => Err(self.type_error(name, "a string")),
        }
    }

    fn req_str(&self, name: &str) -> Result<&'a str, ApiError> {
        self.opt_str(name)?.ok_or_else(|| {
            let path = self.path(name);
            ApiError::validation(&path, format!("{path} is required"))
        })
    }

    fn opt_text(&self, name: &str, max_chars: usize) -> Result<Option<String>, ApiError> {
        match self.opt_str(name)? {
            Some(s) if s.chars().count() > max_chars => {
                let path = self.path(name);
                Err(ApiError::validation(
                    &path,
                    format!("{path} must be at most {max_chars} characters"),
                ))
            }
            other => Ok(other.map(str::to_owned)),
        }
    }

    fn opt_bool(&self, name: &str) -> Result<Option<bool>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.type_error(name, "a boolean")),
        }
    }

    fn opt_number(&self, name: &str) -> Result<Option<f64>, ApiError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) => n
                .as_f64()
                .filter(|f| f.is_finite())
                .map(Some)
                .ok_or_else(|| self.type_error(name, "a finite number")),
            Some(_) => Err(self.type_error(name, "a number")),
        }
    }

    fn opt_array(&self, name: &str) -> Result<&'a [Value], ApiError> {
        match self.get(name) {
            None => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(_) => Err(self.type_error(name, "an array")),
        }
    }

    /// A required, non-blank title of at most `max` characters.
    fn title(&self, name: &str, max: usize) -> Result<String, ApiError> {
        let title = self.req_str(name)?;
        check_title(&self.path(name), title, max)?;
        Ok(title.to_owned())
    }

    /// An optional override title: when given, non-blank and at most `max` characters.
    fn opt_title(&self, name: &str, max: usize) -> Result<Option<String>, ApiError> {
        let Some(title) = self.opt_str(name)? else {
            return Ok(None);
        };
        check_title(&self.path(name), title, max)?;
        Ok(Some(title.to_owned()))
    }
}

fn check_title(path: &str, title: &str, max: usize) -> Result<(), ApiError> {
    if title.trim().is_empty() {
        return Err(ApiError::validation(
            path,
            format!("{path} must not be blank"),
        ));
    }
    if title.chars().count() > max {
        return Err(ApiError::validation(
            path,
            format!("{path} must be at most {max} characters"),
        ));
    }
    Ok(())
}

fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, ApiError> {
    value
        .as_object()
        .ok_or_else(|| ApiError::validation(path, format!("{path} must be an object")))
}

impl NewAsset {
    /// Validates an asset given as a JSON object with the fields of a `POST /api/v1/assets`
    /// body, by the same rules: a 400 names the offending field.
    ///
    /// ```
    /// use assetlib_core::Config;
    /// use assetlib_core::validate::NewAsset;
    ///
    /// let config = Config::default();
    /// let new = NewAsset::from_json(
    ///     &serde_json::json!({"title": "Press kit", "asset_type": "pdf", "file_path": "kit.pdf"}),
    ///     &config,
    /// )
    /// .unwrap();
    /// assert_eq!(new.file_path.as_deref(), Some("kit.pdf"));
    /// let err = NewAsset::from_json(&serde_json::json!({"asset_type": "pdf"}), &config);
    /// assert!(err.is_err());
    /// ```
    pub fn from_json(value: &Value, config: &Config) -> Result<NewAsset, ApiError> {
        match value {
            Value::Object(map) => {
                let mut new = AssetFields::from_json(map)?.validate(config)?;
                new.tags = json_tags(map, "tags")?.unwrap_or_default();
                Ok(new)
            }
            _ => Err(ApiError::validation(
                "body",
                "Request body must be a JSON object",
            )),
        }
    }
}

/// Validates a `POST /api/v1/assets` body.
pub fn new_asset(body: &[u8], config: &Config) -> Result<NewAsset, ApiError> {
    NewAsset::from_json(&Value::Object(json_object(body)?), config)
}

/// The fields of a create as given: typed, not yet held to the rules. A JSON body
/// ([`AssetFields::from_json`]) and an upload's form (`upload::new_asset`) each fill one, and
/// [`AssetFields::validate`] holds it to the same rules whichever way it came.
///
/// A body with several faults is answered with the first field, in this order, that is missing
/// or of the wrong JSON type (`from_json`); when every field is there and typed right, with the
/// first whose value breaks a rule (`validate`).
///
/// With the feature `openapi` it derives its schema, which a test holds against the document's
/// create body, so a field added here is described there too.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct AssetFields<'a> {
    pub(crate) title: &'a str,
    pub(crate) description: Option<&'a str>,
    /// The type's name as given.
    pub(crate) asset_type: &'a str,
    pub(crate) external_url: Option<&'a str>,
    pub(crate) is_public: Option<bool>,
    pub(crate) published: Option<bool>,
    pub(crate) file_path: Option<&'a str>,
    pub(crate) workspace_id: Option<&'a str>,
}

impl<'a> AssetFields<'a> {
    /// The fields of a JSON create body: `title` and `asset_type` given, each field of its JSON
    /// type (`null` is "not given"; other fields are ignored).
    pub(crate) fn from_json(map: &'a Map<String, Value>) -> Result<AssetFields<'a>, ApiError> {
        let f = Fields::new(map, "");
        Ok(AssetFields {
            title: f.req_str("title")?,
            description: f.opt_str("description")?,
            asset_type: f.req_str("asset_type")?,
            external_url: f.opt_str("external_url")?,
            is_public: f.opt_bool("is_public")?,
            published: f.opt_bool("published")?,
            file_path: f.opt_str("file_path")?,
            workspace_id: f.opt_str("workspace_id")?,
        })
    }

    /// Holds the fields to the rules of a create: a 400 names the first field that breaks one.
    pub(crate) fn validate(self, config: &Config) -> Result<NewAsset, ApiError> {
        check_title("title", self.title, config.max_title_chars)?;
        let asset_type = AssetType::parse(self.asset_type).ok_or_else(|| {
            let names: Vec<&str> = AssetType::ALL.iter().map(|t| t.as_str()).collect();
            ApiError::validation(
                "asset_type",
                format!("asset_type must be one of: {}", names.join(", ")),
            )
        })?;
        let (external_url, video_embed) = link_fields(asset_type, self.external_url, config)?;
        let file_path = match self.file_path {
            None => None,
            Some(_) if !asset_type.is_file_based() => {
                return Err(ApiError::validation(
                    "file_path",
                    "file_path is only accepted for pdf, document, image, video and audio assets",
                ));
            }
            Some(p) => {
                check_file_path(p)?;
                check_not_api_folder(p)?;
                Some(p.to_owned())
            }
        };
        let workspace_id = self
            .workspace_id
            .map(|w| workspace_id("workspace_id", w))
            .transpose()?;
        Ok(NewAsset {
            title: self.title.to_owned(),
            description: self.description.map(str::to_owned),
            asset_type,
            external_url,
            video_embed,
            is_public: self.is_public.unwrap_or(false),
            published: self.published.unwrap_or(true),
            file_path,
            tags: Vec::new(),
            workspace_id,
        })
    }
}

/// The `external_url` of an asset of `asset_type` (`raw`: the value given, if any) and the
/// `video_embed` that follows from it: required for link and external_video, accepted for
/// git, refused for the other types.
fn link_fields(
    asset_type: AssetType,
    raw: Option<&str>,
    config: &Config,
) -> Result<(Option<String>, Option<String>), ApiError> {
    let external_url = match raw {
        None if asset_type.requires_external_url() => {
            return Err(ApiError::validation(
                "external_url",
                format!("external_url is required for {asset_type} assets"),
            ));
        }
        None => None,
        Some(_) if !asset_type.takes_external_url() => {
            return Err(ApiError::validation(
                "external_url",
                "external_url is only accepted for link, external_video and git assets",
            ));
        }
        Some(raw) => Some(check_http_url("external_url", raw)?),
    };
    let video_embed = match (&external_url, asset_type) {
        (Some(url), AssetType::ExternalVideo) => Some(video_embed(url, config)?),
        _ => None,
    };
    Ok((external_url.map(String::from), video_embed))
}

/// The folders of the file store where the API keeps the files it stores itself (uploads,
/// replaced files, thumbnails, image variants). It removes them when their asset goes, so an
/// asset created with a `file_path` names a file the app placed elsewhere.
pub const API_FOLDERS: [&str; 3] = ["uploads/", "thumbnails/", "derived/"];

/// Whether `path` is in one of [`API_FOLDERS`].
pub fn in_api_folder(path: &str) -> bool {
    API_FOLDERS.iter().any(|folder| path.starts_with(folder))
}

fn check_not_api_folder(path: &str) -> Result<(), ApiError> {
    if in_api_folder(path) {
        return Err(ApiError::validation(
            "file_path",
            "file_path must not be in uploads/, thumbnails/ or derived/: the API keeps its own \
             files there",
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "validate_test.rs"]
mod tests;
