//! Unit tests of the library records and slugs.

use super::*;
use crate::documents::Placed;

fn section(n: u8, order: u32) -> Section {
    Section {
        id: Uuid::from_bytes([n; 16]),
        title: format!("s{n}"),
        description: None,
        display_order: order,
        collapsed_by_default: false,
    }
}

fn entry(asset: u8, section: Option<u8>, order: u32) -> LibraryEntry {
    LibraryEntry {
        asset_id: Uuid::from_bytes([asset; 16]),
        section_id: section.map(|s| Uuid::from_bytes([s; 16])),
        display_order: order,
        title: None,
        description: None,
    }
}

fn label(item: &Placed<'_>) -> String {
    match item {
        Placed::Section(s) => format!("S{}", s.id.as_bytes()[0]),
        Placed::Entry(e) => format!("e{}", e.asset_id.as_bytes()[0]),
    }
}

#[test]
fn items_are_in_display_order() {
    let sections = [section(2, 1), section(1, 0)];
    let entries = [
        entry(10, None, 1),
        entry(11, Some(2), 1),
        entry(12, Some(1), 0),
        entry(13, Some(2), 0),
        entry(14, None, 0),
        entry(15, Some(9), 0),
    ];
    let order: Vec<String> = ordered_items(&sections, &entries)
        .iter()
        .map(label)
        .collect();
    assert_eq!(
        order,
        ["S1", "e12", "S2", "e13", "e11", "e14", "e10", "e15"]
    );
}

#[test]
fn entry_positions_follow_the_items() {
    let entries = [
        entry(10, None, 0),
        entry(11, Some(1), 0),
        entry(10, None, 1),
    ];
    let sections = [section(1, 0)];
    let items = ordered_items(&sections, &entries);
    let uses = entry_positions(&items);
    let id = |n: u8| Uuid::from_bytes([n; 16]);
    assert_eq!(uses.get(&id(11)), Some(&vec![1]));
    assert_eq!(uses.get(&id(10)), Some(&vec![2, 3]));
    assert_eq!(uses.len(), 2);
}
