//! Image variants over HTTP: `GET /api/v1/assets/{id}/image` and the signed links to them
//! (`GET /api/v1/assets/{id}/image-url`).
//!
//! A variant is named by what makes it: the asset, the file it is made of, the canonical
//! parameters and the encoding. Made once, it is kept in the file store at
//! `derived/{asset_id}/{name}.{ext}`, where every replica finds it: a kept variant is served
//! without reading the source. Its name is its strong `ETag`, so `If-None-Match` answers 304
//! before anything is read. One process makes a variant once however many ask for it at the
//! same time ([`Variants::making`]); at most [`crate::Config::image_workers`] variants are
//! made at once, [`crate::Config::image_queue`] more requests wait, and the rest get 503.
//!
//! The variants served lately are kept in memory as well ([`KeptVariants`]): a site's
//! presets, asked for far more often than their assets change, are then answered without
//! the file store (a local file store's stat and read are each a hand-off to a blocking
//! thread).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use futures_util::StreamExt as _;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::Service;
use super::access::Access;
use crate::error::{ApiError, FileError};
use crate::model::{Asset, AssetType};
use crate::page_cache::{Turns, VersionedCache};
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::variant::{self, Encoding, Format, Source, VariantSpec};

/// The name, among an asset's variants, of the mark that its PDF's page could not be drawn.
const UNRENDERABLE: &str = "unrenderable";

/// The answer for a variant that cannot be made of the asset's file.
fn cannot_convert(e: variant::TransformError) -> ApiError {
    ApiError::validation(
        "file",
        format!("The asset's image cannot be converted: {e}"),
    )
}

/// The answer for an asset that has no image to make variants of.
pub(super) const NO_IMAGE: ApiError = ApiError::NotFound("Asset has no image");
/// The longest side a variant of a paid file may have for a caller who may not download it.
pub(crate) const FREE_SIDE: u32 = 640;
/// The 503 of a variant asked for while every worker is busy and the queue is full.
const BUSY: ApiError = ApiError::Unavailable {
    message: "Too many images are being made; try again shortly",
    retry_after: 1,
};

/// The answer for a variant of a PDF asked for while the server shuts down.
const SHUTTING_DOWN: ApiError = ApiError::Unavailable {
    message: "The server is shutting down; try again shortly",
    retry_after: 1,
};

/// The largest variant kept in memory.
const KEPT_MAX: usize = 256 * 1024;
/// The most bytes of variants kept in memory; when full, it starts over.
const KEPT_BYTES: usize = 32 * 1024 * 1024;

/// Variants kept in memory by their path in the file store, each under the asset's
/// `updated_at` it was served at and with its `ETag`: one is answered again only for the
/// same asset write (a replaced file moves both), so memory never answers what the file
/// store no longer holds for it.
struct KeptVariants(VersionedCache<String, KeptVariant>);

struct KeptVariant {
    etag: String,
    bytes: Bytes,
}

impl Default for KeptVariants {
    fn default() -> Self {
        KeptVariants(VersionedCache::weighed(
            KEPT_BYTES / 512,
            KEPT_BYTES,
            |v: &KeptVariant| v.bytes.len(),
        ))
    }
}

impl KeptVariants {
    /// The bytes kept at `path` for `etag` and the asset write `stamp`.
    fn get(&self, path: &str, etag: &str, stamp: u64) -> Option<Bytes> {
        let kept = self.0.get(path, stamp)?;
        (kept.etag == etag).then(|| kept.bytes.clone())
    }

    /// Keeps `bytes` at `path` for `etag` and `stamp`, when small enough.
    fn put(&self, path: String, etag: String, stamp: u64, bytes: Bytes) {
        if bytes.len() <= KEPT_MAX {
            self.0
                .put(path, stamp, Arc::new(KeptVariant { etag, bytes }));
        }
    }
}

