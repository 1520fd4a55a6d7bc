//! Record builders: the records a validated create or library document becomes, with the
//! ids, slugs and timestamps the service chooses.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::ingest::Ingested;
use crate::model::{Asset, Library, LibraryEntry, LibraryWrite, Media, Section};
use crate::validate::{self, LibraryDoc, NewAsset};

/// The current time, to the millisecond (what the API shows is what is sorted on).
pub(crate) fn now() -> DateTime<Utc> {
    let now = Utc::now();
    DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
}

/// A new asset record `id` from a validated create and, for an asset with a file,
/// what was read from the file: the slug of its title (stores make it unique), created now.
pub(crate) fn new_asset(id: Uuid, new: NewAsset, file: Option<Ingested>) -> Asset {
    let now = now();
    let mut asset = Asset {
        id,
        slug: validate::slug_from_title(&new.title, "asset"),
        title: new.title,
        description: new.description,
        asset_type: new.asset_type,
        file_path: None,
        file_size: None,
        mime_type: None,
        thumbnail_path: None,
        thumbnail_placeholder: None,
        page_count: None,
        word_count: None,
        width: None,
        height: None,
        media: Media::default(),
        external_url: new.external_url,
        video_embed: new.video_embed,
        download_count: 0,
        is_public: new.is_public,
        published: new.published,
        tags: new.tags,
        checksum_sha256: None,
        created_at: now,
        updated_at: now,
        workspace_id: new.workspace_id,
    };
    if let Some(file) = file {
        file.into_fields().set_on(&mut asset);
    }
    asset
}

/// Turns a validated document into the records the store keeps; order comes from position.
pub(crate) fn library_write(id: Uuid, doc: LibraryDoc) -> LibraryWrite {
    let now = now();
    let slug_given = doc.slug.is_some();
    let slug = doc
        .slug
        .unwrap_or_else(|| validate::slug_from_title(&doc.settings.title, "library"));
    let mut sections = Vec::with_capacity(doc.sections.len());
    let mut entries = Vec::new();
    let entry = |section_id, display_order, e: validate::EntryDoc| LibraryEntry {
        asset_id: e.asset_id,
        section_id,
        display_order,
        title: e.title,
        description: e.description,
    };
    for (i, s) in doc.sections.into_iter().enumerate() {
        let section_id = s.id.unwrap_or_else(Uuid::new_v4);
        for (j, e) in s.assets.into_iter().enumerate() {
            entries.push(entry(Some(section_id), j as u32, e));
        }
        sections.push(Section {
            id: section_id,
            title: s.title,
            description: s.description,
            display_order: i as u32,
            collapsed_by_default: s.collapsed_by_default,
        });
    }
    for (j, e) in doc.unsectioned_assets.into_iter().enumerate() {
        entries.push(entry(None, j as u32, e));
    }
    LibraryWrite {
        library: Library {
            id,
            slug,
            settings: doc.settings,
            published_at: None,
            view_count: 0,
            created_at: now,
            updated_at: now,
        },
        slug_given,
        sections,
        entries,
    }
}
