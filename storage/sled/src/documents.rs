//! A library document's items in the `library_items` tree: their display order, the positions
//! of each asset's entries, and reading, comparing and removing a stored document's parts.
//!
//! A replace that leaves the items as they are (a changed title or description, the common
//! edit) keeps the stored items and their asset uses: it reads them, finds every one equal to
//! what it would write, and writes only the library record. Any difference writes the whole
//! document under a new generation, as before.

use std::collections::{BTreeMap, HashMap};

use assetlib_core::{LibraryEntry, Section};
use sled::IVec;
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::error::{Error, TxError, abort};
use crate::record::{EntryCopy, ItemRec, LibraryRec, decode, decode_id, encode};
use crate::tree_keys;
use crate::tx::{self, add_count};

/// The stored items of `old` (library `id`), in position order.
pub(crate) fn stored_items(
    items: &TransactionalTree,
    id: Uuid,
    old: &LibraryRec,
) -> Result<Vec<IVec>, TxError> {
    (0..old.item_count)
        .map(|position| {
            items
                .get(tree_keys::item(id, old.generation, position))?
                .ok_or_else(|| {
                    abort(Error::invalid(
                        "library items",
                        format!("library {id} lacks its item {position}"),
                    ))
                })
        })
        .collect()
}

/// The items as they are stored: each entry with the copy of its asset's fields.
pub(crate) fn encode_items(
    ordered: &[Placed<'_>],
    copies: &HashMap<Uuid, EntryCopy>,
) -> Result<Vec<Vec<u8>>, TxError> {
    ordered
        .iter()
        .map(|item| {
            let item = match item {
                Placed::Section(s) => ItemRec::section(s),
                Placed::Entry(e) => {
                    let copy = copies
                        .get(&e.asset_id)
                        .cloned()
                        .ok_or_else(|| abort(Error::UnknownAsset(e.asset_id)))?;
                    ItemRec::entry(e, copy)
                }
            };
            encode(ItemRec::WHAT, &item).map_err(abort)
        })
        .collect()
}

/// Whether the stored items are exactly the encoded new ones.
pub(crate) fn same_items(stored: &[IVec], new: &[Vec<u8>]) -> bool {
    stored.len() == new.len() && stored.iter().zip(new).all(|(a, b)| a[..] == b[..])
}

/// Removes the stored items of `old` (read by [`stored_items`]) and the asset uses of its
/// entries.
pub(crate) fn remove_items(
    items: &TransactionalTree,
    uses: &TransactionalTree,
    id: Uuid,
    old: &LibraryRec,
    stored: &[IVec],
) -> Result<(), TxError> {
    for (position, value) in (0u32..).zip(stored) {
        let item: ItemRec = decode(ItemRec::WHAT, value).map_err(abort)?;
        if let Some(asset) = item.asset_id() {
            let mut rec = tx::read_uses(uses, asset)?;
            rec.remove(id);
            tx::write_uses(uses, asset, &rec)?;
        }
        items.remove(&tree_keys::item(id, old.generation, position)[..])?;
    }
    Ok(())
}

/// Removes what lists a stored document: its slug claim, its list index keys and its share
/// of the counts.
pub(crate) fn remove_listing(
    slugs: &TransactionalTree,
    (published, workspaces, counts): (&TransactionalTree, &TransactionalTree, &TransactionalTree),
    id: Uuid,
    old: &LibraryRec,
) -> Result<(), TxError> {
    let slug = tree_keys::library_slug(old.workspace_id.as_deref(), &old.slug);
    if let Some(holder) = slugs.get(&slug)?
        && decode_id("library slug", &holder).map_err(abort)? == id
    {
        slugs.remove(slug)?;
    }
    if let Some(at) = old.listed_at().map_err(abort)? {
        published.remove(&tree_keys::library_published(&at, id)[..])?;
        add_count(counts, tree_keys::COUNT_LIBRARIES, -1)?;
        if let Some(ws) = &old.workspace_id {
            workspaces.remove(tree_keys::library_workspace(ws, &at, id))?;
            add_count(counts, &tree_keys::count_workspace(ws), -1)?;
        }
    }
    Ok(())
}

/// One item of a document being written, before its entries get their assets' copies.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Placed<'a> {
    Section(&'a Section),
    Entry(&'a LibraryEntry),
}

/// The positions of each asset's entries among `items`, ascending.
pub(crate) fn entry_positions(items: &[Placed<'_>]) -> BTreeMap<Uuid, Vec<u32>> {
    let mut uses: BTreeMap<Uuid, Vec<u32>> = BTreeMap::new();
    for (position, item) in (0u32..).zip(items) {
        if let Placed::Entry(e) = item {
            uses.entry(e.asset_id).or_default().push(position);
        }
    }
    uses
}

/// The items of a document in display order: each section (by `display_order`, then document
/// position) followed by its entries (likewise), then the unsectioned entries, then entries
/// naming a section the document does not have (kept as given; core decides what they mean).
pub(crate) fn ordered_items<'a>(
    sections: &'a [Section],
    entries: &'a [LibraryEntry],
) -> Vec<Placed<'a>> {
    let mut sections: Vec<&Section> = sections.iter().collect();
    sections.sort_by_key(|s| s.display_order);
    let mut slot: HashMap<Uuid, usize> = HashMap::with_capacity(sections.len());
    for (i, s) in sections.iter().enumerate() {
        slot.entry(s.id).or_insert(i);
    }
    let mut sectioned: Vec<Vec<&LibraryEntry>> = vec![Vec::new(); sections.len()];
    let mut unsectioned = Vec::new();
    let mut orphans = Vec::new();
    for e in entries {
        match e.section_id.map(|s| slot.get(&s)) {
            None => unsectioned.push(e),
            Some(Some(&i)) => sectioned[i].push(e),
            Some(None) => orphans.push(e),
        }
    }
    let mut items = Vec::with_capacity(sections.len() + entries.len());
    for (section, mut list) in sections.into_iter().zip(sectioned) {
        items.push(Placed::Section(section));
        list.sort_by_key(|e| e.display_order);
        items.extend(list.into_iter().map(Placed::Entry));
    }
    for mut list in [unsectioned, orphans] {
        list.sort_by_key(|e| e.display_order);
        items.extend(list.into_iter().map(Placed::Entry));
    }
    items
}
