//! Libraries: lists, loads, atomic replaces and deletes.
//!
//! Each entry item keeps a copy of the fields of its asset that a library page shows
//! ([`EntryCopy`]: title, description, type, thumbnail, published), written by
//! [`Inner::put_library`] from the asset records it reads in its transaction and rewritten by
//! every change of those fields (`lifecycle.rs`), so [`Inner::load_library`] is one record
//! read and one prefix scan, whatever the number of assets.

use assetlib_core::events::{Log, Written};
use std::collections::HashMap;
use std::sync::Arc;

use assetlib_core::store::rules;
use assetlib_core::{
    EntryRow, Holders, LibraryEntry, LibraryQuery, LibraryRows, LibraryStore, LibrarySummary,
    LibraryWrite, Page, PutOutcome, Section, SlugHolder, StoreError, ViewCount, async_trait,
    may_hold,
};
use sled::Transactional;
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::documents::{self, entry_positions, ordered_items};
use crate::error::{Error, TxError, abort};
use crate::events::EventSlot;
use crate::kept::Shown;
use crate::record::{AssetRec, EntryCopy, ItemRec, LibraryRec, decode, decode_id, encode};
use crate::tx::{self, add_count};
use crate::{Inner, SledStore, passes, tree_keys, versions};

/// How often a library load reads again when replaces keep racing it before giving up.
const LOAD_ATTEMPTS: usize = 100;

/// Libraries of at most this many items (sections and entries) are read on the calling task.
const INLINE_ITEMS: u32 = 256;

impl Inner {
    pub(crate) fn library_rec(&self, id: Uuid) -> Result<Option<LibraryRec>, Error> {
        self.get(&self.libraries, id.as_bytes())?
            .map(|v| decode(LibraryRec::WHAT, &v))
            .transpose()
    }

    pub(crate) fn list_libraries(&self, q: &LibraryQuery) -> Result<Page<LibrarySummary>, Error> {
        let (tree, prefix, total) = match &q.workspace_id {
            None => (
                &self.library_idx_published,
                Vec::new(),
                self.count(tree_keys::COUNT_LIBRARIES)?,
            ),
            Some(ws) => (
                &self.library_idx_workspace,
                tree_keys::workspace_prefix(ws),
                self.count(&tree_keys::count_workspace(ws))?,
            ),
        };
        // Newest first: the index runs oldest first, so the list reads it backwards.
        let ids = self.page_ids(tree, &prefix, true, q.offset(), q.limit, total)?;
        let mut items = Vec::with_capacity(ids.len());
        for id in ids {
            // A library deleted since its index key was read is simply left out.
            let Some(rec) = self.library_rec(id)? else {
                continue;
            };
            let views = self.counter(&tree_keys::views(id))?.unwrap_or(0);
            let asset_count = rec.asset_count;
            items.push(LibrarySummary {
                library: rec.into_library(id, views)?,
                asset_count,
            });
        }
        Ok(Page { items, total })
    }

    /// Counts a view of a published library (of the workspace `seen`, when a caller bound to
    /// one asks) and reports its content version. The version is read before the caller
    /// loads the library, so a load after this is at least as new.
    ///
    /// Whether it is published and its workspace are kept under its version: a site's views
    /// of the same libraries read neither record nor decode it again until it changes. A
    /// deleted library's version is 0, under which nothing is kept.
    pub(crate) fn record_view(
        &self,
        id: Uuid,
        seen: Option<&str>,
    ) -> Result<Option<ViewCount>, Error> {
        let version = self.library_version(id)?;
        let shown = match self.kept.libraries.get(&id, version) {
            Some(shown) => shown,
            None => {
                let Some(rec) = self.library_rec(id)? else {
                    return Ok(None);
                };
                let shown = Arc::new(Shown {
                    published: rec.published,
                    workspace_id: rec.workspace_id,
                });
                if version != 0 {
                    self.kept.libraries.put(id, version, Arc::clone(&shown));
                }
                shown
            }
        };
        if !shown.published || seen.is_some_and(|ws| shown.workspace_id.as_deref() != Some(ws)) {
            return Ok(None);
        }
        Ok(self
            .increment(&tree_keys::views(id))?
            .map(|views| ViewCount { views, version }))
    }

