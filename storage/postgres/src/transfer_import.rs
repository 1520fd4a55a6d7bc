//! The import of records into the [`PgStore`] (feature `transfer`; see `transfer.rs`): one
//! transaction per call, each kind written by multi-row statements over arrays (`unnest`),
//! ids held already skipped (`ON CONFLICT (id) DO NOTHING`, or a check by id for events).
//!
//! Lists of strings of each row (tags, scopes, event types, changed fields, pages) go as
//! JSON arrays, one text a row, made back into arrays by [`text_array`]: arrays of arrays of
//! different lengths are no SQL array.

use assetlib_core::transfer::{DeliveryRecord, EventRecord, LibraryRecord, Record, WebhookRecord};
use assetlib_core::{ApiKey, Asset, LibraryPass, StoreError};
use deadpool_postgres::Transaction;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::asset_params::AssetParams;
use crate::error::{Failure, foreign_key_violation, unique_violation};
use crate::store::{PgStore, to_i64};

/// The records of one call by kind, each kind in the call's order.
#[derive(Default)]
struct Kinds<'a> {
    secret: Option<&'a [u8; 32]>,
    keys: Vec<&'a ApiKey>,
    assets: Vec<&'a Asset>,
    #[cfg(feature = "search")]
    texts: Vec<&'a assetlib_core::transfer::TextRecord>,
    libraries: Vec<&'a LibraryRecord>,
    passes: Vec<&'a LibraryPass>,
    events: Vec<&'a EventRecord>,
    webhooks: Vec<&'a WebhookRecord>,
    deliveries: Vec<&'a DeliveryRecord>,
}

impl<'a> Kinds<'a> {
    /// `records` sorted by kind.
    fn of(records: &'a [Record]) -> Self {
        let mut kinds = Kinds::default();
        for record in records {
            match record {
                Record::SigningSecret { secret } => kinds.secret = Some(&secret.0),
                Record::Key(key) => kinds.keys.push(key),
                Record::Asset(asset) => kinds.assets.push(asset),
                #[cfg(feature = "search")]
                Record::Text(text) => kinds.texts.push(text),
                // Without search no text is kept.
                #[cfg(not(feature = "search"))]
                Record::Text(_) => {}
                Record::Library(library) => kinds.libraries.push(library),
                Record::Pass(pass) => kinds.passes.push(pass),
                Record::Event(event) => kinds.events.push(event),
                Record::Webhook(hook) => kinds.webhooks.push(hook),
                Record::Delivery(delivery) => kinds.deliveries.push(delivery),
            }
        }
        kinds
    }
}

/// Writes `records` in one transaction, committed (durably) before this returns; nothing of
/// them when it fails.
pub(crate) async fn import(store: &PgStore, records: &[Record]) -> Result<(), StoreError> {
    let kinds = Kinds::of(records);
    let mut client = store.client().await?;
    let tx = client.transaction().await.map_err(Failure::from)?;
    let writer = Writer {
        tx: &tx,
        s: &store.schema.q,
        store,
    };
    match writer.all(&kinds).await {
        Ok(()) => {
            tx.commit().await.map_err(Failure::from)?;
            Ok(())
        }
        Err(e) => {
            let _ = tx.rollback().await;
            Err(e)
        }
    }
}

/// A record that cannot be kept.
pub(crate) fn corrupt(detail: String) -> StoreError {
    StoreError::corrupt(detail)
}

/// What a failed statement writing `what` records means: a record clashing with one of
/// another id (a slug, a hash) or naming one that is not here cannot be kept.
pub(crate) fn refused(what: &'static str, e: tokio_postgres::Error) -> StoreError {
    if let Some(constraint) = unique_violation(&e) {
        return corrupt(format!(
            "a {what} clashes with one of another id held here ({constraint})"
        ));
    }
    if let Some(constraint) = foreign_key_violation(&e) {
        return corrupt(format!(
            "a {what} names a record that is not here ({constraint})"
        ));
    }
    Failure::from(e).into()
}

