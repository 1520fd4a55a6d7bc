//! The cases of `EventStore`: one event per change, in the same atomic change, none for a
//! refused write, and a feed that gives every event once.

use super::*;
use crate::change::{AssetChange, AssetDeletion, FileFields};
use crate::events::{Actor, EventCursor, EventPage, EventQuery, EventType, Log, ResourceType};

/// Every event after `after`, following `next` with pages of `limit`.
async fn follow(
    store: &Arc<dyn Store>,
    after: EventCursor,
    limit: usize,
) -> (Vec<crate::events::Event>, EventCursor) {
    let mut query = EventQuery {
        after,
        kind: None,
        resource: None,
        workspace: None,
        limit,
    };
    let mut all = Vec::new();
    loop {
        let EventPage { events, next } = event_store(store)
            .list_events(&query)
            .await
            .expect("list_events");
        assert!(events.len() <= limit, "a page holds at most its limit");
        assert!(next >= query.after, "next never goes back");
        if events.is_empty() {
            return (all, next);
        }
        all.extend(events);
        query.after = next;
    }
}

fn kinds(events: &[crate::events::Event]) -> Vec<(EventType, ResourceType, Uuid)> {
    events
        .iter()
        .map(|e| (e.kind, e.resource_type, e.resource_id))
        .collect()
}

