//! Asset operations: list, read, create (from JSON or an upload), and the typed create.

use std::sync::Arc;

use uuid::Uuid;

use super::access::{Reader, named_workspace, sees_drafts};
use super::{Service, location};
use crate::error::ApiError;
use crate::files::Written;
use crate::ingest;
use crate::model::{ApiKey, Asset, Scope};
use crate::page::AssetPagination;
use crate::page_cache::{AssetPages, KeptList, ListStamps, Rendered, Turns};
use crate::query::{self, AssetQuery, AssetStatus};
use crate::records;
use crate::render::{AssetJson, Envelope, data};
use crate::reply::Reply;
use crate::request::{BodyStream, RawRequest};
use crate::upload;
use crate::validate::{self, NewAsset, OnDuplicate};

impl Service {
    /// `GET /api/v1/assets`: a page of published assets, or with `status=draft|any` (only for
    /// a key with `write:assets`, else 403) of drafts or of both.
    pub(super) async fn list_assets(
        &self,
        req: RawRequest<'_>,
        key: &ApiKey,
    ) -> Result<Reply, ApiError> {
        let mut q = query::asset_query(req.query, self.inner.config.max_page_size)?;
        if q.status != AssetStatus::Published && !sees_drafts(key) {
            return Err(ApiError::Forbidden(Scope::WriteAssets));
        }
        q.workspace_id = named_workspace(key.workspace_id.as_deref(), q.workspace_id)?;
        let cache = self.page_cache().await?;
        if let Some((pages, all)) = cache
            && let Some(kept) = self.kept_list(pages, &q, all, true).await?
        {
            return Ok(kept.page.reply());
        }
        // Boxed: a hit's future stays as small as it was.
        Box::pin(self.render_list(q, cache)).await
    }

    /// A list page that was not kept: read, rendered and kept. One render at a time per
    /// query: the requests that wait for it find it kept (as [`Service::kept_list`] judges).
    async fn render_list(
        &self,
        q: AssetQuery,
        cache: Option<(&AssetPages, u64)>,
    ) -> Result<Reply, ApiError> {
        let _turn = Turns::wait_in(cache.map(|(pages, _)| &pages.list_turns), q.clone()).await;
        let list_version = match cache {
            Some((pages, all)) => {
                if let Some(kept) = self.kept_list(pages, &q, all, false).await? {
                    return Ok(kept.page.reply());
                }
                // Read before the page, as the assets version was.
                self.inner.store.list_version(&q).await?
            }
            None => None,
        };
        let page = self.inner.store.list_assets(&q).await?;
        let items: Vec<AssetJson<'_>> = page.items.iter().map(AssetJson).collect();
        let rendered = Rendered::of(&Reply::json_page(
            200,
            &Envelope {
                data: items,
                pagination: Some(AssetPagination::new(q.page, q.per_page, page.total)),
            },
        ));
        let reply = rendered.reply();
        if let Some((pages, all)) = cache {
            let stamps = match list_version {
                Some(list) => self.list_stamps(list, &page.items, all).await?,
                None => None,
            };
            let kept = KeptList {
                page: rendered,
                stamps,
            };
            pages.lists.put(q, all, Arc::new(kept));
        }
        Ok(reply)
    }

    /// The kept page of `q` if it is the page a render would give now: kept at the assets
    /// version `all` (read before), or, where the store keeps list versions, kept with its
    /// list's version and its assets' versions and none of them moved since. `count`: whether
    /// this lookup counts in the cache's statistics (a request's first does).
    async fn kept_list(
        &self,
        pages: &AssetPages,
        q: &AssetQuery,
        all: u64,
        count: bool,
    ) -> Result<Option<Arc<KeptList>>, ApiError> {
        let Some((at, kept)) = pages.lists.entry(q) else {
            if count {
                pages.lists.count(false);
            }
            return Ok(None);
        };
        let fresh = at == all
            || match &kept.stamps {
                Some(stamps) if self.inner.store.list_version(q).await? == Some(stamps.list) => {
                    *self.inner.store.asset_versions(&stamps.ids).await? == *stamps.versions
                }
                _ => false,
            };
        if count {
            pages.lists.count(fresh);
        }
        Ok(fresh.then_some(kept))
    }

