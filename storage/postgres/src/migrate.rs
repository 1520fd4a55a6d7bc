//! Embedded migrations, applied at connect in one transaction under an advisory lock.

use deadpool_postgres::Pool;

use crate::error::Error;
use crate::schema::Schema;

/// The schema version this crate creates and reads.
pub const SCHEMA_VERSION: i32 = 23;

/// Every migration: the version it brings the schema to, and its SQL (`__SCHEMA__` and
/// `__TRGM__` stand for the quoted store and pg_trgm schemas).
const MIGRATIONS: &[(i32, &str)] = &[
    (1, include_str!("../migrations/0001_initial.sql")),
    (
        2,
        include_str!("../migrations/0002_sharded_asset_counts.sql"),
    ),
    (3, include_str!("../migrations/0003_drafts.sql")),
    (4, include_str!("../migrations/0004_secrets.sql")),
    (5, include_str!("../migrations/0005_asset_versions.sql")),
    (6, include_str!("../migrations/0006_entry_copies.sql")),
    (7, include_str!("../migrations/0007_passes.sql")),
    (8, include_str!("../migrations/0008_notices.sql")),
    (9, include_str!("../migrations/0009_row_versions.sql")),
    (10, include_str!("../migrations/0010_previews.sql")),
    (11, include_str!("../migrations/0011_events.sql")),
    (12, include_str!("../migrations/0012_webhooks.sql")),
    (13, include_str!("../migrations/0013_uploads.sql")),
    (14, include_str!("../migrations/0014_tags.sql")),
    (15, include_str!("../migrations/0015_workspaces.sql")),
    (16, include_str!("../migrations/0016_event_workspaces.sql")),
    (17, include_str!("../migrations/0017_asset_notices.sql")),
    (18, include_str!("../migrations/0018_search.sql")),
    (19, include_str!("../migrations/0019_search_fields.sql")),
    (20, include_str!("../migrations/0020_text_facets.sql")),
    (21, include_str!("../migrations/0021_search_language.sql")),
    (22, include_str!("../migrations/0022_transfer_mark.sql")),
    (
        23,
        include_str!("../migrations/0023_asset_notice_orders.sql"),
    ),
];

/// The advisory lock every migrating process takes: `"assetlib"` in ASCII. Fixed, so replicas
/// of any version wait for each other.
pub(crate) const MIGRATION_LOCK: i64 = 0x6173_7365_746c_6962;

/// `name` as a quoted SQL identifier.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Brings `schema` to [`SCHEMA_VERSION`], or fails with [`Error::SchemaTooNew`].
pub(crate) async fn migrate(pool: &Pool, schema: &Schema) -> Result<(), Error> {
    let db = |source| Error::Migrate {
        schema: schema.name.clone(),
        source,
    };
    let s = &schema.q;
    let mut client = pool.get().await.map_err(Error::Connect)?;
    let tx = client.transaction().await.map_err(db)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(db)?;
    let table = format!("{s}.schema_migrations");
    let exists: bool = tx
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
        .await
        .map_err(db)?
        .get(0);
    if !exists {
        tx.batch_execute(&format!(
            "CREATE SCHEMA IF NOT EXISTS {s};
             CREATE TABLE {table} (
                 version    integer PRIMARY KEY,
                 applied_at timestamptz NOT NULL DEFAULT now()
             );"
        ))
        .await
        .map_err(db)?;
    }
    let found: i32 = tx
        .query_one(
            &format!("SELECT coalesce(max(version), 0) FROM {table}"),
            &[],
        )
        .await
        .map_err(db)?
        .get(0);
    if found > SCHEMA_VERSION {
        return Err(Error::SchemaTooNew {
            schema: schema.name.clone(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    if found < SCHEMA_VERSION {
        tx.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            .await
            .map_err(db)?;
        let trgm: String = tx
            .query_one(
                "SELECT n.nspname::text FROM pg_extension e \
                 JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'",
                &[],
            )
            .await
            .map_err(db)?
            .get(0);
        let trgm = quote_ident(&trgm);
        for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > found) {
            let sql = sql.replace("__SCHEMA__", s).replace("__TRGM__", &trgm);
            tx.batch_execute(&sql).await.map_err(db)?;
            tx.execute(
                &format!("INSERT INTO {table} (version) VALUES ($1)"),
                &[version],
            )
            .await
            .map_err(db)?;
        }
    }
    tx.commit().await.map_err(db)
}
