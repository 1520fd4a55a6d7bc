//! Library operations: list, read (with the detail page cache), write whole, delete, and the
//! typed save.

use std::collections::HashMap;

use uuid::Uuid;

use super::access::{in_workspace, named_workspace};
use super::{Service, location};
use crate::detail_cache::{DetailCache, page_etag};
use crate::error::{ApiError, StoreError};
use crate::model::{Asset, LibraryRows, PutOutcome, ViewCount};
use crate::page::LibraryPagination;
use crate::page_cache::Turns;
use crate::query;
use crate::records;
use crate::render::{LibraryList, LibraryListItem};
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::tree;
use crate::validate::{self, LibraryDoc};

impl Service {
    /// `GET /api/v1/libraries`: a page of published libraries (of its workspace, for a
    /// workspace key: `ws`).
    pub(super) async fn list_libraries(
        &self,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let mut q = query::library_query(req.query, self.inner.config.max_page_size)?;
        q.workspace_id = named_workspace(ws, q.workspace_id)?;
        let page = self.inner.store.list_libraries(&q).await?;

        Ok(Reply::json_value(
            200,
            &LibraryList {
                libraries: page.items.iter().map(LibraryListItem::of).collect(),
                pagination: LibraryPagination::new(q.page, q.limit, page.total),
            },
        ))
    }

    /// The rows of the published library `id`, or 404.
    pub(super) async fn published_library(&self, id: Uuid) -> Result<LibraryRows, ApiError> {
        self.inner
            .store
            .load_library(id)
            .await?
            .filter(|r| r.library.settings.published)
            .ok_or(ApiError::LibraryNotFound)
    }

    /// [`Service::published_library`] for a caller bound to workspace `seen`: one of another
    /// workspace is missing too.
    pub(super) async fn published_library_in(
        &self,
        id: Uuid,
        seen: Option<&str>,
    ) -> Result<LibraryRows, ApiError> {
        let rows = self.published_library(id).await?;
        if in_workspace(seen, rows.library.settings.workspace_id.as_deref()) {
            Ok(rows)
        } else {
            Err(ApiError::LibraryNotFound)
        }
    }

    /// `GET /api/v1/libraries/{library_id}`: the detail of a published library; counts one
    /// view, and shows the count including it. A `HEAD` counts no view.
    ///
    /// With [`crate::Config::detail_cache`] the rendered page is kept under the library's
    /// content version and reused, with the new view count, while the version stays the same.
    pub(super) async fn get_library(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let id = validate::parse_id("library_id", id)?;
        self.library_page(id, req, ws).await
    }

    /// The detail of the published library `id`, counting one view (none for a `HEAD`), with
    /// an `ETag` that covers everything on the page but the view count. For a caller bound to
    /// workspace `ws`, one of another workspace is missing, and counts no view.
    pub(super) async fn library_page(
        &self,
        id: Uuid,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let q = query::detail_query(req.query)?;
        if req.head {
            let rows = self.published_library_in(id, ws).await?;
            let (reply, etag) = self.render_detail(&rows, q.include_assets);
            return Ok(reply.with_header("etag", etag));
        }
        let store = &self.inner.store;
        let seen = match ws {
            None => store.record_library_view(id).await?,
            Some(ws) => store.record_library_view_in(id, ws).await?,
        };
        let seen = seen.ok_or(ApiError::LibraryNotFound)?;
        let key = (id, q.include_assets);
        let cache = self
            .inner
            .config
            .detail_cache
            .then_some(&self.inner.details);
        if let Some((body, etag)) = cache.and_then(|c| c.get(key, seen.version, seen.views, true)) {
            return Ok(Reply::json_bytes(200, body).with_header("etag", etag));
        }
        // Boxed: a hit's future stays as small as it was.
        Box::pin(self.render_library_page(key, seen, cache)).await
    }

