//! Bulk changes: the changes and deletes of several assets at once
//! ([`PgStore::update_assets_impl`], [`PgStore::delete_assets_impl`]), each in one
//! transaction whose statements are sent back to back ([`pipelined`]). They take their locks
//! in the order [`crate::lifecycle`] sets out, and share its statements.

use assetlib_core::events::{Log, Written};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use assetlib_core::{Asset, AssetChange, AssetUpdate, BulkOutcome, BulkRefusal, LibraryUse};
use deadpool_postgres::Transaction;
use tokio_postgres::Row;
use uuid::Uuid;

use crate::asset_params::AssetParams;
use crate::assets::asset_from_row;
use crate::error::Failure;
use crate::events::{EventParams, one_event};
use crate::lifecycle::{
    ChangeStatements, Of, bump_holders_sql, delete_sql, lock_asset_sql, usage_from_row, usage_sql,
    write_values,
};
use crate::store::{PgStore, to_u64};

/// A statement's future, boxed to run among others ([`pipelined`]).
type Pending<'a, T> = Pin<Box<dyn Future<Output = Result<T, tokio_postgres::Error>> + Send + 'a>>;

/// Runs `futures` together, each first polled in the order given, so their statements go out
/// back to back on one connection and run in that order; their outputs in that order, or the
/// first error (the transaction is then to be rolled back).
async fn pipelined<T>(futures: Vec<Pending<'_, T>>) -> Result<Vec<T>, tokio_postgres::Error> {
    let mut futures: Vec<Option<Pending<'_, T>>> = futures.into_iter().map(Some).collect();
    let mut out: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut waiting = false;
        for (slot, done) in futures.iter_mut().zip(out.iter_mut()) {
            let Some(future) = slot else { continue };
            match future.as_mut().poll(cx) {
                Poll::Ready(Ok(value)) => {
                    *done = Some(value);
                    *slot = None;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => waiting = true,
            }
        }
        if waiting {
            Poll::Pending
        } else {
            Poll::Ready(Ok(()))
        }
    })
    .await?;
    Ok(out.into_iter().flatten().collect())
}

/// The assets of `ids` that exist, read and locked (in id order) by `lock`
/// ([`lock_asset_sql`] of [`Of::Many`]), by id.
async fn locked_assets(
    tx: &Transaction<'_>,
    lock: &tokio_postgres::Statement,
    ids: &[Uuid],
) -> Result<HashMap<Uuid, Asset>, Failure> {
    let mut wanted = ids.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    tx.query(lock, &[&wanted])
        .await?
        .iter()
        .map(|row| asset_from_row(row, 0).map(|a| (a.id, a)))
        .collect()
}

impl PgStore {
    /// `update_assets`: every asset locked in id order, the change applied in Rust to each;
    /// when one is missing or refused nothing is written; else, pipelined, the content
    /// versions of every library holding a changed asset, then each changed asset's write and
    /// event in the order of `ids`, in one transaction.
    pub(crate) async fn update_assets_impl(
        &self,
        ids: &[Uuid],
        change: &AssetChange,
        log: &Log,
    ) -> Result<BulkOutcome<AssetUpdate>, Failure> {
        if ids.is_empty() {
            return Ok(BulkOutcome::Done(Vec::new()));
        }
        if change.workspace.is_some() {
            return Err(Failure::Invalid {
                what: "bulk change",
                detail: "a bulk change moves no asset to another workspace".to_owned(),
            });
        }
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let ChangeStatements {
            lock,
            bump,
            write,
            append,
        } = ChangeStatements::prepare(&tx, &self.schema.q, Of::Many).await?;
        let found = locked_assets(&tx, &lock, ids).await?;
        let mut refused = Vec::new();
        let mut planned = Vec::with_capacity(ids.len());
        for &id in ids {
            match found.get(&id) {
                None => refused.push((id, BulkRefusal::NotFound)),
                Some(before) => match change.apply(before) {
                    Ok(after) => planned.push((before.clone(), after)),
                    Err(reason) => refused.push((id, BulkRefusal::Refused(reason))),
                },
            }
        }
        if !refused.is_empty() {
            tx.rollback().await?;
            return Ok(BulkOutcome::Refused(refused));
        }
        // Each changed asset once (an id given twice is written once).
        let mut seen = HashSet::new();
        let writes: Vec<(&Asset, &Asset)> = planned
            .iter()
            .filter_map(|(before, after)| after.as_ref().map(|after| (before, after)))
            .filter(|(before, _)| seen.insert(before.id))
            .collect();
        if writes.is_empty() {
            // Nothing changes: nothing is written.
            tx.rollback().await?;
            return Ok(BulkOutcome::Done(
                planned
                    .into_iter()
                    .map(|(before, _)| AssetUpdate {
                        after: before.clone(),
                        before,
                    })
                    .collect(),
            ));
        }
        let mut changed: Vec<Uuid> = writes.iter().map(|(before, _)| before.id).collect();
        changed.sort_unstable();
        let values: Vec<AssetParams> = writes
            .iter()
            .map(|(_, after)| AssetParams::new(after, self.words))
            .collect::<Result<_, _>>()?;
        let events: Vec<Option<EventParams>> = writes
            .iter()
            .map(|(before, after)| {
                log.event(Written::AssetChanged { before, after })
                    .map(EventParams::new)
            })
            .collect();
        // Pipelined, run in this order: every holder's counter locked and moved (in id order,
        // in one statement) before the first asset's row changes.
        let mut statements: Vec<Pending<'_, Option<Row>>> =
            Vec::with_capacity(1 + 2 * writes.len());
        let (t, bump, write, append, changed) = (&tx, &bump, &write, &append, &changed);
        statements.push(Box::pin(async move {
            t.execute(bump, &[changed]).await.map(|_| None)
        }));
        for (((_, after), p), event) in writes.iter().zip(&values).zip(&events) {
            statements.push(Box::pin(async move {
                t.query_one(write, &write_values(after, p)).await.map(Some)
            }));
            if let Some(event) = event {
                statements.push(Box::pin(async move {
                    t.execute(append, &event.all()).await.map(|_| None)
                }));
            }
        }
        let mut stored: HashMap<Uuid, Asset> = HashMap::with_capacity(writes.len());
        for row in pipelined(statements).await?.into_iter().flatten() {
            let after = asset_from_row(&row, 0)?;
            stored.insert(after.id, after);
        }
        tx.commit().await?;
        Ok(BulkOutcome::Done(
            planned
                .into_iter()
                .map(|(before, _)| AssetUpdate {
                    after: stored.get(&before.id).unwrap_or(&before).clone(),
                    before,
                })
                .collect(),
        ))
    }

