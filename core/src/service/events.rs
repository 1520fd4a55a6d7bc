//! The change feed and audit trail: `GET /api/v1/events` (scope `read:events`).

use serde::Serialize;

use super::Service;
use crate::error::ApiError;
use crate::render::EventWire;
use crate::reply::Reply;
use crate::request::RawRequest;

#[derive(Serialize)]
struct FeedPage<'a> {
    success: bool,
    data: Vec<EventWire<'a>>,
    next: String,
}

impl Service {
    /// Removes the events older than [`crate::Config::event_retention`] from the log, and the
    /// webhook deliveries as old; returns how many events. Run it now and then (the ready server does every hour); a reader whose
    /// cursor points at removed events goes on from the oldest one kept.
    ///
    /// # Errors
    /// 500 when the store fails.
    pub async fn purge_events(&self) -> Result<u64, ApiError> {
        let retention = chrono::Duration::from_std(self.inner.config.event_retention)
            .unwrap_or(chrono::Duration::MAX);
        let before = chrono::Utc::now()
            .checked_sub_signed(retention)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
        // A store keeps deliveries only with an event log; one that keeps neither has nothing
        // to purge.
        if let Some(webhooks) = self.inner.store.webhook_store() {
            webhooks.purge_deliveries(before).await?;
        }
        match self.inner.store.event_store() {
            Some(events) => Ok(events.purge_events(before).await?),
            None => Ok(0),
        }
    }

    /// `GET /api/v1/events?after&type&resource&limit`: the events after `after` in log order,
    /// and the `next` to ask with for the ones after them; those of its workspace alone for
    /// a workspace key (`ws`).
    pub(super) async fn list_events(
        &self,
        req: RawRequest<'_>,
        ws: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let query = crate::events::EventQuery {
            workspace: ws.map(str::to_owned),
            ..crate::query::events_query(req.query)?
        };
        let page = self.event_store()?.list_events(&query).await?;
        Ok(Reply::json_value(
            200,
            &FeedPage {
                success: true,
                data: page.events.iter().map(EventWire::of).collect(),
                next: page.next.to_string(),
            },
        ))
    }
}
