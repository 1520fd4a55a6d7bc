//! Conformance cases of workspaces in the stores: the workspace of assets and keys, lists
//! filtered by it, slugs unique per workspace, and views counted only for a caller of the
//! library's workspace (DESIGN "Workspaces").

use super::*;
use crate::change::AssetChange;
use crate::model::ViewCount;
use crate::query::AssetStatus;

/// `title` in `workspace`, published, created at `t0 + secs`.
pub(super) fn asset_in(workspace: Option<&str>, title: &str, secs: i64) -> Asset {
    let mut asset = sample_asset(title, AssetType::Pdf, secs);
    asset.workspace_id = workspace.map(str::to_owned);
    asset
}

/// A published library `title` in `workspace`, created at `t0 + secs`.
pub(super) fn library_in(workspace: Option<&str>, title: &str, secs: i64) -> Library {
    let mut library = sample_library(title, secs);
    library.settings.workspace_id = workspace.map(str::to_owned);
    library
}

fn in_workspace(workspace: &str) -> AssetQuery {
    AssetQuery {
        workspace_id: Some(workspace.to_owned()),
        per_page: 100,
        ..AssetQuery::default()
    }
}

pub(super) async fn assets_keep_their_workspace_and_lists_filter_by_it(store: Arc<dyn Store>) {
    let mut made: HashMap<Option<&str>, Vec<Asset>> = HashMap::new();
    for i in 0..24 {
        let workspace = [Some("acme"), Some("globex"), None][i % 3];
        let mut asset = asset_in(workspace, &format!("Asset {:02}", 23 - i), i as i64);
        asset.published = i % 4 != 0;
        asset.tags = vec![if i % 2 == 0 { "even" } else { "odd" }.to_owned()];
        let stored = insert(&store, asset.clone()).await;
        assert_eq!(stored.workspace_id, asset.workspace_id);
        assert_eq!(
            store.get_asset(asset.id).await.unwrap(),
            Some(stored.clone())
        );
        made.entry(workspace).or_default().push(stored);
    }
    for workspace in ["acme", "globex"] {
        let mine = &made[&Some(workspace)];
        for (sort, order, status) in [
            (
                AssetSort::CreatedAt,
                SortOrder::Desc,
                AssetStatus::Published,
            ),
            (AssetSort::CreatedAt, SortOrder::Asc, AssetStatus::Any),
            (AssetSort::Title, SortOrder::Asc, AssetStatus::Published),
            (AssetSort::UpdatedAt, SortOrder::Desc, AssetStatus::Draft),
        ] {
            let mut want: Vec<&Asset> =
                mine.iter().filter(|a| status.admits(a.published)).collect();
            match sort {
                AssetSort::Title => want.sort_by_key(|a| (a.title.to_lowercase(), a.id)),
                _ => want.sort_by_key(|a| (a.created_at, a.id)),
            }
            if order == SortOrder::Desc {
                want.reverse();
            }
            let q = AssetQuery {
                sort,
                order,
                status,
                per_page: 3,
                page: 2,
                ..in_workspace(workspace)
            };
            let (items, total) = list(&store, q).await;
            assert_eq!(
                total,
                want.len() as u64,
                "{workspace} {sort:?} {order:?} {status:?}"
            );
            let ids: Vec<Uuid> = items.iter().map(|a| a.id).collect();
            let want: Vec<Uuid> = want.iter().skip(3).take(3).map(|a| a.id).collect();
            assert_eq!(ids, want, "{workspace} {sort:?} {order:?} {status:?}");
        }
        // With other filters: a tag, a search, a type.
        let q = AssetQuery {
            tags: vec!["even".to_owned()],
            ..in_workspace(workspace)
        };
        let (items, total) = list(&store, q).await;
        let want = mine
            .iter()
            .filter(|a| a.published && a.tags == ["even"])
            .count();
        assert_eq!((items.len(), total), (want, want as u64));
        let q = AssetQuery {
            search: Some("asset 0".to_owned()),
            asset_type: Some(AssetType::Pdf),
            ..in_workspace(workspace)
        };
        let (items, _) = list(&store, q).await;
        assert!(items.iter().all(
            |a| a.workspace_id.as_deref() == Some(workspace) && a.title.starts_with("Asset 0")
        ));
    }
    let (_, total) = list(&store, in_workspace("initech")).await;
    assert_eq!(total, 0, "a workspace with no assets lists none");
    let all = AssetQuery {
        status: AssetStatus::Any,
        per_page: 100,
        ..AssetQuery::default()
    };
    assert_eq!(
        list(&store, all).await.1,
        24,
        "no filter lists every workspace"
    );

    // A change keeps the workspace, and the filtered list follows it.
    let moved = &made[&Some("acme")][1];
    let mut change = AssetChange::at(t0() + Duration::days(1));
    change.title = Some("Renamed".to_owned());
    let after = store
        .update_asset(moved.id, &change, Log::ANONYMOUS)
        .await
        .unwrap()
        .unwrap()
        .after;
    assert_eq!(after.workspace_id.as_deref(), Some("acme"));
    let q = AssetQuery {
        sort: AssetSort::Title,
        order: SortOrder::Desc,
        ..in_workspace("acme")
    };
    assert_eq!(list(&store, q).await.0[0].id, moved.id);
    // A delete leaves the workspace's list.
    let gone = &made[&Some("globex")][1];
    store
        .delete_asset(gone.id, false, Log::ANONYMOUS)
        .await
        .unwrap();
    let (items, total) = list(&store, in_workspace("globex")).await;
    assert!(items.iter().all(|a| a.id != gone.id));
    let want = made[&Some("globex")]
        .iter()
        .filter(|a| a.published && a.id != gone.id)
        .count();
    assert_eq!(total, want as u64);
}