    /// `delete_assets`: every asset locked in id order and (unless forced) the libraries
    /// holding them read after the locks; when one is missing or held nothing is written;
    /// else, pipelined, the holders' versions, the assets' counter rows locked in id order,
    /// then each asset's delete (entries, counter row, asset) and event in the order of `ids`,
    /// in one transaction.
    pub(crate) async fn delete_assets_impl(
        &self,
        ids: &[Uuid],
        force: bool,
        log: &Log,
    ) -> Result<BulkOutcome<Asset>, Failure> {
        if ids.is_empty() {
            return Ok(BulkOutcome::Done(Vec::new()));
        }
        let s = &self.schema.q;
        let lock_sql = lock_asset_sql(s, Of::Many);
        let usage_sql = usage_sql(s, Of::Many);
        let bump_sql = bump_holders_sql(s, true, Of::Many);
        // The counter rows are locked before any asset goes, in id order as the counters'
        // flush locks them: each delete below takes its shard's gate (migration 14), which
        // must come after every counter row.
        let counters_sql = format!(
            "SELECT asset_id FROM {s}.asset_counters WHERE asset_id = ANY($1) \
             ORDER BY asset_id FOR UPDATE"
        );
        let delete_sql = delete_sql(s);
        let log_sql = crate::events::insert_sql(s);
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let (lock, usage, bump, counters, delete, append) = tokio::try_join!(
            tx.prepare_cached(&lock_sql),
            tx.prepare_cached(&usage_sql),
            tx.prepare_cached(&bump_sql),
            tx.prepare_cached(&counters_sql),
            tx.prepare_cached(&delete_sql),
            tx.prepare_cached(&log_sql)
        )?;
        let mut wanted = ids.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        let (found, holders) = if force {
            (locked_assets(&tx, &lock, &wanted).await?, Vec::new())
        } else {
            // Pipelined, run in this order: the holders are read by a statement that starts
            // once the locks are granted.
            tokio::try_join!(locked_assets(&tx, &lock, &wanted), async {
                Ok(tx.query(&usage, &[&wanted]).await?)
            })?
        };
        let mut held: HashMap<Uuid, Vec<LibraryUse>> = HashMap::new();
        for row in &holders {
            held.entry(row.try_get(0)?)
                .or_default()
                .push(usage_from_row(row, 1)?);
        }
        let mut refused = Vec::new();
        for &id in ids {
            if !found.contains_key(&id) {
                refused.push((id, BulkRefusal::NotFound));
            } else if let Some(users) = held.get(&id) {
                refused.push((id, BulkRefusal::InUse(users.clone())));
            }
        }
        if !refused.is_empty() {
            tx.rollback().await?;
            return Ok(BulkOutcome::Refused(refused));
        }
        // Each asset once (an id given twice is deleted once).
        let mut seen = HashSet::new();
        let gone: Vec<Uuid> = ids.iter().copied().filter(|id| seen.insert(*id)).collect();
        let events: Vec<EventParams> = gone
            .iter()
            .map(|id| match found.get(id) {
                Some(asset) => one_event(log, Written::AssetDeleted(asset)),
                None => Err(Failure::NoEvent("an asset deleted")),
            })
            .collect::<Result<_, _>>()?;
        let mut statements: Vec<Pending<'_, Option<Row>>> = Vec::with_capacity(2 + 2 * gone.len());
        let (t, bump, counters, delete, append, wanted) =
            (&tx, &bump, &counters, &delete, &append, &wanted);
        statements.push(Box::pin(async move {
            t.execute(bump, &[wanted]).await.map(|_| None)
        }));
        statements.push(Box::pin(async move {
            t.execute(counters, &[wanted]).await.map(|_| None)
        }));
        for (id, event) in gone.iter().zip(&events) {
            statements.push(Box::pin(async move {
                t.query_one(delete, &[id]).await.map(Some)
            }));
            statements.push(Box::pin(async move {
                t.execute(append, &event.all()).await.map(|_| None)
            }));
        }
        let rows: Vec<Row> = pipelined(statements).await?.into_iter().flatten().collect();
        let mut deleted = Vec::with_capacity(gone.len());
        for (id, row) in gone.iter().zip(&rows) {
            let Some(mut asset) = found.get(id).cloned() else {
                return Err(Failure::Protocol("a locked asset was not found again"));
            };
            // The counter as deleted: a download that raced the delete is in it.
            let downloads: Option<i64> = row.try_get(0)?;
            if let Some(n) = downloads {
                asset.download_count = to_u64("download count", n)?;
            }
            deleted.push(asset);
        }
        tx.commit().await?;
        Ok(BulkOutcome::Done(deleted))
    }
}
