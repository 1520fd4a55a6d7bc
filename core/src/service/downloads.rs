//! Download operations: an asset's file (ranges, redirects), a library's zip, and the public
//! thumbnails.

use std::sync::Arc;

use uuid::Uuid;

use super::Service;
use super::access::{FileRight, PAID_FILE, Reader, paid_files};
use super::resumes::Ticket;
use crate::auth::PASS_INVALID;
use crate::bulk;
use crate::download::{self, protected};
use crate::error::ApiError;
use crate::model::{Asset, AssetType, LibraryPass, LibraryRows, PassSpend};
use crate::records::now;
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::tree;
use crate::validate;

/// The answer for an asset without a file to download.
pub(super) const NO_FILE: ApiError = ApiError::NotFound("Asset has no downloadable file");

/// How many times a download opens an asset's file that keeps going away (replaced or
/// deleted between reading the asset and opening the file) before it answers 503.
const OPEN_ATTEMPTS: usize = 5;

/// What a download asks for, of the request's head, and the pass it spends, if any.
#[derive(Debug, Clone, Copy)]
struct Wanted<'r> {
    range: Option<&'r [u8]>,
    if_range: Option<&'r [u8]>,
    if_none_match: Option<&'r [u8]>,
    head: bool,
    pass: Option<&'r LibraryPass>,
}

impl Service {
    /// `GET /api/v1/assets/{asset_id}/download`: the asset's file, streamed; one `Range` gives
    /// 206, an unsatisfiable one 416; link and external_video answer 302 to their URL. A
    /// draft is 404 but for a key with `write:assets`.
    ///
    /// The file is opened once, for the version its headers describe. When it is gone by
    /// then (a replacement or a delete in between), the asset is read again and its current
    /// file is served, or the answer for a missing asset when it is gone or `reader` no
    /// longer sees it; a file missing from the store under the asset's own path is 404
    /// (`Asset has no downloadable file`); 503 only if the file changes under every one of
    /// [`OPEN_ATTEMPTS`] tries.
    ///
    /// Through a library `pass`, each download first spends one of the pass's downloads in
    /// the store (403, `Pass download limit reached`, when none is left; 401 when the pass
    /// stopped working since it was read), but for a range that continues a download the
    /// pass began ([`super::resumes`]): a 200 or a range from byte 0 always spends one.
    pub(super) async fn download_asset(
        &self,
        mut asset: Asset,
        req: RawRequest<'_>,
        reader: Reader<'_>,
        pass: Option<&LibraryPass>,
    ) -> Result<Reply, ApiError> {
        let wanted = Wanted {
            range: req.range,
            if_range: req.if_range,
            if_none_match: req.if_none_match,
            head: req.head,
            pass,
        };
        for _ in 0..OPEN_ATTEMPTS {
            if let Some(reply) = self.download_file(&asset, wanted).await? {
                return Ok(reply);
            }
            let current = self
                .inner
                .store
                .get_asset(asset.id)
                .await?
                .filter(|a| reader.sees_asset(a))
                .ok_or_else(|| reader.missing())?;
            // The same path with no file there is a file gone from the store, not a race.
            if let Some(path) = current.file_path.as_deref()
                && current.file_path == asset.file_path
                && self.inner.files.stat(path).await?.is_none()
            {
                return Err(NO_FILE);
            }
            asset = current;
        }
        Err(ApiError::Unavailable {
            message: "The asset's file kept changing while it was opened",
            retry_after: 1,
        })
    }

