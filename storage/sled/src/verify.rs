//! [`Integrity`]: a full walk that checks every index and count against the records.

use std::collections::{BTreeMap, HashSet};

use assetlib_core::AssetSort;
use sled::{IVec, Tree};
use uuid::Uuid;

use crate::Inner;
use crate::error::Error;
use crate::record::{AssetRec, KeyRec, LibraryRec, decode, decode_id};
use crate::tree_keys::{self, SCOPE_ALL};

/// What [`crate::SledStore::verify`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Integrity {
    /// Asset records.
    pub assets: u64,
    /// Published asset records (the ones lists show).
    pub published_assets: u64,
    /// Library records.
    pub libraries: u64,
    /// Published library records.
    pub published_libraries: u64,
    /// API key records.
    pub keys: u64,
    /// Each disagreement found, in words. Empty when the database is consistent.
    pub problems: Vec<String>,
}

impl Integrity {
    /// Whether no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Every key a tree should hold, compared with what it holds.
struct Expect<'a> {
    name: &'static str,
    tree: &'a Tree,
    keys: HashSet<Vec<u8>>,
}

impl<'a> Expect<'a> {
    fn new(name: &'static str, tree: &'a Tree) -> Self {
        Expect {
            name,
            tree,
            keys: HashSet::new(),
        }
    }

    fn check(self, problems: &mut Vec<String>) -> Result<(), Error> {
        let mut seen = 0usize;
        for kv in self.tree.iter() {
            let (k, _) = kv?;
            if self.keys.contains(k.as_ref()) {
                seen += 1;
            } else {
                problems.push(format!("{}: unexpected key {:?}", self.name, k.as_ref()));
            }
        }
        if seen != self.keys.len() {
            problems.push(format!(
                "{}: {} keys missing",
                self.name,
                self.keys.len() - seen
            ));
        }
        Ok(())
    }
}

fn id_of(key: &IVec) -> Result<Uuid, Error> {
    decode_id("record key", key)
}