    /// What a list page of `items`, read after the list version `list` and the assets
    /// version `all` were, was rendered at: its assets' versions, read now. `None` when one of
    /// them moved past `all` meanwhile, as the page may miss that write (it is then kept at
    /// `all` alone); writes of other assets during the read leave the stamps good.
    async fn list_stamps(
        &self,
        list: u64,
        items: &[Asset],
        all: u64,
    ) -> Result<Option<ListStamps>, ApiError> {
        let ids: Box<[Uuid]> = items.iter().map(|a| a.id).collect();
        let versions = self.inner.store.asset_versions(&ids).await?;
        // An asset whose version is past `all` moved after the page began: the page may show
        // it as it was before, under its new version. Writes of other assets meanwhile change
        // nothing on this page that its stamps would miss (a store keeping list versions keeps
        // its asset versions on the assets version's scale: `AssetStore::list_version`).
        if versions.iter().any(|&v| v > all) {
            return Ok(None);
        }
        Ok(Some(ListStamps {
            list,
            ids,
            versions: versions.into(),
        }))
    }

    /// `GET /api/v1/assets/{asset_id}`: one asset as `reader` sees assets (a draft only for a
    /// key with `write:assets`; without a key, a published public asset). With
    /// [`crate::Config::page_cache`] the rendered asset is kept under the store's assets
    /// version, as list pages are, for every kind of reader.
    pub(super) async fn get_asset(&self, id: &str, reader: Reader<'_>) -> Result<Reply, ApiError> {
        let id = reader.asset_id(id)?;
        match self.rendered_asset(id).await? {
            Some(kept) if reader.sees_asset(&kept.asset) => Ok(kept.page.reply()),
            _ => Err(reader.missing()),
        }
    }

    /// `POST /api/v1/assets`: creates an asset (201, `Location`), in the workspace of a
    /// workspace key (`ws`).
    pub(super) async fn post_asset(
        &self,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let mount = req.mount;
        let body = self.json_body(req).await?;
        let mut new = validate::new_asset(&body, &self.inner.config)?;
        new.workspace_id = named_workspace(ws, new.workspace_id)?;
        let asset = self.create_asset(new).await?;
        Ok(created(&asset, mount))
    }

    /// Creates an asset from a validated create, as `POST /api/v1/assets` does: a file named by
    /// `file_path` is resolved in the file store (it must exist, and lead nowhere outside it),
    /// checked against the asset's type, and read for its metadata off the async runtime
    /// within [`crate::Config::extract_timeout`]; an image gets a thumbnail at
    /// `thumbnails/{id}.{png,jpg}`. Returns the asset as stored.
    ///
    /// ```
    /// use assetlib_core::{Config, Service};
    /// use assetlib_core::validate::NewAsset;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let service = Service::in_memory(Config::default());
    /// service.files().put("notes/readme.txt", "Hello there, world".into()).await?;
    /// let new = NewAsset::from_json(
    ///     &serde_json::json!({"title": "Readme", "asset_type": "document",
    ///                         "file_path": "notes/readme.txt"}),
    ///     service.config(),
    /// )?;
    /// let asset = service.create_asset(new).await?;
    /// assert_eq!(asset.word_count, Some(3));
    /// # Ok::<(), assetlib_core::ApiError>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// 400 on `file_path` when the file is missing, outside the store, not of the asset's
    /// type, or needs more time or memory than allowed; 500 when the store fails.
    pub async fn create_asset(&self, new: NewAsset) -> Result<Asset, ApiError> {
        let mut written = Written::default();
        let created = self.create_new(new, &mut written).await;
        written.settle(&self.inner.files, &created).await;
        created
    }

    /// The steps of [`Service::create_asset`]; what they write goes into `written`.
    async fn create_new(&self, new: NewAsset, written: &mut Written) -> Result<Asset, ApiError> {
        let id = Uuid::new_v4();
        let mut file = match &new.file_path {
            Some(path) => {
                let config = &self.inner.config;
                let kind = Some(new.asset_type);
                let file = ingest::ingest(
                    &self.inner.files,
                    config,
                    &self.inner.previews,
                    path,
                    kind,
                    "file_path",
                    None,
                )
                .await?;
                written.extend(file.thumbnail_path.clone());
                Some(file)
            }
            None => None,
        };
        let text = file.as_mut().and_then(ingest::Ingested::take_text);
        let asset = records::new_asset(id, new, file);
        let asset = self.inner.store.insert_asset(asset, &self.log).await?;
        self.keep_text(asset.id, text, false).await;
        Ok(asset)
    }

    /// Keeps the text read from asset `id`'s file for search (feature `search`, over a store
    /// that keeps an index); `replacing` clears the text of an earlier file when the new one
    /// has none. A failure is logged, never the request's: the asset stands, and search
    /// finds it by its title, tags and description until `search reindex` reads its file.
    pub(super) async fn keep_text(
        &self,
        id: Uuid,
        text: Option<crate::extract::FileText>,
        replacing: bool,
    ) {
        #[cfg(feature = "search")]
        if let Some(search) = self.inner.store.search_store()
            && (text.is_some() || replacing)
        {
            let text = text
                .map(|t| crate::store::AssetText {
                    pages: t.pages,
                    paged: t.paged,
                })
                .unwrap_or_default();
            if let Err(e) = search.set_asset_text(id, text).await {
                tracing::warn!(asset = %id, error = %e, "the text of an asset's file was not kept");
            }
        }
        #[cfg(not(feature = "search"))]
        let _ = (id, text, replacing);
    }

