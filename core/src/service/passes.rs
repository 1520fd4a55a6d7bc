//! Library passes: made, listed, read and revoked by a key with `write:passes`; and which
//! operations a pass opens, for which library.

use uuid::Uuid;

use super::access::{NOT_FOR_PASSES, OTHER_LIBRARY};
use super::{Service, location};
use crate::auth;
use crate::error::ApiError;
use crate::model::LibraryPass;
use crate::page::AssetPagination;
use crate::query;
use crate::records::now;
use crate::render::{Envelope, NewPassWire, PassFields, PassWire, data};
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::routes::Operation;
use crate::validate::{self, PassDoc};

/// The 401 of a keyless request that carries a pass in its query.
pub(super) const PASS_IN_QUERY: ApiError = ApiError::Unauthorized(
    "Library passes are taken only from the Authorization header ('Pass alp_...'), never from the query",
);

/// Whether a query carries something shaped like a pass (a value starting `alp_`).
pub(super) fn in_query(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        form_urlencoded::parse(q.as_bytes()).any(|(name, value)| {
            name.starts_with(auth::PASS_PREFIX) || value.starts_with(auth::PASS_PREFIX)
        })
    })
}

impl Service {
    /// For an operation on a library (`id` its path id or slug, with the request's query),
    /// that it is the pass's
    /// library: else 403. Operations on one asset are judged with the asset
    /// ([`Service::may_download`]).
    pub(super) async fn pass_may_open(
        &self,
        op: Operation,
        (id, query): (&str, Option<&str>),
        pass: &LibraryPass,
    ) -> Result<(), ApiError> {
        let library = match op {
            Operation::GetLibrary | Operation::DownloadLibrary | Operation::LibraryDownloadUrl => {
                validate::parse_id("library_id", id)?
            }
            Operation::GetLibraryBySlug => self.library_of_slug(id, query, None).await?,
            Operation::DownloadAsset
            | Operation::AssetDownloadUrl
            | Operation::AssetImage
            | Operation::AssetImageUrl => return Ok(()),
            _ => return Err(NOT_FOR_PASSES),
        };
        if library == pass.library_id {
            Ok(())
        } else {
            Err(OTHER_LIBRARY)
        }
    }

    /// `POST /api/v1/libraries/{library_id}/passes`: 201 with the new pass, its token shown
    /// this once, and its `Location`.
    pub(super) async fn post_pass(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let mount = req.mount;
        let body = self.json_body(req).await?;
        let library_id = validate::parse_id("library_id", id)?;
        let doc = validate::pass_doc(&body, now())?;
        self.library_in(library_id, ws).await?;
        let (pass, token) = self.create_pass(library_id, doc).await?;
        let path = format!("libraries/{library_id}/passes");
        Ok(data(
            201,
            NewPassWire {
                id: pass.id,
                token: &token,
                fields: PassFields::of(&pass),
            },
        )
        .with_header("location", location(mount, &path, pass.id)))
    }

    /// Makes a pass for the library `library_id` from a validated body, as
    /// `POST /api/v1/libraries/{library_id}/passes` does, and returns its record and the pass
    /// itself (shown once; only its SHA-256 is stored). The library may be a draft; each of
    /// `asset_ids` must be one of its assets.
    ///
    /// ```
    /// use assetlib_core::validate::{library_doc, pass_doc};
    /// use assetlib_core::{Config, Service};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let service = Service::in_memory(Config::default());
    /// let library = uuid::Uuid::new_v4();
    /// let doc = library_doc(br#"{"title": "Fonts", "is_paid": true, "price": 49}"#, service.config())?;
    /// service.save_library(library, doc).await?;
    /// let order = pass_doc(br#"{"label": "Order 1042", "expires_in": 2592000}"#, chrono::Utc::now())?;
    /// let (pass, token) = service.create_pass(library, order).await?;
    /// assert!(token.starts_with("alp_"));
    /// assert_eq!(pass.downloads_used, 0);
    /// # Ok::<(), assetlib_core::ApiError>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    /// 404 when there is no such library (or it is deleted meanwhile); 400 on `asset_ids[i]`
    /// for an asset the library does not hold; 500 when the store fails.
    pub async fn create_pass(
        &self,
        library_id: Uuid,
        doc: PassDoc,
    ) -> Result<(LibraryPass, String), ApiError> {
        let rows = self
            .inner
            .store
            .load_library(library_id)
            .await?
            .ok_or(ApiError::LibraryNotFound)?;
        for (n, id) in doc.asset_ids.iter().flatten().enumerate() {
            if !rows.entries.iter().any(|row| row.entry.asset_id == *id) {
                let path = format!("asset_ids[{n}]");
                return Err(ApiError::validation(
                    &path,
                    format!("{path}: asset {id} is not in this library"),
                ));
            }
        }
        let new = auth::generate_pass().map_err(ApiError::internal)?;
        let pass = LibraryPass {
            id: Uuid::new_v4(),
            library_id,
            token_hash: new.hash,
            label: doc.label,
            expires_at: doc.expires_at,
            max_downloads: doc.max_downloads,
            downloads_used: 0,
            asset_ids: doc.asset_ids,
            created_at: now(),
            revoked_at: None,
        };
        // The pass's event names its library's workspace.
        let log = self
            .log
            .in_workspace(rows.library.settings.workspace_id.as_deref());
        self.pass_store()?.insert_pass(pass.clone(), &log).await?;
        Ok((pass, new.secret))
    }

