//! From a stored file to an asset's file fields: resolve the path, read the file (bounded),
//! run [`crate::extract`] off the async runtime with a time bound, and store a thumbnail.

use crate::change::FileFields;
use crate::config::Config;
use crate::error::ApiError;
use crate::extract::{self, ExtractError, FileInfo};
use crate::files::Files;
use crate::model::AssetType;

/// Bytes read of a video file: its type shows in the header.
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
    /// Where the thumbnail was stored, when the file gave one.
    pub(crate) thumbnail_path: Option<String>,
    /// The thumbnail's ThumbHash, base64.
    pub(crate) thumbnail_placeholder: Option<String>,
}

impl Ingested {
    /// The asset fields this file gives.
    pub(crate) fn into_fields(self) -> FileFields {
        let info = self.info;
        FileFields {
            file_path: Some(self.file_path),
            file_size: Some(info.file_size),
            mime_type: Some(info.mime_type),
            thumbnail_path: self.thumbnail_path,
            thumbnail_placeholder: self.thumbnail_placeholder,
            page_count: info.page_count,
            word_count: info.word_count,
            width: info.width,
            height: info.height,
            media: info.media,
        }
    }
}

/// A new path for a thumbnail: `thumbnails/{name}.{extension}` with a name of 128 random bits
/// (32 hex digits). Thumbnails are served without a key, so their names must never be
/// guessable: not the asset's id, which lists and links show.
pub(crate) fn thumbnail_path(extension: &str) -> Result<String, ApiError> {
    let mut name = [0u8; 16];
    getrandom::fill(&mut name).map_err(ApiError::internal)?;
    let hex: String = name.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("thumbnails/{hex}.{extension}"))
}

/// Reads the file at `file_path` for an asset of the `declared` type (`None`: inferred
/// from the content); the file's thumbnail (see [`extract::thumbnail`]) is stored under a new
/// random name
/// ([`thumbnail_path`]), so the old thumbnail of a replaced file stays until the new one is in
/// place. Answers 400 on `file_path` for a missing file or one outside the store,
/// and 400 on `field` (`file_path` on create, `file` on upload) for content of another type
/// or a file that needs more time or memory than allowed.
pub(crate) async fn ingest(
    files: &Files,
    config: &Config,
    file_path: &str,
    declared: Option<AssetType>,
    field: &'static str,
) -> Result<Ingested, ApiError> {
    let file_error = |message: String| ApiError::validation(field, message);
    let resolved = files.resolve(file_path).await?;
    let header_only = matches!(declared, Some(AssetType::Video));
    let limit = if header_only {
        HEADER_BYTES
    } else {
        if resolved.size > config.max_upload {
            return Err(file_error(format!(
                "{field} names a file of {} bytes; metadata is read from files of at most {} bytes",
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
        // A PDF whose pages cannot be counted within the limits is not rendered either.
        let unreadable_pdf = info.kind == Some(AssetType::Pdf) && info.page_count.is_none();
        let thumb = if info.kind == Some(AssetType::Video) || unreadable_pdf {
            None
        } else {
            extract::thumbnail(&bytes, THUMBNAIL_SIDE, &limits).unwrap_or_else(|e| {
                tracing::warn!(error = %e, file = name, "no thumbnail");
                None
            })
        };
        Ok::<_, ExtractError>((info, thumb))
    });
    let (mut info, thumb) = match tokio::time::timeout(config.extract_timeout, work).await {
        Err(_) => {
            return Err(file_error(format!(
                "{field} could not be read within {} seconds",
                config.extract_timeout.as_secs_f64()
            )));
        }
        Ok(joined) => match joined.map_err(ApiError::internal)? {
            Ok(done) => done,
            Err(ExtractError::TypeMismatch {
                declared,
                found_mime,
            }) => {
                return Err(file_error(format!(
                    "{field} content is {found_mime}, which is not a valid {declared} file"
                )));
            }
            Err(other) => return Err(file_error(format!("{field} could not be read: {other}"))),
        },
    };
    info.file_size = resolved.size;
    let (thumbnail_path, thumbnail_placeholder) = match thumb {
        Some(t) => {
            let path = thumbnail_path(t.extension)?;
            files.put(&path, t.bytes.into()).await?;
            (Some(path), Some(t.placeholder))
        }
        None => (None, None),
    };
    Ok(Ingested {
        file_path: resolved.path,
        info,
        thumbnail_path,
        thumbnail_placeholder,
    })
}