    /// Reads the library record, then its items with one prefix scan, and nothing else: each
    /// entry carries a copy of its asset's page fields ([`ItemRec::Entry`]), and a deleted
    /// asset's entries are [`ItemRec::Removed`]. The items of a generation appear and
    /// disappear in one transaction each, and every change of the copies rewrites them in
    /// place in one transaction, so a scan that finds as many items as the record names saw
    /// the whole document; one that finds fewer raced a replace or delete, and reads again.
    ///
    /// The library's record comes read (`first`, so that the caller can choose where to run
    /// the rest by its size); a replace racing the read of its items makes it read the record
    /// again.
    pub(crate) fn load_library_from(
        &self,
        id: Uuid,
        first: Option<LibraryRec>,
    ) -> Result<Option<LibraryRows>, Error> {
        let mut first = Some(first);
        for _ in 0..LOAD_ATTEMPTS {
            let rec = match first.take() {
                Some(rec) => rec,
                None => self.library_rec(id)?,
            };
            let Some(rec) = rec else {
                return Ok(None);
            };
            let prefix = tree_keys::items_prefix(id, rec.generation);
            let items = self
                .scan(&self.library_items, &prefix, false)
                .map(|kv| kv.map(|(_, v)| v))
                .collect::<Result<Vec<_>, _>>()?;
            let expected = rec.item_count as usize;
            if items.len() < expected {
                std::thread::yield_now();
                continue;
            }
            if items.len() > expected {
                return Err(Error::invalid(
                    "library items",
                    format!(
                        "library {id} has {} items, its record says {expected}",
                        items.len()
                    ),
                ));
            }
            let views = self.counter(&tree_keys::views(id))?.unwrap_or(0);
            let mut sections = Vec::new();
            let mut entries = Vec::new();
            for value in items {
                match decode(ItemRec::WHAT, &value)? {
                    ItemRec::Section {
                        id,
                        title,
                        description,
                        display_order,
                        collapsed_by_default,
                    } => sections.push(Section {
                        id: Uuid::from_bytes(id),
                        title,
                        description,
                        display_order,
                        collapsed_by_default,
                    }),
                    ItemRec::Entry {
                        asset_id,
                        section_id,
                        display_order,
                        title,
                        description,
                        asset,
                    } => entries.push(EntryRow {
                        entry: LibraryEntry {
                            asset_id: Uuid::from_bytes(asset_id),
                            section_id: section_id.map(Uuid::from_bytes),
                            display_order,
                            title,
                            description,
                        },
                        asset: asset.into_entry_asset()?,
                    }),
                    ItemRec::BareEntry { asset_id, .. } => {
                        return Err(Error::invalid(
                            "library items",
                            format!(
                                "library {id} has an entry of asset {} without the asset's \
                                 fields (format 2)",
                                Uuid::from_bytes(asset_id)
                            ),
                        ));
                    }
                    ItemRec::Removed => {}
                }
            }
            return Ok(Some(LibraryRows {
                library: rec.into_library(id, views)?,
                sections,
                entries,
            }));
        }
        Err(Error::invalid(
            "library items",
            format!("library {id}: fewer items than its record names after {LOAD_ATTEMPTS} reads"),
        ))
    }

