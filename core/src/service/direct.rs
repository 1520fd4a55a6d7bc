//! Direct uploads to an S3 bucket (scope `write:assets`): a presigned `PUT` URL for the
//! client to put the file itself, then `complete`, which checks the file and makes the asset
//! as a resumable upload's last byte does (`uploads.rs`).

use std::time::Duration;

use uuid::Uuid;

use super::access::upload_workspace;
use super::assets::created;
use super::lease::Lease;
use super::uploads::NO_UPLOAD;
use super::{Service, location};
use crate::error::{ApiError, UploadLimit};
use crate::model::Asset;
use crate::records::now;
use crate::render::data;
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::tus::storage;
use crate::tus::wire::DirectWire;
use crate::tus::{Stored, Upload};
use crate::upload;
use crate::validate;

/// What the store of a direct upload's object takes in one `PUT` (S3's limit).
const MOST_DIRECT: u64 = 5 * 1024 * 1024 * 1024;

/// The longest a presigned URL lasts (S3's limit for SigV4).
const MOST_PRESIGNED: Duration = Duration::from_secs(7 * 24 * 3600);

impl Service {
    /// `POST /api/v1/uploads/direct` (files in S3 only): a presigned `PUT` URL for the file
    /// the body describes, and the upload's id; 201.
    pub(super) async fn create_direct_upload(
        &self,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let mount = req.mount;
        let presigner = self.inner.files.presigner().ok_or(ApiError::NotFound(
            "Direct uploads need files in an S3 bucket, and this server keeps its files \
                 on disk: use /api/v1/uploads (tus)",
        ))?;
        let body = self.json_body(req).await?;
        let doc = validate::direct_upload_doc(&body)?;
        let most = self.inner.config.max_resumable_upload.min(MOST_DIRECT);
        if doc.size > most {
            return Err(self.upload_too_large("size", most, UploadLimit::DirectPut));
        }
        let metadata = doc.metadata;
        self.check_metadata(&metadata)?;
        let workspace = upload_workspace(&metadata, ws)?;
        let id = Uuid::new_v4();
        let name = metadata.filename.as_deref().unwrap_or("file");
        let path = format!("uploads/{id}/{}", upload::safe_name(name));
        let expiry = self.inner.config.upload_expiry.min(MOST_PRESIGNED);
        let url = presigner.put_url(&path, expiry).await?;
        let at = now();
        let upload = Upload {
            id,
            length: doc.size,
            offset: 0,
            metadata,
            path,
            stored: Stored::Direct { sha256: doc.sha256 },
            asset_id: Uuid::new_v4(),
            finished: false,
            created_at: at,
            expires_at: at + chrono::Duration::from_std(expiry).unwrap_or(chrono::Duration::MAX),
            sha256: None,
            metadata_header: None,
            workspace_id: workspace,
        };
        let holder = Uuid::new_v4();
        self.upload_store()?
            .insert_upload(&upload, holder, at)
            .await?;
        let complete = format!("{}/complete", location(mount, "uploads/direct", id));
        let wire = DirectWire::of(&upload, &url, complete);
        Ok(data(201, wire).with_header("location", location(mount, "uploads", id)))
    }

    /// `POST /api/v1/uploads/direct/{id}/complete`: checks the object the client put (its
    /// size, and its SHA-256 when the upload named one) and makes the asset: 201 with it
    /// (200 when it was made already). A file over the limit is 413, one of another size
    /// 409 and one with another digest 460, each removing the object (put it again).
    pub(super) async fn complete_direct_upload(
        &self,
        id: &str,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let id = validate::parse_id("upload_id", id)?;
        self.upload_in(id, ws).await?;
        let (upload, mut lease) = self.take_upload(id).await?;
        if !upload.is_direct() {
            lease.release(&upload).await?;
            return Err(NO_UPLOAD);
        }
        // A clone acting as this one: the asset's event names the same key.
        let service = self.clone();
        let work = async move {
            let mut upload = upload;
            let outcome = service.complete_direct(&mut upload, &mut lease).await;
            if outcome.is_err() {
                // The lease ends with the request: a release that fails is logged; it runs
                // out on its own.
                if let Err(e) = lease.release(&upload).await {
                    tracing::warn!(error = %e, upload = %upload.id, "could not end a lease");
                }
            }
            outcome
        };
        let (status, asset) = tokio::spawn(work).await.map_err(ApiError::internal)??;
        let mut reply = created(&asset, req.mount);
        reply.status = status;
        Ok(reply)
    }

    /// The checks and the asset of [`Service::complete_direct_upload`]; the status to answer.
    async fn complete_direct(
        &self,
        upload: &mut Upload,
        lease: &mut Lease,
    ) -> Result<(u16, Asset), ApiError> {
        let files = &self.inner.files;
        if upload.finished {
            let asset = self.inner.store.get_asset(upload.asset_id).await?;
            lease.release(upload).await?;
            return asset.map(|a| (200, a)).ok_or(NO_UPLOAD);
        }
        if upload.expires_at <= now() {
            return Err(ApiError::UploadGone);
        }
        let Stored::Direct { sha256 } = &upload.stored else {
            return Err(NO_UPLOAD);
        };
        let most = self.inner.config.max_resumable_upload.min(MOST_DIRECT);
        // Read once, whole: its SHA-256 is checked against the one asked for (if any) and kept.
        let Some((size, digest)) = storage::measure(files, &upload.path, true).await? else {
            return Err(ApiError::UploadConflict(format!(
                "No file has been put at upload_url yet: put the {} bytes there first",
                upload.length
            )));
        };
        let refusal = if size > most {
            Some(self.upload_too_large("The file put", most, UploadLimit::DirectPut))
        } else if size != upload.length {
            Some(ApiError::UploadConflict(format!(
                "The file put is {size} bytes, not the {} declared; it was removed, put it again",
                upload.length
            )))
        } else if sha256.is_some() && digest.map(|d| hex(&d)).as_ref() != sha256.as_ref() {
            Some(ApiError::ChecksumMismatch)
        } else {
            None
        };
        if let Some(refusal) = refusal {
            files.delete(&upload.path).await;
            return Err(refusal);
        }
        upload.offset = size;
        let made_as = upload.asset_id;
        let asset = self.make_asset(upload, lease, digest).await?;
        // `on_duplicate=reuse` answers the asset that had these bytes already: 200, as the
        // multipart upload's reuse.
        Ok((if asset.id == made_as { 201 } else { 200 }, asset))
    }
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
