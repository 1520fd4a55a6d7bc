//! Search (DESIGN.md §6 "Search", feature `search`): `GET /api/v1/search`, ranked hits over
//! the assets and the text inside their files, with `<mark>`ed snippets of where each matched.

use serde::Serialize;

use super::Service;
use super::access::{named_workspace, sees_drafts};
use crate::error::ApiError;
use crate::model::{ApiKey, Scope};
use crate::page::AssetPagination;
use crate::query;
use crate::render::{AssetJson, Envelope};
use crate::reply::Reply;
use crate::request::RawRequest;
use crate::search::SearchQuery;
use crate::store::{SearchFound, SearchRequest};

/// Where a hit matched: a field, the page of the file's text, and the words around it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct MatchJson {
    /// `title`, `description`, `tags` or `content`.
    field: &'static str,
    /// The page (1-based) of a paged text (PDF pages, slides); `null` otherwise.
    page: Option<u32>,
    /// At most 200 characters around the first matches, matches in `<mark>`, the rest
    /// HTML-escaped.
    snippet: String,
}

/// A hit on the wire.
#[derive(Serialize)]
struct HitJson<'a> {
    asset: AssetJson<'a>,
    score: u32,
    matches: Vec<MatchJson>,
}

/// Where `found` matched `query`, field by field: the title, the description, each tag, then
/// each page of text the store returned; each text read in the query's language, its words
/// marked as they are written.
pub(crate) fn matches_of(query: &SearchQuery, found: &SearchFound) -> Vec<MatchJson> {
    let asset = &found.asset;
    let mut out = Vec::new();
    let mut add = |field, page, text: &str| {
        if let Some(snippet) = query.words_of(text).snippet(query) {
            out.push(MatchJson {
                field,
                page,
                snippet,
            });
        }
    };
    add("title", None, &asset.title);
    if let Some(description) = &asset.description {
        add("description", None, description);
    }
    for tag in &asset.tags {
        add("tags", None, tag);
    }
    for (index, text) in &found.pages {
        let page = found.paged.then(|| index.saturating_add(1));
        add("content", page, text);
    }
    out
}

/// Assets read at a time by [`Service::reindex_search`].
const REINDEX_BATCH: u32 = 100;

/// What [`Service::reindex_search`] has done so far, handed to its progress callback.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reindex {
    /// Assets of every status when the walk began.
    pub total: u64,
    /// Assets looked at so far.
    pub seen: u64,
    /// Words of assets brought into the index (written while it was not kept).
    pub words: u64,
    /// Files read for their text.
    pub read: u64,
    /// Files that could not be read (logged); the next run tries them again.
    pub failed: u64,
}

impl Service {
    /// Rebuilds what search needs that is missing (feature `search`): first the words of
    /// assets written while the index was not kept ([`crate::store::SearchStore::reindex_words`]),
    /// then the text of every pdf and document asset whose file has none kept yet (files
    /// stored before the feature, or whose reading failed), read as an upload reads it
    /// (within [`crate::Config::extract_timeout`], on the preview workers; no thumbnail is
    /// made). A file that gives no text is kept as an empty text, so it is not read again.
    /// `progress` is called after each asset. Safe while serving, and to stop and run again:
    /// what was done is not done again.
    ///
    /// # Errors
    /// 404 when the store keeps no search index; 500 when the store fails (what was done
    /// stays done).
    pub async fn reindex_search(
        &self,
        mut progress: impl FnMut(&Reindex) + Send,
    ) -> Result<Reindex, ApiError> {
        use crate::model::AssetType;
        use crate::query::{AssetQuery, AssetStatus};
        use crate::store::AssetText;
        let Some(search) = self.inner.store.search_store() else {
            return Err(ApiError::NotFound("the store keeps no search index"));
        };
        let mut done = Reindex {
            words: search.reindex_words().await?,
            ..Reindex::default()
        };
        // Newest first: assets created meanwhile come before the walk's place, so none is
        // skipped (a delete may move one past it: the next run reads it).
        let mut query = AssetQuery {
            per_page: REINDEX_BATCH,
            status: AssetStatus::Any,
            ..AssetQuery::default()
        };
        loop {
            let page = self.inner.store.list_assets(&query).await?;
            if query.page == 1 {
                done.total = page.total;
            }
            if page.items.is_empty() {
                return Ok(done);
            }
            for asset in page.items {
                done.seen += 1;
                let wanted = matches!(asset.asset_type, AssetType::Pdf | AssetType::Document);
                if let (true, Some(path)) = (wanted, &asset.file_path)
                    && search.asset_text(asset.id).await?.is_none()
                {
                    let inner = &self.inner;
                    let read = crate::ingest::read_text(
                        &inner.files,
                        &inner.config,
                        &inner.previews,
                        path,
                        asset.asset_type,
                    )
                    .await;
                    match read {
                        Ok(text) => {
                            let text = text.map_or_else(AssetText::default, |t| AssetText {
                                pages: t.pages,
                                paged: t.paged,
                            });
                            search.set_asset_text(asset.id, text).await?;
                            done.read += 1;
                        }
                        Err(e) => {
                            tracing::warn!(asset = %asset.id, error = %e, "a file's text could not be read");
                            done.failed += 1;
                        }
                    }
                }
                progress(&done);
            }
            query.page += 1;
        }
    }

