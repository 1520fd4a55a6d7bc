//! The upgrade to format 5: asset records gain the thumbnail's placeholder and what an audio
//! or video file plays ([`MediaRec`]), and the copies entries keep gain the placeholder and the
//! playing time. Both are new trailing fields, so a record of format 4 ends where one of
//! format 5 goes on: each decodes only as its own layout (a short record is an error, and so
//! are trailing bytes), and the upgrade tells them apart by trying format 5 first. It rewrites
//! what is still of format 4 with the new fields empty and leaves the rest, so a run cut short
//! is simply run again on the next open.
//!
//! Format 6 adds tags and the file's checksum to asset records and tags to entry copies, again
//! as trailing fields ([`AssetRec5`], [`ItemRec5`] are format 5's layouts): the same rewrite
//! brings records of format 4 or 5 to the current layout, trying the current one first, then
//! format 5's, then format 4's.
//!
//! Asset records are rewritten before the older upgrades run (they read asset records of the
//! current layout), entry copies after them (the upgrade to 3 writes copies of the current
//! layout, and formats 3 and 4 stored copies of their own).

use serde::{Deserialize, Serialize};
use sled::Batch;

use crate::Inner;
use crate::error::Error;
use crate::record::{AssetRec, EntryCopy, ItemRec, MediaRec, Ts, decode, encode};

/// Records per batch.
const CHUNK: usize = 4096;

/// An asset record of formats 1 to 4.
#[derive(Deserialize, Serialize)]
pub(crate) struct AssetRec4 {
    title: String,
    slug: String,
    description: Option<String>,
    asset_type: u8,
    file_path: Option<String>,
    file_size: Option<u64>,
    mime_type: Option<String>,
    thumbnail_path: Option<String>,
    page_count: Option<u64>,
    word_count: Option<u64>,
    width: Option<u32>,
    height: Option<u32>,
    external_url: Option<String>,
    video_embed: Option<String>,
    is_public: bool,
    published: bool,
    created_at: Ts,
    updated_at: Ts,
}

/// An asset record of format 5.
#[derive(Deserialize, Serialize)]
pub(crate) struct AssetRec5 {
    title: String,
    slug: String,
    description: Option<String>,
    asset_type: u8,
    file_path: Option<String>,
    file_size: Option<u64>,
    mime_type: Option<String>,
    thumbnail_path: Option<String>,
    page_count: Option<u64>,
    word_count: Option<u64>,
    width: Option<u32>,
    height: Option<u32>,
    external_url: Option<String>,
    video_embed: Option<String>,
    is_public: bool,
    published: bool,
    created_at: Ts,
    updated_at: Ts,
    thumbnail_placeholder: Option<String>,
    media: MediaRec,
}

impl From<AssetRec5> for AssetRec {
    fn from(a: AssetRec5) -> Self {
        AssetRec {
            title: a.title,
            slug: a.slug,
            description: a.description,
            asset_type: a.asset_type,
            file_path: a.file_path,
            file_size: a.file_size,
            mime_type: a.mime_type,
            thumbnail_path: a.thumbnail_path,
            page_count: a.page_count,
            word_count: a.word_count,
            width: a.width,
            height: a.height,
            external_url: a.external_url,
            video_embed: a.video_embed,
            is_public: a.is_public,
            published: a.published,
            created_at: a.created_at,
            updated_at: a.updated_at,
            thumbnail_placeholder: a.thumbnail_placeholder,
            media: a.media,
            tags: Vec::new(),
            checksum: None,
            workspace_id: None,
        }
    }
}

impl From<AssetRec4> for AssetRec {
    fn from(a: AssetRec4) -> Self {
        AssetRec {
            title: a.title,
            slug: a.slug,
            description: a.description,
            asset_type: a.asset_type,
            file_path: a.file_path,
            file_size: a.file_size,
            mime_type: a.mime_type,
            thumbnail_path: a.thumbnail_path,
            page_count: a.page_count,
            word_count: a.word_count,
            width: a.width,
            height: a.height,
            external_url: a.external_url,
            video_embed: a.video_embed,
            is_public: a.is_public,
            published: a.published,
            created_at: a.created_at,
            updated_at: a.updated_at,
            thumbnail_placeholder: None,
            media: MediaRec::default(),
            tags: Vec::new(),
            checksum: None,
            workspace_id: None,
        }
    }
}

