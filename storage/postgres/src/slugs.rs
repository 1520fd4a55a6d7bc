//! Slugs: the base an asset slug's numbers are counted under, the bases an asset insert found
//! taken lately, and the family of a library slug (what the library write lock is taken by).

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

/// The family of a library slug: the slug without its trailing `-<digits>` groups (`guide`
/// for `guide`, `guide-2` and `guide-2-3`). Every slug a library write wanting `wanted` may
/// take (`wanted`, `wanted-2`, ...) is of `wanted`'s family, so writes of different families
/// (or workspaces) never pick the same slug, and the library write lock is taken per family.
pub(crate) fn slug_family(slug: &str) -> &str {
    let mut family = slug;
    while let Some((head, tail)) = family.rsplit_once('-') {
        if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        family = head;
    }
    family
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

#[cfg(test)]
mod tests {
    use super::slug_family;
    use assetlib_core::store::rules::first_free_slug;

    #[test]
    fn every_slug_a_write_may_pick_is_of_its_wanted_slugs_family() {
        for (slug, family) in [
            ("guide", "guide"),
            ("guide-2", "guide"),
            ("guide-2-3", "guide"),
            ("guide-v2", "guide-v2"),
            ("2024", "2024"),
            ("report-2024", "report"),
            ("a-", "a-"),
            ("a--2", "a-"),
            ("-2", ""),
        ] {
            assert_eq!(slug_family(slug), family, "{slug}");
        }
        for wanted in ["guide", "guide-2", "a-", "2024", "x-1-y"] {
            // With the first `n` of `wanted`, `wanted-2`, ... taken.
            for n in 0..5 {
                let taken: Vec<String> = std::iter::once(wanted.to_owned())
                    .chain((2..).map(|k| format!("{wanted}-{k}")))
                    .take(n)
                    .collect();
                let picked = first_free_slug(wanted, |s| taken.iter().any(|t| t == s));
                assert!(!taken.contains(&picked));
                assert_eq!(
                    slug_family(&picked),
                    slug_family(wanted),
                    "{wanted} -> {picked}"
                );
            }
        }
    }
}
