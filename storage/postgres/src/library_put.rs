//! The library replace ([`PgStore::put_library_impl`]): one transaction that picks the
//! library's slug and writes the library with its sections and entries, run first without the
//! library write lock and again under it when it met another write over a slug.

use assetlib_core::events::{Log, Written};
use assetlib_core::store::rules::first_free_slug;
use assetlib_core::{LibraryWrite, PutOutcome, StoreError};
use deadpool_postgres::Transaction;
use tokio_postgres::Statement;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::document_sql::DocumentSql;
use crate::error::{Failure, slug_taken, unique_violation};
use crate::events::one_event;
use crate::lifecycle::lock_placed_assets;
use crate::store::{PgStore, to_i64};

/// The advisory lock (with a hash of the schema, the workspace and the family of the wanted
/// slug, [`crate::slugs::slug_family`], as second key) that serialises the library writes
/// that may pick the same slug, so that picking a free slug and taking it cannot race:
/// `"lib\0"` in ASCII. A write takes it only when it ran into another over a slug without it.
const LIBRARY_WRITE_LOCK: i32 = 0x6c69_6200;

/// How many times a library write that met others over a slug runs again under the lock
/// before it gives up ([`Failure::SlugContention`]).
const LOCKED_ATTEMPTS: usize = 8;

/// Whether `failure` is a library write's slug found taken on the unique index of slugs: a
/// write of another library took it between this write's check and its insert.
fn is_slug_conflict(failure: &Failure) -> bool {
    matches!(failure, Failure::Db(e) if unique_violation(e) == Some("libraries_slug_key"))
}

/// Runs `statement` with `params` in `tx` unless `nothing` is to be written: the rows it wrote.
async fn execute_unless(
    tx: &Transaction<'_>,
    nothing: bool,
    statement: &Statement,
    params: &[&(dyn ToSql + Sync)],
) -> Result<u64, tokio_postgres::Error> {
    if nothing {
        return Ok(0);
    }
    tx.execute(statement, params).await
}

impl PgStore {
    /// `put_library`, but for the replica's notice of it: the transaction without the lock,
    /// then under it while it meets other writes over a slug. With the outcome, the slug the
    /// library was written with.
    pub(crate) async fn put_library_impl(
        &self,
        write: &LibraryWrite,
        log: &Log,
    ) -> Result<(PutOutcome, String), StoreError> {
        // Most writes keep their library's slug, or take one no other write wants: they run
        // without the lock, and only a write that met another over a slug runs again with it
        // (where it can still meet a write running without it, at most once each).
        let mut outcome = self.put_library_tx(write, log, false).await;
        for _ in 0..LOCKED_ATTEMPTS {
            match &outcome {
                Err(failure) if is_slug_conflict(failure) => {
                    outcome = self.put_library_tx(write, log, true).await;
                }
                _ => break,
            }
        }
        match outcome {
            Ok(done_or_refused) => done_or_refused,
            Err(failure) if is_slug_conflict(&failure) => {
                Err(Failure::SlugContention(write.library.slug.clone()).into())
            }
            Err(failure) => Err(failure.into()),
        }
    }

