//! The asset list's `search=` without a walk of the records (feature `search`): every asset's
//! title and description, folded as [`rules::fold_case`] folds them, kept in memory in one
//! buffer, so a search is one pass of `memchr`'s substring finder over it and reads the
//! records of its matches only.
//!
//! `search=` asks for a substring, which no word index answers; a trigram index would write a
//! hundred keys or more with every create. A sled database is open in one process at a time,
//! so the store keeps the texts beside it instead: read from the records by the first list
//! search after the database opens, then moved by every asset write after it commits
//! ([`Haystack::changed`], where the content versions move too). The memory is the folded
//! titles and descriptions themselves plus some 60 bytes an asset; a database on which no
//! list is searched never holds them.

use std::collections::HashMap;
use std::sync::RwLock;

use assetlib_core::store::rules;
use memchr::memmem;
use uuid::Uuid;

use crate::Inner;
use crate::error::Error;
use crate::record::{AssetRec, decode, decode_id};

/// What separates a title from its description and an entry from the next: a search for a
/// text without it never matches across them.
const END: char = '\0';

/// The folded texts of the assets, one entry after another.
#[derive(Default)]
struct Texts {
    /// Each entry: the folded title, [`END`], the folded description (or nothing), [`END`].
    buf: String,
    /// Where each entry starts in `buf`, and its asset; `None` once a later entry replaced it
    /// or the asset went.
    starts: Vec<(usize, Option<Uuid>)>,
    /// The live entry (an index of `starts`) of each asset.
    entries: HashMap<Uuid, usize>,
    /// Bytes of `buf` in entries no longer live.
    dead: usize,
}

impl Texts {
    /// Makes `rec`'s texts the live entry of asset `id`.
    fn put(&mut self, id: Uuid, rec: &AssetRec) {
        self.remove(id);
        let start = self.buf.len();
        self.buf.push_str(&rules::fold_case(&rec.title));
        self.buf.push(END);
        if let Some(d) = &rec.description {
            self.buf.push_str(&rules::fold_case(d));
        }
        self.buf.push(END);
        self.entries.insert(id, self.starts.len());
        self.starts.push((start, Some(id)));
    }

    /// Where entry `i` ends (the next one starts).
    fn end_of(&self, i: usize) -> usize {
        self.starts.get(i + 1).map_or(self.buf.len(), |(s, _)| *s)
    }

    /// Asset `id` has no live entry any more; the buffer is written anew once more of it is
    /// dead than live.
    fn remove(&mut self, id: Uuid) {
        let Some(i) = self.entries.remove(&id) else {
            return;
        };
        self.starts[i].1 = None;
        self.dead += self.end_of(i) - self.starts[i].0;
        if self.dead > (1 << 20) && self.dead * 2 > self.buf.len() {
            self.compact();
        }
    }

    /// Writes the live entries anew, in order, without the dead ones.
    fn compact(&mut self) {
        let mut fresh = Texts::default();
        for (i, &(start, id)) in self.starts.iter().enumerate() {
            if let Some(id) = id {
                fresh.entries.insert(id, fresh.starts.len());
                fresh.starts.push((fresh.buf.len(), Some(id)));
                fresh.buf.push_str(&self.buf[start..self.end_of(i)]);
            }
        }
        *self = fresh;
    }

    /// The assets whose title or description holds `needle` (folded), in no order.
    fn matching(&self, needle: &str) -> Vec<Uuid> {
        if needle.is_empty() || needle.contains(END) {
            // Every entry holds the empty text; no entry holds the separator.
            return if needle.is_empty() {
                self.entries.keys().copied().collect()
            } else {
                Vec::new()
            };
        }
        let finder = memmem::Finder::new(needle.as_bytes());
        let buf = self.buf.as_bytes();
        let mut out = Vec::new();
        let mut at = 0;
        while let Some(found) = finder.find(&buf[at..]) {
            // The entry the match is in; the search goes on after it.
            let i = self.starts.partition_point(|(s, _)| *s <= at + found) - 1;
            if let Some(id) = self.starts[i].1 {
                out.push(id);
            }
            at = self.end_of(i);
        }
        out
    }
}