    /// The download of `asset`'s file as it is now; `None` when the file went away before it
    /// could be opened.
    async fn download_file(
        &self,
        asset: &Asset,
        req: Wanted<'_>,
    ) -> Result<Option<Reply>, ApiError> {
        if let (AssetType::Link | AssetType::ExternalVideo, Some(url)) =
            (asset.asset_type, &asset.external_url)
        {
            return Ok(Some(Reply::empty(302).with_header("location", url.clone())));
        }
        let path = asset.file_path.as_deref().ok_or(NO_FILE)?;
        let Some(stat) = self.inner.files.stat(path).await? else {
            return Ok(None);
        };
        let size = stat.size;
        let etag = file_etag(asset, &stat);
        if crate::web::none_match(req.if_none_match, &etag) {
            // The client holds these bytes: nothing is sent, counted or spent.
            return Ok(Some(Reply::empty(304).with_header("etag", etag)));
        }
        let range = match req.if_range {
            Some(if_range) if !download::if_range_matches(if_range, &etag) => None,
            _ => req.range,
        };
        let (status, part) = match download::select(range, size) {
            download::Selection::Whole => (200, 0..size),
            download::Selection::Part(part) => (206, part),
            download::Selection::Unsatisfiable => {
                return Ok(Some(
                    Reply::empty(416)
                        .with_header("content-range", format!("bytes */{size}"))
                        .with_header("accept-ranges", "bytes")
                        .with_header("etag", etag),
                ));
            }
        };
        let mut reply = protected(
            Reply::empty(status)
                .with_header(
                    "content-type",
                    asset
                        .mime_type
                        .clone()
                        .unwrap_or_else(|| "application/octet-stream".to_owned()),
                )
                .with_header("content-length", (part.end - part.start).to_string())
                .with_header("accept-ranges", "bytes")
                .with_header("etag", etag.clone())
                .with_header(
                    "content-disposition",
                    download::attachment(&asset.slug, path),
                ),
        );
        if status == 206 {
            reply = reply.with_header("content-range", download::content_range(&part, size));
        }
        if req.head {
            return Ok(Some(reply));
        }
        let counted = part.start == 0;
        let len = part.end - part.start;
        let Some(stream) = self.inner.files.open(path, part, &stat).await? else {
            return Ok(None);
        };
        let ticket = match req.pass {
            Some(pass) => Some(
                self.pass_download(pass, asset.id, (&etag, size), len, counted)
                    .await?,
            ),
            None => None,
        };
        if counted {
            self.inner.store.record_download(asset.id).await?;
        }
        reply.stream = Some(match ticket {
            Some(ticket) => ticket.watch(stream),
            None => stream,
        });
        Ok(Some(reply))
    }

    /// What `len` bytes of `asset`'s file `(etag, size)` cost `pass` (see [`super::resumes`]):
    /// nothing when a range continues a download it began, else one download (403 when it
    /// has none left). The ticket follows the bytes served.
    async fn pass_download(
        &self,
        pass: &LibraryPass,
        asset: Uuid,
        file: (&str, u64),
        len: u64,
        from_start: bool,
    ) -> Result<Ticket, ApiError> {
        let resumes = &self.inner.resumes;
        if !from_start && let Some(ticket) = resumes.continue_download(pass.id, asset, file, len) {
            return Ok(ticket);
        }
        self.spend(pass).await?;
        Ok(resumes.begin(pass.id, asset, file, len))
    }

    /// Spends one download of `pass` in the store: 403 when it has none left, 401 when it
    /// stopped working (revoked or expired) since it was read.
    async fn spend(&self, pass: &LibraryPass) -> Result<(), ApiError> {
        match self.pass_store()?.spend_pass(pass.id, now()).await? {
            PassSpend::Spent(_) => Ok(()),
            PassSpend::Exhausted => Err(ApiError::PassLimitReached),
            PassSpend::Dead => Err(PASS_INVALID),
        }
    }

    /// `GET /api/v1/libraries/{library_id}/download`: the library's files as one zip,
    /// streamed as it is written, in page order with a folder per section (see
    /// [`crate::bulk`]); 403 (`Bulk download disabled`) unless the library allows it. Assets
    /// without a stored file are left out. A bulk download counts no `download_count`.
    ///
    /// The files are those `right` may download ([`Service::zip_plan`]); through a pass the
    /// zip is one of its downloads, spent before the first byte (not for a `HEAD`).
    pub(super) async fn download_library(
        &self,
        id: &str,
        req: RawRequest<'_>,
        right: FileRight<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let id = validate::parse_id("library_id", id)?;
        let rows = self.published_library_in(id, ws).await?;
        let items = self.zip_plan(&rows, right).await?;
        let reply = protected(
            Reply::empty(200)
                .with_header("content-type", "application/zip")
                .with_header(
                    "content-disposition",
                    download::attachment(&rows.library.slug, "library.zip"),
                ),
        );
        if req.head {
            return Ok(reply);
        }
        if let Some(pass) = right.pass() {
            self.spend(pass).await?;
        }
        Ok(Reply {
            stream: Some(bulk::zip_stream(
                self.inner.files.clone(),
                Arc::clone(&self.inner.store),
                items,
            )),
            ..reply
        })
    }

