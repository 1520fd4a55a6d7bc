//! Closing: dropping the last handle of a store closes its database before it returns, so the
//! directory can be opened again at once, in this process or another.
//!
//! Two kinds of thread can hold the database past the last handle: the counts' writer
//! ([`Writer`]), which this stops and waits for, and sled's own background jobs, which keep
//! the directory's lock for a moment after the database is dropped. [`Closing`] waits, for a
//! bounded time, until the lock can be taken.

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
        let lock = inner.path.join("db");
        // Someone else (a blocking task whose caller went away) still holds the database; it
        // closes when they are done.
        if let Some(inner) = Arc::into_inner(inner) {
            drop(inner);
            wait_until_free(&lock);
        }
    }
}

/// Waits until the lock on `file` can be taken (and lets it go again), or [`LET_GO_WITHIN`]
/// has passed.
fn wait_until_free(file: &Path) {
    let started = Instant::now();
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