    /// Replaces (or creates) a library in one transaction: the old items, slug claim, index
    /// keys, counts and asset uses go, the new ones come, with the record. Every entry's asset
    /// is read inside the transaction, so an entry of a missing asset aborts it
    /// ([`Error::UnknownAsset`]), as does one of an asset the library may not hold
    /// ([`Error::AssetOfAnotherWorkspace`]: a move of it either runs first or sees this
    /// library among the uses); a delete of a placed asset either runs first (and the write
    /// fails) or sees this library among the asset's uses, and each entry's copy of its
    /// asset's fields is the asset as this transaction saw it (a change of the asset either
    /// runs first, or sees this library among the uses and rewrites the copies).
    pub(crate) fn put_library(
        &self,
        write: LibraryWrite,
        event: &EventSlot,
    ) -> Result<PutOutcome, Error> {
        let LibraryWrite {
            library,
            slug_given,
            sections,
            entries,
        } = write;
        let id = library.id;
        let ordered = ordered_items(&sections, &entries);
        let uses = entry_positions(&ordered);
        let item_count = u32::try_from(ordered.len()).map_err(|_| {
            Error::TooLarge("a library holds at most 2^32 - 1 sections and entries")
        })?;
        // Unique per write and never reused, even after a crash, so the items of two
        // documents of one library never share keys.
        let generation = self.db.generate_id()?;
        let workspace = library.settings.workspace_id.as_deref();

        let outcome = (
            &self.libraries,
            &self.library_slugs,
            &self.library_items,
            &self.library_idx_published,
            &self.library_idx_workspace,
            &self.counts,
            &self.counters,
            &self.assets,
            &self.asset_uses,
            &self.versions,
            &self.events,
        )
            .transaction(
                |(
                    libs,
                    slugs,
                    items,
                    published,
                    workspaces,
                    counts,
                    counters,
                    assets,
                    asset_uses,
                    versions,
                    events,
                )| {
                    // Each asset once, however many entries it has.
                    let mut copies: HashMap<Uuid, EntryCopy> = HashMap::with_capacity(uses.len());
                    let mut asset_count = 0u64;
                    for (asset_id, positions) in &uses {
                        let Some(v) = assets.get(asset_id.as_bytes())? else {
                            return Err(abort(Error::UnknownAsset(*asset_id)));
                        };
                        let asset: AssetRec = decode(AssetRec::WHAT, &v).map_err(abort)?;
                        if !may_hold(workspace, asset.workspace_id.as_deref()) {
                            return Err(abort(Error::AssetOfAnotherWorkspace(*asset_id)));
                        }
                        if asset.published {
                            let n = u64::try_from(positions.len()).unwrap_or(u64::MAX);
                            asset_count = asset_count.saturating_add(n);
                        }
                        copies.insert(*asset_id, EntryCopy::of(&asset));
                    }
                    let encoded = documents::encode_items(&ordered, &copies)?;
                    let old = match libs.get(id.as_bytes())? {
                        Some(v) => Some(decode::<LibraryRec>(LibraryRec::WHAT, &v).map_err(abort)?),
                        None => None,
                    };
                    let mut lib = library.clone();
                    // The generation whose items are this document's: the stored one when the
                    // items stay as they are.
                    let mut kept = None;
                    if let Some(old) = &old {
                        let stored = documents::stored_items(items, id, old)?;
                        if documents::same_items(&stored, &encoded) {
                            kept = Some(old.generation);
                        } else {
                            documents::remove_items(items, asset_uses, id, old, &stored)?;
                        }
                        let index = (published, workspaces, counts);
                        documents::remove_listing(slugs, index, id, old)?;
                        lib.created_at = old.created_at.time().map_err(abort)?;
                        lib.published_at = old
                            .published_at
                            .map(|t| t.time())
                            .transpose()
                            .map_err(abort)?;
                    }
                    if lib.settings.published && lib.published_at.is_none() {
                        lib.published_at = Some(lib.updated_at);
                    }
                    let workspace = lib.settings.workspace_id.as_deref();
                    lib.slug = claim_library_slug(slugs, (workspace, &lib.slug), id, slug_given)?;

                    let generation = match kept {
                        Some(generation) => generation,
                        None => {
                            for (asset, positions) in &uses {
                                let mut rec = tx::read_uses(asset_uses, *asset)?;
                                rec.set(id, positions.clone());
                                tx::write_uses(asset_uses, *asset, &rec)?;
                            }
                            for (position, value) in (0u32..).zip(&encoded) {
                                let key = tree_keys::item(id, generation, position);
                                items.insert(&key[..], &value[..])?;
                            }
                            generation
                        }
                    };
                    let rec = LibraryRec::new(&lib, generation, item_count, asset_count);
                    if let Some(at) = rec.listed_at().map_err(abort)? {
                        published.insert(&tree_keys::library_published(&at, id)[..], &[][..])?;
                        add_count(counts, tree_keys::COUNT_LIBRARIES, 1)?;
                        if let Some(ws) = &rec.workspace_id {
                            workspaces
                                .insert(tree_keys::library_workspace(ws, &at, id), &[][..])?;
                            add_count(counts, &tree_keys::count_workspace(ws), 1)?;
                        }
                    }
                    libs.insert(
                        &id.as_bytes()[..],
                        encode(LibraryRec::WHAT, &rec).map_err(abort)?,
                    )?;
                    versions::bump_library(versions, id)?;
                    event.put(
                        events,
                        Written::LibraryPut {
                            id,
                            created: old.is_none(),
                        },
                    )?;
                    Ok(match old {
                        Some(_) => PutOutcome::Replaced,
                        None => {
                            counters.insert(
                                &tree_keys::views(id)[..],
                                &lib.view_count.to_be_bytes()[..],
                            )?;
                            PutOutcome::Created
                        }
                    })
                },
            )?;
        Ok(outcome)
    }

    /// Deletes a library, its items, slug claim, index keys, counts, asset uses, view
    /// counter and passes (records, hash entries and its list of them) in one transaction,
    /// with the views counted but not yet written (under the counting lock, so none lands in
    /// between; see [`crate::counting`]).
    pub(crate) fn delete_library(&self, id: Uuid, event: &EventSlot) -> Result<bool, Error> {
        let mut counts = self.counting.lock();
        let deleted = (
            &self.libraries,
            &self.library_slugs,
            &self.library_items,
            &self.library_idx_published,
            &self.library_idx_workspace,
            &self.counts,
            &self.counters,
            &self.asset_uses,
            &self.versions,
            &self.passes,
            &self.pass_hashes,
            &self.library_passes,
            &self.events,
        )
            .transaction(
                |(
                    libs,
                    slugs,
                    items,
                    published,
                    workspaces,
                    counts,
                    counters,
                    uses,
                    versions,
                    passes,
                    pass_hashes,
                    pass_lists,
                    events,
                )| {
                    let Some(v) = libs.get(id.as_bytes())? else {
                        return Ok(false);
                    };
                    let old: LibraryRec = decode(LibraryRec::WHAT, &v).map_err(abort)?;
                    let stored = documents::stored_items(items, id, &old)?;
                    documents::remove_items(items, uses, id, &old, &stored)?;
                    documents::remove_listing(slugs, (published, workspaces, counts), id, &old)?;
                    libs.remove(&id.as_bytes()[..])?;
                    counters.remove(&tree_keys::views(id)[..])?;
                    versions::remove_library(versions, id)?;
                    passes::remove_library_passes(passes, pass_hashes, pass_lists, id)?;
                    event.put(events, Written::LibraryDeleted(id))?;
                    Ok(true)
                },
            )?;
        if deleted {
            counts.forget(&tree_keys::views(id));
        }
        Ok(deleted)
    }
}

