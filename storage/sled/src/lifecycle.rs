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

use assetlib_core::StoreError;
use assetlib_core::events::{Log, Written};
use assetlib_core::store::rules;
use assetlib_core::{
    Asset, AssetChange, AssetDeletion, AssetUpdate, BulkOutcome, BulkRefusal, ChangeRefused,
    LibraryUse, TagCount, may_hold,
};
use chrono::{DateTime, Utc};
use sled::Transactional;
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::error::{Error, TxError, abort};
use crate::events::EventSlot;
use crate::record::{AssetRec, EntryCopy, HolderRec, ItemRec, LibraryRec, UsesRec, decode, encode};
use crate::tree_keys;
use crate::tx;
use crate::versions;
use crate::{Inner, SledStore};

/// The trees of a change or delete of assets, in a transaction.
struct AssetTx<'a> {
    assets: &'a TransactionalTree,
    indexes: tx::IndexTrees<'a>,
    counts: &'a TransactionalTree,
    counters: &'a TransactionalTree,
    uses: &'a TransactionalTree,
    items: &'a TransactionalTree,
    libs: &'a TransactionalTree,
    versions: &'a TransactionalTree,
    events: &'a TransactionalTree,
    /// The slug claims, for a move to another workspace.
    slugs: &'a TransactionalTree,
    /// The kept texts and their words (feature `search`), which go with a deleted asset.
    #[cfg(feature = "search")]
    texts: [&'a TransactionalTree; 2],
}

/// What a step of a transaction found for one asset before it writes anything.
enum Step<T> {
    /// Go on: the asset as read.
    Go(T),
    /// Stop: there is no such asset, libraries hold it, or it cannot take the change.
    Stop(BulkRefusal),
}

impl SledStore {
    /// Runs a write of up to `n` events (one change of several assets) as
    /// [`SledStore::logged_write`] does, with `n` places reserved in the log; a place whose
    /// event is not written stays empty.
    pub(crate) async fn logged_bulk_write<T, F>(
        &self,
        n: usize,
        log: &Log,
        f: F,
    ) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Inner, &[EventSlot]) -> Result<T, Error> + Send + 'static,
    {
        let reserved: Vec<crate::events::Reserved> = (0..n)
            .map(|_| self.inner.event_seq.reserve(log.clone()))
            .collect();
        let (value, _flown) = self
            .write(move |inner| {
                let slots: Vec<EventSlot> = reserved.iter().map(|r| r.slot().clone()).collect();
                Ok((f(inner, &slots)?, reserved))
            })
            .await?;
        Ok(value)
    }
}

