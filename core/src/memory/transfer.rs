//! [`TransferStore`] of the [`MemoryStore`]: the export is a copy of everything taken under
//! the lock (one moment), the import writes under it.

use async_trait::async_trait;
use futures_util::stream::{self, BoxStream, StreamExt as _};

use super::{MemoryStore, State, StoredLibrary, Stream};
use crate::error::StoreError;
use crate::events::EventCursor;
use crate::store::TransferStore;
#[cfg(feature = "search")]
use crate::transfer::TextRecord;
use crate::transfer::{
    DeliveryRecord, EventRecord, LibraryRecord, Record, RecordCounts, WebhookRecord,
};

fn corrupt(detail: String) -> StoreError {
    StoreError::corrupt(detail)
}

impl State {
    /// Every record, in export order.
    fn records(&self) -> Vec<Record> {
        let mut out = Vec::new();
        if let Some(secret) = self.signing_secret {
            out.push(Record::SigningSecret {
                secret: secret.into(),
            });
        }
        let mut keys = self.keys.clone();
        keys.sort_by_key(|k| (k.created_at, k.id));
        out.extend(keys.into_iter().map(Record::Key));
        let mut assets: Vec<_> = self.assets.values().cloned().collect();
        assets.sort_by_key(|a| (a.created_at, a.id));
        #[cfg(feature = "search")]
        let texts: Vec<Record> = assets
            .iter()
            .filter_map(|a| {
                let text = self.texts.get(&a.id)?;
                Some(Record::Text(TextRecord {
                    asset_id: a.id,
                    pages: text.pages.clone(),
                    paged: text.paged,
                }))
            })
            .collect();
        #[cfg(not(feature = "search"))]
        let texts: Vec<Record> = Vec::new();
        out.extend(assets.into_iter().map(Record::Asset));
        out.extend(texts);
        let mut libraries: Vec<_> = self.libraries.values().collect();
        libraries.sort_by_key(|l| (l.library.created_at, l.library.id));
        out.extend(libraries.into_iter().map(|l| {
            Record::Library(LibraryRecord {
                library: l.library.clone(),
                sections: l.sections.clone(),
                entries: l.entries.clone(),
            })
        }));
        let mut passes: Vec<_> = self.passes.values().cloned().collect();
        passes.sort_by_key(|p| (p.created_at, p.id));
        out.extend(passes.into_iter().map(Record::Pass));
        out.extend(
            self.events
                .iter()
                .map(|(_, e)| Record::Event(EventRecord::from(e))),
        );
        let mut webhooks: Vec<_> = self.webhooks.values().collect();
        webhooks.sort_by_key(|w| (w.created_at, w.id));
        for webhook in webhooks {
            let at = self.streams.get(&webhook.id).map_or(0, |s| s.at.1);
            let through = self
                .events
                .iter()
                .take_while(|(place, _)| *place <= at)
                .last()
                .map(|(_, e)| e.id);
            out.push(Record::Webhook(WebhookRecord::of(webhook, through)));
        }
        let mut deliveries: Vec<_> = self.deliveries.values().collect();
        deliveries.sort_by_key(|d| (d.created_at, d.id));
        out.extend(
            deliveries
                .into_iter()
                .map(|d| Record::Delivery(DeliveryRecord::from(d))),
        );
        out
    }

    fn counts(&self) -> RecordCounts {
        RecordCounts {
            keys: self.keys.len() as u64,
            assets: self.assets.len() as u64,
            #[cfg(feature = "search")]
            texts: self.texts.len() as u64,
            #[cfg(not(feature = "search"))]
            texts: 0,
            libraries: self.libraries.len() as u64,
            passes: self.passes.len() as u64,
            webhooks: self.webhooks.len() as u64,
            events: self.events.len() as u64,
            deliveries: self.deliveries.len() as u64,
        }
    }

    /// The place of the event `id` in the log.
    fn place_of(&self, id: uuid::Uuid) -> Option<u64> {
        self.events
            .iter()
            .find(|(_, e)| e.id == id)
            .map(|(place, _)| *place)
    }

