//! The library document of `PUT /api/v1/libraries/{id}`: its types and its rules.

use serde_json::Value;
use uuid::Uuid;

use super::{Fields, MAX_GIVEN_SLUG_LEN, MAX_SHORT_TEXT, is_slug, json_object, object};
use crate::config::Config;
use crate::error::ApiError;
use crate::model::LibrarySettings;

/// A validated library document.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryDoc {
    /// Slug given by the user, if any.
    pub slug: Option<String>,
    /// The settings: title, description, workspace, cover, display and download controls,
    /// price (`show_asset_count` and `allow_individual_downloads` default true,
    /// `allow_bulk_download` and `is_paid` false, currency `USD`, `published` true).
    pub settings: LibrarySettings,
    /// Sections in page order.
    pub sections: Vec<SectionDoc>,
    /// Unsectioned entries in page order.
    pub unsectioned_assets: Vec<EntryDoc>,
}

impl LibraryDoc {
    /// Every entry of the document, sectioned ones first, in page order.
    pub fn entries(&self) -> impl Iterator<Item = &EntryDoc> {
        self.sections
            .iter()
            .flat_map(|s| s.assets.iter())
            .chain(self.unsectioned_assets.iter())
    }
}

/// A validated section of a library document.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionDoc {
    /// Given id, if any (else a new one is made).
    pub id: Option<Uuid>,
    /// Heading.
    pub title: String,
    /// Description.
    pub description: Option<String>,
    /// Default false.
    pub collapsed_by_default: bool,
    /// Entries in order.
    pub assets: Vec<EntryDoc>,
}

/// A validated entry of a library document.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryDoc {
    /// The asset placed.
    pub asset_id: Uuid,
    /// Per-library title.
    pub title: Option<String>,
    /// Per-library description.
    pub description: Option<String>,
    /// Path of its `asset_id` in the document, for errors found later (missing asset, type).
    pub path: String,
}

/// Validates a library document (`PUT /api/v1/libraries/{id}`): every rule that needs no
/// store. The caller still checks that each entry's asset exists and may be placed.
pub fn library_doc(body: &[u8], config: &Config) -> Result<LibraryDoc, ApiError> {
    let map = json_object(body)?;
    let f = Fields::new(&map, "");
    let max = config.max_title_chars;
    let title = f.title("title", max)?;
    let slug = match f.opt_str("slug")? {
        Some(s) if !is_slug(s) => {
            return Err(ApiError::validation(
                "slug",
                format!(
                    "slug must be lower-case letters and digits joined by single hyphens, \
                     at most {MAX_GIVEN_SLUG_LEN} characters"
                ),
            ));
        }
        other => other.map(str::to_owned),
    };
    let description = f.opt_str("description")?.map(str::to_owned);
    let workspace_id = f
        .opt_str("workspace_id")?
        .map(|w| super::workspace_id("workspace_id", w))
        .transpose()?;
    let cover_image_path = f.opt_text("cover_image_path", MAX_SHORT_TEXT)?;
    let cover_overlay_color = f.opt_str("cover_overlay_color")?.map(str::to_owned);
    if let Some(c) = &cover_overlay_color {
        let hex = c.strip_prefix('#').unwrap_or("");
        if !(c.starts_with('#')
            && matches!(hex.len(), 3 | 6)
            && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(ApiError::validation(
                "cover_overlay_color",
                "cover_overlay_color must be a hex colour: #RGB or #RRGGBB",
            ));
        }
    }
    let cover_overlay_opacity = f.opt_number("cover_overlay_opacity")?;
    if cover_overlay_opacity.is_some_and(|o| !(0.0..=1.0).contains(&o)) {
        return Err(ApiError::validation(
            "cover_overlay_opacity",
            "cover_overlay_opacity must be between 0.0 and 1.0",
        ));
    }
    let is_paid = f.opt_bool("is_paid")?.unwrap_or(false);
    let price = f.opt_number("price")?;
    match price {
        Some(p) if p <= 0.0 => {
            return Err(ApiError::validation("price", "price must be above 0"));
        }
        None if is_paid => {
            return Err(ApiError::validation(
                "price",
                "price is required for a paid library",
            ));
        }
        _ => {}
    }
    let currency = f.opt_str("currency")?.unwrap_or("USD").to_owned();
    if !(currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase())) {
        return Err(ApiError::validation(
            "currency",
            "currency must be three upper-case letters, e.g. USD",
        ));
    }

    let mut seen_assets = std::collections::HashSet::new();
    let mut seen_sections = std::collections::HashSet::new();
    let mut entries = |list: &[Value], prefix: &str| -> Result<Vec<EntryDoc>, ApiError> {
        let mut out = Vec::with_capacity(list.len());
        for (i, value) in list.iter().enumerate() {
            let at = format!("{prefix}[{i}]");
            let ef = Fields::new(object(value, &at)?, format!("{at}."));
            let id_path = ef.path("asset_id");
            let asset_id = super::strict_id(ef.req_str("asset_id")?).ok_or_else(|| {
                ApiError::validation(&id_path, format!("{id_path} must be a UUID"))
            })?;
            if !seen_assets.insert(asset_id) {
                return Err(ApiError::validation(
                    &id_path,
                    format!("asset {asset_id} appears more than once in the library"),
                ));
            }
            out.push(EntryDoc {
                asset_id,
                title: ef.opt_title("title", max)?,
                description: ef.opt_str("description")?.map(str::to_owned),
                path: id_path,
            });
        }
        Ok(out)
    };

    let mut sections = Vec::new();
    for (i, value) in f.opt_array("sections")?.iter().enumerate() {
        let at = format!("sections[{i}]");
        let sf = Fields::new(object(value, &at)?, format!("{at}."));
        let id = match sf.opt_str("id")? {
            None => None,
            Some(raw) => {
                let path = sf.path("id");
                let id = super::strict_id(raw)
                    .ok_or_else(|| ApiError::validation(&path, format!("{path} must be a UUID")))?;
                if !seen_sections.insert(id) {
                    return Err(ApiError::validation(
                        &path,
                        format!("section id {id} appears more than once"),
                    ));
                }
                Some(id)
            }
        };
        sections.push(SectionDoc {
            id,
            title: sf.title("title", max)?,
            description: sf.opt_str("description")?.map(str::to_owned),
            collapsed_by_default: sf.opt_bool("collapsed_by_default")?.unwrap_or(false),
            assets: entries(sf.opt_array("assets")?, &sf.path("assets"))?,
        });
    }
    let unsectioned_assets = entries(f.opt_array("unsectioned_assets")?, "unsectioned_assets")?;

    Ok(LibraryDoc {
        slug,
        settings: LibrarySettings {
            title,
            description,
            workspace_id,
            cover_image_path,
            cover_overlay_color,
            cover_overlay_opacity,
            show_asset_count: f.opt_bool("show_asset_count")?.unwrap_or(true),
            allow_individual_downloads: f.opt_bool("allow_individual_downloads")?.unwrap_or(true),
            allow_bulk_download: f.opt_bool("allow_bulk_download")?.unwrap_or(false),
            is_paid,
            price,
            currency,
            published: f.opt_bool("published")?.unwrap_or(true),
        },
        sections,
        unsectioned_assets,
    })
}

#[cfg(test)]
#[path = "library_test.rs"]
mod tests;
