//! Library-tree assembly: a library, its sections and its entries, in any order -> the
//! library detail of spec §2.3-2.5.
//!
//! Rules (DESIGN.md §3 "Libraries"): sections in `display_order` (then id); each section's
//! assets in `display_order` (then asset id); then `unsectioned_assets` in the same order,
//! always full objects. With `include_assets` each section has `assets` and no
//! `asset_count`, otherwise `asset_count` and no `assets`; the root has no `asset_count`.
//! A library asset's `title` and `description` are the per-library overrides when set, else
//! the asset's own; `thumbnail_url` is the thumbnail path joined to the files base URL.
//! Entries whose asset is unpublished, or that name a section not in the library, are left
//! out and not counted.
//!
//! Assembly borrows every string from the rows and sorts once; the result serializes
//! straight from the sorted rows.

use std::fmt;
use std::ops::Range;

use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use uuid::Uuid;

use crate::model::{AssetType, EntryRow, Library, LibraryRows, Section};
use crate::render::{Seconds, Timestamp, opt_ts};

/// The library detail, ready to serialize. Borrows everything from its [`LibraryRows`].
#[derive(Debug)]
pub struct LibraryDetail<'a> {
    rows: &'a LibraryRows,
    files_base_url: &'a str,
    include_assets: bool,
    sections: Vec<(&'a Section, Range<usize>)>,
    /// Published entries, sectioned ones in page order, then the unsectioned ones.
    entries: Vec<&'a EntryRow>,
    unsectioned: Range<usize>,
}

/// Assembles the detail of `rows`. `files_base_url` is joined to thumbnail paths.
pub fn assemble<'a>(
    rows: &'a LibraryRows,
    include_assets: bool,
    files_base_url: &'a str,
) -> LibraryDetail<'a> {
    let mut sections: Vec<&Section> = rows.sections.iter().collect();
    sections.sort_unstable_by_key(|s| (s.display_order, s.id));
    // Each section's place on the page, looked up by id (a sorted array: a library has few
    // sections, and this beats hashing every entry's section id).
    let mut position: Vec<(Uuid, usize)> = sections
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id, i))
        .collect();
    position.sort_unstable_by_key(|(id, _)| *id);

    // Sort keys are copied out of the rows, so the sort compares values in one array
    // instead of following a pointer per comparison; rows that come in page order (as
    // stores keep them) are not sorted again.
    let mut keyed: Vec<(usize, u32, u128, &EntryRow)> = rows
        .entries
        .iter()
        .filter(|e| e.asset.published)
        .filter_map(|e| {
            let section = match e.entry.section_id {
                None => usize::MAX,
                Some(id) => {
                    let at = position.binary_search_by_key(&id, |(sid, _)| *sid).ok()?;
                    position[at].1
                }
            };
            Some((
                section,
                e.entry.display_order,
                e.entry.asset_id.as_u128(),
                e,
            ))
        })
        .collect();
    let key = |k: &(usize, u32, u128, &EntryRow)| (k.0, k.1, k.2);
    if !keyed.is_sorted_by_key(key) {
        keyed.sort_unstable_by_key(key);
    }

    let mut ranges = Vec::with_capacity(sections.len());
    let mut at = 0;
    for (i, section) in sections.into_iter().enumerate() {
        let start = at;
        while at < keyed.len() && keyed[at].0 == i {
            at += 1;
        }
        ranges.push((section, start..at));
    }
    let entries: Vec<&EntryRow> = keyed.into_iter().map(|(.., e)| e).collect();
    let unsectioned = at..entries.len();
    LibraryDetail {
        rows,
        files_base_url,
        include_assets,
        sections: ranges,
        entries,
        unsectioned,
    }
}

impl<'a> LibraryDetail<'a> {
    /// Number of library assets on the page (sections and unsectioned).
    pub fn asset_count(&self) -> usize {
        self.entries.len()
    }

    /// Every asset on the page in page order, each with its section (`None` when
    /// unsectioned).
    pub fn page_order(&self) -> impl Iterator<Item = (Option<&'a Section>, &'a EntryRow)> + '_ {
        let sectioned = self.sections.iter().flat_map(move |(section, range)| {
            self.entries[range.clone()]
                .iter()
                .map(move |e| (Some(*section), *e))
        });
        let unsectioned = self.entries[self.unsectioned.clone()]
            .iter()
            .map(|e| (None, *e));
        sectioned.chain(unsectioned)
    }
}

impl Serialize for LibraryDetail<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        DetailWire {
            head: LibraryHead::of(&self.rows.library),
            sections: SectionsJson(self),
            unsectioned_assets: AssetsJson(self, self.unsectioned.clone()),
        }
        .serialize(s)
    }
}

/// The detail on the wire: the library's fields, then its sections and unsectioned assets.
/// (`view_count` is a field of the head, so it comes before any nested object: the detail
/// cache relies on that.)
#[derive(Serialize)]
struct DetailWire<'d, 'a> {
    #[serde(flatten)]
    head: LibraryHead<'a>,
    sections: SectionsJson<'d, 'a>,
    unsectioned_assets: AssetsJson<'d, 'a>,
}

/// The fields of a library's page before its sections, in the order they are written.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct LibraryHead<'a> {
    id: Uuid,
    title: &'a str,
    slug: &'a str,
    description: Option<&'a str>,
    cover_image_path: Option<&'a str>,
    /// `#RGB` or `#RRGGBB`.
    cover_overlay_color: Option<&'a str>,
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
    cover_overlay_opacity: Option<f64>,
    published_at: Option<Timestamp>,
    is_paid: bool,
    /// The amount, for a paid library.
    #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0))]
    price: Option<f64>,
    /// Three upper-case letters, e.g. `USD`.
    currency: &'a str,
    show_asset_count: bool,
    allow_individual_downloads: bool,
    /// Whether the library's zip (and a signed link to it) may be had.
    allow_bulk_download: bool,
    /// Reads of the detail, this one included.
    view_count: u64,
    created_at: Timestamp,
    updated_at: Timestamp,
    workspace_id: Option<&'a str>,
}

