//! The case of `AssetStore::list_version`: a store that keeps list versions moves each one on
//! every write that can change which assets its lists hold, in what order, or how many (and
//! the lists read after each write show it).

use crate::change::{AssetChange, TagChange};
use crate::events::Log;
use crate::query::AssetStatus;
use crate::testing::*;

/// The lists the case follows, by name.
fn followed() -> Vec<(&'static str, AssetQuery)> {
    let by = |sort| AssetQuery {
        sort,
        order: SortOrder::Asc,
        ..AssetQuery::default()
    };
    vec![
        ("newest first", AssetQuery::default()),
        ("by title", by(AssetSort::Title)),
        ("by last change", by(AssetSort::UpdatedAt)),
        (
            "pdfs",
            AssetQuery {
                asset_type: Some(AssetType::Pdf),
                ..AssetQuery::default()
            },
        ),
        (
            "tagged",
            AssetQuery {
                tags: vec!["kept".into()],
                ..AssetQuery::default()
            },
        ),
        (
            "drafts too",
            AssetQuery {
                status: AssetStatus::Any,
                ..AssetQuery::default()
            },
        ),
        (
            "a search",
            AssetQuery {
                search: Some("ledger".into()),
                ..AssetQuery::default()
            },
        ),
    ]
}

/// Each followed list's version now (`None` for a store that keeps none).
async fn versions(store: &Arc<dyn Store>) -> Vec<Option<u64>> {
    let mut out = Vec::new();
    for (_, q) in followed() {
        out.push(store.list_version(&q).await.expect("list_version"));
    }
    out
}

/// Applies `change` to asset `id`.
async fn change(store: &Arc<dyn Store>, id: Uuid, change: &AssetChange) {
    store
        .update_asset(id, change, Log::ANONYMOUS)
        .await
        .expect("update_asset")
        .expect("the asset exists");
}

/// Checks that `write` moved the lists named in `moved` (all of them for `None`), each to
/// a version it never had before. A list without a version now (a store that keeps none,
/// or none at the moment: a PostgreSQL store before it listens) promises nothing.
fn check_moved(seen: &mut [Vec<u64>], now: &[Option<u64>], moved: Option<&[&str]>, write: &str) {
    for (((name, _), versions), v) in followed().iter().zip(seen.iter_mut()).zip(now) {
        let Some(v) = *v else { continue };
        if moved.is_none_or(|names| names.contains(name)) {
            assert!(
                !versions.contains(&v),
                "{write} kept or reused the version of list {name}"
            );
        }
        versions.push(v);
    }
}

pub(in crate::testing) async fn list_versions_move_with_what_lists_hold(store: Arc<dyn Store>) {
    let mut seen: Vec<Vec<u64>> = versions(&store)
        .await
        .iter()
        .map(|v| v.map_or_else(Vec::new, |v| vec![v]))
        .collect();
    let mut step = |now: Vec<Option<u64>>, moved: Option<&[&str]>, write: &str| {
        check_moved(&mut seen, &now, moved, write);
    };

    let a = insert(&store, sample_asset("Ledger", AssetType::Pdf, 1)).await;
    step(versions(&store).await, None, "an insert");
    let b = insert(&store, sample_asset("Atlas", AssetType::Pdf, 2)).await;
    step(versions(&store).await, None, "an insert");
    assert_eq!(
        list(&store, followed()[1].1.clone()).await.0[0].id,
        b.id,
        "Atlas first by title"
    );

    // A new title moves the lists by title, by last change, and those a search reads.
    let mut renamed = AssetChange::at(t0() + Duration::seconds(10));
    renamed.title = Some("Zodiac ledger".into());
    change(&store, b.id, &renamed).await;
    let by_title_and_change: &[&str] = &["by title", "by last change", "a search"];
    step(
        versions(&store).await,
        Some(by_title_and_change),
        "a new title",
    );
    let (by_title, _) = list(&store, followed()[1].1.clone()).await;
    assert_eq!(
        by_title[0].id, a.id,
        "the list by title reads the new title"
    );

    // A description changed at a new time moves the lists by last change and a search's.
    let mut described = AssetChange::at(t0() + Duration::seconds(20));
    described.description = Some(Some("Accounts".into()));
    change(&store, a.id, &described).await;
    step(
        versions(&store).await,
        Some(&["by last change", "a search"]),
        "a new description",
    );

    // Which assets the lists hold: every list moves.
    let mut tagged = AssetChange::at(t0() + Duration::seconds(30));
    tagged.tags = Some(TagChange::Add(vec!["kept".into()]));
    change(&store, a.id, &tagged).await;
    step(versions(&store).await, None, "a new tag");
    let mut unpublished = AssetChange::at(t0() + Duration::seconds(40));
    unpublished.published = Some(false);
    change(&store, b.id, &unpublished).await;
    step(versions(&store).await, None, "a withdrawal");
    let bulk = store
        .update_assets(&[a.id, b.id], &tagged, Log::ANONYMOUS)
        .await
        .expect("update_assets");
    assert!(matches!(bulk, crate::change::BulkOutcome::Done(_)));
    step(versions(&store).await, None, "a bulk change of tags");
    assert_eq!(
        list(&store, followed()[4].1.clone()).await.1,
        1,
        "one tagged"
    );
    asset_versions_share_the_assets_scale(&store, a.id, b.id).await;
    force_delete(&store, a.id).await;
    step(versions(&store).await, None, "a delete");
    assert_eq!(list(&store, AssetQuery::default()).await.1, 0);
}

/// A store that keeps list versions keeps its asset versions on the scale of the assets
/// version: a write of an asset moves its version past the assets version read before, and no
/// asset's version is past the assets version read after it.
async fn asset_versions_share_the_assets_scale(store: &Arc<dyn Store>, a: Uuid, b: Uuid) {
    if store
        .list_version(&AssetQuery::default())
        .await
        .expect("list_version")
        .is_none()
    {
        return;
    }
    let before = store.assets_version().await.expect("assets_version");
    let mut described = AssetChange::at(t0() + Duration::seconds(50));
    described.description = Some(Some("Ledgers".into()));
    change(store, a, &described).await;
    let moved = store.asset_version(a).await.expect("asset_version");
    assert!(
        moved > before,
        "a write of an asset moves its version ({moved}) past the assets version read before it ({before})"
    );
    let versions = store.asset_versions(&[a, b]).await.expect("asset_versions");
    let after = store.assets_version().await.expect("assets_version");
    assert!(
        versions.iter().all(|&v| v <= after),
        "asset versions {versions:?} past the assets version read after them ({after})"
    );
}
