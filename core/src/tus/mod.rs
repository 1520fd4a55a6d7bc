//! Resumable uploads: the [tus 1.0] protocol at `/api/v1/uploads` (core, `creation`,
//! `creation-with-upload`, `termination`, `expiration` and `checksum` with `sha256`), and the
//! records that let any process sharing the store continue an upload another began.
//!
//! This module holds the protocol's headers ([`parse_length`], [`parse_offset`],
//! [`Metadata::parse`], [`Checksum::parse`], [`check_version`]) and the [`Upload`] record the
//! store keeps ([`crate::store::UploadStore`]). The record keeps `Upload-Metadata` as the
//! client sent it, which `HEAD` answers back byte for byte ([`Upload::metadata_header`]). Where the bytes wait is [`storage`]; the
//! endpoints are the service's.
//!
//! ```
//! use assetlib_core::tus::Metadata;
//!
//! // "filename bG9nby5wbmc=,is_public dHJ1ZQ==": filename "logo.png", is_public "true".
//! let meta = Metadata::parse(Some(b"filename bG9nby5wbmc=,is_public dHJ1ZQ==")).unwrap();
//! assert_eq!(meta.filename.as_deref(), Some("logo.png"));
//! assert_eq!(meta.is_public.as_deref(), Some("true"));
//! ```
//!
//! [tus 1.0]: https://tus.io/protocols/resumable-upload

mod sha;
pub mod storage;
pub(crate) mod wire;

pub use sha::RunningSha256;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::error::ApiError;
use crate::reply::Reply;

/// The 404 of an upload that does not exist (never made, terminated, or finished and
/// expired).
pub(crate) const NOT_FOUND: ApiError = ApiError::NotFound("Upload not found");

/// The protocol version spoken (`Tus-Version`, `Tus-Resumable`).
pub const VERSION: &str = "1.0.0";
/// The extensions offered (`Tus-Extension`).
pub const EXTENSIONS: &str = "creation,creation-with-upload,termination,expiration,checksum";
/// The checksum algorithms offered (`Tus-Checksum-Algorithm`).
pub const CHECKSUM_ALGORITHMS: &str = "sha256";
/// The media type of `PATCH` bodies.
pub const OFFSET_OCTET_STREAM: &str = "application/offset+octet-stream";

/// Marks an answer of the protocol: `Tus-Resumable`, and never kept by a cache.
pub(crate) fn mark(reply: &mut Reply) {
    reply
        .headers
        .retain(|(name, _)| *name != "cache-control" && *name != "tus-resumable");
    reply.headers.push(("cache-control", "no-store".to_owned()));
    reply.headers.push(("tus-resumable", VERSION.to_owned()));
    if reply.status == 412 {
        // The version this server speaks, for a client that asked for another.
        reply.headers.push(("tus-version", VERSION.to_owned()));
    }
}

/// What `OPTIONS` on the creation URL says the server offers: the version, the extensions,
/// the largest upload (`max_size`) and the checksum algorithms.
pub(crate) fn offer(reply: &mut Reply, max_size: u64) {
    let headers = [
        ("tus-resumable", VERSION.to_owned()),
        ("tus-version", VERSION.to_owned()),
        ("tus-extension", EXTENSIONS.to_owned()),
        ("tus-max-size", max_size.to_string()),
        ("tus-checksum-algorithm", CHECKSUM_ALGORITHMS.to_owned()),
    ];
    reply.headers.extend(headers);
}

/// `Tus-Resumable` must name the version spoken: else 412 (the answer says which it speaks).
pub fn check_version(raw: Option<&[u8]>) -> Result<(), ApiError> {
    match raw {
        Some(v) if v == VERSION.as_bytes() => Ok(()),
        _ => Err(ApiError::UnsupportedVersion),
    }
}

/// A non-negative whole number of bytes in header `name`: digits only.
fn byte_count(name: &'static str, raw: Option<&[u8]>) -> Result<u64, ApiError> {
    let raw = raw.ok_or_else(|| ApiError::validation(name, format!("{name} is required")))?;
    let text = std::str::from_utf8(raw).unwrap_or("");
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::validation(
            name,
            format!("{name} must be a whole number of bytes (digits only)"),
        ));
    }
    text.parse().map_err(|_| {
        ApiError::validation(
            name,
            format!("{name} must be a whole number of bytes (digits only)"),
        )
    })
}

