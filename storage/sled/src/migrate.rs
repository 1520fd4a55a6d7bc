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
//! Format 3 keeps in each entry item a copy of the fields of its asset that a library page
//! shows (title, description, type, thumbnail, published: [`ItemRec::Entry`]), so a library
//! load reads no asset record; formats 1 and 2 stored entries without it
//! ([`ItemRec::BareEntry`], the same encoding). The upgrade to 3 rewrites each library's
//! current entry items with copies from the asset records, one batch per library.
//!
//! Format 4 adds library passes (new trees, empty in an upgraded directory) and the scopes
//! `read:paid` and `write:passes` (codes 5 and 6). The upgrade to 4 gives `read:paid` to
//! every key that has `write:assets` and lacks it, in one batch; keys that have it are left
//! as they are, so it too may run any number of times. A format-3 version of this crate
//! that opens a directory whose upgrade to 4 was cut short after the batch fails, with an
//! unknown scope code, on the keys that gained `read:paid` (it cannot read them, and cannot
//! change them), and reads everything else.
//!
//! Format 5 adds previews: the thumbnail's placeholder and what an audio or video file plays,
//! on asset records and entry copies (`migrate_v5`).
//!
//! Format 6 adds tags and the file's checksum to asset records, tags to entry copies, and the
//! trees `asset_idx_tags` and `asset_idx_checksum` with the tag counts (empty in an upgraded
//! directory: no asset had tags or a checksum); the same rewrite as format 5's brings the
//! records to the new layout (`migrate_v5`).
//!
//! Format 7 adds workspaces: a workspace last on asset and key records (`None` for every
//! record an older format wrote), the lists and counts of each workspace's assets among the
//! tag lists (none in an upgraded directory: no asset had a workspace), and slugs unique per
//! workspace: a library of a workspace claims its slug under the workspace's key, so the
//! upgrade moves the claims of the libraries that had a workspace.
//!
//! Format 8 gives events and webhooks a workspace, last on their records: the upgrade appends
//! `None` to every webhook record (a store has a few); events are read either way, so the log
//! is not rewritten.
//!
//! The upgrades derive everything they write from the records, and the one to 2 begins by
//! clearing what format 2 adds, so a run cut short (a crash, or an older version of this crate
//! writing to the directory in between) is simply run again on the next open: the format
//! version is written last, after a flush of everything else. The upgrade to 3 reads entries
//! with or without copies alike and writes each copy afresh from the asset record, so it too
//! may run any number of times. A format-2 version of this crate that opens a directory whose
//! upgrade to 3 was cut short fails, with a decode error, on the libraries already rewritten
//! (it does not know a copied entry) and cannot change them; the asset changes it makes meanwhile
//! are copied by the next run of the upgrade.

use std::collections::BTreeMap;

use assetlib_core::Scope;
use sled::{Batch, Tree};
use uuid::Uuid;

use crate::Inner;
use crate::error::Error;
use crate::record::{
    AssetRec, EntryCopy, ItemRec, KeyRec, LibraryRec, UsesRec, decode, decode_id, encode,
};
use crate::tree_keys;
use crate::versions;
use crate::webhooks::WebhookRec;

/// Gives every record of `tree` (records `T`, a few of them) the last field a newer format ends
/// `T` with, an `Option` that is `None`: postcard's one zero byte, appended to each record of
/// an older format, in one batch. A record that reads as `T` already is left alone, so this
/// may run any number of times.
fn append_none<T: serde::de::DeserializeOwned>(
    tree: &Tree,
    what: &'static str,
) -> Result<(), Error> {
    let mut batch = Batch::default();
    for kv in tree.iter() {
        let (key, value) = kv?;
        if decode::<T>(what, &value).is_ok() {
            continue;
        }
        let with_none = [&value[..], &[0]].concat();
        decode::<T>(what, &with_none)?;
        batch.insert(key, with_none);
    }
    tree.apply_batch(batch)?;
    Ok(())
}

/// Format 1's asset epoch in the `versions` tree: a version every library had at least.
const LEGACY_ASSET_EPOCH: &[u8] = b"a";

/// Assets per batch of index keys.
const CHUNK: usize = 4096;

