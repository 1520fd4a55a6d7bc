//! Conformance cases of an asset's move to another workspace ([`AssetChange::workspace`]):
//! the slug it takes there, the libraries that stop it, and a library write racing it
//! (DESIGN "Workspaces").

use super::workspaces::{asset_in, library_in};
use super::*;
use crate::change::{AssetChange, ChangeRefused};
use crate::model::may_hold;

/// The change moving an asset to `to`, at `t0 + secs`.
fn move_to(to: Option<&str>, secs: i64) -> AssetChange {
    AssetChange {
        workspace: Some(to.map(str::to_owned)),
        ..AssetChange::at(t0() + Duration::seconds(secs))
    }
}

/// Moves asset `id` to `to`: the asset after, or the store's refusal.
async fn move_asset(
    store: &Arc<dyn Store>,
    id: Uuid,
    to: Option<&str>,
    secs: i64,
) -> Result<Asset, StoreError> {
    let update = store
        .update_asset(id, &move_to(to, secs), Log::ANONYMOUS)
        .await?;
    Ok(update.expect("the asset exists").after)
}

/// The ids of the assets of `workspace`, by the workspace filter.
async fn ids_in(store: &Arc<dyn Store>, workspace: &str) -> Vec<Uuid> {
    let query = AssetQuery {
        workspace_id: Some(workspace.to_owned()),
        per_page: 100,
        ..AssetQuery::default()
    };
    let page = store.list_assets(&query).await.unwrap();
    assert_eq!(page.total, page.items.len() as u64, "{workspace}");
    let mut ids: Vec<Uuid> = page.items.iter().map(|a| a.id).collect();
    ids.sort_unstable();
    ids
}

fn sorted(mut ids: Vec<Uuid>) -> Vec<Uuid> {
    ids.sort_unstable();
    ids
}

pub(super) async fn an_asset_moves_with_its_slug_or_the_first_free_one(store: Arc<dyn Store>) {
    let logo = insert(&store, asset_in(Some("acme"), "Logo", 1)).await;
    let theirs = insert(&store, asset_in(Some("globex"), "Logo", 2)).await;
    let other = insert(&store, asset_in(Some("acme"), "Other", 3)).await;
    assert_eq!((logo.slug.as_str(), theirs.slug.as_str()), ("logo", "logo"));

    // Taken there: the first free numbered form; every field but the workspace, the slug and
    // `updated_at` as it was.
    let moved = move_asset(&store, logo.id, Some("globex"), 10)
        .await
        .unwrap();
    assert_eq!(moved.workspace_id.as_deref(), Some("globex"));
    assert_eq!(moved.slug, "logo-2");
    assert_eq!(moved.updated_at, t0() + Duration::seconds(10));
    assert_eq!(
        Asset {
            slug: logo.slug.clone(),
            workspace_id: logo.workspace_id.clone(),
            updated_at: logo.updated_at,
            ..moved.clone()
        },
        logo
    );
    assert_eq!(store.get_asset(logo.id).await.unwrap(), Some(moved));
    assert_eq!(ids_in(&store, "acme").await, vec![other.id]);
    assert_eq!(
        ids_in(&store, "globex").await,
        sorted(vec![logo.id, theirs.id])
    );

    // Free there: kept. To no workspace, and back.
    let none = move_asset(&store, other.id, None, 11).await.unwrap();
    assert_eq!((none.workspace_id, none.slug.as_str()), (None, "other"));
    assert!(ids_in(&store, "acme").await.is_empty());
    let back = move_asset(&store, logo.id, Some("acme"), 12).await.unwrap();
    assert_eq!(back.slug, "logo-2", "the slug it has, free there");
    assert_eq!(ids_in(&store, "acme").await, vec![logo.id]);

    // A create there takes a free one, never a slug a moved asset holds.
    let later = insert(&store, asset_in(Some("acme"), "Logo", 13)).await;
    assert_ne!(later.slug, "logo-2");
    let none_again = insert(&store, asset_in(None, "Other", 14)).await;
    assert_ne!(none_again.slug, "other");

    // Moving to where it is changes nothing.
    let same = store
        .update_asset(theirs.id, &move_to(Some("globex"), 15), Log::ANONYMOUS)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(same.before, same.after);
}

