//! Opening: locks and format versions.

use assetlib_sled::{FORMAT_VERSION, OpenError, SledStore};

use crate::common::{open_after_drop, reopen, reopen_raw};

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
    match open_after_drop(&path) {
        Err(OpenError::NewerFormat {
            found, supported, ..
        }) => {
            assert_eq!((found, supported), (FORMAT_VERSION + 1, FORMAT_VERSION));
        }
        other => panic!("expected NewerFormat, got {other:?}"),
    }
    set_format(&path, b"garbage");
    assert!(matches!(
        open_after_drop(&path),
        Err(OpenError::Corrupt { .. })
    ));
    set_format(&path, &FORMAT_VERSION.to_be_bytes());
    reopen(&path);
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
