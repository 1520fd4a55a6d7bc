//! The import: one call's records checked, then written in one transaction over every tree
//! they touch, with the helpers the store's own writes use, then made durable.
//!
//! Before the transaction, the call is checked whole (event and webhook types, delivery
//! statuses, each delivery's webhook and event), its events not in the log yet get places
//! reserved from the log's sequence ([`crate::events::EventSeq`], so the places handed out
//! after go on from them, and readers wait for them until the call is durable), and each
//! library a generation for its items. In the transaction (`import/writes.rs`) each record is
//! written unless its id is there: a key with its hash entry and created-time index key; an
//! asset with its slug claim ([`crate::assets::claim_asset_slug`]: its own slug, as it is free
//! in the target of a move), its download counter and every index key and count
//! ([`crate::tx::asset_keys`], the word index and facets with feature `search`); a text with
//! its words; a library with its slug claim, its items (the entries with the copy of their
//! assets' fields), the uses of its assets, its listing, view counter and a new version; a
//! pass with its hash entry and its place in its library's list; an event at its place; a
//! webhook whose stream starts at the place of the event it was delivered through. An entry
//! of an asset not there, or a pass of a library not there, aborts the transaction:
//! [`StoreError::Corrupt`], and nothing lands.
//!
//! Webhook streams and deliveries live in the second database (`webhooks.rs`), which no
//! transaction spans with the first: they are written after the transaction, and that
//! database flushed. A failure between the two (of the disk) leaves the records of the first
//! landed and some of the second not; the same call run again adds what is missing, since
//! everything there is left as it is.

mod places;
mod writes;

use std::collections::{HashMap, HashSet};

use assetlib_core::StoreError;
use assetlib_core::events::{EventCursor, Log};
use assetlib_core::transfer::{DeliveryRecord, Record, WebhookRecord};
use assetlib_core::webhooks::Delivery;
use uuid::Uuid;

use crate::deliveries::StreamRec;
use crate::error::Error;
use crate::events::{EventRec, Reserved};
use crate::record::encode;
use crate::webhooks::WebhookRec;
use crate::{Durability, Inner, SledStore};
use places::Places;
use writes::{REFUSED, refuse};

/// Drops the places of the log's events an import looked up (a move is over).
pub(crate) use places::forget as forget_places;

/// What a call works out before its transaction.
struct Plan {
    /// The events to append: each place, and the record to store there.
    events: Vec<(u64, Vec<u8>)>,
    /// The places reserved for them, in flight until the call is durable.
    reserved: Vec<Reserved>,
    /// The webhooks: id, where the stream starts, and the record to store.
    hooks: Vec<(Uuid, u64, Vec<u8>)>,
    /// The deliveries, each with its event's place in this log.
    deliveries: Vec<Delivery>,
    /// The generation of each library's items.
    generations: HashMap<Uuid, u64>,
}

/// What a call wrote, for what follows its commit.
struct Imported {
    /// The assets written (their versions move).
    assets: Vec<Uuid>,
    /// The places of its events: dropped once the call is durable.
    _reserved: Vec<Reserved>,
}

impl SledStore {
    /// Writes `records` as [`assetlib_core::store::TransferStore::import`] says.
    pub(crate) async fn import_records(&self, records: Vec<Record>) -> Result<(), StoreError> {
        let outcome = self
            .write(move |inner| match inner.import(&records) {
                Ok(imported) => {
                    inner.search_moved(&imported.assets);
                    Ok(Ok(imported))
                }
                Err(Error::Invalid {
                    what: REFUSED,
                    detail,
                }) => Ok(Err(detail)),
                Err(e) => Err(e),
            })
            .await?;
        match outcome {
            Ok(imported) => {
                self.assets_changed(imported.assets);
                Ok(())
            }
            Err(detail) => Err(StoreError::corrupt(detail)),
        }
    }
}

impl Inner {
    /// Checks and writes `records` (see the module's docs); durable on return unless the
    /// store's group commit flushes next.
    fn import(&self, records: &[Record]) -> Result<Imported, Error> {
        let plan = self.plan_import(records)?;
        let (assets, hooks) =
            self.write_records(records, &plan.events, &plan.hooks, &plan.generations)?;
        if self.durability != Durability::EveryWrite {
            self.db.flush()?;
        }
        self.import_deliveries(&hooks, &plan.deliveries)?;
        Ok(Imported {
            assets,
            _reserved: plan.reserved,
        })
    }

