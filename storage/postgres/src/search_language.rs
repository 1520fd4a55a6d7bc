//! The language the [`crate::PgStore`]'s search index is made in (feature `search`).
//!
//! The database records it (`search_index`, migration 21). A store connecting with another
//! ([`crate::PgConfig::search_language`]) clears the words in one transaction under the
//! migration lock and records its own: every row is then a candidate of every search
//! (answered right by reading the candidates, but slowly) until `PgStore::reindex_search`
//! has made the words again. Apart from the store's module, so that opening a store needs
//! nothing of the index's upkeep.

use assetlib_core::search::Language;
use deadpool_postgres::Pool;

use crate::error::Error;
use crate::schema::Schema;

/// Records `language` as the one the index of `schema` is made in; when the database
/// recorded another, first clears every word of the index (one transaction, under the
/// migration lock, so replicas connecting at once do it once).
pub(crate) async fn use_language(
    pool: &Pool,
    schema: &Schema,
    language: Option<Language>,
) -> Result<(), Error> {
    let db = |source| Error::Migrate {
        schema: schema.name.clone(),
        source,
    };
    let s = &schema.q;
    let mut client = pool.get().await.map_err(Error::Connect)?;
    let recorded: Option<String> = client
        .query_one(&format!("SELECT language FROM {s}.search_index"), &[])
        .await
        .map_err(db)?
        .get(0);
    let wanted = language.map(|l| l.as_str().to_owned());
    if recorded == wanted {
        return Ok(());
    }
    let tx = client.transaction().await.map_err(db)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1)",
        &[&crate::migrate::MIGRATION_LOCK],
    )
    .await
    .map_err(db)?;
    let recorded: Option<String> = tx
        .query_one(
            &format!("SELECT language FROM {s}.search_index FOR UPDATE"),
            &[],
        )
        .await
        .map_err(db)?
        .get(0);
    if recorded != wanted {
        // The words are no content of an asset: the trigger announcing a write is off while
        // they are cleared (its table lock holds other writers back meanwhile).
        tx.batch_execute(&format!(
            "ALTER TABLE {s}.assets DISABLE TRIGGER assets_bump_version; \
             UPDATE {s}.assets SET search_words = NULL WHERE search_words IS NOT NULL; \
             ALTER TABLE {s}.assets ENABLE TRIGGER assets_bump_version; \
             DELETE FROM {s}.asset_text_words;"
        ))
        .await
        .map_err(db)?;
        tx.execute(
            &format!("UPDATE {s}.search_index SET language = $1"),
            &[&wanted],
        )
        .await
        .map_err(db)?;
    }
    tx.commit().await.map_err(db)
}
