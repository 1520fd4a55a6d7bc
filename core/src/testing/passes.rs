//! The cases of `PassStore`.

use super::*;
use crate::events::Log;
use crate::model::{Holders, LibraryPass, PassSpend};

/// A pass of `library` made at `t0 + secs`, with the hash `[n; 32]`, for a year.
pub fn sample_pass(library: Uuid, n: u8, secs: i64) -> LibraryPass {
    let created_at = t0() + Duration::seconds(secs);
    LibraryPass {
        id: Uuid::new_v4(),
        library_id: library,
        token_hash: [n; 32],
        label: format!("pass {n}"),
        expires_at: created_at + Duration::days(365),
        max_downloads: None,
        downloads_used: 0,
        asset_ids: None,
        created_at,
        revoked_at: None,
    }
}

/// A stored library (published, free, empty) and its id.
async fn stored_library(store: &Arc<dyn Store>, title: &str) -> Uuid {
    let library = sample_library(title, 0);
    let id = library.id;
    store
        .put_library(write(library, vec![], vec![]), Log::ANONYMOUS)
        .await
        .expect("put_library");
    id
}

pub(super) async fn passes_round_trip_and_list_newest_first(store: Arc<dyn Store>) {
    let library = stored_library(&store, "Sold").await;
    let other = stored_library(&store, "Other").await;
    let mut first = sample_pass(library, 1, 10);
    first.max_downloads = Some(3);
    first.asset_ids = Some(vec![Uuid::new_v4(), Uuid::new_v4()]);
    let second = sample_pass(library, 2, 20);
    // Two made at the same time: the larger id first.
    let mut tied = [sample_pass(library, 3, 20), sample_pass(library, 4, 20)];
    tied.sort_by_key(|p| std::cmp::Reverse(p.id));
    let foreign = sample_pass(other, 5, 30);
    for pass in [&first, &tied[1], &second, &foreign, &tied[0]] {
        pass_store(&store)
            .insert_pass(pass.clone(), Log::ANONYMOUS)
            .await
            .expect("insert_pass");
    }
    assert_eq!(
        pass_store(&store).find_pass(&[1; 32]).await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        pass_store(&store).get_pass(first.id).await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(pass_store(&store).find_pass(&[9; 32]).await.unwrap(), None);
    assert_eq!(
        pass_store(&store).get_pass(Uuid::new_v4()).await.unwrap(),
        None
    );

    let mut expected: Vec<LibraryPass> = vec![second.clone(), tied[0].clone(), tied[1].clone()];
    expected.sort_by_key(|p| std::cmp::Reverse((p.created_at, p.id)));
    expected.push(first.clone());
    let all = pass_store(&store)
        .list_passes(library, 0, 10)
        .await
        .unwrap();
    assert_eq!((all.items, all.total), (expected.clone(), 4));
    let page = pass_store(&store).list_passes(library, 1, 2).await.unwrap();
    assert_eq!((page.items, page.total), (expected[1..3].to_vec(), 4));
    let past = pass_store(&store).list_passes(library, 4, 2).await.unwrap();
    assert_eq!((past.items.len(), past.total), (0, 4));
    let theirs = pass_store(&store).list_passes(other, 0, 10).await.unwrap();
    assert_eq!(theirs.items, vec![foreign]);
    let none = pass_store(&store)
        .list_passes(Uuid::new_v4(), 0, 10)
        .await
        .unwrap();
    assert_eq!((none.items.len(), none.total), (0, 0));
}

pub(super) async fn passes_need_their_library_and_fresh_ids(store: Arc<dyn Store>) {
    let missing = Uuid::new_v4();
    match pass_store(&store)
        .insert_pass(sample_pass(missing, 1, 0), Log::ANONYMOUS)
        .await
    {
        Err(StoreError::UnknownLibrary { id }) => assert_eq!(id, missing),
        other => panic!("a pass of a missing library: {other:?}"),
    }
    assert_eq!(pass_store(&store).find_pass(&[1; 32]).await.unwrap(), None);
    let library = stored_library(&store, "Sold").await;
    let pass = sample_pass(library, 1, 0);
    pass_store(&store)
        .insert_pass(pass.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    let same_id = LibraryPass {
        token_hash: [2; 32],
        ..pass.clone()
    };
    assert!(matches!(
        pass_store(&store).insert_pass(same_id, Log::ANONYMOUS).await,
        Err(StoreError::DuplicateId { id }) if id == pass.id
    ));
    let same_hash = sample_pass(library, 1, 5);
    assert!(matches!(
        pass_store(&store)
            .insert_pass(same_hash, Log::ANONYMOUS)
            .await,
        Err(StoreError::DuplicateKeyHash)
    ));
    assert_eq!(pass_store(&store).find_pass(&[2; 32]).await.unwrap(), None);
    assert_eq!(
        pass_store(&store)
            .list_passes(library, 0, 10)
            .await
            .unwrap()
            .total,
        1
    );
}

pub(super) async fn revoking_keeps_the_first_time(store: Arc<dyn Store>) {
    let library = stored_library(&store, "Sold").await;
    let pass = sample_pass(library, 1, 0);
    pass_store(&store)
        .insert_pass(pass.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    let first = t0() + Duration::days(1);
    assert!(
        pass_store(&store)
            .revoke_pass(pass.id, first, Log::ANONYMOUS)
            .await
            .unwrap()
    );
    assert!(
        pass_store(&store)
            .revoke_pass(pass.id, first + Duration::days(1), Log::ANONYMOUS)
            .await
            .unwrap()
    );
    assert_eq!(
        pass_store(&store)
            .get_pass(pass.id)
            .await
            .unwrap()
            .unwrap()
            .revoked_at,
        Some(first)
    );
    assert!(
        !pass_store(&store)
            .revoke_pass(Uuid::new_v4(), first, Log::ANONYMOUS)
            .await
            .unwrap()
    );
}

pub(super) async fn spending_counts_up_to_the_limit_and_only_live_passes(store: Arc<dyn Store>) {
    let library = stored_library(&store, "Sold").await;
    let now = t0() + Duration::days(1);
    let mut limited = sample_pass(library, 1, 0);
    limited.max_downloads = Some(2);
    let unlimited = sample_pass(library, 2, 0);
    let mut expired = sample_pass(library, 3, 0);
    expired.expires_at = now;
    let revoked = sample_pass(library, 4, 0);
    for pass in [&limited, &unlimited, &expired, &revoked] {
        pass_store(&store)
            .insert_pass(pass.clone(), Log::ANONYMOUS)
            .await
            .unwrap();
    }
    pass_store(&store)
        .revoke_pass(revoked.id, now, Log::ANONYMOUS)
        .await
        .unwrap();

    for used in 1..=2 {
        match pass_store(&store)
            .spend_pass(limited.id, now)
            .await
            .unwrap()
        {
            PassSpend::Spent(p) => {
                assert_eq!(p.downloads_used, used);
                assert_eq!(p.id, limited.id);
            }
            other => panic!("spend {used}: {other:?}"),
        }
    }
    assert_eq!(
        pass_store(&store)
            .spend_pass(limited.id, now)
            .await
            .unwrap(),
        PassSpend::Exhausted
    );
    let stored = pass_store(&store)
        .get_pass(limited.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.downloads_used, 2,
        "an exhausted spend changes nothing"
    );
    for _ in 0..5 {
        assert!(matches!(
            pass_store(&store)
                .spend_pass(unlimited.id, now)
                .await
                .unwrap(),
            PassSpend::Spent(_)
        ));
    }
    assert_eq!(
        pass_store(&store)
            .find_pass(&[2; 32])
            .await
            .unwrap()
            .unwrap()
            .downloads_used,
        5
    );
    for dead in [expired.id, revoked.id, Uuid::new_v4()] {
        assert_eq!(
            pass_store(&store).spend_pass(dead, now).await.unwrap(),
            PassSpend::Dead,
            "{dead}"
        );
    }
    assert_eq!(
        pass_store(&store)
            .get_pass(expired.id)
            .await
            .unwrap()
            .unwrap()
            .downloads_used,
        0
    );
    // Just before its expiry the pass still works.
    assert!(matches!(
        pass_store(&store)
            .spend_pass(expired.id, now - Duration::milliseconds(1))
            .await
            .unwrap(),
        PassSpend::Spent(_)
    ));
}

pub(super) async fn concurrent_spends_never_pass_the_limit(store: Arc<dyn Store>) {
    let library = stored_library(&store, "Sold").await;
    let now = t0() + Duration::days(1);
    let mut limited = sample_pass(library, 1, 0);
    limited.max_downloads = Some(10);
    let unlimited = sample_pass(library, 2, 0);
    pass_store(&store)
        .insert_pass(limited.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    pass_store(&store)
        .insert_pass(unlimited.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for n in 0..100 {
        let store = Arc::clone(&store);
        let id = if n % 2 == 0 { limited.id } else { unlimited.id };
        tasks.push(tokio::spawn(async move {
            (
                id,
                pass_store(&store)
                    .spend_pass(id, now)
                    .await
                    .expect("spend_pass"),
            )
        }));
    }
    let (mut spent, mut exhausted, mut free) = (0, 0, 0);
    let mut counts = HashSet::new();
    for task in tasks {
        match task.await.expect("spend task") {
            (id, PassSpend::Spent(p)) if id == limited.id => {
                spent += 1;
                assert!(counts.insert(p.downloads_used), "each spend its own count");
            }
            (_, PassSpend::Spent(_)) => free += 1,
            (_, PassSpend::Exhausted) => exhausted += 1,
            (_, PassSpend::Dead) => panic!("a live pass refused as dead"),
        }
    }
    assert_eq!((spent, exhausted, free), (10, 40, 50));
    assert_eq!(counts, (1..=10).collect::<HashSet<u64>>());
    let stored = pass_store(&store)
        .get_pass(limited.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.downloads_used, 10);
    let stored = pass_store(&store)
        .get_pass(unlimited.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.downloads_used, 50, "no download is lost");
}

pub(super) async fn a_deleted_library_takes_its_passes(store: Arc<dyn Store>) {
    let library = stored_library(&store, "Sold").await;
    let kept = stored_library(&store, "Kept").await;
    let pass = sample_pass(library, 1, 0);
    let other = sample_pass(kept, 2, 0);
    pass_store(&store)
        .insert_pass(pass.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    pass_store(&store)
        .insert_pass(other.clone(), Log::ANONYMOUS)
        .await
        .unwrap();
    assert!(store.delete_library(library, Log::ANONYMOUS).await.unwrap());
    assert_eq!(pass_store(&store).find_pass(&[1; 32]).await.unwrap(), None);
    assert_eq!(pass_store(&store).get_pass(pass.id).await.unwrap(), None);
    assert_eq!(
        pass_store(&store)
            .list_passes(library, 0, 10)
            .await
            .unwrap()
            .total,
        0
    );
    assert_eq!(
        pass_store(&store).spend_pass(pass.id, t0()).await.unwrap(),
        PassSpend::Dead
    );
    assert_eq!(
        pass_store(&store).get_pass(other.id).await.unwrap(),
        Some(other)
    );
    // A library made again with the same id does not bring them back.
    store
        .put_library(
            write(
                Library {
                    id: library,
                    ..sample_library("Sold again", 5)
                },
                vec![],
                vec![],
            ),
            Log::ANONYMOUS,
        )
        .await
        .unwrap();
    assert_eq!(pass_store(&store).find_pass(&[1; 32]).await.unwrap(), None);
}

pub(super) async fn published_holders_say_how_an_asset_is_sold(store: Arc<dyn Store>) {
    let [only_paid, paid_and_free, only_free, in_drafts, in_none] = [
        "only paid",
        "paid and free",
        "only free",
        "in drafts",
        "in none",
    ]
    .map(|t| sample_asset(t, AssetType::Pdf, 0));
    for a in [&only_paid, &paid_and_free, &only_free, &in_drafts, &in_none] {
        insert(&store, a.clone()).await;
    }
    let put = |title: &str, paid: bool, published: bool, assets: Vec<&Asset>| {
        let mut library = sample_library(title, 0);
        library.settings.is_paid = paid;
        library.settings.published = published;
        let entries = assets
            .iter()
            .enumerate()
            .map(|(n, a)| entry(a, None, n as u32))
            .collect();
        write(library, vec![], entries)
    };
    for w in [
        put("Paid", true, true, vec![&only_paid, &paid_and_free]),
        put("Free", false, true, vec![&paid_and_free, &only_free]),
        put("Paid draft", true, false, vec![&in_drafts, &only_free]),
        put("Free draft", false, false, vec![&in_drafts, &only_paid]),
    ] {
        store.put_library(w, Log::ANONYMOUS).await.unwrap();
    }
    let ids = [
        only_paid.id,
        paid_and_free.id,
        only_free.id,
        in_drafts.id,
        in_none.id,
        Uuid::new_v4(),
    ];
    let mut found = store.published_holders(&ids).await.unwrap();
    found.sort_by_key(|h| ids.iter().position(|id| *id == h.asset_id));
    let holders = |asset: &Asset, paid, free| Holders {
        asset_id: asset.id,
        paid,
        free,
    };
    assert_eq!(
        found,
        vec![
            holders(&only_paid, true, false),
            holders(&paid_and_free, true, true),
            holders(&only_free, false, true),
        ]
    );
    assert_eq!(store.published_holders(&[]).await.unwrap(), vec![]);
}
