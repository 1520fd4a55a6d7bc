//! Webhooks: endpoints that receive the event log ([`crate::events`]) as signed HTTP
//! deliveries in the [Standard Webhooks] format, at least once.
//!
//! How an event reaches an endpoint:
//! 1. A write appends its event in its own atomic change (the event log).
//! 2. The delivery worker of any process leases each enabled webhook's stream
//!    ([`crate::store::WebhookStore::lease_stream`]: one holder at a time), follows the log
//!    from the stream's place, sends the events the webhook wants, and records their
//!    [`Delivery`]s and the stream's new place in one change
//!    ([`crate::store::WebhookStore::advance_stream`]), so two processes never send a
//!    stream's event twice. Writes never wait for any of this.
//! 3. Due deliveries are claimed by one process at a time (a lease:
//!    [`crate::store::WebhookStore::claim_deliveries`]; PostgreSQL with `FOR UPDATE SKIP
//!    LOCKED`), sent, and their outcome recorded: a 2xx within the timeout is success; anything
//!    else is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h
//!    ([`crate::Config::webhook_retry_schedule`]), then the delivery has failed. An endpoint
//!    that has been failing for 5 days ([`crate::Config::webhook_disable_after`]) is disabled
//!    at its next failed attempt (the rule is core's: [`WebhookChange::disable_if_failing_since`]).
//!
//! A process that dies after sending but before recording sends again once its lease ends,
//! with the same `webhook-id`: receivers deduplicate on it.
//!
//! The pure parts live here: the records ([`Webhook`], [`Delivery`]), the retry schedule
//! ([`next_attempt`]), signatures ([`sign`]) and the address rules ([`target`]).
//!
//! ```
//! use assetlib_core::webhooks::{EventFilter, sign};
//! use assetlib_core::events::EventType;
//!
//! let filter = EventFilter::Only(vec![EventType::AssetCreated]);
//! assert!(filter.wants("asset.created"));
//! assert!(!filter.wants("library.deleted"));
//!
//! let secret = sign::new_secret().unwrap();
//! let signature = sign::signature(&secret, "evt_1", 1_700_000_000, b"{}").unwrap();
//! assert!(sign::verify(&secret, "evt_1", 1_700_000_000, b"{}", &signature));
//! ```
//!
//! [Standard Webhooks]: https://www.standardwebhooks.com/

#[cfg(feature = "webhooks")]
pub(crate) mod client;
pub mod sign;
pub mod target;
#[cfg(all(test, feature = "webhooks"))]
mod tls_tests;
#[cfg(any(feature = "webhooks", feature = "openapi"))]
#[cfg_attr(not(feature = "webhooks"), allow(dead_code))]
pub(crate) mod wire;

use std::time::Duration;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::events::{Event, EventCursor, EventType};

/// The `type` of a test delivery (`POST /api/v1/webhooks/{id}/test`): it is sent to the
/// endpoint whatever its `event_types`, and it is not in the event log.
pub const TEST_EVENT_TYPE: &str = "webhook.test";

/// The retry schedule of DESIGN.md: after the first attempt fails, the next ones follow after
/// these delays; when the last fails, the delivery has failed (8 attempts in all).
pub const DEFAULT_RETRY_SCHEDULE: [Duration; 7] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(10 * 3600),
];

/// Which events a webhook receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventFilter {
    /// Every event (`["*"]` on the wire).
    All,
    /// These types only (never empty, each once).
    Only(Vec<EventType>),
}

impl EventFilter {
    /// Whether an event of this type goes to the webhook.
    pub fn wants(&self, kind: &str) -> bool {
        match self {
            EventFilter::All => true,
            EventFilter::Only(types) => types.iter().any(|t| t.as_str() == kind),
        }
    }

    /// The wire names: `["*"]`, or each type's name.
    pub fn names(&self) -> Vec<&'static str> {
        match self {
            EventFilter::All => vec!["*"],
            EventFilter::Only(types) => types.iter().map(|t| t.as_str()).collect(),
        }
    }

    /// The filter the wire names spell (as [`EventFilter::names`] writes them); `None` when
    /// one is not `*` nor an event type.
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<Self> {
        let mut types: Vec<EventType> = Vec::new();
        for name in names {
            if name == "*" {
                return Some(EventFilter::All);
            }
            let kind = name.parse().ok()?;
            if !types.contains(&kind) {
                types.push(kind);
            }
        }
        Some(EventFilter::Only(types))
    }
}