/// `Upload-Length`: the upload's size in bytes, at most `max` (else 413).
pub fn parse_length(raw: Option<&[u8]>, max: u64) -> Result<u64, ApiError> {
    let length = byte_count("Upload-Length", raw)?;
    if length > max {
        return Err(ApiError::PayloadTooLarge { limit: max });
    }
    Ok(length)
}

/// `Upload-Offset`: where the bytes of a `PATCH` go.
pub fn parse_offset(raw: Option<&[u8]>) -> Result<u64, ApiError> {
    byte_count("Upload-Offset", raw)
}

/// What `Upload-Metadata` says of the asset to make, each value as sent (validated when the
/// asset is made, as an upload form's text parts are).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Metadata {
    /// The file's name (the asset's title when `title` is not given).
    pub filename: Option<String>,
    /// The asset's title.
    pub title: Option<String>,
    /// The asset's type (else the content's).
    pub asset_type: Option<String>,
    /// The asset's description.
    pub description: Option<String>,
    /// `true` or `false`.
    pub is_public: Option<String>,
    /// `true` or `false`.
    pub published: Option<String>,
    /// The asset's tags, separated by commas.
    pub tags: Option<String>,
    /// What to do when an asset has the same bytes already: `allow`, `reject` or `reuse`
    /// ([`crate::validate::OnDuplicate`]).
    pub on_duplicate: Option<String>,
    /// The workspace of the asset, as sent; the upload keeps it, checked
    /// ([`Upload::workspace_id`]), so it is not stored here.
    #[serde(skip)]
    pub workspace_id: Option<String>,
}

/// The longest `Upload-Metadata` header, in bytes.
pub const MAX_METADATA: usize = 64 * 1024;

impl Metadata {
    /// The header kept for `HEAD` ([`Upload::metadata_header`]): `raw` as sent, when it holds
    /// anything but spaces. Call it once [`Metadata::parse`] took `raw` (so it is UTF-8).
    pub fn header_of(raw: Option<&[u8]>) -> Option<String> {
        raw.and_then(|r| std::str::from_utf8(r).ok())
            .filter(|r| !r.trim().is_empty())
            .map(str::to_owned)
    }

    /// Parses `Upload-Metadata`: comma-separated pairs of a key and its value in base64
    /// (a key alone has an empty value). Unknown keys are ignored; a pair that is not
    /// `key base64`, a value that is not base64 of UTF-8 text, or a key given twice is 400
    /// on `Upload-Metadata`.
    pub fn parse(raw: Option<&[u8]>) -> Result<Metadata, ApiError> {
        let bad =
            |why: &str| ApiError::validation("Upload-Metadata", format!("Upload-Metadata {why}"));
        let mut meta = Metadata::default();
        let Some(raw) = raw else {
            return Ok(meta);
        };
        if raw.len() > MAX_METADATA {
            return Err(bad("must be at most 64 KiB"));
        }
        let text = std::str::from_utf8(raw).map_err(|_| bad("must be ASCII"))?;
        let mut seen: Vec<&str> = Vec::new();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let mut parts = pair.split(' ');
            let key = parts.next().unwrap_or("");
            let value = parts.next().unwrap_or("");
            if key.is_empty() || parts.next().is_some() {
                return Err(bad("must be pairs of a key and a base64 value"));
            }
            if seen.contains(&key) {
                return Err(bad(&format!("names {key} twice")));
            }
            seen.push(key);
            let bytes = STANDARD
                .decode(value)
                .map_err(|_| bad(&format!("value of {key} is not base64")))?;
            let value = String::from_utf8(bytes)
                .map_err(|_| bad(&format!("value of {key} is not UTF-8")))?;
            let slot = match key {
                "filename" | "name" => &mut meta.filename,
                "title" => &mut meta.title,
                "asset_type" => &mut meta.asset_type,
                "description" => &mut meta.description,
                "is_public" => &mut meta.is_public,
                "published" => &mut meta.published,
                "tags" => &mut meta.tags,
                "on_duplicate" => &mut meta.on_duplicate,
                "workspace_id" => &mut meta.workspace_id,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value);
            }
        }
        Ok(meta)
    }
}

