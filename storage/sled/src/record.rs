//! Stored records: this crate's own structs, encoded with postcard, so the disk format is
//! decided here and not by core's serde attributes. Ids live in keys, counters in the
//! `counters` tree; the records hold the rest.

use assetlib_core::{
    ApiKey, Asset, EntryAsset, Library, LibraryEntry, LibrarySettings, LibraryUse, Media, Section,
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use uuid::Uuid;

use crate::error::Error;
use crate::tree_keys;

/// Encodes a record.
pub(crate) fn encode<T: Serialize>(what: &'static str, value: &T) -> Result<Vec<u8>, Error> {
    postcard::to_allocvec(value).map_err(|source| Error::Encode { what, source })
}

/// Decodes a whole record: trailing bytes are corruption too.
pub(crate) fn decode<T: DeserializeOwned>(what: &'static str, bytes: &[u8]) -> Result<T, Error> {
    let (value, rest) =
        postcard::take_from_bytes(bytes).map_err(|source| Error::Decode { what, source })?;
    if !rest.is_empty() {
        return Err(Error::invalid(
            what,
            format!("{} trailing bytes", rest.len()),
        ));
    }
    Ok(value)
}

/// A timestamp, exact to the nanosecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Ts {
    secs: i64,
    nanos: u32,
}

impl From<&DateTime<Utc>> for Ts {
    fn from(t: &DateTime<Utc>) -> Self {
        Ts {
            secs: t.timestamp(),
            nanos: t.timestamp_subsec_nanos(),
        }
    }
}

impl Ts {
    pub(crate) fn time(self) -> Result<DateTime<Utc>, Error> {
        DateTime::from_timestamp(self.secs, self.nanos)
            .ok_or_else(|| Error::invalid("timestamp", format!("{}s {}ns", self.secs, self.nanos)))
    }
}

fn opt_time(t: Option<Ts>) -> Result<Option<DateTime<Utc>>, Error> {
    t.map(Ts::time).transpose()
}

/// An asset, without its id (the key) and download count (the `counters` tree).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct AssetRec {
    pub(crate) title: String,
    pub(crate) slug: String,
    pub(crate) description: Option<String>,
    pub(crate) asset_type: u8,
    pub(crate) file_path: Option<String>,
    pub(crate) file_size: Option<u64>,
    pub(crate) mime_type: Option<String>,
    pub(crate) thumbnail_path: Option<String>,
    pub(crate) page_count: Option<u64>,
    pub(crate) word_count: Option<u64>,
    pub(crate) width: Option<u32>,
    pub(crate) height: Option<u32>,
    pub(crate) external_url: Option<String>,
    pub(crate) video_embed: Option<String>,
    pub(crate) is_public: bool,
    pub(crate) published: bool,
    pub(crate) created_at: Ts,
    pub(crate) updated_at: Ts,
    /// Format 5 on: the thumbnail's ThumbHash and what an audio or video file plays. Kept
    /// last, so a format-4 record (which ends before them) never decodes as this one.
    pub(crate) thumbnail_placeholder: Option<String>,
    pub(crate) media: MediaRec,
    /// Format 6 on: the tags and the file's SHA-256, kept last for the same reason.
    pub(crate) tags: Vec<String>,
    pub(crate) checksum: Option<[u8; 32]>,
    /// Format 7 on: the asset's workspace, kept last for the same reason.
    pub(crate) workspace_id: Option<String>,
}

/// What an audio or video file plays ([`Media`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MediaRec {
    pub(crate) duration_ms: Option<u64>,
    pub(crate) sample_rate: Option<u32>,
    pub(crate) channels: Option<u8>,
    pub(crate) bitrate: Option<u32>,
    pub(crate) video_codec: Option<String>,
}

impl From<&Media> for MediaRec {
    fn from(m: &Media) -> Self {
        MediaRec {
            duration_ms: m.duration_ms,
            sample_rate: m.sample_rate,
            channels: m.channels,
            bitrate: m.bitrate,
            video_codec: m.video_codec.clone(),
        }
    }
}

impl From<MediaRec> for Media {
    fn from(m: MediaRec) -> Self {
        Media {
            duration_ms: m.duration_ms,
            sample_rate: m.sample_rate,
            channels: m.channels,
            bitrate: m.bitrate,
            video_codec: m.video_codec,
        }
    }
}

impl AssetRec {
    pub(crate) const WHAT: &'static str = "asset";

