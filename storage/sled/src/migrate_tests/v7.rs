//! The upgrade from format 7: webhook and event records gain a workspace (none).

use super::v3::{set_format, stored_format};
use super::*;
use assetlib_core::events::{EventQuery, EventType};
use assetlib_core::webhooks::{EventFilter, Webhook};

/// Takes every webhook and event record back to format 7's layout (the workspace, `None`,
/// one zero byte, cut from the end) and says format 7. Returns how many records were cut.
fn back_to_v7(path: &Path) -> usize {
    let db = raw(path);
    let cut = cut_trailing_none(&db, &["webhooks", "events"]);
    db.flush().expect("flush");
    drop(db);
    set_format(path, 7);
    cut
}

fn feed(workspace: Option<&str>) -> EventQuery {
    EventQuery {
        after: assetlib_core::events::EventCursor::START,
        kind: None,
        resource: None,
        workspace: workspace.map(str::to_owned),
        limit: 100,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_format_7_directory_gains_workspaces_on_webhooks_and_events() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    let hook = Webhook {
        id: Uuid::new_v4(),
        url: "https://hooks.example.com/a".into(),
        event_types: EventFilter::All,
        enabled: true,
        secret: "whsec_a".into(),
        created_at: at(1),
        updated_at: at(1),
        failing_since: None,
        workspace_id: None,
    };
    let logo = sample_asset_at("Logo", AssetType::Image, at(2));
    let before = {
        let store = open(&path);
        store
            .insert_webhook(hook.clone(), Log::ANONYMOUS)
            .await
            .expect("webhook");
        store
            .insert_asset(logo.clone(), Log::ANONYMOUS)
            .await
            .expect("asset");
        store.list_events(&feed(None)).await.expect("feed").events
    };
    assert_eq!(before.len(), 2, "webhook.created and asset.created");
    assert_eq!(back_to_v7(&path), 3, "a webhook and two events");

    for run in ["first open", "open after a cut-short upgrade"] {
        let store = open(&path);
        assert_eq!(
            store.get_webhook(hook.id).await.expect("get"),
            Some(hook.clone()),
            "{run}"
        );
        let events = store.list_events(&feed(None)).await.expect("feed").events;
        assert_eq!(
            events, before,
            "{run}: the log reads as it was, of no workspace"
        );
        let integrity = store.verify().await.expect("verify");
        assert!(integrity.is_ok(), "{run}: {:?}", integrity.problems);
        drop(store);
        assert_eq!(stored_format(&path), crate::FORMAT_VERSION, "{run}");
        set_format(&path, 7);
    }

    // New events carry their workspace; the old ones stay readable beside them.
    let store = open(&path);
    let mut mine = sample_asset_at("Mine", AssetType::Image, at(3));
    mine.workspace_id = Some("acme".into());
    store
        .insert_asset(mine.clone(), Log::ANONYMOUS)
        .await
        .expect("insert");
    let all = store.list_events(&feed(None)).await.expect("feed").events;
    assert_eq!(all.len(), 3);
    let acme = store
        .list_events(&feed(Some("acme")))
        .await
        .expect("feed")
        .events;
    assert_eq!(acme.len(), 1);
    assert_eq!(
        (
            acme[0].kind,
            acme[0].resource_id,
            acme[0].workspace_id.as_deref()
        ),
        (EventType::AssetCreated, mine.id, Some("acme"))
    );
}
