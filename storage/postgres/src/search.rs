//! [`SearchStore`] of the [`PgStore`] (feature `search`): PostgreSQL's full-text index over
//! the words every store folds alike.
//!
//! The words are [`assetlib_core::search::words`], folded in Rust, kept as tsvectors of bare
//! lexemes (no parser or dictionary of the database in between) under GIN indexes
//! (migrations 18 to 20):
//! - `assets.search_words`: the words of the title, tags and description, each at a position
//!   and weight naming its fields (title `1A`, tags `2B`, description `3C`:
//!   [`crate::asset_params::field_vector`]), written with the row by every insert and update, so in the same
//!   transaction as the record;
//! - `asset_texts`: the text inside the file, one array item per page, and
//!   `asset_text_words`: its words in chunks (a tsvector holds at most 1 MB), each chunk with
//!   a copy of its asset's created time and filter fields (migration 20, kept by a trigger
//!   in the transaction of every write of them). Both are written in one transaction by
//!   [`SearchStore::set_asset_text`] and go with the asset (`ON DELETE CASCADE`).
//!
//! Each clause of a query is a `tsquery` (a word `'w'`, a prefix `'w':*`, a phrase all its
//! words joined by `&`, alternatives by `|`). A word-level query
//! ([`SearchQuery::is_word_level`]) is answered in one statement: the clauses' candidates
//! through GIN, intersected and filtered, each scored by the rules every store shares (per
//! clause the best field's weight, by the weighted `tsquery`s `'w':A`, `'w':B`, `'w':C`, else
//! 1 when its text holds it: [`IndexMatch::score`]), counted, ordered and cut to the page in
//! SQL; only the page's rows and texts reach Rust. Other queries (phrases) send the
//! candidates with their texts to Rust and rank them there ([`rank_read`]), as does every
//! query while a row's `search_words` is NULL (written by a build without the feature, or
//! before migration 19): such a row is a candidate of every search until
//! [`PgStore::reindex_search`] fills it in. So PostgreSQL finds exactly what sled and the
//! memory store find.
//!
//! [`IndexMatch::score`]: assetlib_core::store::IndexMatch::score

use assetlib_core::search::{Language, SearchQuery, Term};
use assetlib_core::store::{AssetText, SearchFound, SearchRequest, SearchStore, found, rank_read};
use assetlib_core::{Asset, Page, StoreError, async_trait};
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::PgStore;
use crate::asset_params::{FIELDS, lexeme};
use crate::assets::{asset_cols, asset_from_row};
use crate::error::Failure;

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

