//! Reading `POST /api/v1/assets/upload`: a multipart/form-data body, its `file` part streamed
//! into the file store (never gathered in memory), its text parts kept.

use futures_util::TryStreamExt as _;
use multer::{Constraints, Multipart, SizeLimit};
use uuid::Uuid;

use crate::config::Config;
use crate::error::{ApiError, UploadLimit};
use crate::extract::FileInfo;
use crate::files::{Files, Written};
use crate::model::AssetType;
use crate::request::BodyStream;
use crate::validate::{self, AssetFields, NewAsset};

/// Longest text part (`title`, `description`, ...), in bytes.
const MAX_TEXT_PART: usize = 64 * 1024;

/// Room for part headers and text parts next to the file, in bytes.
const FORM_OVERHEAD: u64 = 1024 * 1024;

/// The parts of an upload form.
#[derive(Debug, Default)]
pub(crate) struct Form {
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) asset_type: Option<String>,
    pub(crate) is_public: Option<String>,
    pub(crate) published: Option<String>,
    /// Tags separated by commas ([`validate::listed_tags`]).
    pub(crate) tags: Option<String>,
    pub(crate) workspace_id: Option<String>,
    /// Where the file was stored, and the name the client gave it.
    pub(crate) file: Option<(String, String)>,
    /// The SHA-256 of the stored file, computed as it was written.
    pub(crate) checksum: Option<[u8; 32]>,
}

/// The type an upload declares in its `asset_type` part; `None` when it leaves it to the
/// content. Only file types are accepted.
pub(crate) fn declared_type(form: &Form) -> Result<Option<AssetType>, ApiError> {
    match form.asset_type.as_deref() {
        None | Some("") => Ok(None),
        Some(raw) => AssetType::parse(raw)
            .filter(|t| t.is_file_based())
            .map(Some)
            .ok_or_else(|| {
                ApiError::validation(
                    "asset_type",
                    "asset_type of an upload must be one of: pdf, document, image, video, audio",
                )
            }),
    }
}

/// The create of an upload: its text parts validated as a `POST /api/v1/assets` body would
/// be, with the type the file turned out to be and the client's file name as the default
/// title.
pub(crate) fn new_asset(
    form: &Form,
    client_name: &str,
    file: &FileInfo,
    config: &Config,
) -> Result<NewAsset, ApiError> {
    let asset_type = file.kind.ok_or_else(|| {
        ApiError::validation(
            "asset_type",
            format!(
                "The type of this file ({}) could not be inferred; give asset_type",
                file.mime_type
            ),
        )
    })?;
    let mut new = fields(form, client_name, asset_type)?.validate(config)?;
    new.tags = form_tags(form)?;
    Ok(new)
}

/// The tags of the form's `tags` part.
fn form_tags(form: &Form) -> Result<Vec<String>, ApiError> {
    form.tags
        .as_deref()
        .map_or(Ok(Vec::new()), |raw| validate::listed_tags("tags", raw))
}

/// The fields of the create an upload makes: its text parts as a JSON body would give them,
/// with `asset_type` and the client's file name as the default title.
fn fields<'a>(
    form: &'a Form,
    client_name: &'a str,
    asset_type: AssetType,
) -> Result<AssetFields<'a>, ApiError> {
    let is_public = form_flag("is_public", form.is_public.as_deref(), false)?;
    let published = form_flag("published", form.published.as_deref(), true)?;
    let title = form
        .title
        .as_deref()
        .unwrap_or_else(|| client_name.rsplit(['/', '\\']).next().unwrap_or(""));
    Ok(AssetFields {
        title: validate::text("title", title)?,
        description: form
            .description
            .as_deref()
            .map(|d| validate::text("description", d))
            .transpose()?,
        asset_type: asset_type.as_str(),
        external_url: None,
        is_public: Some(is_public),
        published: Some(published),
        file_path: None,
        workspace_id: form.workspace_id.as_deref(),
    })
}

