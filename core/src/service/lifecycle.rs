//! The asset lifecycle: change (`PATCH`), file replacement, delete and usage, with the typed
//! API for embedders ([`Service::update_asset`], [`Service::delete_asset`],
//! [`Service::asset_usage`]).

use uuid::Uuid;

use super::Service;
use super::access::{Reader, in_workspace};
use crate::change::{AssetChange, AssetDeletion, AssetUpdate, ChangeRefused, LibraryUse};
use crate::error::{ApiError, StoreError};
use crate::files::Written;
use crate::ingest;
use crate::model::{ApiKey, Asset, Scope};
use crate::query;
use crate::records::now;
use crate::render::{AssetJson, data};
use crate::reply::Reply;
use crate::request::{BodyStream, RawRequest};
use crate::upload;
use crate::validate::{self, AssetPatch};

impl Service {
    /// `PATCH /api/v1/assets/{asset_id}`: merges the body into the asset (200, the asset);
    /// for a workspace key (`ws`), an asset of its workspace.
    pub(super) async fn patch_asset(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let body = self.json_body(req).await?;
        let id = validate::parse_id("asset_id", id)?;
        let mut patch = validate::asset_patch(&body, &self.inner.config)?;
        self.asset_in(id, ws).await?;
        if let Some(own) = ws {
            patch.workspace_id = stays_in(own, patch.workspace_id.take())?;
        }
        let asset = self.update_asset(id, patch).await?;
        Ok(data(200, AssetJson(&asset)))
    }

    /// Changes the asset `id` as `PATCH /api/v1/assets/{id}` does and returns it as stored:
    /// `external_url` is checked against the asset's type (and gives a new `video_embed`),
    /// and the change lands in one atomic store change, so every library holding the asset
    /// shows it on its next read. `updated_at` moves only when something changed.
    ///
    /// ```
    /// use assetlib_core::{Config, Service};
    /// use assetlib_core::validate::{NewAsset, asset_patch};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let service = Service::in_memory(Config::default());
    /// let new = NewAsset::from_json(
    ///     &serde_json::json!({"title": "Old name", "asset_type": "link",
    ///                         "external_url": "https://example.com/"}),
    ///     service.config(),
    /// )?;
    /// let asset = service.create_asset(new).await?;
    /// let patch = asset_patch(br#"{"title": "New name", "published": false}"#, service.config())?;
    /// let changed = service.update_asset(asset.id, patch).await?;
    /// assert_eq!((changed.title.as_str(), changed.published), ("New name", false));
    /// # Ok::<(), assetlib_core::ApiError>(())
    /// # }).unwrap();
    /// ```
    ///
    /// A `workspace_id` moves the asset to that workspace (`null`: to none). It keeps its
    /// slug when the slug is free there, else takes the first free numbered one, as a create
    /// would; the move is refused while a library that may not hold it there
    /// ([`crate::may_hold`]) holds it.
    ///
    /// # Errors
    /// 404 when there is no such asset; 400 on `external_url` for a value the asset's type
    /// does not take; 409 with the libraries in the way of a move; 500 when the store fails.
    pub async fn update_asset(&self, id: Uuid, patch: AssetPatch) -> Result<Asset, ApiError> {
        let store = &self.inner.store;
        let current = store.get_asset(id).await?.ok_or(ApiError::AssetNotFound)?;
        let change = patch.into_change(current.asset_type, &self.inner.config, now())?;
        let to = change.workspace.clone().unwrap_or_default();
        // A refused move is tried once more if no library is in its way when they are read
        // (the last one let the asset go meanwhile).
        for _ in 0..2 {
            match store.update_asset(id, &change, &self.log).await {
                Err(StoreError::Refused {
                    reason: ChangeRefused::HeldInAnotherWorkspace,
                    ..
                }) => {
                    let in_the_way = self.held_elsewhere(id, to.as_deref()).await?;
                    if !in_the_way.is_empty() {
                        return Err(ApiError::held_in_another_workspace(in_the_way));
                    }
                }
                done => return Ok(done?.ok_or(ApiError::AssetNotFound)?.after),
            }
        }
        Err(ApiError::held_in_another_workspace(Vec::new()))
    }

