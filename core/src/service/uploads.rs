//! Large uploads over HTTP (scope `write:assets`): the tus 1.0 protocol at
//! `/api/v1/uploads` ([`crate::tus`]), and direct uploads to an S3 bucket with a presigned
//! `PUT` at `/api/v1/uploads/direct` (`direct.rs`). Either way the last byte makes the asset exactly as
//! `POST /api/v1/assets/upload` does, once, whichever process the requests reach.
//!
//! A request that writes an upload holds its lease ([`crate::store::UploadStore`]) and runs
//! in a task of its own, so a client that goes away in the middle never leaves a half-saved
//! upload or a lease held: the task saves what arrived, makes the asset when it was the last
//! byte, and ends the lease.

use std::time::Duration;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::access::{in_workspace, upload_workspace};
use super::lease::Lease;
use super::{Service, location};
use crate::error::{ApiError, StoreError, UploadLimit};
use crate::events::Log;
use crate::files::Written;
use crate::ingest;
use crate::model::Asset;
use crate::records::{self, now};
use crate::render::data;
use crate::reply::Reply;
use crate::request::{BodyStream, RawRequest};
use crate::store::UploadLease;
use crate::tus::storage::{self, Patch};
use crate::tus::wire::UploadWire;
use crate::tus::{self, Checksum, Metadata, Upload};
use crate::upload::{self, Form};
use crate::validate::{self, OnDuplicate};

/// The 404 of an upload that does not exist.
pub(super) const NO_UPLOAD: ApiError = tus::NOT_FOUND;

/// How often the reaper looks for expired uploads, at most.
const REAP_EVERY: Duration = Duration::from_secs(60);

/// Expired uploads removed per store read.
const REAP_BATCH: u32 = 100;

