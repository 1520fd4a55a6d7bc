//! Upgrades of databases written in an older format, run by [`crate::SledStore::open`] before
//! it serves.
//!
//! Format 1 listed published assets only, counted each library's published assets when the
//! library was written, let a library hold entries of missing assets (left out of its page),
//! and kept one asset epoch in `versions` (`a`) that every asset change advanced for every
//! library. Format 2 adds the draft and all-assets index families, the draft counts and the
//! `asset_uses` index, keeps each library's published-asset count exact and versions each
//! library on its own.
//!
//! The upgrade derives everything it writes from the records, and begins by clearing what
//! format 2 adds, so a run cut short (a crash, or an older version of this crate writing to
//! the directory in between) is simply run again on the next open: the format version is
//! written last, after a flush of everything else.

use std::collections::BTreeMap;

use sled::{Batch, Tree};
use uuid::Uuid;

use crate::Inner;
use crate::error::Error;
use crate::record::{AssetRec, ItemRec, LibraryRec, UsesRec, decode, decode_id, encode};
use crate::tree_keys;
use crate::versions;

/// Format 1's asset epoch in the `versions` tree: a version every library had at least.
const LEGACY_ASSET_EPOCH: &[u8] = b"a";

/// Assets per batch of index keys.
const CHUNK: usize = 4096;

impl Inner {
    /// Brings a database of format `from` to [`crate::FORMAT_VERSION`] (all but writing the
    /// version).
    pub(crate) fn upgrade(&self, from: u32) -> Result<(), Error> {
        if from < 2 {
            self.upgrade_to_2()?;
        }
        Ok(())
    }

    fn upgrade_to_2(&self) -> Result<(), Error> {
        let indexes = [
            &self.asset_idx_created,
            &self.asset_idx_updated,
            &self.asset_idx_title,
        ];
        // What an earlier, unfinished run may have left.
        for tree in indexes {
            clear_from(tree, &[tree_keys::DRAFTS])?;
        }
        self.asset_uses.clear()?;

        // Every asset in every list it belongs to, and the asset counts.
        let mut counts: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        let mut batches: [Batch; 3] = Default::default();
        let mut pending = 0usize;
        for kv in self.assets.iter() {
            let (key, value) = kv?;
            let id = decode_id("asset key", &key)?;
            let asset = decode::<AssetRec>(AssetRec::WHAT, &value)?.into_asset(id, 0)?;
            for (batch, keys) in batches.iter_mut().zip(tree_keys::asset_index_keys(&asset)) {
                for key in keys {
                    batch.insert(key, &[][..]);
                }
            }
            for key in tree_keys::counts_of(asset.published, asset.asset_type) {
                *counts.entry(key).or_default() += 1;
            }
            pending += 1;
            if pending == CHUNK {
                apply(indexes, &mut batches)?;
                pending = 0;
            }
        }
        apply(indexes, &mut batches)?;
        let mut batch = Batch::default();
        for kv in self.counts.iter() {
            let (key, _) = kv?;
            if tree_keys::is_asset_count(&key) && !counts.contains_key(key.as_ref()) {
                batch.remove(key);
            }
        }
        for (key, n) in counts {
            batch.insert(key, &n.to_be_bytes()[..]);
        }
        self.counts.apply_batch(batch)?;

        // Each library: its asset uses, its entries of missing assets emptied, its exact
        // published-asset count, and its version at least the old asset epoch.
        let epoch = match self.versions.get(LEGACY_ASSET_EPOCH)? {
            Some(v) => tree_keys::decode_u64("asset epoch", &v)?,
            None => 0,
        };
        let removed = encode(ItemRec::WHAT, &ItemRec::Removed)?;
        let mut all_uses: BTreeMap<Uuid, UsesRec> = BTreeMap::new();
        for kv in self.libraries.iter() {
            let (key, value) = kv?;
            let id = decode_id("library key", &key)?;
            let mut rec: LibraryRec = decode(LibraryRec::WHAT, &value)?;
            let mut uses: BTreeMap<Uuid, Vec<u32>> = BTreeMap::new();
            let mut asset_count = 0u64;
            let mut emptied = Batch::default();
            let prefix = tree_keys::items_prefix(id, rec.generation);
            for item in self.library_items.scan_prefix(prefix) {
                let (item_key, item_value) = item?;
                let ItemRec::Entry { asset_id, .. } = decode(ItemRec::WHAT, &item_value)? else {
                    continue;
                };
                let asset_id = Uuid::from_bytes(asset_id);
                match self.assets.get(asset_id.as_bytes())? {
                    Some(asset) => {
                        let asset: AssetRec = decode(AssetRec::WHAT, &asset)?;
                        asset_count += u64::from(asset.published);
                        let position = tree_keys::item_position(&item_key)?;
                        uses.entry(asset_id).or_default().push(position);
                    }
                    None => emptied.insert(item_key, removed.as_slice()),
                }
            }
            self.library_items.apply_batch(emptied)?;
            for (asset, positions) in uses {
                all_uses.entry(asset).or_default().set(id, positions);
            }
            if rec.asset_count != asset_count {
                rec.asset_count = asset_count;
                self.libraries
                    .insert(key, encode(LibraryRec::WHAT, &rec)?)?;
            }
            let version_key = versions::library(id);
            let own = match self.versions.get(version_key)? {
                Some(v) => tree_keys::decode_u64("version", &v)?,
                None => 0,
            };
            if epoch > own {
                self.versions
                    .insert(&version_key[..], &epoch.to_be_bytes()[..])?;
            }
        }
        let mut batch = Batch::default();
        for (n, (asset, rec)) in all_uses.iter().enumerate() {
            batch.insert(asset.as_bytes(), encode(UsesRec::WHAT, rec)?);
            if (n + 1) % CHUNK == 0 {
                self.asset_uses.apply_batch(std::mem::take(&mut batch))?;
            }
        }
        self.asset_uses.apply_batch(batch)?;
        self.versions.remove(LEGACY_ASSET_EPOCH)?;
        Ok(())
    }
}

/// Removes every key of `tree` from `start` on.
fn clear_from(tree: &Tree, start: &[u8]) -> Result<(), Error> {
    let mut batch = Batch::default();
    let mut pending = 0usize;
    for key in tree.range(start..).keys() {
        batch.remove(key?);
        pending += 1;
        if pending == CHUNK {
            tree.apply_batch(std::mem::take(&mut batch))?;
            pending = 0;
        }
    }
    tree.apply_batch(batch)?;
    Ok(())
}

/// Applies and empties one batch per index tree.
fn apply(trees: [&Tree; 3], batches: &mut [Batch; 3]) -> Result<(), Error> {
    for (tree, batch) in trees.into_iter().zip(batches.iter_mut()) {
        tree.apply_batch(std::mem::take(batch))?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "migrate_tests.rs"]
mod tests;
