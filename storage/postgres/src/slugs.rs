//! Asset slugs' counters: the base a slug's numbers are counted under, and the bases an insert
//! found taken lately.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The `slug_counters` base of `slug` in `workspace`: the slug, or the workspace, `/` and the
/// slug (neither holds a `/`).
pub(crate) fn counter_base(workspace: Option<&str>, slug: &str) -> String {
    match workspace {
        None => slug.to_owned(),
        Some(w) => format!("{w}/{slug}"),
    }
}

/// Slug counter bases an insert found taken lately, so the next insert of one goes straight to
/// its counter: one shared commit instead of two for a title many assets share. It only
/// orders the attempts: an insert of a base kept here still takes the base when it is free
/// (`SlugPick::GivenOr` in `crate::assets`).
#[derive(Debug, Default)]
pub(crate) struct TakenSlugs(Mutex<HashSet<String>>);

impl TakenSlugs {
    /// Bases kept at most; past it the set starts over.
    const MAX: usize = 4_096;

    fn lock(&self) -> MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether an insert found `base` taken lately.
    pub(crate) fn holds(&self, base: &str) -> bool {
        self.lock().contains(base)
    }

    /// Keeps `base`, which an insert just found taken.
    pub(crate) fn add(&self, base: &str) {
        let mut bases = self.lock();
        if bases.len() >= Self::MAX {
            bases.clear();
        }
        bases.insert(base.to_owned());
    }
}
