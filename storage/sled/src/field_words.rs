//! The search index of the assets' own fields, kept in memory (feature `search`): every word
//! of each asset's title, tags and description, with the fields it is in, and what a search's
//! filters ask of the asset (published, public, type, workspace).
//!
//! A word kept as a sled key costs a create about as much as each of the record's own keys
//! (BENCHMARKS.md, "What a key costs sled"), and a title and description hold ten words or
//! more. A sled database is open in one process at a time, so the store keeps these words
//! beside it instead, as it keeps the list search's texts (`haystack.rs`): read from the
//! records by the first search after the database opens, then moved by every asset write
//! after it commits and before it is answered ([`FieldWords::changed`]). The records are
//! the only copy on disk, so a kill loses nothing an answer confirmed: the next open reads
//! them again. The words of the files' text stay in sled (`search_text_words`), written off
//! a create's path.
//!
//! The memory: each distinct word once, 8 bytes for each word of each asset, and some 60
//! bytes an asset.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::RwLock;

use assetlib_core::Asset;
use assetlib_core::search::Language;
use assetlib_core::store::{FieldSet, asset_field_words};
use uuid::Uuid;

use crate::Inner;
use crate::error::Error;
use crate::record::{AssetRec, decode, decode_id};
use crate::search_keys::{Facets, Posting};
use crate::tree_keys::ts;

/// One asset, as the index keeps it.
struct Doc {
    id: Uuid,
    created: [u8; 12],
    facets: Facets,
    /// Its words (indexes of [`Fields::lists`]).
    words: Box<[u32]>,
}

/// The words and facets of every asset.
#[derive(Default)]
pub(crate) struct Fields {
    /// Each word ever held since the database opened, and its list in `lists`.
    words: BTreeMap<Box<str>, u32>,
    /// Per word: the assets holding it (slots of `docs`, ascending) and in which fields.
    lists: Vec<Vec<(u32, FieldSet)>>,
    /// The assets; a slot is `None` once its asset went, until `free` lends it again.
    docs: Vec<Option<Doc>>,
    free: Vec<u32>,
    /// The slot of each asset.
    slots: HashMap<Uuid, u32>,
}

impl Fields {
    /// Makes `asset`'s words and facets (its words stemmed in `language`) those kept for it.
    fn put(&mut self, asset: &Asset, language: Option<Language>) {
        self.remove(asset.id);
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.docs.push(None);
                u32::try_from(self.docs.len() - 1).unwrap_or(u32::MAX)
            }
        };
        let mut words = Vec::new();
        for (word, fields) in asset_field_words(asset, language) {
            let next = u32::try_from(self.lists.len()).unwrap_or(u32::MAX);
            let w = *self.words.entry(word.into_boxed_str()).or_insert(next);
            if w == next {
                self.lists.push(Vec::new());
            }
            let list = &mut self.lists[w as usize];
            let at = list.partition_point(|(s, _)| *s < slot);
            list.insert(at, (slot, fields));
            words.push(w);
        }
        self.docs[slot as usize] = Some(Doc {
            id: asset.id,
            created: ts(&asset.created_at),
            facets: Facets::of(asset),
            words: words.into_boxed_slice(),
        });
        self.slots.insert(asset.id, slot);
    }

    /// Asset `id` is no longer kept.
    fn remove(&mut self, id: Uuid) {
        let Some(slot) = self.slots.remove(&id) else {
            return;
        };
        if let Some(doc) = self.docs[slot as usize].take() {
            for w in doc.words.iter() {
                let list = &mut self.lists[*w as usize];
                if let Ok(at) = list.binary_search_by_key(&slot, |(s, _)| *s) {
                    list.remove(at);
                }
            }
        }
        self.free.push(slot);
    }

    /// Calls `each` with every asset holding `word` (whole, or as the beginning of a word
    /// when `prefix`): its id, created time and the fields the word is in.
    pub(crate) fn postings(&self, word: &str, prefix: bool, mut each: impl FnMut(Posting)) {
        let lists: Box<dyn Iterator<Item = u32>> = if prefix {
            Box::new(
                self.words
                    .range::<str, _>((Bound::Included(word), Bound::Unbounded))
                    .take_while(|(w, _)| w.starts_with(word))
                    .map(|(_, l)| *l),
            )
        } else {
            Box::new(self.words.get(word).copied().into_iter())
        };
        for l in lists {
            for (slot, fields) in &self.lists[l as usize] {
                if let Some(doc) = &self.docs[*slot as usize] {
                    each(Posting {
                        id: doc.id,
                        created: Some(doc.created),
                        fields: *fields,
                    });
                }
            }
        }
    }

    /// What the filters of a search ask of asset `id` (`None` when it is gone).
    pub(crate) fn facets(&self, id: Uuid) -> Option<&Facets> {
        let slot = self.slots.get(&id)?;
        self.docs[*slot as usize].as_ref().map(|d| &d.facets)
    }
}

