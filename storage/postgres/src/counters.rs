//! Views and downloads counted in memory and written in batches.
//!
//! A view or a download adds one to this process's unwritten count, with no round trip. A
//! task writes the sums every [`FLUSH_EVERY`] in one transaction (committed with
//! `synchronous_commit = off`, as every counter is), and with them reads the stored view
//! counts of the libraries this process shows that it has not read for [`REFRESH_AFTER`], so
//! other replicas' views show here within a second.
//!
//! Reads add the unwritten counts to the highest stored count this process has read, so
//! counts are exact within this process at once, each view with a number of its own. A batch being written is in the database or not, depending on when a
//! read ran; the [`Counters::gate`] keeps reads that add counts and the batch's transaction
//! apart, so a read sees the batch either as written or as unwritten, never both or neither.
//!
//! A kill -9 loses the unwritten counts (at most [`FLUSH_EVERY`] of them, plus what the
//! database had not yet flushed of the last batches), never anything else.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use assetlib_core::{Asset, ViewCount};
use deadpool_postgres::Pool;
use tokio::sync::{RwLock, RwLockReadGuard};
use uuid::Uuid;

use crate::error::{Failure, to_i64, to_u64};
use crate::notices::Replica;
use crate::schema::Schema;

/// How often unwritten counts are written.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// How old a library's stored view count may grow before the flush reads it again.
const REFRESH_AFTER: Duration = Duration::from_millis(500);
/// How long a library not viewed through this process stays known.
const IDLE_AFTER: Duration = Duration::from_secs(10);

#[derive(Debug, Default)]
struct Pending {
    views: HashMap<Uuid, u64>,
    downloads: HashMap<Uuid, u64>,
    /// The batch being written, until its transaction ends.
    flying_views: HashMap<Uuid, u64>,
    flying_downloads: HashMap<Uuid, u64>,
    /// The highest stored view count this process read of each library, with the content
    /// version read with it.
    stored: HashMap<Uuid, (u64, u64)>,
}

impl Pending {
    fn views_of(&self, id: &Uuid) -> u64 {
        self.views.get(id).copied().unwrap_or(0) + self.flying_views.get(id).copied().unwrap_or(0)
    }

    fn downloads_of(&self, id: &Uuid) -> u64 {
        self.downloads.get(id).copied().unwrap_or(0)
            + self.flying_downloads.get(id).copied().unwrap_or(0)
    }

    /// Counts one view of library `id`, whose stored count was read as `stored` with content
    /// version `version`, and answers its count, this view included.
    ///
    /// Reads take the stored count before this lock, so one may bring a count read before
    /// another replica's batch landed after a read that brought it later: the count shown is
    /// over the highest stored count read so far, so each view shows a number of its own. A
    /// stored count never falls while the library lives; a lower one of another version is a
    /// library made again under the same id, and starts anew.
    fn view(&mut self, id: Uuid, stored: u64, version: u64) -> u64 {
        *self.views.entry(id).or_default() += 1;
        let base = match self.stored.get(&id) {
            Some(&(seen, seen_version)) if seen_version == version || stored >= seen => {
                seen.max(stored)
            }
            _ => stored,
        };
        self.stored.insert(id, (base, version));
        base + self.views_of(&id)
    }
}

/// The unwritten counts of one store.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pending: Mutex<Pending>,
    /// Held for reading by reads that add unwritten counts to stored ones, for writing by the
    /// batch's transaction.
    gate: RwLock<()>,
    /// Whether the flushing task runs (it stops with the runtime that ran it).
    flushing: AtomicBool,
    /// Serializes flushes (the task's and [`Counters::flush`] on shutdown).
    flush_lock: tokio::sync::Mutex<()>,
}

impl Counters {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        // The maps are changed by whole entries; a panic cannot leave one half changed.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one view of library `id` when the replica knows it (published, with its
    /// version and stored views) and versions may be answered from memory: its count, this
    /// view included, and version. `None`, counting nothing, otherwise.
    pub(crate) fn view_known(&self, id: Uuid, replica: &Replica) -> Option<ViewCount> {
        let mut p = self.lock();
        let known = replica.known_library(id)?;
        Some(ViewCount {
            views: p.view(id, known.views, known.db_version),
            version: known.version,
        })
    }

    /// Counts one view of library `id`, just read from the database under
    /// [`Counters::read`] (content version `db_version`, stored views `stored`, by a read
    /// that took `mark` from the replica before it; of `workspace`): its count, this view
    /// included, and version.
    pub(crate) fn view_read(
        &self,
        id: Uuid,
        replica: &Replica,
        (db_version, stored, mark): (u64, u64, u64),
        workspace: Option<&str>,
    ) -> ViewCount {
        let mut p = self.lock();
        let version = replica.learn_library(id, (db_version, stored, mark), workspace);
        ViewCount {
            views: p.view(id, stored, db_version),
            version,
        }
    }