    /// Checks the call whole, then reserves its events' places and works out its webhooks'
    /// streams, its deliveries' events and its libraries' generations.
    fn plan_import(&self, records: &[Record]) -> Result<Plan, Error> {
        let needs_places = records.iter().any(|r| {
            matches!(
                r,
                Record::Event(_)
                    | Record::Webhook(WebhookRecord {
                        delivered_through: Some(_),
                        ..
                    })
                    | Record::Delivery(DeliveryRecord { in_log: true, .. })
            )
        });
        let places = needs_places.then(|| Places::synced(self)).transpose()?;
        let in_log = |id: Uuid| match &places {
            Some(places) => places.place_of(id),
            None => Ok(None),
        };
        let mut events = HashSet::new();
        let mut hooks = HashSet::new();
        for record in records {
            match record {
                Record::Event(e) => {
                    if e.event(EventCursor::START).is_none() {
                        return Err(refuse(format!("event {} is of an unknown type", e.id)));
                    }
                    events.insert(e.id);
                }
                Record::Webhook(w) => {
                    if w.webhook().is_none() {
                        return Err(refuse(format!(
                            "webhook {} has an unknown event type",
                            w.id
                        )));
                    }
                    hooks.insert(w.id);
                }
                _ => {}
            }
        }
        for record in records {
            let Record::Delivery(d) = record else {
                continue;
            };
            if !hooks.contains(&d.webhook_id) && self.hook_rec(d.webhook_id)?.is_none() {
                return Err(refuse(format!(
                    "delivery {} is of webhook {}, which is not here",
                    d.id, d.webhook_id
                )));
            }
            if d.in_log && !events.contains(&d.event_id) && in_log(d.event_id)?.is_none() {
                return Err(refuse(format!(
                    "delivery {} carries event {}, which is not in the log",
                    d.id, d.event_id
                )));
            }
            if d.delivery(EventCursor::START).is_none() {
                return Err(refuse(format!("delivery {} has an unknown status", d.id)));
            }
        }

        let mut plan = Plan {
            events: Vec::new(),
            reserved: Vec::new(),
            hooks: Vec::new(),
            deliveries: Vec::new(),
            generations: HashMap::new(),
        };
        // This call's events, at the places reserved for them.
        let mut appended: HashMap<Uuid, u64> = HashMap::new();
        for record in records {
            let Record::Event(e) = record else {
                continue;
            };
            if appended.contains_key(&e.id) || in_log(e.id)?.is_some() {
                continue;
            }
            let reserved = self.event_seq.reserve(Log::ANONYMOUS.clone());
            let place = reserved.slot().place();
            let event = e
                .event(EventCursor(0, place))
                .ok_or_else(|| refuse(format!("event {} is of an unknown type", e.id)))?;
            plan.events
                .push((place, encode(EventRec::WHAT, &EventRec::new(&event))?));
            plan.reserved.push(reserved);
            appended.insert(e.id, place);
        }
        let place_of = |id: Uuid| match appended.get(&id) {
            Some(place) => Ok(Some(*place)),
            None => in_log(id),
        };
        for record in records {
            match record {
                Record::Webhook(w) => {
                    let webhook = w.webhook().ok_or_else(|| {
                        refuse(format!("webhook {} has an unknown event type", w.id))
                    })?;
                    // Where it was delivered through, or before every event.
                    let start = match w.delivered_through {
                        Some(id) => place_of(id)?.unwrap_or(0),
                        None => 0,
                    };
                    let rec = WebhookRec::new(&webhook).starting_at(start);
                    plan.hooks
                        .push((w.id, start, encode(WebhookRec::WHAT, &rec)?));
                }
                Record::Delivery(d) => {
                    let at = match (d.in_log, place_of(d.event_id)?) {
                        (false, _) => EventCursor::START,
                        (true, Some(place)) => EventCursor(0, place),
                        (true, None) => {
                            return Err(refuse(format!(
                                "delivery {} carries event {}, which is not in the log",
                                d.id, d.event_id
                            )));
                        }
                    };
                    let delivery = d.delivery(at).ok_or_else(|| {
                        refuse(format!("delivery {} has an unknown status", d.id))
                    })?;
                    plan.deliveries.push(delivery);
                }
                Record::Library(l) => {
                    // Unique and never reused, as the generations of library writes are.
                    plan.generations
                        .insert(l.library.id, self.db.generate_id()?);
                }
                _ => {}
            }
        }
        Ok(plan)
    }

    /// Writes the streams of the webhooks the transaction wrote (`hooks`: id and where the
    /// stream starts) and the deliveries not there yet, then flushes their database.
    fn import_deliveries(
        &self,
        hooks: &[(Uuid, u64)],
        deliveries: &[Delivery],
    ) -> Result<(), Error> {
        if hooks.is_empty() && deliveries.is_empty() {
            return Ok(());
        }
        {
            let _one = self.delivery_lock.hold();
            for &(id, start) in hooks {
                let stream = StreamRec {
                    at: (0, start),
                    holder: None,
                };
                self.put_stream(id, &stream)?;
            }
        }
        for d in deliveries {
            if self.deliveries.contains_key(d.id.as_bytes())? {
                continue;
            }
            if !self.insert_delivery(d)? {
                // Its webhook was checked, or written by this call: deleted since.
                return Err(Error::invalid(
                    "webhook delivery",
                    format!(
                        "webhook {} went while its deliveries were imported",
                        d.webhook_id
                    ),
                ));
            }
        }
        self.hooks_db.flush()?;
        Ok(())
    }
}
