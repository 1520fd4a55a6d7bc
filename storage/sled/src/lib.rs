//! # assetlib-sled
//!
//! [`SledStore`]: an embedded [`Store`](assetlib_core::Store) for assetlib in one [sled](https://docs.rs/sled/0.34)
//! directory. Lists, totals and library loads use indexes kept in the same transactions as the
//! records, so their work grows with the answer, not with the database; every change of
//! several records lands whole or not at all; and a write returns success only once it is on
//! disk (see [`Durability`]).
//!
//! ```
//! use assetlib_core::AssetQuery;
//! use assetlib_core::store::prelude::*;
//! use assetlib_sled::SledStore;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("data");
//! let store = SledStore::open(&path)?;
//! # let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! # rt.block_on(async {
//! let page = store.list_assets(&AssetQuery::default()).await?;
//! assert_eq!(page.total, 0);
//! # Ok::<_, assetlib_core::StoreError>(())
//! # })?;
//! # Ok(())
//! # }
//! ```
//!
//! ## Features
//!
//! | feature | what it adds |
//! |---|---|
//! | `stats` | [`SledStore::records_read`] and [`SledStore::commit_stats`]: how much work the store did, for tests and benches |
//!
//! Opening fails with a typed [`OpenError`]: [`OpenError::Locked`] when another process holds
//! the directory, [`OpenError::NewerFormat`] when a newer version of this crate wrote it,
//! [`OpenError::Upgrade`] when it has an older format and the upgrade failed. Dropping the
//! last clone of a store closes the database before the drop returns (it stops the counts'
//! writer and waits, up to five seconds, for sled's background jobs to let the directory go),
//! so the directory can be opened again at once.
//!
//! ## Trees and keys
//!
//! `id` is a 16-byte UUID; `ts` is a time as 12 bytes that sort like the time (seconds as a
//! big-endian `i64` with the sign bit flipped, then nanoseconds as a big-endian `u32`); `text`
//! is a string's UTF-8 with each `0x00` written `0x00 0xFF`, ended by `0x00 0x00`, so it sorts
//! like the string whatever follows; `scope` names one asset list: a family byte (`0x00`
//! published assets, `0x10` drafts, `0x20` every asset) plus `0` for all types or `1 + type
//! code` for one type, so each asset has four keys in each index (all and its type, in its
//! own family and in `0x20`); counts are big-endian `u64`. Records are
//! [postcard](https://docs.rs/postcard/1)-encoded structs of this crate.
//!
//! | tree | key | value |
//! |---|---|---|
//! | `meta` | `format_version` | big-endian `u32`, [`FORMAT_VERSION`] |
//! | `meta` | `signing_secret` | the 32 bytes that sign download links, made on first use |
//! | `assets` | `id` | asset record |
//! | `asset_slugs` | `s` + slug, or `w` + `text(workspace)` + slug | claiming asset `id` (kept after the asset is deleted: slugs are never given twice in a workspace) |
//! | `asset_slugs` | `n` + wanted slug, or `m` + `text(workspace)` + wanted slug | next `-N` suffix to try for it (`u64`) |
//! | `asset_idx_created` | `scope` + `ts(created_at)` + `id` | empty |
//! | `asset_idx_updated` | `scope` + `ts(updated_at)` + `id` | empty |
//! | `asset_idx_title` | `scope` + `text(lowercase(title))` + `id` | empty |
//! | `asset_idx_tags` | `text(tag key)`, or `0x01` + `text(workspace)`, + sort code (`0` created, `1` updated, `2` title) + `scope` + the sort's key + `id` | empty: each tag's and each workspace's lists, as the three sort indexes have them |
//! | `asset_idx_checksum` | the file's SHA-256 + `id` | empty |
//! | `asset_uses` | asset `id` | the libraries holding the asset, by library `id`, each with the positions of the asset's entries among its items (absent when none does) |
//! | `counts` | `0` / `1` + type code / `4` / `5` + type code / `2` / `3` + workspace / `9` + `scope` + tag key / `9` + `scope` + `0x01` + workspace | published assets / of a type / drafts / of a type / published libraries / of a workspace / assets with a tag in the list of `scope` / assets of a workspace in it |
//! | `counters` | `d` + asset `id` / `v` + library `id` | downloads / views (`u64`) |
//! | `libraries` | `id` | library record (with its item generation, item count and published asset count) |
//! | `library_slugs` | slug, or slug + `0x00` + workspace | owning library `id` (slugs are unique per workspace) |
//! | `library_items` | library `id` + generation (`u64`) + position (`u32`) | section, entry (with a copy of its asset's title, description, type, thumbnail and `published`), or the emptied place of a deleted asset's entry, in display order |
//! | `library_idx_published` | `ts(published_at)` + `id` | empty |
//! | `library_idx_workspace` | `text(workspace_id)` + `ts(published_at)` + `id` | empty |
//! | `keys` | key `id` | API key record |
//! | `key_hashes` | SHA-256 of the key | key `id` |
//! | `key_idx_created` | `ts(created_at)` + `id` | empty |
//! | `passes` | pass `id` | library pass record (its library's `id`, SHA-256, label, expiry, download limit and count, asset subset, creation and revocation times) |
//! | `pass_hashes` | SHA-256 of the pass | pass `id` |
//! | `library_passes` | library `id` | the library's passes, each as `ts(created_at)` + pass `id`, in descending order (newest first, then by `id` descending; absent when it has none) |
//! | `versions` | `n` / `l` + library `id` | last content version handed out / a library's version (`u64`; see `versions.rs`) |
//! | `events` | place (big-endian `u64`) | an event of the log (see `events.rs`) |
//! | `webhooks` | webhook `id` | a webhook record (see `webhooks.rs`) |
//! | `uploads` | upload `id` | a resumable or direct upload in progress and its lease (see `uploads.rs`) |
//! | `search_text_words`, `asset_texts` | feature `search`: word + `0x00` + `id`, and `id` | the words of the text inside the files, and the text (see `search.rs`; the words of titles, tags and descriptions are kept in memory, `field_words.rs`) |
//!
//! Webhook streams and deliveries live in a second sled database in the directory's
//! `deliveries/`, flushed in the background every 500 ms (trees `webhook_streams`,
//! `webhook_counts`, `deliveries`, `delivery_due`, `webhook_deliveries`; see `webhooks.rs`):
//! their writes, one or more for every event while the API writes, never lengthen the
//! durable flushes of API writes, and a crash that loses the last of them only sends some
//! events again.
//!
//! Only published libraries enter the library indexes and counts. Every asset enters the
//! asset indexes, and the count of published assets or of drafts; the number of all assets
//! is the sum of the two.
//!
//! Format 1 (before the asset lifecycle) had the published asset family only, no draft
//! counts, no `asset_uses`, and an asset epoch `a` in `versions`; format 2 kept entries
//! without the copy of their asset's fields. Opening such a directory upgrades it first (see
//! `migrate.rs`), in a way that a crash part way simply runs again.
//!
//! Format 4 adds library passes (the trees `passes`, `pass_hashes` and `library_passes`) and
//! the scope codes 5 (`read:paid`) and 6 (`write:passes`) in key records; format 3 knew codes
//! 1 to 4 (`read:assets`, `write:assets`, `read:libraries`, `write:libraries`). The upgrade
//! to 4 gives `read:paid` to every key that has `write:assets` (DESIGN.md, "Library passes"):
//! such a key could download every file before paid files existed, and still can.
//!
//! ## Costs
//!
//! | call | work |
//! |---|---|
//! | `list_assets` without `search` | one count read (two for both statuses), O(min(offset, total - offset) + page) index keys (a page is read from whichever end of the index is nearer), and one record and one counter read per item |
//! | `list_assets` with `search` | with feature `search`: a scan of the folded titles and descriptions kept in memory (read from the records by the first such list after the database opens; `haystack.rs`), then two record reads per match, to order and to filter them; without it, a walk of the list of the status and type filter in index order, decoding each record: O(assets in that list) whatever the page, since the total needs the whole walk |
//! | `list_libraries` | one count read, O(min(offset, total - offset) + limit) index keys, one record and one counter read per item |
//! | `load_library` | one record read, one prefix scan of its items (each entry holds the asset fields the page shows), one counter read; no asset read |
//! | `put_library` | one transaction: the old items read and removed, the new ones written, one asset read per asset placed (it must exist; the published count; the entries' copies), and the uses of each asset of the old and new document rewritten (their size grows with the libraries holding the asset), then a flush |
//! | `delete_library` | one transaction removing the record, its items, index keys and counters, rewriting the uses of each asset it held, and removing its pass list and each pass it names (one record read per pass, for its hash entry), then a flush |
//! | `insert_asset` | one transaction (record, slug claim, twelve index keys, two counts, download counter), then a flush |
//! | `update_asset` | one transaction: the record, the index keys that change (counts when `published` flips), one read of the asset's uses, and per library holding it a new version; when a field a page shows changes (title, description, thumbnail, `published`), also its record read and each of the asset's entries in it read and rewritten with the new copy (and the record rewritten when `published` flips), then a flush |
//! | `delete_asset` | one transaction: one read of the asset's uses (and one record read per library holding it); unless refused, the record, twelve index keys, two counts, the download counter and the uses removed, and per library holding it its entries emptied, its record rewritten and a new version, then a flush |
//! | `asset_usage` | one read of the asset's uses and one record read per library holding it |
//! | `record_library_view`, `record_library_view_in` | one library record read (its workspace checked in it for `_in`), one version read, one counter read and an addition in memory, on the calling task; no write of its own (see below) |
//! | `record_download` | one counter read and an addition in memory, on the calling task; no write of its own |
//! | `insert_pass` | one transaction: one library record read, the id and hash checked, the record and hash entry written, and the library's pass list read and rewritten whole (its size grows with the library's passes), then a flush |
//! | `list_passes` | one read of the library's pass list (the total), then one record read per pass of the page |
//! | `revoke_pass`, `spend_pass` | one transaction on the pass record (a spend checks it and adds one), then a flush; concurrent spends share flushes by group commit |
//! | `published_holders` | one read of each asset's uses, and one record read per library they name (each library once per call) |
//! | `get_asset`, `find_key`, `get_pass`, `find_pass`, `get_upload` | one or two key lookups, run on the calling task (no blocking thread) |
//! | `insert_upload`, `lease_upload`, `save_upload`, `delete_upload` | one compare-and-swap of the upload's record (read, checked, swapped; again when another write came between), then a flush |
//! | `expired_uploads` | a scan of every upload in progress |
//!
//! Counters (views and downloads) are exact at once but wait for no write and no flush: a
//! count is added to a delta in memory (`counting`), a thread adds the deltas to the stored
//! counters every 100 ms, and sled's background flush writes them within 500 ms more (any
//! later write's flush writes them too). So a crash loses at most the last 600 ms of counts and
//! nothing else (DESIGN.md "Durability"; the kill -9 test in `tests/crash.rs` checks counts
//! older than one second, and fails when the deltas are written every 5 s instead). Every read
//! of a counter adds its delta, under one lock with the writer; a delete of a counter drops its
//! delta under the same lock. The stored values read or written are kept in memory under that
//! lock too, so the download counts of a list page's assets cost no sled reads.
//!
//! A flush is sled's blocking `flush` (write and `fsync`), run on a blocking task like every
//! sled call, by group commit: a writer that arrives while a flush runs waits for the next
//! one, which then serves every writer that queued meanwhile (the flush waits up to 1 ms for
//! writers still in their transactions), so many concurrent writes share one `fsync` and
//! each still returns only after a flush begun after its change has finished (`commit.rs`). (`flush_async` is not used: concurrent calls of it can deadlock in
//! sled 0.34.) [`Durability::Periodic`] leaves flushing to a background thread instead.
//!
//! Reads are not snapshots: a list racing with writes may show a total that is off by the
//! writes in flight, or one item fewer when a library is deleted while its page is read. A
//! library load is consistent: it sees one whole document (it checks the items it scanned
//! against the record and reads again if a replace raced it).
//!
//! The published-asset count of each library (what `list_libraries` shows) is kept in its
//! record and is exact: a library write counts its entries' published assets, and a change of
//! an asset's `published` or a delete of the asset moves the count of every library holding
//! it, in the same transaction, found through `asset_uses`. The copies of an asset's page
//! fields in its entries are kept the same way: a library write copies them from the asset
//! records it reads, and a change of the asset rewrites them in every entry the uses name,
//! in the change's transaction, so a load (which reads no asset) never shows an older asset
//! than a read of the asset after it. (A sled transaction cannot scan, so `asset_uses` keeps
//! one key per asset that the transactions read whole; see `lifecycle.rs`.)
//!
//! A library's passes go with it in the transaction of `delete_library`, found through its
//! one key in `library_passes`, kept the same way: `insert_pass` reads the library record and
//! rewrites the list in its transaction, so a pass made while its library is deleted either
//! comes first (and goes with the library) or finds the library missing (`passes.rs`).

