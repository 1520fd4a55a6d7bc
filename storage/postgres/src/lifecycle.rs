//! The asset lifecycle: the change and the delete of one asset ([`PgStore::update_asset_impl`],
//! [`PgStore::delete_asset_impl`]), the libraries holding an asset
//! ([`PgStore::asset_usage_impl`]), the lock a library write takes on the assets it places
//! ([`lock_placed_assets`]), and the statements these share with the changes and deletes of
//! several assets at once, which are in [`crate::bulk`]. The lock order below holds for both.
//!
//! # Locks
//!
//! Every transaction that writes more than one of these takes its row locks in one order, so
//! two never wait on each other in opposite orders (READ COMMITTED, PostgreSQL's default):
//!
//! 1. the library write lock (advisory, one per workspace and family of slugs; only a
//!    library write that found its slug taken on the unique index runs again under it);
//! 2. assets, in id order: `FOR UPDATE` by a change or a delete (of one asset, or of all the
//!    assets of a bulk change in one statement), `FOR KEY SHARE` by a library write (the
//!    assets it places);
//! 3. libraries rows, in id order (`FOR KEY SHARE` by a delete, so that it and a
//!    [`delete_library`](PgStore::delete_library_impl), whose cascades lock the library's
//!    counter and entries, meet at the library row first);
//! 4. library counters, in id order (the content versions; a bulk change moves those of every
//!    asset it writes in one statement, before its first asset is written);
//! 5. asset counter rows, in id order (a delete; the counters' flush locks them after the
//!    library counters too);
//! 6. the shard's gate, its `asset_versions` row (migration 14), which the first trigger of
//!    a transaction's first asset write takes;
//! 7. library entries and tag rows (`asset_tags`) of the assets locked, which the triggers
//!    rewrite (a delete removes the asset's entries before its triggers run): only a
//!    transaction holding their asset, or a library write or delete (which takes no gate),
//!    locks them;
//! 8. the list and tag counts of the shard, which the triggers change as a statement ends,
//!    always after the gate. A transaction that writes several assets changes counts between
//!    one asset's statement and the next; the gate keeps two transactions of one shard from
//!    waiting on each other's count rows in opposite orders.
//!
//! Passes come after their library: a [`delete_library`](PgStore::delete_library_impl)
//! locks the library row, then its passes by the cascade; an insert of a pass locks its
//! library `FOR KEY SHARE` (the foreign key check) and nothing else; a spend or a revocation
//! locks the one pass and nothing else (it changes no key column, so the foreign key takes no
//! lock).
//!
//! Each entry keeps a copy of its asset's page fields (title, description, type, thumbnail,
//! `published`; schema version 6; and its tags, version 14), which a trigger on `assets` rewrites as the asset's
//! `UPDATE` runs. A change locks its asset `FOR UPDATE` before that, which waits for every
//! library write holding the asset `FOR KEY SHARE` to commit, and a library write copies the
//! fields after its lock was granted: so the trigger's statement sees every entry written
//! before the change, and a write after it copies the changed asset.
//!
//! A library write holds its assets' key-share locks until it commits, and a delete reads the
//! holders in a statement after its `FOR UPDATE` lock was granted (so with a snapshot taken
//! after the write committed): a write racing a delete either places the asset and the delete
//! sees the library, or finds the asset gone and fails with
//! [`StoreError::UnknownAsset`](assetlib_core::StoreError::UnknownAsset).

use assetlib_core::events::{Log, Written};
use assetlib_core::store::rules::first_free_slug;
use assetlib_core::{
    Asset, AssetChange, AssetDeletion, AssetUpdate, ChangeRefused, LibraryUse, StoreError, may_hold,
};
use deadpool_postgres::Transaction;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Row, Statement};
use uuid::Uuid;

use crate::asset_params::AssetParams;
use crate::assets::{asset_cols, asset_from_row};
use crate::error::{Failure, unique_violation, unknown_asset};
use crate::events::{EventParams, one_event};
use crate::store::{PgStore, to_u64};

/// Whether a statement is about one asset (`$1` an id) or several (`$1` an array of ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Of {
    One,
    Many,
}

impl Of {
    /// The condition that `column` is the asset, or one of the assets, of `$1`.
    fn matches(self, column: &str) -> String {
        match self {
            Of::One => format!("{column} = $1"),
            Of::Many => format!("{column} = ANY($1)"),
        }
    }
}

