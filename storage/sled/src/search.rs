//! [`SearchStore`] of the [`SledStore`] (feature `search`): an inverted index of folded words
//! kept in the same sled transactions as the records it indexes.
//!
//! | tree | key | value |
//! |---|---|---|
//! | `search_words` | folded word + `0x00` + asset id | empty: a word of the asset's title, tags or description |
//! | `search_text_words` | folded word + `0x00` + asset id | empty: a word of the text kept for the asset |
//! | `asset_texts` | asset id | the text ([`TextRec`]) |
//!
//! The words come from [`assetlib_core::search::words`], the folding every store shares.
//! `search_words` is one of the asset index trees ([`crate::tx::IndexTrees`]): a create, change
//! or delete moves its keys in the transaction that writes the record. The text and its words
//! are written by [`SearchStore::set_asset_text`] in one transaction that checks the asset is
//! there, and go with the asset in its delete's transaction. So an answered write is found by
//! the next search, and a kill loses nothing answered (sled's own durability).
//!
//! A search reads the ids of each clause's terms from both word trees (a word: the keys of
//! that word; a prefix: of every word it begins; a phrase: of all its words), intersects the
//! clauses, then reads the candidates' records and texts and ranks them by the shared rules
//! ([`assetlib_core::store::search_hit`]), so it finds what every other store finds.
//!
//! A database opened without the feature does not keep the index: opening it without the
//! feature clears the `search_indexed` mark in `meta`, and opening it with the feature builds
//! the index again when the mark is missing.

use std::collections::HashSet;

use assetlib_core::search::{SearchQuery, Term, distinct_words};
use assetlib_core::store::{
    AssetText, SearchFound, SearchRequest, SearchStore, TextMatches, asset_words, found,
    paid_files, rank_indexed, rank_read,
};
use assetlib_core::{Asset, Page, StoreError, async_trait};

use serde::{Deserialize, Serialize};
use sled::transaction::TransactionalTree;
use sled::{Transactional as _, Tree};
use uuid::Uuid;

use crate::error::{Error, TxError, abort};
use crate::record::{AssetRec, UsesRec, decode, decode_id, encode};
use crate::{Inner, SledStore};

/// The mark in `meta` that says the index holds every asset.
pub(crate) const INDEXED_KEY: &[u8] = b"search_indexed";

/// The text kept for an asset.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TextRec {
    pages: Vec<String>,
    paged: bool,
}

impl TextRec {
    const WHAT: &'static str = "asset text";
}

/// The search trees of a database.
pub(crate) struct SearchTrees {
    /// Words of titles, tags and descriptions (an asset index tree).
    pub(crate) words: Tree,
    /// Words of the kept texts.
    pub(crate) text_words: Tree,
    /// The kept texts.
    pub(crate) texts: Tree,
}

impl SearchTrees {
    /// Opens the trees of `db`.
    pub(crate) fn open(db: &sled::Db) -> Result<Self, sled::Error> {
        Ok(SearchTrees {
            words: db.open_tree("search_words")?,
            text_words: db.open_tree("search_text_words")?,
            texts: db.open_tree("asset_texts")?,
        })
    }
}

/// The key of `word` of asset `id` in a word tree.
fn word_key(word: &str, id: Uuid) -> Vec<u8> {
    let mut key = Vec::with_capacity(word.len() + 17);
    key.extend_from_slice(word.as_bytes());
    key.push(0);
    key.extend_from_slice(id.as_bytes());
    key
}

/// The `search_words` keys of `asset`: its title's, tags' and description's words.
pub(crate) fn word_keys(asset: &Asset) -> Vec<Vec<u8>> {
    asset_words(asset)
        .iter()
        .map(|w| word_key(w, asset.id))
        .collect()
}

/// The `search_text_words` keys of `text`, kept for asset `id`.
fn text_word_keys(text: &TextRec, id: Uuid) -> Vec<Vec<u8>> {
    distinct_words(text.pages.iter().map(String::as_str))
        .iter()
        .map(|w| word_key(w, id))
        .collect()
}

