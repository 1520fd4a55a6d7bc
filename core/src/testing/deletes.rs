//! The cases of deletes and library writes racing asset changes: a held asset is deleted only
//! when forced, a library places existing assets only, and a delete racing a library write
//! leaves them consistent.

use std::sync::Arc;

use uuid::Uuid;

use super::lifecycle::{asset_count_of, ids_of, put, use_of, version, with_status};
use super::{entry, insert, list, sample_asset, sample_library, spawn_library_write, write};
use crate::change::AssetDeletion;
use crate::error::StoreError;
use crate::events::Log;
use crate::model::AssetType;
use crate::query::{AssetQuery, AssetStatus};
use crate::store::Store;

pub(super) async fn delete_refuses_held_assets_unless_forced(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("Held", AssetType::Pdf, 1)).await;
    let b = insert(&store, sample_asset("Other", AssetType::Pdf, 2)).await;
    store.record_download(a.id).await.unwrap();
    let older = sample_library("Older", 3);
    let mut newer = sample_library("Newer draft", 4);
    newer.settings.published = false;
    put(&store, &older, &[&a, &b]).await;
    put(&store, &newer, &[&a]).await;
    let holders = vec![use_of(&newer), use_of(&older)];
    assert_eq!(store.asset_usage(a.id).await.unwrap(), holders);
    assert_eq!(store.asset_usage(b.id).await.unwrap(), vec![use_of(&older)]);
    assert_eq!(store.asset_usage(Uuid::new_v4()).await.unwrap(), vec![]);

    // Refused: nothing changes.
    let v1 = version(&store, older.id).await;
    assert_eq!(
        store
            .delete_asset(a.id, false, Log::ANONYMOUS)
            .await
            .unwrap(),
        AssetDeletion::InUse(holders)
    );
    assert!(store.get_asset(a.id).await.unwrap().is_some());
    assert_eq!(asset_count_of(&store, older.id).await, 2);
    assert_eq!(version(&store, older.id).await, v1);
    let (_, total) = list(&store, AssetQuery::default()).await;
    assert_eq!(total, 2);

    // Forced: the asset and its entries go together.
    let mut gone = store.get_asset(a.id).await.unwrap().unwrap();
    gone.download_count = 1;
    assert_eq!(
        store
            .delete_asset(a.id, true, Log::ANONYMOUS)
            .await
            .unwrap(),
        AssetDeletion::Deleted(gone)
    );
    assert_eq!(store.get_asset(a.id).await.unwrap(), None);
    assert_eq!(
        store.get_assets(&[a.id, b.id]).await.unwrap(),
        vec![b.clone()]
    );
    assert_eq!(store.asset_usage(a.id).await.unwrap(), vec![]);
    store.record_download(a.id).await.unwrap();
    assert_eq!(
        store.get_asset(a.id).await.unwrap(),
        None,
        "a download does not revive it"
    );
    for lib in [&older, &newer] {
        let rows = store.load_library(lib.id).await.unwrap().unwrap();
        assert!(rows.entries.iter().all(|r| r.entry.asset_id != a.id));
    }
    assert_ne!(version(&store, older.id).await, v1, "the page changed");
    assert_eq!(asset_count_of(&store, older.id).await, 1);
    let (items, total) = list(&store, with_status(AssetStatus::Any)).await;
    assert_eq!((items, total), (vec![b.clone()], 1));
    let pdfs = AssetQuery {
        asset_type: Some(AssetType::Pdf),
        ..AssetQuery::default()
    };
    assert_eq!(list(&store, pdfs).await.1, 1);
    assert_eq!(
        store
            .delete_asset(a.id, true, Log::ANONYMOUS)
            .await
            .unwrap(),
        AssetDeletion::NotFound
    );

    // An asset no library holds goes without force; a draft too.
    let mut draft = sample_asset("Draft", AssetType::Image, 5);
    draft.published = false;
    let draft = insert(&store, draft).await;
    assert_eq!(
        store
            .delete_asset(draft.id, false, Log::ANONYMOUS)
            .await
            .unwrap(),
        AssetDeletion::Deleted(draft)
    );
    assert_eq!(
        ids_of(&store, with_status(AssetStatus::Draft)).await,
        (vec![], 0)
    );
    store
        .delete_library(older.id, Log::ANONYMOUS)
        .await
        .unwrap();
    assert!(matches!(
        store
            .delete_asset(b.id, false, Log::ANONYMOUS)
            .await
            .unwrap(),
        AssetDeletion::Deleted(_)
    ));
    assert_eq!(list(&store, with_status(AssetStatus::Any)).await.1, 0);
}

pub(super) async fn library_writes_place_existing_assets_only(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("A", AssetType::Pdf, 1)).await;
    let ghost = sample_asset("never stored", AssetType::Pdf, 2);
    let lib = sample_library("L", 3);
    let refused = store
        .put_library(
            write(
                lib.clone(),
                vec![],
                vec![entry(&a, None, 0), entry(&ghost, None, 1)],
            ),
            Log::ANONYMOUS,
        )
        .await;
    assert!(
        matches!(refused, Err(StoreError::UnknownAsset { id }) if id == ghost.id),
        "{refused:?}"
    );
    assert_eq!(store.load_library(lib.id).await.unwrap(), None);

    put(&store, &lib, &[&a]).await;
    let before = store.load_library(lib.id).await.unwrap().unwrap();
    let mut renamed = lib.clone();
    renamed.settings.title = "Renamed".into();
    let refused = store
        .put_library(
            write(renamed, vec![], vec![entry(&ghost, None, 0)]),
            Log::ANONYMOUS,
        )
        .await;
    assert!(matches!(refused, Err(StoreError::UnknownAsset { .. })));
    assert_eq!(store.load_library(lib.id).await.unwrap(), Some(before));

    // A deleted asset cannot be placed again.
    let b = insert(&store, sample_asset("B", AssetType::Pdf, 4)).await;
    store
        .delete_asset(b.id, false, Log::ANONYMOUS)
        .await
        .unwrap();
    let refused = store
        .put_library(
            write(lib.clone(), vec![], vec![entry(&b, None, 0)]),
            Log::ANONYMOUS,
        )
        .await;
    assert!(matches!(refused, Err(StoreError::UnknownAsset { id }) if id == b.id));
}

pub(super) async fn delete_racing_library_write_is_consistent(store: Arc<dyn Store>) {
    for round in 0..20 {
        let x = insert(
            &store,
            sample_asset(&format!("x{round}"), AssetType::Pdf, round),
        )
        .await;
        let lib = sample_library(&format!("L{round}"), round);
        let writer = spawn_library_write(&store, &lib, &x);
        let deleter = {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .delete_asset(x.id, false, Log::ANONYMOUS)
                    .await
                    .unwrap()
            })
        };
        let (written, deleted) = (writer.await.unwrap(), deleter.await.unwrap());
        let rows = store.load_library(lib.id).await.unwrap();
        let asset = store.get_asset(x.id).await.unwrap();
        match (written, deleted) {
            (Ok(_), AssetDeletion::InUse(by)) => {
                assert_eq!(by, vec![use_of(&lib)]);
                assert!(asset.is_some());
                assert_eq!(rows.expect("written").entries.len(), 1);
            }
            (Err(StoreError::UnknownAsset { id }), AssetDeletion::Deleted(_)) => {
                assert_eq!(id, x.id);
                assert!(asset.is_none());
                assert_eq!(rows, None);
            }
            (w, d) => panic!("round {round}: inconsistent outcome {w:?} / {d:?}"),
        }
    }
}
