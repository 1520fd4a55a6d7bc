//! The export: a blocking task walks the trees in the order of [`Record`]'s kinds and sends
//! each record through a channel of [`CHANNEL`] places, which the stream reads; so the
//! stream holds a bounded number of records, and the walk waits while the reader is slow.
//!
//! Order within a kind, oldest first by (creation time, id): keys and assets by their
//! created-time indexes (`key_idx_created`; `asset_idx_created` in the list of every asset),
//! texts by walking that asset index again, events by place, deliveries by merging their
//! webhooks' lists (each in creation order). Libraries, passes and webhooks have no
//! created-time index: their times and ids (not their records) are collected and sorted
//! first, then each record is read.

use std::collections::HashSet;

use assetlib_core::StoreError;
use assetlib_core::events::EventCursor;
use assetlib_core::transfer::{
    DeliveryRecord, EventRecord, LibraryRecord, Record, RecordCounts, WebhookRecord,
};
use futures_util::stream::BoxStream;
use tokio::sync::mpsc;
use uuid::Uuid;

use crate::deliveries::StreamRec;
use crate::error::Error;
use crate::events::EventRec;
use crate::passes::PassRec;
use crate::record::{KeyRec, LibraryRec, decode, decode_id};
use crate::webhooks::WebhookRec;
use crate::{Inner, SledStore, tree_keys};

/// Records the walk may be ahead of the reader.
const CHANNEL: usize = 256;

/// What the walk sends.
enum Item {
    /// The next record (boxed: a record is large, the other items small).
    Record(Box<Record>),
    /// The walk failed; nothing follows.
    Failed(StoreError),
    /// Every record was sent.
    Done,
}

/// Why the walk stopped before its end.
enum Halt {
    /// The reader dropped the stream.
    Gone,
    /// The store failed.
    Failed(Error),
}

impl From<Error> for Halt {
    fn from(e: Error) -> Self {
        Halt::Failed(e)
    }
}

impl From<sled::Error> for Halt {
    fn from(e: sled::Error) -> Self {
        Halt::Failed(e.into())
    }
}

/// Where the walk sends its records.
struct Out(mpsc::Sender<Item>);

impl Out {
    /// Sends `record`, waiting while the channel is full; [`Halt::Gone`] when the reader left.
    fn send(&self, record: Record) -> Result<(), Halt> {
        self.0
            .blocking_send(Item::Record(Box::new(record)))
            .map_err(|_| Halt::Gone)
    }
}

/// Every record of `store`, as a stream fed by a blocking task (which holds the store open
/// until the stream ends or is dropped). A walk that ends without reaching its end (a
/// panic) ends the stream with an error, never silently.
pub(crate) fn records(store: SledStore) -> BoxStream<'static, Result<Record, StoreError>> {
    let (tx, rx) = mpsc::channel(CHANNEL);
    tokio::task::spawn_blocking(move || {
        let out = Out(tx);
        let last = match walk(&store.inner, &out) {
            Ok(()) => Item::Done,
            Err(Halt::Gone) => return,
            Err(Halt::Failed(e)) => Item::Failed(e.into()),
        };
        // The reader may have gone meanwhile: then nobody waits for the end.
        let _ = out.0.blocking_send(last);
    });
    Box::pin(futures_util::stream::unfold(Some(rx), |rx| async move {
        let mut rx = rx?;
        match rx.recv().await {
            Some(Item::Record(record)) => Some((Ok(*record), Some(rx))),
            Some(Item::Failed(e)) => Some((Err(e), None)),
            Some(Item::Done) => None,
            None => Some((
                Err(StoreError::backend(
                    "the export stopped before its last record",
                )),
                None,
            )),
        }
    }))
}

/// Walks every kind in order, sending each record to `out`.
fn walk(inner: &Inner, out: &Out) -> Result<(), Halt> {
    // The counts still in memory are written first; the reads below add any counted since.
    inner.write_counts()?;
    let meta = inner.db.open_tree("meta")?;
    if let Some(v) = meta.get(crate::websites::SECRET_KEY)? {
        let secret = <[u8; 32]>::try_from(&v[..]).map_err(|_| {
            Error::invalid("signing secret", format!("{} bytes, expected 32", v.len()))
        })?;
        out.send(Record::SigningSecret {
            secret: secret.into(),
        })?;
    }
    keys(inner, out)?;
    assets(inner, out)?;
    #[cfg(feature = "search")]
    texts(inner, out)?;
    libraries(inner, out)?;
    passes(inner, out)?;
    events(inner, out)?;
    let hooks = webhooks(inner, out)?;
    deliveries(inner, out, &hooks)
}

