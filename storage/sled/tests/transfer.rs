//! Moving records (feature `transfer`): a filled store copied into a fresh one keeps every
//! index and count consistent, and the copy takes writes as the original does.

use assetlib_core::AssetType;
use assetlib_core::events::{EventCursor, EventQuery, Log};
use assetlib_core::store::TransferStore;
use assetlib_core::store::prelude::*;
use assetlib_core::testing::sample_pass;
use assetlib_core::transfer::{Record, copy_records};
use assetlib_core::webhooks::{Delivery, EventFilter, Webhook};
use assetlib_sled::SledStore;
use futures_util::TryStreamExt as _;
use uuid::Uuid;

use crate::common::{asset, at, library, store};

/// Every event of `store`'s log.
async fn events(store: &SledStore) -> Vec<assetlib_core::events::Event> {
    store
        .list_events(&EventQuery {
            after: EventCursor::START,
            kind: None,
            resource: None,
            workspace: None,
            limit: 10_000,
        })
        .await
        .expect("events")
        .events
}

/// Every record `store` exports.
async fn exported(store: &SledStore) -> Vec<Record> {
    store
        .export()
        .await
        .expect("export")
        .try_collect()
        .await
        .expect("every record")
}

/// A webhook made at `at(secs)`.
fn webhook(n: u8, secs: i64) -> Webhook {
    Webhook {
        id: Uuid::new_v4(),
        url: format!("https://hooks.example.com/{n}"),
        event_types: EventFilter::All,
        enabled: true,
        secret: format!("whsec_{n}"),
        created_at: at(secs),
        updated_at: at(secs),
        failing_since: None,
        workspace_id: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_is_consistent_and_takes_slugs_after_the_imported_ones() {
    let (source, _source_dir) = store();
    let log = Log::ANONYMOUS;
    source.rotate_signing_secret([3; 32]).await.expect("secret");
    let mut ids = Vec::new();
    for i in 0..40i64 {
        // About three of each title: slugs with suffixes.
        let mut a = asset(&format!("Poster {}", i % 13), AssetType::Image, i);
        a.tags = vec![format!("tag{}", i % 4)];
        a.published = i % 5 != 0;
        if i % 7 == 0 {
            a.workspace_id = Some("acme".into());
        }
        a.checksum_sha256 = Some([i as u8; 32]);
        ids.push(source.insert_asset(a, log).await.expect("asset").id);
    }
    for _ in 0..4 {
        source.record_download(ids[1]).await.expect("download");
    }
    // Assets of no workspace: a library of none may hold them.
    let held: Vec<Uuid> = (0..40)
        .filter(|i| i % 7 != 0)
        .take(12)
        .map(|i| ids[i])
        .collect();
    let kit = Uuid::new_v4();
    source
        .put_library(library(kit, "Press kit", &held, 2, 4), log)
        .await
        .expect("library");
    source
        .put_library(library(Uuid::new_v4(), "Empty", &[], 0, 0), log)
        .await
        .expect("library");
    for _ in 0..3 {
        source.record_library_view(kit).await.expect("view");
    }
    source
        .insert_pass(sample_pass(kit, 9, 5), log)
        .await
        .expect("pass");

    // Two webhooks whose deliveries were made by turns, newest first: the export merges
    // their lists.
    let hooks = [webhook(1, 200), webhook(2, 201)];
    for hook in &hooks {
        source
            .insert_webhook(hook.clone(), log)
            .await
            .expect("webhook");
    }
    let log_events = events(&source).await;
    for (k, event) in log_events.iter().take(6).enumerate() {
        let hook = &hooks[k % 2];
        // The last one a test delivery, of no event of the log.
        let place = if k == 5 { EventCursor::START } else { event.at };
        let delivery = Delivery::new(
            hook.id,
            (event.id, event.kind.as_str(), place),
            at(300 - k as i64),
        );
        assert!(source.insert_delivery(delivery).await.expect("delivery"));
    }

    let (target, _target_dir) = store();
    let counts = copy_records(&source, &target, |_| {}).await.expect("copy");
    assert_eq!(counts.assets, 40);
    assert_eq!(counts, target.record_counts().await.expect("counts"));
    let copied = target.verify().await.expect("verify");
    assert!(copied.is_ok(), "{:?}", copied.problems);
    let original = source.verify().await.expect("verify");
    assert_eq!(copied, original);
    let records = exported(&source).await;
    assert_eq!(
        exported(&target).await,
        records,
        "the copy exports what the original does"
    );
    let deliveries: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::Delivery(d) => Some((d.created_at, d.id, d.in_log)),
            _ => None,
        })
        .collect();
    assert_eq!(deliveries.len(), 6);
    assert!(deliveries.is_sorted(), "oldest first: {deliveries:?}");
    assert_eq!(deliveries.iter().filter(|d| d.2).count(), 5);
    for hook in &hooks {
        let page = target.list_deliveries(hook.id, 0, 10).await.expect("list");
        assert_eq!(page.total, 3);
    }
    assert_eq!(
        target.get_asset(ids[1]).await.expect("get"),
        source.get_asset(ids[1]).await.expect("get")
    );
    let views = target
        .load_library(kit)
        .await
        .expect("load")
        .expect("the library")
        .library
        .view_count;
    assert_eq!(views, 3);

    // Slugs clash with the imported ones: the next free suffix, for assets and libraries.
    let poster = target
        .insert_asset(asset("Poster 0", AssetType::Image, 100), log)
        .await
        .expect("a write after the copy");
    assert_eq!(poster.slug, "poster-0-4");
    let again = Uuid::new_v4();
    target
        .put_library(library(again, "Press kit", &[], 0, 0), log)
        .await
        .expect("a library after the copy");
    let slug = target
        .load_library(again)
        .await
        .expect("load")
        .expect("the library")
        .library
        .slug;
    assert_eq!(slug, "press-kit-2");
    // The log goes on after the imported events.
    let before = events(&source).await;
    let after = events(&target).await;
    assert_eq!(after.len(), before.len() + 2);
    let ids_of = |events: &[assetlib_core::events::Event]| -> Vec<Uuid> {
        events.iter().map(|e| e.id).collect()
    };
    assert_eq!(
        ids_of(&after[..before.len()]),
        ids_of(&before),
        "the imported events, in their order"
    );
    assert_eq!(after[after.len() - 2].resource_id, poster.id);
    let copied = target.verify().await.expect("verify");
    assert!(copied.is_ok(), "{:?}", copied.problems);
}