/// A registered endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    /// Its id.
    pub id: Uuid,
    /// Where deliveries are sent: an absolute `http` or `https` URL, as parsed and normalised.
    pub url: String,
    /// The events it receives.
    pub event_types: EventFilter,
    /// Whether deliveries are sent (a disabled webhook gets no new deliveries; those pending
    /// wait until it is enabled again).
    pub enabled: bool,
    /// The signing secret (`whsec_` and the base64 of its bytes); shown once, when made.
    pub secret: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// Since when every attempt has failed (the first failure after a success); `None` while
    /// it works.
    pub failing_since: Option<DateTime<Utc>>,
    /// The workspace whose events it receives; `None`: every event (a webhook made with a
    /// global key). A workspace key sees only its workspace's webhooks.
    pub workspace_id: Option<String>,
}

/// A change of a webhook (`PATCH`): the fields to set; `None` keeps one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebhookChange {
    /// A new URL (checked as at create).
    pub url: Option<String>,
    /// New event types.
    pub event_types: Option<EventFilter>,
    /// Enabled or disabled. Enabling a webhook starts its failure count afresh.
    pub enabled: Option<bool>,
    /// The change applies only to a webhook failing since this time or earlier (and changes
    /// nothing otherwise): how the service disables a webhook that has failed too long,
    /// decided on the record as stored when the change lands.
    pub if_failing_since: Option<DateTime<Utc>>,
}

impl WebhookChange {
    /// Disables a webhook.
    pub fn disable() -> Self {
        WebhookChange {
            enabled: Some(false),
            ..WebhookChange::default()
        }
    }

    /// The rule for a webhook that has failed too long: disables it when it has been failing
    /// since `cutoff` or earlier (a success since, or a failure that began later, changes
    /// nothing). The delivery worker sends it after recording failed attempts.
    pub fn disable_if_failing_since(cutoff: DateTime<Utc>) -> Self {
        WebhookChange {
            if_failing_since: Some(cutoff),
            ..WebhookChange::disable()
        }
    }

    /// `webhook` with the change applied at `now` and the names of the fields that changed;
    /// `None` when nothing would change. Every store applies a change with this.
    pub fn apply(&self, webhook: &Webhook, now: DateTime<Utc>) -> Option<(Webhook, Vec<String>)> {
        if let Some(cutoff) = self.if_failing_since
            && webhook.failing_since.is_none_or(|since| since > cutoff)
        {
            return None;
        }
        let mut new = webhook.clone();
        let mut changed = Vec::new();
        if let Some(url) = self.url.as_ref().filter(|u| **u != webhook.url) {
            new.url = url.clone();
            changed.push("url".to_owned());
        }
        if let Some(types) = self
            .event_types
            .as_ref()
            .filter(|t| **t != webhook.event_types)
        {
            new.event_types = types.clone();
            changed.push("event_types".to_owned());
        }
        if let Some(enabled) = self.enabled.filter(|e| *e != webhook.enabled) {
            new.enabled = enabled;
            if enabled {
                new.failing_since = None;
            }
            changed.push("enabled".to_owned());
        }
        if changed.is_empty() {
            return None;
        }
        new.updated_at = now.max(webhook.updated_at);
        Some((new, changed))
    }
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryStatus {
    /// Not yet delivered: due at `next_attempt_at` (or being sent).
    Pending,
    /// An attempt got a 2xx.
    Succeeded,
    /// Every attempt of the schedule failed (a manual retry may still make one more).
    Failed,
}

impl DeliveryStatus {
    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Succeeded => "succeeded",
            DeliveryStatus::Failed => "failed",
        }
    }

    /// The status a wire name spells.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "pending" => Some(DeliveryStatus::Pending),
            "succeeded" => Some(DeliveryStatus::Succeeded),
            "failed" => Some(DeliveryStatus::Failed),
            _ => None,
        }
    }
}

/// One event for one webhook, and how its sending went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The delivery's id.
    pub id: Uuid,
    /// The webhook it goes to.
    pub webhook_id: Uuid,
    /// The event it carries (its `webhook-id` header is `evt_` and this id's simple form).
    pub event_id: Uuid,
    /// The event's type.
    pub event_type: String,
    /// Where the event is in the log ([`EventCursor::START`] for a test delivery, which is in
    /// no log): its body is made from the event when it is sent, so a delivery stores none.
    pub event_at: EventCursor,
    /// Where it stands.
    pub status: DeliveryStatus,
    /// Attempts started so far.
    pub attempts: u32,
    /// When it was enqueued.
    pub created_at: DateTime<Utc>,
    /// When the last attempt ended.
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// The status code of the last answer, if the last attempt got one.
    pub last_response_status: Option<u16>,
    /// Why the last attempt failed, if it did.
    pub last_error: Option<String>,
    /// When it is due (pending only; while an attempt runs, when its lease ends).
    pub next_attempt_at: Option<DateTime<Utc>>,
}

