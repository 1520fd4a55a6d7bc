//! The asset lifecycle: changes, deletes and the libraries that hold an asset.
//!
//! The `asset_uses` tree says which libraries hold an asset: asset id -> each library holding
//! it with the positions of the asset's entries among the library's items ([`UsesRec`]). It
//! is one key per asset because a sled transaction reads keys but cannot scan (and a scan of
//! the tree itself inside a transaction would wait forever for the lock the transaction
//! holds), and the transactions here must see the holders exactly. Library writes and deletes
//! keep it in their transactions; a change of an asset follows it to the libraries whose
//! content version and published-asset count change and to the entries whose copy of the
//! asset's page fields it rewrites ([`ItemRec::Entry`], so a library load reads no asset),
//! and a delete to the entries it removes (each becomes [`ItemRec::Removed`], which a load
//! skips).
//! A library write reads the asset records and writes their uses, a change or delete of an
//! asset reads its uses: so sled serializes a delete with a write placing the asset, and the
//! delete either comes first (the write then finds the asset missing) or sees the library.

use assetlib_core::events::Event;
use assetlib_core::{Asset, AssetChange, AssetDeletion, AssetUpdate, LibraryUse};
use chrono::{DateTime, Utc};
use sled::Transactional;
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::Inner;
use crate::error::{Error, TxError, abort};
use crate::events::EventSlot;
use crate::record::{AssetRec, EntryCopy, HolderRec, ItemRec, LibraryRec, UsesRec, decode, encode};
use crate::tree_keys;
use crate::tx;
use crate::versions;

impl Inner {
    /// Applies `change` to asset `id` in one transaction: the record, its index keys and
    /// counts, and for every library holding it a new content version, (when `published`
    /// flips) its published-asset count, and (when a field a page shows changes: title,
    /// description, type, thumbnail or `published`) the copy of those fields in each of the
    /// asset's entries.
    pub(crate) fn update_asset(
        &self,
        id: Uuid,
        change: &AssetChange,
        event: &EventSlot,
    ) -> Result<Option<AssetUpdate>, Error> {
        let done = (
            &self.assets,
            &self.asset_idx_created,
            &self.asset_idx_updated,
            &self.asset_idx_title,
            &self.counts,
            &self.asset_uses,
            &self.library_items,
            &self.libraries,
            &self.versions,
            &self.events,
        )
            .transaction(
                |(assets, created, updated, title, counts, uses, items, libs, versions, events)| {
                    let Some(value) = assets.get(id.as_bytes())? else {
                        return Ok(None);
                    };
                    let before = decode::<AssetRec>(AssetRec::WHAT, &value)
                        .and_then(|rec| rec.into_asset(id, 0))
                        .map_err(abort)?;
                    let Some(after) = change.apply(&before) else {
                        return Ok(Some((before.clone(), before)));
                    };
                    tx::move_asset_keys([created, updated, title], counts, &before, &after)?;
                    let rec_after = AssetRec::new(&after);
                    let value = encode(AssetRec::WHAT, &rec_after).map_err(abort)?;
                    assets.insert(&id.as_bytes()[..], value)?;
                    let flip = match (before.published, after.published) {
                        (false, true) => 1,
                        (true, false) => -1,
                        _ => 0,
                    };
                    let copy = EntryCopy::of(&rec_after);
                    let recopy = copy != EntryCopy::of(&AssetRec::new(&before));
                    for holder in tx::read_uses(uses, id)?.holders {
                        if recopy {
                            let library = holder.library();
                            let mut rec = held_library(libs, &holder)?;
                            for &position in &holder.positions {
                                let key = tree_keys::item(library, rec.generation, position);
                                let item = held_entry(items, &key, id, library)?;
                                let value = encode(ItemRec::WHAT, &item.with_copy(copy.clone()))
                                    .map_err(abort)?;
                                items.insert(&key[..], value)?;
                            }
                            if flip != 0 {
                                rec.asset_count = shift(rec.asset_count, flip, &holder)?;
                                put_library_rec(libs, library, &rec)?;
                            }
                        }
                        versions::bump_library(versions, holder.library())?;
                    }
                    if let Some(changed) = Event::asset_changed(&before, &after) {
                        event.put(events, changed)?;
                    }
                    Ok(Some((before, after)))
                },
            )?;
        let Some((before, after)) = done else {
            return Ok(None);
        };
        let download_count = self.counter(&tree_keys::downloads(id))?.unwrap_or(0);
        Ok(Some(AssetUpdate {
            before: Asset {
                download_count,
                ..before
            },
            after: Asset {
                download_count,
                ..after
            },
        }))
    }