// Unit tests share the dev-dependencies of the crate's other test targets.
#![cfg_attr(test, allow(unused_crate_dependencies))]

mod apikeys;
mod assets;
mod closing;
mod commit;
mod config;
mod counting;
mod deliveries;
mod documents;
mod error;
mod events;
#[cfg(feature = "search")]
mod field_words;
#[cfg(feature = "search")]
mod haystack;
mod kept;
mod libraries;
mod lifecycle;
mod migrate;
mod migrate_v5;
mod pages;
mod passes;
mod record;
#[cfg(feature = "search")]
mod search;
#[cfg(feature = "search")]
mod search_keys;
#[cfg(feature = "transfer")]
mod transfer;
mod tree_keys;
mod tx;
mod uploads;
mod verify;
mod versions;
mod webhooks;
mod websites;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use assetlib_core::StoreError;
use assetlib_core::events::Log;
use assetlib_core::store::AssetVersions;
use sled::{IVec, Tree};

#[cfg(feature = "stats")]
pub use commit::CommitStats;
pub use config::{Durability, SledConfig};
pub use error::OpenError;
pub use verify::Integrity;

use error::Error;

/// The on-disk format this crate writes. It reads this one and upgrades older ones when it
/// opens them.
pub const FORMAT_VERSION: u32 = 8;

