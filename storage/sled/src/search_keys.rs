//! The layout of the search index's keys in sled (feature `search`; the trees are described
//! in `search.rs`): what a text puts in `search_text_words` and how a search reads it back,
//! and what the filters of a search ask of an asset.

use assetlib_core::search::{Language, Term, distinct_words};
use assetlib_core::store::{FieldSet, SearchRequest};
use serde::{Deserialize, Serialize};
use sled::Tree;
use uuid::Uuid;

use crate::error::Error;
use crate::record::{AssetRec, decode};
use crate::tree_keys::{self, ts};

/// The text kept for an asset.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TextRec {
    pub(crate) pages: Vec<String>,
    pub(crate) paged: bool,
}

impl TextRec {
    pub(crate) const WHAT: &'static str = "asset text";
}

/// The key of `word` of asset `id` in `search_text_words`.
pub(crate) fn word_key(word: &str, id: Uuid) -> Vec<u8> {
    let mut key = Vec::with_capacity(word.len() + 1 + 16);
    key.extend_from_slice(word.as_bytes());
    key.push(0);
    key.extend_from_slice(id.as_bytes());
    key
}

/// The created time (`ts`) of the asset record `rec`.
pub(crate) fn created_of(rec: &[u8]) -> Result<[u8; 12], Error> {
    let rec: AssetRec = decode(AssetRec::WHAT, rec)?;
    Ok(ts(&rec.created_at.time()?))
}

/// What the filters of a search ask of an asset (kept in memory, `field_words.rs`).
pub(crate) struct Facets {
    pub(crate) published: bool,
    pub(crate) public: bool,
    pub(crate) type_code: u8,
    pub(crate) workspace: Vec<u8>,
}

impl Facets {
    /// Whether the asset passes `request`'s drafts, type and workspace filters.
    pub(crate) fn pass(&self, request: &SearchRequest) -> bool {
        (request.drafts || self.published)
            && request
                .asset_type
                .is_none_or(|t| tree_keys::type_code(t) == self.type_code)
            && request.workspace_id.as_ref().is_none_or(|w| {
                !self.workspace.is_empty() && w.as_bytes() == self.workspace.as_slice()
            })
    }
}

/// The `search_text_words` keys of `text` (its words stemmed in `language`), kept for asset
/// `id`.
pub(crate) fn text_word_keys(text: &TextRec, id: Uuid, language: Option<Language>) -> Vec<Vec<u8>> {
    distinct_words(text.pages.iter().map(String::as_str), language)
        .iter()
        .map(|w| word_key(w, id))
        .collect()
}

/// An asset a word is found in: its id, its created time (`ts`) and, for the words of its
/// own fields, which of them hold the word.
pub(crate) struct Posting {
    pub(crate) id: Uuid,
    pub(crate) created: Option<[u8; 12]>,
    pub(crate) fields: FieldSet,
}

/// Calls `each` with every asset of `search_text_words` under `prefix`.
pub(crate) fn scan(tree: &Tree, prefix: &[u8], mut each: impl FnMut(Posting)) -> Result<(), Error> {
    for kv in tree.scan_prefix(prefix) {
        let (key, value) = kv?;
        let at = key
            .len()
            .checked_sub(16)
            .ok_or_else(|| Error::invalid("search text word key", "shorter than its id"))?;
        each(Posting {
            id: Uuid::from_slice(&key[at..])
                .map_err(|_| Error::invalid("search text word key", "a bad id"))?,
            created: value.as_ref().try_into().ok(),
            fields: FieldSet::default(),
        });
    }
    Ok(())
}

/// The key prefix of `word` in a word tree: the word and `0x00` when whole, the bare word
/// when it stands for every word it begins.
pub(crate) fn word_prefix(word: &str, prefix: bool) -> Vec<u8> {
    let mut key = word.as_bytes().to_vec();
    if !prefix {
        key.push(0);
    }
    key
}

/// The word of a word-level term, and whether it stands for every word it begins (`None`
/// for a phrase).
pub(crate) fn term_word(term: &Term) -> Option<(&str, bool)> {
    match term {
        Term::Word(w) => Some((w, false)),
        Term::Prefix(w) => Some((w, true)),
        Term::Phrase(_) => None,
    }
}
