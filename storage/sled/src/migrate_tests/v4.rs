//! The upgrade from format 4: asset records and entry copies gain the preview fields.

use assetlib_core::Media;
use assetlib_core::events::Log;

use super::v3::{set_format, stored_format};
use super::*;
use crate::migrate_v5::downgrade;

/// Rewrites every asset record and entry copy in format 4's layout and says format 4.
/// Returns how many records were rewritten.
fn back_to_v4(path: &Path) -> usize {
    let db = raw(path);
    let mut rewritten = 0;
    let assets = db.open_tree("assets").expect("assets");
    for kv in assets.iter() {
        let (key, value) = kv.expect("asset");
        let rec: AssetRec = decode(AssetRec::WHAT, &value).expect("asset");
        let old = encode(AssetRec::WHAT, &downgrade::asset(rec)).expect("encode");
        assets.insert(key, old).expect("write asset");
        rewritten += 1;
    }
    let items = db.open_tree("library_items").expect("items");
    for kv in items.iter() {
        let (key, value) = kv.expect("item");
        let item: ItemRec = decode(ItemRec::WHAT, &value).expect("item");
        if let Some(old) = downgrade::item(item) {
            let old = encode(ItemRec::WHAT, &old).expect("encode");
            items.insert(key, old).expect("write item");
            rewritten += 1;
        }
    }
    db.open_tree("meta")
        .expect("meta")
        .insert(FORMAT_KEY, &4u32.to_be_bytes())
        .expect("format");
    db.flush().expect("flush");
    rewritten
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_format_4_directory_gains_empty_preview_fields() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    let mut clip = sample_asset_at("Clip", AssetType::Video, at(1));
    clip.thumbnail_path = Some("thumbnails/clip.jpg".into());
    clip.thumbnail_placeholder = Some("1QcSHQRnh493V4dIh4eXh1h4kJUI".into());
    clip.width = Some(1920);
    clip.height = Some(1080);
    clip.media = Media {
        duration_ms: Some(5_000),
        video_codec: Some("h264".into()),
        ..Media::default()
    };
    let plain = sample_asset_at("Plain", AssetType::Pdf, at(2));
    let lib = sample_library("Shelf", 3);
    store_shelf(&path, &[&clip, &plain], &lib).await;
    assert_eq!(back_to_v4(&path), 4, "two assets and two entries rewritten");

    // What format 4 knew of the clip: everything but the preview fields.
    let mut was = clip.clone();
    was.thumbnail_placeholder = None;
    was.media = Media::default();
    for run in ["first open", "open after a cut-short upgrade"] {
        let store = open(&path);
        let got = store.get_asset(clip.id).await.expect("get").expect("clip");
        assert_eq!(got, was, "{run}");
        let got = store
            .get_asset(plain.id)
            .await
            .expect("get")
            .expect("plain");
        assert_eq!(got, plain, "{run}");
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
        // Cut short after the records were rewritten: the version still says 4.
        set_format(&path, 4);
    }

    // The new fields are written from now on.
    let store = open(&path);
    store
        .insert_asset(clip_again(&clip), Log::ANONYMOUS)
        .await
        .expect("insert");
    let again = clip_again(&clip);
    assert_eq!(
        store.get_asset(again.id).await.expect("get"),
        Some(again.clone())
    );
}

/// Another asset like `clip`, with its preview fields.
fn clip_again(clip: &assetlib_core::Asset) -> assetlib_core::Asset {
    let mut a = clip.clone();
    a.id = id(99);
    a.slug = "clip-again".into();
    a
}