/// `f` of each item: one array parameter.
pub(crate) fn col<'a, T: ?Sized, U>(items: &[&'a T], f: impl Fn(&'a T) -> U) -> Vec<U> {
    items.iter().map(|item| f(item)).collect()
}

/// `items` as a JSON array of strings (for [`text_array`]).
pub(crate) fn json_list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    serde_json::Value::Array(
        items
            .into_iter()
            .map(|s| serde_json::Value::String(s.as_ref().to_owned()))
            .collect(),
    )
    .to_string()
}

/// The SQL array of the strings of the JSON array `expr` (a `text`), in its order, each
/// cast to `cast`.
pub(crate) fn text_array(expr: &str, cast: &str) -> String {
    format!(
        "ARRAY(SELECT v::{cast} FROM json_array_elements_text(({expr})::json) \
         WITH ORDINALITY AS t(v, n) ORDER BY n)"
    )
}

/// The ids of the first column of `rows`.
pub(crate) fn ids(rows: &[Row]) -> Result<Vec<Uuid>, StoreError> {
    rows.iter()
        .map(|row| row.try_get(0).map_err(|e| Failure::from(e).into()))
        .collect()
}

/// Writes the kinds in the import's transaction.
pub(crate) struct Writer<'a> {
    /// The import's transaction.
    pub(crate) tx: &'a Transaction<'a>,
    /// The store's schema, quoted.
    pub(crate) s: &'a str,
    /// The store.
    pub(crate) store: &'a PgStore,
}