/// The folded titles and descriptions of every asset, once a list search has asked.
#[derive(Default)]
pub(crate) struct Haystack {
    texts: RwLock<Option<Texts>>,
}

impl Haystack {
    /// The assets whose title or description holds `needle`, already folded
    /// ([`rules::fold_case`]), in no order; read from the records the first time.
    pub(crate) fn matching(&self, inner: &Inner, needle: &str) -> Result<Vec<Uuid>, Error> {
        if let Some(texts) = self.texts.read().map_err(|_| poisoned())?.as_ref() {
            return Ok(texts.matching(needle));
        }
        // Read under the write lock: a write that commits meanwhile waits in `changed`, then
        // reads its record again.
        let mut slot = self.texts.write().map_err(|_| poisoned())?;
        if slot.is_none() {
            let mut texts = Texts::default();
            for kv in inner.assets.iter() {
                let (k, v) = kv?;
                let rec: AssetRec = decode(AssetRec::WHAT, &v)?;
                texts.put(decode_id("asset key", &k)?, &rec);
            }
            *slot = Some(texts);
        }
        Ok(slot
            .as_ref()
            .map(|t| t.matching(needle))
            .unwrap_or_default())
    }

    /// Reads the records of `ids` again after a write to them committed (a deleted one
    /// leaves). A read that fails drops the texts, which the next search reads again.
    pub(crate) fn changed(&self, inner: &Inner, ids: impl IntoIterator<Item = Uuid>) {
        let Ok(mut slot) = self.texts.write() else {
            return;
        };
        let Some(texts) = slot.as_mut() else {
            return;
        };
        for id in ids {
            match inner.asset_rec(id) {
                Ok(Some(rec)) => texts.put(id, &rec),
                Ok(None) => texts.remove(id),
                Err(_) => {
                    *slot = None;
                    return;
                }
            }
        }
    }
}

fn poisoned() -> Error {
    Error::invalid("list search texts", "a thread panicked while holding them")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(title: &str, description: Option<&str>) -> AssetRec {
        let mut asset =
            assetlib_core::testing::sample_asset(title, assetlib_core::AssetType::Pdf, 1);
        asset.description = description.map(Into::into);
        AssetRec::new(&asset)
    }

    #[test]
    fn matches_stay_inside_one_field_of_one_live_entry() {
        let mut texts = Texts::default();
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        texts.put(a, &rec("Harbour Map", Some("Bay")));
        texts.put(b, &rec("Mapping", None));
        let mut found = texts.matching("map");
        found.sort();
        assert_eq!(found, [a, b]);
        assert_eq!(
            texts.matching("mapbay"),
            Vec::<Uuid>::new(),
            "not across fields"
        );
        assert_eq!(
            texts.matching("baymapping"),
            Vec::<Uuid>::new(),
            "not across entries"
        );
        texts.put(a, &rec("Chart", None));
        assert_eq!(texts.matching("map"), [b], "the replaced entry is dead");
        texts.remove(b);
        assert_eq!(texts.matching("map"), Vec::<Uuid>::new());
        assert_eq!(texts.matching(""), [a]);
        assert_eq!(texts.matching("a\0b"), Vec::<Uuid>::new());
    }

    #[test]
    fn dead_entries_are_dropped_once_they_outweigh_the_live() {
        let mut texts = Texts::default();
        let long = "x".repeat(1 << 20);
        let keep = Uuid::from_u128(7);
        texts.put(keep, &rec("Keep me", None));
        for n in 0..3u128 {
            texts.put(Uuid::from_u128(100 + n), &rec(&long, None));
            texts.remove(Uuid::from_u128(100 + n));
        }
        assert!(
            texts.buf.len() < 2 << 20,
            "written anew: {}",
            texts.buf.len()
        );
        assert_eq!(texts.matching("keep"), [keep]);
        assert_eq!(texts.matching("xxx"), Vec::<Uuid>::new());
    }
}
