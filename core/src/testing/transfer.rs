//! The cases of [`TransferStore`] (feature `transfer`): each runs on two fresh stores of the
//! kind checked, a source filled with records of every kind and a target. A copy exports
//! what the source exports and answers its reads; an import cut short runs again; a batch
//! with a record that cannot be kept lands not at all; the mark stays until it is cleared.

use futures_util::TryStreamExt as _;

use super::*;
use crate::events::{Actor, EventCursor, EventQuery};
use crate::store::TransferStore;
use crate::transfer::{Record, copy_records};
use crate::webhooks::Delivery;

/// A case on a source and a target store.
#[derive(Clone, Copy)]
pub struct TransferCase {
    /// The rule it checks.
    pub name: &'static str,
    /// The check, on a fresh source and a fresh target.
    pub run: fn(Arc<dyn Store>, Arc<dyn Store>) -> CaseFuture,
}

impl std::fmt::Debug for TransferCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

macro_rules! transfer_cases {
    ($(#[$doc:meta])* $name:ident: $($case:ident),* $(,)?) => {
        $(#[$doc])*
        pub const $name: &[TransferCase] = &[$(TransferCase {
            name: stringify!($case),
            run: |source, target| Box::pin($case(source, target)),
        }),*];
    };
}

transfer_cases!(
    /// The cases of [`TransferStore`] ([`run_all`] runs them on a store that hands one out,
    /// each on two fresh stores).
    TRANSFER_CASES:
    a_copy_exports_what_the_original_does_and_answers_alike,
    an_import_cut_short_runs_again,
    a_batch_with_a_record_that_cannot_be_kept_lands_not_at_all,
    the_mark_stays_until_it_is_cleared,
);

/// Runs `cases`, each on two fresh stores from `make`. Panics naming the first that fails.
pub async fn run_transfer_cases<S, G, F, Fut>(cases: &[TransferCase], make: &mut F)
where
    S: Store,
    F: FnMut() -> Fut,
    Fut: Future<Output = (S, G)>,
{
    for case in cases {
        let (source, source_guard) = make().await;
        let (target, target_guard) = make().await;
        let (source, target): (Arc<dyn Store>, Arc<dyn Store>) =
            (Arc::new(source), Arc::new(target));
        let outcome = tokio::spawn((case.run)(source, target)).await;
        drop((source_guard, target_guard));
        if let Err(e) = outcome {
            match e.try_into_panic() {
                Ok(payload) => {
                    eprintln!("conformance case `{}` failed", case.name);
                    std::panic::resume_unwind(payload)
                }
                Err(e) => panic!("conformance case `{}` did not finish: {e}", case.name),
            }
        }
    }
}

/// Runs [`TRANSFER_CASES`] on stores from `make` when `moves` (the store hands out a
/// [`TransferStore`]).
pub(super) async fn run_when<S, G, F, Fut>(moves: bool, make: &mut F)
where
    S: Store,
    F: FnMut() -> Fut,
    Fut: Future<Output = (S, G)>,
{
    if moves {
        run_transfer_cases(TRANSFER_CASES, make).await;
    }
}

fn transfer(store: &Arc<dyn Store>) -> &dyn TransferStore {
    store
        .transfer_store()
        .expect("the store hands out its TransferStore")
}

/// A global key made at `t0 + secs`, its hash all `n`.
fn sample_key(n: u8, secs: i64) -> ApiKey {
    ApiKey {
        id: Uuid::new_v4(),
        name: format!("key {n}"),
        key_hash: [n; 32],
        scopes: vec![Scope::ReadAssets, Scope::WriteAssets],
        created_at: t0() + Duration::seconds(secs),
        expires_at: None,
        revoked_at: None,
        workspace_id: None,
    }
}

/// Every record `store` exports, each library's sections and entries in a fixed order (a
/// store may give them in any).
async fn exported(store: &Arc<dyn Store>) -> Vec<Record> {
    let mut records: Vec<Record> = transfer(store)
        .export()
        .await
        .expect("export")
        .try_collect()
        .await
        .expect("every record");
    for record in &mut records {
        if let Record::Library(l) = record {
            l.sections.sort_by_key(|s| (s.display_order, s.id));
            l.entries
                .sort_by_key(|e| (e.section_id, e.display_order, e.asset_id));
        }
    }
    records
}

/// Fills `store` with records of every kind it keeps: the signing secret, keys (one of a
/// workspace, one revoked), assets (a draft, one of a workspace, tags, a checksum, downloads),
/// a kept text, libraries with sections, entries and views, passes (one with downloads
/// spent), a webhook whose stream stands after the first events, deliveries, and the events
/// of all of it.
async fn fill(store: &Arc<dyn Store>) {
    store.rotate_signing_secret([7; 32]).await.expect("secret");
    let key = sample_key(1, 0);
    let log = Log::by(Actor::of(&key));
    store.insert_key(key.clone(), &log).await.expect("key");
    let mut of_acme = sample_key(2, 1);
    of_acme.workspace_id = Some("acme".into());
    store.insert_key(of_acme, &log).await.expect("key");
    let revoked = sample_key(3, 2);
    store.insert_key(revoked.clone(), &log).await.expect("key");
    store
        .revoke_key(revoked.id, t0() + Duration::seconds(3), &log)
        .await
        .expect("revoke");

    let mut guide = sample_asset("Brand guide", AssetType::Pdf, 10);
    guide.tags = vec!["brand".into(), "Print".into()];
    guide.checksum_sha256 = Some([9; 32]);
    guide.file_path = Some("uploads/a/guide.pdf".into());
    let guide = store.insert_asset(guide, &log).await.expect("asset");
    let mut draft = sample_asset("Draft logo", AssetType::Image, 11);
    draft.published = false;
    let draft = store.insert_asset(draft, &log).await.expect("asset");
    let mut theirs = sample_asset("Acme deck", AssetType::Document, 12);
    theirs.workspace_id = Some("acme".into());
    store.insert_asset(theirs, &log).await.expect("asset");
    let same_title = store
        .insert_asset(sample_asset("Brand guide", AssetType::Video, 13), &log)
        .await
        .expect("asset");
    for _ in 0..3 {
        store.record_download(guide.id).await.expect("download");
    }
    #[cfg(feature = "search")]
    if let Some(search) = store.search_store() {
        let text = crate::store::AssetText {
            pages: vec!["first page".into(), "second page".into()],
            paged: true,
        };
        search.set_asset_text(guide.id, text).await.expect("text");
    }

    let library = sample_library("Press kit", 20);
    let id = library.id;
    let logos = section("Logos", 0);
    let entries = vec![
        entry(&guide, Some(&logos), 0),
        entry(&same_title, Some(&logos), 1),
        entry(&draft, None, 0),
    ];
    store
        .put_library(write(library, vec![logos], entries), &log)
        .await
        .expect("library");
    store
        .put_library(write(sample_library("Empty", 21), vec![], vec![]), &log)
        .await
        .expect("library");
    for _ in 0..2 {
        store.record_library_view(id).await.expect("view");
    }

    if let Some(passes) = store.pass_store() {
        let mut pass = sample_pass(id, 4, 30);
        pass.max_downloads = Some(5);
        passes.insert_pass(pass.clone(), &log).await.expect("pass");
        passes.spend_pass(pass.id, t0()).await.expect("spend");
        passes
            .insert_pass(sample_pass(id, 5, 31), &log)
            .await
            .expect("pass");
    }

    if let (Some(hooks), Some(events)) = (store.webhook_store(), store.event_store()) {
        let hook = super::webhooks::sample_webhook(1, 40);
        hooks
            .insert_webhook(hook.clone(), &log)
            .await
            .expect("webhook");
        // An event after the webhook, delivered; the stream moved past it.
        store
            .insert_asset(sample_asset("Late", AssetType::Audio, 41), &log)
            .await
            .expect("asset");
        let holder = Uuid::new_v4();
        let (now, until) = (t0(), t0() + Duration::seconds(60));
        let from = hooks
            .lease_stream(hook.id, holder, now, until)
            .await
            .expect("lease")
            .expect("a stream");
        let page = events
            .list_events(&EventQuery {
                after: from,
                kind: None,
                resource: None,
                workspace: None,
                limit: 100,
            })
            .await
            .expect("events");
        let first = page.events.first().expect("an event after the webhook");
        let mut sent = Delivery::new(
            hook.id,
            (first.id, first.kind.as_str(), first.at),
            t0() + Duration::seconds(42),
        );
        sent.status = crate::webhooks::DeliveryStatus::Succeeded;
        sent.attempts = 1;
        sent.next_attempt_at = None;
        sent.last_response_status = Some(200);
        let moved = hooks
            .advance_stream(hook.id, holder, (from, first.at), vec![sent], until)
            .await
            .expect("advance");
        assert!(moved, "the stream moves");
        // A test delivery (no event of the log) and a pending one of an event.
        let mut test = super::webhooks::sample_delivery(hook.id, 43);
        test.event_at = EventCursor::START;
        hooks.insert_delivery(test).await.expect("delivery");
        let pending = Delivery::new(
            hook.id,
            (first.id, first.kind.as_str(), first.at),
            t0() + Duration::seconds(44),
        );
        hooks.insert_delivery(pending).await.expect("delivery");
    }
}

/// The reads a copy must answer as the original: every asset (drafts too), each library's
/// load, each key by its hash, the signing secret, each pass by its hash, the event log's ids
/// in order, each webhook and where its stream stands (as the id of the last event before
/// it).
async fn reads(store: &Arc<dyn Store>) -> Vec<String> {
    let mut out = Vec::new();
    let mut q = query(AssetSort::CreatedAt, SortOrder::Asc, 100);
    q.status = crate::query::AssetStatus::Any;
    let (assets, total) = list(store, q).await;
    out.push(format!("{total} assets: {assets:?}"));
    let q = LibraryQuery {
        limit: 100,
        ..LibraryQuery::default()
    };
    let libraries = store.list_libraries(&q).await.expect("libraries");
    for summary in &libraries.items {
        let rows = store
            .load_library(summary.library.id)
            .await
            .expect("load")
            .expect("a library");
        let mut entries: Vec<_> = rows
            .entries
            .iter()
            .map(|e| (e.entry.clone(), e.asset.clone()))
            .collect();
        entries.sort_by_key(|(e, _)| (e.section_id, e.display_order));
        out.push(format!(
            "{:?} {} {:?} {entries:?}",
            rows.library, summary.asset_count, rows.sections
        ));
    }
    for key in store.list_keys().await.expect("keys") {
        let found = store
            .find_key(&key.key_hash)
            .await
            .expect("find")
            .expect("a key");
        out.push(format!("{found:?}"));
    }
    out.push(format!(
        "{:?}",
        store.signing_secret([0; 32]).await.expect("secret")
    ));
    if let Some(passes) = store.pass_store() {
        for n in [4u8, 5] {
            out.push(format!(
                "{:?}",
                passes.find_pass(&[n; 32]).await.expect("pass")
            ));
        }
    }
    if let Some(events) = store.event_store() {
        let page = events
            .list_events(&EventQuery {
                after: EventCursor::START,
                kind: None,
                resource: None,
                workspace: None,
                limit: 1000,
            })
            .await
            .expect("events");
        let ids: Vec<_> = page
            .events
            .iter()
            .map(|e| {
                (
                    e.id,
                    e.kind,
                    e.resource_id,
                    e.actor.clone(),
                    e.workspace_id.clone(),
                )
            })
            .collect();
        out.push(format!("events {ids:?}"));
        if let Some(hooks) = store.webhook_store() {
            // After every lease `fill` took has run out.
            let later = t0() + Duration::seconds(3600);
            for hook in hooks.list_webhooks(0, 100).await.expect("webhooks").items {
                let at = hooks
                    .lease_stream(hook.id, Uuid::new_v4(), later, later + Duration::seconds(1))
                    .await
                    .expect("lease")
                    .expect("a stream");
                let before = page
                    .events
                    .iter()
                    .take_while(|e| e.at <= at)
                    .last()
                    .map(|e| e.id);
                out.push(format!("{hook:?} stream after {before:?}"));
                let mut deliveries = hooks
                    .list_deliveries(hook.id, 0, 100)
                    .await
                    .expect("deliveries")
                    .items;
                deliveries.sort_by_key(|d| d.id);
                let shown: Vec<_> = deliveries
                    .iter()
                    .map(|d| {
                        (
                            d.id,
                            d.event_id,
                            d.status,
                            d.attempts,
                            d.event_at == EventCursor::START,
                        )
                    })
                    .collect();
                out.push(format!("deliveries {shown:?}"));
            }
        }
    }
    out
}

async fn a_copy_exports_what_the_original_does_and_answers_alike(
    source: Arc<dyn Store>,
    target: Arc<dyn Store>,
) {
    fill(&source).await;
    source.flush().await.expect("flush");
    assert!(
        transfer(&target)
            .record_counts()
            .await
            .expect("counts")
            .is_empty()
    );
    let counts = copy_records(transfer(&source), transfer(&target), |_| {})
        .await
        .expect("copy");
    assert_eq!(
        counts,
        transfer(&source).record_counts().await.expect("counts")
    );
    assert_eq!(
        counts,
        transfer(&target).record_counts().await.expect("counts")
    );
    assert!(
        counts.assets >= 4 && counts.libraries == 2 && counts.keys == 3,
        "{counts}"
    );
    assert_eq!(exported(&target).await, exported(&source).await);
    assert_eq!(reads(&target).await, reads(&source).await);
    // The copy takes writes as the original does.
    let after = target
        .insert_asset(
            sample_asset("Brand guide", AssetType::Pdf, 50),
            Log::ANONYMOUS,
        )
        .await
        .expect("a write after the copy");
    assert_eq!(after.slug, "brand-guide-3", "the copy's slugs are taken");
}

async fn an_import_cut_short_runs_again(source: Arc<dyn Store>, target: Arc<dyn Store>) {
    fill(&source).await;
    let records = exported(&source).await;
    let half = records.len() / 2;
    transfer(&target)
        .import(&records[..half])
        .await
        .expect("half");
    transfer(&target)
        .import(&records)
        .await
        .expect("all, again");
    assert_eq!(exported(&target).await, records);
    assert_eq!(reads(&target).await, reads(&source).await);
}

async fn a_batch_with_a_record_that_cannot_be_kept_lands_not_at_all(
    source: Arc<dyn Store>,
    target: Arc<dyn Store>,
) {
    fill(&source).await;
    let records = exported(&source).await;
    let library = records
        .iter()
        .find_map(|r| match r {
            Record::Library(l) if !l.entries.is_empty() => Some(l.clone()),
            _ => None,
        })
        .expect("a library with entries");
    let asset = records
        .iter()
        .find(|r| matches!(r, Record::Asset(a) if !library.entries.iter().any(|e| e.asset_id == a.id)))
        .expect("an asset the library does not hold")
        .clone();
    // The library's assets are not in the target: the batch fails whole.
    let refused = transfer(&target)
        .import(&[asset.clone(), Record::Library(library)])
        .await;
    assert!(
        matches!(refused, Err(StoreError::Corrupt(_))),
        "{refused:?}"
    );
    assert!(
        transfer(&target)
            .record_counts()
            .await
            .expect("counts")
            .is_empty()
    );
    let Record::Asset(asset) = asset else {
        unreachable!()
    };
    assert_eq!(target.get_asset(asset.id).await.expect("get"), None);
}

async fn the_mark_stays_until_it_is_cleared(source: Arc<dyn Store>, target: Arc<dyn Store>) {
    drop(source);
    let store = transfer(&target);
    assert_eq!(store.transfer_mark().await.expect("mark"), None);
    store
        .set_transfer_mark(Some("migrate from a"))
        .await
        .expect("set");
    assert_eq!(
        store.transfer_mark().await.expect("mark").as_deref(),
        Some("migrate from a")
    );
    store
        .set_transfer_mark(Some("migrate from b"))
        .await
        .expect("set");
    assert_eq!(
        store.transfer_mark().await.expect("mark").as_deref(),
        Some("migrate from b")
    );
    store.set_transfer_mark(None).await.expect("clear");
    assert_eq!(store.transfer_mark().await.expect("mark"), None);
}
