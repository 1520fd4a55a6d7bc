//! [`SearchStore`]: search over the assets and the text inside their files.

use async_trait::async_trait;
use uuid::Uuid;

use crate::error::StoreError;
use crate::model::{Asset, AssetType, Page, tag_key};
use crate::search::{Fields, Language, MatchField, SearchQuery, Words};

/// The text inside an asset's file, kept for search.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AssetText {
    /// The text: one item per page (PDF pages, slides) when `paged`, else one item.
    pub pages: Vec<String>,
    /// Whether the items are numbered pages, which a hit's matches name.
    pub paged: bool,
}

/// What one search asks the store (`GET /api/v1/search`).
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// What to find, read in the store's language ([`SearchStore::language`];
    /// [`crate::search::parse_query_in`]).
    pub query: SearchQuery,
    /// Assets of this type only.
    pub asset_type: Option<AssetType>,
    /// Assets with this tag only (a tag key, [`crate::model::tag_key`]).
    pub tag: Option<String>,
    /// Assets of this workspace only.
    pub workspace_id: Option<String>,
    /// Assets placed in this library only.
    pub library_id: Option<Uuid>,
    /// Drafts too (a caller with `write:assets`); else published assets only.
    pub drafts: bool,
    /// Whether the text of paid files counts (a caller with `read:paid`). A paid file is an
    /// asset that is not public, held by a published paid library and by no published free
    /// one ([`crate::LibraryStore::published_holders`]). Without it such an asset is a hit
    /// only by its title, tags or description.
    pub paid_content: bool,
    /// How many hits to skip.
    pub offset: u64,
    /// How many hits to return at most.
    pub limit: u32,
}

/// One hit, as the store found it.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchFound {
    /// The asset.
    pub asset: Asset,
    /// [`SearchQuery::score`] of its title, tags, description and (when it counts) text.
    pub score: u32,
    /// The pages of its text where a term of the query occurs, at most
    /// [`MAX_PAGES_SHOWN`], lowest first: each page's index (from 0) and its text. Empty when
    /// no text matched or its text does not count.
    pub pages: Vec<(u32, String)>,
    /// Whether the asset's text is paged ([`AssetText::paged`]).
    pub paged: bool,
}

/// How many pages of a hit's text [`SearchFound::pages`] carries at most.
pub const MAX_PAGES_SHOWN: usize = 3;

