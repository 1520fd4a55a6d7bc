//! [`AssetParams`]: what an insert or update of an asset writes, as SQL parameters, with the
//! list keys an asset keeps in `tag_keys` (its tags' and its workspace's).

use assetlib_core::Asset;
use assetlib_core::store::rules::{fold_case, tag_keys};

use crate::error::Failure;
use crate::store::{WordRules, to_i64};

/// The values an insert or update writes, as SQL parameters.
pub(crate) struct AssetParams {
    pub(crate) title_lower: String,
    pub(crate) description_lower: Option<String>,
    pub(crate) asset_type: &'static str,
    pub(crate) file_size: Option<i64>,
    pub(crate) page_count: Option<i64>,
    pub(crate) word_count: Option<i64>,
    pub(crate) width: Option<i64>,
    pub(crate) height: Option<i64>,
    pub(crate) duration_ms: Option<i64>,
    pub(crate) sample_rate: Option<i64>,
    pub(crate) channels: Option<i64>,
    pub(crate) bitrate: Option<i64>,
    /// The keys of the lists the asset is in ([`list_keys`]).
    pub(crate) tag_keys: Vec<String>,
    pub(crate) checksum: Option<Vec<u8>>,
    /// The folded words of its title, tags and description, as a weighted `tsvector`'s text
    /// (feature `search`; `None` without it, which leaves the row to every search as a
    /// candidate: migrations 18 and 19).
    pub(crate) search_words: Option<String>,
}

/// The first character of a workspace's key among the keys of an asset's tags: no tag key
/// starts with it (tags hold no control character).
const WORKSPACE_KEY: char = '\u{1}';

/// The key of `workspace`'s list among the tag lists (migration 15).
pub(crate) fn workspace_key(workspace: &str) -> String {
    format!("{WORKSPACE_KEY}{workspace}")
}

/// What an asset keeps in `tag_keys`: the keys of its tags, each once ([`tag_keys`]), then
/// its workspace's key ([`workspace_key`]), so that `asset_tags` lists it under each.
fn list_keys(a: &Asset) -> Vec<String> {
    let mut keys = tag_keys(&a.tags);
    keys.extend(a.workspace_id.as_deref().map(workspace_key));
    keys
}

impl AssetParams {
    pub(crate) fn new(a: &Asset, rules: WordRules) -> Result<Self, Failure> {
        let opt = |what, v: Option<u64>| v.map(|v| to_i64(what, v)).transpose();
        Ok(AssetParams {
            title_lower: fold_case(&a.title),
            description_lower: a.description.as_deref().map(fold_case),
            asset_type: a.asset_type.as_str(),
            file_size: opt("file size", a.file_size)?,
            page_count: opt("page count", a.page_count)?,
            word_count: opt("word count", a.word_count)?,
            width: a.width.map(i64::from),
            height: a.height.map(i64::from),
            duration_ms: opt("duration", a.media.duration_ms)?,
            sample_rate: a.media.sample_rate.map(i64::from),
            channels: a.media.channels.map(i64::from),
            bitrate: a.media.bitrate.map(i64::from),
            tag_keys: list_keys(a),
            checksum: a.checksum_sha256.map(|c| c.to_vec()),
            search_words: search_words(a, rules),
        })
    }
}

/// The folded words of `a`'s title, tags and description, each once, weighted by the fields
/// it is in (feature `search`; [`field_vector`]).
#[cfg(feature = "search")]
pub(crate) fn search_words(a: &Asset, rules: WordRules) -> Option<String> {
    Some(field_vector(a, rules))
}

/// `word` as a lexeme of a `tsquery`, quoted.
#[cfg(feature = "search")]
pub(crate) fn lexeme(word: &str) -> String {
    format!("'{}'", word.replace('\\', "\\\\").replace('\'', "''"))
}

/// The fields of [`field_vector`], in order: the set, its position and its weight.
#[cfg(feature = "search")]
pub(crate) const FIELDS: [(assetlib_core::store::FieldSet, u8, char); 3] = [
    (assetlib_core::store::FieldSet::TITLE, 1, 'A'),
    (assetlib_core::store::FieldSet::TAGS, 2, 'B'),
    (assetlib_core::store::FieldSet::DESCRIPTION, 3, 'C'),
];

/// The text of the weighted `tsvector` of `asset`'s title, tags and description: each folded
/// (and, in a language, stemmed) word once, at the position and weight of each field it is in
/// ([`FIELDS`]), e.g. `'harbour':1A,3C`.
#[cfg(feature = "search")]
pub(crate) fn field_vector(asset: &Asset, rules: WordRules) -> String {
    let words = assetlib_core::store::asset_field_words(asset, rules.language);
    let mut out = String::new();
    for (word, fields) in &words {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&lexeme(word));
        let mut sep = ':';
        for (field, position, weight) in FIELDS {
            if fields.bits() & field.bits() != 0 {
                out.push(sep);
                out.push(char::from(b'0' + position));
                out.push(weight);
                sep = ',';
            }
        }
    }
    out
}

/// Without feature `search`, no words: the row stays a candidate of every search.
#[cfg(not(feature = "search"))]
pub(crate) fn search_words(_: &Asset, _: WordRules) -> Option<String> {
    None
}
