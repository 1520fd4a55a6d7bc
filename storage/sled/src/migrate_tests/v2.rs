//! The upgrade from format 2: entries get their copies of the asset's fields.

use super::*;
use assetlib_core::events::Log;

/// Turns the directory back into format 2: every entry of `libraries` loses its copy of the
/// asset's fields (format 2's entry has the encoding of [`ItemRec::BareEntry`]), and the
/// format version says 2. Then, as format 2 could have (it kept no copies), the asset
/// `changed` gets a new description and thumbnail.
fn back_to_v2(path: &Path, libraries: &[Uuid], changed: Uuid, description: &str) {
    let db = raw(path);
    let items = db.open_tree("library_items").expect("items");
    let mut bare = 0;
    for kv in items.iter() {
        let (key, value) = kv.expect("item");
        if !libraries.iter().any(|l| key.starts_with(l.as_bytes())) {
            continue;
        }
        let item: ItemRec = decode(ItemRec::WHAT, &value).expect("item");
        if let ItemRec::Entry {
            asset_id,
            section_id,
            display_order,
            title,
            description,
            ..
        } = item
        {
            let old = ItemRec::BareEntry {
                asset_id,
                section_id,
                display_order,
                title,
                description,
            };
            items
                .insert(key, encode(ItemRec::WHAT, &old).expect("encode"))
                .expect("write item");
            bare += 1;
        }
    }
    assert!(bare > 0, "entries made bare");
    let assets = db.open_tree("assets").expect("assets");
    let value = assets
        .get(changed.as_bytes())
        .expect("read")
        .expect("asset");
    let mut rec: AssetRec = decode(AssetRec::WHAT, &value).expect("asset");
    rec.description = Some(description.to_owned());
    rec.thumbnail_path = Some(format!("thumbnails/{description}.png"));
    assets
        .insert(
            changed.as_bytes(),
            encode(AssetRec::WHAT, &rec).expect("encode"),
        )
        .expect("write asset");
    db.open_tree("meta")
        .expect("meta")
        .insert(FORMAT_KEY, &2u32.to_be_bytes())
        .expect("format");
    db.flush().expect("flush");
}

async fn entry_asset(store: &SledStore, asset: Uuid) -> EntryAsset {
    let a = store.get_asset(asset).await.expect("get").expect("asset");
    EntryAsset::from(&a)
}

async fn check_pages(store: &SledStore, expected: &[(Uuid, &[Uuid])]) {
    let integrity = store.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
    for (library, assets) in expected {
        let mut want = Vec::new();
        for &asset in *assets {
            want.push((asset, entry_asset(store, asset).await));
        }
        assert_eq!(
            entry_copies(store, *library).await,
            want,
            "library {library}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_format_2_directory_gets_entry_copies_on_open() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    let store = open(&path);
    let mut a = sample_asset_at("Alpha", AssetType::Pdf, at(1));
    a.thumbnail_path = Some("thumbnails/a.png".into());
    let mut b = sample_asset_at("Beta draft", AssetType::Image, at(2));
    b.published = false;
    b.description = Some("a draft".into());
    let c = sample_asset_at("Gone", AssetType::Pdf, at(3));
    let d = sample_asset_at("Delta", AssetType::Video, at(4));
    for asset in [&a, &b, &c, &d] {
        store
            .insert_asset(asset.clone(), Log::ANONYMOUS)
            .await
            .expect("insert");
    }
    let section = Section {
        id: id(SECTION),
        title: "S".into(),
        description: None,
        display_order: 0,
        collapsed_by_default: false,
    };
    let place = |asset: &assetlib_core::Asset, section: Option<Uuid>, order: u32| LibraryEntry {
        asset_id: asset.id,
        section_id: section,
        display_order: order,
        title: None,
        description: None,
    };
    let first = library(LIB_A, "Kit", true, 10);
    let second = library(LIB_B, "Draft kit", false, 20);
    for (lib, sections, entries) in [
        (
            &first,
            vec![section.clone()],
            vec![
                place(&a, Some(section.id), 0),
                place(&b, None, 0),
                place(&c, None, 1),
                place(&a, None, 2),
                place(&d, None, 3),
            ],
        ),
        (
            &second,
            vec![],
            vec![place(&c, None, 0), place(&b, None, 1)],
        ),
    ] {
        store
            .put_library(
                LibraryWrite {
                    library: lib.clone(),
                    slug_given: false,
                    sections,
                    entries,
                },
                Log::ANONYMOUS,
            )
            .await
            .expect("put");
    }
    // A forced delete leaves emptied places, which format 2 had too.
    assert!(matches!(
        store
            .delete_asset(c.id, true, Log::ANONYMOUS)
            .await
            .expect("delete"),
        AssetDeletion::Deleted(_)
    ));
    drop(store);
    back_to_v2(&path, &[first.id, second.id], a.id, "changed");

    let store = open(&path);
    let expected: [(Uuid, &[Uuid]); 2] =
        [(first.id, &[a.id, b.id, a.id, d.id]), (second.id, &[b.id])];
    check_pages(&store, &expected).await;
    let shown = entry_copies(&store, first.id).await;
    assert_eq!(shown[0].1.description.as_deref(), Some("changed"));
    assert_eq!(
        shown[0].1.thumbnail_path.as_deref(),
        Some("thumbnails/changed.png")
    );

    // The copies follow changes on the upgraded data.
    let mut publish = AssetChange::at(at(100));
    publish.published = Some(true);
    publish.title = Some("Beta".into());
    store
        .update_asset(b.id, &publish, Log::ANONYMOUS)
        .await
        .expect("update")
        .expect("asset");
    // Both entries of an asset placed twice.
    let mut hide = AssetChange::at(at(101));
    hide.published = Some(false);
    hide.title = Some("Alpha hidden".into());
    store
        .update_asset(a.id, &hide, Log::ANONYMOUS)
        .await
        .expect("update")
        .expect("asset");
    check_pages(&store, &expected).await;
    assert_eq!(
        store
            .list_libraries(&LibraryQuery::default())
            .await
            .expect("list libraries")
            .items[0]
            .asset_count,
        2,
        "Beta and Delta"
    );
    assert_eq!(entry_copies(&store, second.id).await[0].1.title, "Beta");
    assert!(entry_copies(&store, second.id).await[0].1.published);
    drop(store);

    // Cut short and run again: one library still bare, the other already copied, and an
    // asset changed meanwhile by format 2 (which left the copies as they were).
    back_to_v2(&path, &[second.id], d.id, "later");
    {
        let db = raw(&path);
        let assets = db.open_tree("assets").expect("assets");
        let value = assets.get(b.id.as_bytes()).expect("read").expect("asset");
        let mut rec: AssetRec = decode(AssetRec::WHAT, &value).expect("asset");
        rec.description = None;
        assets
            .insert(
                b.id.as_bytes(),
                encode(AssetRec::WHAT, &rec).expect("encode"),
            )
            .expect("write asset");
        db.flush().expect("flush");
    }
    let store = open(&path);
    check_pages(&store, &expected).await;
    assert_eq!(
        entry_copies(&store, first.id).await[3]
            .1
            .description
            .as_deref(),
        Some("later")
    );
    assert_eq!(entry_copies(&store, first.id).await[1].1.description, None);
}
