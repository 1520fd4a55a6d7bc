//! Group commit: writes that arrive together share one transaction and its commit.
//!
//! Every durable commit waits for PostgreSQL to flush its WAL, and under load each commit is
//! also a round trip and a transaction's worth of work of its own. [`Batches`] takes the
//! writes waiting at a moment and runs them in one transaction on one connection, their
//! statements pipelined (sent together, answered in order), with one `COMMIT`: every write
//! in it is answered only after that commit, as a write of its own would be.
//!
//! - A write that arrives alone runs alone, as a statement of its own: no wait, no extra
//!   round trip.
//! - At most [`MAX_DRAINERS`] transactions run at once, each with at most [`MAX_BATCH`]
//!   writes; writes that arrive meanwhile wait for the next one, so the busier it is, the
//!   more writes share a commit.
//! - When any statement of a transaction fails (a duplicate id, a lock wait broken by the
//!   deadlock detector), the transaction is rolled back and each of its writes runs again
//!   alone, so one write's failure is its own.
//! - The transaction runs on a task of its own: a caller that stops waiting (a client gone)
//!   neither loses nor half-runs the others' writes.
//!
//! A write is a function that runs its statements on the connection it is given, and may
//! run twice (the second time alone, after a rollback): it must not depend on having run.
//!
//! The transactions run on tasks of the runtime of the write that started them. When that
//! runtime shuts down in the middle of one, its writes get an error or no answer (their
//! callers are gone with it), and a drainer dropped with it gives its place back. A drainer
//! the runtime leaves neither running nor dropped would keep its place for ever; so a write
//! that sees no batch end for 5 s starts a drainer in that place, and a store shared by
//! runtimes that outlive each other keeps answering.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use assetlib_core::StoreError;
use deadpool_postgres::{ClientWrapper, Pool};
use futures_util::future::{BoxFuture, join_all};
use tokio::sync::oneshot;

use crate::error::Failure;

/// Most writes one transaction carries.
pub(crate) const MAX_BATCH: usize = 32;

/// Transactions in flight at once: some commit while others run. (Tried on the load run's
/// 32 connections: 2 x 64, 4 x 32 and 6 x 8 gave the same creates/s and p99 within noise.)
pub(crate) const MAX_DRAINERS: usize = 4;

/// How long a write waits with no batch ending before it starts one more drainer.
const RESCUE_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// A write: its statements, on the connection given.
pub(crate) type Work<T> =
    Arc<dyn for<'c> Fn(&'c ClientWrapper) -> BoxFuture<'c, Result<T, StoreError>> + Send + Sync>;

/// `f` as a [`Work`] (a closure's signature is inferred from this bound).
pub(crate) fn work<T, F>(f: F) -> Work<T>
where
    F: for<'c> Fn(&'c ClientWrapper) -> BoxFuture<'c, Result<T, StoreError>>
        + Send
        + Sync
        + 'static,
{
    Arc::new(f)
}

struct Job<T> {
    work: Work<T>,
    done: oneshot::Sender<Result<T, StoreError>>,
}

struct Queue<T> {
    jobs: VecDeque<Job<T>>,
    /// Tasks taking batches off `jobs` now.
    drainers: usize,
}

/// Writes waiting to share a transaction.
pub(crate) struct Batches<T> {
    queue: Mutex<Queue<T>>,
    /// Writes run, and the transactions (or lone statements) they ran in.
    writes: AtomicU64,
    commits: AtomicU64,
    /// Batches that ended: what a waiting write watches for progress.
    batches: AtomicU64,
}

impl<T> Default for Batches<T> {
    fn default() -> Self {
        Batches {
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                drainers: 0,
            }),
            writes: AtomicU64::new(0),
            commits: AtomicU64::new(0),
            batches: AtomicU64::new(0),
        }
    }
}

impl<T> std::fmt::Debug for Batches<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let q = self.lock();
        f.debug_struct("Batches")
            .field("waiting", &q.jobs.len())
            .field("drainers", &q.drainers)
            .finish()
    }
}

impl<T> Batches<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue<T>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes run so far, and the commits they shared (a write run again alone after a
    /// rollback counts once more).
    #[cfg(feature = "stats")]
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.writes.load(Ordering::Relaxed),
            self.commits.load(Ordering::Relaxed),
        )
    }
}