impl Form {
    /// The fields a resumable or direct upload's metadata gives, for its file at `path`.
    pub(crate) fn of_metadata(meta: &crate::tus::Metadata, path: &str) -> Form {
        Form {
            title: meta.title.clone(),
            description: meta.description.clone(),
            asset_type: meta.asset_type.clone(),
            is_public: meta.is_public.clone(),
            published: meta.published.clone(),
            tags: meta.tags.clone(),
            workspace_id: None,
            file: Some((path.to_owned(), meta.filename.clone().unwrap_or_default())),
            checksum: None,
        }
    }

    /// The stored `file` part: where it was written and the name the client gave it; 400 on
    /// `file` when the form has none.
    pub(crate) fn stored_file(&self) -> Result<(&str, &str), ApiError> {
        self.file
            .as_ref()
            .map(|(path, name)| (path.as_str(), name.as_str()))
            .ok_or_else(|| ApiError::validation("file", "A file part named 'file' is required"))
    }
}

/// 400 unless the fields of `form` that do not depend on the file are valid as
/// [`new_asset`] takes them: the flags, the title (or the file's name standing for it) and
/// the description, and a declared type with a file. Checked before a resumable upload's
/// first byte, so that its last byte never finds them wrong.
pub(crate) fn check_fields(form: &Form, config: &Config) -> Result<(), ApiError> {
    let declared = declared_type(form)?.unwrap_or(AssetType::Pdf);
    let client_name = form.file.as_ref().map_or("", |(_, name)| name.as_str());
    fields(form, client_name, declared)?.validate(config)?;
    form_tags(form).map(drop)
}

/// 413 before anything is read when the declared length of a multipart body is over what an
/// upload of at most `max_upload` bytes (plus its other parts) may take.
pub(crate) fn check_declared(declared: Option<u64>, max_upload: u64) -> Result<(), ApiError> {
    if declared.is_some_and(|len| len > body_limit(max_upload)) {
        return Err(too_large(max_upload));
    }
    Ok(())
}

/// The 413 of a multipart upload past `max_upload`, naming the limit.
fn too_large(max_upload: u64) -> ApiError {
    ApiError::UploadTooLarge {
        subject: "Request body",
        limit: max_upload,
        of: UploadLimit::MaxUpload,
    }
}

/// A boolean text part: exactly `true` or `false` (no spaces around), `default` when absent
/// or empty.
fn form_flag(name: &'static str, value: Option<&str>, default: bool) -> Result<bool, ApiError> {
    match value {
        None | Some("") => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(_) => Err(ApiError::validation(
            name,
            format!("{name} must be true or false"),
        )),
    }
}

/// The most bytes an upload's body may have: the file limit plus room for the rest.
fn body_limit(max_upload: u64) -> u64 {
    max_upload.saturating_add(FORM_OVERHEAD)
}

/// What a body of another type than an upload's is told.
const UNSUPPORTED: ApiError = ApiError::UnsupportedMediaType {
    expected: "multipart/form-data",
};

/// The boundary of a `multipart/form-data` content type; 415 for any other type.
pub(crate) fn boundary(content_type: Option<&[u8]>) -> Result<String, ApiError> {
    let ct = content_type
        .and_then(|c| std::str::from_utf8(c).ok())
        .ok_or(UNSUPPORTED)?;
    let essence = ct.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("multipart/form-data") {
        return Err(UNSUPPORTED);
    }
    multer::parse_boundary(ct)
        .map_err(|_| ApiError::validation("body", "multipart/form-data needs a boundary parameter"))
}

fn multipart_error(e: multer::Error, max_upload: u64) -> ApiError {
    match e {
        multer::Error::StreamSizeExceeded { .. } | multer::Error::FieldSizeExceeded { .. } => {
            too_large(max_upload)
        }
        multer::Error::StreamReadFailed(cause) => crate::request::unreadable(cause.as_ref()),
        other => ApiError::validation("body", format!("Malformed multipart body: {other}")),
    }
}

