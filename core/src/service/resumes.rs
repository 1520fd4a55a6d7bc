//! Which downloads through a library pass continue one the pass began, and so spend nothing.
//!
//! A pass's `max_downloads` counts copies of files. A download that counts (a 200, or a
//! range from byte 0) spends one and opens a slot for that pass and file: the version of the
//! file (its `ETag`), its size, and the bytes served under it. A range that does not start at
//! byte 0 continues that download, spending nothing, while the bytes served under the slot
//! stay within the file's size (and [`slack`]: what a broken connection had in flight) and
//! the slot is younger than [`WINDOW`]; any other range is a
//! new download and spends one. Bytes a client did not take (it hung up, or the connection
//! broke) are given back to the slot when its answer ends, so a download resumed after a
//! break, or fetched in parallel ranges, is one download; fetching the file again by ranges
//! (`Range: bytes=1-`, over and over) is one download a copy.
//!
//! Slots live in the process that served the download: a resume that reaches another replica
//! counts as a new download (the pass's count itself is atomic across replicas, in the
//! store). At most [`MAX_SLOTS`] are kept; past it the oldest go first.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::Stream;
use uuid::Uuid;

use crate::reply::ByteStream;

/// How long after a download began a range may continue it.
pub(crate) const WINDOW: Duration = Duration::from_secs(24 * 3600);

/// Most slots kept at once.
const MAX_SLOTS: usize = 100_000;

/// Most bytes a continued download may be served beyond its file's size: what a broken
/// connection had in flight (sent, never received) and is asked for again. Half the file, at
/// most 8 MiB, so that fetching a file again by ranges is always past it.
fn slack(size: u64) -> u64 {
    (size / 2).min(8 * 1024 * 1024)
}

/// A pass and an asset.
type Key = (Uuid, Uuid);

/// A download a pass began of one version of a file.
#[derive(Debug)]
struct Slot {
    etag: String,
    size: u64,
    /// Bytes served (or being served) under it.
    served: u64,
    began: Instant,
}

/// The open downloads of this process's passes.
#[derive(Debug, Default, Clone)]
pub(super) struct Resumes(Arc<Mutex<HashMap<Key, Slot>>>);

impl Resumes {
    /// When `len` bytes of the file `(etag, size)` of `asset` continue a download `pass`
    /// began: a ticket for them, now counted in its slot. `None` when they would be a new
    /// download.
    pub(super) fn continue_download(
        &self,
        pass: Uuid,
        asset: Uuid,
        (etag, size): (&str, u64),
        len: u64,
    ) -> Option<Ticket> {
        let mut slots = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = slots.get_mut(&(pass, asset))?;
        let fits = slot.etag == etag
            && slot.size == size
            && slot.began.elapsed() < WINDOW
            && slot
                .served
                .checked_add(len)
                .is_some_and(|n| n <= size.saturating_add(slack(size)));
        if !fits {
            return None;
        }
        slot.served += len;
        Some(self.ticket((pass, asset), etag, len))
    }

    /// A new download that spent one of `pass`'s downloads: its slot starts with these `len`
    /// bytes, in place of any earlier one for the same file.
    pub(super) fn begin(
        &self,
        pass: Uuid,
        asset: Uuid,
        (etag, size): (&str, u64),
        len: u64,
    ) -> Ticket {
        let mut slots = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if slots.len() >= MAX_SLOTS {
            slots.retain(|_, s| s.began.elapsed() < WINDOW);
            if slots.len() >= MAX_SLOTS
                && let Some(oldest) = slots.iter().min_by_key(|(_, s)| s.began).map(|(k, _)| *k)
            {
                slots.remove(&oldest);
            }
        }
        slots.insert(
            (pass, asset),
            Slot {
                etag: etag.to_owned(),
                size,
                served: len,
                began: Instant::now(),
            },
        );
        drop(slots);
        self.ticket((pass, asset), etag, len)
    }

    fn ticket(&self, key: Key, etag: &str, len: u64) -> Ticket {
        Ticket {
            resumes: self.clone(),
            key,
            etag: etag.to_owned(),
            unsent: len,
        }
    }

    /// Gives `bytes` not served back to the slot of `key`, when it is still for `etag`.
    fn give_back(&self, key: Key, etag: &str, bytes: u64) {
        let mut slots = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = slots.get_mut(&key)
            && slot.etag == etag
        {
            slot.served = slot.served.saturating_sub(bytes);
        }
    }
}

/// Bytes counted in a slot for one answer: what the answer does not serve goes back to the
/// slot when it ends.
#[derive(Debug)]
pub(super) struct Ticket {
    resumes: Resumes,
    key: Key,
    etag: String,
    unsent: u64,
}

impl Ticket {
    /// `stream`, counting what it serves against this ticket.
    pub(super) fn watch(self, stream: ByteStream) -> ByteStream {
        Box::pin(Watched {
            stream,
            ticket: self,
        })
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if self.unsent > 0 {
            self.resumes.give_back(self.key, &self.etag, self.unsent);
        }
    }
}

/// A download's body, counting the bytes it serves.
struct Watched {
    stream: ByteStream,
    ticket: Ticket,
}

impl Stream for Watched {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = self.stream.as_mut().poll_next(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &polled {
            let sent = chunk.len() as u64;
            self.ticket.unsent = self.ticket.unsent.saturating_sub(sent);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_continue_a_download_while_they_fit_its_size() {
        let resumes = Resumes::default();
        let (pass, asset) = (Uuid::new_v4(), Uuid::new_v4());
        let file = ("\"v1\"", 100);
        // Nothing began: a range is a new download.
        assert!(resumes.continue_download(pass, asset, file, 99).is_none());
        let first = resumes.begin(pass, asset, file, 100);
        // The whole file is out: fetching it again by ranges is a new download.
        assert!(resumes.continue_download(pass, asset, file, 99).is_none());
        // The first answer broke after 40 bytes: the 60 left continue it, and no more.
        let mut first = first;
        first.unsent = 60;
        drop(first);
        let rest = resumes
            .continue_download(pass, asset, file, 60)
            .expect("a resume");
        // A little again (what a broken connection had in flight), but not half the file.
        let again = resumes
            .continue_download(pass, asset, file, 50)
            .expect("in flight");
        assert!(resumes.continue_download(pass, asset, file, 1).is_none());
        drop((rest, again));
        // Another version of the file, or another pass, continues nothing.
        let second = resumes.begin(pass, asset, file, 10);
        drop(second);
        assert!(
            resumes
                .continue_download(pass, asset, ("\"v2\"", 100), 5)
                .is_none()
        );
        assert!(
            resumes
                .continue_download(Uuid::new_v4(), asset, file, 5)
                .is_none()
        );
    }
}
