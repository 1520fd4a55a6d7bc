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
//! lock. A delete that removes a counter holds that lock through its transaction and drops
//! the counter's delta with it, so a delta never reaches a later counter under the same key
//! (a library deleted and made again). A delta whose counter is gone when it is written is
//! dropped.

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

/// Counts not yet written, by counter key.
#[derive(Debug, Default)]
pub(crate) struct Counting {
    deltas: Mutex<HashMap<CounterKey, u64>>,
}

/// The deltas, locked: whoever holds this reads or changes counters consistently.
pub(crate) type Deltas<'a> = MutexGuard<'a, HashMap<CounterKey, u64>>;

impl Counting {
    /// Locks the deltas. Each change under the lock is a whole addition or removal, so a
    /// panic elsewhere cannot leave them half changed.
    pub(crate) fn lock(&self) -> Deltas<'_> {
        self.deltas.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Inner {
    /// The stored value of a counter, if it exists, without its delta.
    fn stored_counter(&self, key: &[u8]) -> Result<Option<u64>, Error> {
        self.get(&self.counters, key)?
            .map(|v| tree_keys::decode_u64("counter", &v))
            .transpose()
    }

    /// A counter (downloads or views) with what was counted since it was last written, if it
    /// exists.
    pub(crate) fn counter(&self, key: &CounterKey) -> Result<Option<u64>, Error> {
        let deltas = self.counting.lock();
        let stored = self.stored_counter(key)?;
        Ok(stored.map(|n| n.saturating_add(deltas.get(key).copied().unwrap_or(0))))
    }

    /// Adds one to an existing counter and returns the new value; `None` (and no change) if
    /// the counter does not exist. No increment is lost and no two return the same value.
    pub(crate) fn increment(&self, key: &CounterKey) -> Result<Option<u64>, Error> {
        let mut deltas = self.counting.lock();
        let Some(stored) = self.stored_counter(key)? else {
            return Ok(None);
        };
        let delta = deltas.entry(*key).or_insert(0);
        *delta = delta.saturating_add(1);
        Ok(Some(stored.saturating_add(*delta)))
    }

    /// Adds every delta to its stored counter (dropping those whose counter is gone). A delta
    /// that cannot be written stays, to be tried again.
    pub(crate) fn write_counts(&self) -> Result<(), Error> {
        let mut deltas = self.counting.lock();
        let pending: Vec<(CounterKey, u64)> = deltas.iter().map(|(k, d)| (*k, *d)).collect();
        for (key, delta) in pending {
            let mut bad = None;
            self.counters.update_and_fetch(key, |old| {
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
            deltas.remove(&key);
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