/// Search over the assets (the `search` capability; a store hands it out through
/// [`crate::MetaStore::search_store`]): the text inside their files, kept per asset, and
/// ranked hits over title, tags, description and that text, by the rules of
/// [`crate::search`].
#[async_trait]
pub trait SearchStore: Send + Sync + 'static {
    /// Keeps `text` as the text inside asset `id`'s file, replacing what was kept, durably;
    /// `false` (and nothing kept) when there is no such asset. The next
    /// [`SearchStore::search`] finds it. A deleted asset's text goes with it.
    async fn set_asset_text(&self, id: Uuid, text: AssetText) -> Result<bool, StoreError>;

    /// The text kept for asset `id` (`None` when none is).
    async fn asset_text(&self, id: Uuid) -> Result<Option<AssetText>, StoreError>;

    /// One page of the hits of `request`: the assets passing its filters whose
    /// [`SearchQuery::score`] is a number, best first, then newest `created_at` first, then
    /// by id descending; and how many hits there are in all. Every write through this store
    /// that returned is seen, and within the change-notice bound a write through another
    /// process sharing it.
    ///
    /// The query is read in the store's [`SearchStore::language`] (the service reads `q`
    /// so): an index holds the words of that language, so a query read in another matches
    /// what its words happen to share with them.
    async fn search(&self, request: &SearchRequest) -> Result<Page<SearchFound>, StoreError>;

    /// The language the store stems words in, set in its configuration (`None`, the
    /// default: words are folded and not stemmed). The store indexes the words of that
    /// language ([`asset_field_words`], [`AssetText::words`]) and a search's query is read
    /// in it ([`crate::search::parse_query_in`]), so every form of a word finds the others.
    fn language(&self) -> Option<Language> {
        None
    }

    /// Makes ready now what the first search would otherwise make before answering, so that
    /// no request waits for it (a server calls it as it starts). The default does nothing:
    /// a store whose index is always ready has nothing to make.
    async fn prepare(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Brings into the index the words of any asset written while it was not kept (by a
    /// build without the feature sharing the store), while serving; answers how many. The
    /// default does nothing: a store that keeps its words in the records' own writes has
    /// none to bring in.
    async fn reindex_words(&self) -> Result<u64, StoreError> {
        Ok(0)
    }
}

impl AssetText {
    /// The distinct words of every page, folded and stemmed in `language`
    /// ([`crate::search::distinct_words`]): what an index of the text holds.
    pub fn words(&self, language: Option<Language>) -> std::collections::BTreeSet<String> {
        crate::search::distinct_words(self.pages.iter().map(String::as_str), language)
    }
}

/// The fields of an asset's record a word occurs in: a set of [`FieldSet::TITLE`],
/// [`FieldSet::TAGS`] and [`FieldSet::DESCRIPTION`], as a store's index of those fields keeps
/// it beside each word ([`asset_field_words`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct FieldSet(u8);

impl FieldSet {
    /// The title.
    pub const TITLE: FieldSet = FieldSet(1);
    /// The tags.
    pub const TAGS: FieldSet = FieldSet(2);
    /// The description.
    pub const DESCRIPTION: FieldSet = FieldSet(4);

    /// The set as bits (what a store keeps).
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// The set of `bits` ([`FieldSet::bits`]); other bits are dropped.
    pub const fn from_bits(bits: u8) -> Self {
        FieldSet(bits & 7)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The weight of the best field of the set ([`MatchField::weight`]); `None` when empty.
    pub const fn best_weight(self) -> Option<u32> {
        if self.0 & Self::TITLE.0 != 0 {
            Some(MatchField::Title.weight())
        } else if self.0 & Self::TAGS.0 != 0 {
            Some(MatchField::Tags.weight())
        } else if self.0 & Self::DESCRIPTION.0 != 0 {
            Some(MatchField::Description.weight())
        } else {
            None
        }
    }
}

impl std::ops::BitOr for FieldSet {
    type Output = FieldSet;
    fn bitor(self, other: FieldSet) -> FieldSet {
        FieldSet(self.0 | other.0)
    }
}

impl std::ops::BitOrAssign for FieldSet {
    fn bitor_assign(&mut self, other: FieldSet) {
        self.0 |= other.0;
    }
}

/// The distinct words of `asset`'s title, tags and description, folded and stemmed in
/// `language` ([`crate::search::words_in`]), each with the fields it occurs in: what an index
/// of those fields holds for it.
pub fn asset_field_words(
    asset: &Asset,
    language: Option<Language>,
) -> std::collections::BTreeMap<String, FieldSet> {
    field_words(
        &asset.title,
        &asset.tags,
        asset.description.as_deref(),
        language,
    )
}

/// [`asset_field_words`] of an asset with this title, these tags and this description, for a
/// store that reads them from a record of its own without making an [`Asset`].
pub fn field_words(
    title: &str,
    tags: &[String],
    description: Option<&str>,
    language: Option<Language>,
) -> std::collections::BTreeMap<String, FieldSet> {
    let mut out = std::collections::BTreeMap::new();
    let fields = std::iter::once((FieldSet::TITLE, title))
        .chain(tags.iter().map(|t| (FieldSet::TAGS, t.as_str())))
        .chain(description.map(|d| (FieldSet::DESCRIPTION, d)));
    for (field, text) in fields {
        for word in crate::search::distinct_words([text], language) {
            *out.entry(word).or_default() |= field;
        }
    }
    out
}

impl SearchRequest {
    /// Page 1 (20 hits) of `query`, with no filter, drafts and the text of paid files
    /// included: what a key with every scope asks.
    pub fn new(query: SearchQuery) -> Self {
        SearchRequest {
            query,
            asset_type: None,
            tag: None,
            workspace_id: None,
            library_id: None,
            drafts: true,
            paid_content: true,
            offset: 0,
            limit: 20,
        }
    }

    /// Whether `asset` passes this request's filters, the query and the library aside.
    pub fn passes(&self, asset: &Asset) -> bool {
        (self.drafts || asset.published)
            && self.asset_type.is_none_or(|t| asset.asset_type == t)
            && self
                .tag
                .as_ref()
                .is_none_or(|want| asset.tags.iter().any(|t| tag_key(t) == *want))
            && self
                .workspace_id
                .as_ref()
                .is_none_or(|w| asset.workspace_id.as_ref() == Some(w))
    }
}

/// The title, tags and description of `asset`, read into words as `query` matches them.
fn asset_fields<'a>(query: &SearchQuery, asset: &'a Asset) -> Fields<'a> {
    let description = asset.description.as_deref().unwrap_or("");
    Fields {
        texts: vec![
            (MatchField::Title, vec![query.words_of(&asset.title)]),
            (
                MatchField::Tags,
                asset.tags.iter().map(|t| query.words_of(t)).collect(),
            ),
            (MatchField::Description, vec![query.words_of(description)]),
        ],
    }
}

