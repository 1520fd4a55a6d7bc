//! `POST /api/v1/webhooks` and `PATCH /api/v1/webhooks/{id}` bodies.

use serde_json::{Map, Value};

use super::{Fields, json_object};
use crate::error::ApiError;
use crate::events::EventType;
use crate::webhooks::target;
use crate::webhooks::{EventFilter, WebhookChange};

/// Fields of a webhook that exist but that a body may not set.
const FIXED: &[&str] = &["id", "secret", "created_at", "updated_at", "failing_since"];

/// A validated `POST /api/v1/webhooks` body. Where its URL leads is checked by the service
/// (it resolves the host).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebhookDoc {
    /// The parsed, normalised URL.
    pub url: String,
    /// The events it receives (default all: `["*"]`).
    pub event_types: EventFilter,
    /// Whether it is enabled (default `true`).
    pub enabled: bool,
    /// The workspace whose events it receives ([`super::workspace_id`]); `None`: none named
    /// (a global key's webhook then receives every event, a workspace key's its own).
    pub workspace_id: Option<String>,
}

/// Validates a new webhook: `url` (required; an absolute `http`/`https` URL of at most 2048
/// bytes), `event_types` (an array of event types, or `["*"]` for all; default all) and
/// `enabled` (default `true`). A 400 names the field (`event_types[1]`, say); `id`, `secret`
/// and the times are 400 naming them; unknown fields are ignored.
///
/// ```
/// use assetlib_core::validate::webhook_doc;
/// use assetlib_core::webhooks::EventFilter;
///
/// let doc = webhook_doc(br#"{"url": "https://example.com/hooks"}"#).unwrap();
/// assert_eq!(doc.event_types, EventFilter::All);
/// assert!(webhook_doc(br#"{"url": "ftp://example.com/"}"#).is_err());
/// ```
pub fn webhook_doc(body: &[u8]) -> Result<WebhookDoc, ApiError> {
    let map = json_object(body)?;
    fixed(&map)?;
    let f = Fields::new(&map, "");
    let url = url(f.req_str("url")?)?;
    Ok(WebhookDoc {
        url,
        event_types: event_types(&map)?.unwrap_or(EventFilter::All),
        enabled: f.opt_bool("enabled")?.unwrap_or(true),
        workspace_id: f
            .opt_str("workspace_id")?
            .map(|w| super::workspace_id("workspace_id", w))
            .transpose()?,
    })
}

/// Validates a webhook change (`PATCH`): any of `url`, `event_types` and `enabled`, each as
/// [`webhook_doc`] takes it; `null` for one of them is 400.
pub fn webhook_change(body: &[u8]) -> Result<WebhookChange, ApiError> {
    let map = json_object(body)?;
    fixed(&map)?;
    // A webhook stays in the workspace it was made in.
    if map.contains_key("workspace_id") {
        return Err(ApiError::validation(
            "workspace_id",
            "workspace_id cannot be changed",
        ));
    }
    for name in ["url", "event_types", "enabled"] {
        if map.get(name).is_some_and(Value::is_null) {
            return Err(ApiError::validation(name, format!("{name} cannot be null")));
        }
    }
    let f = Fields::new(&map, "");
    Ok(WebhookChange {
        url: f.opt_str("url")?.map(url).transpose()?,
        event_types: event_types(&map)?,
        enabled: f.opt_bool("enabled")?,
        if_failing_since: None,
    })
}

fn fixed(map: &Map<String, Value>) -> Result<(), ApiError> {
    match FIXED.iter().find(|name| map.contains_key(**name)) {
        Some(name) => Err(ApiError::validation(*name, format!("{name} cannot be set"))),
        None => Ok(()),
    }
}

fn url(raw: &str) -> Result<String, ApiError> {
    target::parse(raw)
        .map(String::from)
        .map_err(|e| ApiError::validation("url", e.to_string()))
}

/// `event_types`: a non-empty array of event types or `*`.
fn event_types(map: &Map<String, Value>) -> Result<Option<EventFilter>, ApiError> {
    let list = match map.get("event_types") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(list)) if !list.is_empty() => list,
        Some(_) => {
            return Err(ApiError::validation(
                "event_types",
                "event_types must be a non-empty array of event types, or [\"*\"] for all",
            ));
        }
    };
    let mut names = Vec::with_capacity(list.len());
    for (n, value) in list.iter().enumerate() {
        match value.as_str() {
            Some(name) if name == "*" || name.parse::<EventType>().is_ok() => names.push(name),
            _ => {
                let known: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
                let path = format!("event_types[{n}]");
                return Err(ApiError::validation(
                    &path,
                    format!("{path} must be \"*\" or one of: {}", known.join(", ")),
                ));
            }
        }
    }
    Ok(EventFilter::from_names(names))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(r: Result<impl std::fmt::Debug, ApiError>) -> String {
        match r {
            Err(ApiError::Validation { field, .. }) => field,
            other => panic!("not a 400: {other:?}"),
        }
    }

    #[test]
    fn bad_bodies_name_the_field() {
        assert_eq!(field(webhook_doc(b"{}")), "url");
        assert_eq!(field(webhook_doc(br#"{"url": 5}"#)), "url");
        assert_eq!(field(webhook_doc(br#"{"url": "gopher://x.org/"}"#)), "url");
        let long = format!(r#"{{"url": "https://example.com/{}"}}"#, "a".repeat(2100));
        assert_eq!(field(webhook_doc(long.as_bytes())), "url");
        let u = r#""url": "https://example.com/h""#;
        for (body, want) in [
            (format!(r#"{{{u}, "event_types": []}}"#), "event_types"),
            (format!(r#"{{{u}, "event_types": "*"}}"#), "event_types"),
            (
                format!(r#"{{{u}, "event_types": ["asset.created", 7]}}"#),
                "event_types[1]",
            ),
            (
                format!(r#"{{{u}, "event_types": ["asset.made"]}}"#),
                "event_types[0]",
            ),
            (format!(r#"{{{u}, "enabled": "yes"}}"#), "enabled"),
            (format!(r#"{{{u}, "secret": "whsec_mine"}}"#), "secret"),
            ("[]".to_owned(), "body"),
        ] {
            assert_eq!(field(webhook_doc(body.as_bytes())), want, "{body}");
        }
        assert_eq!(field(webhook_change(br#"{"url": null}"#)), "url");
        assert_eq!(field(webhook_change(br#"{"enabled": null}"#)), "enabled");
        assert_eq!(field(webhook_change(br#"{"id": "x"}"#)), "id");
    }

    #[test]
    fn good_bodies_keep_what_they_say() {
        let doc = webhook_doc(
            br#"{"url": "https://Example.com/h", "event_types": ["asset.created", "asset.created",
                "library.updated"], "enabled": false, "other": 1}"#,
        )
        .unwrap();
        assert_eq!(doc.url, "https://example.com/h");
        assert_eq!(
            doc.event_types,
            EventFilter::Only(vec![EventType::AssetCreated, EventType::LibraryUpdated])
        );
        assert!(!doc.enabled);
        let change = webhook_change(br#"{"enabled": true}"#).unwrap();
        assert_eq!(change.enabled, Some(true));
        assert_eq!((change.url, change.event_types), (None, None));
    }
}
