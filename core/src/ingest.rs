//! From a stored file to an asset's file fields: resolve the path, read the file (bounded),
//! run [`crate::extract`] off the async runtime with a time bound, and store a thumbnail.

use std::time::Duration;

use uuid::Uuid;

use crate::config::Config;
use crate::error::ApiError;
use crate::extract::{self, ExtractError, FileInfo};
use crate::files::Files;
use crate::model::AssetType;

/// Bytes read of a video or audio file: its type shows in the header, and nothing else is
/// extracted from it.
const HEADER_BYTES: u64 = 1024 * 1024;

/// Longest side of a thumbnail, in pixels.
pub(crate) const THUMBNAIL_SIDE: u32 = 320;

/// An asset's file fields, read from its file.
#[derive(Debug)]
pub(crate) struct Ingested {
    /// The file's path, links resolved.
    pub(crate) file_path: String,
    /// What [`extract::extract`] found, `file_size` from the store.
    pub(crate) info: FileInfo,
    /// Where the thumbnail was stored, for an image.
    pub(crate) thumbnail_path: Option<String>,
}

fn file_error(message: impl Into<String>) -> ApiError {
    ApiError::validation("file_path", message)
}

/// Reads the file at `file_path` for the asset `id` of the `declared` type (`None`: inferred
/// from the content). Answers 400 on `file_path` for a missing file, one outside the store,
/// content of another type, or a file that needs more time or memory than allowed.
pub(crate) async fn ingest(
    files: &Files,
    config: &Config,
    id: Uuid,
    file_path: &str,
    declared: Option<AssetType>,
) -> Result<Ingested, ApiError> {
    let resolved = files.resolve(file_path).await?;
    let header_only = matches!(declared, Some(AssetType::Video | AssetType::Audio));
    let limit = if header_only {
        HEADER_BYTES
    } else {
        if resolved.size > config.max_upload {
            return Err(file_error(format!(
                "file_path names a file of {} bytes; metadata is read from files of at most {} bytes",
                resolved.size, config.max_upload
            )));
        }
        resolved.size
    };
    let bytes = files.read(&resolved.path, limit.min(resolved.size)).await?;
    let name = resolved
        .path
        .rsplit('/')
        .next()
        .unwrap_or(&resolved.path)
        .to_owned();
    let limits = config.extract_limits.clone();
    let work = tokio::task::spawn_blocking(move || {
        let info = extract::extract(&bytes, &name, declared, &limits)?;
        let thumb = if info.kind == Some(AssetType::Image) {
            extract::thumbnail(&bytes, THUMBNAIL_SIDE, &limits).unwrap_or_else(|e| {
                tracing::warn!(error = %e, file = name, "no thumbnail");
                None
            })
        } else {
            None
        };
        Ok::<_, ExtractError>((info, thumb))
    });
    let (mut info, thumb) = match tokio::time::timeout(config.extract_timeout, work).await {
        Err(_) => return Err(timed_out(config.extract_timeout)),
        Ok(joined) => match joined.map_err(ApiError::internal)? {
            Ok(done) => done,
            Err(e) => return Err(extract_error(e)),
        },
    };
    info.file_size = resolved.size;
    let thumbnail_path = match thumb {
        Some(t) => {
            let path = format!("thumbnails/{id}.{}", t.extension);
            files.put(&path, t.bytes.into()).await?;
            Some(path)
        }
        None => None,
    };
    Ok(Ingested {
        file_path: resolved.path,
        info,
        thumbnail_path,
    })
}

fn timed_out(limit: Duration) -> ApiError {
    file_error(format!(
        "file_path could not be read within {} seconds",
        limit.as_secs_f64()
    ))
}

fn extract_error(e: ExtractError) -> ApiError {
    match e {
        ExtractError::TypeMismatch {
            declared,
            found_mime,
        } => file_error(format!(
            "file_path content is {found_mime}, which is not a valid {declared} file"
        )),
        other => file_error(format!("file_path could not be read: {other}")),
    }
}
