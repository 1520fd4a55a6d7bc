//! Library passes: insert, lookup by hash or id, one library's list, revoke, the spend of a
//! download (exact across replicas), and how the published libraries holding an asset sell it.

use assetlib_core::events::{Log, Written};
use assetlib_core::{Holders, LibraryPass, Page, PassSpend, PassStore, StoreError, async_trait};
use chrono::{DateTime, Utc};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use uuid::Uuid;

use crate::events::{At, log_rows_sql, one_event, then_logged};

use crate::error::{
    Failure, duplicate_id, duplicate_key_hash, foreign_key_violation, unique_violation,
    unknown_library,
};
use crate::store::{PgStore, columns, to_i64, to_u64};

/// The columns [`pass_from_row`] decodes, in order.
const PASS_COLUMNS: [&str; 10] = [
    "id",
    "library_id",
    "token_hash",
    "label",
    "expires_at",
    "max_downloads",
    "downloads_used",
    "asset_ids",
    "created_at",
    "revoked_at",
];

/// How many times [`PgStore::spend_pass_impl`] runs its statement before it gives up. Each
/// run but the last found its snapshot overtaken by a concurrent change (see there), which
/// the next run's snapshot holds; so two runs always decide.
const SPEND_TRIES: usize = 3;

/// The pass columns, each prefixed with `p`.
pub(crate) fn pass_cols(p: &str) -> String {
    columns(p, &PASS_COLUMNS)
}

/// Decodes the columns of [`pass_cols`] starting at `at`.
pub(crate) fn pass_from_row(row: &Row, at: usize) -> Result<LibraryPass, Failure> {
    let hash: Vec<u8> = row.try_get(at + 2)?;
    let token_hash: [u8; 32] = hash
        .as_slice()
        .try_into()
        .map_err(|_| Failure::invalid("pass hash", format!("{} bytes, not 32", hash.len())))?;
    let max_downloads = row
        .try_get::<_, Option<i64>>(at + 5)?
        .map(|n| to_u64("pass download limit", n))
        .transpose()?;
    Ok(LibraryPass {
        id: row.try_get(at)?,
        library_id: row.try_get(at + 1)?,
        token_hash,
        label: row.try_get(at + 3)?,
        expires_at: row.try_get(at + 4)?,
        max_downloads,
        downloads_used: to_u64("pass downloads", row.try_get(at + 6)?)?,
        asset_ids: row.try_get(at + 7)?,
        created_at: row.try_get(at + 8)?,
        revoked_at: row.try_get(at + 9)?,
    })
}