pub(super) async fn asset_slugs_are_unique_per_workspace(store: Arc<dyn Store>) {
    let mut slugs = Vec::new();
    for (i, workspace) in [Some("acme"), Some("globex"), None, Some("acme"), None]
        .into_iter()
        .enumerate()
    {
        let stored = insert(&store, asset_in(workspace, "Logo", i as i64)).await;
        slugs.push(stored.slug);
    }
    assert_eq!(slugs, ["logo", "logo", "logo", "logo-2", "logo-2"]);
}

pub(super) async fn library_slugs_are_unique_per_workspace(store: Arc<dyn Store>) {
    let put = |library: Library, slug_given: bool| {
        let store = store.clone();
        async move {
            store
                .put_library(
                    LibraryWrite {
                        library,
                        slug_given,
                        sections: vec![],
                        entries: vec![],
                    },
                    Log::ANONYMOUS,
                )
                .await
        }
    };
    let globex = library_in(Some("globex"), "Kit", 1);
    let none = library_in(None, "Kit", 2);
    let acme = library_in(Some("acme"), "Kit", 3);
    for library in [&globex, &none, &acme] {
        put(library.clone(), true).await.unwrap();
    }
    let holders = store.libraries_by_slug("kit").await.unwrap();
    let found: Vec<(Option<&str>, Uuid)> = holders
        .iter()
        .map(|h| (h.workspace_id.as_deref(), h.id))
        .collect();
    assert_eq!(
        found,
        [
            (None, none.id),
            (Some("acme"), acme.id),
            (Some("globex"), globex.id)
        ],
        "one per workspace, the one of no workspace first"
    );
    // Each library's workspace is told from its id.
    let workspace_of = |id: Uuid| {
        let store = store.clone();
        async move {
            store
                .library_workspace(id)
                .await
                .expect("library_workspace")
        }
    };
    assert_eq!(
        workspace_of(globex.id).await,
        Some(Some("globex".to_owned()))
    );
    assert_eq!(workspace_of(none.id).await, Some(None));
    assert_eq!(workspace_of(Uuid::new_v4()).await, None);
    // A view for a caller bound to a workspace counts only on a library of it.
    let views = |seen: Option<ViewCount>| seen.map(|s| s.views);
    let first = store.record_library_view(globex.id).await.unwrap();
    let first = views(first).expect("a published library counts a view");
    for (id, other) in [
        (globex.id, "acme"),
        (none.id, "globex"),
        (Uuid::new_v4(), "acme"),
    ] {
        let refused = store.record_library_view_in(id, other).await.unwrap();
        assert_eq!(refused, None, "{id} seen from {other}");
    }
    let seen = store.record_library_view_in(globex.id, "globex").await;
    assert_eq!(
        views(seen.unwrap()),
        Some(first + 1),
        "a view refused for another workspace counts nothing"
    );
    // A given slug taken in the same workspace is refused; a made one gets a number there.
    match put(library_in(Some("acme"), "Kit", 4), true).await {
        Err(StoreError::SlugTaken { slug }) => assert_eq!(slug, "kit"),
        other => panic!("expected SlugTaken, got {other:?}"),
    }
    let second = library_in(Some("acme"), "Kit", 5);
    put(second.clone(), false).await.unwrap();
    let loaded = store.load_library(second.id).await.unwrap().unwrap();
    assert_eq!(loaded.library.slug, "kit-2");
    // Moving a library to a workspace where its slug is taken is refused too; moving it
    // where it is free frees it in the first.
    let mut moved = acme.clone();
    moved.settings.workspace_id = Some("globex".to_owned());
    assert!(matches!(
        put(moved.clone(), true).await,
        Err(StoreError::SlugTaken { .. })
    ));
    moved.settings.workspace_id = Some("initech".to_owned());
    put(moved, true).await.unwrap();
    let found: Vec<Option<String>> = store
        .libraries_by_slug("kit")
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.workspace_id)
        .collect();
    assert_eq!(found, [None, Some("globex".into()), Some("initech".into())]);
    let again = library_in(Some("acme"), "Kit", 6);
    put(again, true).await.unwrap();
    // A delete frees the slug in its workspace only.
    assert!(store.delete_library(none.id, Log::ANONYMOUS).await.unwrap());
    let left = store.libraries_by_slug("kit").await.unwrap();
    assert_eq!(left.len(), 3);
    assert!(left.iter().all(|h| h.workspace_id.is_some()));
}