impl<T: Send + 'static> Batches<T> {
    /// Runs `work` in the next transaction of writes on connections of `pool`, and answers
    /// once it has committed (or failed).
    pub(crate) async fn run(self: &Arc<Self>, pool: &Pool, work: Work<T>) -> Result<T, StoreError> {
        let (done, mut answer) = oneshot::channel();
        let start = {
            let mut q = self.lock();
            q.jobs.push_back(Job { work, done });
            let start = q.drainers < MAX_DRAINERS;
            if start {
                q.drainers += 1;
            }
            start
        };
        if start {
            tokio::spawn(Arc::clone(self).drain(pool.clone()));
        }
        let mut seen = self.batches.load(Ordering::Relaxed);
        loop {
            match tokio::time::timeout(RESCUE_AFTER, &mut answer).await {
                Ok(answered) => {
                    return answered.map_err(|_| {
                        StoreError::from(Failure::Group {
                            detail: "the task running the transaction stopped (its runtime \
                                     shut down)"
                                .to_owned(),
                            unavailable: true,
                        })
                    })?;
                }
                // No batch ended while this write waited: a drainer may be a task of a
                // runtime that shut down without dropping it. A new one takes its place (and
                // gives it back when the queue is empty), so such places come free one by
                // one; one that was only slow ends as well, and the count never goes below 0.
                Err(_) => {
                    let now = self.batches.load(Ordering::Relaxed);
                    if now == seen {
                        tokio::spawn(Arc::clone(self).drain(pool.clone()));
                    }
                    seen = now;
                }
            }
        }
    }

    /// Takes batches off the queue and runs them until it is empty.
    async fn drain(self: Arc<Self>, pool: Pool) {
        // A drainer that ends any other way (its runtime shut down while it waited) still
        // leaves its place, so that the next write starts a drainer of its own.
        let mut leaving = Leaving {
            batches: &self,
            armed: true,
        };
        loop {
            let jobs: Vec<Job<T>> = {
                let mut q = self.lock();
                if q.jobs.is_empty() {
                    q.drainers = q.drainers.saturating_sub(1);
                    leaving.armed = false;
                    return;
                }
                let n = q.jobs.len().min(MAX_BATCH);
                q.jobs.drain(..n).collect()
            };
            self.writes.fetch_add(jobs.len() as u64, Ordering::Relaxed);
            self.commits.fetch_add(1, Ordering::Relaxed);
            run_batch(&pool, jobs).await;
            self.batches.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Gives a drainer's place back when it is dropped before it found the queue empty.
struct Leaving<'a, T> {
    batches: &'a Batches<T>,
    armed: bool,
}

impl<T> Drop for Leaving<'_, T> {
    fn drop(&mut self) {
        if self.armed {
            let mut q = self.batches.lock();
            q.drainers = q.drainers.saturating_sub(1);
        }
    }
}

/// Runs `jobs` in one transaction (one alone as a statement of its own) and answers each.
async fn run_batch<T>(pool: &Pool, mut jobs: Vec<Job<T>>) {
    let client = match pool.get().await {
        Ok(client) => client,
        Err(e) => return fail_all(jobs, &Failure::from(e)),
    };
    if jobs.len() == 1 {
        if let Some(job) = jobs.pop() {
            let result = (job.work)(&client).await;
            let _ = job.done.send(result);
        }
        return;
    }
    let together = async {
        client.batch_execute("BEGIN").await?;
        let results = join_all(jobs.iter().map(|job| (job.work)(&client))).await;
        if results.iter().all(Result::is_ok) {
            client.batch_execute("COMMIT").await?;
            Ok(Some(results))
        } else {
            client.batch_execute("ROLLBACK").await?;
            Ok(None)
        }
    }
    .await;
    match together {
        Ok(Some(results)) => {
            for (job, result) in jobs.into_iter().zip(results) {
                let _ = job.done.send(result);
            }
        }
        // A statement failed: each write again, alone, so that its failure is its own.
        Ok(None) => {
            for job in jobs {
                let result = (job.work)(&client).await;
                let _ = job.done.send(result);
            }
        }
        // BEGIN, COMMIT or ROLLBACK failed: the connection broke, and whether a commit
        // happened is not known, as for a single statement whose connection breaks.
        Err(e) => fail_all(jobs, &Failure::Db(e)),
    }
}

/// Answers every job with `failure`.
fn fail_all<T>(jobs: Vec<Job<T>>, failure: &Failure) {
    let unavailable = failure.is_unavailable();
    for job in jobs {
        let _ = job.done.send(Err(StoreError::from(Failure::Group {
            detail: failure.to_string(),
            unavailable,
        })));
    }
}
