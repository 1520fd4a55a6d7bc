//! View and download counts, counted in memory and written to sled in the background.
//!
//! A count is hot: every read of a library page counts a view. A compare-and-swap in sled per
//! view goes through sled's log and page cache (~3.4 µs in-process, more under load), where an
//! addition in a map costs nanoseconds. So [`Counting`] keeps, per counter key, what has been
//! added since the counter was last written, and a writer thread ([`Writer`]) adds those
//! deltas to the stored counters every [`WRITE_EVERY`]; sled's own background flush (every
//! 500 ms) then takes them to disk. A count acknowledged more than `WRITE_EVERY` plus sled's
//! flush interval (600 ms) before a crash survives it, inside DESIGN.md's one second.
//!
//! Counts stay exact: a sled database is open in one process at a time, and every read of a
//! counter (the stored value plus its delta) and every write of the deltas happen under one
//! lock. The stored values read or written are kept under that lock as well ([`Counts`]), so
//! a read of a known counter reads no sled tree. A delete that removes a counter holds that
//! lock through its transaction and drops the counter's delta and kept value with it, so
//! neither reaches a later counter under the same key (a library deleted and made again). A
//! delta whose counter is gone when it is written is dropped.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::Inner;
use crate::error::Error;
use crate::tree_keys;

/// How often the writer adds the deltas to the stored counters.
pub(crate) const WRITE_EVERY: Duration = Duration::from_millis(100);

/// A counter's key in the `counters` tree.
pub(crate) type CounterKey = [u8; 17];

/// Counts not yet written, by counter key, and the stored values last read or written.
#[derive(Debug, Default)]
pub(crate) struct Counting {
    counts: Mutex<Counts>,
}

/// How many stored values [`Counts`] keeps before it starts over (a few MB).
const MAX_STORED: usize = 1 << 18;

/// The counts under [`Counting`]'s lock.
///
/// `stored` keeps the values of the `counters` tree that this process read or wrote, so a
/// read of a counter is two map lookups and not a sled read per asset of a list page. It stays
/// exact because every change of a stored counter happens under the lock: the writer's
/// additions update it, and a delete that removes a counter drops it ([`Counts::forget`]).
/// A counter made by a create is not in it until it is read (absence is never kept).
#[derive(Debug, Default)]
pub(crate) struct Counts {
    deltas: HashMap<CounterKey, u64>,
    stored: HashMap<CounterKey, u64>,
}

impl Counts {
    /// Drops a counter that a delete removes, with what was counted since it was last written
    /// (returned, so the deleted record can report its whole count).
    pub(crate) fn forget(&mut self, key: &CounterKey) -> u64 {
        self.stored.remove(key);
        self.deltas.remove(key).unwrap_or(0)
    }

    fn keep(&mut self, key: &CounterKey, value: u64) {
        if self.stored.len() >= MAX_STORED && !self.stored.contains_key(key) {
            self.stored.clear();
        }
        self.stored.insert(*key, value);
    }
}

/// The counts, locked: whoever holds this reads or changes counters consistently.
pub(crate) type Locked<'a> = MutexGuard<'a, Counts>;

impl Counting {
    /// Locks the counts. Each change under the lock is a whole addition or removal, so a
    /// panic elsewhere cannot leave them half changed.
    pub(crate) fn lock(&self) -> Locked<'_> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Inner {
    /// The stored value of a counter, if it exists, without its delta: kept in `counts`, or
    /// read from sled and kept.
    fn stored_counter(&self, counts: &mut Counts, key: &CounterKey) -> Result<Option<u64>, Error> {
        if let Some(&value) = counts.stored.get(key) {
            // Looked at all the same: `records_read` measures what a call reads, not where.
            self.touched(1);
            return Ok(Some(value));
        }
        let stored = self
            .get(&self.counters, key)?
            .map(|v| tree_keys::decode_u64("counter", &v))
            .transpose()?;
        if let Some(value) = stored {
            counts.keep(key, value);
        }
        Ok(stored)
    }