pub(super) async fn keys_keep_their_workspace(store: Arc<dyn Store>) {
    let key = |n: u8, workspace: Option<&str>| ApiKey {
        id: Uuid::new_v4(),
        name: format!("key {n}"),
        key_hash: [n; 32],
        scopes: vec![Scope::ReadAssets],
        created_at: t0() + Duration::seconds(i64::from(n)),
        expires_at: None,
        revoked_at: None,
        workspace_id: workspace.map(str::to_owned),
    };
    let acme = key(1, Some("acme"));
    let global = key(2, None);
    for k in [&acme, &global] {
        store.insert_key(k.clone(), Log::ANONYMOUS).await.unwrap();
    }
    assert_eq!(store.find_key(&[1; 32]).await.unwrap(), Some(acme.clone()));
    assert_eq!(
        store.find_key(&[2; 32]).await.unwrap(),
        Some(global.clone())
    );
    assert_eq!(store.list_keys().await.unwrap(), vec![acme.clone(), global]);
    assert_eq!(store.get_key(acme.id).await.unwrap(), Some(acme.clone()));
    assert_eq!(store.get_key(Uuid::new_v4()).await.unwrap(), None);
    let at = t0() + Duration::days(1);
    assert!(store.revoke_key(acme.id, at, Log::ANONYMOUS).await.unwrap());
    let revoked = store.find_key(&[1; 32]).await.unwrap().unwrap();
    assert_eq!(revoked.workspace_id.as_deref(), Some("acme"));
    assert_eq!(store.get_key(acme.id).await.unwrap(), Some(revoked));
}
