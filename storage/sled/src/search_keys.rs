//! The layout of the search index's keys (feature `search`; the trees are described in
//! `search.rs`): what a write puts in `search_words`, `search_text_words` and
//! `search_facets`, and how a search reads it back.

use assetlib_core::Asset;
use assetlib_core::search::{Language, Term, distinct_words};
use assetlib_core::store::{FieldSet, SearchRequest, asset_field_words};
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

/// The length of a `search_words` key after its word and `0x00`: id, created time, fields.
const FIELD_TAIL: usize = 16 + 12 + 1;

/// The key of `word` of asset `id` in `search_text_words` (a `search_words` key begins so).
pub(crate) fn word_key(word: &str, id: Uuid) -> Vec<u8> {
    let mut key = Vec::with_capacity(word.len() + 1 + FIELD_TAIL);
    key.extend_from_slice(word.as_bytes());
    key.push(0);
    key.extend_from_slice(id.as_bytes());
    key
}

/// The `search_words` keys of `asset`: each word of its title, tags and description (stemmed
/// in `language`), with its created time and the fields the word is in.
pub(crate) fn word_keys(asset: &Asset, language: Option<Language>) -> Vec<Vec<u8>> {
    let created = ts(&asset.created_at);
    asset_field_words(asset, language)
        .into_iter()
        .map(|(word, fields)| {
            let mut key = word_key(&word, asset.id);
            key.extend_from_slice(&created);
            key.push(fields.bits());
            key
        })
        .collect()
}

/// The created time (`ts`) of the asset record `rec`.
pub(crate) fn created_of(rec: &[u8]) -> Result<[u8; 12], Error> {
    let rec: AssetRec = decode(AssetRec::WHAT, rec)?;
    Ok(ts(&rec.created_at.time()?))
}

/// Flags of a `search_facets` key.
pub(crate) const PUBLISHED: u8 = 1;
/// Flags of a `search_facets` key.
pub(crate) const PUBLIC: u8 = 2;

/// The `search_facets` key of `asset`: its id, then what the filters of a search ask.
pub(crate) fn facet_keys(asset: &Asset) -> Vec<Vec<u8>> {
    let workspace = asset.workspace_id.as_deref().unwrap_or("");
    let mut key = Vec::with_capacity(18 + workspace.len());
    key.extend_from_slice(asset.id.as_bytes());
    key.push(
        if asset.published { PUBLISHED } else { 0 } | if asset.is_public { PUBLIC } else { 0 },
    );
    key.push(tree_keys::type_code(asset.asset_type));
    key.extend_from_slice(workspace.as_bytes());
    vec![key]
}

/// What `search_facets` says of an asset.
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

/// One key of a word tree, read: the asset, its created time (`ts`) and, in `search_words`,
/// the fields the word is in.
pub(crate) struct Posting {
    pub(crate) id: Uuid,
    pub(crate) created: Option<[u8; 12]>,
    pub(crate) fields: FieldSet,
}

/// Reads a key (and value) of `search_words` (`fields`) or `search_text_words`.
pub(crate) fn posting(key: &[u8], value: &[u8], fields: bool) -> Result<Posting, Error> {
    let bad = || Error::invalid("search word key", "shorter than its tail");
    if fields {
        let at = key.len().checked_sub(FIELD_TAIL).ok_or_else(bad)?;
        let tail = &key[at..];
        Ok(Posting {
            id: Uuid::from_slice(&tail[..16]).map_err(|_| bad())?,
            created: tail[16..28].try_into().ok(),
            fields: FieldSet::from_bits(tail[28]),
        })
    } else {
        let at = key.len().checked_sub(16).ok_or_else(bad)?;
        Ok(Posting {
            id: Uuid::from_slice(&key[at..]).map_err(|_| bad())?,
            created: value.try_into().ok(),
            fields: FieldSet::default(),
        })
    }
}

/// Calls `each` with every posting of `tree` (`search_words` when `fields`) under `prefix`.
pub(crate) fn scan(
    tree: &Tree,
    prefix: &[u8],
    fields: bool,
    mut each: impl FnMut(Posting),
) -> Result<(), Error> {
    for kv in tree.scan_prefix(prefix) {
        let (key, value) = kv?;
        each(posting(&key, &value, fields)?);
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

/// The key prefix of a word-level term (`None` for a phrase).
pub(crate) fn term_prefix(term: &Term) -> Option<Vec<u8>> {
    match term {
        Term::Word(w) => Some(word_prefix(w, false)),
        Term::Prefix(w) => Some(word_prefix(w, true)),
        Term::Phrase(_) => None,
    }
}