/// A file name safe to use as the last segment of a store path: the client's base name with
/// anything but letters, digits, `.`, `-` and `_` replaced, never empty or hidden.
pub(crate) fn safe_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let cleaned: String = base
        .chars()
        .take(120)
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned.trim_start_matches('.');
    if cleaned.is_empty() {
        "file".to_owned()
    } else {
        cleaned.to_owned()
    }
}

/// Reads the form, streaming its `file` part to `uploads/{uuid}/{name}` in `files`. The file's
/// path goes into `written` before it is written, so the caller's one clean-up removes it (and
/// its directory) whatever fails, during the write or later.
pub(crate) async fn read_form(
    files: &Files,
    boundary: String,
    body: BodyStream,
    max_upload: u64,
    written: &mut Written,
) -> Result<Form, ApiError> {
    let constraints =
        Constraints::new().size_limit(SizeLimit::new().whole_stream(body_limit(max_upload)));
    let mut multipart = Multipart::with_constraints(body, boundary, constraints);
    let mut form = Form::default();
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| multipart_error(e, max_upload))?
    {
        let name = field.name().unwrap_or("").to_owned();
        if name == "file" {
            if form.file.is_some() {
                return Err(ApiError::validation(
                    "file",
                    "Only one file part is accepted",
                ));
            }
            let client_name = field.file_name().unwrap_or("").to_owned();
            let path = format!("uploads/{}/{}", Uuid::new_v4(), safe_name(&client_name));
            let stream = field.map_err(|e| multipart_error(e, max_upload));
            // Noted before it is written: a write that fails part way may leave its directory.
            written.push(path.clone());
            let (_, checksum) = files
                .put_stream(&path, stream, max_upload)
                .await
                .map_err(|e| match e {
                    ApiError::PayloadTooLarge { .. } => too_large(max_upload),
                    other => other,
                })?;
            form.file = Some((path, client_name));
            form.checksum = Some(checksum);
            continue;
        }
        let slot = match name.as_str() {
            "title" => &mut form.title,
            "description" => &mut form.description,
            "asset_type" => &mut form.asset_type,
            "is_public" => &mut form.is_public,
            "published" => &mut form.published,
            "tags" => &mut form.tags,
            "workspace_id" => &mut form.workspace_id,
            _ => continue,
        };
        let mut text = Vec::new();
        let mut field = field;
        while let Some(chunk) = field
            .try_next()
            .await
            .map_err(|e| multipart_error(e, max_upload))?
        {
            if text.len() + chunk.len() > MAX_TEXT_PART {
                return Err(ApiError::validation(
                    name.as_str(),
                    format!("{name} must be at most {MAX_TEXT_PART} bytes"),
                ));
            }
            text.extend_from_slice(&chunk);
        }
        let text = String::from_utf8(text).map_err(|_| {
            ApiError::validation(name.as_str(), format!("{name} must be UTF-8 text"))
        })?;
        *slot = Some(text);
    }
    Ok(form)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_safe() {
        assert_eq!(safe_name("report.pdf"), "report.pdf");
        assert_eq!(safe_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_name("C:\\Users\\me\\Logo Final.PNG"), "Logo_Final.PNG");
        assert_eq!(safe_name(".htaccess"), "htaccess");
        assert_eq!(safe_name(""), "file");
        assert_eq!(safe_name(".."), "file");
        assert_eq!(safe_name("été.txt"), "été.txt");
    }

    #[test]
    fn only_multipart_form_data_with_a_boundary() {
        assert_eq!(
            boundary(Some(b"multipart/form-data; boundary=abc")).ok(),
            Some("abc".to_owned())
        );
        assert!(matches!(
            boundary(Some(b"application/json")),
            Err(ApiError::UnsupportedMediaType {
                expected: "multipart/form-data"
            })
        ));
        assert!(matches!(
            boundary(None),
            Err(ApiError::UnsupportedMediaType {
                expected: "multipart/form-data"
            })
        ));
        assert!(matches!(
            boundary(Some(b"multipart/form-data")),
            Err(ApiError::Validation { .. })
        ));
    }
}