    /// A library page that was not kept, rendered at `seen` (the version and views of this
    /// view) and kept. One render at a time per page: the views that wait for it find it kept.
    async fn render_library_page(
        &self,
        key: (Uuid, bool),
        seen: ViewCount,
        cache: Option<&DetailCache>,
    ) -> Result<Reply, ApiError> {
        let _turn = Turns::wait_in(cache.map(DetailCache::turns), key).await;
        if let Some((body, etag)) = cache.and_then(|c| c.get(key, seen.version, seen.views, false))
        {
            return Ok(Reply::json_bytes(200, body).with_header("etag", etag));
        }
        let (id, include_assets) = key;
        let mut rows = self.published_library(id).await?;
        rows.library.view_count = seen.views;
        let (reply, etag) = self.render_detail(&rows, include_assets);
        if let Some(cache) = cache {
            cache.put(
                key,
                seen.version,
                seen.views,
                reply.body.clone(),
                etag.clone(),
            );
        }
        Ok(reply.with_header("etag", etag))
    }

    /// A library's detail page and its `ETag` (which leaves out the view count).
    fn render_detail(&self, rows: &LibraryRows, include_assets: bool) -> (Reply, String) {
        let detail = tree::assemble(rows, include_assets, &self.inner.config.files_base_url);
        let reply = Reply::json_page(200, &detail);
        let etag = page_etag(&reply.body, rows.library.view_count);
        (reply, etag)
    }

    /// `PUT /api/v1/libraries/{library_id}`: creates (201) or replaces (200) a whole library,
    /// answering its detail with assets (a write counts no view). A workspace key (`ws`)
    /// writes in its workspace: a library of another is answered as missing (404), and only
    /// assets of its workspace are there to be placed.
    pub(super) async fn put_library(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let mount = req.mount;
        let body = self.json_body(req).await?;
        let id = validate::parse_id("library_id", id)?;
        let mut doc = validate::library_doc(&body, &self.inner.config)?;
        doc.settings.workspace_id = named_workspace(ws, doc.settings.workspace_id.take())?;
        if let Some(own) = ws
            && let Some(found) = self.inner.store.library_workspace(id).await?
            && found.as_deref() != Some(own)
        {
            return Err(ApiError::LibraryNotFound);
        }
        let outcome = self.save_library_seen(id, doc, ws).await?;
        let rows = self
            .inner
            .store
            .load_library(id)
            .await?
            .ok_or(ApiError::LibraryNotFound)?;
        let detail = tree::assemble(&rows, true, &self.inner.config.files_base_url);
        Ok(match outcome {
            PutOutcome::Created => Reply::json_value(201, &detail)
                .with_header("location", location(mount, "libraries", id)),
            PutOutcome::Replaced => Reply::json_value(200, &detail),
        })
    }

    /// Creates or replaces the library `id` from a validated document, as
    /// `PUT /api/v1/libraries/{id}` does: every entry's asset must exist and be of a type a
    /// library holds (else 400 naming the entry's path), and the whole library is written in
    /// one atomic change.
    ///
    /// ```
    /// use assetlib_core::{Config, PutOutcome, Service};
    /// use assetlib_core::validate::library_doc;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let service = Service::in_memory(Config::default());
    /// let doc = library_doc(br#"{"title": "Press", "sections": [{"title": "Logos"}]}"#,
    ///                       service.config())?;
    /// let id = uuid::Uuid::new_v4();
    /// assert_eq!(service.save_library(id, doc).await?, PutOutcome::Created);
    /// # Ok::<(), assetlib_core::ApiError>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// 400 naming the entry or `slug` (a given slug another library holds); 500 when the
    /// store fails.
    pub async fn save_library(&self, id: Uuid, doc: LibraryDoc) -> Result<PutOutcome, ApiError> {
        self.save_library_seen(id, doc, None).await
    }

