//! Previews made anew: `POST /api/v1/assets/{asset_id}/thumbnail`
//! ([`Service::remake_thumbnail`]) and the backfill of assets stored before their type had
//! previews ([`Service::backfill_previews`]).

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Service;
use crate::change::{AssetChange, ChecksumFound, FileReread};
use crate::error::ApiError;
use crate::files::Written;
use crate::ingest;
use crate::model::{Asset, AssetType};
use crate::query::{AssetQuery, AssetSort, AssetStatus, SortOrder};
use crate::records::now;
use crate::render::{AssetJson, data};
use crate::reply::Reply;
use crate::validate;

/// Assets read at a time by the backfill.
const BATCH: u32 = 100;

/// Where [`Service::backfill_previews`] is: assets looked at of all there are, and what came
/// of them so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Backfill {
    /// Assets looked at.
    pub seen: u64,
    /// All assets (when the backfill started).
    pub total: u64,
    /// Assets read again that now have a thumbnail.
    pub thumbnails: u64,
    /// Assets read again that still have none (their file carries no picture, a video
    /// without [`crate::Config::ffmpeg`], a file the renderer cannot read).
    pub without: u64,
    /// Assets whose file could not be read at all (missing, of another type now): logged.
    pub failed: u64,
    /// Assets whose file was read for its checksum alone (stored before checksums were
    /// kept); those read again for a preview get theirs with it.
    pub checksums: u64,
}

impl Service {
    /// `POST /api/v1/assets/{asset_id}/thumbnail`: 200 with the asset, its thumbnail and
    /// placeholder made anew (see [`Service::remake_thumbnail`]).
    pub(super) async fn remake_thumbnail_request(
        &self,
        id: &str,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let id = validate::parse_id("asset_id", id)?;
        self.asset_in(id, ws).await?;
        let asset = self.remake_thumbnail(id).await?;
        Ok(data(200, AssetJson(&asset)))
    }

    /// Reads the asset's file again and stores what it gives: its thumbnail and placeholder
    /// made anew (with this version's renderers and [`crate::Config::ffmpeg`]), and every
    /// other file field (a video's or an audio file's facts, say). The old thumbnail goes once
    /// the new one is in place; `updated_at` moves when anything changed. The reading applies
    /// only while the asset still has the file it read: a file replaced meanwhile keeps its
    /// own fields.
    ///
    /// # Errors
    /// 404 when there is no such asset; 400 on `asset_id` for an asset without a file (link,
    /// external video, collection, git) and on `file_path` for a file that is gone or no
    /// longer readable; 500 when a store fails.
    pub async fn remake_thumbnail(&self, id: Uuid) -> Result<Asset, ApiError> {
        let current = self
            .inner
            .store
            .get_asset(id)
            .await?
            .ok_or(ApiError::AssetNotFound)?;
        let Some(file_path) = current.file_path.clone() else {
            return Err(ApiError::validation(
                "asset_id",
                format!(
                    "{} assets have no file to make a thumbnail of; thumbnails are made of pdf, \
                     document, image, video and audio files",
                    current.asset_type
                ),
            ));
        };
        self.reread(&current, &file_path, now()).await
    }

