//! `POST /api/v1/uploads/direct` bodies.

use serde_json::Value;

use super::{Fields, json_object};
use crate::error::ApiError;
use crate::tus::Metadata;

/// A validated `POST /api/v1/uploads/direct` body.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DirectUploadDoc {
    /// The file's size in bytes, which the file put must have.
    pub size: u64,
    /// The SHA-256 the file put must have, lower-case hex, when given.
    pub sha256: Option<String>,
    /// The asset to make, as `Upload-Metadata` of a tus upload gives it (the flags as
    /// `true`/`false`).
    pub metadata: Metadata,
}

/// Validates a direct upload: `filename` (required), `size` (required, a whole number of
/// bytes), `sha256` (optional, 64 hex digits), and the asset's `title`, `description`,
/// `asset_type` (strings) and `is_public`, `published` (booleans) as an upload form takes
/// them (checked by the service). Unknown fields are ignored.
///
/// ```
/// use assetlib_core::validate::direct_upload_doc;
///
/// let doc = direct_upload_doc(br#"{"filename": "talk.mp4", "size": 1048576}"#).unwrap();
/// assert_eq!(doc.size, 1_048_576);
/// assert_eq!(doc.metadata.filename.as_deref(), Some("talk.mp4"));
/// assert!(direct_upload_doc(br#"{"filename": "talk.mp4", "size": -1}"#).is_err());
/// ```
///
/// # Errors
/// 400 naming the field that is missing or wrong.
pub fn direct_upload_doc(body: &[u8]) -> Result<DirectUploadDoc, ApiError> {
    let map = json_object(body)?;
    let f = Fields::new(&map, "");
    let filename = f.req_str("filename")?;
    if filename.trim().is_empty() || filename.chars().count() > 255 {
        return Err(ApiError::validation(
            "filename",
            "filename must be 1 to 255 characters, not blank",
        ));
    }
    let size = match map.get("size") {
        Some(Value::Number(n)) => n.as_u64(),
        _ => None,
    }
    .ok_or_else(|| {
        ApiError::validation("size", "size is required: a whole number of bytes, from 0")
    })?;
    let sha256 = match f.opt_str("sha256")? {
        Some(hex) if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Some(hex.to_ascii_lowercase())
        }
        Some(_) => {
            return Err(ApiError::validation(
                "sha256",
                "sha256 must be 64 hexadecimal digits",
            ));
        }
        None => None,
    };
    let flag = |name| Ok::<_, ApiError>(f.opt_bool(name)?.map(|b| b.to_string()));
    let metadata = Metadata {
        filename: Some(filename.to_owned()),
        title: f.opt_str("title")?.map(str::to_owned),
        asset_type: f.opt_str("asset_type")?.map(str::to_owned),
        description: f.opt_str("description")?.map(str::to_owned),
        is_public: flag("is_public")?,
        published: flag("published")?,
        tags: super::json_tags(&map, "tags")?.map(|tags| tags.join(",")),
        on_duplicate: f.opt_str("on_duplicate")?.map(str::to_owned),
        workspace_id: f.opt_str("workspace_id")?.map(str::to_owned),
    };
    super::OnDuplicate::parse("on_duplicate", metadata.on_duplicate.as_deref())?;
    Ok(DirectUploadDoc {
        size,
        sha256,
        metadata,
    })
}
