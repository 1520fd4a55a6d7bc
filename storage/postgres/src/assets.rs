//! Assets: reads, inserts (with the slug rule), downloads, and the columns and decoding every
//! read of an asset shares. Lists are in [`crate::lists`], changes and deletes in
//! [`crate::lifecycle`] and [`crate::bulk`].

use std::sync::Arc;

use assetlib_core::events::{Log, Written};
use assetlib_core::{
    Asset, AssetChange, AssetDeletion, AssetQuery, AssetStore, AssetType, AssetUpdate, BulkOutcome,
    LibraryUse, Media, Page, StoreError, TagCount, async_trait,
};
use deadpool_postgres::ClientWrapper;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::asset_params::AssetParams;
use crate::batch;
use crate::error::{Failure, duplicate_id, unique_violation};
use crate::events::{EventParams, one_event};
use crate::store::{PgStore, counter_update, to_i64, to_u32, to_u64};

/// The columns [`asset_cols`] names, in order.
const ASSET_COLUMNS: [&str; 28] = [
    "id",
    "title",
    "slug",
    "description",
    "asset_type",
    "file_path",
    "file_size",
    "mime_type",
    "thumbnail_path",
    "page_count",
    "word_count",
    "width",
    "height",
    "external_url",
    "video_embed",
    "is_public",
    "published",
    "created_at",
    "updated_at",
    "thumbnail_placeholder",
    "duration_ms",
    "sample_rate",
    "channels",
    "bitrate",
    "video_codec",
    "tags",
    "checksum_sha256",
    "workspace_id",
];

/// The asset columns every read returns, in the order [`asset_from_row`] decodes them, each
/// prefixed with `p` (a table alias and a dot, or nothing).
pub(crate) fn asset_cols(p: &str) -> String {
    crate::store::columns(p, &ASSET_COLUMNS)
}

/// How many columns [`asset_cols`] names.
const ASSET_COLS: usize = ASSET_COLUMNS.len();

/// Decodes the columns of [`asset_cols`] starting at `at`, then the download count.
pub(crate) fn asset_from_row(row: &Row, at: usize) -> Result<Asset, Failure> {
    let opt_u64 = |i: usize, what| -> Result<Option<u64>, Failure> {
        row.try_get::<_, Option<i64>>(at + i)?
            .map(|v| to_u64(what, v))
            .transpose()
    };
    let opt_u32 = |i: usize, what| -> Result<Option<u32>, Failure> {
        row.try_get::<_, Option<i64>>(at + i)?
            .map(|v| to_u32(what, v))
            .transpose()
    };
    let type_name: String = row.try_get(at + 4)?;
    let asset_type = AssetType::parse(&type_name)
        .ok_or_else(|| Failure::invalid("asset type", format!("unknown type {type_name:?}")))?;
    let downloads: Option<i64> = row.try_get(at + ASSET_COLS)?;
    Ok(Asset {
        id: row.try_get(at)?,
        title: row.try_get(at + 1)?,
        slug: row.try_get(at + 2)?,
        description: row.try_get(at + 3)?,
        asset_type,
        file_path: row.try_get(at + 5)?,
        file_size: opt_u64(6, "file size")?,
        mime_type: row.try_get(at + 7)?,
        thumbnail_path: row.try_get(at + 8)?,
        page_count: opt_u64(9, "page count")?,
        word_count: opt_u64(10, "word count")?,
        width: opt_u32(11, "width")?,
        height: opt_u32(12, "height")?,
        external_url: row.try_get(at + 13)?,
        video_embed: row.try_get(at + 14)?,
        is_public: row.try_get(at + 15)?,
        published: row.try_get(at + 16)?,
        created_at: row.try_get(at + 17)?,
        updated_at: row.try_get(at + 18)?,
        thumbnail_placeholder: row.try_get(at + 19)?,
        media: Media {
            duration_ms: opt_u64(20, "duration")?,
            sample_rate: opt_u32(21, "sample rate")?,
            channels: row
                .try_get::<_, Option<i64>>(at + 22)?
                .map(|v| u8::try_from(v).map_err(|_| Failure::invalid("channels", v.to_string())))
                .transpose()?,
            bitrate: opt_u32(23, "bit rate")?,
            video_codec: row.try_get(at + 24)?,
        },
        tags: row.try_get(at + 25)?,
        checksum_sha256: row
            .try_get::<_, Option<Vec<u8>>>(at + 26)?
            .map(|b| {
                <[u8; 32]>::try_from(b.as_slice()).map_err(|_| {
                    Failure::invalid("checksum", format!("{} bytes instead of 32", b.len()))
                })
            })
            .transpose()?,
        workspace_id: row.try_get(at + 27)?,
        download_count: to_u64("download count", downloads.unwrap_or(0))?,
    })
}