    /// [`Service::save_library`] for a caller bound to workspace `seen`: an asset of another
    /// workspace is to it as a missing one.
    async fn save_library_seen(
        &self,
        id: Uuid,
        doc: LibraryDoc,
        seen: Option<&str>,
    ) -> Result<PutOutcome, ApiError> {
        self.check_entries(&doc, seen).await?;
        let paths: HashMap<Uuid, String> = doc
            .entries()
            .map(|e| (e.asset_id, e.path.clone()))
            .collect();
        let workspace = doc.settings.workspace_id.clone();
        let log = self.log.in_workspace(workspace.as_deref());
        let outcome = match self
            .inner
            .store
            .put_library(records::library_write(id, doc), &log)
            .await
        {
            Ok(outcome) => outcome,
            // The asset was deleted, or moved to another workspace (to a caller bound to a
            // workspace, missing now), after the check above: the entry is what is wrong.
            Err(
                e @ (StoreError::UnknownAsset { id } | StoreError::AssetOfAnotherWorkspace { id }),
            ) => {
                let path = paths.get(&id).map_or("asset_id", String::as_str);
                let message = match (e, seen) {
                    (StoreError::AssetOfAnotherWorkspace { .. }, None) => {
                        of_another_workspace(id, workspace.as_deref())
                    }
                    _ => format!("asset {id} does not exist"),
                };
                return Err(ApiError::validation(path, message));
            }
            Err(other) => return Err(other.into()),
        };
        self.inner.details.forget(id);
        Ok(outcome)
    }

    /// The assets with these ids that exist, by id.
    pub(super) async fn assets_by_id(
        &self,
        ids: &[Uuid],
    ) -> Result<HashMap<Uuid, Asset>, ApiError> {
        let assets = self.inner.store.get_assets(ids).await?;
        Ok(assets.into_iter().map(|a| (a.id, a)).collect())
    }

    /// Checks that every entry's asset exists (as a caller bound to workspace `seen` sees
    /// assets) and may be placed in the library: one of the library's workspace, or (in a
    /// library of a workspace) of none.
    async fn check_entries(&self, doc: &LibraryDoc, seen: Option<&str>) -> Result<(), ApiError> {
        let ids: Vec<Uuid> = doc.entries().map(|e| e.asset_id).collect();
        if ids.is_empty() {
            return Ok(());
        }
        let mut found = self.assets_by_id(&ids).await?;
        found.retain(|_, a| in_workspace(seen, a.workspace_id.as_deref()));
        let workspace = doc.settings.workspace_id.as_deref();
        for entry in doc.entries() {
            match found.get(&entry.asset_id) {
                Some(a) if !crate::model::may_hold(workspace, a.workspace_id.as_deref()) => {
                    return Err(ApiError::validation(
                        &entry.path,
                        of_another_workspace(a.id, workspace),
                    ));
                }
                None => {
                    return Err(ApiError::validation(
                        &entry.path,
                        format!("asset {} does not exist", entry.asset_id),
                    ));
                }
                Some(a) if !a.asset_type.is_library_type() => {
                    return Err(ApiError::validation(
                        &entry.path,
                        format!(
                            "asset {} is of type {}; libraries hold pdf, image, video, audio \
                             and document assets",
                            a.id, a.asset_type
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// `DELETE /api/v1/libraries/{library_id}`: 204, or 404 if there is none (of its
    /// workspace, for a workspace key: `ws`).
    pub(super) async fn delete_library(
        &self,
        id: &str,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let id = validate::parse_id("library_id", id)?;
        self.library_in(id, ws).await?;
        let log = self.log_of_library(id, ws).await?;
        let deleted = self.inner.store.delete_library(id, &log).await?;
        self.inner.details.forget(id);
        if deleted {
            Ok(Reply::empty(204))
        } else {
            Err(ApiError::LibraryNotFound)
        }
    }
}

/// Why a library of `workspace` cannot place the asset `id`.
fn of_another_workspace(id: Uuid, workspace: Option<&str>) -> String {
    format!(
        "asset {id} is of another workspace; a library holds assets of its own workspace{}",
        if workspace.is_some() {
            " and of none"
        } else {
            ""
        }
    )
}
