//! The upgrade from format 6: asset and key records gain a workspace (none), and the slug
//! claims of libraries of a workspace move under their workspace.

use super::v3::{set_format, stored_format};
use super::*;
use assetlib_core::events::Log;
use assetlib_core::{ApiKey, Scope};

/// Takes every record back to format 6's layout: the workspace (`None`, one zero byte) cut
/// from the end of asset and key records, and the slug claim of each library of a workspace
/// moved back under the bare slug; says format 6. Returns how many records were rewritten.
fn back_to_v6(path: &Path) -> usize {
    let db = raw(path);
    let mut rewritten = cut_trailing_none(&db, &["assets", "keys"]);
    let libraries = db.open_tree("libraries").expect("libraries");
    let slugs = db.open_tree("library_slugs").expect("slugs");
    for kv in libraries.iter() {
        let (key, value) = kv.expect("library");
        let rec: LibraryRec = decode(LibraryRec::WHAT, &value).expect("library");
        if let Some(w) = rec.workspace_id.as_deref() {
            let claim = tree_keys::library_slug(Some(w), &rec.slug);
            let holder = slugs.remove(claim).expect("remove").expect("claimed");
            assert_eq!(holder.as_ref(), key.as_ref());
            slugs.insert(rec.slug.as_bytes(), holder).expect("claim");
            rewritten += 1;
        }
    }
    db.open_tree("meta")
        .expect("meta")
        .insert(FORMAT_KEY, &6u32.to_be_bytes())
        .expect("format");
    db.flush().expect("flush");
    rewritten
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_format_6_directory_gains_workspaces() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    let logo = sample_asset_at("Logo", AssetType::Image, at(1));
    let guide = sample_asset_at("Guide", AssetType::Pdf, at(2));
    let mut shelf = sample_library("Shelf", 3);
    shelf.settings.workspace_id = Some("acme".into());
    store_shelf(&path, &[&logo, &guide], &shelf).await;
    let plain = sample_library("Plain", 4);
    store_shelf(&path, &[], &plain).await;
    let key = ApiKey {
        id: Uuid::new_v4(),
        name: "admin".into(),
        key_hash: [9; 32],
        scopes: Scope::ALL.to_vec(),
        created_at: at(5),
        expires_at: None,
        revoked_at: None,
        workspace_id: None,
    };
    open(&path)
        .insert_key(key.clone(), Log::ANONYMOUS)
        .await
        .expect("key");
    assert_eq!(back_to_v6(&path), 4, "two assets, a key and a slug claim");

    for run in ["first open", "open after a cut-short upgrade"] {
        let store = open(&path);
        for asset in [&logo, &guide] {
            let got = store
                .get_asset(asset.id)
                .await
                .expect("get")
                .expect("asset");
            assert_eq!(&got, asset, "{run}");
        }
        assert_eq!(
            store.find_key(&[9; 32]).await.expect("key"),
            Some(key.clone())
        );
        let found = store.libraries_by_slug("shelf").await.expect("slug");
        assert_eq!(
            found,
            [assetlib_core::SlugHolder {
                workspace_id: Some("acme".into()),
                id: shelf.id
            }],
            "{run}"
        );
        let found = store.libraries_by_slug("plain").await.expect("slug");
        assert_eq!(found.len(), 1, "{run}");
        assert_eq!(found[0].workspace_id, None, "{run}");
        let integrity = store.verify().await.expect("verify");
        assert!(integrity.is_ok(), "{run}: {:?}", integrity.problems);
        drop(store);
        assert_eq!(stored_format(&path), crate::FORMAT_VERSION, "{run}");
        set_format(&path, 6);
    }

    // Workspaces work from now on: the slug is free in another workspace, and assets of a
    // workspace are listed by it.
    let store = open(&path);
    let mut other = sample_library("Shelf", 6);
    other.settings.workspace_id = Some("globex".into());
    store
        .put_library(
            LibraryWrite {
                library: other.clone(),
                slug_given: true,
                sections: vec![],
                entries: vec![],
            },
            Log::ANONYMOUS,
        )
        .await
        .expect("the same slug in another workspace");
    let mut mine = sample_asset_at("Logo", AssetType::Image, at(7));
    mine.workspace_id = Some("acme".into());
    let stored = store
        .insert_asset(mine.clone(), Log::ANONYMOUS)
        .await
        .expect("insert");
    assert_eq!(stored.slug, "logo", "slugs are unique per workspace");
    let q = AssetQuery {
        workspace_id: Some("acme".into()),
        ..AssetQuery::default()
    };
    let page = store.list_assets(&q).await.expect("list");
    assert_eq!(
        page.items.iter().map(|a| a.id).collect::<Vec<_>>(),
        [mine.id]
    );
    assert_eq!(page.total, 1);
    let integrity = store.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
}