pub(super) async fn every_change_appends_one_event(store: Arc<dyn Store>) {
    let actor = Actor {
        key_id: Uuid::new_v4(),
        key_name: "editor".to_owned(),
    };
    let (_, start) = follow(&store, EventCursor::START, 10).await;
    let asset = sample_asset("Logo", AssetType::Image, 0);
    let library = sample_library("Brand", 0);
    let key = ApiKey {
        id: Uuid::new_v4(),
        name: "ci".to_owned(),
        key_hash: [9; 32],
        scopes: vec![Scope::ReadAssets],
        created_at: t0(),
        expires_at: None,
        revoked_at: None,
        workspace_id: None,
    };
    let pass = super::passes::sample_pass(library.id, 7, 0);
    let writes = {
        let store = Arc::clone(&store);
        let (asset, library, key, pass) =
            (asset.clone(), library.clone(), key.clone(), pass.clone());
        // Every write made by the key `actor`: each event names it.
        let log = Log::by(actor.clone());
        async move {
            store.insert_asset(asset.clone(), &log).await.unwrap();
            // Refused: the same id again.
            assert!(store.insert_asset(asset.clone(), &log).await.is_err());
            let mut retitle = AssetChange::at(t0() + Duration::seconds(10));
            retitle.title = Some("Logo (colour)".to_owned());
            retitle.published = Some(false);
            store.update_asset(asset.id, &retitle, &log).await.unwrap();
            // Nothing changes: nothing is logged.
            let same = AssetChange::at(t0() + Duration::seconds(20));
            store.update_asset(asset.id, &same, &log).await.unwrap();
            let mut file = AssetChange::at(t0() + Duration::seconds(30));
            file.file = Some(FileFields {
                file_path: Some("files/logo.png".to_owned()),
                file_size: Some(10),
                mime_type: Some("image/png".to_owned()),
                ..FileFields::default()
            });
            store.update_asset(asset.id, &file, &log).await.unwrap();
            store
                .put_library(
                    write(library.clone(), vec![], vec![entry(&asset, None, 0)]),
                    &log,
                )
                .await
                .unwrap();
            store
                .put_library(
                    write(library.clone(), vec![], vec![entry(&asset, None, 0)]),
                    &log,
                )
                .await
                .unwrap();
            // Refused: held by the library.
            assert!(matches!(
                store.delete_asset(asset.id, false, &log).await.unwrap(),
                AssetDeletion::InUse(_)
            ));
            store.insert_key(key.clone(), &log).await.unwrap();
            assert!(store.revoke_key(key.id, t0(), &log).await.unwrap());
            assert!(store.revoke_key(key.id, t0(), &log).await.unwrap());
            pass_store(&store)
                .insert_pass(pass.clone(), &log)
                .await
                .unwrap();
            assert!(
                pass_store(&store)
                    .revoke_pass(pass.id, t0(), &log)
                    .await
                    .unwrap()
            );
            assert!(
                pass_store(&store)
                    .revoke_pass(pass.id, t0(), &log)
                    .await
                    .unwrap()
            );
            assert!(store.delete_library(library.id, &log).await.unwrap());
            assert!(!store.delete_library(library.id, &log).await.unwrap());
            assert!(matches!(
                store.delete_asset(asset.id, false, &log).await.unwrap(),
                AssetDeletion::Deleted(_)
            ));
            assert!(matches!(
                store.delete_asset(asset.id, false, &log).await.unwrap(),
                AssetDeletion::NotFound
            ));
        }
    };
    writes.await;

    let (events, end) = follow(&store, start, 3).await;
    use EventType::*;
    use ResourceType as R;
    assert_eq!(
        kinds(&events),
        vec![
            (AssetCreated, R::Asset, asset.id),
            (AssetUpdated, R::Asset, asset.id),
            (AssetFileReplaced, R::Asset, asset.id),
            (LibraryCreated, R::Library, library.id),
            (LibraryUpdated, R::Library, library.id),
            (KeyCreated, R::Key, key.id),
            (KeyRevoked, R::Key, key.id),
            (PassCreated, R::Pass, pass.id),
            (PassRevoked, R::Pass, pass.id),
            (LibraryDeleted, R::Library, library.id),
            (AssetDeleted, R::Asset, asset.id),
        ]
    );
    assert!(events.iter().all(|e| e.actor.as_ref() == Some(&actor)));
    assert_eq!(events[1].changed, vec!["title", "published"]);
    assert!(
        events[2].changed.iter().any(|f| f == "file_path"),
        "{:?}",
        events[2].changed
    );
    assert!(events.iter().skip(3).all(|e| e.changed.is_empty()));
    let ids: HashSet<Uuid> = events.iter().map(|e| e.id).collect();
    assert_eq!(ids.len(), events.len(), "event ids are unique");

    // Past the end: nothing, and the same place.
    let (more, again) = follow(&store, end, 3).await;
    assert!(more.is_empty());
    assert_eq!(again, end);

    // Filters: by type, and one resource's history.
    let only = |kind: Option<EventType>, resource: Option<(ResourceType, Uuid)>| {
        let store = Arc::clone(&store);
        async move {
            event_store(&store)
                .list_events(&EventQuery {
                    after: start,
                    kind,
                    resource,
                    workspace: None,
                    limit: 100,
                })
                .await
                .unwrap()
                .events
        }
    };
    assert_eq!(
        kinds(&only(Some(KeyRevoked), None).await),
        vec![(KeyRevoked, R::Key, key.id)]
    );
    assert_eq!(
        kinds(&only(None, Some((R::Asset, asset.id))).await),
        vec![
            (AssetCreated, R::Asset, asset.id),
            (AssetUpdated, R::Asset, asset.id),
            (AssetFileReplaced, R::Asset, asset.id),
            (AssetDeleted, R::Asset, asset.id),
        ]
    );

    // Outside any actor's task, events name none.
    let other = insert(&store, sample_asset("System", AssetType::Pdf, 1)).await;
    let (tail, _) = follow(&store, end, 10).await;
    assert_eq!(kinds(&tail), vec![(AssetCreated, R::Asset, other.id)]);
    assert_eq!(tail[0].actor, None);
}

/// Writers and a reader at once: the reader, following `next` while writes land in any
/// order, sees every write's event exactly once.
pub(super) async fn a_reader_following_the_feed_sees_each_concurrent_write_once(
    store: Arc<dyn Store>,
) {
    const WRITERS: usize = 8;
    const EACH: usize = 10;
    let (_, start) = follow(&store, EventCursor::START, 50).await;
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (store, done) = (Arc::clone(&store), Arc::clone(&done));
        tokio::spawn(async move {
            let mut seen = Vec::new();
            let mut after = start;
            // Once the writers are done, the feed has all their events as soon as nothing
            // else holds it back (on PostgreSQL, a transaction of anyone sharing the server).
            let mut deadline = None;
            loop {
                let finished = done.load(std::sync::atomic::Ordering::Acquire);
                let (events, next) = follow(&store, after, 7).await;
                seen.extend(events.into_iter().map(|e| e.resource_id));
                after = next;
                if finished {
                    let deadline = *deadline.get_or_insert_with(|| {
                        std::time::Instant::now() + std::time::Duration::from_secs(10)
                    });
                    if seen.len() >= WRITERS * EACH || std::time::Instant::now() > deadline {
                        return seen;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                tokio::task::yield_now().await;
            }
        })
    };
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let store = Arc::clone(&store);
        writers.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for n in 0..EACH {
                let title = format!("Writer {w} asset {n}");
                let asset = sample_asset(&title, AssetType::Image, 0);
                ids.push(insert(&store, asset).await.id);
            }
            ids
        }));
    }
    let mut written = Vec::new();
    for writer in writers {
        written.extend(writer.await.expect("writer"));
    }
    done.store(true, std::sync::atomic::Ordering::Release);
    let mut seen = reader.await.expect("reader");
    assert_eq!(seen.len(), WRITERS * EACH, "each event once");
    seen.sort_unstable();
    written.sort_unstable();
    assert_eq!(seen, written);
}

