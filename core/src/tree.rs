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

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use uuid::Uuid;

use crate::model::{EntryRow, LibraryRows, Section};
use crate::render::{Timestamp, opt_ts};

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
        let l = &self.rows.library;
        let mut m = s.serialize_map(Some(20))?;
        m.serialize_entry("id", &l.id)?;
        m.serialize_entry("title", &l.settings.title)?;
        m.serialize_entry("slug", &l.slug)?;
        m.serialize_entry("description", &l.settings.description)?;
        m.serialize_entry("cover_image_path", &l.settings.cover_image_path)?;
        m.serialize_entry("cover_overlay_color", &l.settings.cover_overlay_color)?;
        m.serialize_entry("cover_overlay_opacity", &l.settings.cover_overlay_opacity)?;
        m.serialize_entry("published_at", &opt_ts(l.published_at))?;
        m.serialize_entry("is_paid", &l.settings.is_paid)?;
        m.serialize_entry("price", &l.settings.price)?;
        m.serialize_entry("currency", &l.settings.currency)?;
        m.serialize_entry("show_asset_count", &l.settings.show_asset_count)?;
        m.serialize_entry(
            "allow_individual_downloads",
            &l.settings.allow_individual_downloads,
        )?;
        m.serialize_entry("allow_bulk_download", &l.settings.allow_bulk_download)?;
        m.serialize_entry("view_count", &l.view_count)?;
        m.serialize_entry("created_at", &Timestamp(l.created_at))?;
        m.serialize_entry("updated_at", &Timestamp(l.updated_at))?;
        m.serialize_entry("workspace_id", &l.settings.workspace_id)?;
        m.serialize_entry("sections", &SectionsJson(self))?;
        m.serialize_entry(
            "unsectioned_assets",
            &AssetsJson(self, self.unsectioned.clone()),
        )?;
        m.end()
    }
}

struct SectionsJson<'d, 'a>(&'d LibraryDetail<'a>);

impl Serialize for SectionsJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let detail = self.0;
        let mut seq = s.serialize_seq(Some(detail.sections.len()))?;
        for (section, range) in &detail.sections {
            seq.serialize_element(&SectionJson(detail, section, range.clone()))?;
        }
        seq.end()
    }
}

struct SectionJson<'d, 'a>(&'d LibraryDetail<'a>, &'a Section, Range<usize>);

impl Serialize for SectionJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let SectionJson(detail, section, range) = self;
        let mut m = s.serialize_map(Some(6))?;
        m.serialize_entry("id", &section.id)?;
        m.serialize_entry("title", &section.title)?;
        m.serialize_entry("description", &section.description)?;
        m.serialize_entry("display_order", &section.display_order)?;
        m.serialize_entry("collapsed_by_default", &section.collapsed_by_default)?;
        if detail.include_assets {
            m.serialize_entry("assets", &AssetsJson(detail, range.clone()))?;
        } else {
            m.serialize_entry("asset_count", &range.len())?;
        }
        m.end()
    }
}

struct AssetsJson<'d, 'a>(&'d LibraryDetail<'a>, Range<usize>);

impl Serialize for AssetsJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let AssetsJson(detail, range) = self;
        let entries = &detail.entries[range.clone()];
        let mut seq = s.serialize_seq(Some(entries.len()))?;
        for row in entries {
            seq.serialize_element(&LibraryAssetJson(row, detail.files_base_url))?;
        }
        seq.end()
    }
}

struct LibraryAssetJson<'a>(&'a EntryRow, &'a str);

impl Serialize for LibraryAssetJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let LibraryAssetJson(row, base) = self;
        let (entry, asset) = (&row.entry, &row.asset);
        let mut m = s.serialize_map(Some(6))?;
        m.serialize_entry("id", &entry.asset_id)?;
        m.serialize_entry("title", entry.title.as_ref().unwrap_or(&asset.title))?;
        m.serialize_entry(
            "description",
            &entry.description.as_ref().or(asset.description.as_ref()),
        )?;
        m.serialize_entry("asset_type", &asset.asset_type)?;
        let thumb = asset.thumbnail_path.as_deref().map(|p| FileUrl(base, p));
        m.serialize_entry("thumbnail_url", &thumb)?;
        m.serialize_entry("display_order", &entry.display_order)?;
        m.end()
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
