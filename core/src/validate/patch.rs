//! `PATCH /api/v1/assets/{id}` bodies: a JSON merge of the editable fields.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::{Fields, check_title, json_object, link_fields};
use crate::change::{AssetChange, LinkFields, TagChange};
use crate::config::Config;
use crate::error::ApiError;
use crate::model::AssetType;

/// Fields of an asset that exist but that a PATCH may not set: its identity, type, file
/// fields (a new file goes through `PUT .../file`), counts and times.
pub(crate) const FIXED: &[&str] = &[
    "id",
    "slug",
    "asset_type",
    "file_path",
    "file_size",
    "mime_type",
    "thumbnail_path",
    "thumbnail_url",
    "page_count",
    "word_count",
    "width",
    "height",
    "video_embed",
    "download_count",
    "checksum_sha256",
    "created_at",
    "updated_at",
];

/// A validated PATCH body, before it meets the asset: `None` leaves a field as it is.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AssetPatch {
    /// A new title: non-blank, at most the configured characters.
    pub title: Option<String>,
    /// A new description; `Some(None)` (JSON `null`) clears it.
    pub description: Option<Option<String>>,
    /// Whether the asset may be shared without a key.
    pub is_public: Option<bool>,
    /// Whether the asset is published.
    pub published: Option<bool>,
    /// A new `external_url` as given (`Some(None)`: JSON `null`), checked against the asset's
    /// type by [`AssetPatch::into_change`].
    pub external_url: Option<Option<String>>,
    /// New tags, replacing the asset's (`Some(vec![])`: JSON `null` or `[]`, no tags).
    pub tags: Option<Vec<String>>,
    /// A workspace to move the asset to (`Some(None)`: JSON `null`, to none); see
    /// [`AssetChange::workspace`]. Which keys may move it is the service's rule.
    pub workspace_id: Option<Option<String>>,
}

/// Validates a PATCH body: a JSON object whose `title`, `description`, `is_public`,
/// `published`, `external_url` and `workspace_id` follow the rules of create; a field of the
/// asset that a PATCH cannot set (`asset_type`, `slug`, file fields, counts, times) is 400
/// naming it; unknown fields are ignored. `null` clears `description` (and the
/// `external_url` of a git asset) and moves the asset to no workspace (`workspace_id`); for
/// the other fields it is 400.
pub fn asset_patch(body: &[u8], config: &Config) -> Result<AssetPatch, ApiError> {
    patch_fields(&json_object(body)?, config)
}

pub(super) fn patch_fields(
    map: &Map<String, Value>,
    config: &Config,
) -> Result<AssetPatch, ApiError> {
    if let Some(name) = FIXED.iter().find(|name| map.contains_key(**name)) {
        return Err(ApiError::validation(
            *name,
            format!(
                "{name} cannot be changed; PATCH sets title, description, is_public, published, external_url and tags"
            ),
        ));
    }
    let f = Fields::new(map, "");
    let not_null = |name: &str, what: &str| -> Result<(), ApiError> {
        match map.get(name) {
            Some(Value::Null) => Err(ApiError::validation(
                name,
                format!("{name} must be {what}, not null"),
            )),
            _ => Ok(()),
        }
    };
    not_null("title", "a non-blank string")?;
    not_null("is_public", "a boolean")?;
    not_null("published", "a boolean")?;
    let title = match f.opt_str("title")? {
        Some(title) => {
            check_title("title", title, config.max_title_chars)?;
            Some(title.to_owned())
        }
        None => None,
    };
    let present = |name: &str| map.contains_key(name);
    let description = if present("description") {
        Some(f.opt_str("description")?.map(str::to_owned))
    } else {
        None
    };
    let external_url = if present("external_url") {
        Some(f.opt_str("external_url")?.map(str::to_owned))
    } else {
        None
    };
    let workspace_id = if present("workspace_id") {
        let named = f.opt_str("workspace_id")?;
        Some(
            named
                .map(|w| super::workspace_id("workspace_id", w))
                .transpose()?,
        )
    } else {
        None
    };
    Ok(AssetPatch {
        title,
        description,
        is_public: f.opt_bool("is_public")?,
        published: f.opt_bool("published")?,
        external_url,
        tags: super::json_tags(map, "tags")?,
        workspace_id,
    })
}