pub(crate) const FORMAT_KEY: &[u8] = b"format_version";

/// The directory, inside the store's, of the database that keeps webhook streams and
/// deliveries.
const DELIVERIES_DIR: &str = "deliveries";

/// An assetlib [`Store`](assetlib_core::Store) in a sled database directory.
///
/// Cloning is cheap: clones share the open database. The directory is locked while any clone
/// is alive; dropping the last one closes it.
#[derive(Clone)]
pub struct SledStore {
    inner: Arc<Inner>,
    /// Declared last, so dropped after `inner`: the last handle closes the database.
    _closing: Arc<closing::Closing>,
}

impl std::fmt::Debug for SledStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SledStore")
            .field("path", &self.inner.path)
            .field("durability", &self.inner.durability)
            .finish_non_exhaustive()
    }
}

/// The open database and its trees.
pub(crate) struct Inner {
    db: sled::Db,
    path: PathBuf,
    durability: Durability,
    pub(crate) assets: Tree,
    pub(crate) asset_slugs: Tree,
    pub(crate) asset_idx_created: Tree,
    pub(crate) asset_idx_updated: Tree,
    pub(crate) asset_idx_title: Tree,
    pub(crate) asset_idx_tags: Tree,
    pub(crate) asset_idx_checksum: Tree,
    pub(crate) asset_uses: Tree,
    pub(crate) counts: Tree,
    pub(crate) counters: Tree,
    pub(crate) libraries: Tree,
    pub(crate) library_slugs: Tree,
    pub(crate) library_items: Tree,
    pub(crate) library_idx_published: Tree,
    pub(crate) library_idx_workspace: Tree,
    pub(crate) keys: Tree,
    pub(crate) key_hashes: Tree,
    pub(crate) key_idx_created: Tree,
    pub(crate) passes: Tree,
    pub(crate) pass_hashes: Tree,
    pub(crate) library_passes: Tree,
    pub(crate) versions: Tree,
    /// Webhooks and their deliveries ([`webhooks`]).
    pub(crate) webhooks: Tree,
    pub(crate) deliveries: Tree,
    pub(crate) delivery_due: Tree,
    pub(crate) webhook_deliveries: Tree,
    pub(crate) webhook_counts: Tree,
    pub(crate) webhook_streams: Tree,
    /// Uploads in progress ([`uploads`]).
    pub(crate) uploads: Tree,
    #[cfg(feature = "search")]
    pub(crate) search: search::SearchTrees,
    /// The folded texts the asset list's `search=` looks in (feature `search`; `haystack.rs`).
    #[cfg(feature = "search")]
    pub(crate) haystack: haystack::Haystack,
    /// The database of the five delivery trees above.
    pub(crate) hooks_db: sled::Db,
    delivery_lock: deliveries::DeliveryLock,
    /// The event log ([`events`]) and its places.
    pub(crate) events: Tree,
    pub(crate) event_seq: Arc<events::EventSeq>,
    /// Records and index keys read so far (see [`SledStore::records_read`]).
    reads: AtomicU64,
    /// The content versions of the assets ([`AssetStore::asset_version`]), in memory (a sled
    /// database is open in one process at a time), moved after every asset write commits.
    asset_versions: AssetVersions,
    /// Assets and libraries read lately, under the versions they were read at.
    kept: kept::Kept,
    /// View and download counts not yet written to `counters`.
    counting: counting::Counting,
    group: commit::GroupCommit,
}

