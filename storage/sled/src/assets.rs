//! Assets: reads, lists, inserts and updates.

use std::collections::HashSet;

use assetlib_core::{Asset, AssetQuery, AssetSort, Page, SortOrder};
use sled::Transactional;
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::Inner;
use crate::error::{Error, TxError, abort};
use crate::record::{AssetRec, decode, decode_id, encode};
use crate::tree_keys::{self, SCOPE_ALL};
use crate::tx::add_count;
use crate::versions;

/// The three sorts, in the order of the index trees in [`Inner::insert_asset`].
const SORTS: [AssetSort; 3] = [AssetSort::CreatedAt, AssetSort::UpdatedAt, AssetSort::Title];

impl Inner {
    fn asset_index_tree(&self, sort: AssetSort) -> &sled::Tree {
        match sort {
            AssetSort::CreatedAt => &self.asset_idx_created,
            AssetSort::UpdatedAt => &self.asset_idx_updated,
            AssetSort::Title => &self.asset_idx_title,
        }
    }

    /// The stored record of an asset.
    pub(crate) fn asset_rec(&self, id: Uuid) -> Result<Option<AssetRec>, Error> {
        self.get(&self.assets, id.as_bytes())?
            .map(|v| decode(AssetRec::WHAT, &v))
            .transpose()
    }

    /// An asset with its download count.
    pub(crate) fn load_asset(&self, id: Uuid) -> Result<Option<Asset>, Error> {
        match self.asset_rec(id)? {
            Some(rec) => self.complete_asset(id, rec).map(Some),
            None => Ok(None),
        }
    }

    fn complete_asset(&self, id: Uuid, rec: AssetRec) -> Result<Asset, Error> {
        let downloads = self.counter(&tree_keys::downloads(id))?.unwrap_or(0);
        rec.into_asset(id, downloads)
    }

    /// An asset that an index key names; its absence is corruption.
    fn indexed_asset(&self, id: Uuid) -> Result<Asset, Error> {
        self.load_asset(id)?
            .ok_or_else(|| Error::invalid("asset index", format!("entry for missing asset {id}")))
    }

    pub(crate) fn get_assets(&self, ids: &[Uuid]) -> Result<Vec<Asset>, Error> {
        let mut seen = HashSet::with_capacity(ids.len());
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            if seen.insert(id) {
                if let Some(a) = self.load_asset(id)? {
                    out.push(a);
                }
            }
        }
        Ok(out)
    }

    pub(crate) fn list_assets(&self, q: &AssetQuery) -> Result<Page<Asset>, Error> {
        let tree = self.asset_index_tree(q.sort);
        let scope = [q.asset_type.map_or(SCOPE_ALL, tree_keys::scope_of)];
        let desc = q.order == SortOrder::Desc;
        let per_page = u64::from(q.per_page);
        let offset = q.offset();

        if let Some(needle) = &q.search {
            // No text index: walk the published assets in order and keep the matches.
            let needle = needle.to_lowercase();
            let mut total = 0u64;
            let mut items = Vec::new();
            for kv in self.scan(tree, &scope, desc) {
                let (key, _) = kv?;
                let id = tree_keys::trailing_id(&key)?;
                let rec = self.asset_rec(id)?.ok_or_else(|| {
                    Error::invalid("asset index", format!("entry for missing asset {id}"))
                })?;
                let hit = rec.title.to_lowercase().contains(&needle)
                    || rec
                        .description
                        .as_ref()
                        .is_some_and(|d| d.to_lowercase().contains(&needle));
                if !hit {
                    continue;
                }
                if total >= offset && (items.len() as u64) < per_page {
                    items.push(self.complete_asset(id, rec)?);
                }
                total += 1;
            }
            return Ok(Page { items, total });
        }

        let total = match q.asset_type {
            None => self.count(tree_keys::COUNT_ASSETS)?,
            Some(t) => self.count(&tree_keys::count_asset_type(t))?,
        };
        let ids = self.page_ids(tree, &scope, desc, offset, q.per_page, total)?;
        let items = ids
            .into_iter()
            .map(|id| self.indexed_asset(id))
            .collect::<Result<_, _>>()?;
        Ok(Page { items, total })
    }

    /// Stores a new asset, its slug claim, download counter, index keys and counts in one
    /// transaction.
    pub(crate) fn insert_asset(&self, asset: Asset) -> Result<Asset, Error> {
        let id = asset.id;
        let rec = AssetRec::new(&asset);
        let index_keys = index_keys(&asset);
        let downloads = asset.download_count.to_be_bytes();
        let type_count = tree_keys::count_asset_type(asset.asset_type);

        let slug = (
            &self.assets,
            &self.asset_slugs,
            &self.asset_idx_created,
            &self.asset_idx_updated,
            &self.asset_idx_title,
            &self.counts,
            &self.counters,
        )
            .transaction(
                |(assets, slugs, created, updated, title, counts, counters)| {
                    if assets.get(id.as_bytes())?.is_some() {
                        return Err(abort(Error::DuplicateId(id)));
                    }
                    let slug = claim_asset_slug(slugs, &rec.slug, id)?;
                    let mut rec = rec.clone();
                    rec.slug.clone_from(&slug);
                    let value = encode(AssetRec::WHAT, &rec).map_err(abort)?;
                    assets.insert(&id.as_bytes()[..], value)?;
                    counters.insert(&tree_keys::downloads(id)[..], &downloads[..])?;
                    for (tree, pair) in [created, updated, title].into_iter().zip(&index_keys) {
                        for key in pair {
                            tree.insert(key.as_slice(), &[][..])?;
                        }
                    }
                    if !index_keys.is_empty() {
                        add_count(counts, tree_keys::COUNT_ASSETS, 1)?;
                        add_count(counts, &type_count, 1)?;
                    }
                    Ok(slug)
                },
            )?;
        Ok(Asset { slug, ..asset })
    }

    /// Replaces an asset's fields, keeping its slug, `created_at` and `published`, moving its
    /// index keys and type counts, and advancing the asset epoch, in one transaction.
    pub(crate) fn update_asset(&self, asset: Asset) -> Result<Option<Asset>, Error> {
        let id = asset.id;
        let updated = (
            &self.assets,
            &self.asset_idx_created,
            &self.asset_idx_updated,
            &self.asset_idx_title,
            &self.counts,
            &self.versions,
        )
            .transaction(|(assets, created, updated, title, counts, versions)| {
                let Some(v) = assets.get(id.as_bytes())? else {
                    return Ok(None);
                };
                let old = decode::<AssetRec>(AssetRec::WHAT, &v)
                    .and_then(|rec| rec.into_asset(id, 0))
                    .map_err(abort)?;
                let new = Asset {
                    slug: old.slug.clone(),
                    created_at: old.created_at,
                    published: old.published,
                    download_count: 0,
                    ..asset.clone()
                };
                let trees = [created, updated, title];
                for (tree, pair) in trees.iter().zip(&index_keys(&old)) {
                    for key in pair {
                        tree.remove(key.as_slice())?;
                    }
                }
                for (tree, pair) in trees.iter().zip(&index_keys(&new)) {
                    for key in pair {
                        tree.insert(key.as_slice(), &[][..])?;
                    }
                }
                if new.published && new.asset_type != old.asset_type {
                    add_count(counts, &tree_keys::count_asset_type(old.asset_type), -1)?;
                    add_count(counts, &tree_keys::count_asset_type(new.asset_type), 1)?;
                }
                let value = encode(AssetRec::WHAT, &AssetRec::new(&new)).map_err(abort)?;
                assets.insert(&id.as_bytes()[..], value)?;
                versions::bump_assets(versions)?;
                Ok(Some(new))
            })?;
        match updated {
            Some(asset) => {
                let download_count = self.counter(&tree_keys::downloads(id))?.unwrap_or(0);
                Ok(Some(Asset {
                    download_count,
                    ..asset
                }))
            }
            None => Ok(None),
        }
    }
}