impl Inner {
    /// Brings a database of format `from` to [`crate::FORMAT_VERSION`] (all but writing the
    /// version).
    pub(crate) fn upgrade(&self, from: u32) -> Result<(), Error> {
        if from < 7 {
            self.keys_to_7()?;
            self.assets_to_current()?;
        }
        if from < 2 {
            self.upgrade_to_2()?;
        }
        if from < 3 {
            self.upgrade_to_3()?;
        }
        if from < 4 {
            self.upgrade_to_4()?;
        }
        if from < 6 {
            self.entries_to_current()?;
        }
        if from < 7 {
            self.library_slugs_to_7()?;
        }
        if from < 8 {
            self.webhooks_to_8()?;
        }
        Ok(())
    }

    /// Gives every webhook record the workspace format 8 ends it with (`None`), as
    /// [`Inner::keys_to_7`] does keys. Events are not rewritten: an older one reads as one of
    /// no workspace ([`crate::events::EventRec::decode`]).
    fn webhooks_to_8(&self) -> Result<(), Error> {
        append_none::<WebhookRec>(&self.webhooks, WebhookRec::WHAT)
    }

    /// Gives every key record the workspace format 7 ends it with (`None`).
    fn keys_to_7(&self) -> Result<(), Error> {
        append_none::<KeyRec>(&self.keys, KeyRec::WHAT)
    }

    /// Moves the slug claim of every library of a workspace under its workspace's key
    /// ([`tree_keys::library_slug`]): format 6 kept every library's under the bare slug. One
    /// batch per chunk of libraries; a claim already moved is not found under the bare slug,
    /// so this too may run any number of times.
    fn library_slugs_to_7(&self) -> Result<(), Error> {
        let mut batch = Batch::default();
        let mut queued = 0;
        for kv in self.libraries.iter() {
            let (key, value) = kv?;
            let rec: LibraryRec = decode(LibraryRec::WHAT, &value)?;
            let Some(workspace) = rec.workspace_id.as_deref() else {
                continue;
            };
            let id = decode_id("library id", &key)?;
            let bare = tree_keys::library_slug(None, &rec.slug);
            match self.library_slugs.get(&bare)? {
                Some(holder) if decode_id("library slug", &holder)? == id => {
                    batch.remove(bare);
                    let moved = tree_keys::library_slug(Some(workspace), &rec.slug);
                    batch.insert(moved, id.as_bytes().to_vec());
                    queued += 1;
                }
                _ => continue,
            }
            if queued == CHUNK {
                self.library_slugs.apply_batch(std::mem::take(&mut batch))?;
                queued = 0;
            }
        }
        self.library_slugs.apply_batch(batch)?;
        Ok(())
    }

    /// Gives `read:paid` to every key that has `write:assets` and lacks it, all in one batch
    /// (a store has a few keys, not millions): its code is added at the end of the key's
    /// scopes, and nothing else of the record changes.
    fn upgrade_to_4(&self) -> Result<(), Error> {
        let write_assets = tree_keys::scope_code(Scope::WriteAssets);
        let read_paid = tree_keys::scope_code(Scope::ReadPaid);
        let mut batch = Batch::default();
        for kv in self.keys.iter() {
            let (key, value) = kv?;
            let mut rec: KeyRec = decode(KeyRec::WHAT, &value)?;
            if rec.scopes.contains(&write_assets) && !rec.scopes.contains(&read_paid) {
                rec.scopes.push(read_paid);
                batch.insert(key, encode(KeyRec::WHAT, &rec)?);
            }
        }
        self.keys.apply_batch(batch)?;
        Ok(())
    }