    /// Writes one record (left out when its id is there).
    fn import(&mut self, record: &Record) -> Result<(), StoreError> {
        match record {
            Record::SigningSecret { secret } => self.signing_secret = Some(secret.0),
            Record::Key(key) => {
                if !self.keys.iter().any(|k| k.id == key.id) {
                    self.keys.push(key.clone());
                }
            }
            Record::Asset(asset) => {
                self.assets.entry(asset.id).or_insert_with(|| asset.clone());
                self.assets_version += 1;
            }
            #[cfg(feature = "search")]
            Record::Text(text) => {
                if self.assets.contains_key(&text.asset_id) {
                    self.texts
                        .entry(text.asset_id)
                        .or_insert_with(|| crate::store::AssetText {
                            pages: text.pages.clone(),
                            paged: text.paged,
                        });
                }
            }
            #[cfg(not(feature = "search"))]
            Record::Text(_) => {}
            Record::Library(l) => {
                if let Some(e) = l
                    .entries
                    .iter()
                    .find(|e| !self.assets.contains_key(&e.asset_id))
                {
                    return Err(corrupt(format!(
                        "library {} holds asset {}, which is not here",
                        l.library.id, e.asset_id
                    )));
                }
                if !self.libraries.contains_key(&l.library.id) {
                    let version = self.next_version();
                    self.libraries.insert(
                        l.library.id,
                        StoredLibrary {
                            library: l.library.clone(),
                            sections: l.sections.clone(),
                            entries: l.entries.clone(),
                            version,
                        },
                    );
                }
            }
            Record::Pass(pass) => {
                self.passes.entry(pass.id).or_insert_with(|| pass.clone());
            }
            Record::Webhook(w) => {
                let webhook = w.webhook().ok_or_else(|| {
                    corrupt(format!("webhook {} has an unknown event type", w.id))
                })?;
                if !self.webhooks.contains_key(&w.id) {
                    let at = w
                        .delivered_through
                        .and_then(|id| self.place_of(id))
                        .unwrap_or(0);
                    self.streams.insert(
                        w.id,
                        Stream {
                            at: EventCursor(0, at),
                            holder: None,
                        },
                    );
                    self.webhooks.insert(w.id, webhook);
                }
            }
            Record::Event(e) => {
                if self.place_of(e.id).is_none() {
                    self.last_event += 1;
                    let at = EventCursor(0, self.last_event);
                    let event = e
                        .event(at)
                        .ok_or_else(|| corrupt(format!("event {} is of an unknown type", e.id)))?;
                    self.events.push((self.last_event, event));
                }
            }
            Record::Delivery(d) => {
                if !self.webhooks.contains_key(&d.webhook_id) {
                    return Err(corrupt(format!(
                        "delivery {} is of webhook {}, which is not here",
                        d.id, d.webhook_id
                    )));
                }
                let at = match (d.in_log, self.place_of(d.event_id)) {
                    (false, _) => EventCursor::START,
                    (true, Some(place)) => EventCursor(0, place),
                    (true, None) => {
                        return Err(corrupt(format!(
                            "delivery {} carries event {}, which is not in the log",
                            d.id, d.event_id
                        )));
                    }
                };
                let delivery = d
                    .delivery(at)
                    .ok_or_else(|| corrupt(format!("delivery {} has an unknown status", d.id)))?;
                self.deliveries.entry(d.id).or_insert(delivery);
            }
        }
        Ok(())
    }
}

#[async_trait]
impl TransferStore for MemoryStore {
    async fn export(&self) -> Result<BoxStream<'static, Result<Record, StoreError>>, StoreError> {
        let records = self.read().records();
        Ok(stream::iter(records.into_iter().map(Ok)).boxed())
    }

    async fn record_counts(&self) -> Result<RecordCounts, StoreError> {
        Ok(self.read().counts())
    }

    async fn import(&self, records: &[Record]) -> Result<(), StoreError> {
        let mut state = self.write();
        // All or nothing: the records land on a copy, which replaces the state once whole.
        let mut next = state.clone();
        for record in records {
            next.import(record)?;
        }
        *state = next;
        Ok(())
    }

    async fn transfer_mark(&self) -> Result<Option<String>, StoreError> {
        Ok(self.read().transfer_mark.clone())
    }

    async fn set_transfer_mark(&self, mark: Option<&str>) -> Result<(), StoreError> {
        self.write().transfer_mark = mark.map(str::to_owned);
        Ok(())
    }
}
