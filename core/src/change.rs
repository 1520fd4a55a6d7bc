//! The asset lifecycle's records: a change of an asset's editable fields ([`AssetChange`]),
//! what a change did ([`AssetUpdate`]), what a delete did ([`AssetDeletion`]) and the libraries
//! that hold an asset ([`LibraryUse`]).
//!
//! The merge of a change into an asset is [`AssetChange::apply`], one function every store
//! calls on the record as stored when its change lands, so two concurrent changes of one asset
//! never mix: each applies to the result of the other.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::model::{Asset, Media};

/// The fields a file gives an asset, all read from the file: they change together.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileFields {
    /// Path of the file in the file store.
    pub file_path: Option<String>,
    /// Size of the file in bytes.
    pub file_size: Option<u64>,
    /// Media type of the file.
    pub mime_type: Option<String>,
    /// Path of the thumbnail in the file store.
    pub thumbnail_path: Option<String>,
    /// The ThumbHash of the thumbnail, base64.
    pub thumbnail_placeholder: Option<String>,
    /// Pages of a paged document.
    pub page_count: Option<u64>,
    /// Words of a pdf or document.
    pub word_count: Option<u64>,
    /// Width of an image or video as displayed, in pixels.
    pub width: Option<u32>,
    /// Height of an image or video as displayed, in pixels.
    pub height: Option<u32>,
    /// What an audio or video file plays.
    pub media: Media,
    /// The SHA-256 of the file.
    pub checksum_sha256: Option<[u8; 32]>,
}

impl FileFields {
    /// The file fields of `asset`.
    pub fn of(asset: &Asset) -> Self {
        FileFields {
            file_path: asset.file_path.clone(),
            file_size: asset.file_size,
            mime_type: asset.mime_type.clone(),
            thumbnail_path: asset.thumbnail_path.clone(),
            thumbnail_placeholder: asset.thumbnail_placeholder.clone(),
            page_count: asset.page_count,
            word_count: asset.word_count,
            width: asset.width,
            height: asset.height,
            media: asset.media.clone(),
            checksum_sha256: asset.checksum_sha256,
        }
    }

    /// Writes these fields into `asset`.
    pub fn set_on(self, asset: &mut Asset) {
        asset.file_path = self.file_path;
        asset.file_size = self.file_size;
        asset.mime_type = self.mime_type;
        asset.thumbnail_path = self.thumbnail_path;
        asset.thumbnail_placeholder = self.thumbnail_placeholder;
        asset.page_count = self.page_count;
        asset.word_count = self.word_count;
        asset.width = self.width;
        asset.height = self.height;
        asset.media = self.media;
        asset.checksum_sha256 = self.checksum_sha256;
    }
}

/// An address and the embed it gives (for an external video); they change together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkFields {
    /// The new `external_url` (`None` clears it, where the type allows that).
    pub external_url: Option<String>,
    /// The `video_embed` that follows from it.
    pub video_embed: Option<String>,
}

/// A change of an asset's editable fields: each `Some` sets a field, each `None` leaves it.
/// Its id, type, creation time and download count never change; its slug only with a move
/// to another workspace ([`AssetChange::workspace`]).
#[derive(Debug, Clone, PartialEq)]
pub struct AssetChange {
    /// A new title.
    pub title: Option<String>,
    /// A new description (`Some(None)` clears it).
    pub description: Option<Option<String>>,
    /// Whether the asset may be shared without a key.
    pub is_public: Option<bool>,
    /// Whether the asset is published.
    pub published: Option<bool>,
    /// A new address (links, external videos and git references).
    pub link: Option<LinkFields>,
    /// A new file (file-based assets), with everything read from it.
    pub file: Option<FileFields>,
    /// The thumbnail moved to a new path: applied only while the asset's thumbnail is still
    /// at the old one, so a move never undoes a file replaced meanwhile.
    pub thumbnail_moved: Option<ThumbnailMove>,
    /// Everything read again from the asset's file (a thumbnail made anew): applied only while
    /// the asset still has that file, so a reading of an old file never lands on a new one.
    pub file_reread: Option<FileReread>,
    /// A new set of tags, or tags added or removed.
    pub tags: Option<TagChange>,
    /// The checksum of the asset's file, read by a backfill: applied only while the asset
    /// still has that file.
    pub checksum_found: Option<ChecksumFound>,
    /// A move to another workspace (`Some(None)`: to none). The store keeps the asset's slug
    /// when it is free there and else gives it the first free numbered one (`slug-2`, ...,
    /// as an insert does), and refuses the move ([`ChangeRefused::HeldInAnotherWorkspace`])
    /// while a library that may not hold it there ([`crate::may_hold`]) holds it; all in
    /// the change's one write.
    pub workspace: Option<Option<String>>,
    /// The time of the change: the asset's `updated_at` when the change changes anything.
    pub at: DateTime<Utc>,
}