/// Removes the text kept for asset `id` and its words, in a transaction over `asset_texts`
/// and `search_text_words`.
pub(crate) fn remove_text(
    texts: &TransactionalTree,
    text_words: &TransactionalTree,
    id: Uuid,
) -> Result<(), TxError> {
    if let Some(old) = texts.remove(id.as_bytes())? {
        let old: TextRec = decode(TextRec::WHAT, &old).map_err(abort)?;
        for key in text_word_keys(&old, id) {
            text_words.remove(key)?;
        }
    }
    Ok(())
}

/// The ids whose keys in `tree` begin with `prefix` (a word and `0x00` for a whole word).
fn ids_under(tree: &Tree, prefix: &[u8], into: &mut HashSet<Uuid>) -> Result<(), Error> {
    for kv in tree.scan_prefix(prefix) {
        let (key, _) = kv?;
        let id = key
            .len()
            .checked_sub(16)
            .and_then(|at| Uuid::from_slice(&key[at..]).ok())
            .ok_or_else(|| Error::invalid("search word key", "shorter than an id"))?;
        into.insert(id);
    }
    Ok(())
}

/// The key prefix of `word` in a word tree: the word and `0x00` when whole, the bare word
/// when it stands for every word it begins.
fn word_prefix(word: &str, prefix: bool) -> Vec<u8> {
    let mut key = word.as_bytes().to_vec();
    if !prefix {
        key.push(0);
    }
    key
}

/// The ids whose keys in `tree` hold the word or prefix `term` (a word-level term; a phrase
/// adds nothing).
fn ids_of_word_term(tree: &Tree, term: &Term, into: &mut HashSet<Uuid>) -> Result<(), Error> {
    match term {
        Term::Word(w) => ids_under(tree, &word_prefix(w, false), into),
        Term::Prefix(w) => ids_under(tree, &word_prefix(w, true), into),
        Term::Phrase(_) => Ok(()),
    }
}

impl Inner {
    /// The ids of the assets one of whose word trees holds `word` (whole, or as the beginning
    /// of a word when `prefix`).
    fn ids_of_word(&self, word: &str, prefix: bool) -> Result<HashSet<Uuid>, Error> {
        let key = word_prefix(word, prefix);
        let mut ids = HashSet::new();
        ids_under(&self.search.words, &key, &mut ids)?;
        ids_under(&self.search.text_words, &key, &mut ids)?;
        Ok(ids)
    }

    /// For a word-level query: the assets passing `request`'s filters whose words or text
    /// words hold every clause and whose words hold no excluded term, each with what the
    /// text index says of its text. No text is read.
    fn word_level_candidates(
        &self,
        request: &SearchRequest,
    ) -> Result<Vec<(Asset, TextMatches)>, Error> {
        let query = &request.query;
        let (words, text_words) = (&self.search.words, &self.search.text_words);
        let mut in_text: Vec<HashSet<Uuid>> = Vec::with_capacity(query.clauses.len());
        let mut in_fields: HashSet<Uuid> = HashSet::new();
        let mut found: Option<HashSet<Uuid>> = None;
        for clause in &query.clauses {
            let (mut meta, mut text) = (HashSet::new(), HashSet::new());
            for term in clause {
                ids_of_word_term(words, term, &mut meta)?;
                ids_of_word_term(text_words, term, &mut text)?;
            }
            let either: HashSet<Uuid> = meta.union(&text).copied().collect();
            found = Some(match found {
                Some(before) => &before & &either,
                None => either,
            });
            in_fields.extend(meta);
            in_text.push(text);
        }
        let (mut excluded_meta, mut excluded_text) = (HashSet::new(), HashSet::new());
        for term in &query.excluded {
            ids_of_word_term(words, term, &mut excluded_meta)?;
            ids_of_word_term(text_words, term, &mut excluded_text)?;
        }
        let mut out = Vec::new();
        for id in found.unwrap_or_default() {
            if excluded_meta.contains(&id) {
                continue;
            }
            // Ranked without its download count: the page's hits get theirs.
            let Some(asset) = self.filtered_asset(id, request, false)? else {
                continue;
            };
            let matches = TextMatches {
                clauses: in_text.iter().map(|ids| ids.contains(&id)).collect(),
                excluded: excluded_text.contains(&id),
                in_fields: in_fields.contains(&id),
            };
            out.push((asset, matches));
        }
        Ok(out)
    }

