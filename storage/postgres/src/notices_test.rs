//! Unit tests of `notices.rs`: notices read, and versions moved by what they say.

use super::*;
use assetlib_core::AssetSort;

#[test]
fn notices_parse_and_the_unreadable_mean_everything() {
    let id = Uuid::new_v4();
    let me = new_origin();
    let other = new_origin();
    assert_eq!(Notice::parse("a", &me), Some(Notice::Assets));
    assert_eq!(
        Notice::parse(&format!("a {other}"), &me),
        Some(Notice::Assets)
    );
    assert_eq!(Notice::parse(&format!("a {me}"), &me), None, "its own");
    assert_eq!(
        Notice::parse(&format!("l{id} {other}"), &me),
        Some(Notice::Library(id))
    );
    assert_eq!(Notice::parse(&format!("k{id}"), &me), Some(Notice::Key));
    assert_eq!(
        Notice::parse(&format!("a{id} {other}"), &me),
        Some(Notice::Asset(id, ListOrders::EVERY)),
        "an insert, a delete, or a notice of schema 17-22"
    );
    assert_eq!(
        Notice::parse(&format!("a{id}/6 {other}"), &me),
        Some(Notice::Asset(id, ListOrders::TITLE | ListOrders::UPDATED))
    );
    assert_eq!(
        Notice::parse(&format!("a{id}/0"), &me),
        Some(Notice::Asset(id, ListOrders::NONE))
    );
    let bad_orders = [
        format!("a{id}/8"),
        format!("a{id}/"),
        format!("a{id}/-1"),
        format!("a{id}/x"),
        format!("a{id}/1/2"),
        format!("a/{id}"),
    ];
    for bad in bad_orders.iter().map(String::as_str).chain([
        "",
        "x",
        "ab",
        "lnot-an-id",
        "k",
        "é",
        "l",
        " ",
        "anot-an-id",
    ]) {
        assert_eq!(Notice::parse(bad, &me), Some(Notice::Everything), "{bad:?}");
    }
    assert_eq!(
        Notice::parse("a", ""),
        Some(Notice::Assets),
        "no origin is not its own"
    );
}

#[test]
fn own_writes_move_their_assets_and_a_notice_moves_every_asset() {
    let r = Replica::default();
    r.live.store(true, Ordering::Release);
    let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
    let va = r.asset_version(a).expect("live");
    let vb = r.asset_version(b).expect("live");
    r.assets_changed([a]);
    let va2 = r.asset_version(a).expect("live");
    assert_ne!(va2, va, "a write of this process moves its asset");
    assert_eq!(r.asset_version(b), Some(vb), "and leaves another's");
    r.changed(Notice::Asset(a, ListOrders::EVERY));
    let va3 = r.asset_version(a).expect("live");
    assert_ne!(va3, va2, "another's notice of a moves a");
    assert_eq!(r.asset_version(b), Some(vb), "and leaves b");
    r.changed(Notice::Assets);
    assert_ne!(
        r.asset_version(a),
        Some(va3),
        "a notice of the assets moves a"
    );
    assert_ne!(r.asset_version(b), Some(vb), "and b");

    // Not listening: the database's version decides, and its move moves every asset.
    r.live.store(false, Ordering::Release);
    assert_eq!(r.asset_version(b), None);
    let v = r.asset_version_at(5, b);
    assert_eq!(r.asset_version_at(5, b), v);
    assert_ne!(r.asset_version_at(6, b), v);
}

#[test]
fn an_asset_notice_moves_the_list_orders_it_names_alone() {
    let r = Replica::default();
    r.live.store(true, Ordering::Release);
    let by = |sort| AssetQuery {
        sort,
        ..AssetQuery::default()
    };
    let [created, title, updated] = [AssetSort::CreatedAt, AssetSort::Title, AssetSort::UpdatedAt]
        .map(|sort| r.list_version(&by(sort)).expect("live"));
    let a = Uuid::from_u128(1);
    let v = r.asset_version(a).expect("live");
    r.changed(Notice::Asset(a, ListOrders::TITLE | ListOrders::UPDATED));
    assert_ne!(r.asset_version(a), Some(v), "the asset moves");
    assert_eq!(r.list_version(&by(AssetSort::CreatedAt)), Some(created));
    assert_ne!(r.list_version(&by(AssetSort::Title)), Some(title));
    let updated2 = r.list_version(&by(AssetSort::UpdatedAt)).expect("live");
    assert_ne!(updated2, updated);
    let title2 = r.list_version(&by(AssetSort::Title)).expect("live");

    r.changed(Notice::Asset(a, ListOrders::NONE));
    assert_eq!(r.list_version(&by(AssetSort::Title)), Some(title2));
    assert_eq!(r.list_version(&by(AssetSort::UpdatedAt)), Some(updated2));
    r.changed(Notice::Asset(a, ListOrders::EVERY));
    assert_ne!(r.list_version(&by(AssetSort::CreatedAt)), Some(created));
}

