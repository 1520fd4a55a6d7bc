//! The upgrade from format 3: keys that may write assets gain `read:paid`.

use assetlib_core::events::Log;
use assetlib_core::{ApiKey, Scope};

use super::*;
use crate::record::KeyRec;

fn key(n: u8, scopes: &[Scope], revoked: bool) -> ApiKey {
    ApiKey {
        id: id(n),
        name: format!("key {n}"),
        key_hash: [n; 32],
        scopes: scopes.to_vec(),
        created_at: at(i64::from(n)),
        expires_at: n.is_multiple_of(2).then(|| at(1000 + i64::from(n))),
        revoked_at: revoked.then(|| at(500)),
        workspace_id: None,
    }
}

/// The stored format version of the directory.
pub(super) fn stored_format(path: &Path) -> u32 {
    let db = raw(path);
    let value = db
        .open_tree("meta")
        .expect("meta")
        .get(FORMAT_KEY)
        .expect("read")
        .expect("format version");
    tree_keys::decode_u32("format version", &value).expect("format version")
}

pub(super) fn set_format(path: &Path, version: u32) {
    let db = raw(path);
    db.open_tree("meta")
        .expect("meta")
        .insert(FORMAT_KEY, &version.to_be_bytes())
        .expect("format");
    db.flush().expect("flush");
}

/// The scope codes of each stored key record, by key id.
fn stored_codes(path: &Path) -> Vec<(Uuid, Vec<u8>)> {
    let db = raw(path);
    db.open_tree("keys")
        .expect("keys")
        .iter()
        .map(|kv| {
            let (k, v) = kv.expect("key record");
            let rec: KeyRec = decode(KeyRec::WHAT, &v).expect("key record");
            (crate::record::decode_id("key", &k).expect("id"), rec.scopes)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_format_3_directory_gives_read_paid_to_asset_writers() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    let keys = [
        key(1, &[Scope::ReadAssets, Scope::WriteAssets], false),
        key(2, &[Scope::ReadAssets, Scope::ReadLibraries], false),
        key(3, &[Scope::WriteAssets], true),
        key(4, &[Scope::WriteLibraries, Scope::ReadLibraries], true),
        key(5, &[], false),
    ];
    let asset = sample_asset_at("Kept", AssetType::Pdf, at(7));
    {
        // Keys whose scopes format 3 knew are stored alike in both formats.
        let store = open(&path);
        for k in &keys {
            store
                .insert_key(k.clone(), Log::ANONYMOUS)
                .await
                .expect("insert key");
        }
        store
            .insert_asset(asset.clone(), Log::ANONYMOUS)
            .await
            .expect("insert asset");
    }
    set_format(&path, 3);

    let store = open(&path);
    let mut expected = keys.to_vec();
    for k in &mut expected {
        if k.scopes.contains(&Scope::WriteAssets) {
            k.scopes.push(Scope::ReadPaid);
        }
    }
    assert_eq!(store.list_keys().await.expect("list keys"), expected);
    assert_eq!(
        store.find_key(&[3; 32]).await.expect("find key"),
        Some(expected[2].clone())
    );
    assert_eq!(
        store
            .get_asset(asset.id)
            .await
            .expect("get asset")
            .map(|a| a.title),
        Some("Kept".to_owned())
    );
    let integrity = store.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
    assert_eq!(integrity.keys, 5);
    drop(store);
    assert_eq!(stored_format(&path), crate::FORMAT_VERSION);
    let codes = stored_codes(&path);
    assert_eq!(
        codes,
        vec![
            (id(1), vec![1, 2, 5]),
            (id(2), vec![1, 3]),
            (id(3), vec![2, 5]),
            (id(4), vec![4, 3]),
            (id(5), vec![]),
        ]
    );

    // Cut short after the batch and run again: keys that have `read:paid` stay as they are.
    set_format(&path, 3);
    let store = open(&path);
    assert_eq!(store.list_keys().await.expect("list keys"), expected);
    drop(store);
    assert_eq!(stored_codes(&path), codes);
    assert_eq!(stored_format(&path), crate::FORMAT_VERSION);
}