/// An `Upload-Checksum`: the SHA-256 of a `PATCH`'s body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checksum(pub [u8; 32]);

impl Checksum {
    /// Parses `Upload-Checksum: sha256 <base64 digest>`; `None` when absent. Another
    /// algorithm is 400 (this server offers `sha256` only), a malformed value too.
    pub fn parse(raw: Option<&[u8]>) -> Result<Option<Checksum>, ApiError> {
        let Some(raw) = raw else {
            return Ok(None);
        };
        let bad = || {
            ApiError::validation(
                "Upload-Checksum",
                "Upload-Checksum must be \"sha256 \" and the base64 of 32 bytes",
            )
        };
        let text = std::str::from_utf8(raw).map_err(|_| bad())?;
        let (algorithm, digest) = text.split_once(' ').ok_or_else(bad)?;
        if algorithm != "sha256" {
            return Err(ApiError::validation(
                "Upload-Checksum",
                "Upload-Checksum algorithm must be sha256 (Tus-Checksum-Algorithm)",
            ));
        }
        let bytes = STANDARD.decode(digest.trim()).map_err(|_| bad())?;
        let digest: [u8; 32] = bytes.try_into().map_err(|_| bad())?;
        Ok(Some(Checksum(digest)))
    }
}

/// Where an upload's bytes are kept until it completes ([`storage`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stored {
    /// A local directory: the bytes so far in one file, appended to (`{path}.part`).
    Appended,
    /// An object store with multipart uploads (S3, GCS, Azure, memory): one multipart upload
    /// to `path`, its parts so far (content ids, in order), and the bytes past them (less
    /// than a part) in a tail object named by the offset (`{path}.tails/{offset}`).
    Multipart {
        /// The store's id of the multipart upload.
        upload_id: String,
        /// The parts uploaded so far, in order.
        parts: Vec<String>,
    },
    /// Any other object store: the bytes so far in objects `{path}.parts/{n}`, joined when
    /// the upload completes.
    Pieces {
        /// How many pieces there are.
        count: u32,
    },
    /// A direct upload: the client puts the file at `path` in the bucket itself, with a
    /// presigned URL.
    Direct {
        /// The SHA-256 the file must have (lower-case hex), when the client named one.
        sha256: Option<String>,
    },
}

/// An upload, as the store keeps it from its creation until it expires.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Upload {
    /// Its id (the last segment of its URL).
    pub id: Uuid,
    /// Its size in bytes (`Upload-Length`).
    pub length: u64,
    /// The bytes received so far.
    pub offset: u64,
    /// The asset to make of it.
    pub metadata: Metadata,
    /// Where the finished file goes in the file store (`uploads/{uuid}/{name}`).
    pub path: String,
    /// Where its bytes are kept meanwhile.
    pub stored: Stored,
    /// The id of the asset made of it, chosen when it is made, so that the asset is made
    /// once whichever process, or how many tries, make it.
    pub asset_id: Uuid,
    /// Whether its asset has been made.
    pub finished: bool,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it is removed unless finished ([`crate::Config::upload_expiry`] after it was
    /// made).
    pub expires_at: DateTime<Utc>,
    /// The SHA-256 of the bytes received, carried from request to request; `None` for a
    /// direct upload (read once it is complete), and when a request broke off where the
    /// hash could not follow (the file is then read once at the end).
    #[serde(default)]
    pub sha256: Option<RunningSha256>,
    /// `Upload-Metadata` exactly as the client sent it when it made the upload (`None`
    /// without one, or when it held no pair): `HEAD` answers it back unchanged, as tus 1.0
    /// asks, unknown keys and the client's spelling of the base64 included.
    #[serde(default)]
    pub metadata_header: Option<String>,
    /// The workspace its asset is made in (the one of the workspace key that made it, or the
    /// one its metadata names); `None`: no workspace.
    #[serde(default)]
    pub workspace_id: Option<String>,
}

impl Upload {
    /// Whether every byte has arrived.
    pub fn is_complete(&self) -> bool {
        self.offset == self.length
    }

