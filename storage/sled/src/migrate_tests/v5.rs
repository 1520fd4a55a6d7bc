//! The upgrade from format 5: asset records gain tags and a checksum, entry copies tags, and
//! the tag and checksum indexes start empty.

use super::v3::{set_format, stored_format};
use super::*;
use crate::migrate_v5::downgrade;
use assetlib_core::events::Log;

/// Rewrites every asset record and entry copy in format 5's layout and says format 5, with
/// the tag and checksum indexes and counts format 5 did not have taken away. Returns how many
/// records were rewritten.
fn back_to_v5(path: &Path) -> usize {
    let db = raw(path);
    let mut rewritten = 0;
    let assets = db.open_tree("assets").expect("assets");
    for kv in assets.iter() {
        let (key, value) = kv.expect("asset");
        let rec: AssetRec = decode(AssetRec::WHAT, &value).expect("asset");
        let old = encode(AssetRec::WHAT, &downgrade::asset5(rec)).expect("encode");
        assets.insert(key, old).expect("write asset");
        rewritten += 1;
    }
    let items = db.open_tree("library_items").expect("items");
    for kv in items.iter() {
        let (key, value) = kv.expect("item");
        let item: ItemRec = decode(ItemRec::WHAT, &value).expect("item");
        if let Some(old) = downgrade::item5(item) {
            let old = encode(ItemRec::WHAT, &old).expect("encode");
            items.insert(key, old).expect("write item");
            rewritten += 1;
        }
    }
    for tree in ["asset_idx_tags", "asset_idx_checksum"] {
        db.drop_tree(tree).expect("drop a format 6 tree");
    }
    let counts = db.open_tree("counts").expect("counts");
    for kv in counts.scan_prefix([9u8]) {
        counts
            .remove(kv.expect("count").0)
            .expect("remove a tag count");
    }
    db.open_tree("meta")
        .expect("meta")
        .insert(FORMAT_KEY, &5u32.to_be_bytes())
        .expect("format");
    db.flush().expect("flush");
    rewritten
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_format_5_directory_gains_empty_tags_and_checksums() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    let mut clip = sample_asset_at("Clip", AssetType::Video, at(1));
    clip.thumbnail_placeholder = Some("1QcSHQRnh493V4dIh4eXh1h4kJUI".into());
    clip.tags = vec!["Promo".into()];
    clip.checksum_sha256 = Some([7; 32]);
    let plain = sample_asset_at("Plain", AssetType::Pdf, at(2));
    let lib = sample_library("Shelf", 3);
    store_shelf(&path, &[&clip, &plain], &lib).await;
    assert_eq!(back_to_v5(&path), 4, "two assets and two entries rewritten");

    // What format 5 knew of the clip: everything but tags and checksum.
    let mut was = clip.clone();
    was.tags = Vec::new();
    was.checksum_sha256 = None;
    for run in ["first open", "open after a cut-short upgrade"] {
        let store = open(&path);
        let got = store.get_asset(clip.id).await.expect("get").expect("clip");
        assert_eq!(got, was, "{run}");
        let rows = store
            .load_library(lib.id)
            .await
            .expect("load")
            .expect("library");
        let shown: Vec<EntryAsset> = rows.entries.into_iter().map(|r| r.asset).collect();
        assert_eq!(
            shown,
            vec![EntryAsset::from(&was), EntryAsset::from(&plain)],
            "{run}"
        );
        let integrity = store.verify().await.expect("verify");
        assert!(integrity.is_ok(), "{run}: {:?}", integrity.problems);
        drop(store);
        assert_eq!(stored_format(&path), crate::FORMAT_VERSION, "{run}");
        set_format(&path, 5);
    }

    // Tags and checksums work from now on, indexes and counts with them.
    let store = open(&path);
    let mut tag = assetlib_core::AssetChange::at(at(10));
    tag.tags = Some(assetlib_core::TagChange::Set(vec!["Promo".into()]));
    store
        .update_asset(clip.id, &tag, Log::ANONYMOUS)
        .await
        .expect("tag");
    let mut q = AssetQuery {
        tags: vec!["promo".into()],
        ..AssetQuery::default()
    };
    q.status = AssetStatus::Any;
    let page = store.list_assets(&q).await.expect("list");
    assert_eq!(
        page.items.iter().map(|a| a.id).collect::<Vec<_>>(),
        [clip.id]
    );
    assert_eq!(store.list_tags(5).await.expect("tags")[0].count, 1);
    let integrity = store.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
}