/// An entry's copy of its asset's page fields, formats 3 and 4.
#[derive(Deserialize, Serialize)]
pub(crate) struct EntryCopy4 {
    title: String,
    description: Option<String>,
    asset_type: u8,
    thumbnail_path: Option<String>,
    published: bool,
}

/// A library item of formats 3 and 4: [`ItemRec`] with [`EntryCopy4`] (same variants, same
/// order).
#[derive(Deserialize, Serialize)]
pub(crate) enum ItemRec4 {
    Section {
        id: [u8; 16],
        title: String,
        description: Option<String>,
        display_order: u32,
        collapsed_by_default: bool,
    },
    BareEntry {
        asset_id: [u8; 16],
        section_id: Option<[u8; 16]>,
        display_order: u32,
        title: Option<String>,
        description: Option<String>,
    },
    Removed,
    Entry {
        asset_id: [u8; 16],
        section_id: Option<[u8; 16]>,
        display_order: u32,
        title: Option<String>,
        description: Option<String>,
        asset: EntryCopy4,
    },
}

/// An entry's copy of its asset's page fields, format 5.
#[derive(Deserialize, Serialize)]
pub(crate) struct EntryCopy5 {
    title: String,
    description: Option<String>,
    asset_type: u8,
    thumbnail_path: Option<String>,
    published: bool,
    thumbnail_placeholder: Option<String>,
    duration_ms: Option<u64>,
}

/// A library item of format 5: [`ItemRec`] with [`EntryCopy5`] (same variants, same order).
#[derive(Deserialize, Serialize)]
pub(crate) enum ItemRec5 {
    Section {
        id: [u8; 16],
        title: String,
        description: Option<String>,
        display_order: u32,
        collapsed_by_default: bool,
    },
    BareEntry {
        asset_id: [u8; 16],
        section_id: Option<[u8; 16]>,
        display_order: u32,
        title: Option<String>,
        description: Option<String>,
    },
    Removed,
    Entry {
        asset_id: [u8; 16],
        section_id: Option<[u8; 16]>,
        display_order: u32,
        title: Option<String>,
        description: Option<String>,
        asset: EntryCopy5,
    },
}

impl Inner {
    /// Rewrites every asset record of format 4, 5 or 6 in the current layout. A format-6
    /// record is the current one but for the workspace, last: the record with `None`
    /// (postcard's one zero byte) appended.
    pub(crate) fn assets_to_current(&self) -> Result<(), Error> {
        let mut batch = Batch::default();
        let mut queued = 0;
        for kv in self.assets.iter() {
            let (key, value) = kv?;
            if decode::<AssetRec>(AssetRec::WHAT, &value).is_ok() {
                continue;
            }
            let with_none = [&value[..], &[0]].concat();
            let rec = match decode::<AssetRec>(AssetRec::WHAT, &with_none) {
                Ok(rec) => rec,
                Err(_) => match decode::<AssetRec5>(AssetRec::WHAT, &value) {
                    Ok(rec) => AssetRec::from(rec),
                    Err(_) => AssetRec::from(decode::<AssetRec4>(AssetRec::WHAT, &value)?),
                },
            };
            batch.insert(key, encode(AssetRec::WHAT, &rec)?);
            queued += 1;
            if queued == CHUNK {
                self.assets.apply_batch(std::mem::take(&mut batch))?;
                queued = 0;
            }
        }
        self.assets.apply_batch(batch)?;
        Ok(())
    }

