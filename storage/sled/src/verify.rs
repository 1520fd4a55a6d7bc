//! [`Integrity`]: a full walk that checks every index and count against the records.

use std::collections::{BTreeMap, HashMap, HashSet};

use sled::{IVec, Tree};
use uuid::Uuid;

use crate::Inner;
use crate::error::Error;
use crate::passes::{PassListRec, PassRec};
use crate::record::{
    AssetRec, EntryCopy, ItemRec, KeyRec, LibraryRec, UsesRec, decode, decode_id, encode,
};
use crate::tree_keys;
use crate::versions;

/// What [`crate::SledStore::verify`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Integrity {
    /// Asset records.
    pub assets: u64,
    /// Published asset records (the ones lists show by default).
    pub published_assets: u64,
    /// Draft asset records.
    pub draft_assets: u64,
    /// Library records.
    pub libraries: u64,
    /// Published library records.
    pub published_libraries: u64,
    /// API key records.
    pub keys: u64,
    /// Library pass records.
    pub passes: u64,
    /// Each disagreement found, in words. Empty when the database is consistent.
    pub problems: Vec<String>,
}

impl Integrity {
    /// Whether no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Every key a tree should hold (and, where given, its value), compared with what it holds.
struct Expect<'a> {
    name: &'static str,
    tree: &'a Tree,
    keys: HashMap<Vec<u8>, Option<Vec<u8>>>,
}

impl<'a> Expect<'a> {
    fn new(name: &'static str, tree: &'a Tree) -> Self {
        Expect {
            name,
            tree,
            keys: HashMap::new(),
        }
    }

    /// Expects `key`, with any value.
    fn key(&mut self, key: impl Into<Vec<u8>>) {
        self.keys.insert(key.into(), None);
    }

    /// Expects `key` with `value`.
    fn pair(&mut self, key: impl Into<Vec<u8>>, value: Vec<u8>) {
        self.keys.insert(key.into(), Some(value));
    }