/// The headers of a variant's answer.
fn headers(encoding: Encoding, etag: String, size: u64) -> Reply {
    Reply::empty(200)
        .with_header("content-type", encoding.mime_type())
        .with_header("content-length", size.to_string())
        .with_header("etag", etag)
}

/// A variant's answer: its headers, and its bytes unless `head`.
fn variant_reply(encoding: Encoding, etag: String, bytes: Bytes, head: bool) -> Reply {
    let reply = headers(encoding, etag, bytes.len() as u64);
    if head {
        reply
    } else {
        Reply {
            body: bytes,
            ..reply
        }
    }
}

/// The stamp of the asset write a kept variant belongs to.
fn stamp_of(asset: &Asset) -> u64 {
    // Two's complement keeps every instant distinct.
    asset.updated_at.timestamp_micros() as u64
}

/// The image variants being made in this process.
pub(super) struct Variants {
    workers: Arc<tokio::sync::Semaphore>,
    /// Requests waiting for a worker.
    waiting: AtomicUsize,
    queue: usize,
    /// One lock per variant being made, so a variant is made once.
    making: Turns<String>,
    /// Variants made by this process (for tests and metrics: a replica that serves a
    /// variant another made counts none).
    made: AtomicUsize,
    /// Variants served lately, in memory.
    kept: KeptVariants,
}

impl Variants {
    pub(super) fn new(workers: usize, queue: usize) -> Self {
        Variants {
            workers: Arc::new(tokio::sync::Semaphore::new(workers.max(1))),
            waiting: AtomicUsize::new(0),
            queue,
            making: Turns::default(),
            made: AtomicUsize::new(0),
            kept: KeptVariants::default(),
        }
    }

    /// A worker's turn, waiting in the queue when every worker is busy; 503 when the queue is
    /// full too.
    async fn worker(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        if let Ok(permit) = Arc::clone(&self.workers).try_acquire_owned() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.queue {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(BUSY);
        }
        let permit = Arc::clone(&self.workers).acquire_owned().await;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        permit.map_err(|_| BUSY)
    }
}

/// What an asset's variants are made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Image,
    Pdf,
}

/// A variant asked for, before it is looked up: its spec, its possible encodings (two when
/// `auto` leaves the choice between JPEG and PNG to the source's transparency), and its name.
struct Wanted {
    spec: VariantSpec,
    encodings: Vec<Encoding>,
    name: String,
    /// What its `ETag` is made of: the source's checksum and the parameters.
    tag: String,
    kind: Kind,
    file: String,
}

impl Wanted {
    fn path(&self, asset: Uuid, encoding: Encoding) -> String {
        format!("derived/{asset}/{}.{}", self.name, encoding.extension())
    }

    fn etag(&self, encoding: Encoding) -> String {
        format!("\"{}.{}\"", self.tag, encoding.extension())
    }
}

/// The first 16 bytes of the SHA-256 of `parts` (each followed by a `0`), in hex.
fn hex16(parts: &[&[u8]]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part);
        hash.update([0]);
    }
    hash.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether an `Accept` value names `image/webp`.
fn takes_webp(accept: Option<&[u8]>) -> bool {
    accept
        .and_then(|a| std::str::from_utf8(a).ok())
        .is_some_and(|a| {
            a.split(',').any(|part| {
                let mut params = part.split(';');
                let range = params.next().unwrap_or("").trim();
                let refused = params.any(|p| {
                    p.trim()
                        .strip_prefix("q=")
                        .and_then(|q| q.trim().parse::<f32>().ok())
                        .is_some_and(|q| q == 0.0)
                });
                range.eq_ignore_ascii_case("image/webp") && !refused
            })
        })
}

/// Whether a query names a `preset` (whatever its value and the other parameters).
fn names_preset(query: Option<&str>) -> bool {
    form_urlencoded::parse(query.unwrap_or("").as_bytes()).any(|(name, _)| name == "preset")
}