    /// Asset `id` when it is there and passes `request`'s filters; with its download count
    /// when `counted` (else 0).
    fn filtered_asset(
        &self,
        id: Uuid,
        request: &SearchRequest,
        counted: bool,
    ) -> Result<Option<Asset>, Error> {
        let Some(rec) = self.assets.get(id.as_bytes())? else {
            return Ok(None);
        };
        let rec: AssetRec = decode(AssetRec::WHAT, &rec)?;
        let downloads = if counted { self.downloads(id)? } else { 0 };
        let asset = rec.into_asset(id, downloads)?;
        if !request.passes(&asset) {
            return Ok(None);
        }
        if let Some(library) = request.library_id {
            let held = match self.asset_uses.get(id.as_bytes())? {
                Some(v) => decode::<UsesRec>(UsesRec::WHAT, &v)?
                    .holders
                    .iter()
                    .any(|h| h.library() == library),
                None => false,
            };
            if !held {
                return Ok(None);
            }
        }
        Ok(Some(asset))
    }

    /// Asset `id`'s download count.
    fn downloads(&self, id: Uuid) -> Result<u64, Error> {
        Ok(self.counter(&crate::tree_keys::downloads(id))?.unwrap_or(0))
    }

    /// The text kept for asset `id`.
    fn text_of(&self, id: Uuid) -> Result<Option<AssetText>, Error> {
        Ok(match self.search.texts.get(id.as_bytes())? {
            Some(v) => {
                let t: TextRec = decode(TextRec::WHAT, &v)?;
                Some(AssetText {
                    pages: t.pages,
                    paged: t.paged,
                })
            }
            None => None,
        })
    }

    /// The ids of the assets that may match `term`: every asset holding all its words.
    fn ids_of_term(&self, term: &Term) -> Result<HashSet<Uuid>, Error> {
        match term {
            Term::Word(w) => self.ids_of_word(w, false),
            Term::Prefix(w) => self.ids_of_word(w, true),
            Term::Phrase(ws) => {
                let mut sets = ws
                    .iter()
                    .map(|w| self.ids_of_word(w, false))
                    .collect::<Result<Vec<_>, _>>()?;
                sets.sort_by_key(HashSet::len);
                let mut sets = sets.into_iter();
                let first = sets.next().unwrap_or_default();
                Ok(sets.fold(first, |acc, s| &acc & &s))
            }
        }
    }

    /// The ids of the assets that may match `query`: in every clause's candidates.
    fn search_candidates(&self, query: &SearchQuery) -> Result<HashSet<Uuid>, Error> {
        let mut found: Option<HashSet<Uuid>> = None;
        for clause in &query.clauses {
            let mut ids = HashSet::new();
            for term in clause {
                ids.extend(self.ids_of_term(term)?);
            }
            found = Some(match found {
                Some(before) => &before & &ids,
                None => ids,
            });
            if found.as_ref().is_some_and(HashSet::is_empty) {
                break;
            }
        }
        Ok(found.unwrap_or_default())
    }

    /// The assets of `ids` passing `request`'s filters, with their kept texts.
    fn candidate_records(
        &self,
        ids: HashSet<Uuid>,
        request: &SearchRequest,
    ) -> Result<Vec<(Asset, Option<AssetText>)>, Error> {
        let mut out = Vec::new();
        for id in ids {
            if let Some(asset) = self.filtered_asset(id, request, true)? {
                out.push((asset, self.text_of(id)?));
            }
        }
        Ok(out)
    }

    /// Keeps `text` for asset `id`; `false` when there is no such asset.
    fn set_text(&self, id: Uuid, text: &TextRec) -> Result<bool, Error> {
        let value = encode(TextRec::WHAT, text)?;
        let keys = text_word_keys(text, id);
        Ok(
            (&self.assets, &self.search.texts, &self.search.text_words).transaction(
                |(assets, texts, text_words)| {
                    if assets.get(id.as_bytes())?.is_none() {
                        return Ok(false);
                    }
                    remove_text(texts, text_words, id)?;
                    texts.insert(id.as_bytes(), value.as_slice())?;
                    for key in &keys {
                        text_words.insert(key.as_slice(), &[][..])?;
                    }
                    Ok(true)
                },
            )?,
        )
    }

