//! Lists: the asset list ([`PgStore::list_assets_impl`], by the indexes of the assets or of
//! a tag's rows, with its total from the count rows or a count of the matches) and the tag
//! list ([`PgStore::list_tags_impl`]).

use assetlib_core::store::rules::fold_case;
use assetlib_core::{Asset, AssetQuery, AssetSort, AssetStatus, Page, SortOrder, TagCount};
use tokio_postgres::types::ToSql;

use crate::asset_params::workspace_key;
use crate::assets::{asset_cols, asset_from_row};
use crate::error::Failure;
use crate::store::{PgStore, like_escape, to_u64};

/// The condition on `published` of the rows (of `src`: `a` for assets, `t` for tag rows) a
/// list of `status` shows: the predicate of the partial indexes it reads, or none.
fn status_filter(status: AssetStatus, src: &str) -> String {
    match status {
        AssetStatus::Published => format!("{src}.published"),
        AssetStatus::Draft => format!("NOT {src}.published"),
        AssetStatus::Any => "true".to_owned(),
    }
}

/// A list statement's parameters: `$1` the page size, `$2` the offset, then the filters'.
struct Params(Vec<Box<dyn ToSql + Sync + Send>>);

impl Params {
    /// Adds `value` and names it (`$n`).
    fn add(&mut self, value: impl ToSql + Sync + Send + 'static) -> String {
        self.0.push(Box::new(value));
        format!("${}", self.0.len())
    }
}

