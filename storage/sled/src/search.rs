//! [`SearchStore`] of the [`SledStore`] (feature `search`): an inverted index of folded words,
//! those of the kept texts in sled beside the records, those of the assets' own fields in
//! memory (`field_words.rs`).
//!
//! | where | key | value |
//! |---|---|---|
//! | memory (`field_words.rs`) | folded word | the assets whose title, tags or description hold it, and in which of them ([`assetlib_core::store::FieldSet`]); per asset its created time and what the filters ask (published, public, type, workspace) |
//! | tree `search_text_words` | folded word + `0x00` + asset id | `ts(created_at)`: a word of the text kept for the asset |
//! | tree `asset_texts` | asset id | the text ([`TextRec`]) |
//!
//! The words come from [`assetlib_core::search::words_in`], the folding every store shares,
//! stemmed in the language the store is opened with (`SledConfig::search_language`; none by
//! default).
//! The words of the assets' own fields are kept in memory, read from the records by the first
//! search after the database opens and moved by every asset write after it commits and
//! before it is answered: a create writes no key for them (`field_words.rs` says why). The
//! text and its words are written by [`SearchStore::set_asset_text`] in one transaction that
//! checks the asset is there, and go with the asset in its delete's transaction. So an
//! answered write is found by the next search, and a kill loses nothing answered (the
//! records and texts are sled's, and the memory is read from them again).
//!
//! A word-level search ([`SearchQuery::is_word_level`]) is answered from the index alone: the
//! lists of each clause's words give every candidate's fields, text clauses and created time
//! ([`IndexMatch`]), the facets its filters (a tag or library filter reads the record), so
//! every candidate is ranked without a record or text read; then only the page's records and
//! texts are read. Other queries (phrases) read the candidates' records and texts and rank
//! them by the shared rules ([`assetlib_core::store::search_hit`]), so sled finds what every
//! other store finds.
//!
//! A database opened without the feature does not keep the index: opening it without the
//! feature clears the index's mark in `meta`, and opening it with the feature builds the
//! text words again when the mark is missing (or is an older layout's, whose trees of field
//! words and facets it drops). `meta`'s
//! `search_language` names the language the index holds the words of (absent: none); opened
//! in another, the text words are built again the same way (the words of the fields are read
//! from the records in the store's language anyway), so a change of language needs nothing
//! more than the new configuration.

use std::collections::{HashMap, HashSet};

use assetlib_core::search::{Language, SearchQuery, Term};
use assetlib_core::store::{
    AssetText, IndexMatch, SearchFound, SearchRequest, SearchStore, found, paid_among, rank_read,
};
use assetlib_core::{Asset, Page, StoreError, async_trait};

use sled::transaction::TransactionalTree;
use sled::{Transactional as _, Tree};
use uuid::Uuid;

use crate::error::{Error, TxError, abort};
use crate::field_words::{FieldWords, Fields};
use crate::record::{UsesRec, decode, decode_id, encode};
use crate::search_keys::{
    Posting, TextRec, created_of, scan, term_word, text_word_keys, word_prefix,
};
use crate::{Inner, SledStore};

/// The mark in `meta` that says the index holds every asset, in this layout.
pub(crate) const INDEXED_KEY: &[u8] = crate::migrate::SEARCH_INDEXED;

/// The key in `meta` of the language the index's words are stemmed in (its name,
/// [`Language::as_str`]); absent when they are not stemmed.
pub(crate) const LANGUAGE_KEY: &[u8] = b"search_language";

/// The trees of older layouts, dropped when the index is built again.
const OLDER_TREES: [&str; 2] = ["search_words", "search_facets"];

/// The search index of a database.
pub(crate) struct SearchTrees {
    /// Words of titles, tags and descriptions, and the facets, in memory.
    pub(crate) fields: FieldWords,
    /// Words of the kept texts.
    pub(crate) text_words: Tree,
    /// The kept texts.
    pub(crate) texts: Tree,
    /// The language the words are stemmed in (`SledConfig::search_language`).
    pub(crate) language: Option<Language>,
}

impl SearchTrees {
    /// Opens the trees of `db`, whose words are (or will be) stemmed in `language`.
    pub(crate) fn open(db: &sled::Db, language: Option<Language>) -> Result<Self, sled::Error> {
        Ok(SearchTrees {
            fields: FieldWords::default(),
            text_words: db.open_tree("search_text_words")?,
            texts: db.open_tree("asset_texts")?,
            language,
        })
    }
}

/// Removes the text kept for asset `id` and its words (stemmed in `language`, as the index
/// holds them), in a transaction over `asset_texts` and `search_text_words`.
pub(crate) fn remove_text(
    texts: &TransactionalTree,
    text_words: &TransactionalTree,
    id: Uuid,
    language: Option<Language>,
) -> Result<(), TxError> {
    if let Some(old) = texts.remove(id.as_bytes())? {
        let old: TextRec = decode(TextRec::WHAT, &old).map_err(abort)?;
        for key in text_word_keys(&old, id, language) {
            text_words.remove(key)?;
        }
    }
    Ok(())
}