impl Inner {
    pub(crate) fn verify(&self) -> Result<Integrity, Error> {
        let mut out = Integrity::default();
        let p = &mut out.problems;
        let mut counts: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
        let mut counters: BTreeMap<Vec<u8>, ()> = BTreeMap::new();

        // Assets, their index keys, slugs and download counters.
        let mut created = Expect::new("asset_idx_created", &self.asset_idx_created);
        let mut updated = Expect::new("asset_idx_updated", &self.asset_idx_updated);
        let mut title = Expect::new("asset_idx_title", &self.asset_idx_title);
        let mut asset_slugs = HashSet::new();
        for kv in self.assets.iter() {
            let (k, v) = kv?;
            out.assets += 1;
            let id = id_of(&k)?;
            let rec: AssetRec = match decode(AssetRec::WHAT, &v) {
                Ok(r) => r,
                Err(e) => {
                    p.push(format!("asset {id}: {e}"));
                    continue;
                }
            };
            let asset = match rec.clone().into_asset(id, 0) {
                Ok(a) => a,
                Err(e) => {
                    p.push(format!("asset {id}: {e}"));
                    continue;
                }
            };
            match self.asset_slugs.get(tree_keys::asset_slug(&rec.slug))? {
                Some(holder) if holder.as_ref() == id.as_bytes() => {}
                _ => p.push(format!("asset {id}: slug {:?} not claimed by it", rec.slug)),
            }
            asset_slugs.insert(tree_keys::asset_slug(&rec.slug));
            counters.insert(tree_keys::downloads(id).to_vec(), ());
            if !asset.published {
                continue;
            }
            out.published_assets += 1;
            *counts.entry(tree_keys::COUNT_ASSETS.to_vec()).or_default() += 1;
            *counts
                .entry(tree_keys::count_asset_type(asset.asset_type).to_vec())
                .or_default() += 1;
            for scope in [SCOPE_ALL, tree_keys::scope_of(asset.asset_type)] {
                for (sort, expect) in [
                    (AssetSort::CreatedAt, &mut created),
                    (AssetSort::UpdatedAt, &mut updated),
                    (AssetSort::Title, &mut title),
                ] {
                    expect.keys.insert(tree_keys::asset_index(
                        scope,
                        sort,
                        id,
                        &asset.created_at,
                        &asset.updated_at,
                        &asset.title,
                    ));
                }
            }
        }
        for expect in [created, updated, title] {
            expect.check(p)?;
        }
        for kv in self.asset_slugs.iter() {
            let (k, _) = kv?;
            if k.first() == Some(&b's') && !asset_slugs.contains(k.as_ref()) {
                p.push(format!(
                    "asset_slugs: claim {:?} held by no asset",
                    k.as_ref()
                ));
            }
        }

        // Libraries, their items, index keys, slugs and view counters.
        let mut published = Expect::new("library_idx_published", &self.library_idx_published);
        let mut workspaces = Expect::new("library_idx_workspace", &self.library_idx_workspace);
        let mut slugs = Expect::new("library_slugs", &self.library_slugs);
        let mut items = Expect::new("library_items", &self.library_items);
        for kv in self.libraries.iter() {
            let (k, v) = kv?;
            out.libraries += 1;
            let id = id_of(&k)?;
            let rec: LibraryRec = match decode(LibraryRec::WHAT, &v) {
                Ok(r) => r,
                Err(e) => {
                    p.push(format!("library {id}: {e}"));
                    continue;
                }
            };
            match self.library_slugs.get(rec.slug.as_bytes())? {
                Some(holder) if holder.as_ref() == id.as_bytes() => {}
                _ => p.push(format!(
                    "library {id}: slug {:?} not claimed by it",
                    rec.slug
                )),
            }
            slugs.keys.insert(rec.slug.as_bytes().to_vec());
            counters.insert(tree_keys::views(id).to_vec(), ());
            for position in 0..rec.item_count {
                items
                    .keys
                    .insert(tree_keys::item(id, rec.generation, position).to_vec());
            }
            match rec.listed_at() {
                Ok(Some(at)) => {
                    out.published_libraries += 1;
                    published
                        .keys
                        .insert(tree_keys::library_published(&at, id).to_vec());
                    *counts
                        .entry(tree_keys::COUNT_LIBRARIES.to_vec())
                        .or_default() += 1;
                    if let Some(ws) = &rec.workspace_id {
                        workspaces
                            .keys
                            .insert(tree_keys::library_workspace(ws, &at, id));
                        *counts.entry(tree_keys::count_workspace(ws)).or_default() += 1;
                    }
                }
                Ok(None) => {}
                Err(e) => p.push(format!("library {id}: {e}")),
            }
        }
        for expect in [published, workspaces, slugs, items] {
            expect.check(p)?;
        }

        // API keys and their indexes.
        let mut hashes = Expect::new("key_hashes", &self.key_hashes);
        let mut by_created = Expect::new("key_idx_created", &self.key_idx_created);
        for kv in self.keys.iter() {
            let (k, v) = kv?;
            out.keys += 1;
            let id = id_of(&k)?;
            match decode::<KeyRec>(KeyRec::WHAT, &v).and_then(|r| r.into_key(id)) {
                Ok(key) => {
                    hashes.keys.insert(key.key_hash.to_vec());
                    by_created
                        .keys
                        .insert(tree_keys::key_created(&key.created_at, id).to_vec());
                }
                Err(e) => p.push(format!("key {id}: {e}")),
            }
        }
        hashes.check(p)?;
        by_created.check(p)?;

        // Kept counts and counters.
        let mut stored_counts = BTreeMap::new();
        for kv in self.counts.iter() {
            let (k, v) = kv?;
            stored_counts.insert(k.to_vec(), tree_keys::decode_u64("count", &v)?);
        }
        if stored_counts != counts {
            p.push(format!(
                "counts: stored {stored_counts:?}, records give {counts:?}"
            ));
        }
        let mut counter_keys = Expect::new("counters", &self.counters);
        counter_keys.keys.extend(counters.into_keys());
        counter_keys.check(p)?;
        Ok(out)
    }
}