    /// Rewrites every library item that holds an entry copy of format 4 or 5 in the current
    /// layout (items of old generations too: they are read no more, but stay decodable).
    pub(crate) fn entries_to_current(&self) -> Result<(), Error> {
        let mut batch = Batch::default();
        let mut queued = 0;
        for kv in self.library_items.iter() {
            let (key, value) = kv?;
            if decode::<ItemRec>(ItemRec::WHAT, &value).is_ok() {
                continue;
            }
            let item = match decode::<ItemRec5>(ItemRec::WHAT, &value) {
                Ok(ItemRec5::Entry {
                    asset_id,
                    section_id,
                    display_order,
                    title,
                    description,
                    asset,
                }) => ItemRec::Entry {
                    asset_id,
                    section_id,
                    display_order,
                    title,
                    description,
                    asset: EntryCopy {
                        title: asset.title,
                        description: asset.description,
                        asset_type: asset.asset_type,
                        thumbnail_path: asset.thumbnail_path,
                        published: asset.published,
                        thumbnail_placeholder: asset.thumbnail_placeholder,
                        duration_ms: asset.duration_ms,
                        tags: Vec::new(),
                    },
                },
                // Sections, bare and removed entries have one layout in every format, so
                // they decoded above.
                Ok(_) => continue,
                Err(_) => {
                    let ItemRec4::Entry {
                        asset_id,
                        section_id,
                        display_order,
                        title,
                        description,
                        asset,
                    } = decode(ItemRec::WHAT, &value)?
                    else {
                        continue;
                    };
                    ItemRec::Entry {
                        asset_id,
                        section_id,
                        display_order,
                        title,
                        description,
                        asset: EntryCopy {
                            title: asset.title,
                            description: asset.description,
                            asset_type: asset.asset_type,
                            thumbnail_path: asset.thumbnail_path,
                            published: asset.published,
                            thumbnail_placeholder: None,
                            duration_ms: None,
                            tags: Vec::new(),
                        },
                    }
                }
            };
            batch.insert(key, encode(ItemRec::WHAT, &item)?);
            queued += 1;
            if queued == CHUNK {
                self.library_items.apply_batch(std::mem::take(&mut batch))?;
                queued = 0;
            }
        }
        self.library_items.apply_batch(batch)?;
        Ok(())
    }
}

/// Format 4's and format 5's layouts of current records, for the upgrades' tests.
#[cfg(test)]
pub(crate) mod downgrade {
    use super::*;

    /// `rec` as format 4 stored it: without the fields format 5 adds.
    pub(crate) fn asset(rec: AssetRec) -> AssetRec4 {
        AssetRec4 {
            title: rec.title,
            slug: rec.slug,
            description: rec.description,
            asset_type: rec.asset_type,
            file_path: rec.file_path,
            file_size: rec.file_size,
            mime_type: rec.mime_type,
            thumbnail_path: rec.thumbnail_path,
            page_count: rec.page_count,
            word_count: rec.word_count,
            width: rec.width,
            height: rec.height,
            external_url: rec.external_url,
            video_embed: rec.video_embed,
            is_public: rec.is_public,
            published: rec.published,
            created_at: rec.created_at,
            updated_at: rec.updated_at,
        }
    }

    /// `rec` as format 5 stored it: without the fields format 6 adds.
    pub(crate) fn asset5(rec: AssetRec) -> AssetRec5 {
        AssetRec5 {
            title: rec.title,
            slug: rec.slug,
            description: rec.description,
            asset_type: rec.asset_type,
            file_path: rec.file_path,
            file_size: rec.file_size,
            mime_type: rec.mime_type,
            thumbnail_path: rec.thumbnail_path,
            page_count: rec.page_count,
            word_count: rec.word_count,
            width: rec.width,
            height: rec.height,
            external_url: rec.external_url,
            video_embed: rec.video_embed,
            is_public: rec.is_public,
            published: rec.published,
            created_at: rec.created_at,
            updated_at: rec.updated_at,
            thumbnail_placeholder: rec.thumbnail_placeholder,
            media: rec.media,
        }
    }

    /// `item` as format 5 stored it; `None` for items whose layout did not change.
    pub(crate) fn item5(item: ItemRec) -> Option<ItemRec5> {
        let ItemRec::Entry {
            asset_id,
            section_id,
            display_order,
            title,
            description,
            asset,
        } = item
        else {
            return None;
        };
        Some(ItemRec5::Entry {
            asset_id,
            section_id,
            display_order,
            title,
            description,
            asset: EntryCopy5 {
                title: asset.title,
                description: asset.description,
                asset_type: asset.asset_type,
                thumbnail_path: asset.thumbnail_path,
                published: asset.published,
                thumbnail_placeholder: asset.thumbnail_placeholder,
                duration_ms: asset.duration_ms,
            },
        })
    }

    /// `item` as format 4 stored it; `None` for items whose layout did not change.
    pub(crate) fn item(item: ItemRec) -> Option<ItemRec4> {
        let ItemRec::Entry {
            asset_id,
            section_id,
            display_order,
            title,
            description,
            asset,
        } = item
        else {
            return None;
        };
        Some(ItemRec4::Entry {
            asset_id,
            section_id,
            display_order,
            title,
            description,
            asset: EntryCopy4 {
                title: asset.title,
                description: asset.description,
                asset_type: asset.asset_type,
                thumbnail_path: asset.thumbnail_path,
                published: asset.published,
            },
        })
    }
}
