//! Group commit: many writers share one flush.
//!
//! A writer takes a [`Ticket`] before its change and calls [`Ticket::commit`] once the change
//! is in sled's memory. If no flush runs, the first writer to commit starts one and returns
//! when it is done. If one runs, that flush may have started before the change and so may
//! not hold it: the writer waits for the next flush, which the first writer to notice starts
//! for everyone who arrived meanwhile. Every writer returns only after a flush that began
//! after its change has finished.
//!
//! Before starting a flush, a writer waits a little (at most [`GATHER`]) for the writers that
//! were already making their changes when it got there (not for later ones, so a steady
//! stream of writers never holds a flush back), so that one flush covers them too. This matters with sled 0.34: a
//! flush holds sled's global concurrency lock for reading through its `fsync`, and every
//! multi-tree transaction needs it for writing, so transactions cannot run during a flush. A
//! flush started as soon as the first transaction is done would cover that one only, and the
//! others would each wait for a flush of their own.

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::error::Error;

/// The shared flush state of one database.
#[derive(Debug, Default)]
pub(crate) struct GroupCommit {
    state: Mutex<State>,
    /// Notified when a flush finishes: the writers waiting for a running flush wait on it.
    flushed: Condvar,
    /// Notified when a ticket is committed or given up: a writer gathering the writers still
    /// making their changes waits on it. Apart from `flushed`, so a writer arriving during a
    /// flush does not wake every writer that waits for that flush to end.
    left: Condvar,
}

/// Longest wait, before starting a flush, for writers still making their changes.
pub(crate) const GATHER: Duration = Duration::from_millis(1);

#[derive(Debug, Default)]
struct State {
    /// Open tickets (taken, not yet committed or given up) by the generation they were
    /// taken in.
    open: BTreeMap<u64, usize>,
    /// The generation of tickets taken now; a writer that starts gathering ends it, so it
    /// waits only for writers that were already changing, not for ones that come later.
    generation: u64,
    /// Flushes started so far; the running one, if any, is number `started`.
    started: u64,
    /// Whether flush number `started` is running.
    running: bool,
    /// The highest flush number that finished without error.
    ok: u64,
    /// The highest flush number that finished, and its error if it failed.
    finished: u64,
    error: Option<sled::Error>,
    /// Measures of the work so far ([`GroupCommit::stats`]).
    stats: CommitStats,
}

/// What the group commit of durable writes has done so far: how many writers it made durable, in how many
/// flushes, and how long those flushes took (feature `stats`: [`crate::SledStore::commit_stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(not(feature = "stats"), allow(unreachable_pub))]
pub struct CommitStats {
    /// Writers that returned from a successful commit.
    pub commits: u64,
    /// Flushes run.
    pub flushes: u64,
    /// Time spent in those flushes, all added up.
    pub flush_time: Duration,
}

impl GroupCommit {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is a few counters written whole; a panic cannot leave it half changed.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What this group commit has done so far.
    #[cfg(feature = "stats")]
    pub(crate) fn stats(&self) -> CommitStats {
        self.lock().stats
    }

    /// A ticket for one change: take it before changing, commit it after.
    pub(crate) fn ticket(&self) -> Ticket<'_> {
        let mut state = self.lock();
        let generation = state.generation;
        *state.open.entry(generation).or_default() += 1;
        Ticket {
            group: self,
            generation,
            open: true,
        }
    }

    fn leave(&self, state: &mut State, generation: u64) {
        if let Some(n) = state.open.get_mut(&generation) {
            *n -= 1;
            if *n == 0 {
                state.open.remove(&generation);
            }
        }
        self.left.notify_all();
    }

    /// Returns once a flush that started after the change has finished; the flush's error if
    /// it failed and no later one succeeded.
    fn commit(&self, db: &sled::Db, generation: u64) -> Result<(), Error> {
        let mut state = self.lock();
        self.leave(&mut state, generation);
        // A flush running now may have started before our change: we need the next one.
        let needed = state.started + 1;
        let mut gather_until = None;
        let mut gather_cut = None;
        loop {
            if state.ok >= needed {
                state.stats.commits += 1;
                return Ok(());
            }
            if state.finished >= needed {
                let error = state.error.clone().unwrap_or(sled::Error::ReportableBug(
                    "flush failed without an error".into(),
                ));
                return Err(Error::Sled(error));
            }
            if state.running {
                state = self
                    .flushed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            let cut = *gather_cut.get_or_insert_with(|| {
                state.generation += 1;
                state.generation - 1
            });
            if state.open.range(..=cut).next().is_some() {
                let until = *gather_until.get_or_insert_with(|| Instant::now() + GATHER);
                let left = until.saturating_duration_since(Instant::now());
                if !left.is_zero() {
                    state = self
                        .left
                        .wait_timeout(state, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                    continue;
                }
            }
            gather_cut = None;
            gather_until = None;
            state.started += 1;
            state.running = true;
            let number = state.started;
            drop(state);
            let began = Instant::now();
            let result = db.flush();
            let took = began.elapsed();
            state = self.lock();
            state.stats.flushes += 1;
            state.stats.flush_time += took;
            state.running = false;
            state.finished = number;
            match result {
                Ok(_) => {
                    state.ok = number;
                    state.error = None;
                }
                Err(e) => state.error = Some(e),
            }
            // A writer still gathering may be one this flush made durable.
            self.flushed.notify_all();
            self.left.notify_all();
        }
    }
}

/// One writer's place in a [`GroupCommit`]; dropping it without committing gives it up (for
/// a change that failed).
#[derive(Debug)]
pub(crate) struct Ticket<'g> {
    group: &'g GroupCommit,
    generation: u64,
    open: bool,
}

impl Ticket<'_> {
    /// Returns once the change made since the ticket was taken is durable.
    pub(crate) fn commit(mut self, db: &sled::Db) -> Result<(), Error> {
        self.open = false;
        self.group.commit(db, self.generation)
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if self.open {
            let mut state = self.group.lock();
            self.group.leave(&mut state, self.generation);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn concurrent_writers_all_return_after_a_flush_and_share_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = sled::Config::new()
            .path(dir.path())
            .flush_every_ms(None)
            .open()
            .expect("open");
        let group = Arc::new(GroupCommit::default());
        let writers: Vec<_> = (0..16u32)
            .map(|i| {
                let (db, group) = (db.clone(), group.clone());
                std::thread::spawn(move || {
                    for j in 0..20u32 {
                        let ticket = group.ticket();
                        db.insert(format!("{i}-{j}"), &j.to_be_bytes()[..])
                            .expect("insert");
                        ticket.commit(&db).expect("commit");
                        if j % 5 == 0 {
                            // A change that failed gives its ticket up.
                            drop(group.ticket());
                        }
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().expect("writer");
        }
        let state = group.lock();
        assert!(!state.running);
        assert!(state.open.is_empty(), "every ticket committed or given up");
        assert_eq!(state.ok, state.started);
        assert!(
            state.started <= 16 * 20,
            "never more flushes than commits: {}",
            state.started
        );
        drop(state);
        drop(db);
        // sled's own threads may hold the lock a moment after the last handle is dropped.
        let db = crate::migrate::tests::raw(dir.path());
        assert_eq!(db.len(), 16 * 20);
    }
}