/// The statement that gives every library holding the asset(s) `$1` a new content version,
/// locking the counters in id order first; with `lock_libraries`, the libraries rows before
/// them (`FOR KEY SHARE`, in id order). It returns the libraries' ids.
pub(crate) fn bump_holders_sql(s: &str, lock_libraries: bool, of: Of) -> String {
    let held = of.matches("e.asset_id");
    let holders = if lock_libraries {
        format!(
            "SELECT l.id FROM {s}.libraries l \
             WHERE l.id IN (SELECT e.library_id FROM {s}.library_entries e WHERE {held}) \
             ORDER BY l.id FOR KEY SHARE"
        )
    } else {
        format!("SELECT e.library_id FROM {s}.library_entries e WHERE {held}")
    };
    format!(
        "WITH h AS ( \
             SELECT k.library_id FROM {s}.library_counters k \
             WHERE k.library_id IN ({holders}) \
             ORDER BY k.library_id FOR UPDATE \
         ) \
         UPDATE {s}.library_counters k SET content_version = nextval('{s}.content_versions') \
         FROM h WHERE k.library_id = h.library_id RETURNING k.library_id"
    )
}

/// The statement reading the asset(s) `$1` with their download counts, locked `FOR UPDATE`
/// in id order until the transaction ends; no row for an asset there is none of (or that was
/// deleted while this waited for the lock).
pub(crate) fn lock_asset_sql(s: &str, of: Of) -> String {
    let order = match of {
        Of::One => "",
        Of::Many => " ORDER BY a.id",
    };
    format!(
        "SELECT {}, c.download_count FROM {s}.assets a \
         JOIN {s}.asset_counters c ON c.asset_id = a.id WHERE {}{order} FOR UPDATE OF a",
        asset_cols("a."),
        of.matches("a.id"),
    )
}

/// The statements a change of one asset, or of several ([`Of`]), runs: the lock, the
/// holders' new content versions, the write and the event.
pub(crate) struct ChangeStatements {
    /// [`lock_asset_sql`].
    pub(crate) lock: Statement,
    /// [`bump_holders_sql`], the libraries rows left unlocked.
    pub(crate) bump: Statement,
    /// [`write_sql`].
    pub(crate) write: Statement,
    /// The event's insert.
    pub(crate) append: Statement,
}

impl ChangeStatements {
    /// The statements for schema `s`, prepared (or found in the cache) together on `tx`.
    pub(crate) async fn prepare(
        tx: &Transaction<'_>,
        s: &str,
        of: Of,
    ) -> Result<Self, tokio_postgres::Error> {
        let (lock, bump, write, append) = (
            lock_asset_sql(s, of),
            bump_holders_sql(s, false, of),
            write_sql(s),
            crate::events::insert_sql(s),
        );
        let (lock, bump, write, append) = tokio::try_join!(
            tx.prepare_cached(&lock),
            tx.prepare_cached(&bump),
            tx.prepare_cached(&write),
            tx.prepare_cached(&append)
        )?;
        Ok(ChangeStatements {
            lock,
            bump,
            write,
            append,
        })
    }
}

/// The statement writing an asset's fields (`$1` its id, then [`write_values`]) and returning
/// it as stored, with its download count.
fn write_sql(s: &str) -> String {
    format!(
        "WITH u AS ( \
             UPDATE {s}.assets SET title = $2, title_lower = $3, description = $4, \
                 description_lower = $5, file_path = $6, file_size = $7, mime_type = $8, \
                 thumbnail_path = $9, page_count = $10, word_count = $11, width = $12, \
                 height = $13, external_url = $14, video_embed = $15, is_public = $16, \
                 published = $17, updated_at = $18, thumbnail_placeholder = $19, \
                 duration_ms = $20, sample_rate = $21, channels = $22, bitrate = $23, \
                 video_codec = $24, tags = $25, tag_keys = $26, checksum_sha256 = $27, \
                 search_words = $28::text::tsvector \
             WHERE id = $1 RETURNING {cols} \
         ) \
         SELECT {ucols}, c.download_count FROM u \
         JOIN {s}.asset_counters c ON c.asset_id = u.id",
        cols = asset_cols(""),
        ucols = asset_cols("u."),
    )
}

/// The values of [`write_sql`] for `next`, whose SQL values are `p`.
pub(crate) fn write_values<'a>(
    next: &'a Asset,
    p: &'a AssetParams,
) -> [&'a (dyn ToSql + Sync); 28] {
    [
        &next.id,
        &next.title,
        &p.title_lower,
        &next.description,
        &p.description_lower,
        &next.file_path,
        &p.file_size,
        &next.mime_type,
        &next.thumbnail_path,
        &p.page_count,
        &p.word_count,
        &p.width,
        &p.height,
        &next.external_url,
        &next.video_embed,
        &next.is_public,
        &next.published,
        &next.updated_at,
        &next.thumbnail_placeholder,
        &p.duration_ms,
        &p.sample_rate,
        &p.channels,
        &p.bitrate,
        &next.media.video_codec,
        &next.tags,
        &p.tag_keys,
        &p.checksum,
        &p.search_words,
    ]
}