impl AssetChange {
    /// A change at `at` that changes nothing yet.
    pub fn at(at: DateTime<Utc>) -> Self {
        AssetChange {
            title: None,
            description: None,
            is_public: None,
            published: None,
            link: None,
            file: None,
            thumbnail_moved: None,
            file_reread: None,
            tags: None,
            checksum_found: None,
            workspace: None,
            at,
        }
    }

    /// `asset` with this change applied, or `None` when the change would change nothing (then
    /// `updated_at` stays too, and a store writes nothing). `updated_at` becomes
    /// [`AssetChange::at`], or stays when that is not later.
    ///
    /// # Errors
    /// [`ChangeRefused::TooManyTags`] when tags added to the asset's would make more than
    /// [`crate::validate::MAX_TAGS`]; a store then writes nothing.
    pub fn apply(&self, asset: &Asset) -> Result<Option<Asset>, ChangeRefused> {
        let mut next = asset.clone();
        if let Some(title) = &self.title {
            next.title.clone_from(title);
        }
        if let Some(description) = &self.description {
            next.description.clone_from(description);
        }
        if let Some(is_public) = self.is_public {
            next.is_public = is_public;
        }
        if let Some(published) = self.published {
            next.published = published;
        }
        if let Some(link) = &self.link {
            next.external_url.clone_from(&link.external_url);
            next.video_embed.clone_from(&link.video_embed);
        }
        if let Some(file) = &self.file {
            file.clone().set_on(&mut next);
        }
        if let Some(moved) = &self.thumbnail_moved
            && next.thumbnail_path.as_deref() == Some(moved.from.as_str())
        {
            next.thumbnail_path = Some(moved.to.clone());
        }
        if let Some(reread) = &self.file_reread
            && next.file_path.as_deref() == Some(reread.file_path.as_str())
        {
            reread.fields.clone().set_on(&mut next);
        }
        if let Some(tags) = &self.tags {
            next.tags = tags.apply(&next.tags)?;
        }
        if let Some(found) = &self.checksum_found
            && next.file_path.as_deref() == Some(found.file_path.as_str())
        {
            next.checksum_sha256 = Some(found.checksum);
        }
        if let Some(workspace) = &self.workspace {
            next.workspace_id.clone_from(workspace);
        }
        if next == *asset {
            return Ok(None);
        }
        next.updated_at = next.updated_at.max(self.at);
        Ok(Some(next))
    }
}

/// A change of an asset's tags. Tags are compared by their keys
/// ([`crate::validate::tag_key`]); the tags given are valid ones ([`crate::validate::tags`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TagChange {
    /// These tags, in this order, replace the asset's.
    Set(Vec<String>),
    /// These tags are added after the asset's, each one it does not have yet.
    Add(Vec<String>),
    /// The asset's tags with these keys go; the rest keep their order.
    Remove(Vec<String>),
}

impl TagChange {
    /// The tags an asset with `tags` has after this change.
    ///
    /// # Errors
    /// [`ChangeRefused::TooManyTags`] when an add would leave more than
    /// [`crate::validate::MAX_TAGS`].
    pub fn apply(&self, tags: &[String]) -> Result<Vec<String>, ChangeRefused> {
        use crate::model::{MAX_TAGS, tag_key};
        match self {
            TagChange::Set(new) => Ok(new.clone()),
            TagChange::Add(new) => {
                let mut out = tags.to_vec();
                let mut keys: Vec<String> = tags.iter().map(|t| tag_key(t)).collect();
                for tag in new {
                    let key = tag_key(tag);
                    if !keys.contains(&key) {
                        keys.push(key);
                        out.push(tag.clone());
                    }
                }
                if out.len() > MAX_TAGS {
                    return Err(ChangeRefused::TooManyTags);
                }
                Ok(out)
            }
            TagChange::Remove(gone) => {
                let gone: Vec<String> = gone.iter().map(|t| tag_key(t)).collect();
                Ok(tags
                    .iter()
                    .filter(|t| !gone.contains(&tag_key(t)))
                    .cloned()
                    .collect())
            }
        }
    }
}

