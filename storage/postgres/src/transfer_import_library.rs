//! The libraries of an import (feature `transfer`; see `transfer_import.rs`): each whole,
//! with its view count, a new content version, and each entry's copy of its asset's fields.

use std::collections::HashSet;

use assetlib_core::transfer::LibraryRecord;
use assetlib_core::{Library, LibraryEntry, Section, StoreError};
use uuid::Uuid;

use crate::store::to_i64;
use crate::transfer_import::{Writer, col, corrupt, ids};

impl Writer<'_> {
    /// The libraries whole, each with its view count and a new content version; each entry
    /// with the copy of its asset's fields. Every entry's asset must be held here: they are
    /// locked as a library write locks them, so none is changed or deleted before this
    /// commits.
    pub(crate) async fn libraries(&self, libraries: &[&LibraryRecord]) -> Result<(), StoreError> {
        if libraries.is_empty() {
            return Ok(());
        }
        let s = self.s;
        let mut wanted: Vec<Uuid> = libraries
            .iter()
            .flat_map(|l| l.entries.iter().map(|e| e.asset_id))
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        if !wanted.is_empty() {
            let sql =
                format!("SELECT id FROM {s}.assets WHERE id = ANY($1) ORDER BY id FOR KEY SHARE");
            let found: HashSet<Uuid> = ids(&self.run("library", &sql, &[&wanted]).await?)?
                .into_iter()
                .collect();
            for l in libraries {
                if let Some(e) = l.entries.iter().find(|e| !found.contains(&e.asset_id)) {
                    return Err(corrupt(format!(
                        "library {} holds asset {}, which is not here",
                        l.library.id, e.asset_id
                    )));
                }
            }
        }
        let sql = format!(
            "WITH x AS (SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], \
                 $5::text[], $6::text[], $7::text[], $8::float8[], $9::boolean[], \
                 $10::boolean[], $11::boolean[], $12::boolean[], $13::float8[], $14::text[], \
                 $15::boolean[], $16::timestamptz[], $17::timestamptz[], $18::timestamptz[], \
                 $19::bigint[]) \
                 AS x(id, title, slug, description, workspace_id, cover_image_path, \
                     cover_overlay_color, cover_overlay_opacity, show_asset_count, \
                     allow_individual_downloads, allow_bulk_download, is_paid, price, \
                     currency, published, published_at, created_at, updated_at, views)), \
             ins AS (INSERT INTO {s}.libraries ({cols}) \
                 SELECT x.id, x.title, x.slug, x.description, x.workspace_id, \
                     x.cover_image_path, x.cover_overlay_color, x.cover_overlay_opacity, \
                     x.show_asset_count, x.allow_individual_downloads, x.allow_bulk_download, \
                     x.is_paid, x.price, x.currency, x.published, x.published_at, \
                     x.created_at, x.updated_at \
                 FROM x ON CONFLICT (id) DO NOTHING RETURNING id, published), \
             counted AS (INSERT INTO {s}.library_counters (library_id, view_count, \
                     content_version, published) \
                 SELECT ins.id, x.views, nextval('{s}.content_versions'), ins.published \
                 FROM ins JOIN x ON x.id = ins.id) \
             SELECT id FROM ins",
            cols = crate::libraries::library_cols(""),
        );
        let views = libraries
            .iter()
            .map(|l| to_i64("view count", l.library.view_count))
            .collect::<Result<Vec<_>, _>>()?;
        let lib: Vec<&Library> = libraries.iter().map(|l| &l.library).collect();
        let rows = self
            .run(
                "library",
                &sql,
                &[
                    &col(&lib, |l| l.id),
                    &col(&lib, |l| l.settings.title.as_str()),
                    &col(&lib, |l| l.slug.as_str()),
                    &col(&lib, |l| l.settings.description.as_deref()),
                    &col(&lib, |l| l.settings.workspace_id.as_deref()),
                    &col(&lib, |l| l.settings.cover_image_path.as_deref()),
                    &col(&lib, |l| l.settings.cover_overlay_color.as_deref()),
                    &col(&lib, |l| l.settings.cover_overlay_opacity),
                    &col(&lib, |l| l.settings.show_asset_count),
                    &col(&lib, |l| l.settings.allow_individual_downloads),
                    &col(&lib, |l| l.settings.allow_bulk_download),
                    &col(&lib, |l| l.settings.is_paid),
                    &col(&lib, |l| l.settings.price),
                    &col(&lib, |l| l.settings.currency.as_str()),
                    &col(&lib, |l| l.settings.published),
                    &col(&lib, |l| l.published_at),
                    &col(&lib, |l| l.created_at),
                    &col(&lib, |l| l.updated_at),
                    &views,
                ],
            )
            .await?;
        let written: HashSet<Uuid> = ids(&rows)?.into_iter().collect();
        let new: Vec<&LibraryRecord> = libraries
            .iter()
            .copied()
            .filter(|l| written.contains(&l.library.id))
            .collect();
        let sections: Vec<(Uuid, &Section)> = new
            .iter()
            .flat_map(|l| l.sections.iter().map(|x| (l.library.id, x)))
            .collect();
        if !sections.is_empty() {
            let sql = format!(
                "INSERT INTO {s}.library_sections (library_id, id, title, description, \
                     display_order, collapsed_by_default) \
                 SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], \
                     $5::bigint[], $6::boolean[])"
            );
            let x: Vec<&(Uuid, &Section)> = sections.iter().collect();
            self.run(
                "library section",
                &sql,
                &[
                    &col(&x, |(l, _)| *l),
                    &col(&x, |(_, x)| x.id),
                    &col(&x, |(_, x)| x.title.as_str()),
                    &col(&x, |(_, x)| x.description.as_deref()),
                    &col(&x, |(_, x)| i64::from(x.display_order)),
                    &col(&x, |(_, x)| x.collapsed_by_default),
                ],
            )
            .await?;
        }
        let entries: Vec<(Uuid, &LibraryEntry)> = new
            .iter()
            .flat_map(|l| l.entries.iter().map(|e| (l.library.id, e)))
            .collect();
        if !entries.is_empty() {
            let sql = format!(
                "INSERT INTO {s}.library_entries (library_id, asset_id, section_id, \
                     display_order, title, description, a_title, a_description, a_type, \
                     a_thumbnail, a_published, a_placeholder, a_duration_ms, a_tags) \
                 SELECT e.library_id, e.asset_id, e.section_id, e.display_order, e.title, \
                     e.description, a.title, a.description, a.asset_type, a.thumbnail_path, \
                     a.published, a.thumbnail_placeholder, a.duration_ms, a.tags \
                 FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::bigint[], $5::text[], \
                     $6::text[]) \
                     AS e(library_id, asset_id, section_id, display_order, title, description) \
                 JOIN {s}.assets a ON a.id = e.asset_id"
            );
            let x: Vec<&(Uuid, &LibraryEntry)> = entries.iter().collect();
            self.run(
                "library entry",
                &sql,
                &[
                    &col(&x, |(l, _)| *l),
                    &col(&x, |(_, e)| e.asset_id),
                    &col(&x, |(_, e)| e.section_id),
                    &col(&x, |(_, e)| i64::from(e.display_order)),
                    &col(&x, |(_, e)| e.title.as_deref()),
                    &col(&x, |(_, e)| e.description.as_deref()),
                ],
            )
            .await?;
        }
        Ok(())
    }
}
