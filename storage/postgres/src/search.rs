//! [`SearchStore`] of the [`PgStore`] (feature `search`): PostgreSQL's full-text index over
//! the words every store folds alike.
//!
//! The words are [`assetlib_core::search::words`], folded in Rust, kept as tsvectors of bare
//! lexemes (`array_to_tsvector`, no parser or dictionary of the database in between) under
//! GIN indexes (migration 18):
//! - `assets.search_words`: the words of the title, tags and description, written with the
//!   row by every insert and update, so in the same transaction as the record;
//! - `asset_texts`: the text inside the file, one array item per page, and
//!   `asset_text_words`: its words in chunks (a tsvector holds at most 1 MB). Both are
//!   written in one transaction by [`SearchStore::set_asset_text`] and go with the asset
//!   (`ON DELETE CASCADE`).
//!
//! A search turns each clause of the query into a `tsquery` (a word `'w'`, a prefix `'w':*`,
//! a phrase all its words joined by `&`, alternatives by `|`), takes the ids each clause
//! matches in either index through GIN, intersects the clauses and applies the filters in
//! the same statement, then ranks those candidates in Rust by the rules every store shares
//! ([`assetlib_core::store::search_hit`]): the index narrows, the shared rules decide, so
//! PostgreSQL finds exactly what sled and the memory store find. A row whose `search_words`
//! is NULL (written by a build without the feature, or before migration 18) is a candidate
//! of every search until [`PgStore::reindex_search`] fills it in.

use assetlib_core::search::{SearchQuery, Term};
use assetlib_core::store::{
    AssetText, SearchFound, SearchRequest, SearchStore, TextMatches, found, paid_files,
    rank_indexed, rank_read,
};
use assetlib_core::{Asset, Page, StoreError, async_trait};
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::PgStore;
use crate::assets::{asset_cols, asset_from_row};
use crate::error::Failure;

/// Rows a transaction of [`SearchStore::reindex_words`] fills in.
const REINDEX_BATCH: u32 = 500;

/// The most words of a text one `asset_text_words` row holds.
const WORDS_PER_CHUNK: usize = 20_000;

/// `word` as a lexeme of a `tsquery`, quoted.
fn lexeme(word: &str) -> String {
    format!("'{}'", word.replace('\\', "\\\\").replace('\'', "''"))
}

/// The `tsquery` of one term: what an indexed row must hold to be a candidate.
fn term_query(term: &Term) -> String {
    match term {
        Term::Word(w) => lexeme(w),
        Term::Prefix(w) => format!("{}:*", lexeme(w)),
        Term::Phrase(ws) => {
            let all: Vec<String> = ws.iter().map(|w| lexeme(w)).collect();
            format!("({})", all.join(" & "))
        }
    }
}

/// The `tsquery` of each clause of `query`: any of its terms.
fn clause_queries(query: &SearchQuery) -> Vec<String> {
    query
        .clauses
        .iter()
        .map(|clause| {
            let terms: Vec<String> = clause.iter().map(term_query).collect();
            terms.join(" | ")
        })
        .collect()
}

/// The statement finding the candidates of `clauses` queries (`$1`..`$n`) that pass the
/// filters (`$n+1`.. as [`SearchStore::search`] binds them), each with its asset, download
/// count and kept text.
fn search_sql(s: &str, clauses: usize) -> String {
    let mut ctes = Vec::with_capacity(clauses);
    for i in 1..=clauses {
        ctes.push(format!(
            "c{i} AS (SELECT id FROM {s}.assets \
                 WHERE search_words @@ ${i}::text::tsquery OR search_words IS NULL \
             UNION SELECT asset_id FROM {s}.asset_text_words WHERE words @@ ${i}::text::tsquery)"
        ));
    }
    let matched: Vec<String> = (1..=clauses)
        .map(|i| format!("SELECT id FROM c{i}"))
        .collect();
    let f = clauses + 1;
    format!(
        "WITH {ctes} \
         SELECT {cols}, c.download_count, t.paged, t.pages \
         FROM ({matched}) m \
         JOIN {s}.assets a ON a.id = m.id \
         JOIN {s}.asset_counters c ON c.asset_id = a.id \
         LEFT JOIN {s}.asset_texts t ON t.asset_id = a.id \
         WHERE {filters}",
        ctes = ctes.join(", "),
        cols = asset_cols("a."),
        matched = matched.join(" INTERSECT "),
        filters = filters_sql(s, f),
    )
}

