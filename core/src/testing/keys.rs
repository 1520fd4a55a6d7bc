//! The cases of `KeyStore`.

use super::*;
use crate::events::Log;

pub(super) async fn keys_lookup_list_expiry_revocation(store: Arc<dyn Store>) {
    let key = |n: u8, secs: i64, expires: Option<i64>| ApiKey {
        id: Uuid::new_v4(),
        name: format!("key {n}"),
        key_hash: [n; 32],
        scopes: vec![Scope::ReadAssets, Scope::WriteLibraries],
        created_at: t0() + Duration::seconds(secs),
        expires_at: expires.map(|e| t0() + Duration::seconds(e)),
        revoked_at: None,
        workspace_id: None,
    };
    let k2 = key(2, 20, Some(3600));
    let k1 = key(1, 10, None);
    store.insert_key(k2.clone(), Log::ANONYMOUS).await.unwrap();
    store.insert_key(k1.clone(), Log::ANONYMOUS).await.unwrap();
    assert_eq!(store.find_key(&[1; 32]).await.unwrap(), Some(k1.clone()));
    assert_eq!(store.find_key(&[2; 32]).await.unwrap(), Some(k2.clone()));
    assert_eq!(store.find_key(&[3; 32]).await.unwrap(), None);
    assert_eq!(
        store.list_keys().await.unwrap(),
        vec![k1.clone(), k2.clone()]
    );
    let first = t0() + Duration::days(1);
    assert!(
        store
            .revoke_key(k1.id, first, Log::ANONYMOUS)
            .await
            .unwrap()
    );
    assert!(
        store
            .revoke_key(k1.id, first + Duration::days(1), Log::ANONYMOUS)
            .await
            .unwrap()
    );
    let revoked = store.find_key(&[1; 32]).await.unwrap().unwrap();
    assert_eq!(
        revoked.revoked_at,
        Some(first),
        "the first revocation time is kept"
    );
    assert_eq!(
        store.find_key(&[2; 32]).await.unwrap().unwrap().revoked_at,
        None
    );
}