impl Inner {
    /// The asset index trees, in the order of [`tx::IndexTrees`].
    pub(crate) fn index_trees(&self) -> Vec<&Tree> {
        vec![
            &self.asset_idx_created,
            &self.asset_idx_updated,
            &self.asset_idx_title,
            &self.asset_idx_tags,
            &self.asset_idx_checksum,
        ]
    }
}

impl Drop for Inner {
    /// Writes the counts not yet written (sled flushes when the database closes).
    fn drop(&mut self) {
        let _ = self.write_counts();
    }
}

impl SledStore {
    /// Opens (or creates) the database in directory `path` with the default [`SledConfig`].
    ///
    /// # Errors
    /// [`OpenError::Locked`] if another process holds the directory,
    /// [`OpenError::NewerFormat`] if a newer version of this crate wrote it,
    /// [`OpenError::Upgrade`] if it has an older format and upgrading it failed, and
    /// [`OpenError::Sled`] / [`OpenError::Corrupt`] if it cannot be read.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, OpenError> {
        Self::open_with(path, SledConfig::default())
    }

    /// Opens (or creates) the database in directory `path` with `config`.
    ///
    /// This blocks while sled recovers the database, and while a database of an older format
    /// is upgraded (a walk of every record; see [`FORMAT_VERSION`]); call it before serving,
    /// or from a blocking task.
    ///
    /// # Errors
    /// As [`SledStore::open`].
    pub fn open_with(path: impl AsRef<Path>, config: SledConfig) -> Result<Self, OpenError> {
        let path = path.as_ref().to_path_buf();
        let sled_error = |source: sled::Error| match &source {
            sled::Error::Io(io) if is_lock_error(io) => OpenError::Locked { path: path.clone() },
            _ => OpenError::Sled {
                path: path.clone(),
                source,
            },
        };
        let db = config.to_sled(&path).open().map_err(sled_error)?;
        let tree = |name: &str| db.open_tree(name).map_err(sled_error);
        let meta = tree("meta")?;
        let found = migrate::format_of(&db, &meta, &path, sled_error)?;
        // Delivery bookkeeping: a database of its own, in a directory inside this one, so that
        // its writes never make the durable flushes of API writes longer (`webhooks.rs`).
        let hooks_db = config
            .delivery_sled(&path.join(DELIVERIES_DIR))
            .open()
            .map_err(sled_error)?;
        let hook_tree = |name: &str| hooks_db.open_tree(name).map_err(sled_error);
        let events = tree("events")?;
        let last_event = events::last_place(&events)
            .and_then(|last| Ok(last.max(events::high_water(&meta)?)))
            .map_err(|e| OpenError::Corrupt {
                path: path.clone(),
                detail: e.to_string(),
            })?;
        let inner = Inner {
            events,
            event_seq: Arc::new(events::EventSeq::after(last_event)),
            assets: tree("assets")?,
            asset_slugs: tree("asset_slugs")?,
            asset_idx_created: tree("asset_idx_created")?,
            asset_idx_updated: tree("asset_idx_updated")?,
            asset_idx_title: tree("asset_idx_title")?,
            asset_idx_tags: tree("asset_idx_tags")?,
            asset_idx_checksum: tree("asset_idx_checksum")?,
            asset_uses: tree("asset_uses")?,
            counts: tree("counts")?,
            counters: tree("counters")?,
            libraries: tree("libraries")?,
            library_slugs: tree("library_slugs")?,
            library_items: tree("library_items")?,
            library_idx_published: tree("library_idx_published")?,
            library_idx_workspace: tree("library_idx_workspace")?,
            keys: tree("keys")?,
            key_hashes: tree("key_hashes")?,
            key_idx_created: tree("key_idx_created")?,
            passes: tree("passes")?,
            pass_hashes: tree("pass_hashes")?,
            library_passes: tree("library_passes")?,
            versions: tree("versions")?,
            webhooks: tree("webhooks")?,
            deliveries: hook_tree("deliveries")?,
            delivery_due: hook_tree("delivery_due")?,
            webhook_deliveries: hook_tree("webhook_deliveries")?,
            webhook_counts: hook_tree("webhook_counts")?,
            webhook_streams: hook_tree("webhook_streams")?,
            uploads: tree("uploads")?,
            #[cfg(feature = "search")]
            search: search::SearchTrees::open(&db, config.search_language).map_err(sled_error)?,
            #[cfg(feature = "search")]
            haystack: haystack::Haystack::default(),
            hooks_db,
            delivery_lock: deliveries::DeliveryLock::default(),
            reads: AtomicU64::new(0),
            asset_versions: AssetVersions::new(),
            kept: kept::Kept::default(),
            counting: counting::Counting::default(),
            group: commit::GroupCommit::default(),
            durability: config.durability,
            path,
            db,
        };
        if found < FORMAT_VERSION {
            let failed = |e: Error| OpenError::Upgrade {
                path: inner.path.clone(),
                from: found,
                source: e.into(),
            };
            inner.upgrade(found).map_err(failed)?;
            // Everything the upgrade wrote is on disk before the version says it is done.
            inner.db.flush().map_err(|e| failed(e.into()))?;
            meta.insert(FORMAT_KEY, &FORMAT_VERSION.to_be_bytes())
                .map_err(|e| failed(e.into()))?;
            inner.db.flush().map_err(|e| failed(e.into()))?;
        }
        migrate::sync_search(&inner, &meta).map_err(|e| OpenError::Corrupt {
            path: inner.path.clone(),
            detail: e.to_string(),
        })?;
        let inner = Arc::new(inner);
        let writer =
            counting::Writer::spawn(Arc::downgrade(&inner)).map_err(|e| OpenError::Sled {
                path: inner.path.clone(),
                source: e.into(),
            })?;
        Ok(SledStore {
            _closing: Arc::new(closing::Closing::new(inner.clone(), writer)),
            inner,
        })
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Walks every record and index and reports where they disagree: index keys without a
    /// record or missing for one, counts that differ from the records, slugs not claimed,
    /// library items that no record owns, entries of missing assets, entries whose copy of
    /// their asset's fields differs from the asset, asset uses that differ from the entries,
    /// library asset counts or versions that are off, and passes of missing libraries or
    /// whose hash entry or place in their library's list is missing. Reads the whole
    /// database: for checks and tests, not for serving.
    ///
    /// # Errors
    /// A [`StoreError`] if the database cannot be read.
    pub async fn verify(&self) -> Result<Integrity, StoreError> {
        self.blocking(|inner| inner.verify()).await
    }

    /// How many records and index keys this store has read since it was opened: a measure
    /// for tests of how much work a call does (feature `stats`). A counter kept in memory
    /// counts as read like one read from sled.
    #[cfg(feature = "stats")]
    pub fn records_read(&self) -> u64 {
        self.inner.reads.load(Ordering::Relaxed)
    }

    /// What the group commit of durable writes has done since the store was opened: writers
    /// made durable, flushes, and time spent flushing: a measure for benches of how many
    /// writers share each flush (feature `stats`).
    #[cfg(feature = "stats")]
    pub fn commit_stats(&self) -> CommitStats {
        self.inner.group.stats()
    }

    /// Runs `f` on a blocking thread so sled never stalls the async executor.
    async fn blocking<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Inner) -> Result<T, Error> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        let result = tokio::task::spawn_blocking(move || f(&inner))
            .await
            .map_err(Error::Task)?;
        Ok(result?)
    }

    /// Runs a point read (a lookup of one or two keys) on the calling task.
    ///
    /// Such a read is a few microseconds from sled's page cache, less than handing it to a
    /// blocking thread and back costs; only a page not yet in the cache makes it wait for
    /// one disk read. Reads that scan or touch many records run on a blocking thread.
    fn point_read<T>(&self, f: impl FnOnce(&Inner) -> Result<T, Error>) -> Result<T, StoreError> {
        Ok(f(&self.inner)?)
    }

    /// Runs the write `f` on a blocking thread and, with [`Durability::EveryWrite`], flushes
    /// before returning.
    ///
    /// The flush is sled's blocking `flush` on the same blocking thread, not `flush_async`:
    /// in sled 0.34 concurrent `flush_async` calls can deadlock (every thread of sled's own
    /// pool waits in a flush for a log write queued behind them, sled issue #1308).
    /// Concurrent writers share flushes by group commit ([`commit::GroupCommit`]): one
    /// flush at a time, and those who arrive during it wait for the next one together.
    async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Inner) -> Result<T, Error> + Send + 'static,
    {
        self.blocking(move |inner| {
            if inner.durability != Durability::EveryWrite {
                return f(inner);
            }
            let ticket = inner.group.ticket();
            let value = f(inner)?;
            ticket.commit(&inner.db)?;
            Ok(value)
        })
        .await
    }
}

