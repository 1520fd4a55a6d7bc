//! The event log: the `events` tree, place (a big-endian `u64`) -> [`EventRec`].
//!
//! Every write transaction that changes something inserts its event at a place reserved
//! before it starts ([`EventSeq::reserve`]); places are handed out in order, and a place is
//! "in flight" from its reservation until its write has finished, flush included (committed,
//! or refused: a refused write leaves a gap). The feed shows only the events below the lowest
//! place in flight, so a write that commits after a later one never slips in behind a reader.
//! A sled database is open in one process at a time, so the places in flight are all known
//! here.

use assetlib_core::events::{Log, Written};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use assetlib_core::events::{
    Actor, Event, EventCursor, EventPage, EventQuery, EventType, ResourceType,
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sled::transaction::TransactionalTree;
use uuid::Uuid;

use crate::Inner;
use crate::error::{Error, TxError, abort};
use crate::record::{Ts, decode, encode};

/// An event as stored (its place is the key).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct EventRec {
    /// The event's id.
    pub(crate) id: Uuid,
    kind: String,
    occurred_at: Ts,
    actor: Option<(Uuid, String)>,
    resource_type: String,
    resource_id: Uuid,
    changed: Vec<String>,
    /// Last: an event written before format 8 ends before it and reads as one of no
    /// workspace ([`EventRec::decode`]).
    workspace_id: Option<String>,
}

impl EventRec {
    pub(crate) const WHAT: &'static str = "event";

    /// The stored record of `e` (its place is its key).
    pub(crate) fn new(e: &Event) -> Self {
        Self {
            id: e.id,
            kind: e.kind.as_str().to_owned(),
            occurred_at: Ts::from(&e.occurred_at),
            actor: e.actor.as_ref().map(|a| (a.key_id, a.key_name.clone())),
            resource_type: e.resource_type.as_str().to_owned(),
            resource_id: e.resource_id,
            changed: e.changed.clone(),
            workspace_id: e.workspace_id.clone(),
        }
    }

    /// An event record: of format 8, or one written before (which has no workspace yet:
    /// postcard's `None`, one zero byte, is what it lacks). The log is not rewritten by the
    /// upgrade; its records read either way until retention removes the old ones.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Self, Error> {
        decode::<EventRec>(Self::WHAT, bytes)
            .or_else(|e| decode(Self::WHAT, &[bytes, &[0]].concat()).map_err(|_| e))
    }

    /// The event this record stores at `place`.
    pub(crate) fn into_event(self, place: u64) -> Result<Event, Error> {
        Ok(Event {
            id: self.id,
            kind: self
                .kind
                .parse::<EventType>()
                .map_err(|()| Error::invalid(Self::WHAT, format!("type {}", self.kind)))?,
            occurred_at: self.occurred_at.time()?,
            actor: self
                .actor
                .map(|(key_id, key_name)| Actor { key_id, key_name }),
            resource_type: self.resource_type.parse::<ResourceType>().map_err(|()| {
                Error::invalid(Self::WHAT, format!("resource {}", self.resource_type))
            })?,
            resource_id: self.resource_id,
            changed: self.changed,
            workspace_id: self.workspace_id,
            at: EventCursor(0, place),
        })
    }
}

/// The places of the log: the next one to hand out and those in flight.
#[derive(Debug, Default)]
pub(crate) struct EventSeq {
    state: Mutex<SeqState>,
}

#[derive(Debug, Default)]
struct SeqState {
    next: u64,
    in_flight: BTreeSet<u64>,
}

impl EventSeq {
    /// Places handed out start after `last`, the last place in the log.
    pub(crate) fn after(last: u64) -> Self {
        Self {
            state: Mutex::new(SeqState {
                next: last + 1,
                in_flight: BTreeSet::new(),
            }),
        }
    }

    /// Reserves the next place, in flight until the returned guard is dropped.
    pub(crate) fn reserve(self: &Arc<Self>, log: Log) -> Reserved {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let at = state.next;
        state.next += 1;
        state.in_flight.insert(at);
        Reserved {
            seq: Arc::clone(self),
            slot: EventSlot { at, log },
        }
    }

    /// The places below the first one returned hold every event they will ever hold; the
    /// second is the next place to hand out (every place below it was given to a write).
    pub(crate) fn settled_and_next(&self) -> (u64, u64) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let settled = state.in_flight.first().copied().unwrap_or(state.next);
        (settled, state.next)
    }
}

/// A reserved place; dropping it ends its flight (keep it until the write is durable).
#[derive(Debug)]
pub(crate) struct Reserved {
    seq: Arc<EventSeq>,
    slot: EventSlot,
}

impl Reserved {
    /// Where the write's event goes.
    pub(crate) fn slot(&self) -> &EventSlot {
        &self.slot
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        let mut state = self
            .seq
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        state.in_flight.remove(&self.slot.at);
    }
}

