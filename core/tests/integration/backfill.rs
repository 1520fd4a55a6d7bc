//! The backfill of checksums: an asset stored before checksums were kept gets the SHA-256 of
//! its file from `Service::backfill_previews`, without an edit, once.

use assetlib_core::events::Log;
use assetlib_core::testing::sample_asset;
use assetlib_core::{AssetType, Config, Service};
use sha2::{Digest, Sha256};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn assets_without_a_checksum_get_their_files_sha256() {
    let service = Service::in_memory(Config::default());
    let bytes = assetlib_core::extract::samples::pdf(2, 20);
    service
        .files()
        .put("docs/old.pdf", bytes.clone().into())
        .await
        .expect("put");
    // As an older version stored it: a file and a thumbnail, no checksum.
    let mut old = sample_asset("Old", AssetType::Pdf, 1);
    old.file_path = Some("docs/old.pdf".into());
    old.thumbnail_path = Some("thumbnails/old.png".into());
    let old = service
        .store()
        .insert_asset(old, Log::ANONYMOUS)
        .await
        .expect("insert");
    assert_eq!(old.checksum_sha256, None);

    let done = service.backfill_previews(|_| {}).await.expect("backfill");
    assert_eq!((done.seen, done.checksums, done.failed), (1, 1, 0));
    let now = service
        .store()
        .get_asset(old.id)
        .await
        .expect("get")
        .expect("asset");
    assert_eq!(
        now.checksum_sha256,
        Some(<[u8; 32]>::from(Sha256::digest(&bytes)))
    );
    assert_eq!(now.updated_at, old.updated_at, "a backfill is no edit");

    let again = service.backfill_previews(|_| {}).await.expect("backfill");
    assert_eq!(again.checksums, 0, "nothing left to do");
}