impl Writer<'_> {
    /// Runs `sql` with `params`: its rows, or what its failure means of `what` records.
    pub(crate) async fn run(
        &self,
        what: &'static str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, StoreError> {
        let stmt = self.tx.prepare_cached(sql).await.map_err(Failure::from)?;
        self.tx
            .query(&stmt, params)
            .await
            .map_err(|e| refused(what, e))
    }

    /// Every kind of `kinds`, in the order of [`Record`]'s, then the notices the triggers
    /// do not send.
    async fn all(&self, kinds: &Kinds<'_>) -> Result<(), StoreError> {
        if let Some(secret) = kinds.secret {
            let sql = format!(
                "INSERT INTO {}.secrets (name, value) VALUES ('signing', $1) \
                 ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value",
                self.s
            );
            self.run("signing secret", &sql, &[&&secret[..]]).await?;
        }
        let key = self.keys(&kinds.keys).await?;
        self.assets(&kinds.assets).await?;
        #[cfg(feature = "search")]
        let texts = self.texts(&kinds.texts).await?;
        #[cfg(not(feature = "search"))]
        let texts = false;
        self.libraries(&kinds.libraries).await?;
        self.passes(&kinds.passes).await?;
        self.events(&kinds.events).await?;
        self.webhooks(&kinds.webhooks).await?;
        self.deliveries(&kinds.deliveries).await?;
        // The triggers announce the assets and libraries written; keys and texts are
        // announced here (a key's notice moves every replica's keys version, `a` every
        // asset's, whose search answers a text changes).
        let channel = &self.store.schema.name;
        if let Some(id) = key {
            let sql = format!("SELECT {}.notice('k' || $1::uuid::text, $2)", self.s);
            self.run("key", &sql, &[&id, channel]).await?;
        }
        if texts {
            let sql = format!("SELECT {}.notice('a', $1)", self.s);
            self.run("text", &sql, &[channel]).await?;
        }
        Ok(())
    }

    /// The keys; the id of one written, if any.
    async fn keys(&self, keys: &[&ApiKey]) -> Result<Option<Uuid>, StoreError> {
        if keys.is_empty() {
            return Ok(None);
        }
        let sql = format!(
            "INSERT INTO {s}.api_keys ({cols}) \
             SELECT x.id, x.name, x.key_hash, {scopes}, x.created_at, x.expires_at, \
                 x.revoked_at, x.workspace_id \
             FROM unnest($1::uuid[], $2::text[], $3::bytea[], $4::text[], \
                 $5::timestamptz[], $6::timestamptz[], $7::timestamptz[], $8::text[]) \
                 AS x(id, name, key_hash, scopes, created_at, expires_at, revoked_at, \
                     workspace_id) \
             ON CONFLICT (id) DO NOTHING RETURNING id",
            s = self.s,
            cols = crate::keys::KEY_COLS,
            scopes = text_array("x.scopes", "text"),
        );
        let rows = self
            .run(
                "key",
                &sql,
                &[
                    &col(keys, |k| k.id),
                    &col(keys, |k| k.name.as_str()),
                    &col(keys, |k| &k.key_hash[..]),
                    &col(keys, |k| json_list(k.scopes.iter().map(|x| x.as_str()))),
                    &col(keys, |k| k.created_at),
                    &col(keys, |k| k.expires_at),
                    &col(keys, |k| k.revoked_at),
                    &col(keys, |k| k.workspace_id.as_deref()),
                ],
            )
            .await?;
        Ok(ids(&rows)?.first().copied())
    }

    /// The assets, each with its download count and its list rows (by the triggers), and
    /// the slug counters moved past each numbered slug (`base-N`), so that the next insert
    /// of a taken base takes a number after every imported one.
    async fn assets(&self, assets: &[&Asset]) -> Result<(), StoreError> {
        if assets.is_empty() {
            return Ok(());
        }
        let s = self.s;
        let sql = format!(
            "WITH x AS (SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], \
                 $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[], $10::text[], \
                 $11::text[], $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[], \
                 $16::text[], $17::text[], $18::boolean[], $19::boolean[], \
                 $20::timestamptz[], $21::timestamptz[], $22::text[], $23::bigint[], \
                 $24::bigint[], $25::bigint[], $26::bigint[], $27::text[], $28::text[], \
                 $29::text[], $30::bytea[], $31::text[], $32::text[], $33::bigint[]) \
                 AS x(id, title, title_lower, slug, description, description_lower, \
                     asset_type, file_path, file_size, mime_type, thumbnail_path, page_count, \
                     word_count, width, height, external_url, video_embed, is_public, \
                     published, created_at, updated_at, thumbnail_placeholder, duration_ms, \
                     sample_rate, channels, bitrate, video_codec, tags, tag_keys, \
                     checksum_sha256, workspace_id, search_words, downloads)), \
             ins AS (INSERT INTO {s}.assets (id, title, title_lower, slug, description, \
                     description_lower, asset_type, file_path, file_size, mime_type, \
                     thumbnail_path, page_count, word_count, width, height, external_url, \
                     video_embed, is_public, published, created_at, updated_at, \
                     thumbnail_placeholder, duration_ms, sample_rate, channels, bitrate, \
                     video_codec, tags, tag_keys, checksum_sha256, workspace_id, search_words) \
                 SELECT x.id, x.title, x.title_lower, x.slug, x.description, \
                     x.description_lower, x.asset_type, x.file_path, x.file_size, x.mime_type, \
                     x.thumbnail_path, x.page_count, x.word_count, x.width, x.height, \
                     x.external_url, x.video_embed, x.is_public, x.published, x.created_at, \
                     x.updated_at, x.thumbnail_placeholder, x.duration_ms, x.sample_rate, \
                     x.channels, x.bitrate, x.video_codec, {tags}, {keys}, x.checksum_sha256, \
                     x.workspace_id, x.search_words::tsvector \
                 FROM x ON CONFLICT (id) DO NOTHING RETURNING id, slug, workspace_id), \
             counted AS (INSERT INTO {s}.asset_counters (asset_id, download_count) \
                 SELECT x.id, x.downloads FROM x JOIN ins ON ins.id = x.id), \
             numbered AS (INSERT INTO {s}.slug_counters AS c (base, last) \
                 SELECT CASE WHEN n.workspace_id IS NULL THEN n.m[1] \
                         ELSE n.workspace_id || '/' || n.m[1] END, \
                     max(n.m[2]::bigint) \
                 FROM (SELECT workspace_id, regexp_match(slug, '^(.+)-([0-9]{{1,18}})$') AS m \
                       FROM ins) n \
                 WHERE n.m IS NOT NULL AND n.m[2]::bigint >= 2 \
                 GROUP BY 1 ORDER BY 1 \
                 ON CONFLICT (base) DO UPDATE SET last = greatest(c.last, EXCLUDED.last)) \
             SELECT count(*) FROM ins",
            tags = text_array("x.tags", "text"),
            keys = text_array("x.tag_keys", "text"),
        );
        let params = assets
            .iter()
            .map(|a| AssetParams::new(a, self.store.words))
            .collect::<Result<Vec<_>, _>>()?;
        let p: Vec<&AssetParams> = params.iter().collect();
        let downloads = assets
            .iter()
            .map(|a| to_i64("download count", a.download_count))
            .collect::<Result<Vec<_>, _>>()?;
        self.run(
            "asset",
            &sql,
            &[
                &col(assets, |a| a.id),
                &col(assets, |a| a.title.as_str()),
                &col(&p, |p| p.title_lower.as_str()),
                &col(assets, |a| a.slug.as_str()),
                &col(assets, |a| a.description.as_deref()),
                &col(&p, |p| p.description_lower.as_deref()),
                &col(&p, |p| p.asset_type),
                &col(assets, |a| a.file_path.as_deref()),
                &col(&p, |p| p.file_size),
                &col(assets, |a| a.mime_type.as_deref()),
                &col(assets, |a| a.thumbnail_path.as_deref()),
                &col(&p, |p| p.page_count),
                &col(&p, |p| p.word_count),
                &col(&p, |p| p.width),
                &col(&p, |p| p.height),
                &col(assets, |a| a.external_url.as_deref()),
                &col(assets, |a| a.video_embed.as_deref()),
                &col(assets, |a| a.is_public),
                &col(assets, |a| a.published),
                &col(assets, |a| a.created_at),
                &col(assets, |a| a.updated_at),
                &col(assets, |a| a.thumbnail_placeholder.as_deref()),
                &col(&p, |p| p.duration_ms),
                &col(&p, |p| p.sample_rate),
                &col(&p, |p| p.channels),
                &col(&p, |p| p.bitrate),
                &col(assets, |a| a.media.video_codec.as_deref()),
                &col(assets, |a| json_list(&a.tags)),
                &col(&p, |p| json_list(&p.tag_keys)),
                &col(&p, |p| p.checksum.as_deref()),
                &col(assets, |a| a.workspace_id.as_deref()),
                &col(&p, |p| p.search_words.as_deref()),
                &downloads,
            ],
        )
        .await?;
        Ok(())
    }

    /// The kept texts of assets held here (others are left out), with their words as
    /// `set_text` makes them; whether one was written.
    #[cfg(feature = "search")]
    async fn texts(
        &self,
        texts: &[&assetlib_core::transfer::TextRecord],
    ) -> Result<bool, StoreError> {
        use std::collections::HashSet;

        use assetlib_core::store::AssetText;

        if texts.is_empty() {
            return Ok(false);
        }
        let s = self.s;
        let sql = format!(
            "INSERT INTO {s}.asset_texts (asset_id, paged, pages) \
             SELECT x.asset_id, x.paged, {pages} \
             FROM unnest($1::uuid[], $2::boolean[], $3::text[]) AS x(asset_id, paged, pages) \
             WHERE EXISTS (SELECT 1 FROM {s}.assets a WHERE a.id = x.asset_id) \
             ON CONFLICT (asset_id) DO NOTHING RETURNING asset_id",
            pages = text_array("x.pages", "text"),
        );
        let rows = self
            .run(
                "text",
                &sql,
                &[
                    &col(texts, |t| t.asset_id),
                    &col(texts, |t| t.paged),
                    &col(texts, |t| json_list(&t.pages)),
                ],
            )
            .await?;
        let written: HashSet<Uuid> = ids(&rows)?.into_iter().collect();
        let (mut assets, mut chunks, mut words) = (Vec::new(), Vec::new(), Vec::new());
        for text in texts.iter().filter(|t| written.contains(&t.asset_id)) {
            let kept = AssetText {
                pages: text.pages.clone(),
                paged: text.paged,
            };
            let language = self.store.words.language;
            for (n, chunk) in crate::search_index::text_word_chunks(&kept, language)
                .iter()
                .enumerate()
            {
                assets.push(text.asset_id);
                chunks.push(
                    i32::try_from(n).map_err(|_| Failure::invalid("text chunk", "too many"))?,
                );
                let lexemes: Vec<String> = chunk
                    .iter()
                    .map(|w| crate::asset_params::lexeme(w))
                    .collect();
                words.push(lexemes.join(" "));
            }
        }
        if !assets.is_empty() {
            // Each chunk with a copy of its asset's fields a search filters and orders by
            // (migration 20).
            let sql = format!(
                "INSERT INTO {s}.asset_text_words (asset_id, chunk, words, created_at, \
                     published, is_public, asset_type, workspace_id, tag_keys) \
                 SELECT w.asset_id, w.chunk, w.words::tsvector, a.created_at, a.published, \
                     a.is_public, a.asset_type, a.workspace_id, a.tag_keys \
                 FROM unnest($1::uuid[], $2::int[], $3::text[]) AS w(asset_id, chunk, words) \
                 JOIN {s}.assets a ON a.id = w.asset_id"
            );
            self.run("text", &sql, &[&assets, &chunks, &words]).await?;
        }
        Ok(!written.is_empty())
    }

    /// The passes, each with the downloads it made (its library must be here).
    async fn passes(&self, passes: &[&LibraryPass]) -> Result<(), StoreError> {
        if passes.is_empty() {
            return Ok(());
        }
        let sql = format!(
            "INSERT INTO {s}.passes ({cols}) \
             SELECT x.id, x.library_id, x.token_hash, x.label, x.expires_at, \
                 x.max_downloads, x.downloads_used, \
                 CASE WHEN x.asset_ids IS NOT NULL THEN {assets} END, \
                 x.created_at, x.revoked_at \
             FROM unnest($1::uuid[], $2::uuid[], $3::bytea[], $4::text[], \
                 $5::timestamptz[], $6::bigint[], $7::bigint[], $8::text[], \
                 $9::timestamptz[], $10::timestamptz[]) \
                 AS x(id, library_id, token_hash, label, expires_at, max_downloads, \
                     downloads_used, asset_ids, created_at, revoked_at) \
             ON CONFLICT (id) DO NOTHING",
            s = self.s,
            cols = crate::passes::pass_cols(""),
            assets = text_array("x.asset_ids", "uuid"),
        );
        let limits = passes
            .iter()
            .map(|p| {
                p.max_downloads
                    .map(|n| to_i64("pass download limit", n))
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let used = passes
            .iter()
            .map(|p| to_i64("pass downloads", p.downloads_used))
            .collect::<Result<Vec<_>, _>>()?;
        self.run(
            "pass",
            &sql,
            &[
                &col(passes, |p| p.id),
                &col(passes, |p| p.library_id),
                &col(passes, |p| &p.token_hash[..]),
                &col(passes, |p| p.label.as_str()),
                &col(passes, |p| p.expires_at),
                &limits,
                &used,
                &col(passes, |p| {
                    p.asset_ids
                        .as_ref()
                        .map(|ids| json_list(ids.iter().map(Uuid::to_string)))
                }),
                &col(passes, |p| p.created_at),
                &col(passes, |p| p.revoked_at),
            ],
        )
        .await?;
        Ok(())
    }
}
