//! The export of the [`PgStore`]'s records (feature `transfer`; see `transfer.rs`): one
//! `REPEATABLE READ READ ONLY` transaction held by a task for the stream's life, each kind
//! read through a portal a page at a time into a bounded channel.

use std::collections::HashMap;
use std::sync::Arc;

use assetlib_core::events::EventCursor;
use assetlib_core::transfer::{
    DeliveryRecord, EventRecord, LibraryRecord, Record, Secret, WebhookRecord,
};
use assetlib_core::{LibraryEntry, Section, StoreError};
use deadpool_postgres::{Pool, Transaction};
use futures_util::stream::{self, BoxStream, StreamExt as _};
use tokio::sync::{mpsc, oneshot};
use tokio_postgres::types::ToSql;
use tokio_postgres::{IsolationLevel, Row};
use uuid::Uuid;

use crate::error::Failure;
use crate::schema::Schema;
use crate::store::{PgStore, to_u32};

/// Rows a portal hands over at a time.
const PAGE: i32 = 1_000;
/// Kept texts read at a time (a text may be long).
const TEXT_PAGE: i32 = 20;
/// Libraries read at a time, with their sections and entries (a library may hold many).
const LIBRARY_PAGE: i32 = 25;
/// Records waiting in the channel for the reader.
const BUFFER: usize = 128;

/// Why the export stopped before its end.
enum Stop {
    /// The reader dropped the stream.
    Gone,
    /// The database failed, or a stored value made no sense.
    Failed(StoreError),
}

impl From<Failure> for Stop {
    fn from(e: Failure) -> Self {
        Stop::Failed(e.into())
    }
}

impl From<tokio_postgres::Error> for Stop {
    fn from(e: tokio_postgres::Error) -> Self {
        Failure::from(e).into()
    }
}

/// Every record of `store`, from one moment: this process's unwritten counts written first,
/// then the transaction's snapshot taken before this returns.
pub(crate) async fn export(
    store: &PgStore,
) -> Result<BoxStream<'static, Result<Record, StoreError>>, StoreError> {
    store
        .counters
        .flush(&store.pool, &store.schema, &store.replica)
        .await?;
    let (out, records) = mpsc::channel(BUFFER);
    let (ready, started) = oneshot::channel();
    let (pool, schema) = (store.pool.clone(), Arc::clone(&store.schema));
    tokio::spawn(async move { run(pool, schema, out, ready).await });
    match started.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e),
        Err(_) => return Err(StoreError::backend("the export stopped before it began")),
    }
    Ok(stream::unfold(records, |mut records| async move {
        records.recv().await.map(|record| (record, records))
    })
    .boxed())
}

/// The task: the transaction begun and its snapshot taken (answered on `ready`), then every
/// kind sent on `out` in order; an error is sent as the stream's last item.
async fn run(
    pool: Pool,
    schema: Arc<Schema>,
    out: mpsc::Sender<Result<Record, StoreError>>,
    ready: oneshot::Sender<Result<(), StoreError>>,
) {
    let mut client = match pool.get().await {
        Ok(client) => client,
        Err(e) => {
            let _ = ready.send(Err(Failure::from(e).into()));
            return;
        }
    };
    let begun = client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await;
    let tx = match begun {
        Ok(tx) => tx,
        Err(e) => {
            let _ = ready.send(Err(Failure::from(e).into()));
            return;
        }
    };
    let reader = Reader {
        tx: &tx,
        s: &schema.q,
        out: &out,
    };
    // The transaction's first statement takes its snapshot: the moment of the export.
    let secret = match reader.signing_secret().await {
        Ok(secret) => secret,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    if ready.send(Ok(())).is_err() {
        return;
    }
    if let Err(Stop::Failed(e)) = reader.all(secret).await {
        let _ = out.send(Err(e)).await;
    }
    // Read only: its end changes nothing (dropped, it rolls back).
    let _ = tx.rollback().await;
}

/// Reads the records in the export's transaction and sends them.
struct Reader<'a> {
    tx: &'a Transaction<'a>,
    s: &'a str,
    out: &'a mpsc::Sender<Result<Record, StoreError>>,
}

