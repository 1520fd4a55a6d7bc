//! Backup archives over the memory store and in-memory files: a round trip gives back every
//! record and file; a damaged archive (cut short, a byte of a file changed, a record changed
//! with its checksum left) is refused by `verify` and `restore` writes nothing; a target that
//! is not empty is refused; files copied between file stores keep their bytes; and a copy is
//! verified by its counts and its files' checksums.

use assetlib_core::store::TransferStore;
use assetlib_core::store::prelude::*;
use assetlib_core::testing::{sample_asset, sample_library};
use assetlib_core::transfer::archive::{self, ArchiveError};
use assetlib_core::transfer::{
    CopyDiffers, Record, copy_files, copy_records, file_checksum, list_files, verify_copy,
};
use assetlib_core::{AssetType, Files, LibraryEntry, LibraryWrite, MemoryStore};
use futures_util::TryStreamExt as _;

/// A store with a few assets (one with a file), a library and the events of it all, and
/// files with them.
async fn deployment() -> (MemoryStore, Files) {
    let store = MemoryStore::new();
    let files = Files::memory();
    let pdf = assetlib_core::extract::samples::pdf(2, 10);
    files
        .object_store()
        .put(&"uploads/a/guide.pdf".into(), pdf.clone().into())
        .await
        .expect("put");
    files
        .object_store()
        .put(&"thumbnails/0f.png".into(), vec![1u8; 3000].into())
        .await
        .expect("put");
    let mut guide = sample_asset("Guide", AssetType::Pdf, 1);
    guide.file_path = Some("uploads/a/guide.pdf".into());
    let checksum: [u8; 32] = sha2_of(&pdf);
    guide.checksum_sha256 = Some(checksum);
    let guide = store
        .insert_asset(guide, Log::ANONYMOUS)
        .await
        .expect("insert");
    store
        .insert_asset(sample_asset("Link", AssetType::Link, 2), Log::ANONYMOUS)
        .await
        .expect("insert");
    store.rotate_signing_secret([3; 32]).await.expect("secret");
    let library = sample_library("Kit", 3);
    let write = LibraryWrite {
        library,
        slug_given: false,
        sections: vec![],
        entries: vec![LibraryEntry {
            asset_id: guide.id,
            section_id: None,
            display_order: 0,
            title: None,
            description: None,
        }],
    };
    store
        .put_library(write, Log::ANONYMOUS)
        .await
        .expect("library");
    (store, files)
}