/// A candidate of a word-level search, as the index gives it.
struct Candidate {
    created: [u8; 12],
    found: IndexMatch,
    /// Whether an excluded term occurs in its text (which may not count).
    excluded_text: bool,
    /// Whether it is not public (its text may be a paid file's), when the request asks.
    private: bool,
}

impl Inner {
    /// The ids of the assets one of whose word trees holds `word` (whole, or as the beginning
    /// of a word when `prefix`).
    fn ids_of_word(&self, word: &str, prefix: bool) -> Result<HashSet<Uuid>, Error> {
        let mut ids = HashSet::new();
        self.search.fields.with(self, |fields| {
            fields.postings(word, prefix, |p| {
                ids.insert(p.id);
            });
            Ok(())
        })?;
        scan(&self.search.text_words, &word_prefix(word, prefix), |p| {
            ids.insert(p.id);
        })?;
        Ok(ids)
    }

    /// For a word-level query: every candidate that holds each clause in its fields or text,
    /// with what the index says of it, its created time, and (when the request filters on
    /// them) its facets checked. Neither records nor texts are read, unless a tag or library
    /// filter asks for the record.
    fn word_level_candidates(
        &self,
        request: &SearchRequest,
    ) -> Result<HashMap<Uuid, Candidate>, Error> {
        self.search
            .fields
            .with(self, |fields| self.candidates_in(fields, request))
    }

    /// [`Inner::word_level_candidates`], with the words and facets of the assets' fields.
    fn candidates_in(
        &self,
        fields: &Fields,
        request: &SearchRequest,
    ) -> Result<HashMap<Uuid, Candidate>, Error> {
        let query = &request.query;
        let n = query.clauses.len();
        let text_words = &self.search.text_words;
        let mut found: HashMap<Uuid, Candidate> = HashMap::new();
        for (i, clause) in query.clauses.iter().enumerate() {
            // The first clause makes the candidates; the others only mark them.
            let mut visit = |p: Posting, text: bool| {
                let c = if i == 0 {
                    found.entry(p.id).or_insert_with(|| Candidate {
                        created: [0; 12],
                        found: IndexMatch::new(n),
                        excluded_text: false,
                        private: false,
                    })
                } else {
                    match found.get_mut(&p.id) {
                        Some(c) => c,
                        None => return,
                    }
                };
                if let Some(created) = p.created {
                    c.created = created;
                }
                c.found.fields[i] |= p.fields;
                c.found.text[i] |= text;
            };
            for (word, prefix) in clause.iter().filter_map(term_word) {
                fields.postings(word, prefix, |p| visit(p, false));
                scan(text_words, &word_prefix(word, prefix), |p| visit(p, true))?;
            }
            found.retain(|_, c| !c.found.fields[i].is_empty() || c.found.text[i]);
            if found.is_empty() {
                return Ok(found);
            }
        }
        for (word, prefix) in query.excluded.iter().filter_map(term_word) {
            fields.postings(word, prefix, |p| {
                if let Some(c) = found.get_mut(&p.id) {
                    c.found.excluded = true;
                }
            });
            scan(text_words, &word_prefix(word, prefix), |p| {
                if let Some(c) = found.get_mut(&p.id) {
                    c.excluded_text = true;
                }
            })?;
        }
        found.retain(|_, c| !c.found.excluded);
        let records = request.tag.is_some() || request.library_id.is_some();
        let facets = !request.drafts
            || request.asset_type.is_some()
            || request.workspace_id.is_some()
            || !request.paid_content;
        if records {
            let mut kept = HashMap::with_capacity(found.len());
            for (id, mut c) in found {
                if let Some(asset) = self.filtered_asset(id, request, false)? {
                    c.private = !asset.is_public;
                    kept.insert(id, c);
                }
            }
            found = kept;
        } else if facets {
            let mut kept = HashMap::with_capacity(found.len());
            for (id, mut c) in found {
                if let Some(f) = fields.facets(id).filter(|f| f.pass(request)) {
                    c.private = !f.public;
                    kept.insert(id, c);
                }
            }
            found = kept;
        }
        Ok(found)
    }

    /// Asset `id` when it is there and passes `request`'s filters; with its download count
    /// when `counted` (else 0).
    fn filtered_asset(
        &self,
        id: Uuid,
        request: &SearchRequest,
        counted: bool,
    ) -> Result<Option<Asset>, Error> {
        let Some(rec) = self.asset_rec(id)? else {
            return Ok(None);
        };
        let asset = if counted {
            self.complete_asset(id, rec)?
        } else {
            rec.into_asset(id, 0)?
        };
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
        let language = self.search.language;
        let keys = text_word_keys(text, id, language);
        Ok(
            (&self.assets, &self.search.texts, &self.search.text_words).transaction(
                |(assets, texts, text_words)| {
                    let Some(rec) = assets.get(id.as_bytes())? else {
                        return Ok(false);
                    };
                    let created = created_of(&rec).map_err(abort)?;
                    remove_text(texts, text_words, id, language)?;
                    texts.insert(id.as_bytes(), value.as_slice())?;
                    for key in &keys {
                        text_words.insert(key.as_slice(), &created[..])?;
                    }
                    Ok(true)
                },
            )?,
        )
    }

