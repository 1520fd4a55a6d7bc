//! [`EventStore`] of the [`MemoryStore`]: the log is a list of events in the order of the
//! writes, each at its place `(0, n)`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::MemoryStore;
use crate::error::StoreError;
use crate::events::{EventCursor, EventPage, EventQuery};
use crate::store::EventStore;

#[async_trait]
impl EventStore for MemoryStore {
    async fn list_events(&self, query: &EventQuery) -> Result<EventPage, StoreError> {
        let state = self.read();
        // Places are (0, n) for n up to the last handed out.
        if query.after.0 != 0 || query.after.1 > state.last_event {
            return Err(StoreError::UnknownCursor);
        }
        // Every write appends under the write lock, so the log is final as far as it goes:
        // `next` is the last event given when the page is full, else the last of the log.
        let start = state.events.partition_point(|(at, _)| *at <= query.after.1);
        let mut events = Vec::new();
        for (at, event) in &state.events[start..] {
            if query.matches(event) {
                events.push(event.clone());
                if events.len() >= query.limit {
                    return Ok(EventPage {
                        events,
                        next: EventCursor(0, *at),
                    });
                }
            }
        }
        Ok(EventPage {
            events,
            next: EventCursor(0, state.last_event),
        })
    }

    async fn purge_events(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut state = self.write();
        let old = state.events.len();
        state.events.retain(|(_, e)| e.occurred_at >= before);
        Ok((old - state.events.len()) as u64)
    }
}