    fn check(self, problems: &mut Vec<String>) -> Result<(), Error> {
        let mut seen = 0usize;
        for kv in self.tree.iter() {
            let (k, v) = kv?;
            match self.keys.get(k.as_ref()) {
                Some(expected) => {
                    seen += 1;
                    if expected
                        .as_ref()
                        .is_some_and(|e| e.as_slice() != v.as_ref())
                    {
                        problems.push(format!(
                            "{}: key {:?} holds {:?}, expected {expected:?}",
                            self.name,
                            k.as_ref(),
                            v.as_ref()
                        ));
                    }
                }
                None => problems.push(format!("{}: unexpected key {:?}", self.name, k.as_ref())),
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
        let mut tagged = Expect::new("asset_idx_tags", &self.asset_idx_tags);
        let mut checksums = Expect::new("asset_idx_checksum", &self.asset_idx_checksum);
        // Every asset record by id: the copy of it its entries should hold (`None`: it does
        // not decode).
        let mut assets: HashMap<Uuid, Option<EntryCopy>> = HashMap::new();
        let mut asset_slugs: HashMap<Uuid, Vec<u8>> = HashMap::new();
        for kv in self.assets.iter() {
            let (k, v) = kv?;
            out.assets += 1;
            let id = id_of(&k)?;
            assets.insert(id, None);
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
            assets.insert(id, Some(EntryCopy::of(&rec)));
            let slug = tree_keys::asset_slug(rec.workspace_id.as_deref(), &rec.slug);
            match self.asset_slugs.get(&slug)? {
                Some(holder) if holder.as_ref() == id.as_bytes() => {}
                _ => p.push(format!("asset {id}: slug {:?} not claimed by it", rec.slug)),
            }
            asset_slugs.insert(id, slug);
            counters.insert(tree_keys::downloads(id).to_vec(), ());
            if asset.published {
                out.published_assets += 1;
            } else {
                out.draft_assets += 1;
            }
            for key in tree_keys::counts_of(asset.published, asset.asset_type) {
                *counts.entry(key).or_default() += 1;
            }
            for key in tree_keys::list_counts_of(&asset) {
                *counts.entry(key).or_default() += 1;
            }
            for key in tree_keys::asset_list_keys(&asset) {
                tagged.key(key);
            }
            if let Some(sum) = &asset.checksum_sha256 {
                checksums.key(tree_keys::checksum_index(sum, id).to_vec());
            }
            let keys = tree_keys::asset_index_keys(&asset);
            for (expect, keys) in [&mut created, &mut updated, &mut title]
                .into_iter()
                .zip(keys)
            {
                for key in keys {
                    expect.key(key);
                }
            }
        }
        for expect in [created, updated, title, tagged, checksums] {
            expect.check(p)?;
        }
        // A claim of an asset's id names its slug; claims of ids of no asset are the slugs of
        // deleted assets, kept so they are never given again.
        for kv in self.asset_slugs.iter() {
            let (k, v) = kv?;
            if !matches!(k.first(), Some(b's' | b'w')) {
                continue;
            }
            match decode_id("asset slug", &v) {
                Ok(holder) => match asset_slugs.get(&holder) {
                    Some(own) if own.as_slice() != k.as_ref() => p.push(format!(
                        "asset_slugs: claim {:?} held by asset {holder}, whose slug is another",
                        k.as_ref()
                    )),
                    _ => {}
                },
                Err(e) => p.push(format!("asset_slugs: claim {:?}: {e}", k.as_ref())),
            }
        }

        // Libraries, their items, asset uses, index keys, slugs, view counters and versions.
        let mut published = Expect::new("library_idx_published", &self.library_idx_published);
        let mut workspaces = Expect::new("library_idx_workspace", &self.library_idx_workspace);
        let mut slugs = Expect::new("library_slugs", &self.library_slugs);
        let mut items = Expect::new("library_items", &self.library_items);
        let mut uses: BTreeMap<Uuid, UsesRec> = BTreeMap::new();
        let mut versions = Expect::new("versions", &self.versions);
        let mut library_ids = HashSet::new();
        let last_version = match self.versions.get(versions::LAST)? {
            Some(v) => {
                versions.key(versions::LAST);
                tree_keys::decode_u64("last version", &v)?
            }
            None => 0,
        };
        for kv in self.libraries.iter() {
            let (k, v) = kv?;
            out.libraries += 1;
            let id = id_of(&k)?;
            library_ids.insert(id);
            let rec: LibraryRec = match decode(LibraryRec::WHAT, &v) {
                Ok(r) => r,
                Err(e) => {
                    p.push(format!("library {id}: {e}"));
                    continue;
                }
            };
            let slug = tree_keys::library_slug(rec.workspace_id.as_deref(), &rec.slug);
            match self.library_slugs.get(&slug)? {
                Some(holder) if holder.as_ref() == id.as_bytes() => {}
                _ => p.push(format!(
                    "library {id}: slug {:?} not claimed by it",
                    rec.slug
                )),
            }
            slugs.key(slug);
            counters.insert(tree_keys::views(id).to_vec(), ());
            for position in 0..rec.item_count {
                items.key(tree_keys::item(id, rec.generation, position));
            }
            self.check_entries(id, &rec, &assets, &mut uses, p)?;
            versions.key(versions::library(id));
            match self.versions.get(versions::library(id))? {
                Some(v) if tree_keys::decode_u64("version", &v)? <= last_version => {}
                Some(_) => p.push(format!("library {id}: version above the last handed out")),
                None => {}
            }
            match rec.listed_at() {
                Ok(Some(at)) => {
                    out.published_libraries += 1;
                    published.key(tree_keys::library_published(&at, id));
                    *counts
                        .entry(tree_keys::COUNT_LIBRARIES.to_vec())
                        .or_default() += 1;
                    if let Some(ws) = &rec.workspace_id {
                        workspaces.key(tree_keys::library_workspace(ws, &at, id));
                        *counts.entry(tree_keys::count_workspace(ws)).or_default() += 1;
                    }
                }
                Ok(None) => {}
                Err(e) => p.push(format!("library {id}: {e}")),
            }
        }
        let mut asset_uses = Expect::new("asset_uses", &self.asset_uses);
        for (asset, rec) in uses {
            asset_uses.pair(asset.as_bytes(), encode(UsesRec::WHAT, &rec)?);
        }
        for expect in [published, workspaces, slugs, items, asset_uses, versions] {
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
                    hashes.key(key.key_hash);
                    by_created.key(tree_keys::key_created(&key.created_at, id));
                }
                Err(e) => p.push(format!("key {id}: {e}")),
            }
        }
        hashes.check(p)?;
        by_created.check(p)?;
        out.passes = self.verify_passes(&library_ids, p)?;

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
        for key in counters.into_keys() {
            counter_keys.key(key);
        }
        counter_keys.check(p)?;
        Ok(out)
    }