    /// The transaction of `put_library`, answering the outcome and the slug written: `Ok(Err(_))`
    /// is a refusal (a taken slug, an entry of a missing asset), with the transaction rolled back.
    ///
    /// With `locked`, it takes the library write lock of its slug's family first, so that
    /// the slug it picks is free when it commits. Without, it picks one as the committed
    /// libraries leave it, and a write of another library that took the same slug meanwhile
    /// makes it fail on the unique index of slugs ([`is_slug_conflict`]), writing nothing.
    async fn put_library_tx(
        &self,
        write: &LibraryWrite,
        log: &Log,
        locked: bool,
    ) -> Result<Result<(PutOutcome, String), StoreError>, Failure> {
        let s = &self.schema.q;
        let lib = &write.library;
        // The log's events for either outcome; the upsert says which happened.
        let put = |created| {
            one_event(
                log,
                Written::LibraryPut {
                    id: lib.id,
                    created,
                },
            )
        };
        let (event, replaced) = (put(true)?, put(false)?);
        let views = to_i64("view count", lib.view_count)?;
        let first_published = lib
            .published_at
            .or(lib.settings.published.then_some(lib.updated_at));
        let sec_ids: Vec<Uuid> = write.sections.iter().map(|x| x.id).collect();
        let sec_titles: Vec<&str> = write.sections.iter().map(|x| x.title.as_str()).collect();
        let sec_descriptions: Vec<Option<&str>> = write
            .sections
            .iter()
            .map(|x| x.description.as_deref())
            .collect();
        let sec_orders: Vec<i64> = write
            .sections
            .iter()
            .map(|x| i64::from(x.display_order))
            .collect();
        let sec_collapsed: Vec<bool> = write
            .sections
            .iter()
            .map(|x| x.collapsed_by_default)
            .collect();
        let e_assets: Vec<Uuid> = write.entries.iter().map(|e| e.asset_id).collect();
        let e_sections: Vec<Option<Uuid>> = write.entries.iter().map(|e| e.section_id).collect();
        let e_orders: Vec<i64> = write
            .entries
            .iter()
            .map(|e| i64::from(e.display_order))
            .collect();
        let e_titles: Vec<Option<&str>> =
            write.entries.iter().map(|e| e.title.as_deref()).collect();
        let e_descriptions: Vec<Option<&str>> = write
            .entries
            .iter()
            .map(|e| e.description.as_deref())
            .collect();

        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        if locked {
            tx.execute(
                "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                &[
                    &LIBRARY_WRITE_LOCK,
                    &format!(
                        "{}/{}/{}",
                        self.schema.name,
                        lib.settings.workspace_id.as_deref().unwrap_or(""),
                        crate::slugs::slug_family(&lib.slug)
                    ),
                ],
            )
            .await?;
        }
        // The slugs other libraries of the workspace hold among `wanted` and `wanted-N`.
        let taken_sql = format!(
            "SELECT slug FROM {s}.libraries \
             WHERE coalesce(workspace_id, '') = coalesce($3, '') \
                 AND (slug = $1 OR (slug >= $1 || '-' AND slug < $1 || '.')) AND id <> $2"
        );
        let taken_stmt = tx.prepare_cached(&taken_sql).await?;
        // Pipelined with it: the placed assets, locked so that none is deleted before this
        // commits (see `crate::lifecycle` for the lock order).
        let (taken, refused) = tokio::try_join!(
            async {
                let workspace = &lib.settings.workspace_id;
                Ok(tx
                    .query(&taken_stmt, &[&lib.slug, &lib.id, workspace])
                    .await?)
            },
            lock_placed_assets(&tx, s, &e_assets, lib.settings.workspace_id.as_deref()),
        )?;
        if let Some(refused) = refused {
            // Dropping the transaction rolls it back.
            return Ok(Err(refused));
        }
        let taken: Vec<String> = taken
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?;
        let slug = if write.slug_given {
            if taken.contains(&lib.slug) {
                // Dropping the transaction rolls it back.
                return Ok(Err(slug_taken(&lib.slug)));
            }
            lib.slug.clone()
        } else {
            first_free_slug(&lib.slug, |s| taken.iter().any(|t| t == s))
        };