    pub(crate) fn new(a: &Asset) -> Self {
        AssetRec {
            title: a.title.clone(),
            slug: a.slug.clone(),
            description: a.description.clone(),
            asset_type: tree_keys::type_code(a.asset_type),
            file_path: a.file_path.clone(),
            file_size: a.file_size,
            mime_type: a.mime_type.clone(),
            thumbnail_path: a.thumbnail_path.clone(),
            page_count: a.page_count,
            word_count: a.word_count,
            width: a.width,
            height: a.height,
            external_url: a.external_url.clone(),
            video_embed: a.video_embed.clone(),
            is_public: a.is_public,
            published: a.published,
            created_at: (&a.created_at).into(),
            updated_at: (&a.updated_at).into(),
            thumbnail_placeholder: a.thumbnail_placeholder.clone(),
            media: (&a.media).into(),
            tags: a.tags.clone(),
            checksum: a.checksum_sha256,
            workspace_id: a.workspace_id.clone(),
        }
    }

    pub(crate) fn into_asset(self, id: Uuid, download_count: u64) -> Result<Asset, Error> {
        Ok(Asset {
            id,
            title: self.title,
            slug: self.slug,
            description: self.description,
            asset_type: tree_keys::type_from_code(self.asset_type)?,
            file_path: self.file_path,
            file_size: self.file_size,
            mime_type: self.mime_type,
            thumbnail_path: self.thumbnail_path,
            thumbnail_placeholder: self.thumbnail_placeholder,
            page_count: self.page_count,
            word_count: self.word_count,
            width: self.width,
            height: self.height,
            media: self.media.into(),
            external_url: self.external_url,
            video_embed: self.video_embed,
            download_count,
            is_public: self.is_public,
            published: self.published,
            tags: self.tags,
            checksum_sha256: self.checksum,
            created_at: self.created_at.time()?,
            updated_at: self.updated_at.time()?,
            workspace_id: self.workspace_id,
        })
    }
}

/// A library, without its id (the key) and view count (the `counters` tree), plus where its
/// items are and what the list shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LibraryRec {
    pub(crate) title: String,
    pub(crate) slug: String,
    pub(crate) description: Option<String>,
    pub(crate) workspace_id: Option<String>,
    pub(crate) cover_image_path: Option<String>,
    pub(crate) cover_overlay_color: Option<String>,
    pub(crate) cover_overlay_opacity: Option<f64>,
    pub(crate) show_asset_count: bool,
    pub(crate) allow_individual_downloads: bool,
    pub(crate) allow_bulk_download: bool,
    pub(crate) is_paid: bool,
    pub(crate) price: Option<f64>,
    pub(crate) currency: String,
    pub(crate) published: bool,
    pub(crate) published_at: Option<Ts>,
    pub(crate) created_at: Ts,
    pub(crate) updated_at: Ts,
    /// The generation whose items (`library_items` keys `id | generation | position`) are
    /// this document's. Unique per write, never reused.
    pub(crate) generation: u64,
    /// Number of items (sections and entries) of that generation.
    pub(crate) item_count: u32,
    /// Entries whose asset is published, kept exact by every write of the library and every
    /// change of `published` or delete of an asset it holds.
    pub(crate) asset_count: u64,
}

impl LibraryRec {
    pub(crate) const WHAT: &'static str = "library";

    pub(crate) fn new(l: &Library, generation: u64, item_count: u32, asset_count: u64) -> Self {
        LibraryRec {
            title: l.settings.title.clone(),
            slug: l.slug.clone(),
            description: l.settings.description.clone(),
            workspace_id: l.settings.workspace_id.clone(),
            cover_image_path: l.settings.cover_image_path.clone(),
            cover_overlay_color: l.settings.cover_overlay_color.clone(),
            cover_overlay_opacity: l.settings.cover_overlay_opacity,
            show_asset_count: l.settings.show_asset_count,
            allow_individual_downloads: l.settings.allow_individual_downloads,
            allow_bulk_download: l.settings.allow_bulk_download,
            is_paid: l.settings.is_paid,
            price: l.settings.price,
            currency: l.settings.currency.clone(),
            published: l.settings.published,
            published_at: l.published_at.as_ref().map(Ts::from),
            created_at: (&l.created_at).into(),
            updated_at: (&l.updated_at).into(),
            generation,
            item_count,
            asset_count,
        }
    }

    /// The publication time under which the library is listed, if it is listed.
    pub(crate) fn listed_at(&self) -> Result<Option<DateTime<Utc>>, Error> {
        match (self.published, self.published_at) {
            (true, Some(t)) => Ok(Some(t.time()?)),
            _ => Ok(None),
        }
    }

