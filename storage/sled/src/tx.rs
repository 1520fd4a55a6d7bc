//! Helpers for code inside sled transactions.

use assetlib_core::Asset;
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::error::{Error, TxError, abort};
use crate::record::{UsesRec, decode, encode};
use crate::tree_keys;

/// Adds `delta` to the count at `key` in the `counts` tree; a count that reaches zero is
/// removed, so the tree holds only live workspaces and types.
pub(crate) fn add_count(counts: &TransactionalTree, key: &[u8], delta: i64) -> Result<(), TxError> {
    let old = match counts.get(key)? {
        Some(v) => tree_keys::decode_u64("count", &v).map_err(abort)?,
        None => 0,
    };
    let new = old.checked_add_signed(delta).ok_or_else(|| {
        abort(Error::invalid(
            "count",
            format!("{old} {delta:+} is out of range"),
        ))
    })?;
    if new == 0 {
        counts.remove(key)?;
    } else {
        counts.insert(key, &new.to_be_bytes()[..])?;
    }
    Ok(())
}

/// The asset index trees of a transaction, in the order of [`crate::Inner::index_trees`]: the
/// three sorts in the order of [`tree_keys::SORTS`], the tag index and the checksum index;
/// with the language the words of kept texts are stemmed in (feature `search`).
#[derive(Clone, Copy)]
pub(crate) struct IndexTrees<'a> {
    pub(crate) trees: &'a [TransactionalTree],
    /// The language the words of kept texts are stemmed in (feature `search`;
    /// `SledConfig::search_language`).
    #[cfg(feature = "search")]
    pub(crate) language: Option<assetlib_core::search::Language>,
}

/// The trees a transaction that writes assets ends with, as
/// [`crate::Inner::push_asset_trees`] lists them and [`crate::Inner::asset_trees_tx`] finds
/// them in the transaction.
pub(crate) struct AssetTrees<'a> {
    /// The kept texts and their words (feature `search`).
    #[cfg(feature = "search")]
    pub(crate) texts: [&'a TransactionalTree; 2],
    /// The asset index trees.
    pub(crate) indexes: IndexTrees<'a>,
}

impl crate::Inner {
    /// Appends to `trees` the ones a transaction that writes assets ends with: with feature
    /// `search` the kept texts and their words, then [`crate::Inner::index_trees`].
    pub(crate) fn push_asset_trees<'a>(&'a self, trees: &mut Vec<&'a sled::Tree>) {
        #[cfg(feature = "search")]
        trees.extend([&self.search.texts, &self.search.text_words]);
        trees.extend(self.index_trees());
    }

    /// The trees [`crate::Inner::push_asset_trees`] appended, found at the end of a
    /// transaction's, `rest`.
    pub(crate) fn asset_trees_tx<'a>(
        &self,
        rest: &'a [TransactionalTree],
    ) -> Result<AssetTrees<'a>, TxError> {
        #[cfg(feature = "search")]
        let [texts, text_words, indexes @ ..] = rest else {
            return Err(abort(Error::invalid("transaction", "a tree is missing")));
        };
        #[cfg(not(feature = "search"))]
        let indexes = rest;
        Ok(AssetTrees {
            #[cfg(feature = "search")]
            texts: [texts, text_words],
            indexes: self.index_tx(indexes),
        })
    }

    /// The asset index trees `trees` of a transaction (over [`crate::Inner::index_trees`]).
    pub(crate) fn index_tx<'a>(&self, trees: &'a [TransactionalTree]) -> IndexTrees<'a> {
        IndexTrees {
            trees,
            #[cfg(feature = "search")]
            language: self.search.language,
        }
    }
}

/// Every index key of `asset`, per tree of [`IndexTrees`].
fn index_keys(asset: &Asset) -> Vec<Vec<Vec<u8>>> {
    let [created, updated, title] = tree_keys::asset_index_keys(asset).map(Vec::from);
    let checksum = asset
        .checksum_sha256
        .as_ref()
        .map(|c| tree_keys::checksum_index(c, asset.id).to_vec())
        .into_iter()
        .collect();
    vec![
        created,
        updated,
        title,
        tree_keys::asset_list_keys(asset),
        checksum,
    ]
}

/// Every count `asset` is counted in.
fn counted_in(asset: &Asset) -> Vec<Vec<u8>> {
    let mut keys = Vec::from(tree_keys::counts_of(asset.published, asset.asset_type));
    keys.extend(tree_keys::list_counts_of(asset));
    keys
}

/// Writes the index keys and counts of `asset` (`add`) or removes them (`!add`).
pub(crate) fn asset_keys(
    indexes: IndexTrees<'_>,
    counts: &TransactionalTree,
    asset: &Asset,
    add: bool,
) -> Result<(), TxError> {
    for (tree, keys) in indexes.trees.iter().zip(index_keys(asset)) {
        for key in keys {
            if add {
                tree.insert(key, &[][..])?;
            } else {
                tree.remove(key)?;
            }
        }
    }
    for key in counted_in(asset) {
        add_count(counts, &key, if add { 1 } else { -1 })?;
    }
    Ok(())
}

/// Moves the index keys and counts of an asset from how it was (`old`) to how it is (`new`),
/// touching only the keys that differ.
pub(crate) fn move_asset_keys(
    indexes: IndexTrees<'_>,
    counts: &TransactionalTree,
    old: &Asset,
    new: &Asset,
) -> Result<(), TxError> {
    let (old_keys, new_keys) = (index_keys(old), index_keys(new));
    for ((tree, old_keys), new_keys) in indexes.trees.iter().zip(old_keys).zip(new_keys) {
        for key in old_keys.iter().filter(|k| !new_keys.contains(k)) {
            tree.remove(key.as_slice())?;
        }
        for key in new_keys.iter().filter(|k| !old_keys.contains(k)) {
            tree.insert(key.as_slice(), &[][..])?;
        }
    }
    let (before, after) = (counted_in(old), counted_in(new));
    for key in before.iter().filter(|k| !after.contains(k)) {
        add_count(counts, key, -1)?;
    }
    for key in after.iter().filter(|k| !before.contains(k)) {
        add_count(counts, key, 1)?;
    }
    Ok(())
}

/// The libraries holding `asset`, as the `asset_uses` tree of a transaction says.
pub(crate) fn read_uses(uses: &TransactionalTree, asset: Uuid) -> Result<UsesRec, TxError> {
    match uses.get(asset.as_bytes())? {
        Some(value) => decode(UsesRec::WHAT, &value).map_err(abort),
        None => Ok(UsesRec::default()),
    }
}

/// Stores the libraries holding `asset` (removing its key when none does).
pub(crate) fn write_uses(
    uses: &TransactionalTree,
    asset: Uuid,
    rec: &UsesRec,
) -> Result<(), TxError> {
    if rec.holders.is_empty() {
        uses.remove(asset.as_bytes())?;
    } else {
        uses.insert(asset.as_bytes(), encode(UsesRec::WHAT, rec).map_err(abort)?)?;
    }
    Ok(())
}