impl Service {
    /// `GET /api/v1/assets/{asset_id}/image`: the variant the query asks for.
    pub(super) async fn asset_image(
        &self,
        id: &str,
        req: RawRequest<'_>,
        access: &Access,
    ) -> Result<Reply, ApiError> {
        let presets = &self.inner.config.image_presets;
        // Without a key, only a preset of a published public asset is served, and who may
        // see it is decided first (DESIGN.md §3: the credential, then the parameters): a
        // request that names no preset is the 401 of a request without a key, and so is one
        // for an asset that is not public, whatever its parameters; a preset of a public
        // asset has its parameters checked then (400).
        let (asked, asset) = if matches!(access, Access::Public) {
            if !names_preset(req.query) {
                return Err(super::access::no_key());
            }
            let asset = self.seen_asset(id, access.reader()).await?;
            (variant::parse(req.query, presets)?, asset)
        } else {
            let asked = variant::parse(req.query, presets)?;
            (asked, self.seen_asset(id, access.reader()).await?)
        };
        let wanted = self
            .wanted(&asset, asked.spec, takes_webp(req.accept), access)
            .await?;
        let vary = wanted.spec.format == Format::Auto;
        let answer = |reply: Reply| {
            let reply = crate::download::protected(reply);
            if vary {
                reply.with_header("vary", "Accept")
            } else {
                reply
            }
        };
        if let Some(encoding) = wanted
            .encodings
            .iter()
            .copied()
            .find(|e| crate::web::none_match(req.if_none_match, &wanted.etag(*e)))
        {
            return Ok(answer(
                Reply::empty(304).with_header("etag", wanted.etag(encoding)),
            ));
        }
        if let Some(reply) = self.kept_variant(&asset, &wanted, req.head).await? {
            return Ok(answer(reply));
        }
        // The variant's turn: held while it is looked for again and made.
        let _making = self.inner.variants.making.wait(wanted.name.clone()).await;
        // Made by another request while this one waited?
        if let Some(reply) = self.kept_variant(&asset, &wanted, req.head).await? {
            return Ok(answer(reply));
        }
        let (encoding, bytes) = self.make_variant(&asset, &wanted).await?;
        let etag = wanted.etag(encoding);
        self.inner.variants.kept.put(
            wanted.path(asset.id, encoding),
            etag.clone(),
            stamp_of(&asset),
            bytes.clone(),
        );
        Ok(answer(variant_reply(encoding, etag, bytes, req.head)))
    }

    /// `GET /api/v1/assets/{asset_id}/image-url?<variant parameters>&expires_in=S`: a link to
    /// the variant that needs no key until it expires, for a caller that may see it now.
    pub(super) async fn asset_image_url(
        &self,
        id: &str,
        req: RawRequest<'_>,
        access: &Access,
    ) -> Result<Reply, ApiError> {
        let asked = variant::parse(req.query, &self.inner.config.image_presets)?;
        let asset = self.asset_for(id, access.reader()).await?;
        let wanted = self.wanted(&asset, asked.spec, false, access).await?;
        let expires_in = super::websites::expires_in(req.query)?;
        let canonical = wanted.spec.canonical();
        self.signed_link(
            crate::signed::Target::Image(asset.id, &canonical),
            super::websites::grant(access.files()),
            &format!("assets/{}/image?{canonical}", asset.id),
            expires_in,
            req.mount,
        )
        .await
    }