    /// What the zip of the library `rows` holds for `right`, after the checks a zip and its
    /// link share: 403 (`Bulk download disabled`) unless the library allows it; for a key
    /// without `read:paid` (or a link it minted), 403 when any file in it is paid; for a pass,
    /// only the assets it opens, and 403 when it has no downloads left.
    pub(super) async fn zip_plan(
        &self,
        rows: &LibraryRows,
        right: FileRight<'_>,
    ) -> Result<Vec<bulk::Item>, ApiError> {
        if !rows.library.settings.allow_bulk_download {
            return Err(ApiError::BulkDownloadDisabled);
        }
        if right.pass().is_some_and(LibraryPass::is_exhausted) {
            return Err(ApiError::PassLimitReached);
        }
        let detail = tree::assemble(rows, true, "");
        let subset = right.pass().and_then(|p| p.asset_ids.as_deref());
        let ids: Vec<Uuid> = detail
            .page_order()
            .map(|(_, row)| row.entry.asset_id)
            .filter(|id| subset.is_none_or(|ids| ids.contains(id)))
            .collect();
        let assets = self.assets_by_id(&ids).await?;
        let items = bulk::plan(&detail, &assets);
        if let FileRight::Free = right {
            let files = items
                .iter()
                .filter_map(|item| assets.get(&item.asset_id))
                .map(|a| (a.id, a.is_public));
            if !paid_files(self, files).await?.is_empty() {
                return Err(PAID_FILE);
            }
        }
        Ok(items)
    }

    /// A thumbnail under `thumbnails/` of the file store, for the public
    /// [`crate::THUMBNAIL_ROUTE`] of a server: 200 with the image, or 404 (also when it goes
    /// away while it is opened, and for a name no file can have, without asking the file
    /// store: longer than 255 bytes, hidden, with a control character, `/` or `\`), with the
    /// `Cache-Control` of a keyless answer (cacheable for a minute). `name` is the part of the
    /// path after `thumbnails/`.
    pub async fn thumbnail(&self, name: &str, head: bool) -> Reply {
        let mut reply = self
            .thumbnail_file(name, head)
            .await
            .unwrap_or_else(ApiError::into_reply);
        crate::web::cache_control(&mut reply, false);
        reply
    }

    async fn thumbnail_file(&self, name: &str, head: bool) -> Result<Reply, ApiError> {
        const NOT_FOUND: ApiError = ApiError::NotFound("No such file");
        let content_type = match name.rsplit_once('.').map(|(_, ext)| ext) {
            Some("png") => "image/png",
            Some("jpg") => "image/jpeg",
            _ => return Err(NOT_FOUND),
        };
        if !could_be_thumbnail(name) {
            return Err(NOT_FOUND);
        }
        let path = format!("thumbnails/{name}");
        let stat = self.inner.files.stat(&path).await?.ok_or(NOT_FOUND)?;
        let mut reply = Reply::empty(200)
            .with_header("content-type", content_type)
            .with_header("content-length", stat.size.to_string())
            .with_header("etag", thumbnail_etag(name))
            .with_header("x-content-type-options", "nosniff");
        if !head {
            let stream = self.inner.files.open(&path, 0..stat.size, &stat).await?;
            reply.stream = Some(stream.ok_or(NOT_FOUND)?);
        }
        Ok(reply)
    }
}

/// The `ETag` of `asset`'s file as `stat` found it: made of its content
/// ([`download::content_etag`] of the SHA-256 the record keeps) while the record's size is the
/// file's, so a cached copy stays valid when the file moves to another file store; else (no
/// checksum read yet, or a file changed in place behind the API) the file store's own tag.
fn file_etag(asset: &Asset, stat: &crate::files::Stat) -> String {
    match &asset.checksum_sha256 {
        Some(sum) if asset.file_size == Some(stat.size) => download::content_etag(sum),
        _ => stat.etag.clone(),
    }
}

/// The `ETag` of the thumbnail `name`: a thumbnail's name is random and its bytes never
/// change under it, so the name is its tag, wherever the file store keeps it (an `ETag` is
/// scoped to its URL; only the characters a tag cannot hold are left out).
fn thumbnail_etag(name: &str) -> String {
    let kept: String = name
        .chars()
        .filter(|c| c.is_ascii_graphic() && *c != '"')
        .collect();
    format!("\"{kept}\"")
}

/// The longest file name a thumbnail can have, in bytes: what common file systems hold in one
/// path segment (ext4, XFS, APFS, NTFS in UTF-16 units), and far more than the names the API
/// gives thumbnails (32 hex digits and an extension).
const MAX_THUMBNAIL_NAME: usize = 255;

/// Whether a file could be named `name` under `thumbnails/`: one path segment (no `/` or `\`)
/// of at most [`MAX_THUMBNAIL_NAME`] bytes, not hidden (no leading `.`), without control
/// characters (NUL included). Another name is 404 before the file store is asked: a local
/// file system refuses it with an error of its own, which is no reason for a 500.
fn could_be_thumbnail(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_THUMBNAIL_NAME
        && !name.starts_with('.')
        && !name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control())
}
