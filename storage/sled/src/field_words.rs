//! The search index of the assets' own fields, kept in memory (feature `search`): every word
//! of each asset's title, tags and description, with the fields it is in, and what a search's
//! filters ask of the asset (published, public, type, workspace).
//!
//! A word kept as a sled key costs a create about as much as each of the record's own keys
//! (BENCHMARKS.md, "What a key costs sled"), and a title and description hold ten words or
//! more. A sled database is open in one process at a time, so the store keeps these words
//! beside it instead, as it keeps the list search's texts (`haystack.rs`): read from the
//! records by the first search after the database opens, then moved by every asset write
//! after it commits and before it is answered, on the thread that wrote it: a create keeps
//! the words of the asset it wrote ([`FieldWords::created`]), a change or a delete reads the
//! record again ([`FieldWords::changed`]), and the last to settle keeps what the last write
//! committed. The records are the only copy on disk, so a kill loses nothing an answer
//! confirmed: the next open reads them again. The words of the files' text stay in sled
//! (`search_text_words`), written off a create's path.
//!
//! The memory: each distinct word once, 8 bytes for each word of each asset, and some 100
//! bytes an asset (BENCHMARKS.md, "Search at a million assets", measures it). The first
//! search after an open, or [`SearchStore::prepare`](assetlib_core::store::SearchStore::prepare),
//! reads it in while writes wait: some 4 s at a million assets.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Bound;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

use assetlib_core::Asset;
use assetlib_core::search::Language;
use assetlib_core::store::{FieldSet, asset_field_words, field_words};
use uuid::Uuid;

use crate::Inner;
use crate::error::Error;
use crate::record::{AssetRec, decode, decode_id};
use crate::search_keys::{Facets, Posting};
use crate::tree_keys::{self, ts};

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
    /// Assets found gone by a write that settled before their create did
    /// ([`FieldWords::created`]), which then keeps nothing.
    gone: HashSet<Uuid>,
}

/// What the index keeps of one asset, made before the index is locked.
pub(crate) struct Entry {
    created: [u8; 12],
    facets: Facets,
    words: BTreeMap<String, FieldSet>,
}

impl Entry {
    /// The entry of `asset` (its words stemmed in `language`).
    fn of_asset(asset: &Asset, language: Option<Language>) -> Entry {
        Entry {
            created: ts(&asset.created_at),
            facets: Facets {
                published: asset.published,
                public: asset.is_public,
                type_code: tree_keys::type_code(asset.asset_type),
                workspace: asset
                    .workspace_id
                    .as_deref()
                    .unwrap_or("")
                    .as_bytes()
                    .into(),
            },
            words: asset_field_words(asset, language),
        }
    }

    /// The entry of the asset whose record is `rec` (its words stemmed in `language`).
    fn of_record(rec: &[u8], language: Option<Language>) -> Result<Entry, Error> {
        let rec: AssetRec = decode(AssetRec::WHAT, rec)?;
        Ok(Entry {
            created: ts(&rec.created_at.time()?),
            facets: Facets {
                published: rec.published,
                public: rec.is_public,
                type_code: rec.asset_type,
                workspace: rec.workspace_id.unwrap_or_default().into_bytes(),
            },
            words: field_words(&rec.title, &rec.tags, rec.description.as_deref(), language),
        })
    }
}