/// An HTTP date (RFC 9110), as `Upload-Expires` is written.
fn http_date(at: DateTime<Utc>) -> String {
    at.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// `Upload-Offset`, `Upload-Length` and, while it may still expire, `Upload-Expires` of
/// `upload`; `Asset-Location` once its asset is made.
fn with_state(mut reply: Reply, upload: &Upload, mount: &str) -> Reply {
    reply = reply
        .with_header("upload-offset", upload.offset.to_string())
        .with_header("upload-length", upload.length.to_string());
    if upload.finished {
        reply.with_header("asset-location", location(mount, "assets", upload.asset_id))
    } else {
        reply.with_header("upload-expires", http_date(upload.expires_at))
    }
}

/// 415 unless a `PATCH` (or a creation with its first bytes) is
/// `application/offset+octet-stream`.
fn check_octets(content_type: Option<&[u8]>) -> Result<(), ApiError> {
    let essence = content_type
        .and_then(|c| std::str::from_utf8(c).ok())
        .map(|c| c.split(';').next().unwrap_or("").trim());
    match essence {
        Some(e) if e.eq_ignore_ascii_case(tus::OFFSET_OCTET_STREAM) => Ok(()),
        _ => Err(ApiError::UnsupportedMediaType {
            expected: tus::OFFSET_OCTET_STREAM,
        }),
    }
}

/// 423 with the seconds left of a lease that ends at `until`.
fn locked(until: DateTime<Utc>) -> ApiError {
    let left = (until - Utc::now()).num_seconds().max(1);
    ApiError::Locked {
        retry_after: u64::try_from(left).unwrap_or(1),
    }
}

impl Service {
    /// The largest resumable upload taken ([`crate::Config::max_resumable_upload`], within
    /// what the file store can hold in one multipart upload).
    pub(super) fn max_resumable(&self) -> u64 {
        storage::most(&self.inner.files, self.inner.config.max_resumable_upload)
    }

    /// The 413 of a resumable or direct upload whose `subject` is over `limit` bytes, the
    /// largest it may be: [`crate::Config::max_resumable_upload`], or what the file store
    /// (`store_limit`) takes when that is less.
    pub(super) fn upload_too_large(
        &self,
        subject: &'static str,
        limit: u64,
        store_limit: UploadLimit,
    ) -> ApiError {
        let of = if limit < self.inner.config.max_resumable_upload {
            store_limit
        } else {
            UploadLimit::MaxResumableUpload
        };
        ApiError::UploadTooLarge { subject, limit, of }
    }

    /// How long a request's lease on an upload runs without a renewal: longer than a body
    /// may stall ([`crate::Config::body_timeout`]).
    pub(super) fn lease_term(&self) -> Duration {
        self.inner.config.body_timeout + Duration::from_secs(30)
    }

    /// `POST /api/v1/uploads`: a new upload of `Upload-Length` bytes for the asset
    /// `Upload-Metadata` describes (checked now, as an upload form's fields are), 201 with its
    /// `Location`; a body (`creation-with-upload`) is its first bytes.
    pub(super) async fn create_upload(
        &self,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        tus::check_version(req.tus.resumable)?;
        if req.tus.upload_length.is_none() && req.tus.upload_defer_length.is_some() {
            return Err(ApiError::validation(
                "Upload-Length",
                "Upload-Length is required: this server does not take deferred lengths",
            ));
        }
        let length = tus::parse_length(req.tus.upload_length, self.max_resumable()).map_err(
            |e| match e {
                ApiError::PayloadTooLarge { limit } => {
                    self.upload_too_large("Upload-Length", limit, UploadLimit::StoreParts)
                }
                other => other,
            },
        )?;
        let metadata = Metadata::parse(req.tus.upload_metadata)?;
        self.check_metadata(&metadata)?;
        let workspace = upload_workspace(&metadata, ws)?;
        let with_body = req.content_type.is_some() || req.declared_length().unwrap_or(0) > 0;
        if with_body {
            check_octets(req.content_type)?;
        }
        let checksum = Checksum::parse(req.tus.upload_checksum)?;
        let id = Uuid::new_v4();
        let name = metadata.filename.as_deref().unwrap_or("file");
        let path = format!("uploads/{id}/{}", upload::safe_name(name));
        let stored = storage::begin(&self.inner.files, &path).await?;
        let at = now();
        let upload = Upload {
            id,
            length,
            offset: 0,
            metadata,
            path,
            stored,
            asset_id: Uuid::new_v4(),
            finished: false,
            created_at: at,
            expires_at: at
                + chrono::Duration::from_std(self.inner.config.upload_expiry)
                    .unwrap_or(chrono::Duration::MAX),
            sha256: Some(tus::RunningSha256::default()),
            metadata_header: Metadata::header_of(req.tus.upload_metadata),
            workspace_id: workspace,
        };
        let holder = Uuid::new_v4();
        let term = self.lease_term();
        if let Err(e) = self
            .upload_store()?
            .insert_upload(&upload, holder, Lease::until(term))
            .await
        {
            storage::discard(&self.inner.files, &upload, false).await;
            return Err(e.into());
        }
        let lease = Lease::new(self.inner.store.clone(), holder, term);
        let body = if with_body {
            req.body.into_stream(self.inner.config.body_timeout)
        } else {
            Box::pin(futures_util::stream::empty())
        };
        let (upload, outcome) = self.receive(upload, lease, Patch { body, checksum }).await;
        let upload_at = location(req.mount, "uploads", upload.id);
        let reply = match outcome {
            // A body that broke off keeps what arrived: the client goes on from there.
            Ok(()) | Err(ApiError::RequestTimeout { .. } | ApiError::Validation { .. }) => {
                Reply::empty(201)
            }
            Err(e) => e.into_reply(),
        };
        Ok(with_state(reply, &upload, req.mount).with_header("location", upload_at))
    }

    /// 400 unless `metadata` makes an asset as an upload form's fields would: its flags,
    /// title and description valid, its type (when given) one with a file. Any type may be
    /// as large as the upload: files larger than [`crate::Config::max_upload`] are read by
    /// ranges ([`crate::extract::preview_ranged`]).
    pub(super) fn check_metadata(&self, metadata: &Metadata) -> Result<(), ApiError> {
        let form = Form::of_metadata(metadata, "");
        upload::check_fields(&form, &self.inner.config)?;
        OnDuplicate::parse("on_duplicate", metadata.on_duplicate.as_deref())?;
        upload::declared_type(&form)?;
        Ok(())
    }

    /// `HEAD` (and `GET`) `/api/v1/uploads/{id}`: how far the upload is, and the
    /// `Upload-Metadata` it was made with, unchanged. An upload that has every byte but no
    /// asset yet (its last request's process died) is finished now.
    pub(super) async fn upload_status(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        if req.head {
            tus::check_version(req.tus.resumable)?;
        }
        let id = validate::parse_id("upload_id", id)?;
        let mut upload = self
            .upload_store()?
            .get_upload(id)
            .await?
            .filter(|u| in_workspace(ws, u.workspace_id.as_deref()))
            .ok_or(NO_UPLOAD)?;
        if upload.is_complete() && !upload.finished && !upload.is_direct() {
            upload = self.finish_left(upload).await?;
        }
        if !upload.finished && upload.expires_at <= now() {
            return Err(ApiError::UploadGone);
        }
        let reply = with_state(data(200, UploadWire::of(&upload)), &upload, req.mount);
        // tus 1.0: the metadata the upload was made with, as the client sent it.
        Ok(match &upload.metadata_header {
            Some(sent) => reply.with_header("upload-metadata", sent.clone()),
            None => reply,
        })
    }

    /// Makes the asset of a complete upload that has none, unless a request holds it (which
    /// makes it then); answers the upload as it stands after.
    async fn finish_left(&self, upload: Upload) -> Result<Upload, ApiError> {
        let holder = Uuid::new_v4();
        let term = self.lease_term();
        let taken = self
            .upload_store()?
            .lease_upload(upload.id, holder, now(), Lease::until(term))
            .await?;
        let UploadLease::Taken(upload) = taken else {
            return Ok(upload);
        };
        let upload = *upload;
        let lease = Lease::new(self.inner.store.clone(), holder, term);
        let empty: BodyStream = Box::pin(futures_util::stream::empty());
        let (upload, outcome) = self
            .receive(
                upload,
                lease,
                Patch {
                    body: empty,
                    checksum: None,
                },
            )
            .await;
        outcome.map(|()| upload)
    }

    /// `PATCH /api/v1/uploads/{id}`: appends the body at `Upload-Offset` (which must be the
    /// upload's offset: else 409 with the right one), 204 with the new offset; the last byte
    /// makes the asset (`Asset-Location`).
    pub(super) async fn patch_upload(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        tus::check_version(req.tus.resumable)?;
        check_octets(req.content_type)?;
        let offset = tus::parse_offset(req.tus.upload_offset)?;
        let checksum = Checksum::parse(req.tus.upload_checksum)?;
        let id = validate::parse_id("upload_id", id)?;
        self.upload_in(id, ws).await?;
        let (upload, lease) = self.take_upload(id).await?;
        let refusal = if upload.is_direct() {
            Some(NO_UPLOAD)
        } else if !upload.finished && upload.expires_at <= now() {
            Some(ApiError::UploadGone)
        } else if offset != upload.offset {
            Some(ApiError::OffsetMismatch {
                sent: offset,
                offset: upload.offset,
            })
        } else if req
            .declared_length()
            .is_some_and(|len| len > upload.length - upload.offset)
        {
            Some(ApiError::UploadTooLarge {
                subject: "Request body",
                limit: upload.length - upload.offset,
                of: UploadLimit::Remaining,
            })
        } else {
            None
        };
        if let Some(refusal) = refusal {
            lease.release(&upload).await?;
            return Err(refusal);
        }
        let body = req.body.into_stream(self.inner.config.body_timeout);
        let (upload, outcome) = self.receive(upload, lease, Patch { body, checksum }).await;
        outcome?;
        Ok(with_state(Reply::empty(204), &upload, req.mount))
    }

    /// For a caller bound to workspace `seen`, that upload `id` is of it: else the 404 of a
    /// missing upload, asked before the upload is leased. Nothing to ask for a caller bound
    /// to none.
    pub(super) async fn upload_in(&self, id: Uuid, seen: Option<&str>) -> Result<(), ApiError> {
        let Some(own) = seen else {
            return Ok(());
        };
        match self.upload_store()?.get_upload(id).await? {
            Some(upload) if upload.workspace_id.as_deref() == Some(own) => Ok(()),
            _ => Err(NO_UPLOAD),
        }
    }

    /// Takes upload `id` for this request: the upload, and the lease that keeps every other
    /// request off it until released. 423 while another request holds it (410 when it expired
    /// unfinished: the reaper's), 404 when there is none.
    pub(super) async fn take_upload(&self, id: Uuid) -> Result<(Upload, Lease), ApiError> {
        let holder = Uuid::new_v4();
        let term = self.lease_term();
        match self
            .upload_store()?
            .lease_upload(id, holder, now(), Lease::until(term))
            .await?
        {
            UploadLease::Taken(upload) => {
                Ok((*upload, Lease::new(self.inner.store.clone(), holder, term)))
            }
            UploadLease::Busy(until) => Err(self.busy(id, until).await),
            UploadLease::Missing => Err(NO_UPLOAD),
        }
    }

    /// What a request for an upload someone else holds until `until` is told: 410 when it
    /// expired unfinished (the reaper holds it), else 423.
    async fn busy(&self, id: Uuid, until: DateTime<Utc>) -> ApiError {
        let Ok(uploads) = self.upload_store() else {
            return NO_UPLOAD;
        };
        match uploads.get_upload(id).await {
            Ok(Some(upload)) if !upload.finished && upload.expires_at <= now() => {
                ApiError::UploadGone
            }
            Ok(None) => NO_UPLOAD,
            _ => locked(until),
        }
    }

    /// `DELETE /api/v1/uploads/{id}` (`termination`): removes the upload and what it kept,
    /// 204. The asset of a finished upload stays (delete it as any asset).
    pub(super) async fn delete_upload(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        tus::check_version(req.tus.resumable)?;
        let id = validate::parse_id("upload_id", id)?;
        self.upload_in(id, ws).await?;
        let (upload, _lease) = self.take_upload(id).await?;
        self.remove_upload(&upload).await?;
        Ok(Reply::empty(204))
    }

    /// Removes an upload the caller holds and what it kept: its file too unless an asset
    /// was made of it.
    async fn remove_upload(&self, upload: &Upload) -> Result<(), ApiError> {
        let made = upload.finished || self.inner.store.get_asset(upload.asset_id).await?.is_some();
        storage::discard(&self.inner.files, upload, !made).await;
        self.upload_store()?.delete_upload(upload.id).await?;
        Ok(())
    }

    /// Appends `patch` to `upload` and, when that was its last byte, makes its asset, in a
    /// task of its own (which the request awaits), so that it runs to its end, and the lease
    /// ends, when the client goes away. Answers the upload as saved and how the request went.
    async fn receive(
        &self,
        mut upload: Upload,
        mut lease: Lease,
        patch: Patch,
    ) -> (Upload, Result<(), ApiError>) {
        let snapshot = upload.clone();
        // A clone acting as this one: the asset's event names the same key.
        let service = self.clone();
        let work = async move {
            let appended =
                storage::append(&service.inner.files, &mut upload, patch, &mut lease).await;
            let outcome = match appended {
                Ok(()) if upload.is_complete() && !upload.finished => service
                    .make_asset(&mut upload, &mut lease, None)
                    .await
                    .map(drop),
                other => {
                    let released = lease.release(&upload).await;
                    other.and(released.map(drop))
                }
            };
            (upload, outcome)
        };
        match tokio::spawn(work).await {
            Ok(done) => done,
            Err(e) => (snapshot, Err(ApiError::internal(e))),
        }
    }

    /// Makes the asset of a complete upload the caller holds, as an upload does: the file put
    /// in place, read for its metadata and thumbnail, the record stored under the upload's
    /// `asset_id` (so a second try after a crash finds it made). The lease ends either way;
    /// content that makes no asset (400) removes the upload.
    pub(super) async fn make_asset(
        &self,
        upload: &mut Upload,
        lease: &mut Lease,
        checksum: Option<[u8; 32]>,
    ) -> Result<Asset, ApiError> {
        let mut written = Written::default();
        let made = self.asset_of(upload, checksum, &mut written).await;
        written.settle(&self.inner.files, &made).await;
        match made {
            Ok(asset) => {
                // With `on_duplicate=reuse` the asset is one that has these bytes already:
                // the upload answers it, and its own file goes once that is recorded.
                let reused = asset.id != upload.asset_id;
                upload.asset_id = asset.id;
                upload.finished = true;
                lease.release(upload).await?;
                if reused {
                    self.inner.files.delete(&upload.path).await;
                }
                Ok(asset)
            }
            Err(e) if e.status() < 500 => {
                self.remove_upload(upload).await?;
                Err(e)
            }
            Err(e) => {
                lease.release(upload).await?;
                Err(e)
            }
        }
    }

    /// The steps of [`Service::make_asset`]; what they write goes into `written`.
    /// `checksum` is the file's SHA-256 when the caller read it already (a direct upload's).
    async fn asset_of(
        &self,
        upload: &Upload,
        checksum: Option<[u8; 32]>,
        written: &mut Written,
    ) -> Result<Asset, ApiError> {
        let (files, config, store) = (&self.inner.files, &self.inner.config, &self.inner.store);
        if let Some(asset) = store.get_asset(upload.asset_id).await? {
            return Ok(asset);
        }
        storage::finish(files, upload).await?;
        // The SHA-256 the requests carried, or (a direct upload, or a request that broke off
        // where the running hash could not follow) the finished file read once.
        let checksum = match checksum.or_else(|| upload.checksum()) {
            Some(sum) => sum,
            None => storage::measure(files, &upload.path, true)
                .await?
                .and_then(|(_, sum)| sum)
                .ok_or(NO_UPLOAD)?,
        };
        let on_duplicate =
            OnDuplicate::parse("on_duplicate", upload.metadata.on_duplicate.as_deref())?;
        if let Some(same) = self
            .on_duplicate(on_duplicate, Some(checksum), upload.workspace_id.as_deref())
            .await?
        {
            return Ok(same);
        }
        let form = Form::of_metadata(&upload.metadata, &upload.path);
        let declared = upload::declared_type(&form)?;
        let mut file = ingest::ingest(
            files,
            config,
            &self.inner.previews,
            &upload.path,
            declared,
            "file",
            Some(checksum),
        )
        .await?;
        let thumbnail = file.thumbnail_path.clone();
        written.extend(thumbnail.clone());
        let text = file.take_text();
        let client_name = upload.metadata.filename.as_deref().unwrap_or("");
        let mut new = upload::new_asset(&form, client_name, &file.info, config)?;
        new.workspace_id.clone_from(&upload.workspace_id);
        let asset = records::new_asset(upload.asset_id, new, Some(file));
        match store.insert_asset(asset, &self.log).await {
            Ok(asset) => {
                self.keep_text(asset.id, text, false).await;
                Ok(asset)
            }
            // Made by an earlier try: this try's thumbnail goes.
            Err(StoreError::DuplicateId { id }) => {
                if let Some(thumbnail) = thumbnail {
                    files.delete(&thumbnail).await;
                }
                store.get_asset(id).await?.ok_or(NO_UPLOAD)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Removes expired uploads, in batches, until none is left: what each kept, its file
    /// unless an asset was made of it, its multipart upload aborted. Uploads a request holds
    /// are left to a later round. Answers how many were removed.
    pub(super) async fn reap_uploads(&self) -> Result<u64, ApiError> {
        let Some(store) = self.inner.store.upload_store() else {
            return Ok(0);
        };
        let holder = Uuid::new_v4();
        let until = Lease::until(self.lease_term());
        let mut removed = 0;
        loop {
            let expired = store.expired_uploads(now(), REAP_BATCH).await?;
            if expired.is_empty() {
                return Ok(removed);
            }
            let mut taken = 0;
            for upload in expired {
                if let UploadLease::Taken(upload) =
                    store.lease_upload(upload.id, holder, now(), until).await?
                {
                    self.remove_upload(&upload).await?;
                    taken += 1;
                }
            }
            removed += taken;
            if taken == 0 {
                return Ok(removed);
            }
        }
    }

    /// Starts the reaper of expired uploads on the current Tokio runtime (when there is one):
    /// every quarter of [`crate::Config::upload_expiry`], at most a minute apart. It holds the
    /// service weakly and ends when it is dropped.
    pub(super) fn start_reaper(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let every = (self.inner.config.upload_expiry / 4).clamp(Duration::from_secs(1), REAP_EVERY);
        let weak = std::sync::Arc::downgrade(&self.inner);
        runtime.spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(inner) = weak.upgrade() else {
                    return;
                };
                let service = Service {
                    inner,
                    log: Log::default(),
                };
                match service.reap_uploads().await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(removed = n, "expired uploads removed"),
                    Err(e) => tracing::warn!(error = %e, "could not remove expired uploads"),
                }
            }
        });
    }
}