    /// How [`assetlib_core::AssetStore::asset_usage`] names this library.
    pub(crate) fn library_use(&self, id: Uuid) -> LibraryUse {
        LibraryUse {
            id,
            title: self.title.clone(),
            slug: self.slug.clone(),
            published: self.published,
        }
    }

    pub(crate) fn into_library(self, id: Uuid, view_count: u64) -> Result<Library, Error> {
        Ok(Library {
            id,
            settings: LibrarySettings {
                title: self.title,
                description: self.description,
                workspace_id: self.workspace_id,
                cover_image_path: self.cover_image_path,
                cover_overlay_color: self.cover_overlay_color,
                cover_overlay_opacity: self.cover_overlay_opacity,
                show_asset_count: self.show_asset_count,
                allow_individual_downloads: self.allow_individual_downloads,
                allow_bulk_download: self.allow_bulk_download,
                is_paid: self.is_paid,
                price: self.price,
                currency: self.currency,
                published: self.published,
            },
            slug: self.slug,
            published_at: opt_time(self.published_at)?,
            view_count,
            created_at: self.created_at.time()?,
            updated_at: self.updated_at.time()?,
        })
    }
}

/// One item of a library document, stored under `id | generation | position` in display
/// order: each section followed by its entries, then the unsectioned entries. A deleted
/// asset's entries become [`ItemRec::Removed`] in place, so the other items keep their
/// positions and the record its item count.
///
/// Variants are encoded by their index, so their order is part of the format: format 3 added
/// [`ItemRec::Entry`] at the end and kept format 2's entry, without the asset's fields, as
/// [`ItemRec::BareEntry`], which only the upgrade reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum ItemRec {
    Section {
        id: [u8; 16],
        title: String,
        description: Option<String>,
        display_order: u32,
        collapsed_by_default: bool,
    },
    /// An entry as formats 1 and 2 stored it: no copy of the asset's fields. Format 3 has
    /// none (the upgrade rewrites each as [`ItemRec::Entry`]).
    BareEntry {
        asset_id: [u8; 16],
        section_id: Option<[u8; 16]>,
        display_order: u32,
        title: Option<String>,
        description: Option<String>,
    },
    /// The place of an entry whose asset was deleted; gone when the library is next written.
    Removed,
    /// An entry with a copy of the fields of its asset that a library page shows, so a load
    /// reads no asset record. Every change of those fields rewrites the copies in the same
    /// transaction (found through `asset_uses`).
    Entry {
        asset_id: [u8; 16],
        section_id: Option<[u8; 16]>,
        display_order: u32,
        title: Option<String>,
        description: Option<String>,
        asset: EntryCopy,
    },
}

impl ItemRec {
    pub(crate) const WHAT: &'static str = "library item";

    pub(crate) fn section(s: &Section) -> Self {
        ItemRec::Section {
            id: s.id.into_bytes(),
            title: s.title.clone(),
            description: s.description.clone(),
            display_order: s.display_order,
            collapsed_by_default: s.collapsed_by_default,
        }
    }

    pub(crate) fn entry(e: &LibraryEntry, asset: EntryCopy) -> Self {
        ItemRec::Entry {
            asset_id: e.asset_id.into_bytes(),
            section_id: e.section_id.map(Uuid::into_bytes),
            display_order: e.display_order,
            title: e.title.clone(),
            description: e.description.clone(),
            asset,
        }
    }

    /// The asset of an entry (with or without copies), `None` for other items.
    pub(crate) fn asset_id(&self) -> Option<Uuid> {
        match self {
            ItemRec::Entry { asset_id, .. } | ItemRec::BareEntry { asset_id, .. } => {
                Some(Uuid::from_bytes(*asset_id))
            }
            ItemRec::Section { .. } | ItemRec::Removed => None,
        }
    }

    /// This entry with `asset` as its copy; a bare entry gains one. Other items as they are.
    pub(crate) fn with_copy(self, asset: EntryCopy) -> Self {
        match self {
            ItemRec::Entry {
                asset_id,
                section_id,
                display_order,
                title,
                description,
                ..
            }
            | ItemRec::BareEntry {
                asset_id,
                section_id,
                display_order,
                title,
                description,
            } => ItemRec::Entry {
                asset_id,
                section_id,
                display_order,
                title,
                description,
                asset,
            },
            other => other,
        }
    }
}

/// The fields of an asset that a library page shows ([`EntryAsset`]), as each entry of the
/// asset keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EntryCopy {
    pub(crate) title: String,
    pub(crate) description: Option<String>,
    pub(crate) asset_type: u8,
    pub(crate) thumbnail_path: Option<String>,
    pub(crate) published: bool,
    /// Format 5 on, kept last (see [`AssetRec::thumbnail_placeholder`]).
    pub(crate) thumbnail_placeholder: Option<String>,
    pub(crate) duration_ms: Option<u64>,
    /// Format 6 on, kept last: the asset's tags.
    pub(crate) tags: Vec<String>,
}