/// A write's place in the log and who makes it.
#[derive(Debug, Clone)]
pub(crate) struct EventSlot {
    at: u64,
    log: Log,
}

impl EventSlot {
    /// Its place in the log.
    pub(crate) fn place(&self) -> u64 {
        self.at
    }

    /// Inserts the event the write's [`Log`] makes of what it did (`written`), if any, at
    /// this slot's place, in the write's transaction; with none, the place stays empty.
    pub(crate) fn put(
        &self,
        events: &TransactionalTree,
        written: Written<'_>,
    ) -> Result<(), TxError> {
        let Some(event) = self.log.event(written) else {
            return Ok(());
        };
        let value = encode(EventRec::WHAT, &EventRec::new(&event)).map_err(abort)?;
        events.insert(&self.at.to_be_bytes()[..], value)?;
        Ok(())
    }
}

/// The key in `meta` of the last place handed out when the log was last purged.
pub(crate) const HIGH_WATER: &[u8] = b"events_high_water";

/// The place of the last event in `tree` (0 when empty).
pub(crate) fn last_place(tree: &sled::Tree) -> Result<u64, Error> {
    match tree.last()? {
        Some((key, _)) => crate::tree_keys::decode_u64("event place", &key),
        None => Ok(0),
    }
}

/// The last place handed out as of the last purge (0 before any).
pub(crate) fn high_water(meta: &sled::Tree) -> Result<u64, Error> {
    match meta.get(HIGH_WATER)? {
        Some(v) => crate::tree_keys::decode_u64("events high water", &v),
        None => Ok(0),
    }
}

impl Inner {
    /// A page of the log after `query.after`, up to the lowest place in flight. `next` is
    /// the last event given when the page is full, else the last event looked at: always the
    /// place of an event, never a place after it (a place handed out to a write that was
    /// refused is handed out again after a restart, which must not land behind a reader).
    /// A cursor that is not `(0, place)` with a place already given to a write is
    /// [`Error::UnknownCursor`] (places are handed out after the last one the store knows
    /// when it opens, so those a reader was given stay good across restarts).
    pub(crate) fn list_events(&self, query: &EventQuery) -> Result<EventPage, Error> {
        let (settled, next_place) = self.event_seq.settled_and_next();
        if query.after.0 != 0 || query.after.1 >= next_place {
            return Err(Error::UnknownCursor);
        }
        let from = query.after.1.saturating_add(1);
        let mut events = Vec::new();
        let mut next = query.after;
        if from >= settled {
            return Ok(EventPage { events, next });
        }
        for item in self.events.range(from.to_be_bytes()..settled.to_be_bytes()) {
            let (key, value) = item?;
            self.touched(1);
            let place = crate::tree_keys::decode_u64("event place", &key)?;
            next = EventCursor(0, place);
            let event = EventRec::decode(&value)?.into_event(place)?;
            if query.matches(&event) {
                events.push(event);
                if events.len() >= query.limit {
                    break;
                }
            }
        }
        Ok(EventPage { events, next })
    }

    /// The event at `place`, if the log still has it.
    pub(crate) fn event_at(&self, place: u64) -> Result<Option<Event>, Error> {
        self.get(&self.events, &place.to_be_bytes())?
            .map(|v| EventRec::decode(&v)?.into_event(place))
            .transpose()
    }

    /// Removes the events older than `before`, oldest first, stopping at the first newer one.
    /// The last place handed out is kept in `meta` first ([`HIGH_WATER`]): places are handed
    /// out after the last one the store knows when it opens, and without it a log purged empty
    /// would hand out places again that a reader has already gone past.
    pub(crate) fn purge_events(&self, before: DateTime<Utc>) -> Result<u64, Error> {
        let newest = last_place(&self.events)?;
        let meta = self.db.open_tree("meta")?;
        let kept = high_water(&meta)?;
        if newest > kept {
            meta.insert(HIGH_WATER, &newest.to_be_bytes()[..])?;
            self.db.flush()?;
        }
        let mut removed = 0;
        for item in self.events.iter() {
            let (key, value) = item?;
            let rec = EventRec::decode(&value)?;
            if rec.occurred_at.time()? >= before {
                break;
            }
            self.events.remove(key)?;
            removed += 1;
        }
        Ok(removed)
    }
}

#[assetlib_core::async_trait]
impl assetlib_core::EventStore for crate::SledStore {
    async fn list_events(
        &self,
        query: &EventQuery,
    ) -> Result<EventPage, assetlib_core::StoreError> {
        let query = query.clone();
        self.blocking(move |inner| inner.list_events(&query)).await
    }

    async fn purge_events(&self, before: DateTime<Utc>) -> Result<u64, assetlib_core::StoreError> {
        self.write(move |inner| inner.purge_events(before)).await
    }
}
