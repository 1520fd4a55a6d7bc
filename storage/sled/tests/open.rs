//! Opening: locks and format versions.

use assetlib_sled::{FORMAT_VERSION, OpenError, SledStore};

use crate::common::{open_after_raw, reopen, reopen_after_raw, reopen_raw};

#[test]
fn a_held_directory_is_locked() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    let first = SledStore::open(&path).expect("first open");
    match SledStore::open(&path) {
        Err(OpenError::Locked { path: p }) => assert_eq!(p, path),
        other => panic!("expected Locked, got {other:?}"),
    }
    drop(first);
    reopen(&path);
}

fn set_format(path: &std::path::Path, value: &[u8]) {
    let db = reopen_raw(path);
    let meta = db.open_tree("meta").expect("meta tree");
    meta.insert("format_version", value).expect("write version");
    db.flush().expect("flush");
}

#[test]
fn a_newer_format_is_refused() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    drop(SledStore::open(&path).expect("create"));
    set_format(&path, &(FORMAT_VERSION + 1).to_be_bytes());
    match open_after_raw(&path) {
        Err(OpenError::NewerFormat {
            found, supported, ..
        }) => {
            assert_eq!((found, supported), (FORMAT_VERSION + 1, FORMAT_VERSION));
        }
        other => panic!("expected NewerFormat, got {other:?}"),
    }
    set_format(&path, b"garbage");
    assert!(matches!(
        open_after_raw(&path),
        Err(OpenError::Corrupt { .. })
    ));
    set_format(&path, &FORMAT_VERSION.to_be_bytes());
    reopen_after_raw(&path);
}

#[test]
fn a_new_database_records_its_format() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    drop(SledStore::open(&path).expect("create"));
    let db = reopen_raw(&path);
    let stored = db
        .open_tree("meta")
        .expect("meta")
        .get("format_version")
        .expect("read");
    assert_eq!(stored.as_deref(), Some(&FORMAT_VERSION.to_be_bytes()[..]));
}

/// The last handle's drop closes the database before it returns, while counts are still being
/// written in the background: the directory opens again at once, with every count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_last_handle_frees_the_directory_at_once() {
    use assetlib_core::AssetType;
    use assetlib_core::store::prelude::*;
    use assetlib_core::testing::sample_asset;

    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    let store = SledStore::open(&path).expect("create");
    let mut ids = Vec::new();
    // Enough counters that a round of the writer takes a while.
    for n in 0..400 {
        let a = store
            .insert_asset(
                sample_asset(&format!("A{n}"), AssetType::Pdf, n),
                Log::ANONYMOUS,
            )
            .await
            .expect("insert");
        ids.push(a.id);
    }
    drop(store);
    for round in 0..60u64 {
        let store = SledStore::open(&path).expect("open right after the last handle's drop");
        let other = store.clone();
        for id in &ids {
            other.record_download(*id).await.expect("download");
        }
        // Lands anywhere in the counts writer's round.
        tokio::time::sleep(std::time::Duration::from_millis(round * 7 % 110)).await;
        drop(other);
        drop(store);
    }
    let store = SledStore::open(&path).expect("open");
    for id in &ids {
        let a = store.get_asset(*id).await.expect("get").expect("asset");
        assert_eq!(a.download_count, 60, "every count survives the drops");
    }
}
