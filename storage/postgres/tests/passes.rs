//! Library passes across replicas, beyond core's conformance cases: spends of one pass from
//! two stores (two pools) on one database never pass its limit, and a pass made while its
//! library is deleted either fails or goes with it. And the scopes of passes (`read:paid`,
//! `write:passes`) on a key.

use assetlib_core::store::prelude::*;
use std::collections::HashSet;

use assetlib_core::testing::{sample_library, sample_pass};
use assetlib_core::{ApiKey, LibraryWrite, PassSpend, Scope, StoreError};
use assetlib_postgres::PgStore;
use assetlib_testkit::postgres::TestCluster;

use crate::common::store;
use chrono::{Duration, Utc};
use uuid::Uuid;

/// A stored library (published, free, empty) and its id.
async fn library(store: &PgStore, title: &str) -> Uuid {
    let library = sample_library(title, 0);
    let id = library.id;
    store
        .put_library(
            LibraryWrite {
                library,
                slug_given: false,
                sections: vec![],
                entries: vec![],
            },
            Log::ANONYMOUS,
        )
        .await
        .expect("put_library");
    id
}

/// Two replicas (two stores, each with a pool of its own) spend one pass allowing 10 downloads
/// from 50 concurrent tasks: exactly 10 spends succeed, each with a count of its own, and the
/// other 40 find the pass exhausted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_never_spend_past_the_limit() {
    const TASKS: usize = 50;
    let db = TestCluster::shared().database().await;
    let (one, two) = (
        PgStore::connect(db.url()).await.expect("one"),
        PgStore::connect(db.url()).await.expect("two"),
    );
    let lib = library(&one, "Sold").await;
    let mut pass = sample_pass(lib, 1, 0);
    pass.max_downloads = Some(10);
    one.insert_pass(pass.clone(), Log::ANONYMOUS)
        .await
        .expect("insert_pass");
    let now = pass.created_at + Duration::days(1);
    let tasks: Vec<_> = (0..TASKS)
        .map(|n| {
            let store = if n % 2 == 0 { one.clone() } else { two.clone() };
            tokio::spawn(async move { store.spend_pass(pass.id, now).await.expect("spend") })
        })
        .collect();
    let mut counts = HashSet::new();
    let mut exhausted = 0;
    for task in tasks {
        match task.await.expect("task") {
            PassSpend::Spent(p) => {
                assert!(counts.insert(p.downloads_used), "two spends of one count");
            }
            PassSpend::Exhausted => exhausted += 1,
            PassSpend::Dead => panic!("a live pass refused as dead"),
        }
    }
    assert_eq!(counts, (1..=10).collect::<HashSet<u64>>());
    assert_eq!(exhausted, TASKS - 10);
    for store in [&one, &two] {
        let stored = store.get_pass(pass.id).await.expect("get").expect("pass");
        assert_eq!(stored.downloads_used, 10);
    }
}

/// A pass made while its library is deleted (from another replica) either fails with
/// `UnknownLibrary` or lands before the delete and goes with it: no pass outlives its library.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_racing_its_library_delete_never_outlives_it() {
    let db = TestCluster::shared().database().await;
    let (one, two) = (
        PgStore::connect(db.url()).await.expect("one"),
        PgStore::connect(db.url()).await.expect("two"),
    );
    for n in 0..20u8 {
        let lib = library(&one, &format!("Race {n}")).await;
        let pass = sample_pass(lib, n, 0);
        let (inserted, deleted) = tokio::join!(
            one.insert_pass(pass.clone(), Log::ANONYMOUS),
            two.delete_library(lib, Log::ANONYMOUS),
        );
        assert!(deleted.expect("delete"), "the library existed");
        match inserted {
            Ok(()) => {}
            Err(StoreError::UnknownLibrary { id }) => assert_eq!(id, lib),
            Err(other) => panic!("insert_pass: {other:?}"),
        }
        assert_eq!(one.get_pass(pass.id).await.expect("get"), None);
        assert_eq!(two.find_pass(&pass.token_hash).await.expect("find"), None);
    }
}

/// Every scope, the new ones included, is kept as its text and read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_keep_every_scope() {
    let (store, _db) = store().await;
    let key = ApiKey {
        id: Uuid::new_v4(),
        name: "all".into(),
        key_hash: [7; 32],
        scopes: Scope::ALL.to_vec(),
        created_at: Utc::now(),
        expires_at: None,
        revoked_at: None,
        workspace_id: None,
    };
    store
        .insert_key(key, Log::ANONYMOUS)
        .await
        .expect("insert_key");
    let found = store.find_key(&[7; 32]).await.expect("find").expect("key");
    assert_eq!(found.scopes, Scope::ALL.to_vec());
    assert!(found.scopes.contains(&Scope::ReadPaid) && found.scopes.contains(&Scope::WritePasses));
}