    /// Checks the passes: each decodes, belongs to a library that exists, has its hash
    /// entry, and has its place in its library's list; the lists name no other pass. Returns
    /// how many pass records there are.
    fn verify_passes(&self, libraries: &HashSet<Uuid>, p: &mut Vec<String>) -> Result<u64, Error> {
        let mut count = 0;
        let mut hashes = Expect::new("pass_hashes", &self.pass_hashes);
        let mut lists: BTreeMap<Uuid, PassListRec> = BTreeMap::new();
        for kv in self.passes.iter() {
            let (k, v) = kv?;
            count += 1;
            let id = id_of(&k)?;
            match decode::<PassRec>(PassRec::WHAT, &v).and_then(|r| r.into_pass(id)) {
                Ok(pass) => {
                    if !libraries.contains(&pass.library_id) {
                        p.push(format!("pass {id}: of missing library {}", pass.library_id));
                    }
                    hashes.pair(pass.token_hash, id.as_bytes().to_vec());
                    let place = tree_keys::pass_place(&pass.created_at, id);
                    lists.entry(pass.library_id).or_default().places.push(place);
                }
                Err(e) => p.push(format!("pass {id}: {e}")),
            }
        }
        hashes.check(p)?;
        let mut library_passes = Expect::new("library_passes", &self.library_passes);
        for (library, mut list) in lists {
            list.places.sort_unstable_by(|a, b| b.cmp(a));
            library_passes.pair(library.as_bytes(), encode(PassListRec::WHAT, &list)?);
        }
        library_passes.check(p)?;
        Ok(count)
    }

    /// Checks the items of one library: every entry's asset exists, the entry's copy of its
    /// fields is the asset's, and the record counts the published ones; adds the library's
    /// entries to the asset uses expected.
    fn check_entries(
        &self,
        id: Uuid,
        rec: &LibraryRec,
        assets: &HashMap<Uuid, Option<EntryCopy>>,
        uses: &mut BTreeMap<Uuid, UsesRec>,
        p: &mut Vec<String>,
    ) -> Result<(), Error> {
        let mut positions: BTreeMap<Uuid, Vec<u32>> = BTreeMap::new();
        let mut asset_count = 0u64;
        let prefix = tree_keys::items_prefix(id, rec.generation);
        for kv in self.library_items.scan_prefix(prefix) {
            let (k, v) = kv?;
            let item: ItemRec = match decode(ItemRec::WHAT, &v) {
                Ok(item) => item,
                Err(e) => {
                    p.push(format!("library {id}: {e}"));
                    continue;
                }
            };
            let Some(asset_id) = item.asset_id() else {
                continue;
            };
            let copy = match item {
                ItemRec::Entry { asset, .. } => Some(asset),
                _ => None,
            };
            match assets.get(&asset_id) {
                None => p.push(format!("library {id}: entry of missing asset {asset_id}")),
                Some(expected) => {
                    match (&copy, expected) {
                        (None, _) => p.push(format!(
                            "library {id}: entry of asset {asset_id} without its fields"
                        )),
                        (Some(copy), Some(expected)) if copy != expected => p.push(format!(
                            "library {id}: entry of asset {asset_id} holds {copy:?}, the \
                             asset {expected:?}"
                        )),
                        _ => {}
                    }
                    let published = expected.as_ref().is_some_and(|e| e.published);
                    asset_count += u64::from(published);
                    let position = tree_keys::item_position(&k)?;
                    positions.entry(asset_id).or_default().push(position);
                }
            }
        }
        if asset_count != rec.asset_count {
            p.push(format!(
                "library {id}: {asset_count} published assets, its record says {}",
                rec.asset_count
            ));
        }
        for (asset, positions) in positions {
            uses.entry(asset).or_default().set(id, positions);
        }
        Ok(())
    }
}