pub(super) async fn a_move_waits_for_the_libraries_that_hold_the_asset(store: Arc<dyn Store>) {
    let put = |library: &Library, assets: &[&Asset]| {
        let (store, library) = (store.clone(), library.clone());
        let entries = assets
            .iter()
            .enumerate()
            .map(|(i, a)| entry(a, None, i as u32))
            .collect();
        async move {
            store
                .put_library(write(library, vec![], entries), Log::ANONYMOUS)
                .await
        }
    };
    let held = insert(&store, asset_in(Some("acme"), "Held", 1)).await;
    let acme = library_in(Some("acme"), "Acme kit", 2);
    put(&acme, &[&held]).await.unwrap();

    // A library of acme may not hold it in globex: refused, nothing changed.
    match move_asset(&store, held.id, Some("globex"), 10).await {
        Err(StoreError::Refused { id, reason }) => {
            assert_eq!(
                (id, reason),
                (held.id, ChangeRefused::HeldInAnotherWorkspace)
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(store.get_asset(held.id).await.unwrap(), Some(held.clone()));
    // It may hold one of no workspace.
    let none = move_asset(&store, held.id, None, 11).await.unwrap();
    assert_eq!(none.workspace_id, None);
    let rows = store.load_library(acme.id).await.unwrap().unwrap();
    assert_eq!(rows.entries.len(), 1, "still in the library");

    // A library of no workspace holds assets of none alone.
    let loose = insert(&store, asset_in(None, "Loose", 3)).await;
    let plain = library_in(None, "Plain kit", 4);
    put(&plain, &[&loose]).await.unwrap();
    assert!(matches!(
        move_asset(&store, loose.id, Some("acme"), 12).await,
        Err(StoreError::Refused {
            reason: ChangeRefused::HeldInAnotherWorkspace,
            ..
        })
    ));
    // Out of the library, it moves.
    put(&plain, &[]).await.unwrap();
    let moved = move_asset(&store, loose.id, Some("acme"), 13)
        .await
        .unwrap();
    assert_eq!(moved.workspace_id.as_deref(), Some("acme"));

    // A library write placing an asset it may not hold is refused, whole.
    let foreign = insert(&store, asset_in(Some("globex"), "Foreign", 5)).await;
    for library in [&acme, &plain] {
        match put(library, &[&moved, &foreign]).await {
            Err(StoreError::AssetOfAnotherWorkspace { id }) if library.id == acme.id => {
                assert_eq!(id, foreign.id);
            }
            // Both entries are of a workspace a library of none may not hold: either is named.
            Err(StoreError::AssetOfAnotherWorkspace { id }) => {
                assert!(id == moved.id || id == foreign.id, "{id}");
            }
            other => panic!("expected AssetOfAnotherWorkspace, got {other:?}"),
        }
    }
    let rows = store.load_library(acme.id).await.unwrap().unwrap();
    let ids: Vec<Uuid> = rows.entries.iter().map(|r| r.entry.asset_id).collect();
    assert_eq!(ids, vec![held.id], "unchanged");
}

pub(super) async fn a_library_write_racing_a_move_is_consistent(store: Arc<dyn Store>) {
    for round in 0..20 {
        let x = insert(&store, asset_in(Some("acme"), &format!("x{round}"), round)).await;
        let lib = library_in(Some("acme"), &format!("L{round}"), round);
        let writer = spawn_library_write(&store, &lib, &x);
        let mover = {
            let store = store.clone();
            tokio::spawn(async move { move_asset(&store, x.id, Some("globex"), 100).await })
        };
        let (written, moved) = (writer.await.unwrap(), mover.await.unwrap());
        let asset = store.get_asset(x.id).await.unwrap().unwrap();
        let rows = store.load_library(lib.id).await.unwrap();
        match (written, moved) {
            // The write landed first: the move saw the library.
            (
                Ok(_),
                Err(StoreError::Refused {
                    reason: ChangeRefused::HeldInAnotherWorkspace,
                    ..
                }),
            ) => {
                assert_eq!(asset.workspace_id.as_deref(), Some("acme"));
                assert_eq!(rows.expect("written").entries.len(), 1);
            }
            // The move landed first: the write saw the asset moved.
            (Err(StoreError::AssetOfAnotherWorkspace { id }), Ok(after)) => {
                assert_eq!(id, x.id);
                assert_eq!(after.workspace_id.as_deref(), Some("globex"));
                assert_eq!(asset, after);
                assert_eq!(rows, None);
            }
            (w, m) => panic!("round {round}: inconsistent outcome {w:?} / {m:?}"),
        }
        if let Some(rows) = store.load_library(lib.id).await.unwrap() {
            for row in &rows.entries {
                let held = store.get_asset(row.entry.asset_id).await.unwrap().unwrap();
                assert!(may_hold(
                    rows.library.settings.workspace_id.as_deref(),
                    held.workspace_id.as_deref()
                ));
            }
        }
    }
}