    /// The libraries holding asset `id` that may not hold it in workspace `to`.
    async fn held_elsewhere(
        &self,
        id: Uuid,
        to: Option<&str>,
    ) -> Result<Vec<LibraryUse>, ApiError> {
        let mut libraries = Vec::new();
        for library in self.inner.store.asset_usage(id).await? {
            let workspace = self.inner.store.library_workspace(library.id).await?;
            if !crate::model::may_hold(workspace.flatten().as_deref(), to) {
                libraries.push(library);
            }
        }
        Ok(libraries)
    }

    /// `PUT /api/v1/assets/{asset_id}/file`: replaces the file of a file-based asset from a
    /// multipart/form-data body with one `file` part (limits as upload; other parts are
    /// ignored). The new file is streamed to `uploads/{uuid}/{name}`, checked against the
    /// asset's type (else 400 on `file`), read for metadata and a thumbnail, and swapped in by
    /// one store change; only then are the old file and thumbnail removed (when the API stored
    /// them). A failed replacement removes what it wrote and leaves the asset as it was.
    pub(super) async fn replace_file(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let boundary = upload::boundary(req.content_type)?;
        upload::check_declared(req.declared_length(), self.inner.config.max_upload)?;
        let id = validate::parse_id("asset_id", id)?;
        let current = self
            .inner
            .store
            .get_asset(id)
            .await?
            .filter(|a| in_workspace(ws, a.workspace_id.as_deref()))
            .ok_or(ApiError::AssetNotFound)?;
        if !current.asset_type.is_file_based() {
            return Err(ApiError::validation(
                "file",
                format!(
                    "{} assets have no file; files belong to pdf, document, image, video and \
                     audio assets",
                    current.asset_type
                ),
            ));
        }
        let body = req.body.into_stream(self.inner.config.body_timeout);
        let mut written = Written::default();
        let outcome = self.swap_file(&current, boundary, body, &mut written).await;
        written.settle(&self.inner.files, &outcome).await;
        let done = outcome?;
        self.remove_replaced(&done.before, Some(&done.after)).await;
        Ok(data(200, AssetJson(&done.after)))
    }

    /// The steps of a replacement; what they write goes into `written`.
    async fn swap_file(
        &self,
        current: &Asset,
        boundary: String,
        body: BodyStream,
        written: &mut Written,
    ) -> Result<AssetUpdate, ApiError> {
        let files = &self.inner.files;
        let config = &self.inner.config;
        let form = upload::read_form(files, boundary, body, config.max_upload, written).await?;
        let (path, _) = form.stored_file()?;
        let kind = Some(current.asset_type);
        let mut file = ingest::ingest(
            files,
            config,
            &self.inner.previews,
            path,
            kind,
            "file",
            form.checksum,
        )
        .await?;
        written.extend(file.thumbnail_path.clone());
        let text = file.take_text();
        let mut change = AssetChange::at(now());
        change.file = Some(file.into_fields());
        let update = self
            .inner
            .store
            .update_asset(current.id, &change, &self.log)
            .await?
            .ok_or(ApiError::AssetNotFound)?;
        self.keep_text(current.id, text, true).await;
        Ok(update)
    }

    /// Removes the files of `before` that the API stored itself and that `after` no longer
    /// uses (all of them when the asset is gone). A file that fails to go is logged, never an
    /// error: the record is already right.
    pub(super) async fn remove_replaced(&self, before: &Asset, after: Option<&Asset>) {
        let kept = |path: &str| {
            after.is_some_and(|a| {
                a.file_path.as_deref() == Some(path) || a.thumbnail_path.as_deref() == Some(path)
            })
        };
        for path in [&before.file_path, &before.thumbnail_path]
            .into_iter()
            .flatten()
        {
            if validate::in_api_folder(path) && !kept(path) {
                self.inner.files.delete(path).await;
            }
        }
        // Image variants are made of the file: they go with it.
        if after.is_none_or(|a| a.file_path != before.file_path) {
            self.inner
                .files
                .delete_prefix(&format!("derived/{}/", before.id))
                .await;
        }
    }

