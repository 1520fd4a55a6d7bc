//! Conformance cases of what websites need: libraries by slug and the signing secret.

use std::sync::Arc;

use uuid::Uuid;

use super::{sample_library, slug_ids, write};
use crate::events::Log;
use crate::model::LibraryWrite;
use crate::store::Store;

pub(super) async fn libraries_are_found_by_slug(store: Arc<dyn Store>) {
    assert_eq!(slug_ids(&*store, "nothing").await, Vec::<Uuid>::new());
    let mut lib = sample_library("Brand kit", 1);
    lib.slug = "brand-kit".into();
    store
        .put_library(write(lib.clone(), vec![], vec![]), Log::ANONYMOUS)
        .await
        .unwrap();
    let mut draft = sample_library("Draft kit", 2);
    draft.slug = "draft-kit".into();
    draft.settings.published = false;
    store
        .put_library(write(draft.clone(), vec![], vec![]), Log::ANONYMOUS)
        .await
        .unwrap();
    assert_eq!(slug_ids(&*store, "brand-kit").await, vec![lib.id]);
    assert_eq!(
        slug_ids(&*store, "draft-kit").await,
        vec![draft.id],
        "drafts are found too"
    );
    assert_eq!(slug_ids(&*store, "Brand-Kit").await, Vec::<Uuid>::new());

    // A new slug frees the old one; a delete frees its slug.
    let mut renamed = lib.clone();
    renamed.slug = "press-kit".into();
    store
        .put_library(
            LibraryWrite {
                library: renamed,
                slug_given: true,
                sections: vec![],
                entries: vec![],
            },
            Log::ANONYMOUS,
        )
        .await
        .unwrap();
    assert_eq!(slug_ids(&*store, "brand-kit").await, Vec::<Uuid>::new());
    assert_eq!(slug_ids(&*store, "press-kit").await, vec![lib.id]);
    assert!(store.delete_library(lib.id, Log::ANONYMOUS).await.unwrap());
    assert_eq!(slug_ids(&*store, "press-kit").await, Vec::<Uuid>::new());
}

pub(super) async fn the_signing_secret_is_made_once(store: Arc<dyn Store>) {
    let first = store.signing_secret([1; 32]).await.unwrap();
    assert_eq!(first, [1; 32], "the first candidate is kept");
    assert_eq!(store.signing_secret([2; 32]).await.unwrap(), [1; 32]);
}

pub(super) async fn a_rotated_signing_secret_replaces_the_old_one(store: Arc<dyn Store>) {
    // Rotating first makes one.
    store.rotate_signing_secret([3; 32]).await.unwrap();
    assert_eq!(store.signing_secret([4; 32]).await.unwrap(), [3; 32]);
    store.rotate_signing_secret([5; 32]).await.unwrap();
    assert_eq!(store.signing_secret([6; 32]).await.unwrap(), [5; 32]);
    assert_eq!(store.signing_secret([7; 32]).await.unwrap(), [5; 32]);
}

pub(super) async fn concurrent_first_secrets_agree(store: Arc<dyn Store>) {
    let tasks: Vec<_> = (0..8u8)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.signing_secret([i + 10; 32]).await.unwrap() })
        })
        .collect();
    let mut seen = Vec::new();
    for t in tasks {
        seen.push(t.await.unwrap());
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    assert_eq!(store.signing_secret([0; 32]).await.unwrap(), seen[0]);
}