/// Why an asset cannot take a change ([`AssetChange::apply`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ChangeRefused {
    /// Tags added would make more than [`crate::validate::MAX_TAGS`].
    #[error("an asset has at most 32 tags")]
    TooManyTags,
    /// A move to another workspace while a library that may not hold the asset there holds
    /// it ([`AssetChange::workspace`]).
    #[error("a library that holds the asset may not hold it in that workspace")]
    HeldInAnotherWorkspace,
}

/// Why one asset stops an atomic bulk change ([`crate::AssetStore::update_assets`],
/// [`crate::AssetStore::delete_assets`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BulkRefusal {
    /// There is no such asset.
    NotFound,
    /// Libraries hold the asset and the delete is not forced.
    InUse(Vec<LibraryUse>),
    /// The asset cannot take the change.
    Refused(ChangeRefused),
}

/// What an atomic bulk change did: everything, or nothing and why.
#[derive(Debug, Clone, PartialEq)]
pub enum BulkOutcome<T> {
    /// Every asset changed: one result per id, in the order of the ids.
    Done(Vec<T>),
    /// Nothing changed: each asset that stopped it, in the order of the ids.
    Refused(Vec<(Uuid, BulkRefusal)>),
}

/// The SHA-256 of the file at `file_path`, read after the file was stored
/// ([`AssetChange::checksum_found`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecksumFound {
    /// The file it was read from: the change applies only while the asset has it.
    pub file_path: String,
    /// Its SHA-256.
    pub checksum: [u8; 32],
}

/// The fields read again from the file at `file_path` ([`AssetChange::file_reread`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReread {
    /// The file they were read from: the change applies only while the asset has it.
    pub file_path: String,
    /// What was read.
    pub fields: FileFields,
}

/// A thumbnail's move from one path of the file store to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThumbnailMove {
    /// Where the thumbnail was.
    pub from: String,
    /// Where it is now.
    pub to: String,
}

/// What [`crate::AssetStore::update_asset`] did: the asset just before the change and as stored
/// after it (equal when the change changed nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct AssetUpdate {
    /// The asset as it was when the change landed.
    pub before: Asset,
    /// The asset as stored now.
    pub after: Asset,
}

/// A library that holds an asset, as [`crate::AssetStore::asset_usage`] and a refused delete tell
/// it. On the wire (`GET /api/v1/assets/{id}/usage`) it is `{"id", "title", "slug",
/// "published"}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(
    feature = "openapi",
    schema(description = "A library that holds the asset (published or not).")
)]
pub struct LibraryUse {
    /// The library's id.
    pub id: Uuid,
    /// The library's title.
    pub title: String,
    /// The library's slug.
    pub slug: String,
    /// Whether the library is published.
    pub published: bool,
}