impl Reader<'_> {
    /// Hands `record` to the reader, waiting while the channel is full.
    async fn send(&self, record: Record) -> Result<(), Stop> {
        self.out.send(Ok(record)).await.map_err(|_| Stop::Gone)
    }

    /// The signing secret, if one is kept.
    async fn signing_secret(&self) -> Result<Option<Secret>, StoreError> {
        let sql = format!(
            "SELECT value FROM {}.secrets WHERE name = 'signing'",
            self.s
        );
        let row = self.tx.query_opt(&sql, &[]).await.map_err(Failure::from)?;
        let Some(row) = row else { return Ok(None) };
        let value: Vec<u8> = row.try_get(0).map_err(Failure::from)?;
        let bytes: [u8; 32] = value.as_slice().try_into().map_err(|_| {
            Failure::invalid("signing secret", format!("{} bytes, not 32", value.len()))
        })?;
        Ok(Some(Secret(bytes)))
    }

    /// Every kind, in the order of [`Record`]'s.
    async fn all(&self, secret: Option<Secret>) -> Result<(), Stop> {
        let s = self.s;
        if let Some(secret) = secret {
            self.send(Record::SigningSecret { secret }).await?;
        }
        let keys = format!(
            "SELECT {} FROM {s}.api_keys ORDER BY created_at, id",
            crate::keys::KEY_COLS
        );
        self.each(&keys, PAGE, |row| {
            Ok(Record::Key(crate::keys::key_from_row(row)?))
        })
        .await?;
        let assets = format!(
            "SELECT {}, c.download_count FROM {s}.assets a \
             LEFT JOIN {s}.asset_counters c ON c.asset_id = a.id ORDER BY a.created_at, a.id",
            crate::assets::asset_cols("a.")
        );
        self.each(&assets, PAGE, |row| {
            Ok(Record::Asset(crate::assets::asset_from_row(row, 0)?))
        })
        .await?;
        #[cfg(feature = "search")]
        {
            let texts = format!(
                "SELECT t.asset_id, t.pages, t.paged FROM {s}.asset_texts t \
                 JOIN {s}.assets a ON a.id = t.asset_id ORDER BY a.created_at, a.id"
            );
            self.each(&texts, TEXT_PAGE, |row| {
                Ok(Record::Text(assetlib_core::transfer::TextRecord {
                    asset_id: row.try_get(0)?,
                    pages: row.try_get(1)?,
                    paged: row.try_get(2)?,
                }))
            })
            .await?;
        }
        self.libraries().await?;
        let passes = format!(
            "SELECT {} FROM {s}.passes ORDER BY created_at, id",
            crate::passes::pass_cols("")
        );
        self.each(&passes, PAGE, |row| {
            Ok(Record::Pass(crate::passes::pass_from_row(row, 0)?))
        })
        .await?;
        let events = format!(
            "SELECT {} FROM {s}.events ORDER BY xid, seq",
            crate::events::event_cols("")
        );
        self.each(&events, PAGE, |row| {
            let event = crate::events::event_from_row(row, 0, EventCursor::START)?;
            Ok(Record::Event(EventRecord::from(&event)))
        })
        .await?;
        // Where each stream stands, as the last event at or before its place.
        let hooks = format!(
            "SELECT {}, (SELECT e.id FROM {s}.events e \
                 WHERE (e.xid, e.seq) <= (w.stream_xid::text::xid8, w.stream_seq) \
                 ORDER BY e.xid DESC, e.seq DESC LIMIT 1) \
             FROM {s}.webhooks w ORDER BY w.created_at, w.id",
            crate::webhooks::hook_cols("w.")
        );
        self.each(&hooks, PAGE, |row| {
            let hook = crate::webhooks::hook_from_row(row, 0)?;
            let through: Option<Uuid> = row.try_get(9)?;
            Ok(Record::Webhook(WebhookRecord::of(&hook, through)))
        })
        .await?;
        let deliveries = format!(
            "SELECT {} FROM {s}.webhook_deliveries ORDER BY created_at, id",
            crate::deliveries::delivery_cols("")
        );
        self.each(&deliveries, PAGE, |row| {
            let delivery = crate::deliveries::delivery_from_row(row, 0)?;
            Ok(Record::Delivery(DeliveryRecord::from(&delivery)))
        })
        .await
    }

    /// Sends the record `decode` makes of each row of `sql`, read through a portal `page`
    /// rows at a time.
    async fn each(
        &self,
        sql: &str,
        page: i32,
        decode: impl Fn(&Row) -> Result<Record, Failure>,
    ) -> Result<(), Stop> {
        let stmt = self.tx.prepare(sql).await?;
        let portal = self.tx.bind(&stmt, &[]).await?;
        loop {
            let rows = self.tx.query_portal(&portal, page).await?;
            for row in &rows {
                self.send(decode(row)?).await?;
            }
            if rows.len() < page.unsigned_abs() as usize {
                return Ok(());
            }
        }
    }

    /// The libraries whole, [`LIBRARY_PAGE`] at a time: each page's sections and entries
    /// read together.
    async fn libraries(&self) -> Result<(), Stop> {
        let s = self.s;
        let libraries = format!(
            "SELECT {}, c.view_count FROM {s}.libraries l \
             LEFT JOIN {s}.library_counters c ON c.library_id = l.id \
             ORDER BY l.created_at, l.id",
            crate::libraries::library_cols("l.")
        );
        let sections = format!(
            "SELECT library_id, id, title, description, display_order, collapsed_by_default \
             FROM {s}.library_sections WHERE library_id = ANY($1) \
             ORDER BY library_id, display_order, id"
        );
        // An entry is of an asset the store holds (a delete of an asset removes its
        // entries; the join keeps to that whatever an older version left).
        let entries = format!(
            "SELECT e.library_id, e.asset_id, e.section_id, e.display_order, e.title, \
                 e.description \
             FROM {s}.library_entries e JOIN {s}.assets a ON a.id = e.asset_id \
             WHERE e.library_id = ANY($1) ORDER BY e.library_id, e.display_order, e.asset_id"
        );
        let (stmt, sections, entries) = tokio::try_join!(
            self.tx.prepare(&libraries),
            self.tx.prepare(&sections),
            self.tx.prepare(&entries)
        )?;
        let portal = self.tx.bind(&stmt, &[]).await?;
        loop {
            let rows = self.tx.query_portal(&portal, LIBRARY_PAGE).await?;
            let page = rows
                .iter()
                .map(|row| crate::libraries::library_from_row(row, 0))
                .collect::<Result<Vec<_>, _>>()?;
            let ids: Vec<Uuid> = page.iter().map(|l| l.id).collect();
            let params: [&(dyn ToSql + Sync); 1] = [&ids];
            let (section_rows, entry_rows) = tokio::try_join!(
                self.tx.query(&sections, &params),
                self.tx.query(&entries, &params)
            )?;
            let mut parts: HashMap<Uuid, (Vec<Section>, Vec<LibraryEntry>)> = HashMap::new();
            for row in &section_rows {
                let part = parts.entry(row.try_get(0)?).or_default();
                part.0.push(Section {
                    id: row.try_get(1)?,
                    title: row.try_get(2)?,
                    description: row.try_get(3)?,
                    display_order: to_u32("section order", row.try_get(4)?)?,
                    collapsed_by_default: row.try_get(5)?,
                });
            }
            for row in &entry_rows {
                let part = parts.entry(row.try_get(0)?).or_default();
                part.1.push(LibraryEntry {
                    asset_id: row.try_get(1)?,
                    section_id: row.try_get(2)?,
                    display_order: to_u32("entry order", row.try_get(3)?)?,
                    title: row.try_get(4)?,
                    description: row.try_get(5)?,
                });
            }
            for library in page {
                let (sections, entries) = parts.remove(&library.id).unwrap_or_default();
                self.send(Record::Library(LibraryRecord {
                    library,
                    sections,
                    entries,
                }))
                .await?;
            }
            if rows.len() < LIBRARY_PAGE.unsigned_abs() as usize {
                return Ok(());
            }
        }
    }
}