    /// `DELETE /api/v1/assets/{asset_id}`: 204; 409 with the libraries that hold the asset
    /// unless `?force=true`.
    pub(super) async fn delete_asset_request(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let id = validate::parse_id("asset_id", id)?;
        let force = query::force_query(req.query)?;
        self.asset_in(id, ws).await?;
        self.delete_asset(id, force).await?;
        Ok(Reply::empty(204))
    }

    /// Deletes the asset `id` as `DELETE /api/v1/assets/{id}` does. When libraries hold it,
    /// the delete is refused (409, naming them) unless `force`, which removes it from them in
    /// the same atomic change. After the record is gone, the files the API stored for it
    /// (under `uploads/` and `thumbnails/`) are removed; a file the app placed stays.
    ///
    /// # Errors
    /// 404 when there is no such asset; 409 when libraries hold it and `force` is false; 500
    /// when the store fails.
    pub async fn delete_asset(&self, id: Uuid, force: bool) -> Result<(), ApiError> {
        match self.inner.store.delete_asset(id, force, &self.log).await? {
            AssetDeletion::Deleted(asset) => {
                self.remove_replaced(&asset, None).await;
                Ok(())
            }
            AssetDeletion::InUse(libraries) => Err(in_use(libraries)),
            AssetDeletion::NotFound => Err(ApiError::AssetNotFound),
        }
    }

    /// `GET /api/v1/assets/{asset_id}/usage`: the libraries holding the asset, newest first.
    /// Unpublished libraries are shown only to a key with `write:libraries`, so a website's
    /// read key never learns their titles.
    pub(super) async fn usage(&self, id: &str, key: &ApiKey) -> Result<Reply, ApiError> {
        let asset = self.asset_for(id, Reader::of_key(key)).await?;
        let mut uses = self.asset_usage(asset.id).await?;
        if !key.scopes.contains(&Scope::WriteLibraries) {
            uses.retain(|library| library.published);
        }
        Ok(data(200, uses))
    }

    /// The libraries (published or not) holding the asset `id`, newest first; empty when
    /// none does or there is no such asset.
    pub async fn asset_usage(&self, id: Uuid) -> Result<Vec<LibraryUse>, ApiError> {
        Ok(self.inner.store.asset_usage(id).await?)
    }
}

/// The workspace a PATCH by a key of workspace `own` names (`named`): none to move to, when
/// it names its own or none; 403 when it names another, or no workspace.
fn stays_in(own: &str, named: Option<Option<String>>) -> Result<Option<Option<String>>, ApiError> {
    match named {
        None => Ok(None),
        Some(Some(named)) if named == own => Ok(None),
        Some(Some(other)) => Err(ApiError::OtherWorkspace { workspace: other }),
        Some(None) => Err(STAYS_IN_WORKSPACE),
    }
}

/// The 403 of a workspace key moving an asset to no workspace.
const STAYS_IN_WORKSPACE: ApiError = ApiError::NotPermitted(
    "A workspace key keeps assets in its workspace: workspace_id may name only it",
);

/// The 409 of a delete of an asset that `libraries` hold.
pub(super) fn in_use(libraries: Vec<LibraryUse>) -> ApiError {
    ApiError::Conflict {
        message: format!(
            "The asset is in {}; remove it from them first, or delete with force=true to \
             remove it from them too",
            libraries_count(libraries.len())
        ),
        libraries,
    }
}

/// "1 library", "2 libraries", ...
fn libraries_count(n: usize) -> String {
    format!("{n} {}", if n == 1 { "library" } else { "libraries" })
}