/// Claims a slug for library `id` in `workspace`: `wanted` if free there (or already its
/// own); else, for a slug made from the title, the first free `wanted-2`, `wanted-3`, ...;
/// for a given slug, a conflict.
pub(crate) fn claim_library_slug(
    slugs: &TransactionalTree,
    (workspace, wanted): (Option<&str>, &str),
    id: Uuid,
    given: bool,
) -> Result<String, TxError> {
    let free = |slug: &str| -> Result<bool, TxError> {
        match slugs.get(tree_keys::library_slug(workspace, slug))? {
            None => Ok(true),
            Some(holder) => Ok(decode_id("library slug", &holder).map_err(abort)? == id),
        }
    };
    let slug = if free(wanted)? {
        wanted.to_owned()
    } else if given {
        return Err(abort(Error::SlugTaken(wanted.to_owned())));
    } else {
        let mut n = 2u64;
        loop {
            let candidate = rules::slug_with_suffix(wanted, n);
            if free(&candidate)? {
                break candidate;
            }
            n = n
                .checked_add(1)
                .ok_or_else(|| abort(Error::TooLarge("no free slug suffix")))?;
        }
    };
    slugs.insert(
        tree_keys::library_slug(workspace, &slug),
        &id.as_bytes()[..],
    )?;
    Ok(slug)
}

#[async_trait]
impl LibraryStore for SledStore {
    async fn list_libraries(
        &self,
        query: &LibraryQuery,
    ) -> Result<Page<LibrarySummary>, StoreError> {
        let query = query.clone();
        self.blocking(move |inner| inner.list_libraries(&query))
            .await
    }

    // A library of up to `INLINE_ITEMS` items is read on the calling task: from sled's page
    // cache that is tens of microseconds, less than the hand-off to a blocking thread and
    // back costs on a cold page (a fifth of its time). Larger ones go to a blocking thread.
    async fn load_library(&self, id: Uuid) -> Result<Option<LibraryRows>, StoreError> {
        let rec = self.point_read(|inner| inner.library_rec(id))?;
        if rec.as_ref().is_some_and(|r| r.item_count > INLINE_ITEMS) {
            return self
                .blocking(move |inner| inner.load_library_from(id, rec))
                .await;
        }
        self.point_read(|inner| inner.load_library_from(id, rec))
    }

    async fn put_library(&self, write: LibraryWrite, log: &Log) -> Result<PutOutcome, StoreError> {
        self.logged_write(log, move |inner, event| inner.put_library(write, event))
            .await
    }

    async fn libraries_by_slug(&self, slug: &str) -> Result<Vec<SlugHolder>, StoreError> {
        self.point_read(|inner| inner.libraries_by_slug(slug))
    }

    async fn library_workspace(&self, id: Uuid) -> Result<Option<Option<String>>, StoreError> {
        self.point_read(|inner| Ok(inner.library_rec(id)?.map(|rec| rec.workspace_id)))
    }

    async fn delete_library(&self, id: Uuid, log: &Log) -> Result<bool, StoreError> {
        self.logged_write(log, move |inner, event| inner.delete_library(id, event))
            .await
    }

    // Counts are exact at once but reach the disk in the background (`counting`: written
    // within 100 ms, flushed by sled within 500 ms more), as DESIGN.md "Durability" allows. So
    // a count is a few point reads and an addition in memory, run on the calling task like a
    // point read.

    async fn record_library_view(&self, id: Uuid) -> Result<Option<ViewCount>, StoreError> {
        self.point_read(|inner| inner.record_view(id, None))
    }

    async fn record_library_view_in(
        &self,
        id: Uuid,
        workspace: &str,
    ) -> Result<Option<ViewCount>, StoreError> {
        self.point_read(|inner| inner.record_view(id, Some(workspace)))
    }

    async fn published_holders(&self, asset_ids: &[Uuid]) -> Result<Vec<Holders>, StoreError> {
        self.holders_of(asset_ids).await
    }
}

#[cfg(test)]
#[path = "libraries_tests.rs"]
mod tests;