pub(super) async fn old_events_are_purged(store: Arc<dyn Store>) {
    insert(&store, sample_asset("Old", AssetType::Image, 0)).await;
    let (before, _) = follow(&store, EventCursor::START, 10).await;
    assert_eq!(before.len(), 1);
    let long_ago = Utc::now() - Duration::days(1);
    assert_eq!(event_store(&store).purge_events(long_ago).await.unwrap(), 0);
    let later = Utc::now() + Duration::seconds(1);
    assert_eq!(event_store(&store).purge_events(later).await.unwrap(), 1);
    let (after, _) = follow(&store, EventCursor::START, 10).await;
    assert!(after.is_empty());
    // The log goes on after a purge.
    let next = insert(&store, sample_asset("New", AssetType::Image, 0)).await;
    let (now, _) = follow(&store, EventCursor::START, 10).await;
    assert_eq!(
        kinds(&now),
        vec![(EventType::AssetCreated, ResourceType::Asset, next.id)]
    );
}

/// A cursor the log never handed out (past its end, or not of its form) is refused, so a
/// reader never waits on it forever nor reads the log again from its start; the places it
/// handed out stay good, after their events are purged too.
pub(super) async fn cursors_the_log_never_handed_out_are_refused(store: Arc<dyn Store>) {
    let page = |after: EventCursor| {
        let store = Arc::clone(&store);
        async move {
            event_store(&store)
                .list_events(&EventQuery {
                    after,
                    kind: None,
                    resource: None,
                    workspace: None,
                    limit: 10,
                })
                .await
        }
    };
    for n in 0..3 {
        insert(
            &store,
            sample_asset(&format!("Cursor {n}"), AssetType::Image, 0),
        )
        .await;
    }
    // Every place a page hands out is good, the start too.
    let mut handed_out = vec![EventCursor::START];
    let mut after = EventCursor::START;
    loop {
        let EventPage { events, next } = page(after).await.expect("a cursor handed out");
        handed_out.push(next);
        if events.is_empty() {
            break;
        }
        after = next;
    }
    let end = handed_out[handed_out.len() - 1];
    for good in &handed_out {
        assert!(page(*good).await.is_ok(), "{good:?} was handed out");
    }
    for beyond in [
        EventCursor(end.0, end.1.saturating_add(1000)),
        EventCursor(end.0.saturating_add(1 << 40), end.1),
        EventCursor(1 << 63, 0),
        EventCursor(0, u64::MAX),
        EventCursor(u64::MAX, u64::MAX),
    ] {
        assert!(
            matches!(page(beyond).await, Err(StoreError::UnknownCursor)),
            "{beyond:?} is past the end of the log ({end:?})"
        );
    }
    // The end sees what comes after it; once every event is purged, each place handed out
    // is still good.
    let later = insert(&store, sample_asset("After the end", AssetType::Image, 0)).await;
    let (tail, _) = follow(&store, end, 10).await;
    assert_eq!(
        kinds(&tail),
        vec![(EventType::AssetCreated, ResourceType::Asset, later.id)]
    );
    event_store(&store)
        .purge_events(Utc::now() + Duration::seconds(1))
        .await
        .expect("purge");
    for good in &handed_out {
        assert!(page(*good).await.is_ok(), "{good:?} after a purge");
    }
}

