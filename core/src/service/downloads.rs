//! Download operations: an asset's file (ranges, redirects), a library's zip, and the public
//! thumbnails.

use uuid::Uuid;

use super::Service;
use crate::bulk;
use crate::download::{self, protected};
use crate::error::ApiError;
use crate::model::{Asset, AssetType};
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::tree;
use crate::validate;

impl Service {
    /// `GET /api/v1/assets/{asset_id}/download`: the asset's file, streamed; one `Range` gives
    /// 206, an unsatisfiable one 416; link and external_video answer 302 to their URL. A
    /// draft is 404 but for a key with `write:assets`.
    pub(super) async fn download_asset(
        &self,
        asset: Asset,
        req: RawRequest<'_>,
    ) -> Result<Reply, ApiError> {
        if let (AssetType::Link | AssetType::ExternalVideo, Some(url)) =
            (asset.asset_type, &asset.external_url)
        {
            return Ok(Reply::empty(302).with_header("location", url.clone()));
        }
        let no_file = || ApiError::NotFound("Asset has no downloadable file");
        let path = asset.file_path.as_deref().ok_or_else(no_file)?;
        let stat = self.inner.files.stat(path).await?.ok_or_else(no_file)?;
        let size = stat.size;
        let range = match req.if_range {
            Some(if_range) if !download::if_range_matches(if_range, &stat.etag) => None,
            _ => req.range,
        };
        let (status, part) = match download::select(range, size) {
            download::Selection::Whole => (200, 0..size),
            download::Selection::Part(part) => (206, part),
            download::Selection::Unsatisfiable => {
                return Ok(Reply::empty(416)
                    .with_header("content-range", format!("bytes */{size}"))
                    .with_header("accept-ranges", "bytes")
                    .with_header("etag", stat.etag));
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
                .with_header("etag", stat.etag)
                .with_header(
                    "content-disposition",
                    download::attachment(&asset.slug, path),
                ),
        );
        if status == 206 {
            reply = reply.with_header("content-range", download::content_range(&part, size));
        }
        if req.head {
            return Ok(reply);
        }
        if part.start == 0 {
            self.inner.store.record_download(asset.id).await?;
        }
        reply.stream = Some(self.inner.files.stream(path, part).await?);
        Ok(reply)
    }

    /// `GET /api/v1/libraries/{library_id}/download`: the library's files as one zip,
    /// streamed as it is written, in page order with a folder per section (see
    /// [`crate::bulk`]); 403 (`Bulk download disabled`) unless the library allows it. Assets
    /// without a stored file are left out. A bulk download counts no `download_count`.
    pub(super) async fn download_library(
        &self,
        id: &str,
        req: RawRequest<'_>,
    ) -> Result<Reply, ApiError> {
        let id = validate::parse_id("library_id", id)?;
        let rows = self.published_library(id).await?;
        if !rows.library.settings.allow_bulk_download {
            return Err(ApiError::BulkDownloadDisabled);
        }
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
        let detail = tree::assemble(&rows, true, "");
        let ids: Vec<Uuid> = detail
            .page_order()
            .map(|(_, row)| row.entry.asset_id)
            .collect();
        let assets = self.assets_by_id(&ids).await?;
        let items = bulk::plan(&self.inner.files, &detail, &assets).await?;
        Ok(Reply {
            stream: Some(bulk::zip_stream(self.inner.files.clone(), items)),
            ..reply
        })
    }

    /// A thumbnail under `thumbnails/` of the file store, for the public
    /// [`crate::THUMBNAIL_ROUTE`] of a server: 200 with the image (cacheable for a day), or
    /// 404. `name` is the part of the path after `thumbnails/`.
    pub async fn thumbnail(&self, name: &str, head: bool) -> Reply {
        let not_found = || ApiError::NotFound("No such file").into_reply();
        let content_type = match name.rsplit_once('.').map(|(_, ext)| ext) {
            Some("png") => "image/png",
            Some("jpg") => "image/jpeg",
            _ => return not_found(),
        };
        if name.contains('/') || name.starts_with('.') {
            return not_found();
        }
        let path = format!("thumbnails/{name}");
        let stat = match self.inner.files.stat(&path).await {
            Ok(Some(stat)) => stat,
            Ok(None) => return not_found(),
            Err(e) => return e.into_reply(),
        };
        let mut reply = Reply::empty(200)
            .with_header("content-type", content_type)
            .with_header("content-length", stat.size.to_string())
            .with_header("etag", stat.etag)
            .with_header("cache-control", "public, max-age=86400")
            .with_header("x-content-type-options", "nosniff");
        if !head {
            match self.inner.files.stream(&path, 0..stat.size).await {
                Ok(stream) => reply.stream = Some(stream),
                Err(e) => return e.into_reply(),
            }
        }
        reply
    }
}
