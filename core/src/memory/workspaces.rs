//! Moves of assets between workspaces, and what a library of a workspace may hold
//! ([`crate::may_hold`]).

use uuid::Uuid;

use super::State;
use crate::model::{Asset, LibraryWrite, may_hold};
use crate::store::rules::first_free_slug;

impl State {
    /// Whether `after` moves the asset `before` to a workspace where a library holding it may
    /// not hold it.
    pub(super) fn held_elsewhere(&self, before: &Asset, after: Option<&Asset>) -> bool {
        let Some(to) = after
            .map(|a| a.workspace_id.as_deref())
            .filter(|&to| to != before.workspace_id.as_deref())
        else {
            return false;
        };
        self.libraries.values().any(|l| {
            l.entries.iter().any(|e| e.asset_id == before.id)
                && !may_hold(l.library.settings.workspace_id.as_deref(), to)
        })
    }

    /// The slug `after` takes in its workspace: `slug` if no other asset there has it, else
    /// the first free `slug-2`, `slug-3`, ...
    pub(super) fn slug_in(&self, after: &Asset, slug: &str) -> String {
        let to = &after.workspace_id;
        first_free_slug(slug, |s| {
            self.assets
                .values()
                .any(|a| a.id != after.id && a.slug == s && a.workspace_id == *to)
        })
    }

    /// The first entry of `write` whose asset the library may not hold, if any.
    pub(super) fn foreign_entry(&self, write: &LibraryWrite) -> Option<Uuid> {
        let workspace = write.library.settings.workspace_id.as_deref();
        write
            .entries
            .iter()
            .find(|e| {
                let asset = self.assets.get(&e.asset_id);
                asset.is_some_and(|a| !may_hold(workspace, a.workspace_id.as_deref()))
            })
            .map(|e| e.asset_id)
    }
}