fn sha2_of(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

async fn records(store: &MemoryStore) -> Vec<Record> {
    TransferStore::export(store)
        .await
        .expect("export")
        .try_collect()
        .await
        .expect("records")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archive_gives_back_every_record_and_file() {
    let (store, files) = deployment().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("backup.zip");
    let manifest = archive::write(&store, &files, &out, "a test", |_| {})
        .await
        .expect("write");
    assert!(!dir.path().join("backup.zip.partial").exists());
    assert_eq!((manifest.counts.assets, manifest.counts.libraries), (2, 1));
    assert_eq!(manifest.file_count, 2);
    assert_eq!(archive::verify(&out).expect("verify"), manifest);

    let (target, target_files) = (MemoryStore::new(), Files::memory());
    let restored = archive::restore(&out, &target, &target_files, |_| {})
        .await
        .expect("restore");
    assert_eq!(restored.files, 2);
    assert_eq!(records(&target).await, records(&store).await);
    assert_eq!(target.transfer_mark().await.expect("mark"), None);
    assert_eq!(
        list_files(&target_files).await.expect("list"),
        list_files(&files).await.expect("list")
    );
    let sum = file_checksum(&target_files, "uploads/a/guide.pdf")
        .await
        .expect("sum");
    let recorded = records(&store).await.iter().find_map(|r| match r {
        Record::Asset(a) => a.checksum_sha256,
        _ => None,
    });
    assert_eq!(
        Some(sum),
        recorded,
        "the restored file has the asset's checksum"
    );

    // Into a target that is not empty: refused, nothing written.
    let again = archive::restore(&out, &target, &Files::memory(), |_| {}).await;
    assert!(matches!(again, Err(ArchiveError::NotEmpty(_))), "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_archives_are_refused_and_nothing_is_written() {
    let (store, files) = deployment().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("backup.zip");
    archive::write(&store, &files, &out, "a test", |_| {})
        .await
        .expect("write");
    let bytes = std::fs::read(&out).expect("read");
    // Where the PDF's bytes are (stored as they are), and a record (deflated).
    let pdf = assetlib_core::extract::samples::pdf(2, 10);
    let in_file = bytes
        .windows(pdf.len().min(64))
        .position(|w| w == &pdf[..pdf.len().min(64)])
        .expect("the PDF in the archive")
        + 10;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("cut short", bytes[..bytes.len() / 2].to_vec()),
        ("a byte of a file changed", {
            let mut b = bytes.clone();
            b[in_file] ^= 0x20;
            b
        }),
        ("its last bytes cut", bytes[..bytes.len() - 10].to_vec()),
        ("empty", Vec::new()),
    ];
    for (what, damaged) in cases {
        let path = dir.path().join("damaged.zip");
        std::fs::write(&path, &damaged).expect("write");
        let verified = archive::verify(&path);
        assert!(
            matches!(verified, Err(ArchiveError::Damaged(_))),
            "{what}: {verified:?}"
        );
        let (target, target_files) = (MemoryStore::new(), Files::memory());
        let restored = archive::restore(&path, &target, &target_files, |_| {}).await;
        let message = restored.expect_err(what).to_string();
        assert!(
            message.starts_with("the archive is damaged: "),
            "{what}: {message}"
        );
        assert!(records(&target).await.is_empty(), "{what}: records written");
        assert!(
            list_files(&target_files).await.expect("list").is_empty(),
            "{what}: files written"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_copied_between_file_stores_keep_their_bytes_and_a_second_copy_skips_them() {
    let (_, files) = deployment().await;
    let to = Files::memory();
    let copied = copy_files(&files, &to, |_| {}).await.expect("copy");
    assert_eq!((copied.files, copied.files_there), (2, 0));
    let again = copy_files(&files, &to, |_| {}).await.expect("copy");
    assert_eq!((again.files, again.files_there), (0, 2));
    for (path, _) in list_files(&files).await.expect("list") {
        assert_eq!(
            file_checksum(&to, &path).await.expect("sum"),
            file_checksum(&files, &path).await.expect("sum"),
            "{path}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_is_verified_by_its_counts_and_its_files_checksums() {
    let (store, files) = deployment().await;
    let target = MemoryStore::new();
    let to = Files::memory();
    copy_records(&store, &target, |_| {}).await.expect("copy");
    copy_files(&files, &to, |_| {}).await.expect("copy");
    let mut seen = 0;
    let checked = verify_copy(&store, &target, &to, |p| seen = p.done)
        .await
        .expect("the copy is whole");
    assert_eq!((checked, seen), (1, 2), "one asset of two has a file");

    // A file changed after the copy.
    let path = "uploads/a/guide.pdf";
    to.object_store()
        .put(&path.into(), b"other bytes".to_vec().into())
        .await
        .expect("put");
    let differs = verify_copy(&store, &target, &to, |_| {}).await;
    assert!(
        matches!(&differs, Err(CopyDiffers::Checksum { path: p, .. }) if p == path),
        "{differs:?}"
    );
    // A file gone.
    to.object_store()
        .delete(&path.into())
        .await
        .expect("delete");
    let differs = verify_copy(&store, &target, &to, |_| {}).await;
    assert!(
        matches!(&differs, Err(CopyDiffers::Unreadable { path: p, .. }) if p == path),
        "{differs:?}"
    );
    // A record the target lacks.
    store
        .insert_asset(sample_asset("Late", AssetType::Link, 9), Log::ANONYMOUS)
        .await
        .expect("insert");
    let differs = verify_copy(&store, &target, &files, |_| {}).await;
    let Err(CopyDiffers::Counts { from, to }) = differs else {
        panic!("counts differ: {differs:?}");
    };
    assert_eq!((from.assets, to.assets), (3, 2));
}