impl<'a> LibraryHead<'a> {
    fn of(l: &'a Library) -> Self {
        let settings = &l.settings;
        LibraryHead {
            id: l.id,
            title: &settings.title,
            slug: &l.slug,
            description: settings.description.as_deref(),
            cover_image_path: settings.cover_image_path.as_deref(),
            cover_overlay_color: settings.cover_overlay_color.as_deref(),
            cover_overlay_opacity: settings.cover_overlay_opacity,
            published_at: opt_ts(l.published_at),
            is_paid: settings.is_paid,
            price: settings.price,
            currency: &settings.currency,
            show_asset_count: settings.show_asset_count,
            allow_individual_downloads: settings.allow_individual_downloads,
            allow_bulk_download: settings.allow_bulk_download,
            view_count: l.view_count,
            created_at: Timestamp(l.created_at),
            updated_at: Timestamp(l.updated_at),
            workspace_id: settings.workspace_id.as_deref(),
        }
    }
}

struct SectionsJson<'d, 'a>(&'d LibraryDetail<'a>);

impl Serialize for SectionsJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let detail = self.0;
        let mut seq = s.serialize_seq(Some(detail.sections.len()))?;
        for (section, range) in &detail.sections {
            let content = if detail.include_assets {
                SectionContent::Assets {
                    assets: AssetsJson(detail, range.clone()),
                }
            } else {
                SectionContent::Count {
                    asset_count: range.len(),
                }
            };
            seq.serialize_element(&SectionWire {
                head: SectionHead::of(section),
                content,
            })?;
        }
        seq.end()
    }
}

/// A section on the wire: its fields, then its assets or their number.
#[derive(Serialize)]
struct SectionWire<'d, 'a> {
    #[serde(flatten)]
    head: SectionHead<'a>,
    #[serde(flatten)]
    content: SectionContent<'d, 'a>,
}

/// The fields every section of a page has, in the order they are written.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct SectionHead<'a> {
    id: Uuid,
    title: &'a str,
    description: Option<&'a str>,
    display_order: u32,
    collapsed_by_default: bool,
}

impl<'a> SectionHead<'a> {
    fn of(section: &'a Section) -> Self {
        SectionHead {
            id: section.id,
            title: &section.title,
            description: section.description.as_deref(),
            display_order: section.display_order,
            collapsed_by_default: section.collapsed_by_default,
        }
    }
}

/// What a section holds after its fields: its assets (with `include_assets`, and in the
/// answer to a write), else their number. The document names each variant's schema
/// (`SectionWithAssets`, `SectionWithAssetCount`), in this order.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub(crate) enum SectionContent<'d, 'a> {
    /// The section's assets.
    Assets {
        #[cfg_attr(feature = "openapi", schema(value_type = Vec<LibraryAsset>))]
        assets: AssetsJson<'d, 'a>,
    },
    /// The number of the section's assets.
    Count { asset_count: usize },
}

pub(crate) struct AssetsJson<'d, 'a>(&'d LibraryDetail<'a>, Range<usize>);

impl Serialize for AssetsJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let AssetsJson(detail, range) = self;
        let entries = &detail.entries[range.clone()];
        let mut seq = s.serialize_seq(Some(entries.len()))?;
        for row in entries {
            seq.serialize_element(&LibraryAsset::of(row, detail.files_base_url))?;
        }
        seq.end()
    }
}

/// An asset as a library shows it.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct LibraryAsset<'a> {
    /// The asset's id.
    id: Uuid,
    /// The library's title for the asset, else its own.
    title: &'a str,
    /// The library's description for the asset, else its own.
    description: Option<&'a str>,
    asset_type: AssetType,
    /// The thumbnail's path joined to the server's files base URL (`/files/` by default).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    thumbnail_url: Option<FileUrl<'a>>,
    /// A ThumbHash of the thumbnail, base64: a blurred stand-in drawn until it loads.
    thumbnail_placeholder: Option<&'a str>,
    /// Playing time of an audio or video file in seconds, to the millisecond; null for other
    /// types and where the file does not say.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
    duration_seconds: Option<Seconds>,
    /// The asset's tags, in its order: a page may filter its cards by them.
    tags: &'a [String],
    display_order: u32,
}

impl<'a> LibraryAsset<'a> {
    fn of(row: &'a EntryRow, base: &'a str) -> Self {
        let (entry, asset) = (&row.entry, &row.asset);
        LibraryAsset {
            id: entry.asset_id,
            title: entry.title.as_deref().unwrap_or(&asset.title),
            description: entry
                .description
                .as_deref()
                .or(asset.description.as_deref()),
            asset_type: asset.asset_type,
            thumbnail_url: asset.thumbnail_path.as_deref().map(|p| FileUrl(base, p)),
            thumbnail_placeholder: asset.thumbnail_placeholder.as_deref(),
            duration_seconds: asset.duration_ms.map(Seconds),
            tags: &asset.tags,
            display_order: entry.display_order,
        }
    }
}

/// A file-store path joined to the files base URL, written without an allocation.
#[derive(Debug, Clone, Copy)]
pub struct FileUrl<'a>(pub &'a str, pub &'a str);

impl fmt::Display for FileUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let base = self.0.trim_end_matches('/');
        let path = self.1.trim_start_matches('/');
        write!(f, "{base}/{path}")
    }
}

impl Serialize for FileUrl<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
#[path = "tree_test.rs"]
mod tests;