/// The hit `query` makes of `asset` and its kept `text` (`None` when none is kept or, a paid
/// file's for a caller without `read:paid`, it does not count): scored by
/// [`SearchQuery::score`] over title, tags, description and text, with the pages of the text
/// where a term occurs. `None` when it is no hit. The texts are read in the query's language
/// ([`SearchQuery::words_of`]). Every store ranks through this, so two stores find the same
/// hits for the same query.
pub fn search_hit(
    query: &SearchQuery,
    asset: Asset,
    text: Option<AssetText>,
) -> Option<SearchFound> {
    let (score, shown) = {
        let pages: Vec<Words<'_>> = text
            .as_ref()
            .map(|t| t.pages.iter().map(|p| query.words_of(p)).collect())
            .unwrap_or_default();
        let mut fields = asset_fields(query, &asset);
        fields.texts.push((MatchField::Content, pages));
        let score = query.score(&fields)?;
        let shown: Vec<usize> = fields.texts[3]
            .1
            .iter()
            .enumerate()
            .filter(|(_, w)| !w.matches(query).is_empty())
            .map(|(i, _)| i)
            .take(MAX_PAGES_SHOWN)
            .collect();
        (score, shown)
    };
    let (pages, paged) = match text {
        Some(mut t) => (
            shown
                .into_iter()
                .filter_map(|i| {
                    let page = std::mem::take(t.pages.get_mut(i)?);
                    Some((u32::try_from(i).ok()?, page))
                })
                .collect(),
            t.paged,
        ),
        None => (Vec::new(), false),
    };
    Some(SearchFound {
        asset,
        score,
        pages,
        paged,
    })
}

/// What a store's word index says of one candidate, for a query whose terms are all words or
/// prefixes ([`SearchQuery::is_word_level`]): enough to score it ([`IndexMatch::score`])
/// without reading its record or its text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IndexMatch {
    /// Per clause of the query, in order: the fields of the title, tags and description one
    /// of its terms occurs in ([`asset_field_words`]).
    pub fields: Vec<FieldSet>,
    /// Per clause: whether one of its terms occurs in the text. False when the text does not
    /// count (none kept, or a paid file's for a caller without `read:paid`).
    pub text: Vec<bool>,
    /// Whether an excluded term occurs in the fields, or in the text when it counts.
    pub excluded: bool,
}

impl IndexMatch {
    /// Nothing found yet for a query of `clauses` clauses.
    pub fn new(clauses: usize) -> Self {
        IndexMatch {
            fields: vec![FieldSet::default(); clauses],
            text: vec![false; clauses],
            excluded: false,
        }
    }

