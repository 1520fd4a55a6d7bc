//! Closing: dropping the last handle of a store closes its database before it returns, so the
//! directory can be opened again at once, in this process or another.
//!
//! Two kinds of thread can hold the database past the last handle: the counts' writer
//! ([`Writer`]), which this stops and waits for, and sled's own background jobs, which keep
//! the directories' locks for a moment after the databases are dropped (the store's, and the
//! delivery bookkeeping's in `deliveries/`). [`Closing`] waits, for a bounded time, until both
//! locks can be taken.
//!
//! One case returns at once: a blocking task whose caller went away (a request cancelled while
//! its write ran) still holds the store; the database closes when that task ends.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::Inner;
use crate::counting::Writer;

/// How long a drop waits at most for sled's background jobs to let the directory go.
const LET_GO_WITHIN: Duration = Duration::from_secs(5);

/// What the last handle of a store closes, held by every handle.
pub(crate) struct Closing {
    writer: Option<Writer>,
    inner: Option<Arc<Inner>>,
}

impl Closing {
    /// The closing of `inner`, whose counts `writer` writes.
    pub(crate) fn new(inner: Arc<Inner>, writer: Writer) -> Self {
        Closing {
            writer: Some(writer),
            inner: Some(inner),
        }
    }
}

impl Drop for Closing {
    fn drop(&mut self) {
        // Stopped first: the writer holds the database while it writes.
        drop(self.writer.take());
        let Some(inner) = self.inner.take() else {
            return;
        };
        let locks = [
            inner.path.join("db"),
            inner.path.join(crate::DELIVERIES_DIR).join("db"),
        ];
        // Someone else (a blocking task whose caller went away) still holds the database; it
        // closes when they are done.
        if let Some(inner) = Arc::into_inner(inner) {
            drop(inner);
            let started = Instant::now();
            for lock in &locks {
                wait_until_free(lock, started);
            }
        }
    }
}

/// Waits until the lock on `file` can be taken (and lets it go again), or [`LET_GO_WITHIN`]
/// has passed since `started`.
fn wait_until_free(file: &Path, started: Instant) {
    let mut wait = Duration::from_millis(1);
    while !is_free(file) && started.elapsed() < LET_GO_WITHIN {
        std::thread::sleep(wait);
        wait = (wait * 2).min(Duration::from_millis(50));
    }
}

/// Whether nobody holds the lock sled takes on `file` (an unreadable file counts as free:
/// there is nothing to wait for).
fn is_free(file: &Path) -> bool {
    let Ok(handle) = std::fs::File::open(file) else {
        return true;
    };
    // The lock, if taken, goes with the handle.
    handle.try_lock().is_ok()
}