        let upsert_sql = format!(
            "WITH l AS ( \
                 INSERT INTO {s}.libraries AS old (id, title, slug, description, workspace_id, \
                     cover_image_path, cover_overlay_color, cover_overlay_opacity, \
                     show_asset_count, allow_individual_downloads, allow_bulk_download, \
                     is_paid, price, currency, published, published_at, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, \
                     $17, $18) \
                 ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title, slug = EXCLUDED.slug, \
                     description = EXCLUDED.description, workspace_id = EXCLUDED.workspace_id, \
                     cover_image_path = EXCLUDED.cover_image_path, \
                     cover_overlay_color = EXCLUDED.cover_overlay_color, \
                     cover_overlay_opacity = EXCLUDED.cover_overlay_opacity, \
                     show_asset_count = EXCLUDED.show_asset_count, \
                     allow_individual_downloads = EXCLUDED.allow_individual_downloads, \
                     allow_bulk_download = EXCLUDED.allow_bulk_download, \
                     is_paid = EXCLUDED.is_paid, price = EXCLUDED.price, \
                     currency = EXCLUDED.currency, published = EXCLUDED.published, \
                     published_at = coalesce(old.published_at, \
                         CASE WHEN EXCLUDED.published THEN EXCLUDED.updated_at END), \
                     updated_at = EXCLUDED.updated_at \
                 RETURNING id, (old.xmax = 0) AS created \
             ), logged AS ({log}), c AS ( \
                 INSERT INTO {s}.library_counters (library_id, view_count, content_version, \
                     published) \
                 VALUES ($1, $19, nextval('{s}.content_versions'), $15) \
                 ON CONFLICT (library_id) DO UPDATE \
                 SET content_version = EXCLUDED.content_version, published = EXCLUDED.published \
             ) \
             SELECT created FROM l",
            log = crate::events::log_rows_sql_as(
                s,
                &format!(
                    "CASE WHEN created THEN '{}' ELSE '{}' END",
                    event.kind(),
                    replaced.kind()
                ),
                event.resource_type(),
                "l",
                crate::events::At::from(20),
            ),
        );
        let sql = DocumentSql::new(s);
        let (upsert, clear, sections, entries) = tokio::try_join!(
            tx.prepare_cached(&upsert_sql),
            tx.prepare_cached(&sql.clear),
            tx.prepare_cached(&sql.sections),
            tx.prepare_cached(&sql.entries),
        )?;
        let upsert_params = crate::events::then_logged(
            [
                &lib.id,
                &lib.settings.title,
                &slug,
                &lib.settings.description,
                &lib.settings.workspace_id,
                &lib.settings.cover_image_path,
                &lib.settings.cover_overlay_color,
                &lib.settings.cover_overlay_opacity,
                &lib.settings.show_asset_count,
                &lib.settings.allow_individual_downloads,
                &lib.settings.allow_bulk_download,
                &lib.settings.is_paid,
                &lib.settings.price,
                &lib.settings.currency,
                &lib.settings.published,
                &first_published,
                &lib.created_at,
                &lib.updated_at,
                &views,
            ],
            &event,
        );
        let clear_params: [&(dyn ToSql + Sync); 3] = [&lib.id, &sec_ids, &e_assets];
        let section_params: [&(dyn ToSql + Sync); 6] = [
            &lib.id,
            &sec_ids,
            &sec_titles,
            &sec_descriptions,
            &sec_orders,
            &sec_collapsed,
        ];
        let entry_params: [&(dyn ToSql + Sync); 6] = [
            &lib.id,
            &e_assets,
            &e_sections,
            &e_orders,
            &e_titles,
            &e_descriptions,
        ];
        // Pipelined: sent back to back, run in this order. Each is awaited to its end, so
        // the upsert's own error (a slug conflict) is the one answered, not the later
        // statements' "transaction aborted".
        let (row, cleared, sections, entries) = tokio::join!(
            tx.query_one(&upsert, &upsert_params),
            tx.execute(&clear, &clear_params),
            execute_unless(&tx, sec_ids.is_empty(), &sections, &section_params),
            execute_unless(&tx, e_assets.is_empty(), &entries, &entry_params),
        );
        let row = row?;
        cleared?;
        sections?;
        entries?;
        let created: bool = row.try_get(0)?;
        tx.commit().await?;
        let outcome = if created {
            PutOutcome::Created
        } else {
            PutOutcome::Replaced
        };
        Ok(Ok((outcome, slug)))
    }
}
