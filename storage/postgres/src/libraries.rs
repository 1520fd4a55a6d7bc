//! Libraries: lists, loads, atomic replaces, deletes, views.

use assetlib_core::events::{Log, Written};
use assetlib_core::{
    AssetType, EntryAsset, EntryRow, Holders, Library, LibraryEntry, LibraryQuery, LibraryRows,
    LibrarySettings, LibraryStore, LibrarySummary, LibraryWrite, Page, PutOutcome, Section,
    SlugHolder, StoreError, ViewCount, async_trait,
};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::error::Failure;
use crate::events::one_event;
use crate::slug_holders::LibraryWritten;
use crate::store::{PgStore, to_u32, to_u64};

/// The columns [`library_cols`] names, in order.
const LIBRARY_COLUMNS: [&str; 18] = [
    "id",
    "title",
    "slug",
    "description",
    "workspace_id",
    "cover_image_path",
    "cover_overlay_color",
    "cover_overlay_opacity",
    "show_asset_count",
    "allow_individual_downloads",
    "allow_bulk_download",
    "is_paid",
    "price",
    "currency",
    "published",
    "published_at",
    "created_at",
    "updated_at",
];

/// The library columns every read returns, in the order [`library_from_row`] decodes them,
/// each prefixed with `p`.
pub(crate) fn library_cols(p: &str) -> String {
    crate::store::columns(p, &LIBRARY_COLUMNS)
}

/// How many columns [`library_cols`] names.
const LIBRARY_COLS: usize = LIBRARY_COLUMNS.len();

/// Decodes the columns of [`library_cols`] starting at `at`, then the view count.
pub(crate) fn library_from_row(row: &Row, at: usize) -> Result<Library, Failure> {
    let views: Option<i64> = row.try_get(at + LIBRARY_COLS)?;
    Ok(Library {
        id: row.try_get(at)?,
        settings: LibrarySettings {
            title: row.try_get(at + 1)?,
            description: row.try_get(at + 3)?,
            workspace_id: row.try_get(at + 4)?,
            cover_image_path: row.try_get(at + 5)?,
            cover_overlay_color: row.try_get(at + 6)?,
            cover_overlay_opacity: row.try_get(at + 7)?,
            show_asset_count: row.try_get(at + 8)?,
            allow_individual_downloads: row.try_get(at + 9)?,
            allow_bulk_download: row.try_get(at + 10)?,
            is_paid: row.try_get(at + 11)?,
            price: row.try_get(at + 12)?,
            currency: row.try_get(at + 13)?,
            published: row.try_get(at + 14)?,
        },
        slug: row.try_get(at + 2)?,
        published_at: row.try_get(at + 15)?,
        created_at: row.try_get(at + 16)?,
        updated_at: row.try_get(at + 17)?,
        view_count: to_u64("view count", views.unwrap_or(0))?,
    })
}