    /// `GET /api/v1/libraries/{library_id}/passes?page&per_page`: a page of the library's
    /// passes, newest first, without tokens; 404 when there is no such library.
    pub(super) async fn pass_list(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let library_id = validate::parse_id("library_id", id)?;
        let q = query::page_query(req.query, self.inner.config.max_page_size)?;
        self.library_in(library_id, ws).await?;
        let offset = crate::page::offset(q.page, q.per_page);
        let page = self
            .pass_store()?
            .list_passes(library_id, offset, q.per_page)
            .await?;
        // A library with passes exists; one without may not.
        if page.total == 0 && self.inner.store.load_library(library_id).await?.is_none() {
            return Err(ApiError::LibraryNotFound);
        }
        let items: Vec<PassWire<'_>> = page
            .items
            .iter()
            .map(|p| PassWire {
                id: p.id,
                fields: PassFields::of(p),
            })
            .collect();
        Ok(Reply::json_value(
            200,
            &Envelope {
                data: items,
                pagination: Some(AssetPagination::new(q.page, q.per_page, page.total)),
            },
        ))
    }

    /// `GET /api/v1/libraries/{library_id}/passes/{pass_id}`: one pass, without its token.
    pub(super) async fn pass_detail(
        &self,
        id: &str,
        pass_id: &str,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let pass = self.library_pass(id, pass_id, ws).await?;
        Ok(data(
            200,
            PassWire {
                id: pass.id,
                fields: PassFields::of(&pass),
            },
        ))
    }

    /// `DELETE /api/v1/libraries/{library_id}/passes/{pass_id}`: revokes the pass (204, also
    /// when it was revoked already: the first time is kept). It stops working at once, on
    /// every replica: a pass is read from the store on every use.
    pub(super) async fn delete_pass(
        &self,
        id: &str,
        pass_id: &str,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let pass = self.library_pass(id, pass_id, ws).await?;
        let log = self.log_of_library(pass.library_id, ws).await?;
        if !self.pass_store()?.revoke_pass(pass.id, now(), &log).await? {
            return Err(ApiError::PassNotFound);
        }
        Ok(Reply::empty(204))
    }

    /// The pass `pass_id` of the library `id` (path ids): 400 when either is not an id, 404
    /// when there is no such pass in that library (or the library is not of the workspace of
    /// a workspace key, `ws`).
    async fn library_pass(
        &self,
        id: &str,
        pass_id: &str,
        ws: Option<&str>,
    ) -> Result<LibraryPass, ApiError> {
        let library_id = validate::parse_id("library_id", id)?;
        let pass_id = validate::parse_id("pass_id", pass_id)?;
        self.library_in(library_id, ws).await.map_err(|e| match e {
            ApiError::LibraryNotFound => ApiError::PassNotFound,
            other => other,
        })?;
        self.pass_store()?
            .get_pass(pass_id)
            .await?
            .filter(|p| p.library_id == library_id)
            .ok_or(ApiError::PassNotFound)
    }
}