/// A record an index key names; its absence is corruption.
fn indexed<T>(found: Option<T>, what: &'static str, id: Uuid) -> Result<T, Error> {
    found.ok_or_else(|| Error::invalid(what, format!("index entry for missing record {id}")))
}

/// Keys, by `key_idx_created`.
fn keys(inner: &Inner, out: &Out) -> Result<(), Halt> {
    for kv in inner.key_idx_created.iter() {
        let (k, _) = kv?;
        let id = tree_keys::trailing_id(&k)?;
        let value = indexed(inner.get(&inner.keys, id.as_bytes())?, KeyRec::WHAT, id)?;
        let key = decode::<KeyRec>(KeyRec::WHAT, &value)?.into_key(id)?;
        out.send(Record::Key(key))?;
    }
    Ok(())
}

/// The ids of every asset, oldest first (the created-time index's list of every asset).
fn asset_ids(inner: &Inner) -> impl Iterator<Item = Result<Uuid, Error>> + '_ {
    let every = [tree_keys::scope(tree_keys::ANY, None)];
    inner
        .asset_idx_created
        .scan_prefix(every)
        .map(|kv| tree_keys::trailing_id(&kv?.0))
}

/// Assets, each with its download count (what is stored and what was counted since).
fn assets(inner: &Inner, out: &Out) -> Result<(), Halt> {
    for id in asset_ids(inner) {
        let id = id?;
        let asset = indexed(inner.load_asset(id)?, "asset", id)?;
        out.send(Record::Asset(asset))?;
    }
    Ok(())
}

/// The kept texts, in their assets' order.
#[cfg(feature = "search")]
fn texts(inner: &Inner, out: &Out) -> Result<(), Halt> {
    use crate::search_keys::TextRec;
    for id in asset_ids(inner) {
        let id = id?;
        if let Some(v) = inner.search.texts.get(id.as_bytes())? {
            let text: TextRec = decode(TextRec::WHAT, &v)?;
            out.send(Record::Text(assetlib_core::transfer::TextRecord {
                asset_id: id,
                pages: text.pages,
                paged: text.paged,
            }))?;
        }
    }
    Ok(())
}

/// The ids of `tree`'s records, by the creation time `created` reads from each (as `ts`
/// bytes, which sort like the time), oldest first, then by id.
fn by_creation(
    tree: &sled::Tree,
    what: &'static str,
    created: impl Fn(&[u8]) -> Result<[u8; 12], Error>,
) -> Result<Vec<Uuid>, Error> {
    let mut found = Vec::new();
    for kv in tree.iter() {
        let (k, v) = kv?;
        found.push((created(&v)?, decode_id(what, &k)?));
    }
    found.sort_unstable();
    Ok(found.into_iter().map(|(_, id)| id).collect())
}

/// Libraries, each whole with its view count.
fn libraries(inner: &Inner, out: &Out) -> Result<(), Halt> {
    let ids = by_creation(&inner.libraries, LibraryRec::WHAT, |v| {
        let rec: LibraryRec = decode(LibraryRec::WHAT, v)?;
        Ok(tree_keys::ts(&rec.created_at.time()?))
    })?;
    for id in ids {
        // A library deleted since its id was read is simply left out.
        let Some(rows) = inner.load_library_from(id, inner.library_rec(id)?)? else {
            continue;
        };
        out.send(Record::Library(LibraryRecord {
            library: rows.library,
            sections: rows.sections,
            entries: rows.entries.into_iter().map(|row| row.entry).collect(),
        }))?;
    }
    Ok(())
}

/// Passes, each with the downloads it made.
fn passes(inner: &Inner, out: &Out) -> Result<(), Halt> {
    let ids = by_creation(&inner.passes, PassRec::WHAT, |v| {
        let rec: PassRec = decode(PassRec::WHAT, v)?;
        Ok(tree_keys::ts(&rec.created_at.time()?))
    })?;
    for id in ids {
        if let Some(pass) = inner.get_pass(id)? {
            out.send(Record::Pass(pass))?;
        }
    }
    Ok(())
}

/// The event log, in its order.
fn events(inner: &Inner, out: &Out) -> Result<(), Halt> {
    for kv in inner.events.iter() {
        let (k, v) = kv?;
        let place = tree_keys::decode_u64("event place", &k)?;
        let event = EventRec::decode(&v)?.into_event(place)?;
        out.send(Record::Event(EventRecord::from(&event)))?;
    }
    Ok(())
}

/// The id of the event at `place` in the log, if it still holds one.
fn event_id_at(inner: &Inner, place: u64) -> Result<Option<Uuid>, Error> {
    inner
        .events
        .get(place.to_be_bytes())?
        .map(|v| Ok(EventRec::decode(&v)?.id))
        .transpose()
}

