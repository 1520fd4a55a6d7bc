//! The transaction of an import: every record of one call written with its index keys and
//! counts, over every tree an import touches (see `import.rs`).

use std::collections::HashMap;

use assetlib_core::transfer::{LibraryRecord, Record};
use assetlib_core::{ApiKey, Asset, Library, LibraryPass};
use sled::Transactional;
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::assets::claim_asset_slug;
use crate::documents::{self, entry_positions, ordered_items};
use crate::error::{Error, TxError, abort};
use crate::libraries::claim_library_slug;
use crate::passes::{PassListRec, PassRec, read_list};
use crate::record::{AssetRec, EntryCopy, KeyRec, LibraryRec, decode, encode};
use crate::tx::{self, add_count};
use crate::{Inner, tree_keys, versions};

/// The `what` of the [`Error::Invalid`] that refuses a call: a record that cannot be kept.
pub(crate) const REFUSED: &str = "record to import";

/// Refuses the call for the reason `detail`.
pub(crate) fn refuse(detail: String) -> Error {
    Error::Invalid {
        what: REFUSED,
        detail,
    }
}

/// What an import's transaction wrote besides the records as they are: the assets written,
/// and the webhooks written with where their streams start.
pub(crate) type Written = (Vec<Uuid>, Vec<(Uuid, u64)>);

impl Inner {
    /// Writes `records` in one transaction, each unless its id is there: `events` (each
    /// place and stored event) and `hooks` (each webhook's id, stream start and stored record)
    /// as worked out before, each library's items under its generation in `generations`.
    pub(crate) fn write_records(
        &self,
        records: &[Record],
        events: &[(u64, Vec<u8>)],
        hooks: &[(Uuid, u64, Vec<u8>)],
        generations: &HashMap<Uuid, u64>,
    ) -> Result<Written, Error> {
        let written = self.import_tx(|t| {
            let mut assets = Vec::new();
            for record in records {
                match record {
                    Record::SigningSecret { secret } => {
                        t.meta.insert(crate::websites::SECRET_KEY, &secret.0[..])?;
                    }
                    Record::Key(key) => import_key(t, key)?,
                    Record::Asset(asset) => {
                        if import_asset(t, asset)? {
                            assets.push(asset.id);
                        }
                    }
                    #[cfg(feature = "search")]
                    Record::Text(text) => import_text(t, text)?,
                    #[cfg(not(feature = "search"))]
                    Record::Text(_) => {}
                    Record::Library(l) => {
                        let generation = generations.get(&l.library.id).ok_or_else(|| {
                            abort(Error::invalid("import", "a library without a generation"))
                        })?;
                        import_library(t, l, *generation)?;
                    }
                    Record::Pass(pass) => import_pass(t, pass)?,
                    Record::Event(_) | Record::Webhook(_) | Record::Delivery(_) => {}
                }
            }
            for (place, value) in events {
                t.events
                    .insert(&place.to_be_bytes()[..], value.as_slice())?;
            }
            let mut written = Vec::new();
            for (id, start, value) in hooks {
                if t.webhooks.get(id.as_bytes())?.is_none() {
                    t.webhooks.insert(id.as_bytes(), value.as_slice())?;
                    written.push((*id, *start));
                }
            }
            Ok((assets, written))
        })?;
        Ok(written)
    }
}

/// The trees of an import, in its transaction.
struct ImportTx<'a> {
    meta: &'a TransactionalTree,
    keys: &'a TransactionalTree,
    key_hashes: &'a TransactionalTree,
    key_idx_created: &'a TransactionalTree,
    assets: &'a TransactionalTree,
    asset_slugs: &'a TransactionalTree,
    counts: &'a TransactionalTree,
    counters: &'a TransactionalTree,
    asset_uses: &'a TransactionalTree,
    indexes: tx::IndexTrees<'a>,
    libraries: &'a TransactionalTree,
    library_slugs: &'a TransactionalTree,
    library_items: &'a TransactionalTree,
    library_published: &'a TransactionalTree,
    library_workspaces: &'a TransactionalTree,
    versions: &'a TransactionalTree,
    passes: &'a TransactionalTree,
    pass_hashes: &'a TransactionalTree,
    library_passes: &'a TransactionalTree,
    events: &'a TransactionalTree,
    webhooks: &'a TransactionalTree,
    /// The kept texts and their words (feature `search`).
    #[cfg(feature = "search")]
    texts: [&'a TransactionalTree; 2],
}