    /// Builds the index again unless the mark says it holds every asset (feature on), or
    /// clears the mark (feature off: writes will not keep the index).
    pub(crate) fn sync_search_index(&self, meta: &Tree) -> Result<(), Error> {
        if meta.get(INDEXED_KEY)?.is_some() {
            return Ok(());
        }
        for tree in [&self.search.words, &self.search.text_words] {
            tree.clear()?;
        }
        for kv in self.assets.iter() {
            let (k, v) = kv?;
            let id = decode_id("asset key", &k)?;
            let rec: AssetRec = decode(AssetRec::WHAT, &v)?;
            for key in word_keys(&rec.into_asset(id, 0)?) {
                self.search.words.insert(key, &[][..])?;
            }
        }
        for kv in self.search.texts.iter() {
            let (k, v) = kv?;
            let id = decode_id("asset text key", &k)?;
            // A build without the feature deleted the asset and left its text.
            if self.assets.get(id.as_bytes())?.is_none() {
                self.search.texts.remove(&k)?;
                continue;
            }
            let text: TextRec = decode(TextRec::WHAT, &v)?;
            for key in text_word_keys(&text, id) {
                self.search.text_words.insert(key, &[][..])?;
            }
        }
        self.db.flush()?;
        meta.insert(INDEXED_KEY, &[][..])?;
        Ok(())
    }
}

impl SledStore {
    /// A word-level search: every candidate ranked from the index and its record, the texts
    /// of the page's hits alone read, for their pages.
    async fn search_by_index(
        &self,
        request: &SearchRequest,
    ) -> Result<Page<SearchFound>, StoreError> {
        let req = request.clone();
        let candidates = self
            .blocking(move |inner| inner.word_level_candidates(&req))
            .await?;
        let with_text = candidates
            .iter()
            .filter(|(_, m)| m.excluded || m.clauses.contains(&true))
            .map(|(a, _)| a);
        let paid = paid_files(self, request, with_text).await?;
        let (page, total) = rank_indexed(
            &request.query,
            candidates,
            &paid,
            request.offset,
            request.limit,
        );
        let mut items = Vec::with_capacity(page.len());
        for (score, mut asset) in page {
            let id = asset.id;
            let paid_text = paid.contains(&id);
            let (downloads, text) = self
                .blocking(move |inner| {
                    let text = if paid_text { None } else { inner.text_of(id)? };
                    Ok((inner.downloads(id)?, text))
                })
                .await?;
            asset.download_count = downloads;
            items.push(found(&request.query, score, asset, text));
        }
        Ok(Page { items, total })
    }
}

#[async_trait]
impl SearchStore for SledStore {
    async fn set_asset_text(&self, id: Uuid, text: AssetText) -> Result<bool, StoreError> {
        let rec = TextRec {
            pages: text.pages,
            paged: text.paged,
        };
        let set = self.write(move |inner| inner.set_text(id, &rec)).await?;
        Ok(set)
    }

    async fn asset_text(&self, id: Uuid) -> Result<Option<AssetText>, StoreError> {
        self.blocking(move |inner| inner.text_of(id)).await
    }

    async fn search(&self, request: &SearchRequest) -> Result<Page<SearchFound>, StoreError> {
        if request.query.is_word_level() {
            return self.search_by_index(request).await;
        }
        let req = request.clone();
        let candidates = self
            .blocking(move |inner| {
                let ids = inner.search_candidates(&req.query)?;
                inner.candidate_records(ids, &req)
            })
            .await?;
        let with_text = candidates
            .iter()
            .filter(|(_, t)| t.is_some())
            .map(|(a, _)| a);
        let paid = paid_files(self, request, with_text).await?;
        Ok(rank_read(request, candidates, &paid))
    }
}