impl AssetPatch {
    /// The change this patch makes to an asset of `asset_type`, at `at`: `external_url` is
    /// checked as create checks it (required for link and external_video, accepted for git,
    /// refused for the other types) and gives the new `video_embed`.
    pub fn into_change(
        mut self,
        asset_type: AssetType,
        config: &Config,
        at: DateTime<Utc>,
    ) -> Result<AssetChange, ApiError> {
        let link = match self.external_url.take() {
            None => None,
            Some(raw) => {
                let (external_url, video_embed) = link_fields(asset_type, raw.as_deref(), config)?;
                Some(LinkFields {
                    external_url,
                    video_embed,
                })
            }
        };
        Ok(AssetChange {
            link,
            ..self.change_of_fields(at)
        })
    }

    /// The change of every field but `external_url` (which this leaves out: its check needs
    /// the asset's type), at `at`: what a bulk change makes of its `changes`, which refuse
    /// `external_url` and `workspace_id`.
    pub fn change_of_fields(self, at: DateTime<Utc>) -> AssetChange {
        AssetChange {
            title: self.title,
            description: self.description,
            is_public: self.is_public,
            published: self.published,
            tags: self.tags.map(TagChange::Set),
            workspace: self.workspace_id,
            ..AssetChange::at(at)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(body: &str) -> Result<AssetPatch, ApiError> {
        asset_patch(body.as_bytes(), &Config::default())
    }

    fn field_of(e: ApiError) -> String {
        match e {
            ApiError::Validation { field, .. } => field,
            other => panic!("not a validation error: {other:?}"),
        }
    }

    #[test]
    fn present_absent_and_null_are_told_apart() {
        let p = patch(r#"{"description": null, "title": "T", "extra": 1}"#).unwrap();
        assert_eq!(p.title.as_deref(), Some("T"));
        assert_eq!(p.description, Some(None));
        assert_eq!(
            (p.is_public, p.published, p.external_url),
            (None, None, None)
        );
        let p = patch("{}").unwrap();
        assert_eq!(p.description, None);
    }

    #[test]
    fn fixed_fields_and_bad_values_name_the_field() {
        for (body, field) in [
            (r#"{"slug": "x"}"#, "slug"),
            (r#"{"width": 3}"#, "width"),
            (r#"{"video_embed": "x"}"#, "video_embed"),
            (r#"{"title": null}"#, "title"),
            (r#"{"title": "  "}"#, "title"),
            (r#"{"is_public": 1}"#, "is_public"),
            (r#"{"published": null}"#, "published"),
            (r#"{"description": "a\u0000b"}"#, "description"),
            ("[]", "body"),
            ("nope", "body"),
        ] {
            assert_eq!(field_of(patch(body).unwrap_err()), field, "{body}");
        }
    }

    #[test]
    fn the_address_is_checked_against_the_type() {
        let config = Config::default();
        let at = chrono::Utc::now();
        let url = |body: &str, t| patch(body).unwrap().into_change(t, &config, at);
        let change = url(
            r#"{"external_url": "https://youtu.be/dQw4w9WgXcQ"}"#,
            AssetType::ExternalVideo,
        )
        .unwrap();
        assert_eq!(
            change.link.and_then(|l| l.video_embed).as_deref(),
            Some("https://www.youtube.com/embed/dQw4w9WgXcQ")
        );
        let cleared = url(r#"{"external_url": null}"#, AssetType::Git).unwrap();
        assert_eq!(cleared.link.map(|l| l.external_url), Some(None));
        for (body, t) in [
            (r#"{"external_url": null}"#, AssetType::Link),
            (
                r#"{"external_url": "https://example.com/"}"#,
                AssetType::Pdf,
            ),
            (
                r#"{"external_url": "https://example.com/"}"#,
                AssetType::ExternalVideo,
            ),
        ] {
            assert_eq!(
                field_of(url(body, t).unwrap_err()),
                "external_url",
                "{body}"
            );
        }
    }
}
