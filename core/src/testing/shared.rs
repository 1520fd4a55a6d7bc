//! The cases that span the store traits: missing records of every kind, and ids and key
//! hashes that are taken.

use super::*;
use crate::events::Log;

pub(super) async fn missing_records_are_none(store: Arc<dyn Store>) {
    let id = Uuid::new_v4();
    assert_eq!(store.get_asset(id).await.unwrap(), None);
    assert_eq!(store.load_library(id).await.unwrap(), None);
    assert!(!store.delete_library(id, Log::ANONYMOUS).await.unwrap());
    assert_eq!(store.record_library_view(id).await.unwrap(), None);
    store.record_download(id).await.unwrap();
    assert_eq!(
        store.get_asset(id).await.unwrap(),
        None,
        "a download creates nothing"
    );
    assert_eq!(store.find_key(&[7; 32]).await.unwrap(), None);
    assert!(!store.revoke_key(id, t0(), Log::ANONYMOUS).await.unwrap());
    let (items, total) = list(&store, AssetQuery::default()).await;
    assert!(items.is_empty());
    assert_eq!(total, 0);
    let libs = store
        .list_libraries(&LibraryQuery::default())
        .await
        .unwrap();
    assert!(libs.items.is_empty());
    assert_eq!(libs.total, 0);
}

/// `insert_asset` and `insert_key` refuse an id that exists, and `insert_key` a hash that
/// exists, with their kinds, changing nothing.
pub(super) async fn duplicate_ids_and_key_hashes_are_refused(store: Arc<dyn Store>) {
    let asset = sample_asset("Original", AssetType::Pdf, 1);
    store
        .insert_asset(asset.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    let mut again = sample_asset("Impostor", AssetType::Image, 2);
    again.id = asset.id;
    match store.insert_asset(again, Log::ANONYMOUS).await {
        Err(StoreError::DuplicateId { id }) => assert_eq!(id, asset.id),
        other => panic!("expected a duplicate id, got {other:?}"),
    }
    assert_eq!(store.get_asset(asset.id).await.unwrap(), Some(asset));

    let key = ApiKey {
        id: Uuid::new_v4(),
        name: "first".into(),
        key_hash: [7; 32],
        scopes: vec![Scope::ReadAssets],
        created_at: t0(),
        expires_at: None,
        revoked_at: None,
        workspace_id: None,
    };
    store.insert_key(key.clone(), Log::ANONYMOUS).await.unwrap();
    let same_id = ApiKey {
        key_hash: [8; 32],
        ..key.clone()
    };
    match store.insert_key(same_id, Log::ANONYMOUS).await {
        Err(StoreError::DuplicateId { id }) => assert_eq!(id, key.id),
        other => panic!("expected a duplicate id, got {other:?}"),
    }
    let same_hash = ApiKey {
        id: Uuid::new_v4(),
        ..key.clone()
    };
    match store.insert_key(same_hash, Log::ANONYMOUS).await {
        Err(StoreError::DuplicateKeyHash) => {}
        other => panic!("expected a duplicate hash, got {other:?}"),
    }
    assert_eq!(store.list_keys().await.unwrap(), vec![key.clone()]);
    assert_eq!(store.find_key(&[8; 32]).await.unwrap(), None);
}