/// The filters of a search statement, from parameter `$f` on (as [`SearchStore::search`]
/// binds them): drafts, type, tag, workspace, library.
fn filters_sql(s: &str, f: usize) -> String {
    format!(
        "(${f}::boolean OR a.published) \
         AND (${t}::text IS NULL OR a.asset_type = ${t}) \
         AND (${g}::text IS NULL OR a.tag_keys @> ARRAY[${g}::text]) \
         AND (${w}::text IS NULL OR a.workspace_id = ${w}) \
         AND (${l}::uuid IS NULL OR EXISTS (SELECT 1 FROM {s}.library_entries e \
             WHERE e.library_id = ${l} AND e.asset_id = a.id))",
        t = f + 1,
        g = f + 2,
        w = f + 3,
        l = f + 4,
    )
}

/// The statement of a word-level search ([`SearchQuery::is_word_level`]) of `clauses`
/// queries (`$1`..`$n`) and the excluded terms' query (`$n+1`, empty for none), then the
/// filters: each candidate's asset and download count, then for each clause whether its text
/// holds it, then whether its text holds an excluded term. No text is read.
fn word_level_sql(s: &str, clauses: usize) -> String {
    let mut ctes = Vec::with_capacity(2 * clauses + 2);
    for i in 1..=clauses {
        ctes.push(format!(
            "t{i} AS (SELECT DISTINCT asset_id FROM {s}.asset_text_words \
                 WHERE words @@ ${i}::text::tsquery), \
             c{i} AS (SELECT id FROM {s}.assets \
                 WHERE search_words @@ ${i}::text::tsquery OR search_words IS NULL \
                 UNION SELECT asset_id FROM t{i})"
        ));
    }
    let x = clauses + 1;
    ctes.push(format!(
        "xt AS (SELECT DISTINCT asset_id FROM {s}.asset_text_words \
             WHERE ${x} <> '' AND words @@ ${x}::text::tsquery), \
         xm AS (SELECT id FROM {s}.assets \
             WHERE ${x} <> '' AND search_words @@ ${x}::text::tsquery)"
    ));
    let matched: Vec<String> = (1..=clauses)
        .map(|i| format!("SELECT id FROM c{i}"))
        .collect();
    let in_text: Vec<String> = (1..=clauses)
        .map(|i| format!("a.id IN (SELECT asset_id FROM t{i})"))
        .collect();
    format!(
        "WITH {ctes} \
         SELECT {cols}, c.download_count, {in_text}, a.id IN (SELECT asset_id FROM xt) \
         FROM (({matched}) EXCEPT SELECT id FROM xm) m \
         JOIN {s}.assets a ON a.id = m.id \
         JOIN {s}.asset_counters c ON c.asset_id = a.id \
         WHERE {filters}",
        ctes = ctes.join(", "),
        cols = asset_cols("a."),
        in_text = in_text.join(", "),
        matched = matched.join(" INTERSECT "),
        filters = filters_sql(s, x + 1),
    )
}

/// The clauses' queries as the first parameters of a search statement.
fn query_params(queries: &[String]) -> Vec<&(dyn ToSql + Sync)> {
    queries.iter().map(|q| q as &(dyn ToSql + Sync)).collect()
}

/// The parameters of [`filters_sql`], in its order; `asset_type` is the request's, named.
fn filter_params<'a>(
    request: &'a SearchRequest,
    asset_type: &'a Option<&'static str>,
) -> [&'a (dyn ToSql + Sync); 5] {
    [
        &request.drafts,
        asset_type,
        &request.tag,
        &request.workspace_id,
        &request.library_id,
    ]
}

/// The folded words of `text`, each once, in chunks of at most [`WORDS_PER_CHUNK`].
fn text_word_chunks(text: &AssetText) -> Vec<Vec<String>> {
    let all: Vec<String> = text.words().into_iter().collect();
    all.chunks(WORDS_PER_CHUNK)
        .map(<[String]>::to_vec)
        .collect()
}