/// The statement deleting asset `$1` with its entries and counter row, returning the
/// download count deleted.
pub(crate) fn delete_sql(s: &str) -> String {
    format!(
        "WITH e AS (DELETE FROM {s}.library_entries WHERE asset_id = $1), \
         c AS (DELETE FROM {s}.asset_counters WHERE asset_id = $1 RETURNING download_count) \
         DELETE FROM {s}.assets WHERE id = $1 RETURNING (SELECT download_count FROM c)"
    )
}

/// The statement listing the libraries holding asset `$1`, newest `created_at` first, then
/// by id descending (through `library_entries_asset_idx`), as [`usage_from_rows`] decodes;
/// for several assets (`$1` an array), each row led by its asset's id, the assets in id order.
pub(crate) fn usage_sql(s: &str, of: Of) -> String {
    let (asset, by_asset) = match of {
        Of::One => ("", ""),
        Of::Many => ("e.asset_id, ", "e.asset_id, "),
    };
    format!(
        "SELECT {asset}l.id, l.title, l.slug, l.published FROM {s}.library_entries e \
         JOIN {s}.libraries l ON l.id = e.library_id \
         WHERE {} ORDER BY {by_asset}l.created_at DESC, l.id DESC",
        of.matches("e.asset_id")
    )
}

/// The library of a row of [`usage_sql`] whose columns start at `at`.
pub(crate) fn usage_from_row(r: &Row, at: usize) -> Result<LibraryUse, Failure> {
    Ok(LibraryUse {
        id: r.try_get(at)?,
        title: r.try_get(at + 1)?,
        slug: r.try_get(at + 2)?,
        published: r.try_get(at + 3)?,
    })
}

fn usage_from_rows(rows: &[Row]) -> Result<Vec<LibraryUse>, Failure> {
    rows.iter().map(|r| usage_from_row(r, 0)).collect()
}