impl Fields {
    /// Makes `entry` what is kept for asset `id`. An asset kept already keeps its slot, and
    /// only the words it gained or lost move: a word most assets hold (a list of as many
    /// slots) is changed in place, not taken out and put back.
    fn put(&mut self, id: Uuid, entry: Entry) {
        let (slot, old) = match self.slots.get(&id) {
            Some(&slot) => {
                let old = self.docs[slot as usize].take().map(|doc| doc.words);
                (slot, old.unwrap_or_default())
            }
            None => {
                let slot = match self.free.pop() {
                    Some(slot) => slot,
                    None => {
                        self.docs.push(None);
                        u32::try_from(self.docs.len() - 1).unwrap_or(u32::MAX)
                    }
                };
                self.slots.insert(id, slot);
                (slot, Box::default())
            }
        };
        let mut words = Vec::with_capacity(entry.words.len());
        for (word, fields) in entry.words {
            let w = match self.words.get(word.as_str()) {
                Some(w) => *w,
                None => {
                    let w = u32::try_from(self.lists.len()).unwrap_or(u32::MAX);
                    self.words.insert(word.into_boxed_str(), w);
                    self.lists.push(Vec::new());
                    w
                }
            };
            let list = &mut self.lists[w as usize];
            match list.binary_search_by_key(&slot, |(s, _)| *s) {
                Ok(at) => list[at].1 = fields,
                Err(at) => list.insert(at, (slot, fields)),
            }
            words.push(w);
        }
        for w in old.iter().filter(|w| !words.contains(w)) {
            let list = &mut self.lists[*w as usize];
            if let Ok(at) = list.binary_search_by_key(&slot, |(s, _)| *s) {
                list.remove(at);
            }
        }
        self.docs[slot as usize] = Some(Doc {
            id,
            created: entry.created,
            facets: entry.facets,
            words: words.into_boxed_slice(),
        });
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

    /// Asset `id` is gone: no longer kept, or, when it is not kept yet, marked so that its
    /// create, settling later, keeps nothing.
    fn forget(&mut self, id: Uuid) {
        if self.slots.contains_key(&id) {
            self.remove(id);
        } else {
            self.gone.insert(id);
        }
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
    /// Whether `fields` was read in, as last set under its lock: a write makes its entry
    /// before locking only then, so a store no search has asked does no work for it. The
    /// lock, not this, decides what is kept.
    kept: AtomicBool,
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
                    fields.put(decode_id("asset key", &k)?, Entry::of_record(&v, language)?);
                }
                *slot = Some(fields);
                self.kept.store(true, Ordering::Relaxed);
            }
        }
    }

    /// Keeps the words of `asset`, just created, after its transaction committed. No record
    /// is read: a create is the first write of its asset, so a later write that settled
    /// first (it read the record itself) left the asset kept, or marked gone, and the
    /// create then keeps nothing.
    pub(crate) fn created(&self, asset: &Asset, language: Option<Language>) {
        let made = self
            .kept
            .load(Ordering::Relaxed)
            .then(|| Entry::of_asset(asset, language));
        let Ok(mut slot) = self.fields.write() else {
            return;
        };
        let Some(fields) = slot.as_mut() else {
            return;
        };
        if !fields.slots.contains_key(&asset.id) && !fields.gone.remove(&asset.id) {
            let entry = made.unwrap_or_else(|| Entry::of_asset(asset, language));
            fields.put(asset.id, entry);
        }
    }

    /// Reads the records of `ids` again after a write to them committed (a deleted one
    /// leaves). Each record is read and its words made before the index is locked, then read
    /// again under the lock: when a later write changed it meanwhile, its words are made
    /// again, so the last to lock keeps what the last write committed. A read that fails
    /// drops the index, which the next search reads again.
    pub(crate) fn changed(&self, inner: &Inner, ids: &[Uuid]) {
        let language = inner.search.language;
        for &id in ids {
            if !self.kept.load(Ordering::Relaxed) {
                // Settled under the lock alone: made there if the words were read in since.
                if self.settle(inner, id, None, None).is_err() {
                    return;
                }
                continue;
            }
            let read = inner.assets.get(id.as_bytes()).ok();
            let made = read
                .as_ref()
                .and_then(|r| entry_of(r.as_ref(), language).ok());
            if self.settle(inner, id, read, made).is_err() {
                return;
            }
        }
    }

    /// Keeps for asset `id` what its record says now: `made`, the entry made from `read` (the
    /// record as read before the lock; `None` when the read or the entry failed), when the
    /// record is still that, else an entry made again under the lock. `Err` when the index
    /// was dropped (or was not there).
    fn settle(
        &self,
        inner: &Inner,
        id: Uuid,
        read: Option<Option<sled::IVec>>,
        made: Option<Option<Entry>>,
    ) -> Result<(), ()> {
        let mut slot = self.fields.write().map_err(|_| ())?;
        let fields = slot.as_mut().ok_or(())?;
        let now = inner.assets.get(id.as_bytes());
        let entry = match (read, now, made) {
            (Some(before), Ok(now), Some(made)) if before == now => Ok(made),
            (_, Ok(now), _) => entry_of(now.as_ref(), inner.search.language),
            (_, Err(e), _) => Err(e.into()),
        };
        match entry {
            Ok(Some(entry)) => fields.put(id, entry),
            Ok(None) => fields.forget(id),
            Err(_) => {
                *slot = None;
                self.kept.store(false, Ordering::Relaxed);
                return Err(());
            }
        }
        Ok(())
    }
}