    /// Deletes asset `id` unless libraries hold it and `force` is false, in one transaction:
    /// the record, its index keys, counts, download counter and uses, and its entries in every
    /// library holding it (each becomes [`ItemRec::Removed`], and the library gets a new
    /// content version and, for a published asset, a smaller published-asset count). The slug
    /// claim stays, so the slug is never given again.
    ///
    /// The downloads counted but not yet written go with it: the transaction runs under the
    /// counting lock (see [`crate::counting`]).
    pub(crate) fn delete_asset(
        &self,
        id: Uuid,
        force: bool,
        event: &EventSlot,
    ) -> Result<AssetDeletion, Error> {
        let mut deltas = self.counting.lock();
        let deletion = (
            &self.assets,
            &self.asset_idx_created,
            &self.asset_idx_updated,
            &self.asset_idx_title,
            &self.counts,
            &self.counters,
            &self.asset_uses,
            &self.library_items,
            &self.libraries,
            &self.versions,
            &self.events,
        )
            .transaction(
                |(
                    assets,
                    created,
                    updated,
                    title,
                    counts,
                    counters,
                    uses,
                    items,
                    libs,
                    versions,
                    events,
                )| {
                    let Some(value) = assets.get(id.as_bytes())? else {
                        return Ok(AssetDeletion::NotFound);
                    };
                    let holders = tx::read_uses(uses, id)?.holders;
                    if !holders.is_empty() && !force {
                        let mut users = Vec::with_capacity(holders.len());
                        for holder in &holders {
                            let rec = held_library(libs, holder)?;
                            let created_at = rec.created_at.time().map_err(abort)?;
                            users.push((created_at, rec.library_use(holder.library())));
                        }
                        return Ok(AssetDeletion::InUse(newest_first(users)));
                    }
                    let downloads_key = tree_keys::downloads(id);
                    let downloads = match counters.get(downloads_key)? {
                        Some(v) => tree_keys::decode_u64("counter", &v).map_err(abort)?,
                        None => 0,
                    };
                    let asset = decode::<AssetRec>(AssetRec::WHAT, &value)
                        .and_then(|rec| rec.into_asset(id, downloads))
                        .map_err(abort)?;
                    assets.remove(&id.as_bytes()[..])?;
                    counters.remove(&downloads_key[..])?;
                    tx::asset_keys([created, updated, title], counts, &asset, false)?;
                    tx::write_uses(uses, id, &UsesRec::default())?;
                    let removed = encode(ItemRec::WHAT, &ItemRec::Removed).map_err(abort)?;
                    for holder in holders {
                        let library = holder.library();
                        let mut rec = held_library(libs, &holder)?;
                        for &position in &holder.positions {
                            let key = tree_keys::item(library, rec.generation, position);
                            held_entry(items, &key, id, library)?;
                            items.insert(&key[..], removed.as_slice())?;
                        }
                        if asset.published {
                            rec.asset_count = shift(rec.asset_count, -1, &holder)?;
                        }
                        put_library_rec(libs, library, &rec)?;
                        versions::bump_library(versions, library)?;
                    }
                    event.put(events, Event::asset_deleted(id))?;
                    Ok(AssetDeletion::Deleted(asset))
                },
            )?;
        Ok(match deletion {
            AssetDeletion::Deleted(mut asset) => {
                let unwritten = deltas.remove(&tree_keys::downloads(id)).unwrap_or(0);
                asset.download_count = asset.download_count.saturating_add(unwritten);
                AssetDeletion::Deleted(asset)
            }
            other => other,
        })
    }

    /// The libraries holding asset `id`, newest `created_at` first, then by id descending.
    /// A library deleted while the uses are read is left out.
    pub(crate) fn asset_usage(&self, id: Uuid) -> Result<Vec<LibraryUse>, Error> {
        let holders = match self.get(&self.asset_uses, id.as_bytes())? {
            Some(value) => decode::<UsesRec>(UsesRec::WHAT, &value)?.holders,
            None => Vec::new(),
        };
        let mut users = Vec::with_capacity(holders.len());
        for holder in holders {
            let library = holder.library();
            if let Some(rec) = self.library_rec(library)? {
                users.push((rec.created_at.time()?, rec.library_use(library)));
            }
        }
        Ok(newest_first(users))
    }
}

/// The libraries by `created_at` descending, then id descending.
fn newest_first(mut users: Vec<(DateTime<Utc>, LibraryUse)>) -> Vec<LibraryUse> {
    users.sort_by(|(a_at, a), (b_at, b)| (b_at, b.id).cmp(&(a_at, a.id)));
    users.into_iter().map(|(_, u)| u).collect()
}

/// The record of a library that an asset's uses name; its absence is corruption.
fn held_library(libs: &TransactionalTree, holder: &HolderRec) -> Result<LibraryRec, TxError> {
    let Some(value) = libs.get(holder.library)? else {
        return Err(abort(Error::invalid(
            "asset uses",
            format!("name missing library {}", holder.library()),
        )));
    };
    decode(LibraryRec::WHAT, &value).map_err(abort)
}

fn put_library_rec(libs: &TransactionalTree, id: Uuid, rec: &LibraryRec) -> Result<(), TxError> {
    libs.insert(
        &id.as_bytes()[..],
        encode(LibraryRec::WHAT, rec).map_err(abort)?,
    )?;
    Ok(())
}

/// `count` moved by `sign` times the holder's entries; leaving `0..` is corruption.
fn shift(count: u64, sign: i64, holder: &HolderRec) -> Result<u64, TxError> {
    let n = u64::try_from(holder.positions.len()).unwrap_or(u64::MAX);
    let shifted = if sign < 0 {
        count.checked_sub(n)
    } else {
        count.checked_add(n)
    };
    shifted.ok_or_else(|| {
        abort(Error::invalid(
            "library asset count",
            format!("library {}: {count} {sign:+} x {n}", holder.library()),
        ))
    })
}

/// The item at `key`, which the asset's uses say is an entry of asset `asset`; anything else
/// there is corruption.
fn held_entry(
    items: &TransactionalTree,
    key: &[u8],
    asset: Uuid,
    library: Uuid,
) -> Result<ItemRec, TxError> {
    let item = match items.get(key)? {
        Some(value) => Some(decode::<ItemRec>(ItemRec::WHAT, &value).map_err(abort)?),
        None => None,
    };
    match item {
        Some(item) if item.asset_id() == Some(asset) => Ok(item),
        _ => Err(abort(Error::invalid(
            "asset uses",
            format!("library {library} has no entry of asset {asset} where its uses say"),
        ))),
    }
}