    /// Builds the index again unless the mark says it holds every asset, in the language
    /// the store is opened with (`LANGUAGE_KEY`).
    pub(crate) fn sync_search_index(&self, meta: &Tree) -> Result<(), Error> {
        let language = self.search.language;
        let wanted = language.map(|l| l.as_str().as_bytes());
        let built_in = meta.get(LANGUAGE_KEY)?;
        if meta.get(INDEXED_KEY)?.is_some() {
            if built_in.as_deref() == wanted {
                return Ok(());
            }
            // Words of another language: the mark goes first, so an index left half built
            // by a crash is built again at the next open.
            meta.remove(INDEXED_KEY)?;
            meta.flush()?;
        }
        for tree in OLDER_TREES {
            self.db.drop_tree(tree)?;
        }
        self.search.text_words.clear()?;
        for kv in self.search.texts.iter() {
            let (k, v) = kv?;
            let id = decode_id("asset text key", &k)?;
            // A build without the feature deleted the asset and left its text.
            let Some(rec) = self.assets.get(id.as_bytes())? else {
                self.search.texts.remove(&k)?;
                continue;
            };
            let created = created_of(&rec)?;
            let text: TextRec = decode(TextRec::WHAT, &v)?;
            for key in text_word_keys(&text, id, language) {
                self.search.text_words.insert(key, &created[..])?;
            }
        }
        self.db.flush()?;
        // The language and the mark together: the mark never names another language's words.
        let mut marks = sled::Batch::default();
        for older in crate::migrate::OLDER_SEARCH_MARKS {
            marks.remove(older);
        }
        match wanted {
            Some(name) => marks.insert(LANGUAGE_KEY, name),
            None => marks.remove(LANGUAGE_KEY),
        }
        marks.insert(INDEXED_KEY, &[][..]);
        meta.apply_batch(marks)?;
        Ok(())
    }
}

impl SledStore {
    /// A word-level search: every candidate ranked from the index alone, then the records and
    /// texts of the page's hits read, for the answer and its snippets.
    async fn search_by_index(
        &self,
        request: &SearchRequest,
    ) -> Result<Page<SearchFound>, StoreError> {
        let req = request.clone();
        let mut candidates = self
            .blocking(move |inner| inner.word_level_candidates(&req))
            .await?;
        let private: Vec<Uuid> = candidates
            .iter()
            .filter(|(_, c)| c.private && (c.excluded_text || c.found.text.contains(&true)))
            .map(|(id, _)| *id)
            .collect();
        let paid = paid_among(self, request, private).await?;
        let mut ranked: Vec<(u32, [u8; 12], Uuid)> = candidates
            .iter_mut()
            .filter_map(|(id, c)| {
                if paid.contains(id) {
                    c.found.text.fill(false);
                } else if c.excluded_text {
                    return None;
                }
                Some((c.found.score()?, c.created, *id))
            })
            .collect();
        let total = ranked.len() as u64;
        let skip = usize::try_from(request.offset).unwrap_or(usize::MAX);
        let end = skip.saturating_add(request.limit as usize);
        let best_first = |a: &(u32, [u8; 12], Uuid), b: &(u32, [u8; 12], Uuid)| b.cmp(a);
        if end < ranked.len() {
            ranked.select_nth_unstable_by(end, best_first);
            ranked.truncate(end);
        }
        ranked.sort_unstable_by(best_first);
        let page: Vec<(u32, Uuid, bool)> = ranked
            .into_iter()
            .skip(skip)
            .map(|(score, _, id)| (score, id, paid.contains(&id)))
            .collect();
        let read = self
            .blocking(move |inner| {
                let mut out = Vec::with_capacity(page.len());
                for (score, id, paid) in page {
                    let Some(asset) = inner.load_asset(id)? else {
                        continue;
                    };
                    let text = if paid { None } else { inner.text_of(id)? };
                    out.push((score, asset, text));
                }
                Ok(out)
            })
            .await?;
        let items = read
            .into_iter()
            .map(|(score, asset, text)| found(&request.query, score, asset, text))
            .collect();
        Ok(Page { items, total })
    }
}

#[async_trait]
impl SearchStore for SledStore {
    fn language(&self) -> Option<Language> {
        self.inner.search.language
    }

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

    /// Reads the words of every asset's fields into memory (`field_words.rs`), which the
    /// first search after the database opens does otherwise: some 4 s at a million assets,
    /// during which writes wait.
    async fn prepare(&self) -> Result<(), StoreError> {
        self.blocking(|inner| inner.search.fields.with(inner, |_| Ok(())))
            .await
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
        rank_read(self, request, candidates).await
    }
}