    /// Drops the unwritten views of a library deleted through this process (a library made
    /// again with its id starts from none).
    pub(crate) fn forget_library(&self, id: Uuid) {
        let mut p = self.lock();
        p.views.remove(&id);
        p.stored.remove(&id);
    }

    /// Drops the unwritten downloads of an asset deleted through this process.
    pub(crate) fn forget_asset(&self, id: Uuid) {
        self.lock().downloads.remove(&id);
    }

    /// Counts one download of asset `id`.
    pub(crate) fn download(&self, id: Uuid) {
        *self.lock().downloads.entry(id).or_default() += 1;
    }

    /// Waits until no batch is being written, and keeps it so while the guard lives: for a
    /// read that adds unwritten counts to what it reads.
    pub(crate) async fn read(&self) -> RwLockReadGuard<'_, ()> {
        self.gate.read().await
    }

    /// Adds the unwritten downloads to assets read under [`Counters::read`].
    pub(crate) fn add_downloads<'a>(&self, assets: impl IntoIterator<Item = &'a mut Asset>) {
        let p = self.lock();
        if p.downloads.is_empty() && p.flying_downloads.is_empty() {
            return;
        }
        for a in assets {
            a.download_count += p.downloads_of(&a.id);
        }
    }

    /// The unwritten views of library `id`, for a read under [`Counters::read`].
    pub(crate) fn unwritten_views(&self, id: Uuid) -> u64 {
        self.lock().views_of(&id)
    }

    /// Starts the flushing task unless it runs.
    pub(crate) fn ensure_flushing(
        self: &Arc<Self>,
        pool: &Pool,
        schema: &Arc<Schema>,
        replica: &Arc<Replica>,
    ) {
        // A load first: this runs on every view and download, and a swap would write the
        // shared flag each time.
        if self.flushing.load(Ordering::Acquire) || self.flushing.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.flushing.store(false, Ordering::Release);
            return;
        };
        let weak = Arc::downgrade(self);
        let (pool, schema, replica) = (pool.clone(), Arc::clone(schema), Arc::downgrade(replica));
        runtime.spawn(async move {
            let _guard = StoppedOnDrop(weak.clone());
            let mut tick = tokio::time::interval(FLUSH_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let (Some(counters), Some(replica)) = (weak.upgrade(), replica.upgrade()) else {
                    return;
                };
                if let Err(e) = counters.flush(&pool, &schema, &replica).await {
                    tracing::warn!(error = %e, "could not write view and download counts; trying again");
                }
            }
        });
    }

    /// Writes the unwritten counts now, and reads the stale view counts of known libraries.
    /// On failure the counts stay unwritten, to be written by a later flush.
    pub(crate) async fn flush(
        &self,
        pool: &Pool,
        schema: &Schema,
        replica: &Replica,
    ) -> Result<(), Failure> {
        let _one = self.flush_lock.lock().await;
        let stale = replica.stale_libraries(REFRESH_AFTER, IDLE_AFTER);
        {
            let p = self.lock();
            if p.views.is_empty() && p.downloads.is_empty() && stale.is_empty() {
                return Ok(());
            }
        }
        let _gate = self.gate.write().await;
        let (views, downloads) = {
            let mut p = self.lock();
            p.flying_views = std::mem::take(&mut p.views);
            p.flying_downloads = std::mem::take(&mut p.downloads);
            (sorted(&p.flying_views)?, sorted(&p.flying_downloads)?)
        };
        let refresh: Vec<Uuid> = stale
            .into_iter()
            .filter(|id| views.0.binary_search(id).is_err())
            .collect();
        let result = write_batch(pool, schema, &views, &downloads, &refresh).await;
        let mut p = self.lock();
        match result {
            Ok(stored) => {
                // Under the one lock, so a view sees the batch once: unwritten or stored.
                replica.stored_views(&stored);
                p.flying_views.clear();
                p.flying_downloads.clear();
                Ok(())
            }
            Err(e) => {
                // Back to unwritten, for the next flush.
                let (views, downloads) = (
                    std::mem::take(&mut p.flying_views),
                    std::mem::take(&mut p.flying_downloads),
                );
                for (id, n) in views {
                    *p.views.entry(id).or_default() += n;
                }
                for (id, n) in downloads {
                    *p.downloads.entry(id).or_default() += n;
                }
                Err(e)
            }
        }
    }
}