    /// `GET /api/v1/search`: a page of hits as `key` may see them (drafts only with
    /// `write:assets`, the text of paid files only with `read:paid`, a workspace key its own
    /// workspace). `q` is read in the store's language ([`crate::store::SearchStore::language`]),
    /// as its index holds the words. A store that keeps no index answers as a route this build
    /// lacks (404).
    pub(super) async fn search_request(
        &self,
        req: RawRequest<'_>,
        key: &ApiKey,
    ) -> Result<Reply, ApiError> {
        let search = self.inner.store.search_store();
        let language = search.and_then(|s| s.language());
        let params = query::search_query(req.query, self.inner.config.max_page_size, language)?;
        let Some(search) = search else {
            return Ok(crate::routes::route_not_found());
        };
        let per_page = params.per_page;
        let request = SearchRequest {
            query: params.q,
            asset_type: params.asset_type,
            tag: params.tag,
            workspace_id: named_workspace(key.workspace_id.as_deref(), params.workspace_id)?,
            library_id: params.library_id,
            drafts: sees_drafts(key),
            paid_content: key.scopes.contains(&Scope::ReadPaid),
            offset: (params.page - 1).saturating_mul(u64::from(per_page)),
            limit: per_page,
        };
        let page = search.search(&request).await?;
        let hits: Vec<HitJson<'_>> = page
            .items
            .iter()
            .map(|found| HitJson {
                asset: AssetJson(&found.asset),
                score: found.score,
                matches: matches_of(&request.query, found),
            })
            .collect();
        Ok(Reply::json_value(
            200,
            &Envelope {
                data: hits,
                pagination: Some(AssetPagination::new(params.page, per_page, page.total)),
            },
        ))
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use super::*;
    use crate::model::AssetType;
    use crate::search::parse_query;
    use crate::testing::sample_asset;

    #[test]
    fn matches_name_each_field_and_the_page_of_paged_text() {
        let mut asset = sample_asset("Tide tables", AssetType::Pdf, 1);
        asset.description = Some("Printed <tide> charts".into());
        asset.tags = vec!["Harbour".into(), "tides".into()];
        let q = parse_query("tide").expect("query");
        let found = SearchFound {
            asset,
            score: 8,
            pages: vec![(2, "High tide at noon".into())],
            paged: true,
        };
        let m = |field, page: Option<u32>, snippet: &str| MatchJson {
            field,
            page,
            snippet: snippet.into(),
        };
        assert_eq!(
            matches_of(&q, &found),
            [
                m("title", None, "<mark>Tide</mark> tables"),
                m(
                    "description",
                    None,
                    "Printed &lt;<mark>tide</mark>&gt; charts"
                ),
                m("tags", None, "<mark>tides</mark>"),
                m("content", Some(3), "High <mark>tide</mark> at noon"),
            ]
        );
        let unpaged = SearchFound {
            paged: false,
            pages: vec![(0, "tide".into())],
            ..found
        };
        assert_eq!(matches_of(&q, &unpaged).last().and_then(|m| m.page), None);
    }

    #[test]
    fn stemmed_matches_mark_each_form_as_it_is_written() {
        let mut asset = sample_asset("Runs and runners", AssetType::Pdf, 1);
        asset.tags = vec!["Running".into()];
        let q = crate::search::parse_query_in("ran OR run", Some(crate::search::Language::English))
            .expect("query");
        let found = SearchFound {
            asset,
            score: 8,
            pages: vec![(0, "She runs daily".into())],
            paged: false,
        };
        let snippets: Vec<String> = matches_of(&q, &found)
            .into_iter()
            .map(|m| m.snippet)
            .collect();
        assert_eq!(
            snippets,
            [
                "<mark>Runs</mark> and <mark>runners</mark>",
                "<mark>Running</mark>",
                "She <mark>runs</mark> daily",
            ]
        );
    }
}