/// What [`crate::AssetStore::delete_asset`] did.
// Made once per delete and matched at once: boxing the record would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum AssetDeletion {
    /// The asset is gone; this is the record as it was (its files are the caller's to
    /// remove).
    Deleted(Asset),
    /// Libraries hold the asset and the delete was not forced: nothing changed. The libraries
    /// come newest first, as [`crate::AssetStore::asset_usage`] gives them.
    InUse(Vec<LibraryUse>),
    /// There is no asset with this id.
    NotFound,
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;
    use crate::model::AssetType;

    fn asset() -> Asset {
        let at = DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default();
        Asset {
            id: Uuid::from_u128(1),
            title: "Logo".into(),
            slug: "logo".into(),
            description: Some("old".into()),
            asset_type: AssetType::Image,
            file_path: Some("uploads/a/logo.png".into()),
            file_size: Some(10),
            mime_type: Some("image/png".into()),
            thumbnail_path: None,
            page_count: None,
            word_count: None,
            width: Some(2),
            height: Some(1),
            thumbnail_placeholder: None,
            media: crate::model::Media::default(),
            external_url: None,
            video_embed: None,
            download_count: 4,
            is_public: false,
            published: true,
            tags: vec!["Brand".into(), "logo".into()],
            checksum_sha256: None,
            created_at: at,
            updated_at: at,
            workspace_id: None,
        }
    }

    #[test]
    fn tags_are_set_added_and_removed_by_key() {
        let a = asset();
        let at = a.updated_at + Duration::seconds(1);
        let tagged = |change: TagChange| {
            let mut c = AssetChange::at(at);
            c.tags = Some(change);
            c.apply(&a)
        };
        let add = tagged(TagChange::Add(vec!["BRAND".into(), "new".into()]));
        assert_eq!(add.unwrap().unwrap().tags, ["Brand", "logo", "new"]);
        let remove = tagged(TagChange::Remove(vec!["LOGO".into()]));
        assert_eq!(remove.unwrap().unwrap().tags, ["Brand"]);
        assert_eq!(tagged(TagChange::Add(vec!["brand".into()])), Ok(None));
        let many = (0..31).map(|i| format!("t{i}")).collect();
        assert_eq!(
            tagged(TagChange::Add(many)),
            Err(ChangeRefused::TooManyTags)
        );
        let set = tagged(TagChange::Set(vec!["x".into()]));
        assert_eq!(set.unwrap().unwrap().tags, ["x"]);
    }

    #[test]
    fn a_found_checksum_lands_only_on_the_file_it_read() {
        let mut a = asset();
        let mut change = AssetChange::at(a.updated_at);
        change.checksum_found = Some(ChecksumFound {
            file_path: "uploads/a/logo.png".into(),
            checksum: [7; 32],
        });
        let next = change.apply(&a).unwrap().expect("a checksum");
        assert_eq!(next.checksum_sha256, Some([7; 32]));
        a.file_path = Some("uploads/b/logo.png".into());
        assert_eq!(change.apply(&a), Ok(None));
    }

    #[test]
    fn a_change_sets_only_what_it_names_and_moves_the_time() {
        let a = asset();
        let mut change = AssetChange::at(a.updated_at + Duration::seconds(5));
        change.description = Some(None);
        change.published = Some(false);
        let next = change.apply(&a).unwrap().expect("a change");
        assert_eq!(next.description, None);
        assert!(!next.published);
        assert_eq!(next.updated_at, change.at);
        let rest = Asset {
            description: a.description.clone(),
            published: true,
            updated_at: a.updated_at,
            ..next
        };
        assert_eq!(rest, a);
    }

    #[test]
    fn a_change_to_the_same_values_is_no_change() {
        let a = asset();
        let mut change = AssetChange::at(a.updated_at + Duration::seconds(5));
        change.title = Some("Logo".into());
        change.file = Some(FileFields::of(&a));
        assert_eq!(change.apply(&a), Ok(None));
        assert_eq!(AssetChange::at(change.at).apply(&a), Ok(None));
    }

    #[test]
    fn a_thumbnail_moves_only_from_where_it_is() {
        let mut a = asset();
        a.thumbnail_path = Some("thumbnails/old.png".into());
        let mut change = AssetChange::at(DateTime::<Utc>::MIN_UTC);
        change.thumbnail_moved = Some(ThumbnailMove {
            from: "thumbnails/old.png".into(),
            to: "thumbnails/new.png".into(),
        });
        let next = change.apply(&a).unwrap().expect("a move");
        assert_eq!(next.thumbnail_path.as_deref(), Some("thumbnails/new.png"));
        assert_eq!(next.updated_at, a.updated_at, "a move is no edit");
        // A replacement landed first: its thumbnail stays.
        a.thumbnail_path = Some("thumbnails/replaced.png".into());
        assert_eq!(change.apply(&a), Ok(None));
    }

    #[test]
    fn a_reread_lands_only_on_the_file_it_read() {
        let mut a = asset();
        let mut fields = FileFields::of(&a);
        fields.thumbnail_path = Some("thumbnails/anew.png".into());
        fields.thumbnail_placeholder = Some("AAAA".into());
        let mut change = AssetChange::at(a.updated_at + Duration::seconds(5));
        change.file_reread = Some(FileReread {
            file_path: "uploads/a/logo.png".into(),
            fields,
        });
        let next = change.apply(&a).unwrap().expect("a reread");
        assert_eq!(next.thumbnail_path.as_deref(), Some("thumbnails/anew.png"));
        assert_eq!(next.thumbnail_placeholder.as_deref(), Some("AAAA"));
        assert_eq!(next.updated_at, change.at);
        // The file was replaced meanwhile: the reading of the old one is dropped.
        a.file_path = Some("uploads/b/logo.png".into());
        assert_eq!(change.apply(&a), Ok(None));
    }

    #[test]
    fn the_time_never_goes_back() {
        let a = asset();
        let mut change = AssetChange::at(a.updated_at - Duration::seconds(5));
        change.title = Some("Earlier clock".into());
        assert_eq!(
            change.apply(&a).unwrap().map(|n| n.updated_at),
            Some(a.updated_at)
        );
    }
}