    /// The SHA-256 of the whole file, when every byte went through [`Upload::hash_more`].
    pub fn checksum(&self) -> Option<[u8; 32]> {
        self.sha256
            .as_ref()
            .filter(|h| h.hashed() == self.length && self.is_complete())
            .map(RunningSha256::finish)
    }

    /// Hashes `bytes`, kept at `at` in the file: they go into the running SHA-256 when they
    /// follow what it hashed; otherwise it is dropped (the file is read at the end instead).
    pub fn hash_more(&mut self, at: u64, bytes: &[u8]) {
        match &mut self.sha256 {
            Some(h) if h.hashed() == at => h.update(bytes),
            Some(_) => self.sha256 = None,
            None => {}
        }
    }

    /// Whether it is a direct upload (the client puts the file in the bucket itself).
    pub fn is_direct(&self) -> bool {
        matches!(self.stored, Stored::Direct { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field<T: std::fmt::Debug>(r: Result<T, ApiError>) -> String {
        match r {
            Err(ApiError::Validation { field, .. }) => field,
            other => panic!("not a 400: {other:?}"),
        }
    }

    #[test]
    fn lengths_and_offsets_are_digits_only() {
        assert_eq!(parse_length(Some(b"0"), 10).ok(), Some(0));
        assert_eq!(parse_length(Some(b"10"), 10).ok(), Some(10));
        assert!(matches!(
            parse_length(Some(b"11"), 10),
            Err(ApiError::PayloadTooLarge { limit: 10 })
        ));
        for bad in [
            &b"-1"[..],
            b"+5",
            b"1e3",
            b" 5",
            b"",
            b"99999999999999999999999",
        ] {
            assert_eq!(
                field(parse_length(Some(bad), u64::MAX)),
                "Upload-Length",
                "{bad:?}"
            );
            assert_eq!(field(parse_offset(Some(bad))), "Upload-Offset", "{bad:?}");
        }
        assert_eq!(field(parse_length(None, 10)), "Upload-Length");
        assert_eq!(parse_offset(Some(b"42")).ok(), Some(42));
    }

    #[test]
    fn metadata_is_pairs_of_keys_and_base64() {
        let meta = Metadata::parse(Some(b"filename YS5wZGY=, title ,flag,other eA==")).unwrap();
        assert_eq!(meta.filename.as_deref(), Some("a.pdf"));
        assert_eq!(meta.title.as_deref(), Some(""));
        assert_eq!(Metadata::parse(None).unwrap(), Metadata::default());
        for bad in [
            &b"filename !!!"[..],
            b"a b c",
            b"title eA==,title eA==",
            b"title /w==",
        ] {
            assert_eq!(
                field(Metadata::parse(Some(bad))),
                "Upload-Metadata",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_header_is_kept_as_sent_when_it_holds_pairs() {
        let sent = b"filename YS5wZGY=,filetype YXBwbGljYXRpb24vcGRm, flag";
        assert_eq!(
            Metadata::header_of(Some(sent)).as_deref(),
            Some("filename YS5wZGY=,filetype YXBwbGljYXRpb24vcGRm, flag")
        );
        for none in [None, Some(&b""[..]), Some(b"  ")] {
            assert_eq!(Metadata::header_of(none), None);
        }
    }

    #[test]
    fn checksums_are_sha256_only() {
        let digest = STANDARD.encode([7u8; 32]);
        let ok = Checksum::parse(Some(format!("sha256 {digest}").as_bytes())).unwrap();
        assert_eq!(ok, Some(Checksum([7; 32])));
        assert_eq!(Checksum::parse(None).unwrap(), None);
        let md5 = format!("md5 {digest}");
        for bad in [md5.as_str(), "sha256 abc", "sha256", "sha256 AAAA"] {
            assert_eq!(
                field(Checksum::parse(Some(bad.as_bytes()))),
                "Upload-Checksum",
                "{bad}"
            );
        }
    }

    #[test]
    fn only_version_1_0_0_is_spoken() {
        assert!(check_version(Some(b"1.0.0")).is_ok());
        for other in [None, Some(&b"0.2.2"[..]), Some(b"")] {
            assert!(matches!(
                check_version(other),
                Err(ApiError::UnsupportedVersion)
            ));
        }
    }
}