    /// `POST /api/v1/assets/upload`: creates an asset from a multipart/form-data body as
    /// create does (201, `Location`, the asset). The body is read as it arrives: the `file`
    /// part is streamed into the file store at `uploads/{uuid}/{name}` and moved into place
    /// only when complete. A declared length above [`crate::Config::max_upload`] (plus room
    /// for the other parts) is 413 before anything is read; a body that grows past it is 413 as
    /// soon as it does. A failed or aborted upload leaves no file and no asset.
    ///
    /// Parts: `file` (required), and text parts `title` (default: the file's name),
    /// `description`, `asset_type` (default: inferred from the content), `is_public`
    /// (`true` or `false`, default false) and `published` (`true` or `false`, default true).
    /// Other parts are ignored. A workspace key's (`ws`) asset is made in its workspace.
    pub(super) async fn upload_asset(
        &self,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let boundary = upload::boundary(req.content_type)?;
        upload::check_declared(req.declared_length(), self.inner.config.max_upload)?;
        let on_duplicate = query::on_duplicate_query(req.query)?;
        let mut written = Written::default();
        let outcome = self
            .create_uploaded(
                boundary,
                req.body.into_stream(self.inner.config.body_timeout),
                (on_duplicate, ws),
                &mut written,
            )
            .await;
        if matches!(outcome, Ok(Uploaded::Reused(_))) {
            written.discard(&self.inner.files).await;
        } else {
            written.settle(&self.inner.files, &outcome).await;
        }
        match outcome? {
            Uploaded::Created(asset) => Ok(created(&asset, req.mount)),
            Uploaded::Reused(asset) => Ok(data(200, AssetJson(&asset))),
        }
    }

    /// The steps of an upload; what they write goes into `written`.
    async fn create_uploaded(
        &self,
        boundary: String,
        body: BodyStream,
        (on_duplicate, ws): (OnDuplicate, Option<&str>),
        written: &mut Written,
    ) -> Result<Uploaded, ApiError> {
        let files = &self.inner.files;
        let form =
            upload::read_form(files, boundary, body, self.inner.config.max_upload, written).await?;
        self.make_uploaded(form, (on_duplicate, ws), written).await
    }

    /// An upload's form, its file stored already, made into an asset as an upload makes it
    /// (or, under `reuse`, the asset that has its bytes); what it writes goes into `written`.
    pub(super) async fn make_uploaded(
        &self,
        form: upload::Form,
        (on_duplicate, ws): (OnDuplicate, Option<&str>),
        written: &mut Written,
    ) -> Result<Uploaded, ApiError> {
        let files = &self.inner.files;
        let config = &self.inner.config;
        let (path, client_name) = form.stored_file()?;
        let declared = upload::declared_type(&form)?;
        upload::check_fields(&form, config)?;
        let named = form
            .workspace_id
            .as_deref()
            .map(|w| validate::workspace_id("workspace_id", w))
            .transpose()?;
        let workspace = named_workspace(ws, named)?;
        let same = self
            .on_duplicate(on_duplicate, form.checksum, workspace.as_deref())
            .await?;
        if let Some(same) = same {
            return Ok(Uploaded::Reused(same));
        }
        let id = Uuid::new_v4();
        let mut file = ingest::ingest(
            files,
            config,
            &self.inner.previews,
            path,
            declared,
            "file",
            form.checksum,
        )
        .await?;
        written.extend(file.thumbnail_path.clone());
        let text = file.take_text();
        let mut new = upload::new_asset(&form, client_name, &file.info, config)?;
        new.workspace_id = workspace;
        let asset = records::new_asset(id, new, Some(file));
        let asset = self.inner.store.insert_asset(asset, &self.log).await?;
        self.keep_text(asset.id, text, false).await;
        Ok(Uploaded::Created(asset))
    }
}

/// What an upload came to: a new asset, or (`on_duplicate=reuse`) the asset that has its
/// bytes already.
pub(super) enum Uploaded {
    Created(Asset),
    Reused(Asset),
}

/// 201 with the asset and its `Location`.
pub(super) fn created(asset: &Asset, mount: &str) -> Reply {
    data(201, AssetJson(asset)).with_header("location", location(mount, "assets", asset.id))
}