/// How often an insert takes a new number after the one it took was found taken. A number is
/// taken only by an asset older than the counter (the fallback then picks the first free one
/// and moves the counter past it) or after a crash lost the counter's last numbers: the bound
/// is there against a bug, not against contention.
const SLUG_TRIES: usize = 1_000;

/// How [`insert_sql`] gets the new asset's slug.
#[derive(Debug, Clone)]
enum SlugPick {
    /// `$4` as given.
    Given,
    /// `$4` when free, else the first free `$4-N` (N from 2), scanning the taken ones.
    FirstFree,
    /// `$4` when free, else this slug (`$41`: a number just taken from the slug's counter).
    GivenOr(String),
}

/// The statement inserting an asset with its counter row and returning it as stored; no row
/// when the slug it picked is taken in the asset's workspace (`ON CONFLICT ... DO NOTHING`).
fn insert_sql(s: &str, pick: &SlugPick, event: &EventParams) -> String {
    let pick = match pick {
        SlugPick::Given => "SELECT $4::text AS slug".to_owned(),
        SlugPick::FirstFree => format!(
            "WITH taken AS ( \
                 SELECT slug FROM {s}.assets \
                 WHERE coalesce(workspace_id, '') = coalesce($38, '') \
                     AND (slug = $4 OR (slug >= $20 AND slug < $4 || '.')) \
             ) \
             SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM taken WHERE slug = $4) THEN $4 \
             ELSE (SELECT $4 || '-' || n FROM generate_series(2::bigint, \
                       (SELECT count(*) FROM taken) + 2) AS n \
                   WHERE NOT EXISTS (SELECT 1 FROM taken WHERE slug = $4 || '-' || n) \
                   ORDER BY n LIMIT 1) END AS slug"
        ),
        SlugPick::GivenOr(_) => format!(
            "SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM {s}.assets \
                 WHERE coalesce(workspace_id, '') = coalesce($38, '') AND slug = $4) \
             THEN $4 ELSE $41::text END AS slug"
        ),
    };
    format!(
        "WITH pick AS ({pick}), ins AS ( \
             INSERT INTO {s}.assets (id, title, title_lower, slug, description, \
                 description_lower, asset_type, file_path, file_size, mime_type, \
                 thumbnail_path, page_count, word_count, width, height, external_url, \
                 video_embed, is_public, published, created_at, updated_at, \
                 thumbnail_placeholder, duration_ms, sample_rate, channels, bitrate, \
                 video_codec, tags, tag_keys, checksum_sha256, workspace_id, search_words) \
             VALUES ($1, $2, $3, (SELECT slug FROM pick), $5, $6, $7, $8, $9, $10, $11, \
                 $12, $13, $14, $15, $16, $17, $18, $19, $21, $22, $24, $25, $26, $27, $28, \
                 $29, $35, $36, $37, $38, $40::text::tsvector) \
             ON CONFLICT ((coalesce(workspace_id, '')), slug) DO NOTHING \
             RETURNING {cols} \
         ), counter AS ( \
             INSERT INTO {s}.asset_counters (asset_id, download_count) \
             SELECT id, $23::bigint FROM ins \
         ), logged AS ({log}) \
         SELECT {cols}, $23::bigint, $20::text FROM ins",
        cols = asset_cols(""),
        log = crate::events::log_rows_sql(
            s,
            event,
            "ins",
            crate::events::At {
                first: 30,
                workspace: 39
            }
        ),
    )
}

/// `text` as an SQL string literal (quotes doubled; backslashes are plain characters under
/// `standard_conforming_strings`, on since PostgreSQL 9.1).
fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// What an insert of one asset writes, owned so that a shared transaction can run it (and
/// run it again alone after a rollback).
struct InsertAttempt {
    schema: String,
    asset: Asset,
    p: AssetParams,
    downloads: i64,
    /// The slug followed by `-`: where its numbered forms start.
    suffixed: String,
    event: EventParams,
}