impl Delivery {
    /// A pending delivery to `webhook_id` of the event `event_id` (of `event_type`, at
    /// `event_at` in the log), due at `now`.
    pub fn new(
        webhook_id: Uuid,
        (event_id, event_type, event_at): (Uuid, &str, EventCursor),
        now: DateTime<Utc>,
    ) -> Self {
        Delivery {
            id: Uuid::new_v4(),
            webhook_id,
            event_id,
            event_type: event_type.to_owned(),
            event_at,
            status: DeliveryStatus::Pending,
            attempts: 0,
            created_at: now,
            last_attempt_at: None,
            last_response_status: None,
            last_error: None,
            next_attempt_at: Some(now),
        }
    }

    /// The delivery with `attempt` recorded (what every store stores for it).
    pub fn after(&self, attempt: &Attempt) -> Delivery {
        let (status, next_attempt_at) = attempt.next.state();
        Delivery {
            status,
            next_attempt_at,
            last_attempt_at: Some(attempt.at),
            last_response_status: attempt.response_status,
            last_error: attempt.error.clone(),
            ..self.clone()
        }
    }
}

/// A delivery claimed for an attempt, with where it goes, how it is signed, and its event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    /// The delivery, its `attempts` counting the attempt it was claimed for.
    pub delivery: Delivery,
    /// The webhook's URL.
    pub url: String,
    /// The webhook's secret.
    pub secret: String,
    /// The event at the delivery's `event_at`, when the log still has it (`None` for a test
    /// delivery, and for an event past its retention).
    pub event: Option<Event>,
}

/// What comes after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// It succeeded: the delivery is done.
    Succeeded,
    /// It failed: the next attempt is due then.
    RetryAt(DateTime<Utc>),
    /// It failed and it was the last: the delivery has failed.
    Failed,
}

impl Next {
    /// The status and next attempt time of a delivery after an attempt with this outcome.
    pub fn state(self) -> (DeliveryStatus, Option<DateTime<Utc>>) {
        match self {
            Next::Succeeded => (DeliveryStatus::Succeeded, None),
            Next::Failed => (DeliveryStatus::Failed, None),
            Next::RetryAt(at) => (DeliveryStatus::Pending, Some(at)),
        }
    }
}

/// The outcome of one attempt, to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// The delivery.
    pub delivery_id: Uuid,
    /// Its webhook.
    pub webhook_id: Uuid,
    /// When the attempt ended.
    pub at: DateTime<Utc>,
    /// The answer's status code, if one came.
    pub response_status: Option<u16>,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// What comes next.
    pub next: Next,
}

impl Attempt {
    /// Whether the attempt succeeded.
    pub fn succeeded(&self) -> bool {
        self.next == Next::Succeeded
    }
}

/// What follows a failed attempt number `attempts` (1 for the first) that ended at `at`:
/// the next attempt after the schedule's delay for it, or the end when the schedule has no
/// more.
pub fn next_attempt(schedule: &[Duration], attempts: u32, at: DateTime<Utc>) -> Next {
    let delay = usize::try_from(attempts)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|n| schedule.get(n))
        .and_then(|d| chrono::Duration::from_std(*d).ok());
    match delay.and_then(|d| at.checked_add_signed(d)) {
        Some(next) => Next::RetryAt(next),
        None => Next::Failed,
    }
}

/// The body of a delivery of `event`: `{"type", "timestamp", "data": <the event>}`.
pub fn payload(event: &Event) -> String {
    body(event.kind.as_str(), event)
}

/// A delivery's body for `event` shown as of type `kind`.
fn body(kind: &'static str, event: &Event) -> String {
    #[derive(serde::Serialize)]
    struct Body<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        timestamp: crate::render::Timestamp,
        data: crate::render::EventWire<'a>,
    }
    serde_json::to_string(&Body {
        kind,
        timestamp: crate::render::Timestamp(event.occurred_at),
        data: crate::render::EventWire::of(event).of_kind(kind),
    })
    .unwrap_or_default()
}

/// The body of a test delivery (`webhook.test`) sent at `at`, asked for by `actor`: shaped as
/// every delivery, about its webhook, its event in no log.
pub fn test_payload(
    delivery: &Delivery,
    at: DateTime<Utc>,
    actor: Option<&crate::events::Actor>,
) -> String {
    let event = Event {
        id: delivery.event_id,
        occurred_at: at,
        actor: actor.cloned(),
        ..Event::new(
            EventType::WebhookUpdated,
            crate::events::ResourceType::Webhook,
            delivery.webhook_id,
        )
    };
    body(TEST_EVENT_TYPE, &event)
}