    /// What `spec` of `asset` is, after the checks of who may see it: 404 without an image; a
    /// variant larger than [`FREE_SIDE`] of a paid file needs what its download needs, and a
    /// pass opens only its own assets (whatever downloads it has left).
    async fn wanted(
        &self,
        asset: &Asset,
        spec: VariantSpec,
        webp: bool,
        access: &Access,
    ) -> Result<Wanted, ApiError> {
        let file = asset.file_path.clone().ok_or(NO_IMAGE)?;
        let mime = asset.mime_type.as_deref().unwrap_or("");
        let kind = match asset.asset_type {
            AssetType::Image
                if matches!(
                    mime,
                    "image/png" | "image/jpeg" | "image/gif" | "image/webp"
                ) =>
            {
                Kind::Image
            }
            AssetType::Pdf => Kind::Pdf,
            _ => return Err(NO_IMAGE),
        };
        let long_side = match (kind, asset.width, asset.height) {
            (Kind::Image, Some(w), Some(h)) => {
                let canvas = variant::plan(&spec, w, h).canvas;
                canvas.0.max(canvas.1)
            }
            _ => match (spec.width, spec.height) {
                (None, None) => 2048,
                (w, h) => w.unwrap_or(0).max(h.unwrap_or(0)),
            },
        };
        // A pass opens its own assets' variants, any size, and spends nothing on them (a
        // variant is not a download); anyone else needs a download's rights past FREE_SIDE.
        match access {
            Access::Pass(pass) => self.pass_opens_asset(pass, asset.id).await?,
            _ if long_side > FREE_SIDE => self.may_download(asset, access.files()).await?,
            _ => {}
        }
        let encodings = match spec.format {
            Format::Auto if !webp && kind == Kind::Image && mime != "image/jpeg" => {
                vec![Encoding::Jpeg, Encoding::Png]
            }
            format => vec![Encoding::choose(format, webp, false)],
        };
        let chosen = match encodings.as_slice() {
            [one] => one.extension(),
            _ => "auto",
        };
        let canonical = spec.canonical();
        let name = hex16(&[
            asset.id.to_string().as_bytes(),
            file.as_bytes(),
            canonical.as_bytes(),
            chosen.as_bytes(),
        ]);
        // The tag is made of the source's bytes and the parameters, so a cached variant stays
        // valid when the data moves; the name (where the variant is kept) of the asset and
        // its file's path.
        let tag = match &asset.checksum_sha256 {
            Some(sum) => hex16(&[sum, canonical.as_bytes(), chosen.as_bytes()]),
            None => name.clone(),
        };
        Ok(Wanted {
            spec,
            encodings,
            name,
            tag,
            kind,
            file,
        })
    }

    /// The kept variant, when one of its encodings is kept in memory or in the file store.
    async fn kept_variant(
        &self,
        asset: &Asset,
        wanted: &Wanted,
        head: bool,
    ) -> Result<Option<Reply>, ApiError> {
        let kept = &self.inner.variants.kept;
        for &encoding in &wanted.encodings {
            let path = wanted.path(asset.id, encoding);
            let etag = wanted.etag(encoding);
            if let Some(bytes) = kept.get(&path, &etag, stamp_of(asset)) {
                return Ok(Some(variant_reply(encoding, etag, bytes, head)));
            }
            if head {
                match self.inner.files.stat(&path).await? {
                    Some(stat) => return Ok(Some(headers(encoding, etag, stat.size))),
                    None => continue,
                }
            }
            // One read gives the size and the bytes, of the same file.
            let Some((size, mut stream)) = self.inner.files.open_whole(&path).await? else {
                continue;
            };
            if size > KEPT_MAX as u64 {
                let reply = headers(encoding, etag, size);
                return Ok(Some(Reply {
                    stream: Some(stream),
                    ..reply
                }));
            }
            let mut bytes = bytes::BytesMut::with_capacity(size as usize);
            while let Some(chunk) = stream.next().await {
                bytes.extend_from_slice(&chunk.map_err(FileError::store)?);
            }
            let bytes = bytes.freeze();
            kept.put(path, etag.clone(), stamp_of(asset), bytes.clone());
            return Ok(Some(variant_reply(encoding, etag, bytes, head)));
        }
        Ok(None)
    }