impl PgStore {
    /// `list_assets`: one statement.
    ///
    /// A list of tags reads the rows of its first list key (its workspace's, else the first
    /// tag's) in `asset_tags` (`t`, with copies of what lists filter and sort by), joined to
    /// their assets: a page comes from the key's `(tag_key, published, <sort key>, asset_id)`
    /// index in order. Other lists read the assets (`a`) through their indexes, a
    /// workspace's through its own (`assets_workspace_*_idx`), with its total from its
    /// key's count rows. The other tags, `any_tags`, the checksum and the search are checked
    /// on the assets read.
    pub(crate) async fn list_assets_impl(&self, q: &AssetQuery) -> Result<Page<Asset>, Failure> {
        let s = &self.schema.q;
        let mut params = Params(vec![
            Box::new(i64::from(q.per_page)),
            Box::new(i64::try_from(q.offset()).unwrap_or(i64::MAX)),
        ]);
        // The filters besides the status, each ANDed on.
        let mut filter = String::new();
        // The lists every match is in: its workspace's (the first read when given), then its
        // tags'.
        let required: Vec<String> = q
            .workspace_id
            .as_deref()
            .map(workspace_key)
            .into_iter()
            .chain(q.tags.iter().cloned())
            .collect();
        // A workspace's list without tags reads its assets through their own indexes; a list
        // of tags (in a workspace or not) the rows of its first key. Either counts by the
        // first key's count rows.
        let (from, src, tag) = match (q.workspace_id.as_deref(), required.first()) {
            (Some(workspace), Some(_)) if q.tags.is_empty() => {
                let ws = params.add(workspace.to_owned());
                filter.push_str(&format!(" AND a.workspace_id = {ws}"));
                (format!("{s}.assets a"), "a", None)
            }
            (_, Some(first)) => {
                let tag = params.add(first.clone());
                filter.push_str(&format!(" AND t.tag_key = {tag}"));
                (
                    format!("{s}.asset_tags t JOIN {s}.assets a ON a.id = t.asset_id"),
                    "t",
                    Some(tag),
                )
            }
            (_, None) => (format!("{s}.assets a"), "a", None),
        };
        if required.len() > 1 {
            let all = params.add(required.clone());
            filter.push_str(&format!(" AND a.tag_keys @> {all}::text[]"));
        }
        if !q.any_tags.is_empty() {
            let any = params.add(q.any_tags.clone());
            filter.push_str(&format!(" AND a.tag_keys && {any}::text[]"));
        }
        if let Some(t) = q.asset_type {
            let t = params.add(t.as_str());
            filter.push_str(&format!(" AND {src}.asset_type = {t}"));
        }
        if let Some(c) = q.checksum {
            let c = params.add(c.to_vec());
            filter.push_str(&format!(" AND a.checksum_sha256 = {c}"));
        }
        if let Some(needle) = q.search.as_deref() {
            let n = params.add(format!("%{}%", like_escape(&fold_case(needle))));
            filter.push_str(&format!(
                " AND (a.title_lower LIKE {n} OR a.description_lower LIKE {n})"
            ));
        }
        let key = match q.sort {
            AssetSort::CreatedAt => "created_at",
            AssetSort::UpdatedAt => "updated_at",
            AssetSort::Title => "title_lower",
        };
        let dir = match q.order {
            SortOrder::Asc => "ASC",
            SortOrder::Desc => "DESC",
        };
        // The matching assets as one SELECT of `select` (or two, a published and a draft leg,
        // for a search or tags of both: each leg reads its own partial trigram indexes, or
        // its own range of the tag's index, in order).
        let split = q.status == AssetStatus::Any && (q.search.is_some() || tag.is_some());
        let matching = |select: &str| {
            if split {
                format!(
                    "SELECT {select} FROM {from} WHERE {src}.published{filter} \
                     UNION ALL \
                     SELECT {select} FROM {from} WHERE NOT {src}.published{filter}"
                )
            } else {
                format!(
                    "SELECT {select} FROM {from} WHERE {}{filter}",
                    status_filter(q.status, src)
                )
            }
        };
        let select = format!("{}, {src}.{key} AS sort_key", asset_cols("a."));
        let rows = if split && tag.is_some() {
            // Each kind's leg reads its range of the tag's index in order, up to the end of
            // the page (PostgreSQL does not carry the order of the page into a leg that is a
            // join): the page is then sorted from at most twice its end.
            let end = params.add(
                i64::try_from(q.offset().saturating_add(u64::from(q.per_page))).unwrap_or(i64::MAX),
            );
            let leg = |kind: &str| {
                format!(
                    "(SELECT {select} FROM {from} WHERE {kind}t.published{filter} \
                     ORDER BY t.{key} {dir}, t.asset_id {dir} LIMIT {end})"
                )
            };
            format!("{} UNION ALL {}", leg(""), leg("NOT "))
        } else {
            matching(&select)
        };
        let out = asset_cols("p.");
        // With a filter no count row knows (a search, a second tag, any tags, a checksum), the
        // total is a count of the matches. Else it is the sum of the (at most 16 per kind)
        // count rows the triggers keep: of the one tag, or of the type or all.
        let counted = q.search.is_some()
            || required.len() > 1
            || !q.any_tags.is_empty()
            || q.checksum.is_some();
        let count = if counted {
            format!("SELECT count(*) AS n FROM ({}) x", matching("a.id"))
        } else if let Some(first) = required.first() {
            let tag = tag.clone().unwrap_or_else(|| params.add(first.clone()));
            let scope = params.add(q.asset_type.map_or("", |t| t.as_str()));
            let kind = match q.status {
                AssetStatus::Published => " AND published",
                AssetStatus::Draft => " AND NOT published",
                AssetStatus::Any => "",
            };
            format!(
                "SELECT coalesce((SELECT sum(n) FROM {s}.tag_counts \
                     WHERE tag_key = {tag} AND asset_type = {scope}{kind}), 0)::bigint AS n"
            )
        } else {
            let scope = params.add(q.asset_type.map_or("", |t| t.as_str()));
            let sum = |table: &str| {
                format!("coalesce((SELECT sum(n) FROM {s}.{table} WHERE scope = {scope}), 0)")
            };
            let n = match q.status {
                AssetStatus::Published => sum("asset_counts"),
                AssetStatus::Draft => sum("asset_draft_counts"),
                AssetStatus::Any => {
                    format!("{} + {}", sum("asset_counts"), sum("asset_draft_counts"))
                }
            };
            format!("SELECT ({n})::bigint AS n")
        };
        let sql = format!(
            "WITH m AS ({count}) \
             SELECT m.n, {out}, c.download_count \
             FROM m LEFT JOIN LATERAL ( \
                 SELECT r.* FROM ({rows}) r \
                 ORDER BY r.sort_key {dir}, r.id {dir} LIMIT $1 OFFSET $2 \
             ) p ON true \
             LEFT JOIN {s}.asset_counters c ON c.asset_id = p.id \
             ORDER BY p.sort_key {dir}, p.id {dir}"
        );
        self.query_page(&sql, &params.0, "asset count", |row| asset_from_row(row, 1))
            .await
    }

    /// `list_tags`: the sums of the tags' published count rows over every type, most first,
    /// then by key in byte order (workspaces' keys left out).
    pub(crate) async fn list_tags_impl(&self, limit: u32) -> Result<Vec<TagCount>, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "SELECT tag_key, sum(n)::bigint AS n FROM {s}.tag_counts \
             WHERE published AND asset_type = '' AND tag_key NOT LIKE E'\\x01%' \
             GROUP BY tag_key HAVING sum(n) > 0 \
             ORDER BY n DESC, tag_key COLLATE \"C\" LIMIT $1"
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query(&stmt, &[&i64::from(limit)])
            .await?
            .iter()
            .map(|row| {
                Ok(TagCount {
                    tag: row.try_get(0)?,
                    count: to_u64("tag count", row.try_get(1)?)?,
                })
            })
            .collect()
    }
}