/// The body to send for a claimed delivery: its event's, a test delivery's, or `None` when
/// its event is gone from the log (past its retention).
pub fn body_of(claimed: &Claimed, at: DateTime<Utc>) -> Option<String> {
    match &claimed.event {
        Some(event) => Some(payload(event)),
        None if claimed.delivery.event_type == TEST_EVENT_TYPE => {
            Some(test_payload(&claimed.delivery, at, None))
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(s, 0).unwrap()
    }

    #[test]
    fn the_schedule_gives_seven_retries_then_the_end() {
        let start = at(1_000);
        let mut waits = Vec::new();
        for attempts in 1..=8 {
            match next_attempt(&DEFAULT_RETRY_SCHEDULE, attempts, start) {
                Next::RetryAt(t) => waits.push((t - start).num_seconds()),
                Next::Failed => waits.push(-1),
                Next::Succeeded => unreachable!(),
            }
        }
        assert_eq!(
            waits,
            [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000, -1],
            "5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed"
        );
        assert_eq!(next_attempt(&[], 1, start), Next::Failed);
        assert_eq!(
            next_attempt(&DEFAULT_RETRY_SCHEDULE, 0, start),
            Next::Failed
        );
    }

    #[test]
    fn filters_spell_and_want() {
        assert_eq!(EventFilter::from_names(["*"]), Some(EventFilter::All));
        assert_eq!(
            EventFilter::from_names(["asset.created", "asset.created", "*"]),
            Some(EventFilter::All)
        );
        let only = EventFilter::from_names(["asset.deleted", "asset.deleted"]).unwrap();
        assert_eq!(only, EventFilter::Only(vec![EventType::AssetDeleted]));
        assert_eq!(only.names(), ["asset.deleted"]);
        assert!(only.wants("asset.deleted") && !only.wants(TEST_EVENT_TYPE));
        assert_eq!(EventFilter::from_names(["asset.made"]), None);
        assert!(EventFilter::All.wants("anything"));
    }

    #[test]
    fn a_change_names_what_it_changes_and_enabling_forgets_failures() {
        let t0 = at(10);
        let hook = Webhook {
            id: Uuid::nil(),
            url: "https://example.com/h".into(),
            event_types: EventFilter::All,
            enabled: false,
            secret: "whsec_x".into(),
            created_at: t0,
            updated_at: t0,
            failing_since: Some(t0),
            workspace_id: None,
        };
        let same = WebhookChange {
            url: Some(hook.url.clone()),
            event_types: Some(EventFilter::All),
            enabled: Some(false),
            if_failing_since: None,
        };
        assert_eq!(same.apply(&hook, at(20)), None);
        let enable = WebhookChange {
            enabled: Some(true),
            url: Some("https://example.com/other".into()),
            ..WebhookChange::default()
        };
        let (new, changed) = enable.apply(&hook, at(20)).unwrap();
        assert_eq!(changed, ["url", "enabled"]);
        assert!(new.enabled);
        assert_eq!(new.failing_since, None);
        assert_eq!(new.updated_at, at(20));
        let (off, changed) = WebhookChange::disable().apply(&new, at(30)).unwrap();
        assert_eq!(changed, ["enabled"]);
        assert!(!off.enabled);
    }

    #[test]
    fn a_webhook_is_disabled_only_when_failing_since_the_cutoff_or_earlier() {
        let t0 = at(0);
        let hook = |failing_since| Webhook {
            id: Uuid::nil(),
            url: "https://example.com/h".into(),
            event_types: EventFilter::All,
            enabled: true,
            secret: "whsec_x".into(),
            created_at: t0,
            updated_at: t0,
            failing_since,
            workspace_id: None,
        };
        let rule = WebhookChange::disable_if_failing_since(at(10));
        assert_eq!(rule.apply(&hook(None), at(20)), None, "working");
        assert_eq!(
            rule.apply(&hook(Some(at(11))), at(20)),
            None,
            "not long enough"
        );
        for since in [at(10), at(5)] {
            let (off, changed) = rule.apply(&hook(Some(since)), at(20)).expect("disabled");
            assert_eq!(changed, ["enabled"]);
            assert!(!off.enabled);
            assert_eq!(off.failing_since, Some(since), "the failure time is kept");
            assert_eq!(rule.apply(&off, at(21)), None, "already disabled");
        }
    }
}