impl SledStore {
    /// Runs the write `f` as [`SledStore::write`] does, with a place reserved in the event log
    /// for the event it appends (made as `log` says). The place stays in
    /// flight until the write is durable, however the caller fares: the reservation is
    /// released on the blocking thread, after the flush.
    async fn logged_write<T, F>(&self, log: &Log, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Inner, &events::EventSlot) -> Result<T, Error> + Send + 'static,
    {
        let reserved = self.inner.event_seq.reserve(log.clone());
        let (value, _flown) = self
            .write(move |inner| Ok((f(inner, reserved.slot())?, reserved)))
            .await?;
        Ok(value)
    }
}

fn is_lock_error(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::WouldBlock || e.to_string().contains("could not acquire lock")
}

impl Inner {
    /// Counts `n` records or keys read.
    pub(crate) fn touched(&self, n: u64) {
        self.reads.fetch_add(n, Ordering::Relaxed);
    }

    /// A point read, counted.
    pub(crate) fn get(&self, tree: &Tree, key: &[u8]) -> Result<Option<IVec>, Error> {
        self.touched(1);
        Ok(tree.get(key)?)
    }

    /// A kept count (0 when absent).
    pub(crate) fn count(&self, key: &[u8]) -> Result<u64, Error> {
        self.get(&self.counts, key)?
            .map_or(Ok(0), |v| tree_keys::decode_u64("count", &v))
    }

    /// The keys and values under `prefix`, forwards or backwards, each counted as read.
    pub(crate) fn scan<'a>(
        &'a self,
        tree: &Tree,
        prefix: &[u8],
        reverse: bool,
    ) -> impl Iterator<Item = Result<(IVec, IVec), Error>> + 'a {
        let mut iter = tree.scan_prefix(prefix);
        std::iter::from_fn(move || {
            let next = if reverse {
                iter.next_back()
            } else {
                iter.next()
            };
            if next.is_some() {
                self.touched(1);
            }
            next.map(|r| r.map_err(Error::from))
        })
    }
}