/// Marks the flushing task stopped when it ends, however it ends.
struct StoppedOnDrop(Weak<Counters>);

impl Drop for StoppedOnDrop {
    fn drop(&mut self) {
        if let Some(counters) = self.0.upgrade() {
            counters.flushing.store(false, Ordering::Release);
        }
    }
}

/// Counts as two arrays in id order (rows are locked in id order, as every transaction of
/// the store locks them).
fn sorted(counts: &HashMap<Uuid, u64>) -> Result<(Vec<Uuid>, Vec<i64>), Failure> {
    let mut all: Vec<(Uuid, u64)> = counts.iter().map(|(id, n)| (*id, *n)).collect();
    all.sort_unstable();
    let mut ids = Vec::with_capacity(all.len());
    let mut ns = Vec::with_capacity(all.len());
    for (id, n) in all {
        ids.push(id);
        ns.push(to_i64("count", n)?);
    }
    Ok((ids, ns))
}

/// The statement adding counts `$2` to the rows of `$1` (ids) in `table`, keyed by
/// `key`, in `column`: the rows locked in id order first, as every transaction of the store
/// locks them; returning each row's key and new count.
fn add_counts_sql(s: &str, table: &str, key: &str, column: &str) -> String {
    format!(
        "WITH i AS (SELECT * FROM unnest($1::uuid[], $2::bigint[]) AS i(id, n)), \
         l AS (SELECT c.{key} FROM {s}.{table} c WHERE c.{key} IN (SELECT id FROM i) \
               ORDER BY c.{key} FOR UPDATE) \
         UPDATE {s}.{table} c SET {column} = c.{column} + i.n \
         FROM i, l WHERE c.{key} = i.id AND l.{key} = i.id \
         RETURNING c.{key}, c.{column}"
    )
}

/// Adds the counts in one transaction and returns the stored view counts of the libraries
/// written and of `refresh`.
async fn write_batch(
    pool: &Pool,
    schema: &Schema,
    views: &(Vec<Uuid>, Vec<i64>),
    downloads: &(Vec<Uuid>, Vec<i64>),
    refresh: &[Uuid],
) -> Result<Vec<(Uuid, u64)>, Failure> {
    let s = &schema.q;
    let mut client = pool.get().await?;
    let tx = client.transaction().await?;
    tx.batch_execute("SET LOCAL synchronous_commit = off")
        .await?;
    let mut stored = Vec::with_capacity(views.0.len() + refresh.len());
    if !views.0.is_empty() {
        let sql = add_counts_sql(s, "library_counters", "library_id", "view_count");
        let stmt = tx.prepare_cached(&sql).await?;
        for row in tx.query(&stmt, &[&views.0, &views.1]).await? {
            stored.push((row.try_get(0)?, to_u64("view count", row.try_get(1)?)?));
        }
    }
    if !downloads.0.is_empty() {
        let sql = add_counts_sql(s, "asset_counters", "asset_id", "download_count");
        let stmt = tx.prepare_cached(&sql).await?;
        tx.execute(&stmt, &[&downloads.0, &downloads.1]).await?;
    }
    if !refresh.is_empty() {
        let sql = format!(
            "SELECT library_id, view_count FROM {s}.library_counters WHERE library_id = ANY($1)"
        );
        let stmt = tx.prepare_cached(&sql).await?;
        for row in tx.query(&stmt, &[&refresh]).await? {
            stored.push((row.try_get(0)?, to_u64("view count", row.try_get(1)?)?));
        }
    }
    tx.commit().await?;
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_that_read_an_older_stored_count_still_shows_a_number_of_its_own() {
        let mut p = Pending::default();
        let id = Uuid::from_u128(7);
        // Two reads: the first took 10 from the database, then another replica's batch of 3
        // landed, the second took 13 and reached the lock first.
        let second = p.view(id, 13, 1);
        let first = p.view(id, 10, 1);
        assert_eq!((second, first), (14, 15));
        // The next read brings the batch this process wrote (2 views) back as stored.
        p.views.clear();
        assert_eq!(p.view(id, 15, 1), 16);
        // An edit moves the version; the count goes on.
        assert_eq!(p.view(id, 15, 2), 17);
    }

    #[test]
    fn a_library_made_again_under_its_id_counts_from_its_own_stored_count() {
        let mut p = Pending::default();
        let id = Uuid::from_u128(8);
        assert_eq!(p.view(id, 40, 3), 41);
        p.views.clear();
        // Deleted and made again elsewhere: another version, fewer views.
        assert_eq!(p.view(id, 0, 1), 1);
        assert_eq!(p.view(id, 0, 1), 2);
    }
}