impl InsertAttempt {
    /// The insert with the slug `slug` picked as `pick`, on `client`: the asset as stored, or
    /// `None` when the slug is taken.
    async fn run(
        &self,
        client: &ClientWrapper,
        pick: &SlugPick,
        slug: &str,
    ) -> Result<Option<Asset>, StoreError> {
        let stmt = client
            .prepare_cached(&insert_sql(&self.schema, pick, &self.event))
            .await
            .map_err(Failure::from)?;
        let (asset, p) = (&self.asset, &self.p);
        let logged = self.event.per_row();
        let params: [&(dyn ToSql + Sync); 40] = [
            &asset.id,
            &asset.title,
            &p.title_lower,
            &slug,
            &asset.description,
            &p.description_lower,
            &p.asset_type,
            &asset.file_path,
            &p.file_size,
            &asset.mime_type,
            &asset.thumbnail_path,
            &p.page_count,
            &p.word_count,
            &p.width,
            &p.height,
            &asset.external_url,
            &asset.video_embed,
            &asset.is_public,
            &asset.published,
            &self.suffixed,
            &asset.created_at,
            &asset.updated_at,
            &self.downloads,
            &asset.thumbnail_placeholder,
            &p.duration_ms,
            &p.sample_rate,
            &p.channels,
            &p.bitrate,
            &asset.media.video_codec,
            logged[0],
            logged[1],
            logged[2],
            logged[3],
            logged[4],
            &asset.tags,
            &p.tag_keys,
            &p.checksum,
            &asset.workspace_id,
            logged[5],
            &p.search_words,
        ];
        let with_or;
        let params: &[&(dyn ToSql + Sync)] = match pick {
            SlugPick::GivenOr(or) => {
                with_or = [&params[..], &[or]].concat();
                &with_or
            }
            SlugPick::Given | SlugPick::FirstFree => &params,
        };
        match client.query_opt(&stmt, params).await {
            Ok(Some(row)) => Ok(Some(asset_from_row(&row, 0)?)),
            Ok(None) => Ok(None),
            Err(e) if unique_violation(&e) == Some("assets_pkey") => Err(duplicate_id(asset.id)),
            Err(e) => Err(StoreError::from(Failure::from(e))),
        }
    }
}