    /// A counter (downloads or views) with what was counted since it was last written, if it
    /// exists.
    pub(crate) fn counter(&self, key: &CounterKey) -> Result<Option<u64>, Error> {
        let mut counts = self.counting.lock();
        let stored = self.stored_counter(&mut counts, key)?;
        Ok(stored.map(|n| n.saturating_add(counts.deltas.get(key).copied().unwrap_or(0))))
    }

    /// Adds one to an existing counter and returns the new value; `None` (and no change) if
    /// the counter does not exist. No increment is lost and no two return the same value.
    pub(crate) fn increment(&self, key: &CounterKey) -> Result<Option<u64>, Error> {
        let mut counts = self.counting.lock();
        let Some(stored) = self.stored_counter(&mut counts, key)? else {
            return Ok(None);
        };
        let delta = counts.deltas.entry(*key).or_insert(0);
        *delta = delta.saturating_add(1);
        Ok(Some(stored.saturating_add(*delta)))
    }

    /// Adds every delta to its stored counter (dropping those whose counter is gone). A delta
    /// that cannot be written stays, to be tried again.
    pub(crate) fn write_counts(&self) -> Result<(), Error> {
        let mut counts = self.counting.lock();
        let pending: Vec<(CounterKey, u64)> = counts.deltas.iter().map(|(k, d)| (*k, *d)).collect();
        for (key, delta) in pending {
            let mut bad = None;
            let written = self.counters.update_and_fetch(key, |old| {
                let old = old?;
                match tree_keys::decode_u64("counter", old) {
                    Ok(n) => Some(n.saturating_add(delta).to_be_bytes().to_vec()),
                    Err(e) => {
                        bad = Some(e);
                        Some(old.to_vec())
                    }
                }
            })?;
            if let Some(e) = bad {
                return Err(e);
            }
            counts.forget(&key);
            if let Some(value) = written {
                counts.keep(&key, tree_keys::decode_u64("counter", &value)?);
            }
        }
        Ok(())
    }
}

/// The thread that writes the deltas every [`WRITE_EVERY`].
///
/// Dropping this stops the thread and waits for it, so the thread never holds the database
/// past the store's last handle (see [`crate::closing`]).
#[derive(Debug)]
pub(crate) struct Writer {
    stop: Arc<Stop>,
    thread: Option<JoinHandle<()>>,
}

/// Whether the writer was told to stop, and the condition it waits on between rounds.
#[derive(Debug, Default)]
struct Stop {
    stopped: Mutex<bool>,
    wake: Condvar,
}

impl Writer {
    /// Starts the writer of `inner`'s deltas. A failed write is tried again on the next round
    /// (the store's next call that reads the same counter fails with the same error, so
    /// nothing goes unreported).
    pub(crate) fn spawn(inner: Weak<Inner>) -> std::io::Result<Self> {
        let stop = Arc::new(Stop::default());
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("assetlib-counts".into())
                .spawn(move || {
                    let mut stopped = stop.stopped.lock().unwrap_or_else(PoisonError::into_inner);
                    loop {
                        stopped = stop
                            .wake
                            .wait_timeout(stopped, WRITE_EVERY)
                            .unwrap_or_else(PoisonError::into_inner)
                            .0;
                        if *stopped {
                            return;
                        }
                        let Some(inner) = inner.upgrade() else {
                            return;
                        };
                        // Met again by the reads of that counter; tried again next round.
                        let _ = inner.write_counts();
                    }
                })?
        };
        Ok(Writer {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Writer {
    /// Stops the thread and waits for it. The thread writes under the lock this takes, so once
    /// the lock is held it is between rounds and holds no handle of the database.
    fn drop(&mut self) {
        *self
            .stop
            .stopped
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = true;
        self.stop.wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