/// Webhooks, each with the last event of the log at or before where its stream stands.
/// Returns their ids.
fn webhooks(inner: &Inner, out: &Out) -> Result<HashSet<Uuid>, Halt> {
    let ids = by_creation(&inner.webhooks, WebhookRec::WHAT, |v| {
        let rec: WebhookRec = decode(WebhookRec::WHAT, v)?;
        Ok(tree_keys::ts(&rec.into_webhook(Uuid::nil())?.created_at))
    })?;
    let mut sent = HashSet::with_capacity(ids.len());
    for id in ids {
        let Some(rec) = inner.hook_rec(id)? else {
            continue;
        };
        // A webhook never leased stands where its record says its stream starts.
        let at = match inner.webhook_streams.get(id.as_bytes())? {
            Some(v) => decode::<StreamRec>(StreamRec::WHAT, &v)?.at.1,
            None => rec.stream_start,
        };
        let through = match inner.events.range(..=at.to_be_bytes()).next_back() {
            Some(kv) => Some(EventRec::decode(&kv?.1)?.id),
            None => None,
        };
        let webhook = rec.into_webhook(id)?;
        out.send(Record::Webhook(WebhookRecord::of(&webhook, through)))?;
        sent.insert(id);
    }
    Ok(sent)
}

/// The next key of a webhook's list of deliveries (webhook id, `ts(created_at)`, delivery
/// id), as its creation time and delivery id (28 bytes, which sort by both).
fn next_delivery(list: &mut sled::Iter) -> Result<Option<[u8; 28]>, Error> {
    let Some(kv) = list.next() else {
        return Ok(None);
    };
    let (k, _) = kv?;
    k.get(16..)
        .and_then(|tail| <[u8; 28]>::try_from(tail).ok())
        .map(Some)
        .ok_or_else(|| Error::invalid("webhook delivery key", format!("{} bytes", k.len())))
}

/// The deliveries of the webhooks `hooks`: their lists in `webhook_deliveries`, each oldest
/// first, merged (one key of each list held at a time). Each names its event as in the log
/// only while the log still holds the event.
fn deliveries(inner: &Inner, out: &Out, hooks: &HashSet<Uuid>) -> Result<(), Halt> {
    let mut lists = Vec::with_capacity(hooks.len());
    for hook in hooks {
        let mut list = inner.webhook_deliveries.scan_prefix(hook.as_bytes());
        let head = next_delivery(&mut list)?;
        lists.push((head, list));
    }
    loop {
        let oldest = lists
            .iter()
            .enumerate()
            .filter_map(|(i, (head, _))| head.map(|key| (key, i)))
            .min();
        let Some((key, i)) = oldest else {
            return Ok(());
        };
        if let Some((head, list)) = lists.get_mut(i) {
            *head = next_delivery(list)?;
        }
        let id = tree_keys::trailing_id(&key)?;
        let Some(delivery) = inner.delivery(id)? else {
            continue;
        };
        let mut record = DeliveryRecord::from(&delivery);
        if let EventCursor(0, place) = delivery.event_at
            && place > 0
        {
            // An event purged from the log since is not there for the target to name.
            record.in_log = event_id_at(inner, place)? == Some(delivery.event_id);
        }
        out.send(Record::Delivery(record))?;
    }
}

/// How many records of each kind the store keeps, counted as [`records`] finds them.
pub(crate) fn record_counts(inner: &Inner) -> Result<RecordCounts, Error> {
    let assets = [true, false]
        .into_iter()
        .map(|published| inner.count(&tree_keys::count_assets(published, None)))
        .sum::<Result<u64, Error>>()?;
    #[cfg(feature = "search")]
    let texts = {
        let mut n = 0u64;
        for k in inner.search.texts.iter().keys() {
            n += u64::from(inner.assets.contains_key(k?)?);
        }
        n
    };
    #[cfg(not(feature = "search"))]
    let texts = 0;
    let mut deliveries = 0u64;
    for kv in inner.webhooks.iter().keys() {
        let hook = kv?;
        for k in inner.webhook_deliveries.scan_prefix(&hook).keys() {
            let id = tree_keys::trailing_id(&k?)?;
            deliveries += u64::from(inner.deliveries.contains_key(id.as_bytes())?);
        }
    }
    let len = |tree: &sled::Tree| tree.len() as u64;
    Ok(RecordCounts {
        keys: len(&inner.keys),
        assets,
        texts,
        libraries: len(&inner.libraries),
        passes: len(&inner.passes),
        webhooks: len(&inner.webhooks),
        events: len(&inner.events),
        deliveries,
    })
}