impl PgStore {
    pub(crate) async fn get_asset_impl(&self, id: Uuid) -> Result<Option<Asset>, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "SELECT {}, c.download_count FROM {s}.assets a \
             JOIN {s}.asset_counters c ON c.asset_id = a.id WHERE a.id = $1",
            asset_cols("a.")
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query_opt(&stmt, &[&id])
            .await?
            .map(|row| asset_from_row(&row, 0))
            .transpose()
    }

    pub(crate) async fn get_assets_impl(&self, ids: &[Uuid]) -> Result<Vec<Asset>, Failure> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let s = &self.schema.q;
        let sql = format!(
            "SELECT {}, c.download_count FROM {s}.assets a \
             JOIN {s}.asset_counters c ON c.asset_id = a.id WHERE a.id = ANY($1)",
            asset_cols("a.")
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query(&stmt, &[&ids])
            .await?
            .iter()
            .map(|row| asset_from_row(row, 0))
            .collect()
    }

    pub(crate) async fn insert_asset_impl(
        &self,
        asset: Asset,
        log: &Log,
    ) -> Result<Asset, StoreError> {
        let event = one_event(log, Written::AssetCreated(&asset))?;
        let attempt = Arc::new(InsertAttempt {
            p: AssetParams::new(&asset, self.words)?,
            downloads: to_i64("download count", asset.download_count)?,
            // Every slug starting with `wanted-` lies in [`wanted-`, `wanted.`) in byte order
            // (the slug column is `COLLATE "C"`): a range the unique index answers in any plan.
            suffixed: format!("{}-", asset.slug),
            schema: self.schema.q.clone(),
            asset,
            event,
        });
        let base = attempt.asset.slug.clone();
        let counter = crate::slugs::counter_base(attempt.asset.workspace_id.as_deref(), &base);
        // The slug as wanted, when no asset has it; a slug found taken lately goes straight
        // to its next number (below), which still takes the slug itself if it is free.
        if !self.taken_slugs.holds(&counter) {
            if let Some(stored) = self
                .try_insert(&attempt, SlugPick::Given, base.clone())
                .await?
            {
                return Ok(stored);
            }
            self.taken_slugs.add(&counter);
        }
        for _ in 0..SLUG_TRIES {
            // The base's next number, taken in a statement of its own that waits for no other
            // insert's commit.
            let n = self
                .next_slug_number(&*self.client().await?, &counter)
                .await?;
            let numbered = format!("{base}-{n}");
            if let Some(stored) = self
                .try_insert(&attempt, SlugPick::GivenOr(numbered), base.clone())
                .await?
            {
                return Ok(stored);
            }
            // Taken by an asset older than the counter, or after a crash lost the counter's
            // last numbers: the first free number, and the counter moved past it.
            if let Some(stored) = self
                .try_insert(&attempt, SlugPick::FirstFree, base.clone())
                .await?
            {
                let taken = stored
                    .slug
                    .strip_prefix(&attempt.suffixed)
                    .and_then(|n| n.parse::<i64>().ok());
                if let Some(n) = taken {
                    self.raise_slug_number(&*self.client().await?, &counter, n)
                        .await?;
                }
                return Ok(stored);
            }
        }
        Err(Failure::SlugContention(base).into())
    }

    /// One insert of `attempt` with the slug `slug` picked as `pick`, in the next shared
    /// transaction of inserts ([`crate::batch`]): the asset as stored, or `None` when the slug
    /// is taken.
    async fn try_insert(
        &self,
        attempt: &Arc<InsertAttempt>,
        pick: SlugPick,
        slug: String,
    ) -> Result<Option<Asset>, StoreError> {
        let attempt = Arc::clone(attempt);
        let work = batch::work(move |client| {
            let (attempt, pick, slug) = (Arc::clone(&attempt), pick.clone(), slug.clone());
            Box::pin(async move { attempt.run(client, &pick, &slug).await })
        });
        self.inserts.run(&self.pool, work).await
    }

    /// The next number of slug `base` (2 the first time), from its counter in
    /// `slug_counters`: one statement that commits at once with `synchronous_commit = off`
    /// (a number lost in a crash is found taken and skipped), so inserts of one title wait
    /// for each other's counter update only, never for each other's commit.
    async fn next_slug_number(
        &self,
        client: &tokio_postgres::Client,
        base: &str,
    ) -> Result<i64, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "INSERT INTO {s}.slug_counters AS c (base, last) VALUES ({base}, 2) \
             ON CONFLICT (base) DO UPDATE SET last = c.last + 1 RETURNING last",
            base = quote_literal(base)
        );
        match counter_update(client, &sql).await?.as_deref() {
            Some([last]) => last
                .parse()
                .map_err(|_| Failure::invalid("slug number", last.clone())),
            _ => Err(Failure::Protocol("a slug counter without its number")),
        }
    }

    /// Moves the counter of slug `base` to at least `n`.
    async fn raise_slug_number(
        &self,
        client: &tokio_postgres::Client,
        base: &str,
        n: i64,
    ) -> Result<(), Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "INSERT INTO {s}.slug_counters AS c (base, last) VALUES ({base}, {n}) \
             ON CONFLICT (base) DO UPDATE SET last = greatest(c.last, EXCLUDED.last) \
             RETURNING last",
            base = quote_literal(base)
        );
        counter_update(client, &sql).await.map(|_| ())
    }

    /// The sum of the `asset_versions` shards, which every asset write and download count
    /// moves (migration 5's triggers).
    pub(crate) async fn assets_version_impl(&self) -> Result<u64, Failure> {
        let s = &self.schema.q;
        let sql = format!("SELECT sum(version)::bigint FROM {s}.asset_versions");
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        let row = client.query_one(&stmt, &[]).await?;
        let version: i64 = row.try_get(0)?;
        u64::try_from(version)
            .map_err(|_| Failure::invalid("assets version", format!("{version} is negative")))
    }
}

#[async_trait]
impl AssetStore for PgStore {
    async fn list_assets(&self, query: &AssetQuery) -> Result<Page<Asset>, StoreError> {
        let _gate = self.counters.read().await;
        let mut page = self.list_assets_impl(query).await?;
        self.counters.add_downloads(&mut page.items);
        Ok(page)
    }

