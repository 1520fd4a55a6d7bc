//! [`SearchStore`]: search over the assets and the text inside their files.

use async_trait::async_trait;
use uuid::Uuid;

use crate::error::StoreError;
use crate::model::{Asset, AssetType, Page, tag_key};
use crate::search::{Fields, MatchField, SearchQuery, Words};

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
    /// What to find.
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
    async fn search(&self, request: &SearchRequest) -> Result<Page<SearchFound>, StoreError>;

    /// Brings into the index the words of any asset written while it was not kept (by a
    /// build without the feature sharing the store), while serving; answers how many. The
    /// default does nothing: a store that keeps its words in the records' own writes has
    /// none to bring in.
    async fn reindex_words(&self) -> Result<u64, StoreError> {
        Ok(0)
    }
}

impl AssetText {
    /// The distinct folded words of every page: what an index of the text holds.
    pub fn words(&self) -> std::collections::BTreeSet<String> {
        crate::search::distinct_words(self.pages.iter().map(String::as_str))
    }
}

/// The distinct folded words of `asset`'s title, tags and description: what an index of
/// those fields holds for it.
pub fn asset_words(asset: &Asset) -> std::collections::BTreeSet<String> {
    let texts = std::iter::once(asset.title.as_str())
        .chain(asset.tags.iter().map(String::as_str))
        .chain(asset.description.as_deref());
    crate::search::distinct_words(texts)
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

/// The title, tags and description of `asset`, read into words.
fn asset_fields(asset: &Asset) -> Fields<'_> {
    let description = asset.description.as_deref().unwrap_or("");
    Fields {
        texts: vec![
            (MatchField::Title, vec![Words::of(&asset.title)]),
            (
                MatchField::Tags,
                asset.tags.iter().map(|t| Words::of(t)).collect(),
            ),
            (MatchField::Description, vec![Words::of(description)]),
        ],
    }
}

/// The hit `query` makes of `asset` and its kept `text` (`None` when none is kept or, a paid
/// file's for a caller without `read:paid`, it does not count): scored by
/// [`SearchQuery::score`] over title, tags, description and text, with the pages of the text
/// where a term occurs. `None` when it is no hit. Every store ranks through this, so two
/// stores find the same hits for the same query.
pub fn search_hit(
    query: &SearchQuery,
    asset: Asset,
    text: Option<AssetText>,
) -> Option<SearchFound> {
    let (score, shown) = {
        let pages: Vec<Words<'_>> = text
            .as_ref()
            .map(|t| t.pages.iter().map(|p| Words::of(p)).collect())
            .unwrap_or_default();
        let mut fields = asset_fields(&asset);
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

/// What a store's word index says of one candidate's text, for a query whose terms are all
/// words or prefixes ([`SearchQuery::is_word_level`]): for each clause, whether one of its
/// terms occurs in the text; and whether an excluded term does. Both false when the text does
/// not count (none kept, or a paid file's for a caller without `read:paid`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMatches {
    /// Per clause of the query, in order.
    pub clauses: Vec<bool>,
    /// Whether an excluded term occurs in the text.
    pub excluded: bool,
    /// Whether the title, tags or description may hold a term of the query (the store's index
    /// of their words has one for the asset); when false they are not read. `true` when the
    /// store cannot tell.
    pub in_fields: bool,
}

impl Default for TextMatches {
    /// Nothing in the text; the fields read.
    fn default() -> Self {
        TextMatches {
            clauses: Vec::new(),
            excluded: false,
            in_fields: true,
        }
    }
}

/// The score [`search_hit`] gives `asset` for a word-level `query`, its text known only
/// through the index (`text`): title, tags and description are read from the asset, the text
/// counts where `text` says. `None` when it is no hit. A store ranks every candidate so,
/// without reading their texts, and reads the texts of the page it returns only.
pub fn indexed_score(query: &SearchQuery, asset: &Asset, text: &TextMatches) -> Option<u32> {
    if text.excluded {
        return None;
    }
    if !text.in_fields {
        // Only the text can match: each clause must occur in it.
        let mut score = 0;
        for i in 0..query.clauses.len() {
            if !text.clauses.get(i).copied().unwrap_or(false) {
                return None;
            }
            score += MatchField::Content.weight();
        }
        return Some(score);
    }
    let fields = asset_fields(asset);
    if query.excluded.iter().any(|t| fields.has(t)) {
        return None;
    }
    let mut score = 0;
    for (i, clause) in query.clauses.iter().enumerate() {
        let in_fields = fields.best(clause);
        let in_text = text
            .clauses
            .get(i)
            .copied()
            .unwrap_or(false)
            .then(|| MatchField::Content.weight());
        score += in_fields.max(in_text)?;
    }
    Some(score)
}

/// The hit of a page ranked by [`rank_indexed`]: [`search_hit`] of the asset and its text
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
    if request.paid_content {
        return Ok(std::collections::HashSet::new());
    }
    let private: Vec<Uuid> = assets
        .into_iter()
        .filter(|a| !a.is_public)
        .map(|a| a.id)
        .collect();
    if private.is_empty() {
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

/// Ranks word-level candidates as [`SearchStore::search`] orders hits ([`indexed_score`];
/// the text of the assets of `paid` does not count): the page `offset`, `limit` of them with
/// their scores, and how many hits there are in all.
pub fn rank_indexed(
    query: &SearchQuery,
    candidates: Vec<(Asset, TextMatches)>,
    paid: &std::collections::HashSet<Uuid>,
    offset: u64,
    limit: u32,
) -> (Vec<(u32, Asset)>, u64) {
    let mut ranked: Vec<(u32, Asset)> = candidates
        .into_iter()
        .filter_map(|(asset, m)| {
            let m = if paid.contains(&asset.id) {
                TextMatches {
                    in_fields: m.in_fields,
                    ..TextMatches::default()
                }
            } else {
                m
            };
            Some((indexed_score(query, &asset, &m)?, asset))
        })
        .collect();
    ranked.sort_by(|(sa, a), (sb, b)| (sb, b.created_at, b.id).cmp(&(sa, a.created_at, a.id)));
    let total = ranked.len() as u64;
    let page = ranked
        .into_iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(limit as usize)
        .collect();
    (page, total)
}

/// Ranks candidates read with their texts ([`search_hit`]; the text of the assets of `paid`
/// does not count): the page of `request`, and how many hits there are in all.
pub fn rank_read(
    request: &SearchRequest,
    candidates: Vec<(Asset, Option<AssetText>)>,
    paid: &std::collections::HashSet<Uuid>,
) -> Page<SearchFound> {
    let hits = candidates
        .into_iter()
        .filter_map(|(asset, text)| {
            let text = text.filter(|_| !paid.contains(&asset.id));
            search_hit(&request.query, asset, text)
        })
        .collect();
    page_of_hits(hits, request.offset, request.limit)
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
