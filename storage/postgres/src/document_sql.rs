//! The statements of a library replace that write its sections and entries
//! ([`crate::PgStore`]'s `put_library`).
//!
//! The document's sections and entries replace the stored ones row by row: rows the document
//! no longer has go, and the others are written only where they differ, so a replace of the
//! settings alone (a changed title or description, the common edit) writes no section or
//! entry: `IS DISTINCT FROM` leaves an equal row untouched (no new row version, no WAL).

/// The three statements, for the schema `s` (quoted), run in this order in the replace's
/// transaction, after the library's own upsert:
/// - `clear` (`$1` library, `$2` section ids, `$3` entry asset ids) deletes the rows the
///   document no longer has;
/// - `sections` (`$1` library, `$2`-`$6` the sections' columns as arrays) upserts sections;
/// - `entries` (`$1` library, `$2`-`$6` the entries' columns as arrays) upserts entries with
///   their assets' copies.
#[derive(Debug)]
pub(crate) struct DocumentSql {
    pub(crate) clear: String,
    pub(crate) sections: String,
    pub(crate) entries: String,
}

impl DocumentSql {
    pub(crate) fn new(s: &str) -> Self {
        DocumentSql {
            clear: format!(
                "WITH x AS (DELETE FROM {s}.library_sections \
                     WHERE library_id = $1 AND NOT (id = ANY($2::uuid[]))) \
                 DELETE FROM {s}.library_entries \
                 WHERE library_id = $1 AND NOT (asset_id = ANY($3::uuid[]))"
            ),
            sections: format!(
                "INSERT INTO {s}.library_sections AS x (library_id, id, title, description, \
                     display_order, collapsed_by_default) \
                 SELECT $1, * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::bigint[], \
                     $6::boolean[]) \
                 ON CONFLICT (library_id, id) DO UPDATE SET title = EXCLUDED.title, \
                     description = EXCLUDED.description, display_order = EXCLUDED.display_order, \
                     collapsed_by_default = EXCLUDED.collapsed_by_default \
                 WHERE (x.title, x.description, x.display_order, x.collapsed_by_default) \
                     IS DISTINCT FROM (EXCLUDED.title, EXCLUDED.description, \
                     EXCLUDED.display_order, EXCLUDED.collapsed_by_default)"
            ),
            // Each entry with a copy of its asset's page fields, read after the assets were
            // locked `FOR KEY SHARE` (so no change of them commits before this does; see
            // `crate::lifecycle`). Every asset exists: the lock found them all.
            entries: format!(
                "INSERT INTO {s}.library_entries AS x (library_id, asset_id, section_id, \
                     display_order, title, description, a_title, a_description, a_type, \
                     a_thumbnail, a_published, a_placeholder, a_duration_ms, a_tags) \
                 SELECT $1, e.asset_id, e.section_id, e.display_order, e.title, e.description, \
                     a.title, a.description, a.asset_type, a.thumbnail_path, a.published, \
                     a.thumbnail_placeholder, a.duration_ms, a.tags \
                 FROM unnest($2::uuid[], $3::uuid[], $4::bigint[], $5::text[], $6::text[]) \
                     AS e (asset_id, section_id, display_order, title, description) \
                 JOIN {s}.assets a ON a.id = e.asset_id \
                 ON CONFLICT (library_id, asset_id) DO UPDATE SET \
                     section_id = EXCLUDED.section_id, display_order = EXCLUDED.display_order, \
                     title = EXCLUDED.title, description = EXCLUDED.description, \
                     a_title = EXCLUDED.a_title, a_description = EXCLUDED.a_description, \
                     a_type = EXCLUDED.a_type, a_thumbnail = EXCLUDED.a_thumbnail, \
                     a_published = EXCLUDED.a_published, a_placeholder = EXCLUDED.a_placeholder, \
                     a_duration_ms = EXCLUDED.a_duration_ms, a_tags = EXCLUDED.a_tags \
                 WHERE (x.section_id, x.display_order, x.title, x.description, x.a_title, \
                     x.a_description, x.a_type, x.a_thumbnail, x.a_published, x.a_placeholder, \
                     x.a_duration_ms, x.a_tags) \
                     IS DISTINCT FROM (EXCLUDED.section_id, EXCLUDED.display_order, \
                     EXCLUDED.title, EXCLUDED.description, EXCLUDED.a_title, \
                     EXCLUDED.a_description, EXCLUDED.a_type, EXCLUDED.a_thumbnail, \
                     EXCLUDED.a_published, EXCLUDED.a_placeholder, EXCLUDED.a_duration_ms, \
                     EXCLUDED.a_tags)"
            ),
        }
    }
}
