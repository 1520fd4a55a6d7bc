//! The holders of library slugs kept in memory ([`SlugHolders`]), so that a library read by
//! its slug asks the database only for a slug it has not seen since the last library write
//! that may have moved it.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use assetlib_core::SlugHolder;
use uuid::Uuid;

/// How many slugs are kept at most; past it the map starts over.
const KEPT: usize = 4_096;

#[derive(Debug, Default)]
struct Kept {
    holders: HashMap<Box<str>, Vec<SlugHolder>>,
    /// Moves with every write that may change a slug's holders: a read is kept only if it
    /// did not move while the read ran.
    changes: u64,
}

/// A library write of this store, as the slugs it may have changed see it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LibraryWritten<'a> {
    /// A replace that wrote the library with this slug; `None` when it failed (it may still
    /// have committed, with a slug not known here).
    Put(Option<&'a str>),
    /// A delete.
    Deleted,
}

/// The libraries holding each slug read lately (in every workspace), as the database had them.
///
/// Only writes of libraries change which libraries hold a slug. This store's own writes drop
/// the slugs they may have changed ([`SlugHolders::forget_library`]); another store's notice
/// of a library does not say its slug, so it drops them all ([`SlugHolders::forget_all`]).
/// The [`crate::notices::Replica`] uses them only while it listens for notices.
#[derive(Debug, Default)]
pub(crate) struct SlugHolders(Mutex<Kept>);

impl SlugHolders {
    fn lock(&self) -> MutexGuard<'_, Kept> {
        // Every change is a few plain assignments or a whole map operation.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The holders of `slug`, when kept.
    pub(crate) fn get(&self, slug: &str) -> Option<Vec<SlugHolder>> {
        self.lock().holders.get(slug).cloned()
    }

    /// A mark to pass to [`SlugHolders::learn`] once a read that started after it ends.
    pub(crate) fn mark(&self) -> u64 {
        self.lock().changes
    }

    /// Keeps `holders` of `slug`, read from the database by a read that took `mark` before
    /// it, unless a write that may change them came meanwhile.
    pub(crate) fn learn(&self, slug: &str, holders: &[SlugHolder], mark: u64) {
        let mut kept = self.lock();
        if kept.changes != mark {
            return;
        }
        if kept.holders.len() >= KEPT {
            kept.holders.clear();
        }
        kept.holders.insert(slug.into(), holders.to_vec());
    }

    /// This store wrote library `id`: the slugs it held and the one it took are dropped (all
    /// of them after a replace that failed).
    pub(crate) fn forget_library(&self, id: Uuid, written: LibraryWritten<'_>) {
        let mut kept = self.lock();
        kept.changes += 1;
        let took = match written {
            LibraryWritten::Put(Some(slug)) => Some(slug),
            LibraryWritten::Put(None) => {
                kept.holders.clear();
                return;
            }
            LibraryWritten::Deleted => None,
        };
        kept.holders
            .retain(|slug, holders| Some(&**slug) != took && holders.iter().all(|h| h.id != id));
    }

    /// Any library may have changed: every slug is dropped.
    pub(crate) fn forget_all(&self) {
        let mut kept = self.lock();
        kept.changes += 1;
        kept.holders.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(id: Uuid) -> Vec<SlugHolder> {
        vec![SlugHolder {
            workspace_id: None,
            id,
        }]
    }

    #[test]
    fn a_write_drops_the_slugs_it_may_have_changed_and_reads_overlapping_it() {
        let kept = SlugHolders::default();
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        kept.learn("guide", &holder(a), kept.mark());
        kept.learn("tools", &holder(b), kept.mark());
        kept.learn("kit", &[], kept.mark());
        assert_eq!(kept.get("guide"), Some(holder(a)));
        // A replace of `b` taking `kit`: its old slug and `kit` go.
        let mark = kept.mark();
        kept.forget_library(b, LibraryWritten::Put(Some("kit")));
        assert_eq!(kept.get("tools"), None);
        assert_eq!(kept.get("kit"), None);
        assert_eq!(
            kept.get("guide"),
            Some(holder(a)),
            "another library's slug stays"
        );
        // A read that began before the write is not kept.
        kept.learn("tools", &holder(b), mark);
        assert_eq!(kept.get("tools"), None);
        kept.learn("tools", &[], kept.mark());
        assert_eq!(kept.get("tools"), Some(vec![]));
        // A delete drops what held the library; a failed replace, or a notice, everything.
        kept.forget_library(a, LibraryWritten::Deleted);
        assert_eq!(kept.get("guide"), None);
        assert_eq!(kept.get("tools"), Some(vec![]));
        kept.forget_library(a, LibraryWritten::Put(None));
        assert_eq!(kept.get("tools"), None);
        kept.learn("tools", &[], kept.mark());
        kept.forget_all();
        assert_eq!(kept.get("tools"), None);
    }
}