/// Whether asset `id` (locked `FOR UPDATE` by `tx`) may move to workspace `to`: every library
/// holding it may hold it there. Its holders are read by a statement that starts after the
/// lock was granted, so with every library write that placed it before (see
/// [`lock_placed_assets`]).
async fn may_move(
    tx: &Transaction<'_>,
    s: &str,
    id: Uuid,
    to: Option<&str>,
) -> Result<bool, Failure> {
    let sql = format!(
        "SELECT DISTINCT l.workspace_id FROM {s}.library_entries e \
         JOIN {s}.libraries l ON l.id = e.library_id WHERE e.asset_id = $1"
    );
    let stmt = tx.prepare_cached(&sql).await?;
    for row in tx.query(&stmt, &[&id]).await? {
        let holder: Option<&str> = row.try_get(0)?;
        if !may_hold(holder, to) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// How often a move tries another slug when concurrent inserts take the one it picked.
const MOVE_ATTEMPTS: usize = 8;

/// Moves `next` (locked by `tx`) to its workspace, with `slug` there if it is free, else the
/// first free one of `slug-2`, `slug-3`, ...; returns the slug it took. The pick runs in a
/// savepoint, so a concurrent insert that takes it first only makes it pick again.
async fn move_asset(
    tx: &mut Transaction<'_>,
    s: &str,
    next: &Asset,
    slug: &str,
) -> Result<String, Failure> {
    // Every slug starting with `slug-` lies in [`slug-`, `slug.`) in byte order (the column
    // is `COLLATE "C"`).
    let taken_sql = format!(
        "SELECT slug FROM {s}.assets WHERE coalesce(workspace_id, '') = coalesce($1, '') \
             AND (slug = $2 OR (slug >= $2 || '-' AND slug < $2 || '.')) AND id <> $3"
    );
    let move_sql = format!("UPDATE {s}.assets SET workspace_id = $2, slug = $3 WHERE id = $1");
    let (taken_stmt, move_stmt) =
        tokio::try_join!(tx.prepare_cached(&taken_sql), tx.prepare_cached(&move_sql))?;
    let to = &next.workspace_id;
    for _ in 0..MOVE_ATTEMPTS {
        let taken: Vec<String> = tx
            .query(&taken_stmt, &[to, &slug, &next.id])
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?;
        let picked = first_free_slug(slug, |c| taken.iter().any(|t| t == c));
        let attempt = tx.savepoint("asset_move").await?;
        match attempt.execute(&move_stmt, &[&next.id, to, &picked]).await {
            Ok(_) => {
                attempt.commit().await?;
                return Ok(picked);
            }
            Err(e) if unique_violation(&e).is_some() => attempt.rollback().await?,
            Err(e) => return Err(e.into()),
        }
    }
    Err(Failure::SlugContention(slug.to_owned()))
}

/// Locks the assets `ids` `FOR KEY SHARE` in id order until `tx` ends, so none of them can be
/// deleted or moved to another workspace before it does; returns why the first of `ids` in
/// their order cannot be placed in a library of `workspace`, if one cannot: it does not exist
/// ([`StoreError::UnknownAsset`](assetlib_core::StoreError::UnknownAsset)), or it is of a
/// workspace such a library may not hold
/// ([`StoreError::AssetOfAnotherWorkspace`](assetlib_core::StoreError::AssetOfAnotherWorkspace),
/// as the lock found it: a move that commits first is seen).
pub(crate) async fn lock_placed_assets(
    tx: &Transaction<'_>,
    s: &str,
    ids: &[Uuid],
    workspace: Option<&str>,
) -> Result<Option<StoreError>, Failure> {
    if ids.is_empty() {
        return Ok(None);
    }
    let mut wanted = ids.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let sql = format!(
        "SELECT id, workspace_id FROM {s}.assets WHERE id = ANY($1) ORDER BY id FOR KEY SHARE"
    );
    let stmt = tx.prepare_cached(&sql).await?;
    let mut found: Vec<Uuid> = Vec::with_capacity(wanted.len());
    let mut foreign: Vec<Uuid> = Vec::new();
    for row in tx.query(&stmt, &[&wanted]).await? {
        let id: Uuid = row.try_get(0)?;
        let of: Option<&str> = row.try_get(1)?;
        if !may_hold(workspace, of) {
            foreign.push(id);
        }
        found.push(id);
    }
    let missing = first_missing(ids, &found);
    Ok(ids
        .iter()
        .find(|id| Some(**id) == missing || foreign.contains(id))
        .map(|&id| match Some(id) == missing {
            true => unknown_asset(id),
            false => StoreError::AssetOfAnotherWorkspace { id },
        }))
}

/// The first of `ids` not in `found` (which is sorted).
fn first_missing(ids: &[Uuid], found: &[Uuid]) -> Option<Uuid> {
    ids.iter()
        .copied()
        .find(|id| found.binary_search(id).is_err())
}

impl PgStore {
    /// `update_asset`: the asset locked, the change applied in Rust by core's
    /// [`AssetChange::apply`], then the holders' content versions and the asset written, in one
    /// transaction; with the update, the libraries whose content versions it moved (none when
    /// nothing changed). A change the asset cannot take writes nothing and is the inner error.
    pub(crate) async fn update_asset_impl(
        &self,
        id: Uuid,
        change: &AssetChange,
        log: &Log,
    ) -> Result<Result<Option<(AssetUpdate, Vec<Uuid>)>, ChangeRefused>, Failure> {
        let mut client = self.client().await?;
        let mut tx = client.transaction().await?;
        let ChangeStatements {
            lock,
            bump,
            write,
            append,
        } = ChangeStatements::prepare(&tx, &self.schema.q, Of::One).await?;
        let before = tx
            .query_opt(&lock, &[&id])
            .await?
            .map(|row| asset_from_row(&row, 0))
            .transpose()?;
        let Some(before) = before else {
            tx.rollback().await?;
            return Ok(Ok(None));
        };
        let mut next = match change.apply(&before) {
            Ok(Some(next)) => next,
            Ok(None) => {
                // Nothing changes: nothing is written.
                tx.rollback().await?;
                let unchanged = AssetUpdate {
                    after: before.clone(),
                    before,
                };
                return Ok(Ok(Some((unchanged, Vec::new()))));
            }
            Err(reason) => {
                tx.rollback().await?;
                return Ok(Err(reason));
            }
        };
        if next.workspace_id != before.workspace_id {
            let s = &self.schema.q;
            if !may_move(&tx, s, id, next.workspace_id.as_deref()).await? {
                tx.rollback().await?;
                return Ok(Err(ChangeRefused::HeldInAnotherWorkspace));
            }
            next.slug = move_asset(&mut tx, s, &next, &before.slug).await?;
        }
        let p = AssetParams::new(&next, self.words)?;
        // Pipelined, run in this order: the counters are locked before the asset's row
        // changes (and its triggers lock the list counts).
        let by_id: [&(dyn ToSql + Sync); 1] = [&id];
        let values = write_values(&next, &p);
        let event = log
            .event(Written::AssetChanged {
                before: &before,
                after: &next,
            })
            .map(EventParams::new);
        let logged = async {
            match &event {
                Some(event) => tx.execute(&append, &event.all()).await.map(drop),
                None => Ok(()),
            }
        };
        let (holders, row, ()) = tokio::try_join!(
            tx.query(&bump, &by_id),
            tx.query_one(&write, &values),
            logged
        )?;
        let holders = holders
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()?;
        let after = asset_from_row(&row, 0)?;
        tx.commit().await?;
        Ok(Ok(Some((AssetUpdate { before, after }, holders))))
    }

    /// `delete_asset`: the asset locked, its holders read after the lock, then (unless refused)
    /// the holders' versions, its entries, its counter row and the asset, in one transaction.
    pub(crate) async fn delete_asset_impl(
        &self,
        id: Uuid,
        force: bool,
        log: &Log,
    ) -> Result<AssetDeletion, Failure> {
        let s = &self.schema.q;
        let bump_sql = bump_holders_sql(s, true, Of::One);
        let delete_sql = delete_sql(s);
        let lock_sql = lock_asset_sql(s, Of::One);
        let usage_sql = usage_sql(s, Of::One);
        let log_sql = crate::events::insert_sql(s);
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let (lock, usage, bump, delete, append) = tokio::try_join!(
            tx.prepare_cached(&lock_sql),
            tx.prepare_cached(&usage_sql),
            tx.prepare_cached(&bump_sql),
            tx.prepare_cached(&delete_sql),
            tx.prepare_cached(&log_sql)
        )?;
        let by_id: [&(dyn ToSql + Sync); 1] = [&id];
        let (asset, holders) = if force {
            (tx.query_opt(&lock, &by_id).await?, Vec::new())
        } else {
            // Pipelined, run in this order: the holders are read by a statement that starts
            // once the lock is granted, so with a snapshot that holds every library write
            // that placed the asset before.
            tokio::try_join!(tx.query_opt(&lock, &by_id), tx.query(&usage, &by_id))?
        };
        let holders = usage_from_rows(&holders)?;
        let Some(mut asset) = asset.map(|row| asset_from_row(&row, 0)).transpose()? else {
            tx.rollback().await?;
            return Ok(AssetDeletion::NotFound);
        };
        if !holders.is_empty() {
            tx.rollback().await?;
            return Ok(AssetDeletion::InUse(holders));
        }
        let event = one_event(log, Written::AssetDeleted(&asset))?;
        let logged = event.all();
        let (_, row, _) = tokio::try_join!(
            tx.execute(&bump, &by_id),
            tx.query_one(&delete, &by_id),
            tx.execute(&append, &logged)
        )?;
        // The counter as deleted: a download that raced the delete is in it.
        let downloads: Option<i64> = row.try_get(0)?;
        if let Some(n) = downloads {
            asset.download_count = to_u64("download count", n)?;
        }
        tx.commit().await?;
        Ok(AssetDeletion::Deleted(asset))
    }

    /// `asset_usage`: one statement over `library_entries_asset_idx`.
    pub(crate) async fn asset_usage_impl(&self, id: Uuid) -> Result<Vec<LibraryUse>, Failure> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&usage_sql(&self.schema.q, Of::One))
            .await?;
        usage_from_rows(&client.query(&stmt, &[&id]).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_missing_asset_is_in_entry_order() {
        let ids: Vec<Uuid> = (0..4).map(|_| Uuid::new_v4()).collect();
        let mut found = vec![ids[0], ids[2]];
        found.sort_unstable();
        assert_eq!(first_missing(&ids, &found), Some(ids[1]));
        let mut all = ids.clone();
        all.sort_unstable();
        assert_eq!(first_missing(&ids, &all), None);
        assert_eq!(first_missing(&[], &[]), None);
    }

    #[test]
    fn holders_are_locked_in_id_order() {
        let sql = bump_holders_sql("\"x\"", true, Of::One);
        let libraries = sql
            .find("ORDER BY l.id FOR KEY SHARE")
            .expect("libraries locked");
        let counters = sql
            .find("ORDER BY k.library_id FOR UPDATE")
            .expect("counters");
        assert!(libraries < counters);
        assert!(!bump_holders_sql("\"x\"", false, Of::Many).contains("FOR KEY SHARE"));
    }
}