/// Index keys of an asset per tree (created, updated, title): in the list of all and of its
/// type. None for an unpublished asset.
fn index_keys(asset: &Asset) -> Vec<[Vec<u8>; 2]> {
    if !asset.published {
        return Vec::new();
    }
    SORTS
        .iter()
        .map(|&sort| {
            [SCOPE_ALL, tree_keys::scope_of(asset.asset_type)].map(|scope| {
                tree_keys::asset_index(
                    scope,
                    sort,
                    asset.id,
                    &asset.created_at,
                    &asset.updated_at,
                    &asset.title,
                )
            })
        })
        .collect()
}

/// Claims `wanted`, or the first free one of `wanted-2`, `wanted-3`, ... for asset `id`.
///
/// Asset slugs are never released (assets are never deleted), so every suffix below the
/// stored hint is taken and the search can start there: the result is still the first free
/// one, found in O(1) reads however many assets share a title.
fn claim_asset_slug(slugs: &TransactionalTree, wanted: &str, id: Uuid) -> Result<String, TxError> {
    let take = |slug: &str| -> Result<bool, TxError> {
        let key = tree_keys::asset_slug(slug);
        if let Some(holder) = slugs.get(&key)? {
            // Decode to notice corruption; any holder means taken.
            decode_id("asset slug", &holder).map_err(abort)?;
            return Ok(false);
        }
        slugs.insert(key, &id.as_bytes()[..])?;
        Ok(true)
    };
    if take(wanted)? {
        return Ok(wanted.to_owned());
    }
    let hint_key = tree_keys::asset_slug_hint(wanted);
    let mut n = match slugs.get(&hint_key)? {
        Some(v) => tree_keys::decode_u64("slug hint", &v)
            .map_err(abort)?
            .max(2),
        None => 2,
    };
    loop {
        let candidate = format!("{wanted}-{n}");
        if take(&candidate)? {
            slugs.insert(hint_key, &(n.saturating_add(1)).to_be_bytes()[..])?;
            return Ok(candidate);
        }
        n = n
            .checked_add(1)
            .ok_or_else(|| abort(Error::TooLarge("no free slug suffix")))?;
    }
}
