//! Upkeep of data written by earlier versions: [`Service::upgrade_thumbnail_names`].

use chrono::{DateTime, Utc};

use super::Service;
use crate::change::{AssetChange, ThumbnailMove};
use crate::error::ApiError;
use crate::ingest;
use crate::query::{AssetQuery, AssetStatus};

/// Assets read at a time while looking for thumbnails to rename.
const BATCH: u32 = 100;

impl Service {
    /// Gives every thumbnail that an earlier version named after its asset's id
    /// (`thumbnails/{id}.{ext}`) a random name, as new thumbnails get: thumbnails are served
    /// without a key, so a name that lists and links show would let anyone fetch the
    /// thumbnail of a draft or private asset. Returns how many were renamed.
    ///
    /// Each rename copies the file, moves the asset's `thumbnail_path` in one store change
    /// that applies only while the asset still has the old thumbnail (a file replaced
    /// meanwhile keeps its new one; the copy is then removed), and only then removes the old
    /// file, so a thumbnail is never missing and `updated_at` does not move. It is safe to
    /// stop and run again (the ready server runs it at every start; it finds nothing once
    /// done) and to run on several replicas at once.
    ///
    /// # Errors
    /// 500 when the store or the file store fails; what was renamed before stays renamed.
    pub async fn upgrade_thumbnail_names(&self) -> Result<u64, ApiError> {
        let store = &self.inner.store;
        let files = &self.inner.files;
        let mut renamed = 0;
        let mut query = AssetQuery {
            per_page: BATCH,
            status: AssetStatus::Any,
            ..AssetQuery::default()
        };
        loop {
            let page = store.list_assets(&query).await?;
            if page.items.is_empty() {
                return Ok(renamed);
            }
            for asset in page.items {
                let Some(from) = asset.thumbnail_path.as_deref() else {
                    continue;
                };
                let Some(extension) = from
                    .strip_prefix(&format!("thumbnails/{}.", asset.id))
                    .filter(|ext| !ext.contains('/'))
                else {
                    continue;
                };
                let to = ingest::thumbnail_path(extension)?;
                if !files.copy(from, &to).await? {
                    continue;
                }
                let mut change = AssetChange::at(DateTime::<Utc>::MIN_UTC);
                change.thumbnail_moved = Some(ThumbnailMove {
                    from: from.to_owned(),
                    to: to.clone(),
                });
                let moved = store
                    .update_asset(asset.id, &change, &self.log)
                    .await?
                    .is_some_and(|done| done.after.thumbnail_path.as_deref() == Some(&to));
                if moved {
                    files.delete(from).await;
                    renamed += 1;
                } else {
                    files.delete(&to).await;
                }
            }
            query.page += 1;
        }
    }
}
