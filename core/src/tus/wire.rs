//! Uploads as the API shows them: [`UploadWire`] (`GET /api/v1/uploads/{id}`) and
//! [`DirectWire`] (`POST /api/v1/uploads/direct`). The OpenAPI document's `Upload` and
//! `DirectUpload` schemas are derived from them.

use serde::Serialize;
use uuid::Uuid;

use super::Upload;
use crate::render::Timestamp;

/// A resumable or direct upload, as `GET /api/v1/uploads/{id}` shows it.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct UploadWire<'a> {
    id: Uuid,
    /// Its size in bytes.
    length: u64,
    /// The bytes kept so far.
    offset: u64,
    /// The file's name, as its metadata gave it.
    filename: Option<&'a str>,
    created_at: Timestamp,
    /// When it is removed (unfinished: with what it kept; finished: the record only).
    expires_at: Timestamp,
    /// The asset made of it, once its last byte arrived.
    asset_id: Option<Uuid>,
}

impl<'a> UploadWire<'a> {
    /// The wire form of `upload`.
    pub(crate) fn of(upload: &'a Upload) -> Self {
        UploadWire {
            id: upload.id,
            length: upload.length,
            offset: upload.offset,
            filename: upload.metadata.filename.as_deref(),
            created_at: Timestamp(upload.created_at),
            expires_at: Timestamp(upload.expires_at),
            asset_id: upload.finished.then_some(upload.asset_id),
        }
    }
}

/// A direct upload just made: where to put the file.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct DirectWire<'a> {
    upload_id: Uuid,
    /// A presigned URL: `PUT` the file's bytes there (no API key).
    #[cfg_attr(feature = "openapi", schema(format = "uri"))]
    upload_url: &'a str,
    /// The method to send the file with: always `PUT`.
    method: &'static str,
    /// The size the file must have.
    size: u64,
    /// When the URL stops working and the upload is removed.
    expires_at: Timestamp,
    /// Where to `POST` once the file is there: `/api/v1/uploads/direct/{id}/complete`.
    complete_url: String,
}

impl<'a> DirectWire<'a> {
    /// The answer for `upload`, to be put at `upload_url` and completed at `complete_url`.
    pub(crate) fn of(upload: &Upload, upload_url: &'a str, complete_url: String) -> Self {
        DirectWire {
            upload_id: upload.id,
            upload_url,
            method: "PUT",
            size: upload.length,
            expires_at: Timestamp(upload.expires_at),
            complete_url,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::tus::{Metadata, Stored};

    /// An upload made at a time with nanoseconds, as `Utc::now()` gives them.
    fn upload() -> Upload {
        let at = Utc
            .timestamp_opt(1_800_000_000, 123_456_789)
            .single()
            .expect("a time");
        Upload {
            id: Uuid::nil(),
            length: 10,
            offset: 4,
            metadata: Metadata::default(),
            path: "uploads/0/a.bin".into(),
            stored: Stored::Appended,
            asset_id: Uuid::nil(),
            finished: false,
            created_at: at,
            expires_at: at,
            sha256: None,
            metadata_header: None,
            workspace_id: None,
        }
    }

    #[test]
    fn upload_times_are_timestamps_with_milliseconds() {
        let upload = upload();
        let shown = serde_json::to_value(UploadWire::of(&upload)).expect("JSON");
        assert_eq!(shown["created_at"], "2027-01-15T08:00:00.123Z");
        assert_eq!(shown["expires_at"], "2027-01-15T08:00:00.123Z");
        assert_eq!(shown["asset_id"], serde_json::Value::Null, "not finished");
        let direct = DirectWire::of(&upload, "https://s3.example/put", "/done".into());
        let shown = serde_json::to_value(direct).expect("JSON");
        assert_eq!(shown["expires_at"], "2027-01-15T08:00:00.123Z");
        assert_eq!(
            (shown["method"].as_str(), shown["size"].as_u64()),
            (Some("PUT"), Some(10))
        );
    }
}