/// The `tsquery` of a word-level clause restricted to one field's weight: `'w':A`,
/// `'w':*A`.
fn weighted_clause(clause: &[Term], weight: char) -> String {
    let terms: Vec<String> = clause
        .iter()
        .map(|term| match term {
            Term::Prefix(w) => format!("{}:*{weight}", lexeme(w)),
            other => format!("{}:{weight}", term_query(other)),
        })
        .collect();
    terms.join(" | ")
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

/// The filters of a search statement on the row `r` (an asset, or a text's words with the
/// copy of its asset's fields, migration 20) of the asset `r.{id}`, from parameter `$f` on
/// (as [`SearchStore::search`] binds them): drafts, type, tag, workspace, library.
fn filters_on(s: &str, f: usize, r: &str, id: &str) -> String {
    format!(
        "(${f}::boolean OR {r}.published) \
         AND (${t}::text IS NULL OR {r}.asset_type = ${t}) \
         AND (${g}::text IS NULL OR {r}.tag_keys @> ARRAY[${g}::text]) \
         AND (${w}::text IS NULL OR {r}.workspace_id = ${w}) \
         AND (${l}::uuid IS NULL OR EXISTS (SELECT 1 FROM {s}.library_entries e \
             WHERE e.library_id = ${l} AND e.asset_id = {r}.{id}))",
        t = f + 1,
        g = f + 2,
        w = f + 3,
        l = f + 4,
    )
}

/// The filters of a search statement on the asset row `a`.
fn filters_sql(s: &str, f: usize) -> String {
    filters_on(s, f, "a", "id")
}

/// The statement of a word-level search ([`SearchQuery::is_word_level`]) of `n` clauses: `$1`..
/// `$4n` each clause's `tsquery` then its title, tags and description ones
/// ([`weighted_clause`]), `$4n+1` the excluded terms' (empty for none), `$4n+2` whether paid
/// text counts, `$4n+3`.. the filters ([`filters_on`]), then the limit and offset. Each row:
/// a hit's id, its score, whether its file is paid (its text not counted), and the number of
/// hits; best first, newest first, then by id descending.
///
/// Each clause's candidates (`m{i}`) are the assets whose title, tags or description hold it
/// (through `assets.search_words`, weighed there) and those whose text does (through
/// `asset_text_words`, filtered and dated by the copy of the asset's fields kept beside the
/// words), so a word of many texts never joins its hits with the asset rows.
/// [`PgStore::search_by_index`] turns sequential scans and nested loops off for the statement
/// (the GIN indexes answer each clause without reading a text's words, where a scan would take
/// every text's words out of TOAST; the planner cannot tell how many candidates a clause has,
/// and a nested loop over a tenth of a million of them is what it would guess) and gives it
/// the memory to count and order its hits without spilling to disk.
fn word_level_sql(s: &str, n: usize) -> String {
    let q = |i: usize, k: usize| 4 * (i - 1) + 1 + k;
    let x = 4 * n + 1;
    let p = x + 1;
    let f = x + 2;
    let limit = f + 5;
    let mut ctes = Vec::with_capacity(n + 3);
    for i in 1..=n {
        // One row per candidate (a text's words may fill several rows): `fs` the weight of
        // the best field holding the clause, if any; `t` whether its text does.
        ctes.push(format!(
            "m{i} AS (SELECT id, max(created_at) AS created_at, bool_or(is_public) AS is_public, \
                 max(fs) AS fs, bool_or(t) AS t \
               FROM (SELECT a.id, a.created_at, a.is_public, \
                         CASE WHEN a.search_words @@ ${qa}::text::tsquery THEN 8 \
                              WHEN a.search_words @@ ${qb}::text::tsquery THEN 4 \
                              WHEN a.search_words @@ ${qc}::text::tsquery THEN 2 END AS fs, \
                         false AS t \
                     FROM {s}.assets a WHERE a.search_words @@ ${q}::text::tsquery AND {fa} \
                     UNION ALL SELECT w.asset_id, w.created_at, w.is_public, NULL, true \
                     FROM {s}.asset_text_words w \
                     WHERE w.words @@ ${q}::text::tsquery AND {fw}) u \
               GROUP BY id)",
            q = q(i, 0),
            qa = q(i, 1),
            qb = q(i, 2),
            qc = q(i, 3),
            fa = filters_on(s, f, "a", "id"),
            fw = filters_on(s, f, "w", "asset_id"),
        ));
    }
    ctes.push(format!(
        "xf AS (SELECT id FROM {s}.assets \
             WHERE ${x} <> '' AND search_words @@ ${x}::text::tsquery)"
    ));
    ctes.push(format!(
        "xt AS (SELECT DISTINCT asset_id FROM {s}.asset_text_words \
             WHERE ${x} <> '' AND words @@ ${x}::text::tsquery)"
    ));
    let clauses: Vec<String> = (1..=n)
        .map(|i| format!("m{i}.fs AS fs{i}, m{i}.t AS t{i}"))
        .collect();
    let joins: Vec<String> = (2..=n)
        .map(|i| format!("JOIN m{i} ON m{i}.id = m1.id"))
        .collect();
    ctes.push(format!(
        "c AS (SELECT m1.id, m1.created_at, {clauses}, \
                 (NOT ${p}::boolean AND NOT m1.is_public \
                  AND EXISTS (SELECT 1 FROM {s}.library_entries e \
                      JOIN {s}.libraries l ON l.id = e.library_id \
                      WHERE e.asset_id = m1.id AND l.published AND l.is_paid) \
                  AND NOT EXISTS (SELECT 1 FROM {s}.library_entries e \
                      JOIN {s}.libraries l ON l.id = e.library_id \
                      WHERE e.asset_id = m1.id AND l.published AND NOT l.is_paid)) AS paid \
               FROM m1 {joins} \
               WHERE m1.id NOT IN (SELECT id FROM xf))",
        clauses = clauses.join(", "),
        joins = joins.join(" "),
    ));
    let scores: Vec<String> = (1..=n)
        .map(|i| format!("coalesce(c.fs{i}, CASE WHEN NOT c.paid AND c.t{i} THEN 1 END)"))
        .collect();
    format!(
        "WITH {ctes}, \
         r AS (SELECT c.id, c.created_at, c.paid, {scores} AS score FROM c \
               WHERE NOT (NOT c.paid AND c.id IN (SELECT asset_id FROM xt))) \
         SELECT id, score, paid, count(*) OVER () FROM r WHERE score IS NOT NULL \
         ORDER BY score DESC, created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}",
        ctes = ctes.join(", "),
        scores = scores.join(" + "),
        offset = limit + 1,
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

impl PgStore {
    /// Whether a row's `search_words` is NULL: written by a build without the feature, or
    /// before migration 19 (the partial index `assets_search_unindexed_idx` answers).
    async fn has_unindexed(&self) -> Result<bool, Failure> {
        let s = &self.schema.q;
        let client = self.client().await?;
        let row = client
            .query_one(
                &format!("SELECT EXISTS (SELECT 1 FROM {s}.assets WHERE search_words IS NULL)"),
                &[],
            )
            .await?;
        Ok(row.try_get(0)?)
    }

    /// A word-level search answered in one statement ([`word_level_sql`]); then the page's
    /// rows and (unless paid) texts are read, for the answer and its snippets.
    async fn search_by_index(&self, request: &SearchRequest) -> Result<Page<SearchFound>, Failure> {
        let query = &request.query;
        let mut queries: Vec<String> = Vec::with_capacity(4 * query.clauses.len());
        for (clause, any) in query.clauses.iter().zip(clause_queries(query)) {
            queries.push(any);
            for (_, _, weight) in FIELDS {
                queries.push(weighted_clause(clause, weight));
            }
        }
        let excluded: Vec<String> = query.excluded.iter().map(term_query).collect();
        let excluded = excluded.join(" | ");
        let asset_type = request.asset_type.map(|t| t.as_str());
        let limit = i64::from(request.limit);
        let offset = i64::try_from(request.offset).unwrap_or(i64::MAX);
        let mut params = query_params(&queries);
        params.push(&excluded);
        params.push(&request.paid_content);
        params.extend(filter_params(request, &asset_type));
        params.push(&limit);
        params.push(&offset);
        let sql = word_level_sql(&self.schema.q, query.clauses.len());
        let mut client = self.client().await?;
        let rows = {
            // The plan [`word_level_sql`] needs: no sequential scan (it would take every
            // text's words out of TOAST to test them, where the GIN index names the rows
            // without reading them: at a tenth of a million texts, 0.35 s against 34 ms; the
            // planner does not price the TOAST reads), no nested loop over candidates it
            // cannot count, and room to count and order them without spilling to disk.
            let tx = client.build_transaction().read_only(true).start().await?;
            tx.batch_execute(
                "SET LOCAL enable_seqscan = off; SET LOCAL enable_nestloop = off; \
                 SET LOCAL work_mem = '32MB'",
            )
            .await?;
            let rows = tx.query(&sql, &params).await?;
            tx.commit().await?;
            rows
        };
        let mut total = 0u64;
        let mut page = Vec::with_capacity(rows.len());
        for row in &rows {
            let id: Uuid = row.try_get(0)?;
            let score: i32 = row.try_get(1)?;
            let paid: bool = row.try_get(2)?;
            total = u64::try_from(row.try_get::<_, i64>(3)?).unwrap_or(0);
            page.push((id, u32::try_from(score).unwrap_or(0), paid));
        }
        if page.is_empty() && request.offset > 0 {
            // Past the last page: the count comes from page 1.
            let first = SearchRequest {
                offset: 0,
                limit: 1,
                ..request.clone()
            };
            total = Box::pin(self.search_by_index(&first)).await?.total;
        }
        let ids: Vec<Uuid> = page.iter().map(|(id, _, _)| *id).collect();
        let s = &self.schema.q;
        let assets = client
            .query(
                &format!(
                    "SELECT {}, c.download_count FROM {s}.assets a \
                     JOIN {s}.asset_counters c ON c.asset_id = a.id WHERE a.id = ANY($1)",
                    asset_cols("a.")
                ),
                &[&ids],
            )
            .await?;
        let mut assets: std::collections::HashMap<Uuid, Asset> = assets
            .iter()
            .map(|row| asset_from_row(row, 0).map(|a| (a.id, a)))
            .collect::<Result<_, _>>()?;
        let shown: Vec<Uuid> = page
            .iter()
            .filter(|(_, _, paid)| !paid)
            .map(|(id, _, _)| *id)
            .collect();
        let texts = client
            .query(
                &format!(
                    "SELECT asset_id, paged, pages FROM {s}.asset_texts \
                     WHERE asset_id = ANY($1)"
                ),
                &[&shown],
            )
            .await?;
        let mut texts: std::collections::HashMap<Uuid, AssetText> = texts
            .iter()
            .map(|row| {
                Ok((
                    row.try_get(0)?,
                    AssetText {
                        paged: row.try_get(1)?,
                        pages: row.try_get(2)?,
                    },
                ))
            })
            .collect::<Result<_, Failure>>()?;
        let items = page
            .into_iter()
            .filter_map(|(id, score, _)| {
                let asset = assets.remove(&id)?;
                Some(found(query, score, asset, texts.remove(&id)))
            })
            .collect();
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

    fn language(&self) -> Option<Language> {
        self.words.language
    }

    async fn reindex_words(&self) -> Result<u64, StoreError> {
        self.reindex_search(crate::search_index::REINDEX_BATCH, |_| {})
            .await
    }

    async fn search(&self, request: &SearchRequest) -> Result<Page<SearchFound>, StoreError> {
        if request.query.is_word_level() && !self.has_unindexed().await? {
            return Ok(self.search_by_index(request).await?);
        }
        let candidates = self.candidates(request).await?;
        rank_read(self, request, candidates).await
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
}