/// An aggregated array column: `NULL` (no rows) is empty; its length must be `len`.
fn array<T>(row: &Row, i: usize, len: Option<usize>, what: &'static str) -> Result<Vec<T>, Failure>
where
    T: for<'a> tokio_postgres::types::FromSql<'a>,
{
    let v: Vec<T> = row.try_get::<_, Option<Vec<T>>>(i)?.unwrap_or_default();
    match len {
        Some(n) if n != v.len() => Err(Failure::invalid(what, "arrays of different lengths")),
        _ => Ok(v),
    }
}

impl PgStore {
    pub(crate) async fn list_libraries_impl(
        &self,
        q: &LibraryQuery,
    ) -> Result<Page<LibrarySummary>, Failure> {
        let s = &self.schema.q;
        let mut params: Vec<Box<dyn ToSql + Sync + Send>> = vec![
            Box::new(i64::from(q.limit)),
            Box::new(i64::try_from(q.offset()).unwrap_or(i64::MAX)),
        ];
        let mut filter = String::from("l.published");
        if let Some(w) = &q.workspace_id {
            params.push(Box::new(w.clone()));
            filter.push_str(" AND l.workspace_id = $3");
        }
        let sql = format!(
            "WITH m AS (SELECT count(*) AS n FROM {s}.libraries l WHERE {filter}) \
             SELECT m.n, {out}, c.view_count, \
                 (SELECT count(*) FROM {s}.library_entries e \
                  WHERE e.library_id = p.id AND e.a_published) \
             FROM m LEFT JOIN LATERAL ( \
                 SELECT {cols} FROM {s}.libraries l WHERE {filter} \
                 ORDER BY l.published_at DESC, l.id DESC LIMIT $1 OFFSET $2 \
             ) p ON true \
             LEFT JOIN {s}.library_counters c ON c.library_id = p.id \
             ORDER BY p.published_at DESC, p.id DESC",
            out = library_cols("p."),
            cols = library_cols("l."),
        );
        self.query_page(&sql, &params, "library count", |row| {
            Ok(LibrarySummary {
                library: library_from_row(row, 1)?,
                asset_count: to_u64("asset count", row.try_get(2 + LIBRARY_COLS)?)?,
            })
        })
        .await
    }

    pub(crate) async fn load_library_impl(&self, id: Uuid) -> Result<Option<LibraryRows>, Failure> {
        let s = &self.schema.q;
        // One statement, so one snapshot: the sections and the entries (with the copies of
        // their assets' fields that each entry keeps) come as arrays, each aggregate fed the
        // same rows in page order. No asset is read: a load costs its entries and sections,
        // read by their primary keys' library prefix, whatever the number of assets.
        let sql = format!(
            "SELECT {cols}, c.view_count, \
                 x.ids, x.titles, x.descriptions, x.orders, x.collapsed, \
                 y.asset_ids, y.section_ids, y.orders, y.titles, y.descriptions, \
                 y.a_titles, y.a_descriptions, y.a_types, y.a_thumbnails, y.a_published, \
                 y.a_placeholders, y.a_durations, y.a_tags \
             FROM {s}.libraries l JOIN {s}.library_counters c ON c.library_id = l.id \
             CROSS JOIN LATERAL ( \
                 SELECT array_agg(id) AS ids, array_agg(title) AS titles, \
                     array_agg(description) AS descriptions, array_agg(display_order) AS orders, \
                     array_agg(collapsed_by_default) AS collapsed \
                 FROM (SELECT * FROM {s}.library_sections WHERE library_id = l.id \
                       ORDER BY display_order, id) sec \
             ) x \
             CROSS JOIN LATERAL ( \
                 SELECT array_agg(asset_id) AS asset_ids, array_agg(section_id) AS section_ids, \
                     array_agg(display_order) AS orders, array_agg(title) AS titles, \
                     array_agg(description) AS descriptions, array_agg(a_title) AS a_titles, \
                     array_agg(a_description) AS a_descriptions, array_agg(a_type) AS a_types, \
                     array_agg(a_thumbnail) AS a_thumbnails, array_agg(a_published) AS a_published, \
                     array_agg(a_placeholder) AS a_placeholders, \
                     array_agg(a_duration_ms) AS a_durations, \
                     json_agg(a_tags)::text AS a_tags \
                 FROM (SELECT e.asset_id, e.section_id, e.display_order, e.title, e.description, \
                           e.a_title, e.a_description, e.a_type, e.a_thumbnail, e.a_published, \
                           e.a_placeholder, e.a_duration_ms, e.a_tags \
                       FROM {s}.library_entries e \
                       LEFT JOIN {s}.library_sections sec \
                           ON sec.library_id = e.library_id AND sec.id = e.section_id \
                       WHERE e.library_id = l.id \
                       ORDER BY sec.display_order NULLS LAST, e.display_order) ent \
             ) y \
             WHERE l.id = $1",
            cols = library_cols("l."),
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let Some(row) = client.query_opt(&stmt, &[&id]).await? else {
            return Ok(None);
        };
        let library = library_from_row(&row, 0)?;
        let at = LIBRARY_COLS + 1;
        let ids: Vec<Uuid> = array(&row, at, None, "sections")?;
        let n = Some(ids.len());
        let titles: Vec<String> = array(&row, at + 1, n, "sections")?;
        let descriptions: Vec<Option<String>> = array(&row, at + 2, n, "sections")?;
        let orders: Vec<i64> = array(&row, at + 3, n, "sections")?;
        let collapsed: Vec<bool> = array(&row, at + 4, n, "sections")?;
        let mut sections = Vec::with_capacity(ids.len());
        for (i, id) in ids.into_iter().enumerate() {
            sections.push(Section {
                id,
                title: titles[i].clone(),
                description: descriptions[i].clone(),
                display_order: to_u32("section order", orders[i])?,
                collapsed_by_default: collapsed[i],
            });
        }
        let at = at + 5;
        let asset_ids: Vec<Uuid> = array(&row, at, None, "entries")?;
        let n = Some(asset_ids.len());
        let section_ids: Vec<Option<Uuid>> = array(&row, at + 1, n, "entries")?;
        let orders: Vec<i64> = array(&row, at + 2, n, "entries")?;
        let titles: Vec<Option<String>> = array(&row, at + 3, n, "entries")?;
        let descriptions: Vec<Option<String>> = array(&row, at + 4, n, "entries")?;
        let a_titles: Vec<String> = array(&row, at + 5, n, "entries")?;
        let a_descriptions: Vec<Option<String>> = array(&row, at + 6, n, "entries")?;
        let a_types: Vec<String> = array(&row, at + 7, n, "entries")?;
        let a_thumbnails: Vec<Option<String>> = array(&row, at + 8, n, "entries")?;
        let a_published: Vec<bool> = array(&row, at + 9, n, "entries")?;
        let a_placeholders: Vec<Option<String>> = array(&row, at + 10, n, "entries")?;
        let a_durations: Vec<Option<i64>> = array(&row, at + 11, n, "entries")?;
        // Arrays of arrays of different lengths are no SQL array: the tags come as JSON.
        let a_tags: Vec<Vec<String>> = match row.try_get::<_, Option<String>>(at + 12)? {
            Some(json) => serde_json::from_str(&json)
                .map_err(|e| Failure::invalid("entry tags", e.to_string()))?,
            None => Vec::new(),
        };
        if a_tags.len() != asset_ids.len() {
            return Err(Failure::invalid("entries", "arrays of different lengths"));
        }
        let mut entries = Vec::with_capacity(asset_ids.len());
        for ((i, asset_id), tags) in asset_ids.into_iter().enumerate().zip(a_tags) {
            let asset_type = AssetType::parse(&a_types[i]).ok_or_else(|| {
                Failure::invalid("asset type", format!("unknown type {:?}", a_types[i]))
            })?;
            entries.push(EntryRow {
                entry: LibraryEntry {
                    asset_id,
                    section_id: section_ids[i],
                    display_order: to_u32("entry order", orders[i])?,
                    title: titles[i].clone(),
                    description: descriptions[i].clone(),
                },
                asset: EntryAsset {
                    title: a_titles[i].clone(),
                    description: a_descriptions[i].clone(),
                    asset_type,
                    thumbnail_path: a_thumbnails[i].clone(),
                    thumbnail_placeholder: a_placeholders[i].clone(),
                    duration_ms: a_durations[i].map(|v| to_u64("duration", v)).transpose()?,
                    published: a_published[i],
                    tags,
                },
            });
        }
        Ok(Some(LibraryRows {
            library,
            sections,
            entries,
        }))
    }

    pub(crate) async fn delete_library_impl(&self, id: Uuid, log: &Log) -> Result<bool, Failure> {
        let s = &self.schema.q;
        // Sections, entries, counters and passes go with it (ON DELETE CASCADE); its event in
        // the same statement.
        let event = one_event(log, Written::LibraryDeleted(id))?;
        let sql = format!(
            "WITH d AS (DELETE FROM {s}.libraries WHERE id = $1 RETURNING id) {}",
            crate::events::log_rows_sql(s, &event, "d", crate::events::At::from(2))
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let params = crate::events::then_logged([&id], &event);
        Ok(client.execute(&stmt, &params).await? > 0)
    }

    /// A view of a library this process does not know (or may not answer from memory): its
    /// stored count and content version read, the view counted in memory.
    pub(crate) async fn record_library_view_impl(
        &self,
        id: Uuid,
    ) -> Result<Option<ViewCount>, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "SELECT c.view_count, c.content_version, l.workspace_id \
             FROM {s}.library_counters c JOIN {s}.libraries l ON l.id = c.library_id \
             WHERE c.library_id = $1 AND c.published"
        );
        let _gate = self.counters.read().await;
        let mark = self.replica.mark();
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let Some(row) = client.query_opt(&stmt, &[&id]).await? else {
            self.replica.unknown_library(id);
            return Ok(None);
        };
        let stored = to_u64("view count", row.try_get(0)?)?;
        let db_version = to_u64("content version", row.try_get(1)?)?;
        let workspace: Option<&str> = row.try_get(2)?;
        Ok(Some(self.counters.view_read(
            id,
            &self.replica,
            (db_version, stored, mark),
            workspace,
        )))
    }
}

#[async_trait]
impl LibraryStore for PgStore {
    async fn list_libraries(
        &self,
        query: &LibraryQuery,
    ) -> Result<Page<LibrarySummary>, StoreError> {
        let _gate = self.counters.read().await;
        let mut page = self.list_libraries_impl(query).await?;
        for s in &mut page.items {
            s.library.view_count += self.counters.unwritten_views(s.library.id);
        }
        Ok(page)
    }

    async fn load_library(&self, id: Uuid) -> Result<Option<LibraryRows>, StoreError> {
        let _gate = self.counters.read().await;
        let mut rows = self.load_library_impl(id).await?;
        if let Some(rows) = &mut rows {
            rows.library.view_count += self.counters.unwritten_views(id);
        }
        Ok(rows)
    }

    async fn put_library(&self, write: LibraryWrite, log: &Log) -> Result<PutOutcome, StoreError> {
        let outcome = self.put_library_impl(&write, log).await;
        // A failed write may still have committed (a connection lost at the commit), with a
        // slug not known here.
        let slug = outcome.as_ref().ok().map(|(_, slug)| slug.as_str());
        self.replica
            .library_written(write.library.id, LibraryWritten::Put(slug));
        Ok(outcome?.0)
    }

    async fn libraries_by_slug(&self, slug: &str) -> Result<Vec<SlugHolder>, StoreError> {
        if let Some(holders) = self.replica.slug_holders(slug) {
            return Ok(holders);
        }
        let mark = self.replica.slug_mark();
        let holders = self.libraries_by_slug_impl(slug).await?;
        self.replica.learn_slug(slug, &holders, mark);
        Ok(holders)
    }

    async fn library_workspace(&self, id: Uuid) -> Result<Option<Option<String>>, StoreError> {
        self.library_workspace_impl(id).await
    }

    async fn delete_library(&self, id: Uuid, log: &Log) -> Result<bool, StoreError> {
        let deleted = self.delete_library_impl(id, log).await;
        // A failed delete may still have committed (a connection lost at the commit).
        self.replica.library_written(id, LibraryWritten::Deleted);
        if deleted.as_ref().is_ok_and(|d| *d) {
            self.counters.forget_library(id);
        }
        Ok(deleted?)
    }

    async fn record_library_view(&self, id: Uuid) -> Result<Option<ViewCount>, StoreError> {
        self.counting();
        if let Some(seen) = self.counters.view_known(id, &self.replica) {
            return Ok(Some(seen));
        }
        Ok(self.record_library_view_impl(id).await?)
    }

    async fn published_holders(&self, asset_ids: &[Uuid]) -> Result<Vec<Holders>, StoreError> {
        self.holders_of(asset_ids).await
    }
}