impl PgStore {
    /// Fills in the words of every asset row whose `search_words` is NULL (written by a build
    /// without the feature, or before migration 18), `batch` rows a transaction, calling
    /// `progress` with the rows done so far after each. Answers how many it filled in. Safe
    /// while serving: a row is a candidate of every search until it is done.
    ///
    /// # Errors
    /// A [`StoreError`] if the database fails.
    pub async fn reindex_search(
        &self,
        batch: u32,
        mut progress: impl FnMut(u64) + Send,
    ) -> Result<u64, StoreError> {
        let s = &self.schema.q;
        let pick = format!(
            "SELECT {} , 0::bigint FROM {s}.assets a WHERE a.search_words IS NULL LIMIT $1",
            asset_cols("a.")
        );
        let write = format!(
            "UPDATE {s}.assets SET search_words = array_to_tsvector($2::text[]) WHERE id = $1"
        );
        let mut done = 0u64;
        loop {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(Failure::from)?;
            let rows = tx
                .query(&pick, &[&i64::from(batch.max(1))])
                .await
                .map_err(Failure::from)?;
            if rows.is_empty() {
                return Ok(done);
            }
            let stmt = tx.prepare(&write).await.map_err(Failure::from)?;
            for row in &rows {
                let asset = asset_from_row(row, 0)?;
                let words = crate::asset_params::search_words(&asset).unwrap_or_default();
                tx.execute(&stmt, &[&asset.id, &words])
                    .await
                    .map_err(Failure::from)?;
            }
            tx.commit().await.map_err(Failure::from)?;
            done += rows.len() as u64;
            progress(done);
        }
    }

    /// Keeps `text` for asset `id` in one transaction; `false` when there is no such asset.
    async fn set_text(&self, id: Uuid, text: &AssetText) -> Result<bool, Failure> {
        let s = &self.schema.q;
        let chunks = text_word_chunks(text);
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // The asset row locked against a delete until the text is in.
        let found = tx
            .query_opt(
                &format!("SELECT 1 FROM {s}.assets WHERE id = $1 FOR KEY SHARE"),
                &[&id],
            )
            .await?;
        if found.is_none() {
            return Ok(false);
        }
        tx.execute(
            &format!(
                "INSERT INTO {s}.asset_texts (asset_id, paged, pages) VALUES ($1, $2, $3) \
                 ON CONFLICT (asset_id) DO UPDATE SET paged = $2, pages = $3"
            ),
            &[&id, &text.paged, &text.pages],
        )
        .await?;
        tx.execute(
            &format!("DELETE FROM {s}.asset_text_words WHERE asset_id = $1"),
            &[&id],
        )
        .await?;
        let insert = tx
            .prepare(&format!(
                "INSERT INTO {s}.asset_text_words (asset_id, chunk, words) \
                 VALUES ($1, $2, array_to_tsvector($3::text[]))"
            ))
            .await?;
        for (n, chunk) in chunks.iter().enumerate() {
            let n = i32::try_from(n).map_err(|_| Failure::invalid("text chunk", "too many"))?;
            tx.execute(&insert, &[&id, &n, chunk]).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// For a word-level query: the candidates of `request` passing its filters, each with
    /// what the text index says of its text. No text is read.
    async fn word_level_candidates(
        &self,
        request: &SearchRequest,
    ) -> Result<Vec<(Asset, TextMatches)>, Failure> {
        let queries = clause_queries(&request.query);
        if queries.is_empty() {
            return Ok(Vec::new());
        }
        let excluded: Vec<String> = request.query.excluded.iter().map(term_query).collect();
        let excluded = excluded.join(" | ");
        let sql = word_level_sql(&self.schema.q, queries.len());
        let asset_type = request.asset_type.map(|t| t.as_str());
        let mut params = query_params(&queries);
        params.push(&excluded);
        params.extend(filter_params(request, &asset_type));
        let client = self.client().await?;
        let rows = client.query(&sql, &params).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let asset = asset_from_row(row, 0)?;
            let first = row.len() - queries.len() - 1;
            let clauses = (first..first + queries.len())
                .map(|i| row.try_get::<_, bool>(i))
                .collect::<Result<Vec<bool>, _>>()?;
            let excluded = row.try_get(row.len() - 1)?;
            out.push((
                asset,
                TextMatches {
                    clauses,
                    excluded,
                    in_fields: true,
                },
            ));
        }
        Ok(out)
    }

    /// A word-level search: every candidate ranked from the index and its row, the texts
    /// of the page's hits alone read, for their pages.
    async fn search_by_index(
        &self,
        request: &SearchRequest,
    ) -> Result<Page<SearchFound>, StoreError> {
        let candidates = self.word_level_candidates(request).await?;
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
        for (score, asset) in page {
            let text = if paid.contains(&asset.id) {
                None
            } else {
                self.asset_text(asset.id).await?
            };
            items.push(found(&request.query, score, asset, text));
        }
        Ok(Page { items, total })
    }

    /// The candidates of `request` with their kept texts.
    async fn candidates(
        &self,
        request: &SearchRequest,
    ) -> Result<Vec<(Asset, Option<AssetText>)>, Failure> {
        let queries = clause_queries(&request.query);
        if queries.is_empty() {
            return Ok(Vec::new());
        }
        let sql = search_sql(&self.schema.q, queries.len());
        let asset_type = request.asset_type.map(|t| t.as_str());
        let mut params = query_params(&queries);
        params.extend(filter_params(request, &asset_type));
        let client = self.client().await?;
        let rows = client.query(&sql, &params).await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let asset = asset_from_row(row, 0)?;
            let at = row.len() - 2;
            let text = match row.try_get::<_, Option<bool>>(at)? {
                Some(paged) => Some(AssetText {
                    pages: row.try_get(at + 1)?,
                    paged,
                }),
                None => None,
            };
            out.push((asset, text));
        }
        Ok(out)
    }
}