    /// The score [`search_hit`] gives the candidate: for each clause the weight of the best
    /// field it occurs in (the text weighing 1), summed; `None` when it is no hit (a clause
    /// occurs nowhere, or an excluded term somewhere). A store ranks every candidate so and
    /// reads the records and texts of the page it returns only.
    pub fn score(&self) -> Option<u32> {
        if self.excluded {
            return None;
        }
        let mut score = 0;
        for (fields, text) in self.fields.iter().zip(&self.text) {
            score += fields
                .best_weight()
                .or_else(|| text.then(|| MatchField::Content.weight()))?;
        }
        Some(score)
    }
}

/// The hit of a page ranked by its [`IndexMatch::score`]: [`search_hit`] of the asset and its text
/// (`None` when it has none or it does not count), which gives it the same `score` and the
/// pages of its text that match.
pub fn found(
    query: &SearchQuery,
    score: u32,
    asset: Asset,
    text: Option<AssetText>,
) -> SearchFound {
    match search_hit(query, asset.clone(), text) {
        Some(hit) => hit,
        // The index and the text disagree only if the text changed between the two reads:
        // the hit stands as ranked, without pages.
        None => SearchFound {
            asset,
            score,
            pages: Vec::new(),
            paged: false,
        },
    }
}

/// Of `assets` (candidates whose text a search would read), those whose files are paid when
/// the text does not count for `request` (no `read:paid`): not public, held by a published
/// paid library and by no published free one.
///
/// # Errors
/// As [`crate::LibraryStore::published_holders`].
pub async fn paid_files<'a, S: crate::LibraryStore + ?Sized>(
    store: &S,
    request: &SearchRequest,
    assets: impl IntoIterator<Item = &'a Asset>,
) -> Result<std::collections::HashSet<Uuid>, StoreError> {
    let private = assets
        .into_iter()
        .filter(|a| !a.is_public)
        .map(|a| a.id)
        .collect();
    paid_among(store, request, private).await
}

/// Of `private` (candidates that are not public, whose text a search would read), those
/// whose files are paid when the text does not count for `request` (as [`paid_files`]).
///
/// # Errors
/// As [`crate::LibraryStore::published_holders`].
pub async fn paid_among<S: crate::LibraryStore + ?Sized>(
    store: &S,
    request: &SearchRequest,
    private: Vec<Uuid>,
) -> Result<std::collections::HashSet<Uuid>, StoreError> {
    if request.paid_content || private.is_empty() {
        return Ok(std::collections::HashSet::new());
    }
    Ok(store
        .published_holders(&private)
        .await?
        .into_iter()
        .filter(|h| h.paid && !h.free)
        .map(|h| h.asset_id)
        .collect())
}

/// Ranks candidates read with their texts ([`search_hit`]; the text of a paid file does not
/// count for a request without `read:paid`, as [`paid_files`] says): the page of `request`,
/// and how many hits there are in all.
///
/// # Errors
/// As [`crate::LibraryStore::published_holders`].
pub async fn rank_read<S: crate::LibraryStore + ?Sized>(
    store: &S,
    request: &SearchRequest,
    candidates: Vec<(Asset, Option<AssetText>)>,
) -> Result<Page<SearchFound>, StoreError> {
    let with_text = candidates
        .iter()
        .filter(|(_, t)| t.is_some())
        .map(|(a, _)| a);
    let paid = paid_files(store, request, with_text).await?;
    let hits = candidates
        .into_iter()
        .filter_map(|(asset, text)| {
            let text = text.filter(|_| !paid.contains(&asset.id));
            search_hit(&request.query, asset, text)
        })
        .collect();
    Ok(page_of_hits(hits, request.offset, request.limit))
}

/// The page `offset`, `limit` of `hits` in the order [`SearchStore::search`] gives: best score
/// first, then newest `created_at`, then by id descending; with their number.
pub fn page_of_hits(mut hits: Vec<SearchFound>, offset: u64, limit: u32) -> Page<SearchFound> {
    hits.sort_by(|a, b| {
        (b.score, b.asset.created_at, b.asset.id).cmp(&(a.score, a.asset.created_at, a.asset.id))
    });
    let total = hits.len() as u64;
    let items = hits
        .into_iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(limit as usize)
        .collect();
    Page { items, total }
}