impl Inner {
    /// Runs `f` in one transaction over every tree a change or delete of assets touches.
    fn asset_tx<T>(&self, f: impl Fn(&AssetTx<'_>) -> Result<T, TxError>) -> Result<T, Error> {
        let mut trees = vec![
            &self.assets,
            &self.counts,
            &self.counters,
            &self.asset_uses,
            &self.library_items,
            &self.libraries,
            &self.versions,
            &self.events,
            &self.asset_slugs,
        ];
        self.push_asset_trees(&mut trees);
        Ok(trees.as_slice().transaction(|trees| {
            let [
                assets,
                counts,
                counters,
                uses,
                items,
                libs,
                versions,
                events,
                slugs,
                rest @ ..,
            ] = trees.as_slice()
            else {
                return Err(abort(Error::invalid("transaction", "a tree is missing")));
            };
            let tail = self.asset_trees_tx(rest)?;
            f(&AssetTx {
                assets,
                indexes: tail.indexes,
                counts,
                counters,
                uses,
                items,
                libs,
                versions,
                events,
                slugs,
                #[cfg(feature = "search")]
                texts: tail.texts,
            })
        })?)
    }

    /// Applies `change` to asset `id` in one transaction: the record, its index keys and
    /// counts, and for every library holding it a new content version, (when `published`
    /// flips) its published-asset count, and (when a field a page shows changes: title,
    /// description, type, thumbnail, `published` or tags) the copy of those fields in each of
    /// the asset's entries.
    pub(crate) fn update_asset(
        &self,
        id: Uuid,
        change: &AssetChange,
        event: &EventSlot,
    ) -> Result<Option<AssetUpdate>, Error> {
        let done = self.asset_tx(|t| match plan_update(t, id, change)? {
            Step::Go((before, after)) => write_update(t, before, after, event).map(Ok),
            Step::Stop(BulkRefusal::Refused(reason)) => Ok(Err(Some(reason))),
            Step::Stop(_) => Ok(Err(None)),
        })?;
        match done {
            Ok((before, after)) => Ok(Some(self.with_downloads(before, after)?)),
            Err(None) => Ok(None),
            Err(Some(reason)) => Err(Error::Refused { id, reason }),
        }
    }

    /// Applies `change` to every asset of `ids` in one transaction, as
    /// [`Inner::update_asset`] does to one, or to none when one of them stops it.
    pub(crate) fn update_assets(
        &self,
        ids: &[Uuid],
        change: &AssetChange,
        slots: &[EventSlot],
    ) -> Result<BulkOutcome<AssetUpdate>, Error> {
        let done = self.asset_tx(|t| {
            let planned = match plan_all(ids, |id| plan_update(t, id, change))? {
                BulkOutcome::Done(planned) => planned,
                BulkOutcome::Refused(refused) => return Ok(BulkOutcome::Refused(refused)),
            };
            let mut done = Vec::with_capacity(planned.len());
            for ((before, after), slot) in planned.into_iter().zip(slots) {
                done.push(write_update(t, before, after, slot)?);
            }
            Ok(BulkOutcome::Done(done))
        })?;
        Ok(match done {
            BulkOutcome::Done(done) => BulkOutcome::Done(
                done.into_iter()
                    .map(|(before, after)| self.with_downloads(before, after))
                    .collect::<Result<_, _>>()?,
            ),
            BulkOutcome::Refused(refused) => BulkOutcome::Refused(refused),
        })
    }

    /// The update with the asset's download count.
    fn with_downloads(&self, before: Asset, after: Asset) -> Result<AssetUpdate, Error> {
        let download_count = self.counter(&tree_keys::downloads(after.id))?.unwrap_or(0);
        Ok(AssetUpdate {
            before: Asset {
                download_count,
                ..before
            },
            after: Asset {
                download_count,
                ..after
            },
        })
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
        let mut counts = self.counting.lock();
        let deletion = self.asset_tx(|t| match plan_delete(t, id, force)? {
            Step::Go((asset, holders)) => {
                write_delete(t, &asset, holders, event)?;
                Ok(AssetDeletion::Deleted(asset))
            }
            Step::Stop(BulkRefusal::InUse(users)) => Ok(AssetDeletion::InUse(users)),
            Step::Stop(_) => Ok(AssetDeletion::NotFound),
        })?;
        Ok(match deletion {
            AssetDeletion::Deleted(mut asset) => {
                let unwritten = counts.forget(&tree_keys::downloads(id));
                asset.download_count = asset.download_count.saturating_add(unwritten);
                AssetDeletion::Deleted(asset)
            }
            other => other,
        })
    }

    /// Deletes every asset of `ids` in one transaction, as [`Inner::delete_asset`] does one,
    /// or none when one of them is missing or held (without `force`).
    pub(crate) fn delete_assets(
        &self,
        ids: &[Uuid],
        force: bool,
        slots: &[EventSlot],
    ) -> Result<BulkOutcome<Asset>, Error> {
        let mut counts = self.counting.lock();
        let outcome = self.asset_tx(|t| {
            let planned = match plan_all(ids, |id| plan_delete(t, id, force))? {
                BulkOutcome::Done(planned) => planned,
                BulkOutcome::Refused(refused) => return Ok(BulkOutcome::Refused(refused)),
            };
            let mut gone = Vec::with_capacity(planned.len());
            for ((asset, holders), slot) in planned.into_iter().zip(slots) {
                write_delete(t, &asset, holders, slot)?;
                gone.push(asset);
            }
            Ok(BulkOutcome::Done(gone))
        })?;
        Ok(match outcome {
            BulkOutcome::Done(mut gone) => {
                for asset in &mut gone {
                    let unwritten = counts.forget(&tree_keys::downloads(asset.id));
                    asset.download_count = asset.download_count.saturating_add(unwritten);
                }
                BulkOutcome::Done(gone)
            }
            refused => refused,
        })
    }

    /// The tags of published assets with their counts, from the kept counts.
    pub(crate) fn list_tags(&self, limit: u32) -> Result<Vec<TagCount>, Error> {
        let prefix = tree_keys::list_counts_prefix(tree_keys::PUBLISHED);
        let mut all = Vec::new();
        for kv in self.counts.scan_prefix(prefix) {
            let (key, value) = kv?;
            self.touched(1);
            let Some(tag) = tree_keys::tag_of_count(&key) else {
                continue;
            };
            let tag = std::str::from_utf8(tag)
                .map_err(|_| Error::invalid("tag count", "a tag key that is not UTF-8"))?;
            all.push((tag.to_owned(), tree_keys::decode_u64("count", &value)?));
        }
        Ok(rules::top_tags(all, limit))
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

/// Plans the step of every asset of `ids` before any is written: every plan, or every id
/// that stops the change with why.
fn plan_all<T>(
    ids: &[Uuid],
    mut plan: impl FnMut(Uuid) -> Result<Step<T>, TxError>,
) -> Result<BulkOutcome<T>, TxError> {
    let mut planned = Vec::with_capacity(ids.len());
    let mut refused = Vec::new();
    for &id in ids {
        match plan(id)? {
            Step::Go(found) => planned.push(found),
            Step::Stop(why) => refused.push((id, why)),
        }
    }
    Ok(if refused.is_empty() {
        BulkOutcome::Done(planned)
    } else {
        BulkOutcome::Refused(refused)
    })
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

/// Reads asset `id` and what `change` makes of it, writing nothing.
fn plan_update(
    t: &AssetTx<'_>,
    id: Uuid,
    change: &AssetChange,
) -> Result<Step<(Asset, Option<Asset>)>, TxError> {
    let Some(value) = t.assets.get(id.as_bytes())? else {
        return Ok(Step::Stop(BulkRefusal::NotFound));
    };
    let before = decode::<AssetRec>(AssetRec::WHAT, &value)
        .and_then(|rec| rec.into_asset(id, 0))
        .map_err(abort)?;
    let after = match change.apply(&before) {
        Ok(after) => after,
        Err(reason) => return Ok(Step::Stop(BulkRefusal::Refused(reason))),
    };
    if let Some(to) = after
        .as_ref()
        .map(|a| a.workspace_id.as_deref())
        .filter(|&to| to != before.workspace_id.as_deref())
    {
        for holder in tx::read_uses(t.uses, id)?.holders {
            let library = held_library(t.libs, &holder)?;
            if !may_hold(library.workspace_id.as_deref(), to) {
                let reason = ChangeRefused::HeldInAnotherWorkspace;
                return Ok(Step::Stop(BulkRefusal::Refused(reason)));
            }
        }
    }
    Ok(Step::Go((before, after)))
}

/// Writes a planned change of one asset (nothing when `after` is `None`): the record, its
/// keys and counts, its holders' versions, counts and entry copies, and its event.
fn write_update(
    t: &AssetTx<'_>,
    before: Asset,
    after: Option<Asset>,
    event: &EventSlot,
) -> Result<(Asset, Asset), TxError> {
    let Some(mut after) = after else {
        return Ok((before.clone(), before));
    };
    let id = before.id;
    if after.workspace_id != before.workspace_id {
        // The claim in the old workspace stays, as a deleted asset's does.
        let wanted = (after.workspace_id.as_deref(), before.slug.as_str());
        after.slug = crate::assets::claim_asset_slug(t.slugs, wanted, id)?;
    }
    tx::move_asset_keys(t.indexes, t.counts, &before, &after)?;
    let rec_after = AssetRec::new(&after);
    let value = encode(AssetRec::WHAT, &rec_after).map_err(abort)?;
    t.assets.insert(&id.as_bytes()[..], value)?;
    let flip = match (before.published, after.published) {
        (false, true) => 1,
        (true, false) => -1,
        _ => 0,
    };
    let copy = EntryCopy::of(&rec_after);
    let recopy = copy != EntryCopy::of(&AssetRec::new(&before));
    for holder in tx::read_uses(t.uses, id)?.holders {
        if recopy {
            let library = holder.library();
            let mut rec = held_library(t.libs, &holder)?;
            for &position in &holder.positions {
                let key = tree_keys::item(library, rec.generation, position);
                let item = held_entry(t.items, &key, id, library)?;
                let value = encode(ItemRec::WHAT, &item.with_copy(copy.clone())).map_err(abort)?;
                t.items.insert(&key[..], value)?;
            }
            if flip != 0 {
                rec.asset_count = shift(rec.asset_count, flip, &holder)?;
                put_library_rec(t.libs, library, &rec)?;
            }
        }
        versions::bump_library(t.versions, holder.library())?;
    }
    event.put(
        t.events,
        Written::AssetChanged {
            before: &before,
            after: &after,
        },
    )?;
    Ok((before, after))
}

/// Reads asset `id` (with its download count as written) and the libraries holding it,
/// writing nothing: a stop when it is missing, or held and `force` is false.
fn plan_delete(
    t: &AssetTx<'_>,
    id: Uuid,
    force: bool,
) -> Result<Step<(Asset, Vec<HolderRec>)>, TxError> {
    let Some(value) = t.assets.get(id.as_bytes())? else {
        return Ok(Step::Stop(BulkRefusal::NotFound));
    };
    let holders = tx::read_uses(t.uses, id)?.holders;
    if !holders.is_empty() && !force {
        let mut users = Vec::with_capacity(holders.len());
        for holder in &holders {
            let rec = held_library(t.libs, holder)?;
            let created_at = rec.created_at.time().map_err(abort)?;
            users.push((created_at, rec.library_use(holder.library())));
        }
        return Ok(Step::Stop(BulkRefusal::InUse(newest_first(users))));
    }
    let downloads = match t.counters.get(tree_keys::downloads(id))? {
        Some(v) => tree_keys::decode_u64("counter", &v).map_err(abort)?,
        None => 0,
    };
    let asset = decode::<AssetRec>(AssetRec::WHAT, &value)
        .and_then(|rec| rec.into_asset(id, downloads))
        .map_err(abort)?;
    Ok(Step::Go((asset, holders)))
}

/// Writes a planned delete: the record, its keys, counts, counter and uses go, each entry
/// becomes [`ItemRec::Removed`], its holders' versions and counts move, and its event.
fn write_delete(
    t: &AssetTx<'_>,
    asset: &Asset,
    holders: Vec<HolderRec>,
    event: &EventSlot,
) -> Result<(), TxError> {
    let id = asset.id;
    t.assets.remove(&id.as_bytes()[..])?;
    t.counters.remove(&tree_keys::downloads(id)[..])?;
    tx::asset_keys(t.indexes, t.counts, asset, false)?;
    #[cfg(feature = "search")]
    crate::search::remove_text(t.texts[0], t.texts[1], id, t.indexes.language)?;
    tx::write_uses(t.uses, id, &UsesRec::default())?;
    let removed = encode(ItemRec::WHAT, &ItemRec::Removed).map_err(abort)?;
    for holder in holders {
        let library = holder.library();
        let mut rec = held_library(t.libs, &holder)?;
        for &position in &holder.positions {
            let key = tree_keys::item(library, rec.generation, position);
            held_entry(t.items, &key, id, library)?;
            t.items.insert(&key[..], removed.as_slice())?;
        }
        if asset.published {
            rec.asset_count = shift(rec.asset_count, -1, &holder)?;
        }
        put_library_rec(t.libs, library, &rec)?;
        versions::bump_library(t.versions, library)?;
    }
    event.put(t.events, Written::AssetDeleted(asset))?;
    Ok(())
}