    /// Reads the file of every asset that lacks a preview again, as
    /// [`Service::remake_thumbnail`] does, without moving `updated_at`: file-based assets
    /// without a thumbnail, and audio and video assets without a playing time. The file of
    /// every other asset without a checksum (stored before checksums were kept) is read for
    /// its SHA-256 alone. `progress` is
    /// called after each asset. Stopping part-way and running again is safe: what was done
    /// is not done again (an asset whose file gives no thumbnail is read again, and gives
    /// none again). Replicas may run it at once.
    ///
    /// # Errors
    /// 500 when the store fails; what was done before stays done. A file that cannot be read
    /// is counted in [`Backfill::failed`] and logged, never an error.
    pub async fn backfill_previews(
        &self,
        mut progress: impl FnMut(&Backfill),
    ) -> Result<Backfill, ApiError> {
        let mut query = AssetQuery {
            per_page: BATCH,
            status: AssetStatus::Any,
            sort: AssetSort::CreatedAt,
            order: SortOrder::Asc,
            ..AssetQuery::default()
        };
        let mut state = Backfill::default();
        loop {
            let page = self.inner.store.list_assets(&query).await?;
            if query.page == 1 {
                state.total = page.total;
            }
            if page.items.is_empty() {
                return Ok(state);
            }
            for asset in page.items {
                state.seen += 1;
                state.total = state.total.max(state.seen);
                if let Some(file_path) = asset.file_path.clone().filter(|_| lacks_preview(&asset)) {
                    match self
                        .reread(&asset, &file_path, DateTime::<Utc>::MIN_UTC)
                        .await
                    {
                        Ok(after) if after.thumbnail_path.is_some() => state.thumbnails += 1,
                        Ok(_) => state.without += 1,
                        Err(ApiError::Validation { message, .. }) => {
                            tracing::warn!(asset = %asset.id, file_path, message, "not read");
                            state.failed += 1;
                        }
                        Err(ApiError::AssetNotFound) => {}
                        Err(other) => return Err(other),
                    }
                } else if let Some(file_path) = asset
                    .file_path
                    .clone()
                    .filter(|_| asset.checksum_sha256.is_none())
                {
                    match self.find_checksum(asset.id, &file_path).await {
                        Ok(()) => state.checksums += 1,
                        Err(ApiError::Validation { message, .. }) => {
                            tracing::warn!(asset = %asset.id, file_path, message, "not read");
                            state.failed += 1;
                        }
                        Err(other) => return Err(other),
                    }
                }
                progress(&state);
            }
            query.page += 1;
        }
    }

    /// Reads the SHA-256 of `file_path` (the file of the asset `id`) and stores it, without
    /// moving `updated_at`; it lands only while the asset still has that file.
    async fn find_checksum(&self, id: Uuid, file_path: &str) -> Result<(), ApiError> {
        let inner = &self.inner;
        let resolved = inner.files.resolve(file_path).await?;
        let Some((_, Some(checksum))) =
            crate::tus::storage::measure(&inner.files, &resolved.path, true).await?
        else {
            return Err(ApiError::validation("file_path", "the file is gone"));
        };
        let mut change = AssetChange::at(DateTime::<Utc>::MIN_UTC);
        change.checksum_found = Some(ChecksumFound {
            file_path: file_path.to_owned(),
            checksum,
        });
        inner.store.update_asset(id, &change, &self.log).await?;
        Ok(())
    }

    /// Reads `file_path` (the file of `current`) again and stores what it gives, at `at`.
    async fn reread(
        &self,
        current: &Asset,
        file_path: &str,
        at: DateTime<Utc>,
    ) -> Result<Asset, ApiError> {
        let inner = &self.inner;
        let kind = Some(current.asset_type);
        let mut written = Written::default();
        let file = ingest::ingest(
            &inner.files,
            &inner.config,
            &inner.previews,
            file_path,
            kind,
            "file_path",
            None,
        )
        .await?;
        let new_thumbnail = file.thumbnail_path.clone();
        written.extend(new_thumbnail.clone());
        let mut change = AssetChange::at(at);
        change.file_reread = Some(FileReread {
            file_path: file_path.to_owned(),
            fields: file.into_fields(),
        });
        let outcome = inner
            .store
            .update_asset(current.id, &change, &self.log)
            .await
            .map_err(ApiError::from)
            .and_then(|done| done.ok_or(ApiError::AssetNotFound));
        written.settle(&inner.files, &outcome).await;
        let done = outcome?;
        if let Some(path) = &new_thumbnail
            && done.after.thumbnail_path.as_ref() != Some(path)
        {
            // The asset's file changed meanwhile: this thumbnail is of no file it has.
            inner.files.delete(path).await;
        }
        self.remove_replaced(&done.before, Some(&done.after)).await;
        Ok(done.after)
    }
}

/// Whether an asset lacks what its file could give it: a thumbnail, or a playing time.
fn lacks_preview(asset: &Asset) -> bool {
    asset.asset_type.is_file_based()
        && (asset.thumbnail_path.is_none()
            || (matches!(asset.asset_type, AssetType::Audio | AssetType::Video)
                && asset.media.duration_ms.is_none()))
}
