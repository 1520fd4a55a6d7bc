//! The webhook operations, described: register, list, read, change, delete, deliveries,
//! retry and test.

use serde_json::json;

use super::{JSON_BODY_ERRORS, JSON_BODY_RECORD_ERRORS, Keys, Spec, created, json_answer};
use super::{json_body, read_answer};
use crate::openapi::build::{parameter as p, schema};

/// `Operation::CreateWebhook`.
pub(super) fn create_webhook() -> Spec {
    Spec {
        id: "createWebhook",
        tag: "webhooks",
        summary: "Register a webhook",
        description: "Registers an endpoint for the events that occur from now on. Each event \
            of its `event_types` is sent as a `POST` in the Standard Webhooks format: body \
            `{\"type\", \"timestamp\", \"data\": <the event as the change feed shows it>}`, \
            headers `webhook-id` (the event's id, the same on every attempt), \
            `webhook-timestamp` (Unix seconds of the attempt) and `webhook-signature` \
            (`v1,<base64 HMAC-SHA256 of \"{id}.{timestamp}.{body}\">` under the secret's \
            bytes). A 2xx within 15 s is success; redirects are not followed; anything else \
            is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (at least once, \
            never from a request's path: writes do not wait for deliveries). An endpoint \
            whose every attempt failed for 5 days is disabled. The answer shows the `secret` \
            this once. A URL whose host is, or resolves to, a loopback, private, link-local \
            or otherwise non-public address is 400 on `url` (unless the server allows \
            private targets), and is checked again at every delivery.",
        keys: Keys::Required,
        parameters: vec![],
        body: Some(json_body("WebhookDocument")),
        answers: vec![(
            "201",
            created(
                "Registered: the webhook, with its secret.",
                schema("NewWebhookEnvelope"),
                json!({
                    "GetWebhook": {"operationId": "getWebhook",
                        "parameters": {"webhook_id": "$response.body#/data/id"}},
                }),
            ),
        )],
        errors: JSON_BODY_ERRORS,
    }
}

/// `Operation::ListWebhooks`.
pub(super) fn list_webhooks() -> Spec {
    Spec {
        id: "listWebhooks",
        tag: "webhooks",
        summary: "List webhooks",
        description: "A page of the webhooks, newest first; never their secrets.",
        keys: Keys::Required,
        parameters: vec![p("Page"), p("PerPage"), p("IfNoneMatch")],
        body: None,
        answers: vec![(
            "200",
            read_answer("A page of webhooks.", schema("WebhookList")),
        )],
        errors: &["BadRequest"],
    }
}

/// `Operation::GetWebhook`.
pub(super) fn get_webhook() -> Spec {
    Spec {
        id: "getWebhook",
        tag: "webhooks",
        summary: "Read a webhook",
        description: "One webhook, whether it is enabled and since when it fails; never its \
            secret.",
        keys: Keys::Required,
        parameters: vec![p("WebhookId"), p("IfNoneMatch")],
        body: None,
        answers: vec![(
            "200",
            read_answer("The webhook.", schema("WebhookEnvelope")),
        )],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::UpdateWebhook`.
pub(super) fn update_webhook() -> Spec {
    Spec {
        id: "updateWebhook",
        tag: "webhooks",
        summary: "Change a webhook",
        description: "A JSON merge of `url` (checked as when registering), `event_types` and \
            `enabled`. Enabling a disabled webhook starts its failure count afresh and sends \
            the deliveries that waited.",
        keys: Keys::Required,
        parameters: vec![p("WebhookId")],
        body: Some(json_body("WebhookPatch")),
        answers: vec![(
            "200",
            json_answer("The webhook as changed.", schema("WebhookEnvelope")),
        )],
        errors: JSON_BODY_RECORD_ERRORS,
    }
}

/// `Operation::DeleteWebhook`.
pub(super) fn delete_webhook() -> Spec {
    Spec {
        id: "deleteWebhook",
        tag: "webhooks",
        summary: "Delete a webhook",
        description: "The webhook and its deliveries go; nothing more is sent to it.",
        keys: Keys::Required,
        parameters: vec![p("WebhookId")],
        body: None,
        answers: vec![("204", json!({"description": "Deleted."}))],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::ListDeliveries`.
pub(super) fn list_deliveries() -> Spec {
    Spec {
        id: "listDeliveries",
        tag: "webhooks",
        summary: "List a webhook's deliveries",
        description: "A page of the webhook's deliveries, newest first: each event sent (or \
            to send) to it, with its status, attempts, the last answer's status code or \
            error, and when the next attempt is due. Deliveries are kept as long as events.",
        keys: Keys::Required,
        parameters: vec![p("WebhookId"), p("Page"), p("PerPage"), p("IfNoneMatch")],
        body: None,
        answers: vec![(
            "200",
            read_answer("A page of deliveries.", schema("DeliveryList")),
        )],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::RetryDelivery`.
pub(super) fn retry_delivery() -> Spec {
    Spec {
        id: "retryDelivery",
        tag: "webhooks",
        summary: "Retry a delivery",
        description: "The delivery is due at once, whatever its status: one more attempt (a \
            delivery that failed every attempt of the schedule gets one; a pending one goes \
            now). The webhook must be enabled for it to go.",
        keys: Keys::Required,
        parameters: vec![p("WebhookId"), p("DeliveryId")],
        body: None,
        answers: vec![(
            "202",
            json_answer("The delivery, due now.", schema("DeliveryEnvelope")),
        )],
        errors: &["BadRequest", "NotFound"],
    }
}

/// `Operation::TestWebhook`.
pub(super) fn test_webhook() -> Spec {
    Spec {
        id: "testWebhook",
        tag: "webhooks",
        summary: "Send a test delivery",
        description: "Sends a `webhook.test` event to the endpoint now (enabled or not, \
            whatever its `event_types`), signed as every delivery, once, with no retry; \
            waits for the answer (at most 15 s) and answers with the delivery as recorded \
            among the webhook's deliveries. The test event is not in the change feed.",
        keys: Keys::Required,
        parameters: vec![p("WebhookId")],
        body: None,
        answers: vec![(
            "200",
            json_answer(
                "The test delivery: `succeeded` when the endpoint answered 2xx, else \
                 `failed` with why.",
                schema("DeliveryEnvelope"),
            ),
        )],
        errors: &["BadRequest", "NotFound"],
    }
}