    /// Gives every entry of every library's current items a copy of its asset's page fields,
    /// from the asset record: each library's items in one batch, so a library is rewritten
    /// whole or not at all. Entries that already have a copy (from a run cut short) get it
    /// again from the record; an entry whose asset is missing (which format 2 does not leave)
    /// is emptied, as a delete of the asset would have, and the asset's uses lose the library.
    fn upgrade_to_3(&self) -> Result<(), Error> {
        let removed = encode(ItemRec::WHAT, &ItemRec::Removed)?;
        for kv in self.libraries.iter() {
            let (key, value) = kv?;
            let id = decode_id("library key", &key)?;
            let rec: LibraryRec = decode(LibraryRec::WHAT, &value)?;
            let mut batch = Batch::default();
            let mut lost: Vec<Uuid> = Vec::new();
            let prefix = tree_keys::items_prefix(id, rec.generation);
            for item in self.library_items.scan_prefix(prefix) {
                let (item_key, item_value) = item?;
                let item: ItemRec = decode(ItemRec::WHAT, &item_value)?;
                let Some(asset_id) = item.asset_id() else {
                    continue;
                };
                match self.assets.get(asset_id.as_bytes())? {
                    Some(asset) => {
                        let asset: AssetRec = decode(AssetRec::WHAT, &asset)?;
                        let item = item.with_copy(EntryCopy::of(&asset));
                        batch.insert(item_key, encode(ItemRec::WHAT, &item)?);
                    }
                    None => {
                        batch.insert(item_key, removed.as_slice());
                        lost.push(asset_id);
                    }
                }
            }
            self.library_items.apply_batch(batch)?;
            for asset in lost {
                if let Some(v) = self.asset_uses.get(asset.as_bytes())? {
                    let mut uses: UsesRec = decode(UsesRec::WHAT, &v)?;
                    uses.remove(id);
                    if uses.holders.is_empty() {
                        self.asset_uses.remove(asset.as_bytes())?;
                    } else {
                        self.asset_uses
                            .insert(asset.as_bytes(), encode(UsesRec::WHAT, &uses)?)?;
                    }
                }
            }
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
                let item: ItemRec = decode(ItemRec::WHAT, &item_value)?;
                let Some(asset_id) = item.asset_id() else {
                    continue;
                };
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
#[path = "migrate_tests/mod.rs"]
pub(crate) mod tests;

/// The format version the directory of `meta` says it has, checked: a new directory is given
/// [`crate::FORMAT_VERSION`] (and flushed); a newer one than this crate knows, or 0, is
/// refused.
pub(crate) fn format_of(
    db: &sled::Db,
    meta: &Tree,
    path: &std::path::Path,
    sled_error: impl Fn(sled::Error) -> crate::OpenError,
) -> Result<u32, crate::OpenError> {
    use crate::{FORMAT_KEY, FORMAT_VERSION, OpenError};
    let Some(v) = meta.get(FORMAT_KEY).map_err(&sled_error)? else {
        meta.insert(FORMAT_KEY, &FORMAT_VERSION.to_be_bytes())
            .map_err(&sled_error)?;
        db.flush().map_err(&sled_error)?;
        return Ok(FORMAT_VERSION);
    };
    let corrupt = |detail: String| OpenError::Corrupt {
        path: path.to_path_buf(),
        detail,
    };
    let found = tree_keys::decode_u32("format version", &v).map_err(|e| corrupt(e.to_string()))?;
    if found > FORMAT_VERSION {
        return Err(OpenError::NewerFormat {
            path: path.to_path_buf(),
            found,
            supported: FORMAT_VERSION,
        });
    }
    if found == 0 {
        return Err(corrupt("format version 0".into()));
    }
    Ok(found)
}

/// The mark in `meta` that says the search index holds every asset, in the layout of this
/// build (`search.rs`).
pub(crate) const SEARCH_INDEXED: &[u8] = b"search_indexed_3";

/// The marks of the index's older layouts, removed when it is built again (or not kept).
pub(crate) const OLDER_SEARCH_MARKS: [&[u8]; 2] = [b"search_indexed", b"search_indexed_2"];

/// Brings the search index in line with whether this build keeps it (feature `search`; see
/// `search.rs`): built when missing, or marked as not kept.
pub(crate) fn sync_search(inner: &Inner, meta: &Tree) -> Result<(), Error> {
    #[cfg(feature = "search")]
    return inner.sync_search_index(meta);
    #[cfg(not(feature = "search"))]
    {
        let _ = inner;
        // The trees of the index are left as they are: a build with the feature clears them
        // before it builds them again.
        for mark in OLDER_SEARCH_MARKS.into_iter().chain([SEARCH_INDEXED]) {
            meta.remove(mark)?;
        }
        Ok(())
    }
}
