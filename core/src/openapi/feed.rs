//! The document's schemas of the event feed and of webhooks: `Event`, `EventList`,
//! `Webhook` (and `NewWebhook`, with its secret), `Delivery`, with their envelopes and lists.

use serde_json::{Value, json};

use super::build::{array, describe, one_of_strings, only, schema};
use super::derived;
use super::schemas::{envelope, whole};
use crate::render::EventWire;
use crate::webhooks::wire::{DeliveryWire, WebhookWire};

/// Adds the schemas of the feed and of webhooks.
pub(super) fn add_schemas(add: &mut dyn FnMut(&str, Value)) {
    add("Event", event());
    add("EventList", event_list());
    add("Webhook", webhook(false));
    add("NewWebhook", webhook(true));
    add("WebhookEnvelope", envelope(schema("Webhook"), None));
    add("NewWebhookEnvelope", envelope(schema("NewWebhook"), None));
    add(
        "WebhookList",
        envelope(array(schema("Webhook")), Some(schema("AssetPagination"))),
    );
    add("Delivery", delivery());
    add("DeliveryEnvelope", envelope(schema("Delivery"), None));
    add(
        "DeliveryList",
        envelope(array(schema("Delivery")), Some(schema("AssetPagination"))),
    );
}

/// An event of the log: the fields of [`EventWire`], its type and its resource's type named.
fn event() -> Value {
    let types: Vec<&str> = crate::events::EventType::ALL
        .iter()
        .map(|t| t.as_str())
        .collect();
    let resources: Vec<&str> = crate::events::ResourceType::ALL
        .iter()
        .map(|t| t.as_str())
        .collect();
    let mut fields = derived::properties(&derived::of::<EventWire>());
    for (name, schema) in &mut fields {
        match name.as_str() {
            "type" => *schema = one_of_strings(&types),
            "resource" => schema["properties"]["type"] = one_of_strings(&resources),
            _ => {}
        }
    }
    whole(
        fields,
        Some("One change: what happened, when, by which key, to what."),
    )
}

/// A page of the change feed.
fn event_list() -> Value {
    whole(
        vec![
            ("success".to_owned(), only(true)),
            ("data".to_owned(), array(schema("Event"))),
            (
                "next".to_owned(),
                describe(
                    json!({"type": "string", "pattern": "^[0-9a-f]{32}$"}),
                    "Where the next page starts: send it as `after`.",
                ),
            ),
        ],
        Some("Events in log order, and where the next page starts."),
    )
}

/// A webhook: the fields of [`WebhookWire`], its event types named, and its secret when just
/// made (`with_secret`).
fn webhook(with_secret: bool) -> Value {
    let mut types = vec!["*"];
    types.extend(crate::events::EventType::ALL.iter().map(|t| t.as_str()));
    let mut fields = derived::properties(&derived::of::<WebhookWire>());
    for (name, schema) in &mut fields {
        if name == "event_types" {
            schema["items"] = one_of_strings(&types);
        }
    }
    if with_secret {
        fields.push((
            "secret".to_owned(),
            describe(
                json!({"type": "string", "pattern": "^whsec_[A-Za-z0-9+/]{43}=$"}),
                "The signing secret: shown only in this answer. Deliveries are signed with \
                 HMAC-SHA256 under the base64-decoded part after `whsec_` (Standard \
                 Webhooks).",
            ),
        ));
    }
    let description = match with_secret {
        true => "A webhook just registered, with its secret.",
        false => "A webhook (never its secret).",
    };
    whole(fields, Some(description))
}

/// A delivery: the fields of [`DeliveryWire`].
fn delivery() -> Value {
    let mut fields = derived::properties(&derived::of::<DeliveryWire>());
    for (name, schema) in &mut fields {
        if name == "status" {
            *schema = describe(
                one_of_strings(&["pending", "succeeded", "failed"]),
                "`pending` (waiting for `next_attempt_at`, or being sent), `succeeded` (an \
                 attempt got a 2xx within the timeout) or `failed` (every attempt of the \
                 schedule failed).",
            );
        }
    }
    whole(
        fields,
        Some("One event for one webhook, and how sending it went."),
    )
}