/// The words and facets of every asset, once a search has asked.
#[derive(Default)]
pub(crate) struct FieldWords {
    fields: RwLock<Option<Fields>>,
}

impl FieldWords {
    /// Calls `f` with the words and facets of every asset, read from the records of `inner`
    /// the first time. A write waits for `f` to return.
    pub(crate) fn with<R>(
        &self,
        inner: &Inner,
        f: impl FnOnce(&Fields) -> Result<R, Error>,
    ) -> Result<R, Error> {
        loop {
            if let Some(fields) = self.fields.read().map_err(|_| poisoned())?.as_ref() {
                return f(fields);
            }
            // Read under the write lock: a write that commits meanwhile waits in `changed`,
            // then reads its record again.
            let mut slot = self.fields.write().map_err(|_| poisoned())?;
            if slot.is_none() {
                let language = inner.search.language;
                let mut fields = Fields::default();
                for kv in inner.assets.iter() {
                    let (k, v) = kv?;
                    let rec: AssetRec = decode(AssetRec::WHAT, &v)?;
                    fields.put(&rec.into_asset(decode_id("asset key", &k)?, 0)?, language);
                }
                *slot = Some(fields);
            }
        }
    }

    /// Reads the records of `ids` again after a write to them committed (a deleted one
    /// leaves). A read that fails drops the index, which the next search reads again.
    pub(crate) fn changed(&self, inner: &Inner, ids: &[Uuid]) {
        let Ok(mut slot) = self.fields.write() else {
            return;
        };
        let Some(fields) = slot.as_mut() else {
            return;
        };
        for &id in ids {
            match inner
                .asset_rec(id)
                .and_then(|r| r.map(|r| r.into_asset(id, 0)).transpose())
            {
                Ok(Some(asset)) => fields.put(&asset, inner.search.language),
                Ok(None) => fields.remove(id),
                Err(_) => {
                    *slot = None;
                    return;
                }
            }
        }
    }
}

fn poisoned() -> Error {
    Error::invalid("search words", "a thread panicked while holding them")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree_keys;
    use assetlib_core::AssetType;
    use assetlib_core::testing::sample_asset;

    fn ids(fields: &Fields, word: &str, prefix: bool) -> Vec<(Uuid, FieldSet)> {
        let mut out = Vec::new();
        fields.postings(word, prefix, |p| out.push((p.id, p.fields)));
        out.sort_by_key(|(id, _)| *id);
        out
    }

    #[test]
    fn words_move_with_their_assets_and_slots_are_lent_again() {
        let mut fields = Fields::default();
        let mut a = sample_asset("Harbour map", AssetType::Image, 1);
        a.description = Some("A map of the bay".into());
        let mut b = sample_asset("Mapping tides", AssetType::Pdf, 2);
        b.tags = vec!["map".into()];
        fields.put(&a, None);
        fields.put(&b, None);
        let mut both = vec![
            (a.id, FieldSet::TITLE | FieldSet::DESCRIPTION),
            (b.id, FieldSet::TAGS),
        ];
        both.sort_by_key(|(id, _)| *id);
        assert_eq!(ids(&fields, "map", false), both);
        assert_eq!(ids(&fields, "map", true).len(), 3, "map and mapping");
        assert_eq!(ids(&fields, "tid", true), [(b.id, FieldSet::TITLE)]);
        assert_eq!(ids(&fields, "tid", false), []);

        a.title = "Chart".into();
        a.description = None;
        a.published = !a.published;
        fields.put(&a, None);
        assert_eq!(ids(&fields, "map", false), [(b.id, FieldSet::TAGS)]);
        assert_eq!(ids(&fields, "chart", false), [(a.id, FieldSet::TITLE)]);
        assert_eq!(fields.facets(a.id).map(|f| f.published), Some(a.published));

        fields.remove(b.id);
        assert_eq!(ids(&fields, "map", true), []);
        assert!(fields.facets(b.id).is_none());
        let c = sample_asset("Map again", AssetType::Document, 3);
        fields.put(&c, None);
        assert_eq!(fields.docs.len(), 2, "b's slot is lent to c");
        assert_eq!(ids(&fields, "map", false), [(c.id, FieldSet::TITLE)]);
        assert_eq!(
            fields.facets(c.id).map(|f| f.type_code),
            Some(tree_keys::type_code(AssetType::Document))
        );
    }
}