    async fn get_asset(&self, id: Uuid) -> Result<Option<Asset>, StoreError> {
        let _gate = self.counters.read().await;
        let mut asset = self.get_asset_impl(id).await?;
        self.counters.add_downloads(&mut asset);
        Ok(asset)
    }

    async fn get_assets(&self, ids: &[Uuid]) -> Result<Vec<Asset>, StoreError> {
        let _gate = self.counters.read().await;
        let mut assets = self.get_assets_impl(ids).await?;
        self.counters.add_downloads(&mut assets);
        Ok(assets)
    }

    async fn insert_asset(&self, asset: Asset, log: &Log) -> Result<Asset, StoreError> {
        let stored = self.insert_asset_impl(asset, log).await?;
        self.replica.assets_changed([stored.id]);
        Ok(stored)
    }

    async fn update_asset(
        &self,
        id: Uuid,
        change: &AssetChange,
        log: &Log,
    ) -> Result<Option<AssetUpdate>, StoreError> {
        let _gate = self.counters.read().await;
        let update = self
            .update_asset_impl(id, change, log)
            .await?
            .map_err(|reason| StoreError::Refused { id, reason })?;
        Ok(update.map(|(mut u, holders)| {
            self.replica.assets_updated([&u], Some(&holders));
            self.counters.add_downloads([&mut u.before, &mut u.after]);
            u
        }))
    }

    async fn delete_asset(
        &self,
        id: Uuid,
        force: bool,
        log: &Log,
    ) -> Result<AssetDeletion, StoreError> {
        let _gate = self.counters.read().await;
        let mut deletion = self.delete_asset_impl(id, force, log).await?;
        if let AssetDeletion::Deleted(asset) = &mut deletion {
            self.replica.libraries_changed([id]);
            self.counters.add_downloads([&mut *asset]);
            self.counters.forget_asset(id);
        }
        Ok(deletion)
    }

    async fn update_assets(
        &self,
        ids: &[Uuid],
        change: &AssetChange,
        log: &Log,
    ) -> Result<BulkOutcome<AssetUpdate>, StoreError> {
        let _gate = self.counters.read().await;
        let mut outcome = self.update_assets_impl(ids, change, log).await?;
        if let BulkOutcome::Done(updates) = &mut outcome {
            self.replica.assets_updated(updates.iter(), None);
            self.counters.add_downloads(
                updates
                    .iter_mut()
                    .flat_map(|u| [&mut u.before, &mut u.after]),
            );
        }
        Ok(outcome)
    }

    async fn delete_assets(
        &self,
        ids: &[Uuid],
        force: bool,
        log: &Log,
    ) -> Result<BulkOutcome<Asset>, StoreError> {
        let _gate = self.counters.read().await;
        let mut outcome = self.delete_assets_impl(ids, force, log).await?;
        if let BulkOutcome::Done(gone) = &mut outcome
            && !gone.is_empty()
        {
            self.replica.libraries_changed(gone.iter().map(|a| a.id));
            self.counters.add_downloads(gone.iter_mut());
            for asset in gone.iter() {
                self.counters.forget_asset(asset.id);
            }
        }
        Ok(outcome)
    }

    async fn list_tags(&self, limit: u32) -> Result<Vec<TagCount>, StoreError> {
        Ok(self.list_tags_impl(limit).await?)
    }

    async fn asset_usage(&self, id: Uuid) -> Result<Vec<LibraryUse>, StoreError> {
        Ok(self.asset_usage_impl(id).await?)
    }

    async fn record_download(&self, id: Uuid) -> Result<(), StoreError> {
        self.counting();
        self.counters.download(id);
        // A download count is shown, not sorted or filtered by: no list moves.
        self.replica.downloads_counted([id]);
        Ok(())
    }

    async fn assets_version(&self) -> Result<u64, StoreError> {
        if let Some(version) = self.replica.assets_version() {
            return Ok(version);
        }
        let db = self.assets_version_impl().await?;
        Ok(self.replica.assets_version_at(db))
    }

    async fn asset_version(&self, id: Uuid) -> Result<u64, StoreError> {
        if let Some(version) = self.replica.asset_version(id) {
            return Ok(version);
        }
        let db = self.assets_version_impl().await?;
        Ok(self.replica.asset_version_at(db, id))
    }

    async fn list_version(&self, query: &AssetQuery) -> Result<Option<u64>, StoreError> {
        Ok(self.replica.list_version(query))
    }
}