impl Inner {
    /// Runs `f` in one transaction over every tree an import writes.
    fn import_tx<T>(&self, f: impl Fn(&ImportTx<'_>) -> Result<T, TxError>) -> Result<T, Error> {
        let meta = self.db.open_tree("meta")?;
        let mut trees = vec![
            &meta,
            &self.keys,
            &self.key_hashes,
            &self.key_idx_created,
            &self.assets,
            &self.asset_slugs,
            &self.counts,
            &self.counters,
            &self.asset_uses,
            &self.libraries,
            &self.library_slugs,
            &self.library_items,
            &self.library_idx_published,
            &self.library_idx_workspace,
            &self.versions,
            &self.passes,
            &self.pass_hashes,
            &self.library_passes,
            &self.events,
            &self.webhooks,
        ];
        self.push_asset_trees(&mut trees);
        Ok(trees.as_slice().transaction(|trees| {
            let [
                meta,
                keys,
                key_hashes,
                key_idx_created,
                assets,
                asset_slugs,
                counts,
                counters,
                asset_uses,
                libraries,
                library_slugs,
                library_items,
                library_published,
                library_workspaces,
                versions,
                passes,
                pass_hashes,
                library_passes,
                events,
                webhooks,
                rest @ ..,
            ] = trees.as_slice()
            else {
                return Err(abort(Error::invalid("transaction", "a tree is missing")));
            };
            let tail = self.asset_trees_tx(rest)?;
            f(&ImportTx {
                meta,
                keys,
                key_hashes,
                key_idx_created,
                assets,
                asset_slugs,
                counts,
                counters,
                asset_uses,
                indexes: tail.indexes,
                libraries,
                library_slugs,
                library_items,
                library_published,
                library_workspaces,
                versions,
                passes,
                pass_hashes,
                library_passes,
                events,
                webhooks,
                #[cfg(feature = "search")]
                texts: tail.texts,
            })
        })?)
    }
}

/// Aborts the transaction for the reason `detail`.
fn refused(detail: String) -> TxError {
    abort(refuse(detail))
}

/// Writes `key`, its hash entry and created-time index key, unless its id is there.
fn import_key(t: &ImportTx<'_>, key: &ApiKey) -> Result<(), TxError> {
    let id = key.id;
    if t.keys.get(id.as_bytes())?.is_some() {
        return Ok(());
    }
    if t.key_hashes.get(key.key_hash)?.is_some() {
        return Err(abort(Error::DuplicateKeyHash));
    }
    let value = encode(KeyRec::WHAT, &KeyRec::new(key)).map_err(abort)?;
    t.keys.insert(id.as_bytes(), value)?;
    t.key_hashes.insert(&key.key_hash[..], id.as_bytes())?;
    let created = tree_keys::key_created(&key.created_at, id);
    t.key_idx_created.insert(&created[..], &[][..])?;
    Ok(())
}

/// Writes `asset` with its slug claim, download counter, index keys and counts, unless its id
/// is there; whether it wrote it.
fn import_asset(t: &ImportTx<'_>, asset: &Asset) -> Result<bool, TxError> {
    let id = asset.id;
    if t.assets.get(id.as_bytes())?.is_some() {
        return Ok(false);
    }
    let workspace = asset.workspace_id.as_deref();
    let slug = claim_asset_slug(t.asset_slugs, (workspace, &asset.slug), id)?;
    let asset = Asset {
        slug,
        ..asset.clone()
    };
    let value = encode(AssetRec::WHAT, &AssetRec::new(&asset)).map_err(abort)?;
    t.assets.insert(id.as_bytes(), value)?;
    let downloads = asset.download_count.to_be_bytes();
    t.counters
        .insert(&tree_keys::downloads(id)[..], &downloads[..])?;
    tx::asset_keys(t.indexes, t.counts, &asset, true)?;
    Ok(true)
}

/// Keeps `text` with its words, unless its asset has one; left out when its asset is not
/// there (as a text set for a missing asset is).
#[cfg(feature = "search")]
fn import_text(
    t: &ImportTx<'_>,
    text: &assetlib_core::transfer::TextRecord,
) -> Result<(), TxError> {
    use crate::search_keys::{TextRec, created_of, text_word_keys};
    let id = text.asset_id;
    let [texts, text_words] = t.texts;
    if texts.get(id.as_bytes())?.is_some() {
        return Ok(());
    }
    let Some(asset) = t.assets.get(id.as_bytes())? else {
        return Ok(());
    };
    let created = created_of(&asset).map_err(abort)?;
    let rec = TextRec {
        pages: text.pages.clone(),
        paged: text.paged,
    };
    texts.insert(id.as_bytes(), encode(TextRec::WHAT, &rec).map_err(abort)?)?;
    for key in text_word_keys(&rec, id, t.indexes.language) {
        text_words.insert(key, &created[..])?;
    }
    Ok(())
}

/// Writes library `l` whole, its items under `generation`, unless its id is there. Every
/// entry's asset must be there (or written before it in this call).
fn import_library(t: &ImportTx<'_>, l: &LibraryRecord, generation: u64) -> Result<(), TxError> {
    let id = l.library.id;
    let ordered = ordered_items(&l.sections, &l.entries);
    let uses = entry_positions(&ordered);
    // Each asset once, however many entries it has: its copy for the entries, and the
    // published ones counted.
    let mut copies: HashMap<Uuid, EntryCopy> = HashMap::with_capacity(uses.len());
    let mut asset_count = 0u64;
    for (asset_id, positions) in &uses {
        let Some(v) = t.assets.get(asset_id.as_bytes())? else {
            return Err(refused(format!(
                "library {id} holds asset {asset_id}, which is not here"
            )));
        };
        let asset: AssetRec = decode(AssetRec::WHAT, &v).map_err(abort)?;
        if asset.published {
            let n = u64::try_from(positions.len()).unwrap_or(u64::MAX);
            asset_count = asset_count.saturating_add(n);
        }
        copies.insert(*asset_id, EntryCopy::of(&asset));
    }
    if t.libraries.get(id.as_bytes())?.is_some() {
        return Ok(());
    }
    let item_count = u32::try_from(ordered.len()).map_err(|_| {
        abort(Error::TooLarge(
            "a library holds at most 2^32 - 1 sections and entries",
        ))
    })?;
    let encoded = documents::encode_items(&ordered, &copies)?;
    let workspace = l.library.settings.workspace_id.as_deref();
    let slug = claim_library_slug(t.library_slugs, (workspace, &l.library.slug), id, false)?;
    let library = Library {
        slug,
        ..l.library.clone()
    };
    for (asset, positions) in &uses {
        let mut rec = tx::read_uses(t.asset_uses, *asset)?;
        rec.set(id, positions.clone());
        tx::write_uses(t.asset_uses, *asset, &rec)?;
    }
    for (position, value) in (0u32..).zip(&encoded) {
        let key = tree_keys::item(id, generation, position);
        t.library_items.insert(&key[..], value.as_slice())?;
    }
    let rec = LibraryRec::new(&library, generation, item_count, asset_count);
    // Listed as a library write lists it: only when published.
    if let Some(at) = rec.listed_at().map_err(abort)? {
        let key = tree_keys::library_published(&at, id);
        t.library_published.insert(&key[..], &[][..])?;
        add_count(t.counts, tree_keys::COUNT_LIBRARIES, 1)?;
        if let Some(ws) = &rec.workspace_id {
            let key = tree_keys::library_workspace(ws, &at, id);
            t.library_workspaces.insert(key, &[][..])?;
            add_count(t.counts, &tree_keys::count_workspace(ws), 1)?;
        }
    }
    let value = encode(LibraryRec::WHAT, &rec).map_err(abort)?;
    t.libraries.insert(id.as_bytes(), value)?;
    versions::bump_library(t.versions, id)?;
    let views = library.view_count.to_be_bytes();
    t.counters.insert(&tree_keys::views(id)[..], &views[..])?;
    Ok(())
}

/// Writes `pass`, its hash entry and its place in its library's list, unless its id is
/// there. Its library must be there (or written before it in this call).
fn import_pass(t: &ImportTx<'_>, pass: &LibraryPass) -> Result<(), TxError> {
    let (id, library) = (pass.id, pass.library_id);
    if t.passes.get(id.as_bytes())?.is_some() {
        return Ok(());
    }
    if t.libraries.get(library.as_bytes())?.is_none() {
        return Err(refused(format!(
            "pass {id} is of library {library}, which is not here"
        )));
    }
    if t.pass_hashes.get(pass.token_hash)?.is_some() {
        return Err(abort(Error::DuplicateKeyHash));
    }
    let value = encode(PassRec::WHAT, &PassRec::new(pass)).map_err(abort)?;
    t.passes.insert(id.as_bytes(), value)?;
    t.pass_hashes.insert(&pass.token_hash[..], id.as_bytes())?;
    let mut list = read_list(t.library_passes, library)?;
    list.add(tree_keys::pass_place(&pass.created_at, id));
    let list = encode(PassListRec::WHAT, &list).map_err(abort)?;
    t.library_passes.insert(library.as_bytes(), list)?;
    Ok(())
}