    /// Makes the variant from the asset's file, on a worker, and keeps it.
    async fn make_variant(
        &self,
        asset: &Asset,
        wanted: &Wanted,
    ) -> Result<(Encoding, Bytes), ApiError> {
        let unrenderable = format!("derived/{}/{UNRENDERABLE}", asset.id);
        if wanted.kind == Kind::Pdf && self.inner.files.stat(&unrenderable).await?.is_some() {
            return Err(cannot_convert(variant::TransformError::Unrenderable));
        }
        let worker = self.inner.variants.worker().await?;
        let source = self.source(&wanted.file).await?;
        let (spec, kind) = (wanted.spec, wanted.kind);
        let limits = self.inner.config.extract_limits.clone();
        let encodings = wanted.encodings.clone();
        // The worker's turn belongs to the work: a client that hangs up does not free it
        // while the variant is still being made (a PDF page's render is bounded by its own
        // deadline, see `extract::PdfRenderer`).
        let made = tokio::task::spawn_blocking(move || {
            let _worker = worker;
            let encoding = match encodings.as_slice() {
                [one] => *one,
                _ => Encoding::choose(Format::Auto, false, variant::has_alpha(&source)),
            };
            let source = match kind {
                Kind::Image => Source::Image(&source),
                Kind::Pdf => Source::Pdf(&source),
            };
            variant::make(source, &spec, encoding, &limits)
        })
        .await
        .map_err(ApiError::internal)?;
        let made = match made {
            Ok(made) => made,
            // A page that could not be drawn is remembered with the asset's variants, so it
            // is not drawn again on every request (until the file is replaced).
            Err(e @ variant::TransformError::Unrenderable) => {
                self.keep(asset, wanted, &unrenderable, Bytes::new())
                    .await?;
                return Err(cannot_convert(e));
            }
            Err(variant::TransformError::Stopped) => return Err(SHUTTING_DOWN),
            Err(e) => return Err(cannot_convert(e)),
        };
        self.inner.variants.made.fetch_add(1, Ordering::Relaxed);
        let bytes = Bytes::from(made.bytes);
        let path = wanted.path(asset.id, made.encoding);
        self.keep(asset, wanted, &path, bytes.clone()).await?;
        Ok((made.encoding, bytes))
    }

    /// Keeps `bytes` at `path` among the asset's variants, unless a replacement or delete
    /// removed them while they were made: then it goes too.
    async fn keep(
        &self,
        asset: &Asset,
        wanted: &Wanted,
        path: &str,
        bytes: Bytes,
    ) -> Result<(), ApiError> {
        self.inner.files.put(path, bytes).await?;
        let current = self.inner.store.get_asset(asset.id).await?;
        if current.and_then(|a| a.file_path).as_deref() != Some(wanted.file.as_str()) {
            self.inner.files.delete(path).await;
        }
        Ok(())
    }

    /// The whole file a variant is made of: 404 when it is gone from the store, 400 when it
    /// is larger than [`crate::Config::max_upload`].
    async fn source(&self, path: &str) -> Result<Bytes, ApiError> {
        let (size, mut stream) = self
            .inner
            .files
            .open_whole(path)
            .await?
            .ok_or(super::downloads::NO_FILE)?;
        let limit = self.inner.config.max_upload;
        if size > limit {
            return Err(ApiError::validation(
                "file",
                format!(
                    "The asset's image cannot be converted: its file is larger than {limit} bytes"
                ),
            ));
        }
        let mut bytes = bytes::BytesMut::with_capacity(usize::try_from(size).unwrap_or(0));
        while let Some(chunk) = stream.next().await {
            bytes.extend_from_slice(&chunk.map_err(FileError::answer)?);
        }
        Ok(bytes.freeze())
    }

    /// How many image variants this process has made since it started.
    pub fn variants_made(&self) -> usize {
        self.inner.variants.made.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::takes_webp;

    #[test]
    fn accept_names_webp_unless_refused() {
        assert!(takes_webp(Some(b"image/avif,image/webp,*/*")));
        assert!(takes_webp(Some(b"image/webp;q=0.8")));
        assert!(takes_webp(Some(b"IMAGE/WEBP")));
        assert!(!takes_webp(Some(b"image/webp;q=0")));
        assert!(!takes_webp(Some(b"image/*,*/*;q=0.8")));
        assert!(!takes_webp(None));
    }
}
