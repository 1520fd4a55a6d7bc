//! Group commit: many writers share one flush.
//!
//! A writer calls [`GroupCommit::commit`] after its change is in sled's memory. If no flush
//! runs, it starts one and returns when that flush is done. If one runs, that flush may have
//! started before the change and so may not hold it: the writer waits for the next flush,
//! which the first writer to notice starts for everyone who arrived meanwhile. So under load
//! one `fsync` serves all the writers that queued during the previous one, and every writer
//! still returns only after a flush that began after its change has finished.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use crate::error::Error;

/// The shared flush state of one database.
#[derive(Debug, Default)]
pub(crate) struct GroupCommit {
    state: Mutex<State>,
    done: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// Flushes started so far; the running one, if any, is number `started`.
    started: u64,
    /// Whether flush number `started` is running.
    running: bool,
    /// The highest flush number that finished without error.
    ok: u64,
    /// The highest flush number that finished, and its error if it failed.
    finished: u64,
    error: Option<sled::Error>,
}

impl GroupCommit {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is a few counters written whole; a panic cannot leave it half changed.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Returns once a flush that started after this call has finished; the flush's error if
    /// it failed and no later one succeeded.
    pub(crate) fn commit(&self, db: &sled::Db) -> Result<(), Error> {
        let mut state = self.lock();
        // A flush running now may have started before our change: we need the next one.
        let needed = state.started + 1;
        loop {
            if state.ok >= needed {
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
                    .done
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            state.started += 1;
            state.running = true;
            let number = state.started;
            drop(state);
            let result = db.flush();
            state = self.lock();
            state.running = false;
            state.finished = number;
            match result {
                Ok(_) => {
                    state.ok = number;
                    state.error = None;
                }
                Err(e) => state.error = Some(e),
            }
            self.done.notify_all();
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
                        db.insert(format!("{i}-{j}"), &j.to_be_bytes()[..])
                            .expect("insert");
                        group.commit(&db).expect("commit");
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().expect("writer");
        }
        let state = group.lock();
        assert!(!state.running);
        assert_eq!(state.ok, state.started);
        assert!(
            state.started <= 16 * 20,
            "never more flushes than commits: {}",
            state.started
        );
        drop(state);
        drop(db);
        let db = sled::open(dir.path()).expect("reopen");
        assert_eq!(db.len(), 16 * 20);
    }
}