/// Every event of `workspace` (every event for `None`), following the feed in pages of 2.
async fn follow_workspace(
    store: &Arc<dyn Store>,
    workspace: Option<&str>,
) -> Vec<(EventType, Option<String>)> {
    let mut query = EventQuery {
        after: EventCursor::START,
        kind: None,
        resource: None,
        workspace: workspace.map(str::to_owned),
        limit: 2,
    };
    let mut all = Vec::new();
    loop {
        let page = event_store(store).list_events(&query).await.unwrap();
        if page.events.is_empty() {
            return all;
        }
        all.extend(page.events.into_iter().map(|e| (e.kind, e.workspace_id)));
        query.after = page.next;
    }
}

pub(super) async fn events_keep_their_workspace_and_the_feed_filters_by_it(store: Arc<dyn Store>) {
    let acme = Some("acme".to_owned());
    let mut mine = sample_asset("Mine", AssetType::Pdf, 1);
    mine.workspace_id = acme.clone();
    let mut bulk = sample_asset("Bulk", AssetType::Pdf, 2);
    bulk.workspace_id = acme.clone();
    let plain = sample_asset("Plain", AssetType::Pdf, 3);
    // An asset's events name its own workspace, whatever the log's.
    let log = Log::ANONYMOUS.in_workspace(Some("elsewhere"));
    for asset in [&mine, &bulk, &plain] {
        store.insert_asset(asset.clone(), &log).await.unwrap();
    }
    let mut retitle = AssetChange::at(t0() + Duration::seconds(10));
    retitle.title = Some("Mine, retitled".to_owned());
    store.update_asset(mine.id, &retitle, &log).await.unwrap();
    assert!(matches!(
        store.delete_asset(mine.id, false, &log).await.unwrap(),
        AssetDeletion::Deleted(_)
    ));
    store.delete_assets(&[bulk.id], false, &log).await.unwrap();
    // A library's, a pass's and a key revoked name the log's.
    let in_acme = Log::ANONYMOUS.in_workspace(Some("acme"));
    let mut library = sample_library("Kit", 4);
    library.settings.workspace_id = acme.clone();
    store
        .put_library(write(library.clone(), vec![], vec![]), &in_acme)
        .await
        .unwrap();
    let pass = super::passes::sample_pass(library.id, 5, 0);
    let passes = pass_store(&store);
    passes.insert_pass(pass.clone(), &in_acme).await.unwrap();
    assert!(passes.revoke_pass(pass.id, t0(), &in_acme).await.unwrap());
    assert!(store.delete_library(library.id, &in_acme).await.unwrap());
    let key = ApiKey {
        id: Uuid::new_v4(),
        name: "globex".into(),
        key_hash: [42; 32],
        scopes: vec![Scope::ReadAssets],
        created_at: t0(),
        expires_at: None,
        revoked_at: None,
        workspace_id: Some("globex".into()),
    };
    store.insert_key(key.clone(), Log::ANONYMOUS).await.unwrap();
    let in_globex = Log::ANONYMOUS.in_workspace(Some("globex"));
    assert!(store.revoke_key(key.id, t0(), &in_globex).await.unwrap());

    let of = |ws: &str| Some(ws.to_owned());
    let acme_events = vec![
        (EventType::AssetCreated, of("acme")),
        (EventType::AssetCreated, of("acme")),
        (EventType::AssetUpdated, of("acme")),
        (EventType::AssetDeleted, of("acme")),
        (EventType::AssetDeleted, of("acme")),
        (EventType::LibraryCreated, of("acme")),
        (EventType::PassCreated, of("acme")),
        (EventType::PassRevoked, of("acme")),
        (EventType::LibraryDeleted, of("acme")),
    ];
    assert_eq!(follow_workspace(&store, Some("acme")).await, acme_events);
    let globex_events = vec![
        (EventType::KeyCreated, of("globex")),
        (EventType::KeyRevoked, of("globex")),
    ];
    assert_eq!(
        follow_workspace(&store, Some("globex")).await,
        globex_events
    );
    assert_eq!(follow_workspace(&store, Some("nowhere")).await, []);
    let all = follow_workspace(&store, None).await;
    assert_eq!(all.len(), acme_events.len() + globex_events.len() + 1);
    assert!(all.contains(&(EventType::AssetCreated, None)), "{all:?}");
}
