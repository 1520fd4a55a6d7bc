//! Where each event of the log is, by its id: the tree `transfer_events` (event id -> place,
//! a big-endian `u64`), for an import that must leave the events the log has and find where
//! a webhook's stream and a delivery's event stand. The log is keyed by place only, and a
//! walk of it for every call of an import would make a long import's work grow with the
//! square of its events.
//!
//! The tree follows the log: before a call that needs it, [`Places::synced`] adds the events
//! after the last place it holds (`meta`'s `transfer_events_through`) up to the first place
//! still in flight, so each event is read once whichever call brings it. A place it names is
//! checked against the log when read, so an event purged since is not found. It is dropped
//! when a move ends ([`forget`]), and built again from the log by the next import.

use sled::Tree;
use uuid::Uuid;

use crate::Inner;
use crate::error::Error;
use crate::events::EventRec;
use crate::tree_keys;

/// The tree of the events' places.
const TREE: &str = "transfer_events";

/// The key in `meta` of the last place of the log the tree holds.
const THROUGH: &[u8] = b"transfer_events_through";

/// The id of the event stored as `value`.
fn event_id(value: &[u8]) -> Result<Uuid, Error> {
    Ok(EventRec::decode(value)?.id)
}

/// The places of the log's events, by id.
pub(crate) struct Places<'a> {
    inner: &'a Inner,
    tree: Tree,
}

impl<'a> Places<'a> {
    /// The places, with every event of the log up to the first place in flight.
    pub(crate) fn synced(inner: &'a Inner) -> Result<Self, Error> {
        let tree = inner.db.open_tree(TREE)?;
        let meta = inner.db.open_tree("meta")?;
        let through = match meta.get(THROUGH)? {
            Some(v) => tree_keys::decode_u64("transfer events through", &v)?,
            None => 0,
        };
        // Below the first place in flight, each place holds every event it will ever hold.
        let (settled, _) = inner.event_seq.settled_and_next();
        let from = through.saturating_add(1);
        if from < settled {
            let mut last = None;
            for kv in inner
                .events
                .range(from.to_be_bytes()..settled.to_be_bytes())
            {
                let (key, value) = kv?;
                tree.insert(event_id(&value)?.as_bytes(), &key)?;
                last = Some(key);
            }
            // The last event's place, not the first in flight: a place left empty by a
            // refused write may be given again after a restart.
            if let Some(last) = last {
                meta.insert(THROUGH, last)?;
            }
        }
        Ok(Places { inner, tree })
    }

    /// The place of event `id`, if the log holds it.
    pub(crate) fn place_of(&self, id: Uuid) -> Result<Option<u64>, Error> {
        let Some(key) = self.tree.get(id.as_bytes())? else {
            return Ok(None);
        };
        match self.inner.events.get(&key)? {
            Some(value) if event_id(&value)? == id => {
                Ok(Some(tree_keys::decode_u64("event place", &key)?))
            }
            // Purged since.
            _ => Ok(None),
        }
    }
}

/// Drops the tree (a move is over): its mark first, so a crash in between leaves a tree the
/// next import fills again from the start of the log.
pub(crate) fn forget(inner: &Inner) -> Result<(), Error> {
    inner.db.open_tree("meta")?.remove(THROUGH)?;
    inner.db.drop_tree(TREE)?;
    Ok(())
}