#[test]
fn versions_move_with_what_changed_and_never_repeat() {
    let r = Replica::default();
    r.live.store(true, Ordering::Release);
    let a = r.assets_version().expect("live");
    let k = r.keys_version().expect("live");
    let id = Uuid::new_v4();
    let mark = r.mark();
    let lv = r.learn_library(id, (7, 3, mark), Some("acme"));
    let known = r.known_library(id).expect("known");
    assert_eq!(known.workspace.as_deref(), Some("acme"));
    r.changed(Notice::Key);
    assert_eq!(
        r.assets_version(),
        Some(a),
        "a key notice leaves the assets"
    );
    assert_ne!(r.keys_version(), Some(k));
    assert!(r.known_library(id).is_some());
    r.changed(Notice::Library(id));
    assert!(r.known_library(id).is_none());
    let mark = r.mark();
    assert_ne!(
        r.learn_library(id, (8, 3, mark), None),
        lv,
        "a new content version"
    );
    assert_eq!(
        r.learn_library(id, (8, 4, r.mark()), None),
        r.known_library(id).expect("known").version
    );
    r.changed(Notice::Assets);
    assert_ne!(r.assets_version(), Some(a));
    // A read that overlapped a change of another library is trusted; one that overlapped a
    // change of its own library, or of every library, is answered but not trusted.
    let mark = r.mark();
    r.changed(Notice::Library(Uuid::new_v4()));
    r.learn_library(id, (8, 4, mark), None);
    assert!(r.known_library(id).is_some(), "another library changed");
    let mark = r.mark();
    r.changed(Notice::Library(id));
    r.learn_library(id, (8, 4, mark), None);
    assert!(r.known_library(id).is_none(), "its own change overlapped");
    let mark = r.mark();
    r.assets_updated([], Some(&[Uuid::new_v4(), id]));
    r.learn_library(id, (8, 4, mark), None);
    assert!(r.known_library(id).is_none(), "an asset it holds changed");
    r.learn_library(id, (8, 4, r.mark()), None);
    r.assets_updated([], Some(&[Uuid::new_v4()]));
    assert!(
        r.known_library(id).is_some(),
        "an asset it does not hold changed"
    );
    let mark = r.mark();
    r.changed(Notice::Everything);
    let v9 = r.learn_library(id, (9, 5, mark), None);
    assert!(r.known_library(id).is_none(), "every library changed");
    // A notice makes it stale; a read finding the same content keeps its version.
    assert_eq!(r.learn_library(id, (9, 5, r.mark()), None), v9);
    r.changed(Notice::Library(id));
    assert!(r.known_library(id).is_none());
    assert_eq!(r.learn_library(id, (9, 6, r.mark()), None), v9);
    r.unknown_library(id);
    assert_ne!(
        r.learn_library(id, (9, 6, r.mark()), None),
        v9,
        "forgotten when gone"
    );
    // Strict: nothing is answered from memory.
    r.set_mode(ReplicaSync::Strict);
    assert_eq!(r.assets_version(), None);
    assert_eq!(r.keys_version(), None);
    r.set_mode(ReplicaSync::Notify);
    r.live.store(false, Ordering::Release);
    assert_eq!(r.assets_version(), None, "not live");
}

#[test]
fn a_read_is_trusted_after_the_changes_kept_were_emptied_only_if_it_began_after() {
    let r = Replica::default();
    r.live.store(true, Ordering::Release);
    let id = Uuid::new_v4();
    let early = r.mark();
    for _ in 0..CHANGES_KEPT {
        r.changed(Notice::Library(Uuid::new_v4()));
    }
    let late = r.mark();
    // The next change empties what was kept: a read that began before it is not trusted.
    r.changed(Notice::Library(Uuid::new_v4()));
    r.learn_library(id, (1, 0, early), None);
    assert!(
        r.known_library(id).is_none(),
        "began before the changes kept"
    );
    r.learn_library(id, (1, 0, late), None);
    assert!(r.known_library(id).is_none(), "began before the emptying");
    r.learn_library(id, (1, 0, r.mark()), None);
    assert!(r.known_library(id).is_some(), "began after it");
}

#[test]
fn a_checked_assets_version_moves_only_when_the_database_moves() {
    let r = Replica::default();
    let v1 = r.assets_version_at(10);
    assert_eq!(r.assets_version_at(10), v1);
    assert_eq!(
        r.assets_version_at(9),
        v1,
        "an older answer changes nothing"
    );
    let v2 = r.assets_version_at(11);
    assert_ne!(v2, v1);
    r.changed(Notice::Assets);
    assert_ne!(
        r.assets_version_at(11),
        v2,
        "a write of this process moves it"
    );
}