impl PgStore {
    pub(crate) async fn insert_pass_impl(
        &self,
        pass: LibraryPass,
        log: &Log,
    ) -> Result<(), StoreError> {
        let s = &self.schema.q;
        let event = one_event(log, Written::PassCreated(&pass))?;
        let sql = format!(
            "WITH p AS (INSERT INTO {s}.passes ({}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id) {}",
            pass_cols(""),
            log_rows_sql(s, &event, "p", At::from(11))
        );
        let max_downloads = pass
            .max_downloads
            .map(|n| to_i64("pass download limit", n))
            .transpose()?;
        let used = to_i64("pass downloads", pass.downloads_used)?;
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await.map_err(Failure::from)?;
        let result = client
            .execute(
                &stmt,
                &then_logged(
                    [
                        &pass.id,
                        &pass.library_id,
                        &&pass.token_hash[..],
                        &pass.label,
                        &pass.expires_at,
                        &max_downloads,
                        &used,
                        &pass.asset_ids,
                        &pass.created_at,
                        &pass.revoked_at,
                    ],
                    &event,
                ),
            )
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e) => Err(match unique_violation(&e) {
                Some("passes_pkey") => duplicate_id(pass.id),
                Some("passes_token_hash_key") => duplicate_key_hash(),
                _ => match foreign_key_violation(&e) {
                    Some("passes_library_id_fkey") => unknown_library(pass.library_id),
                    _ => Failure::from(e).into(),
                },
            }),
        }
    }

    /// The pass whose `column` (`token_hash` or `id`, each under a unique index) is `value`.
    async fn pass_by(
        &self,
        column: &'static str,
        value: &(dyn ToSql + Sync),
    ) -> Result<Option<LibraryPass>, Failure> {
        let s = &self.schema.q;
        let sql = format!(
            "SELECT {} FROM {s}.passes WHERE {column} = $1",
            pass_cols("")
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query_opt(&stmt, &[value])
            .await?
            .map(|row| pass_from_row(&row, 0))
            .transpose()
    }

    pub(crate) async fn list_passes_impl(
        &self,
        library_id: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<LibraryPass>, Failure> {
        let s = &self.schema.q;
        let params: Vec<Box<dyn ToSql + Sync + Send>> = vec![
            Box::new(library_id),
            Box::new(i64::from(limit)),
            Box::new(i64::try_from(offset).unwrap_or(i64::MAX)),
        ];
        // Both read `passes_library_created_idx`: the count its library's prefix, the page in
        // index order.
        let sql = format!(
            "WITH m AS (SELECT count(*) AS n FROM {s}.passes WHERE library_id = $1) \
             SELECT m.n, {out} FROM m LEFT JOIN LATERAL ( \
                 SELECT {cols} FROM {s}.passes WHERE library_id = $1 \
                 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3 \
             ) p ON true \
             ORDER BY p.created_at DESC, p.id DESC",
            out = pass_cols("p."),
            cols = pass_cols(""),
        );
        self.query_page(&sql, &params, "pass count", |row| pass_from_row(row, 1))
            .await
    }

    pub(crate) async fn revoke_pass_impl(
        &self,
        id: Uuid,
        at: DateTime<Utc>,
        log: &Log,
    ) -> Result<bool, Failure> {
        self.revoke_once("passes", id, at, one_event(log, Written::PassRevoked(id))?)
            .await
    }

    /// One statement: the `UPDATE` that spends a download when the pass may make one, and,
    /// when it spends none, the pass as the statement's snapshot holds it, to tell why.
    ///
    /// The `UPDATE` is exact: a concurrent spend (from any connection or replica) holds the
    /// row until it commits, then this one checks its conditions again on the row as that
    /// spend left it (READ COMMITTED), so no two spends take the same download and none is
    /// lost. The row it reads otherwise comes from the snapshot taken as the statement
    /// began: when that row could still make a download, a change committed since (a spend
    /// taking the last download, a revocation, a delete) made the `UPDATE` refuse, and the
    /// statement runs again with a newer snapshot. A pass only ever moves towards refusal
    /// (its count grows, a revocation stays, a delete is for good; its expiry and limit never
    /// change), so the second run decides.
    ///
    /// The commit uses the connection's normal `synchronous_commit`: the count is a limit,
    /// durable before the answer, unlike the view and download counters.
    pub(crate) async fn spend_pass_impl(
        &self,
        id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<PassSpend, Failure> {
        let s = &self.schema.q;
        // Columns: whether this spent one, whether the pass is live at `now` (compared in
        // SQL, as the `UPDATE` compares), then the pass.
        let sql = format!(
            "WITH spent AS ( \
                 UPDATE {s}.passes SET downloads_used = downloads_used + 1 \
                 WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2 \
                     AND (max_downloads IS NULL OR downloads_used < max_downloads) \
                 RETURNING {cols} \
             ) \
             SELECT true, true, {cols} FROM spent \
             UNION ALL \
             SELECT false, revoked_at IS NULL AND expires_at > $2, {cols} FROM {s}.passes \
             WHERE id = $1 AND NOT EXISTS (SELECT FROM spent)",
            cols = pass_cols(""),
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        for _ in 0..SPEND_TRIES {
            let Some(row) = client.query_opt(&stmt, &[&id, &now]).await? else {
                return Ok(PassSpend::Dead);
            };
            let (spent, live): (bool, bool) = (row.try_get(0)?, row.try_get(1)?);
            let pass = pass_from_row(&row, 2)?;
            if spent {
                return Ok(PassSpend::Spent(pass));
            }
            if !live {
                return Ok(PassSpend::Dead);
            }
            if pass.is_exhausted() {
                return Ok(PassSpend::Exhausted);
            }
            // Overtaken by a concurrent change: once more, with a snapshot that holds it.
        }
        Err(Failure::Protocol(
            "a pass that could make a download refused it repeatedly",
        ))
    }

    pub(crate) async fn published_holders_impl(
        &self,
        asset_ids: &[Uuid],
    ) -> Result<Vec<Holders>, Failure> {
        if asset_ids.is_empty() {
            return Ok(Vec::new());
        }
        let s = &self.schema.q;
        // The entries of these assets (index `library_entries_asset_idx`), each joined to its
        // library by the primary key.
        let sql = format!(
            "SELECT e.asset_id, bool_or(l.is_paid), bool_or(NOT l.is_paid) \
             FROM {s}.library_entries e JOIN {s}.libraries l ON l.id = e.library_id \
             WHERE e.asset_id = ANY($1) AND l.published \
             GROUP BY e.asset_id"
        );
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await?;
        client
            .query(&stmt, &[&asset_ids])
            .await?
            .iter()
            .map(|row| {
                Ok(Holders {
                    asset_id: row.try_get(0)?,
                    paid: row.try_get(1)?,
                    free: row.try_get(2)?,
                })
            })
            .collect()
    }
}

#[async_trait]
impl PassStore for PgStore {
    async fn insert_pass(&self, pass: LibraryPass, log: &Log) -> Result<(), StoreError> {
        self.insert_pass_impl(pass, log).await
    }

    async fn find_pass(&self, token_hash: &[u8; 32]) -> Result<Option<LibraryPass>, StoreError> {
        Ok(self.pass_by("token_hash", &&token_hash[..]).await?)
    }

    async fn get_pass(&self, id: Uuid) -> Result<Option<LibraryPass>, StoreError> {
        Ok(self.pass_by("id", &id).await?)
    }

    async fn list_passes(
        &self,
        library_id: Uuid,
        offset: u64,
        limit: u32,
    ) -> Result<Page<LibraryPass>, StoreError> {
        Ok(self.list_passes_impl(library_id, offset, limit).await?)
    }

    async fn revoke_pass(
        &self,
        id: Uuid,
        at: DateTime<Utc>,
        log: &Log,
    ) -> Result<bool, StoreError> {
        Ok(self.revoke_pass_impl(id, at, log).await?)
    }

    async fn spend_pass(&self, id: Uuid, now: DateTime<Utc>) -> Result<PassSpend, StoreError> {
        Ok(self.spend_pass_impl(id, now).await?)
    }
}

impl PgStore {
    /// What [`assetlib_core::LibraryStore::published_holders`] answers.
    pub(crate) async fn holders_of(&self, asset_ids: &[Uuid]) -> Result<Vec<Holders>, StoreError> {
        Ok(self.published_holders_impl(asset_ids).await?)
    }
}