impl EntryCopy {
    /// The copy of `asset`'s fields.
    pub(crate) fn of(asset: &AssetRec) -> Self {
        EntryCopy {
            title: asset.title.clone(),
            description: asset.description.clone(),
            asset_type: asset.asset_type,
            thumbnail_path: asset.thumbnail_path.clone(),
            published: asset.published,
            thumbnail_placeholder: asset.thumbnail_placeholder.clone(),
            duration_ms: asset.media.duration_ms,
            tags: asset.tags.clone(),
        }
    }

    pub(crate) fn into_entry_asset(self) -> Result<EntryAsset, Error> {
        Ok(EntryAsset {
            asset_type: tree_keys::type_from_code(self.asset_type)?,
            title: self.title,
            description: self.description,
            thumbnail_path: self.thumbnail_path,
            thumbnail_placeholder: self.thumbnail_placeholder,
            duration_ms: self.duration_ms,
            published: self.published,
            tags: self.tags,
        })
    }
}

/// The libraries holding one asset: the value of its key (its id) in the `asset_uses` tree,
/// by library id ascending. An asset no library holds has no key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct UsesRec {
    pub(crate) holders: Vec<HolderRec>,
}

/// One library holding an asset, and the positions (ascending) of the asset's entries among
/// the items of the library's current generation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct HolderRec {
    pub(crate) library: [u8; 16],
    pub(crate) positions: Vec<u32>,
}

impl HolderRec {
    pub(crate) fn library(&self) -> Uuid {
        Uuid::from_bytes(self.library)
    }
}

impl UsesRec {
    pub(crate) const WHAT: &'static str = "asset uses";

    /// Records that `library` holds the asset at `positions` (replacing what it said before).
    pub(crate) fn set(&mut self, library: Uuid, positions: Vec<u32>) {
        let library = library.into_bytes();
        match self.holders.binary_search_by(|h| h.library.cmp(&library)) {
            Ok(i) => self.holders[i].positions = positions,
            Err(i) => self.holders.insert(i, HolderRec { library, positions }),
        }
    }

    /// Records that `library` no longer holds the asset.
    pub(crate) fn remove(&mut self, library: Uuid) {
        let library = library.into_bytes();
        self.holders.retain(|h| h.library != library);
    }
}

/// An API key record, without its id (the key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KeyRec {
    pub(crate) name: String,
    pub(crate) key_hash: [u8; 32],
    pub(crate) scopes: Vec<u8>,
    pub(crate) created_at: Ts,
    pub(crate) expires_at: Option<Ts>,
    pub(crate) revoked_at: Option<Ts>,
    /// Format 7 on: the key's workspace (`None`: a global key), kept last, so an older
    /// record (which ends before it) never decodes as this one.
    pub(crate) workspace_id: Option<String>,
}

impl KeyRec {
    pub(crate) const WHAT: &'static str = "API key";

    pub(crate) fn new(k: &ApiKey) -> Self {
        KeyRec {
            name: k.name.clone(),
            key_hash: k.key_hash,
            scopes: k.scopes.iter().map(|s| tree_keys::scope_code(*s)).collect(),
            created_at: (&k.created_at).into(),
            expires_at: k.expires_at.as_ref().map(Ts::from),
            revoked_at: k.revoked_at.as_ref().map(Ts::from),
            workspace_id: k.workspace_id.clone(),
        }
    }

    pub(crate) fn into_key(self, id: Uuid) -> Result<ApiKey, Error> {
        Ok(ApiKey {
            id,
            name: self.name,
            key_hash: self.key_hash,
            scopes: self
                .scopes
                .into_iter()
                .map(tree_keys::scope_from_code)
                .collect::<Result<_, _>>()?,
            created_at: self.created_at.time()?,
            expires_at: opt_time(self.expires_at)?,
            revoked_at: opt_time(self.revoked_at)?,
            workspace_id: self.workspace_id,
        })
    }
}

/// A 16-byte id stored as a value (slug claims, key hashes).
pub(crate) fn decode_id(what: &'static str, bytes: &[u8]) -> Result<Uuid, Error> {
    <[u8; 16]>::try_from(bytes)
        .map(Uuid::from_bytes)
        .map_err(|_| Error::invalid(what, format!("{} bytes, expected 16", bytes.len())))
}