/// The entry of the asset whose record is `rec` (`None` when there is none).
fn entry_of(rec: Option<&sled::IVec>, language: Option<Language>) -> Result<Option<Entry>, Error> {
    rec.map(|r| Entry::of_record(r, language)).transpose()
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

    /// The entry of `asset`, as its record gives it.
    fn entry(asset: &assetlib_core::Asset) -> Entry {
        let rec = crate::record::encode(AssetRec::WHAT, &AssetRec::new(asset)).expect("encode");
        Entry::of_record(&rec, None).expect("an entry")
    }

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
        fields.put(a.id, entry(&a));
        fields.put(b.id, entry(&b));
        let mut both = vec![
            (a.id, FieldSet::TITLE | FieldSet::DESCRIPTION),
            (b.id, FieldSet::TAGS),
        ];
        both.sort_by_key(|(id, _)| *id);
        assert_eq!(ids(&fields, "map", false), both);
        assert_eq!(ids(&fields, "map", true).len(), 3, "map and mapping");
        assert_eq!(ids(&fields, "tid", true), [(b.id, FieldSet::TITLE)]);
        assert_eq!(ids(&fields, "tid", false), []);

        // A word the asset keeps changes its fields in place, in its slot.
        a.description = Some("The bay".into());
        fields.put(a.id, entry(&a));
        let mut fewer = vec![(a.id, FieldSet::TITLE), (b.id, FieldSet::TAGS)];
        fewer.sort_by_key(|(id, _)| *id);
        assert_eq!(ids(&fields, "map", false), fewer);
        assert_eq!(ids(&fields, "bay", false), [(a.id, FieldSet::DESCRIPTION)]);
        assert_eq!(fields.docs.len(), 2, "a keeps its slot");

        a.title = "Chart".into();
        a.description = None;
        a.published = !a.published;
        fields.put(a.id, entry(&a));
        assert_eq!(ids(&fields, "map", false), [(b.id, FieldSet::TAGS)]);
        assert_eq!(ids(&fields, "chart", false), [(a.id, FieldSet::TITLE)]);
        assert_eq!(ids(&fields, "bay", false), []);
        assert_eq!(fields.facets(a.id).map(|f| f.published), Some(a.published));

        fields.remove(b.id);
        assert_eq!(ids(&fields, "map", true), []);
        assert!(fields.facets(b.id).is_none());
        let c = sample_asset("Map again", AssetType::Document, 3);
        fields.put(c.id, entry(&c));
        assert_eq!(fields.docs.len(), 2, "b's slot is lent to c");
        assert_eq!(ids(&fields, "map", false), [(c.id, FieldSet::TITLE)]);
        assert_eq!(
            fields.facets(c.id).map(|f| f.type_code),
            Some(tree_keys::type_code(AssetType::Document))
        );
    }

    /// A store in a new directory (kept while the test holds it), with one asset, "Alpha".
    async fn store_with_alpha() -> (tempfile::TempDir, crate::SledStore, assetlib_core::Asset) {
        use assetlib_core::store::prelude::*;
        let dir = tempfile::tempdir().expect("dir");
        let store = crate::SledStore::open(dir.path().join("db")).expect("open");
        let a = store
            .insert_asset(sample_asset("Alpha", AssetType::Pdf, 1), Log::ANONYMOUS)
            .await
            .expect("insert");
        (dir, store, a)
    }

    /// A writer that read the record before a later write committed, and locks after that
    /// write settled, keeps the later write's words, not the ones it made.
    #[tokio::test]
    async fn a_late_writer_with_an_older_read_keeps_the_newer_record() {
        use assetlib_core::store::prelude::*;
        let (_dir, store, a) = store_with_alpha().await;
        let inner = &store.inner;
        let words = &inner.search.fields;
        words.with(inner, |_| Ok(())).expect("built");
        let old = inner.assets.get(a.id.as_bytes()).expect("read");
        let made = entry_of(old.as_ref(), None).expect("entry");
        let mut change = assetlib_core::AssetChange::at(chrono::Utc::now());
        change.title = Some("Beta".into());
        store
            .update_asset(a.id, &change, Log::ANONYMOUS)
            .await
            .expect("update");
        words
            .settle(inner, a.id, Some(old), Some(made))
            .expect("settled");
        let found = |word: &str| {
            words
                .with(inner, |f| Ok(ids(f, word, false)))
                .expect("search")
        };
        assert_eq!(found("beta"), [(a.id, FieldSet::TITLE)]);
        assert_eq!(found("alpha"), []);
    }

    /// A create that settles after a later write of its asset keeps nothing: the later
    /// write's words stay, and an asset deleted meanwhile does not come back.
    #[test]
    fn a_create_settling_late_keeps_nothing() {
        let words = FieldWords {
            fields: RwLock::new(Some(Fields::default())),
            kept: AtomicBool::new(true),
        };
        let kept = |word: &str| {
            let fields = words.fields.read().expect("lock");
            ids(fields.as_ref().expect("built"), word, false)
        };
        let mut renamed = sample_asset("First", AssetType::Pdf, 1);
        let created = renamed.clone();
        renamed.title = "Second".into();
        // The rename settled first (it read the record), then the create.
        if let Some(f) = words.fields.write().expect("lock").as_mut() {
            f.put(renamed.id, entry(&renamed));
        }
        words.created(&created, None);
        assert_eq!(kept("second"), [(renamed.id, FieldSet::TITLE)]);
        assert_eq!(kept("first"), []);

        // The delete settled first (it found no record), then the create.
        let deleted = sample_asset("Third", AssetType::Pdf, 2);
        if let Some(f) = words.fields.write().expect("lock").as_mut() {
            f.forget(deleted.id);
        }
        words.created(&deleted, None);
        assert_eq!(kept("third"), []);
        // The mark went with the create it was for.
        words.created(&deleted, None);
        assert_eq!(kept("third"), [(deleted.id, FieldSet::TITLE)]);
    }

    /// `SearchStore::prepare` reads the words in, as the first search would.
    #[tokio::test]
    async fn prepare_reads_the_words_in() {
        use assetlib_core::store::SearchStore as _;
        let (_dir, store, a) = store_with_alpha().await;
        let words = &store.inner.search.fields;
        let built = || words.fields.read().expect("lock").is_some();
        assert!(!built(), "not before a search");
        store.prepare().await.expect("prepare");
        assert!(built());
        let found = words
            .with(&store.inner, |f| Ok(ids(f, "alpha", false)))
            .expect("search");
        assert_eq!(found, [(a.id, FieldSet::TITLE)]);
    }
}
