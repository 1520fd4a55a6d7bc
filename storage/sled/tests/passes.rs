//! Library passes beyond the conformance suite: the stored indexes stay consistent, passes
//! outlive a reopen, and a pass made while its library is deleted never outlives it.

use std::sync::Arc;

use assetlib_core::store::prelude::*;
use assetlib_core::testing::sample_pass;
use assetlib_core::{PassSpend, StoreError};
use uuid::Uuid;

use crate::common::{at, library, reopen, reopen_after_raw, reopen_raw, store};

async fn check(store: &assetlib_sled::SledStore, passes: u64) {
    let integrity = store.verify().await.expect("verify");
    assert!(integrity.is_ok(), "{:?}", integrity.problems);
    assert_eq!(integrity.passes, passes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passes_keep_their_indexes_survive_reopen_and_go_with_their_library() {
    let (sled, dir) = store();
    let path = sled.path().to_path_buf();
    let (sold, kept) = (Uuid::new_v4(), Uuid::new_v4());
    for (id, title) in [(sold, "Sold"), (kept, "Kept")] {
        sled.put_library(library(id, title, &[], 0, 0), Log::ANONYMOUS)
            .await
            .expect("put library");
    }
    let mut limited = sample_pass(sold, 1, 10);
    limited.max_downloads = Some(2);
    let passes = [
        limited.clone(),
        sample_pass(sold, 2, 5),
        sample_pass(kept, 3, 0),
    ];
    for pass in &passes {
        sled.insert_pass(pass.clone(), Log::ANONYMOUS)
            .await
            .expect("insert pass");
    }
    check(&sled, 3).await;
    let now = limited.created_at + chrono::Duration::days(1);
    assert!(matches!(
        sled.spend_pass(limited.id, now).await.expect("spend"),
        PassSpend::Spent(p) if p.downloads_used == 1
    ));
    assert!(
        sled.revoke_pass(passes[1].id, at(1), Log::ANONYMOUS)
            .await
            .expect("revoke")
    );
    drop(sled);

    let sled = reopen(&path);
    let stored = sled.get_pass(limited.id).await.expect("get").expect("pass");
    assert_eq!(stored.downloads_used, 1, "a spend is durable");
    let revoked = sled.find_pass(&[2; 32]).await.expect("find").expect("pass");
    assert_eq!(revoked.revoked_at, Some(at(1)));
    let listed = sled.list_passes(sold, 0, 10).await.expect("list");
    assert_eq!(
        listed.items.iter().map(|p| p.id).collect::<Vec<_>>(),
        [limited.id, passes[1].id]
    );
    check(&sled, 3).await;

    assert!(
        sled.delete_library(sold, Log::ANONYMOUS)
            .await
            .expect("delete library")
    );
    check(&sled, 1).await;
    assert_eq!(sled.list_passes(sold, 0, 10).await.expect("list").total, 0);
    assert_eq!(
        sled.list_passes(kept, 0, 10).await.expect("list").items,
        [passes[2].clone()]
    );
    drop(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_made_while_its_library_is_deleted_fails_or_goes_with_it() {
    let (sled, _dir) = store();
    let sled = Arc::new(sled);
    for round in 0..20u8 {
        let id = Uuid::new_v4();
        sled.put_library(library(id, "Sold", &[], 0, 0), Log::ANONYMOUS)
            .await
            .expect("put library");
        let mut tasks = Vec::new();
        for n in 0..8u8 {
            let sled = Arc::clone(&sled);
            let pass = sample_pass(id, round.wrapping_mul(8).wrapping_add(n), i64::from(n));
            tasks.push(tokio::spawn(async move {
                let result = sled.insert_pass(pass.clone(), Log::ANONYMOUS).await;
                (pass, result)
            }));
        }
        let deleter = {
            let sled = Arc::clone(&sled);
            tokio::spawn(async move { sled.delete_library(id, Log::ANONYMOUS).await })
        };
        assert!(deleter.await.expect("delete task").expect("delete library"));
        for task in tasks {
            let (pass, result) = task.await.expect("insert task");
            match result {
                Ok(()) | Err(StoreError::UnknownLibrary { .. }) => {}
                Err(e) => panic!("insert_pass: {e}"),
            }
            assert_eq!(sled.get_pass(pass.id).await.expect("get"), None);
            assert_eq!(sled.find_pass(&pass.token_hash).await.expect("find"), None);
        }
        assert_eq!(sled.list_passes(id, 0, 10).await.expect("list").total, 0);
    }
    check(&sled, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_finds_a_pass_without_its_hash_entry_or_place() {
    let (sled, _dir) = store();
    let path = sled.path().to_path_buf();
    let id = Uuid::new_v4();
    sled.put_library(library(id, "Sold", &[], 0, 0), Log::ANONYMOUS)
        .await
        .expect("put library");
    let pass = sample_pass(id, 1, 0);
    sled.insert_pass(pass.clone(), Log::ANONYMOUS)
        .await
        .expect("insert pass");
    drop(sled);
    {
        let db = reopen_raw(&path);
        let hashes = db.open_tree("pass_hashes").expect("tree");
        assert!(hashes.remove(pass.token_hash).expect("remove").is_some());
        let lists = db.open_tree("library_passes").expect("tree");
        assert!(lists.remove(id.as_bytes()).expect("remove").is_some());
        db.flush().expect("flush");
    }
    let sled = reopen_after_raw(&path);
    let integrity = sled.verify().await.expect("verify");
    assert_eq!(integrity.passes, 1);
    let problems = integrity.problems.join("\n");
    assert!(
        problems.contains("pass_hashes: 1 keys missing"),
        "{problems}"
    );
    assert!(
        problems.contains("library_passes: 1 keys missing"),
        "{problems}"
    );
}
