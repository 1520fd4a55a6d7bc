//! `store::AssetVersions`: which writes move which list's version (the lists a kept page
//! is checked against), and that a search or checksum list moves with every asset.

use assetlib_core::store::AssetVersions;
use assetlib_core::testing::sample_asset;
use assetlib_core::{Asset, AssetQuery, AssetSort, AssetType, AssetUpdate};

fn asset(title: &str) -> Asset {
    sample_asset(title, AssetType::Pdf, 1)
}

fn update(before: &Asset, change: impl FnOnce(&mut Asset)) -> AssetUpdate {
    let mut after = before.clone();
    change(&mut after);
    AssetUpdate {
        before: before.clone(),
        after,
    }
}

fn lists(v: &AssetVersions) -> [u64; 3] {
    [AssetSort::CreatedAt, AssetSort::Title, AssetSort::UpdatedAt].map(|sort| {
        v.list(&AssetQuery {
            sort,
            ..AssetQuery::default()
        })
    })
}

#[test]
fn lists_move_with_the_orders_a_change_can_move() {
    let v = AssetVersions::new();
    let a = asset("A");
    let start = lists(&v);

    v.updated([&update(&a, |a| a.description = Some("d".into()))]);
    assert_eq!(lists(&v), start, "a description moves no order");

    v.updated([&update(&a, |a| {
        a.updated_at += chrono::Duration::seconds(1)
    })]);
    let now = lists(&v);
    assert_eq!(now[..2], start[..2]);
    assert_ne!(now[2], start[2], "a new updated_at moves the order by it");

    let before = lists(&v);
    v.updated([&update(&a, |a| a.title = "B".into())]);
    let now = lists(&v);
    assert_eq!(now[0], before[0]);
    assert_ne!(now[1], before[1], "a new title moves the order by title");

    for change in [
        (|a: &mut Asset| a.published = false) as fn(&mut Asset),
        |a| a.tags.push("t".into()),
        |a| a.asset_type = AssetType::Image,
        |a| a.workspace_id = Some("w".into()),
    ] {
        let before = lists(&v);
        v.updated([&update(&a, change)]);
        let now = lists(&v);
        assert!(before.iter().zip(&now).all(|(b, n)| b != n), "every order");
    }

    let before = lists(&v);
    v.counted([a.id]);
    v.updated([&update(&a, |_| {})]);
    assert_eq!(lists(&v), before, "a count or no change moves no list");
    v.moved([a.id]);
    let now = lists(&v);
    assert!(before.iter().zip(&now).all(|(b, n)| b != n), "a create");
    v.moved_all();
    assert!(now.iter().zip(lists(&v)).all(|(b, n)| *b != n), "anything");
}

#[test]
fn a_search_or_a_checksum_list_moves_with_every_asset() {
    let v = AssetVersions::new();
    let search = AssetQuery {
        search: Some("x".into()),
        ..AssetQuery::default()
    };
    let sum = AssetQuery {
        checksum: Some([0; 32]),
        ..AssetQuery::default()
    };
    let a = asset("A");
    let before = (v.list(&search), v.list(&sum));
    v.updated([&update(&a, |a| a.description = Some("x".into()))]);
    assert_ne!(v.list(&search), before.0);
    assert_ne!(v.list(&sum), before.1);
    assert_eq!(v.list(&search), v.all());
}
