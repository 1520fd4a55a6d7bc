//! Webhooks and deliveries as the API writes them.

use serde::Serialize;
use uuid::Uuid;

use super::{Delivery, Webhook};
use crate::render::{Timestamp, opt_ts};

/// A webhook as the API shows it (never its secret, but in [`NewWebhookWire`]).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct WebhookWire<'a> {
    id: Uuid,
    /// Where deliveries are sent.
    url: &'a str,
    /// The event types it receives; `["*"]`: all.
    event_types: Vec<&'static str>,
    /// Whether deliveries are sent. A webhook whose every attempt failed for 5 days is
    /// disabled; enabling it again (`PATCH`) sends what waits.
    enabled: bool,
    /// Since when every attempt has failed; null while it works.
    failing_since: Option<Timestamp>,
    /// The workspace whose events it receives; null: every event (made with a global key
    /// that named none).
    #[cfg_attr(feature = "openapi", schema(pattern = "^[A-Za-z0-9_-]{1,64}$"))]
    workspace_id: Option<&'a str>,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl<'a> WebhookWire<'a> {
    pub(crate) fn of(webhook: &'a Webhook) -> Self {
        WebhookWire {
            id: webhook.id,
            url: &webhook.url,
            event_types: webhook.event_types.names(),
            enabled: webhook.enabled,
            failing_since: opt_ts(webhook.failing_since),
            workspace_id: webhook.workspace_id.as_deref(),
            created_at: Timestamp(webhook.created_at),
            updated_at: Timestamp(webhook.updated_at),
        }
    }
}

/// A webhook just made: its fields and, this once, its secret.
#[derive(Debug, Serialize)]
pub(crate) struct NewWebhookWire<'a> {
    #[serde(flatten)]
    pub(crate) webhook: WebhookWire<'a>,
    pub(crate) secret: &'a str,
}

/// A delivery as the API shows it (its body aside).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct DeliveryWire<'a> {
    id: Uuid,
    webhook_id: Uuid,
    /// The event delivered (`webhook-id` of every attempt), `evt_` and 32 hex digits.
    event_id: String,
    /// The event's type (`webhook.test` for a test delivery).
    event_type: &'a str,
    /// Where it stands: `pending`, `succeeded` or `failed`.
    status: &'static str,
    /// Attempts made (or under way).
    attempts: u32,
    /// The status code of the last answer; null when the last attempt got none.
    last_response_status: Option<u16>,
    /// Why the last attempt failed; null when it succeeded or none was made.
    last_error: Option<&'a str>,
    /// When the last attempt ended.
    last_attempt_at: Option<Timestamp>,
    /// When the next attempt is due (pending only).
    next_attempt_at: Option<Timestamp>,
    created_at: Timestamp,
}

impl<'a> DeliveryWire<'a> {
    pub(crate) fn of(d: &'a Delivery) -> Self {
        DeliveryWire {
            id: d.id,
            webhook_id: d.webhook_id,
            event_id: format!("evt_{}", d.event_id.simple()),
            event_type: &d.event_type,
            status: d.status.as_str(),
            attempts: d.attempts,
            last_response_status: d.last_response_status,
            last_error: d.last_error.as_deref(),
            last_attempt_at: opt_ts(d.last_attempt_at),
            next_attempt_at: opt_ts(d.next_attempt_at),
            created_at: Timestamp(d.created_at),
        }
    }
}
