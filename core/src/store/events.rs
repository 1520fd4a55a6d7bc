//! [`EventStore`]: the event log.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::error::StoreError;
use crate::events::{EventPage, EventQuery};

/// The event log ([`crate::events`]). Every write method of the other traits that changes
/// something takes the service's [`Log`](crate::events::Log), says what it did as a
/// [`Written`](crate::events::Written), and appends the event
/// [`Log::event`](crate::events::Log::event) makes of it (if any) in the same atomic change:
/// `insert_asset`; `update_asset` (none when no field the log names differs);
/// `update_assets` and `delete_assets`, one per asset; `delete_asset` when it deletes;
/// `put_library`; `delete_library` when it deletes; `insert_key` and `insert_pass`;
/// `revoke_key` and `revoke_pass` when they revoke one not revoked yet, an expired one
/// included (a second revoke changes nothing and records nothing); and the webhook writes. A
/// write that fails or is refused appends none. Counters (downloads, views, pass spends) are
/// not events. A store that keeps no event log takes the `Log` and appends nothing.
#[async_trait]
pub trait EventStore: Send + Sync + 'static {
    /// Up to `query.limit` events after `query.after` that match its filters, in log order,
    /// and where the next page starts. A reader that follows `next` sees every event exactly
    /// once: the log shows no event while a write that started before it may still add one
    /// that sorts before it (such a write's event waits until that write has finished).
    ///
    /// `query.after` is [`EventCursor::START`](crate::events::EventCursor::START) or a place
    /// this log handed out: a page's `next`, or where a webhook's stream stands. A cursor past
    /// the end of the log (a place no write has been given yet) or not of the form this log's
    /// places have is [`StoreError::UnknownCursor`], so a reader holding one learns it at
    /// once instead of waiting on it forever (or reading the log again from its start).
    /// Places the log gave out stay good after their events are purged and after a restart.
    async fn list_events(&self, query: &EventQuery) -> Result<EventPage, StoreError>;

    /// Removes the events that occurred before `before`; returns how many.
    async fn purge_events(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;
}
