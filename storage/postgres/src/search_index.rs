//! How the [`PgStore`] keeps its search index (feature `search`): the text inside a file and
//! its words, and `search reindex`, which makes the words of the rows that have none (after
//! a change of language too: see `search_language.rs`), the titles' and the texts' alike.

use assetlib_core::StoreError;
use assetlib_core::search::Language;
use assetlib_core::store::AssetText;
use tokio_postgres::Transaction;
use uuid::Uuid;

use crate::PgStore;
use crate::assets::{asset_cols, asset_from_row};
use crate::error::Failure;

/// Rows a transaction of [`assetlib_core::store::SearchStore::reindex_words`] fills in.
pub(crate) const REINDEX_BATCH: u32 = 500;

/// The most words of a text one `asset_text_words` row holds.
const WORDS_PER_CHUNK: usize = 20_000;

/// The words of `text` in `language`, each once, in chunks of at most [`WORDS_PER_CHUNK`].
pub(crate) fn text_word_chunks(text: &AssetText, language: Option<Language>) -> Vec<Vec<String>> {
    let all: Vec<String> = text.words(language).into_iter().collect();
    all.chunks(WORDS_PER_CHUNK)
        .map(<[String]>::to_vec)
        .collect()
}

/// Replaces the words of asset `id`'s text by `chunks`, each row with a copy of the asset's
/// fields a search filters and orders by (migration 20). The caller holds the asset row.
async fn write_text_words(
    tx: &Transaction<'_>,
    s: &str,
    id: Uuid,
    chunks: &[Vec<String>],
) -> Result<(), Failure> {
    tx.execute(
        &format!("DELETE FROM {s}.asset_text_words WHERE asset_id = $1"),
        &[&id],
    )
    .await?;
    let insert = tx
        .prepare(&format!(
            "INSERT INTO {s}.asset_text_words (asset_id, chunk, words, created_at, \
                 published, is_public, asset_type, workspace_id, tag_keys) \
             SELECT $1, $2, array_to_tsvector($3::text[]), created_at, published, \
                 is_public, asset_type, workspace_id, tag_keys \
             FROM {s}.assets WHERE id = $1"
        ))
        .await?;
    for (n, chunk) in chunks.iter().enumerate() {
        let n = i32::try_from(n).map_err(|_| Failure::invalid("text chunk", "too many"))?;
        tx.execute(&insert, &[&id, &n, chunk]).await?;
    }
    Ok(())
}

impl PgStore {
    /// Makes the words of every asset row whose `search_words` is NULL (written by a build
    /// without the feature, before migration 19, or before a change of language), and of its
    /// kept text, `batch` rows a transaction, calling `progress` with the rows done so far
    /// after each. Answers how many it made. Safe while serving, and on several replicas at
    /// once: a row is a candidate of every search until it is done, and is held against
    /// other writes while its words are made.
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
            "SELECT {} , 0::bigint FROM {s}.assets a WHERE a.search_words IS NULL \
             LIMIT $1 FOR NO KEY UPDATE SKIP LOCKED",
            asset_cols("a.")
        );
        let write =
            format!("UPDATE {s}.assets SET search_words = $2::text::tsvector WHERE id = $1");
        let texts =
            format!("SELECT asset_id, paged, pages FROM {s}.asset_texts WHERE asset_id = ANY($1)");
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
            let mut ids = Vec::with_capacity(rows.len());
            for row in &rows {
                let asset = asset_from_row(row, 0)?;
                let words =
                    crate::asset_params::search_words(&asset, self.words).unwrap_or_default();
                tx.execute(&stmt, &[&asset.id, &words])
                    .await
                    .map_err(Failure::from)?;
                ids.push(asset.id);
            }
            for row in tx.query(&texts, &[&ids]).await.map_err(Failure::from)? {
                let id: Uuid = row.try_get(0).map_err(Failure::from)?;
                let text = AssetText {
                    paged: row.try_get(1).map_err(Failure::from)?,
                    pages: row.try_get(2).map_err(Failure::from)?,
                };
                let chunks = text_word_chunks(&text, self.words.language);
                write_text_words(&tx, s, id, &chunks).await?;
            }
            tx.commit().await.map_err(Failure::from)?;
            done += rows.len() as u64;
            progress(done);
        }
    }

    /// Keeps `text` for asset `id` in one transaction; `false` when there is no such asset.
    pub(crate) async fn set_text(&self, id: Uuid, text: &AssetText) -> Result<bool, Failure> {
        let s = &self.schema.q;
        let chunks = text_word_chunks(text, self.words.language);
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // The asset row locked until the text is in: against a delete, and against an update
        // of the fields the words carry a copy of (migration 20), whose trigger then finds
        // the new words.
        let found = tx
            .query_opt(
                &format!("SELECT 1 FROM {s}.assets WHERE id = $1 FOR NO KEY UPDATE"),
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
        write_text_words(&tx, s, id, &chunks).await?;
        tx.commit().await?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_of_many_words_is_kept_in_chunks() {
        let page: String = (0..WORDS_PER_CHUNK + 5).map(|i| format!("w{i} ")).collect();
        let text = AssetText {
            pages: vec![page, "w1 w2".into()],
            paged: true,
        };
        let chunks = text_word_chunks(&text, None);
        assert_eq!(
            chunks.iter().map(Vec::len).collect::<Vec<_>>(),
            [WORDS_PER_CHUNK, 5]
        );
        let stemmed = AssetText {
            pages: vec!["Running runs ran".into()],
            paged: false,
        };
        assert_eq!(
            text_word_chunks(&stemmed, Some(Language::English)),
            [vec!["ran".to_owned(), "run".to_owned()]]
        );
    }
}