#[async_trait]
impl SearchStore for PgStore {
    async fn set_asset_text(&self, id: Uuid, text: AssetText) -> Result<bool, StoreError> {
        Ok(self.set_text(id, &text).await?)
    }

    async fn asset_text(&self, id: Uuid) -> Result<Option<AssetText>, StoreError> {
        let s = &self.schema.q;
        let client = self.client().await?;
        let row = client
            .query_opt(
                &format!("SELECT paged, pages FROM {s}.asset_texts WHERE asset_id = $1"),
                &[&id],
            )
            .await
            .map_err(Failure::from)?;
        Ok(match row {
            Some(row) => Some(AssetText {
                paged: row.try_get(0).map_err(Failure::from)?,
                pages: row.try_get(1).map_err(Failure::from)?,
            }),
            None => None,
        })
    }

    async fn reindex_words(&self) -> Result<u64, StoreError> {
        self.reindex_search(REINDEX_BATCH, |_| {}).await
    }

    async fn search(&self, request: &SearchRequest) -> Result<Page<SearchFound>, StoreError> {
        if request.query.is_word_level() {
            return self.search_by_index(request).await;
        }
        let candidates = self.candidates(request).await?;
        let with_text = candidates
            .iter()
            .filter(|(_, t)| t.is_some())
            .map(|(a, _)| a);
        let paid = paid_files(self, request, with_text).await?;
        Ok(rank_read(request, candidates, &paid))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use assetlib_core::search::parse_query;

    #[test]
    fn each_clause_is_one_tsquery_of_its_terms() {
        let q = parse_query(r#"annual "cash flow" report OR summ"#).expect("query");
        assert_eq!(
            clause_queries(&q),
            ["'annual'", "('cash' & 'flow')", "'report' | 'summ':*"]
        );
        assert_eq!(lexeme("it's"), "'it''s'");
    }

    #[test]
    fn a_text_of_many_words_is_kept_in_chunks() {
        let page: String = (0..WORDS_PER_CHUNK + 5).map(|i| format!("w{i} ")).collect();
        let text = AssetText {
            pages: vec![page, "w1 w2".into()],
            paged: true,
        };
        let chunks = text_word_chunks(&text);
        assert_eq!(
            chunks.iter().map(Vec::len).collect::<Vec<_>>(),
            [WORDS_PER_CHUNK, 5]
        );
    }
}
