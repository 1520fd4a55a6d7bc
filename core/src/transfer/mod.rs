//! Moving data (feature `transfer`): every record of a store as it moves to another store
//! ([`copy`], the ready server's `migrate`) or into an archive and back ([`archive`], its
//! `backup` and `restore`), through [`crate::store::TransferStore`].
//!
//! A [`Record`] is one record as it moves, independent of the store that kept it: the
//! model's own types where they are plain data, and record types here for the event log and
//! webhooks, whose places in the log belong to a store. Records are written as JSON, one a
//! line, with a `"record"` field naming the kind:
//!
//! ```
//! use assetlib_core::transfer::Record;
//!
//! let line = r#"{"record":"signing_secret","secret":"00000000000000000000000000000000000000000000000000000000000000ff"}"#;
//! let record: Record = serde_json::from_str(line).unwrap();
//! assert_eq!(record, Record::SigningSecret { secret: { let mut s = [0; 32]; s[31] = 255; s }.into() });
//! assert_eq!(serde_json::to_string(&record).unwrap(), line);
//! ```

pub mod archive;
mod copy;
mod store;

pub use copy::{
    Copied, CopyDiffers, Progress, copy_files, copy_records, file_checksum, list_files, verify_copy,
};
pub use store::TransferStore;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::events::{Actor, Event, EventCursor, EventType, ResourceType};
use crate::model::{ApiKey, Asset, Library, LibraryEntry, LibraryPass, Section};
use crate::webhooks::{Delivery, DeliveryStatus, EventFilter, Webhook};

/// The version of the record format: archives name it, and a reader refuses a newer one.
pub const FORMAT: u32 = 1;

/// One record as it moves between stores, in the order a store exports its kinds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum Record {
    /// The secret signed links are signed with, so the links signed before a move stay good.
    SigningSecret {
        /// The secret.
        secret: Secret,
    },
    /// An API key (its hash: the key itself is never stored).
    Key(ApiKey),
    /// An asset, with its download count.
    Asset(Asset),
    /// The text kept for search of an asset's file (a store without search leaves it).
    Text(TextRecord),
    /// A library with its sections and entries, and its view count.
    Library(LibraryRecord),
    /// A library pass (its hash), with the downloads it made.
    Pass(LibraryPass),
    /// An event of the log, in the log's order.
    Event(EventRecord),
    /// A webhook, with its secret and where its stream stands (after the events: it names
    /// one).
    Webhook(WebhookRecord),
    /// A webhook delivery: its state, and the event it carries.
    Delivery(DeliveryRecord),
}

impl Record {
    /// The kind's name, as the `"record"` field spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            Record::SigningSecret { .. } => "signing_secret",
            Record::Key(_) => "key",
            Record::Asset(_) => "asset",
            Record::Text(_) => "text",
            Record::Library(_) => "library",
            Record::Pass(_) => "pass",
            Record::Webhook(_) => "webhook",
            Record::Event(_) => "event",
            Record::Delivery(_) => "delivery",
        }
    }
}

/// 32 secret bytes, written as 64 hex digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Secret(pub [u8; 32]);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl From<[u8; 32]> for Secret {
    fn from(bytes: [u8; 32]) -> Self {
        Secret(bytes)
    }
}

impl Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let hex: String = self.0.iter().map(|b| format!("{b:02x}")).collect();
        s.serialize_str(&hex)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let hex = String::deserialize(d)?;
        let bad = || serde::de::Error::custom("a secret is 64 hex digits");
        if hex.len() != 64 || !hex.is_ascii() {
            return Err(bad());
        }
        let mut bytes = [0u8; 32];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(Secret(bytes))
    }
}

/// The text kept for an asset's file ([`crate::store::SearchStore::set_asset_text`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextRecord {
    /// The asset.
    pub asset_id: Uuid,
    /// One item per page when `paged`, else one.
    pub pages: Vec<String>,
    /// Whether the items are numbered pages.
    pub paged: bool,
}

/// A library whole: the record, its sections and its entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryRecord {
    /// The library, with its slug, times and view count.
    pub library: Library,
    /// Its sections.
    pub sections: Vec<Section>,
    /// Its entries (of assets the store holds).
    pub entries: Vec<LibraryEntry>,
}

/// A webhook as it moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookRecord {
    /// Its id.
    pub id: Uuid,
    /// Where deliveries go.
    pub url: String,
    /// The event types it receives (`["*"]` for all), as the wire names them.
    pub event_types: Vec<String>,
    /// Whether deliveries are sent.
    pub enabled: bool,
    /// Its signing secret (`whsec_...`).
    pub secret: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// Since when every attempt has failed.
    pub failing_since: Option<DateTime<Utc>>,
    /// Its workspace.
    pub workspace_id: Option<String>,
    /// The last event of the log its deliveries have been made for (where its stream
    /// stands), or `None` when it stands before every event the log holds.
    pub delivered_through: Option<Uuid>,
}

impl WebhookRecord {
    /// The record of `webhook`, whose stream stands after the event `delivered_through`.
    pub fn of(webhook: &Webhook, delivered_through: Option<Uuid>) -> Self {
        WebhookRecord {
            id: webhook.id,
            url: webhook.url.clone(),
            event_types: webhook
                .event_types
                .names()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            enabled: webhook.enabled,
            secret: webhook.secret.clone(),
            created_at: webhook.created_at,
            updated_at: webhook.updated_at,
            failing_since: webhook.failing_since,
            workspace_id: webhook.workspace_id.clone(),
            delivered_through,
        }
    }

    /// The webhook it describes; `None` when an event type is unknown.
    pub fn webhook(&self) -> Option<Webhook> {
        Some(Webhook {
            id: self.id,
            url: self.url.clone(),
            event_types: EventFilter::from_names(self.event_types.iter().map(String::as_str))?,
            enabled: self.enabled,
            secret: self.secret.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
            failing_since: self.failing_since,
            workspace_id: self.workspace_id.clone(),
        })
    }
}

/// The key a write was made with, as an event names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActorRecord {
    /// The key's id.
    pub key_id: Uuid,
    /// Its name then.
    pub key_name: String,
}

/// An event of the log as it moves: everything but its place, which is the target's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Its id.
    pub id: Uuid,
    /// Its type's wire name (`asset.created`).
    pub kind: String,
    /// When it occurred.
    pub occurred_at: DateTime<Utc>,
    /// The key the write was made with.
    pub actor: Option<ActorRecord>,
    /// Its workspace.
    pub workspace_id: Option<String>,
    /// The kind of resource (`asset`, `library`, ...).
    pub resource_type: String,
    /// The resource's id.
    pub resource_id: Uuid,
    /// The fields that changed.
    pub changed: Vec<String>,
}

impl From<&Event> for EventRecord {
    fn from(event: &Event) -> Self {
        EventRecord {
            id: event.id,
            kind: event.kind.as_str().to_owned(),
            occurred_at: event.occurred_at,
            actor: event.actor.as_ref().map(|a| ActorRecord {
                key_id: a.key_id,
                key_name: a.key_name.clone(),
            }),
            workspace_id: event.workspace_id.clone(),
            resource_type: event.resource_type.as_str().to_owned(),
            resource_id: event.resource_id,
            changed: event.changed.clone(),
        }
    }
}

impl EventRecord {
    /// The event it describes, at `at` in the target's log; `None` when its type or its
    /// resource's is unknown.
    pub fn event(&self, at: EventCursor) -> Option<Event> {
        Some(Event {
            id: self.id,
            kind: self.kind.parse::<EventType>().ok()?,
            occurred_at: self.occurred_at,
            actor: self.actor.as_ref().map(|a| Actor {
                key_id: a.key_id,
                key_name: a.key_name.clone(),
            }),
            workspace_id: self.workspace_id.clone(),
            resource_type: self.resource_type.parse::<ResourceType>().ok()?,
            resource_id: self.resource_id,
            changed: self.changed.clone(),
            at,
        })
    }
}

/// A webhook delivery as it moves: the event it carries is named by id (its place is the
/// target's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryRecord {
    /// Its id.
    pub id: Uuid,
    /// The webhook.
    pub webhook_id: Uuid,
    /// The event it carries.
    pub event_id: Uuid,
    /// The event's type.
    pub event_type: String,
    /// Whether the event is in the log (a test delivery's is not).
    pub in_log: bool,
    /// `pending`, `succeeded` or `failed`.
    pub status: String,
    /// Attempts started.
    pub attempts: u32,
    /// When it was enqueued.
    pub created_at: DateTime<Utc>,
    /// When the last attempt ended.
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// The status code of the last answer.
    pub last_response_status: Option<u16>,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When it is due.
    pub next_attempt_at: Option<DateTime<Utc>>,
}

impl From<&Delivery> for DeliveryRecord {
    fn from(d: &Delivery) -> Self {
        DeliveryRecord {
            id: d.id,
            webhook_id: d.webhook_id,
            event_id: d.event_id,
            event_type: d.event_type.clone(),
            in_log: d.event_at != EventCursor::START,
            status: d.status.as_str().to_owned(),
            attempts: d.attempts,
            created_at: d.created_at,
            last_attempt_at: d.last_attempt_at,
            last_response_status: d.last_response_status,
            last_error: d.last_error.clone(),
            next_attempt_at: d.next_attempt_at,
        }
    }
}

impl DeliveryRecord {
    /// The delivery it describes, its event at `event_at` in the target's log
    /// ([`EventCursor::START`] when not `in_log`); `None` for an unknown status.
    pub fn delivery(&self, event_at: EventCursor) -> Option<Delivery> {
        Some(Delivery {
            id: self.id,
            webhook_id: self.webhook_id,
            event_id: self.event_id,
            event_type: self.event_type.clone(),
            event_at,
            status: DeliveryStatus::parse(&self.status)?,
            attempts: self.attempts,
            created_at: self.created_at,
            last_attempt_at: self.last_attempt_at,
            last_response_status: self.last_response_status,
            last_error: self.last_error.clone(),
            next_attempt_at: self.next_attempt_at,
        })
    }
}

/// How many records of each kind a store keeps ([`crate::store::TransferStore::record_counts`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordCounts {
    /// API keys.
    pub keys: u64,
    /// Assets.
    pub assets: u64,
    /// Kept texts.
    pub texts: u64,
    /// Libraries.
    pub libraries: u64,
    /// Passes.
    pub passes: u64,
    /// Webhooks.
    pub webhooks: u64,
    /// Events.
    pub events: u64,
    /// Deliveries.
    pub deliveries: u64,
}

impl RecordCounts {
    /// Every record but the signing secret.
    pub fn total(&self) -> u64 {
        self.keys
            + self.assets
            + self.texts
            + self.libraries
            + self.passes
            + self.webhooks
            + self.events
            + self.deliveries
    }

    /// Counts `record`.
    pub fn add(&mut self, record: &Record) {
        match record {
            Record::SigningSecret { .. } => {}
            Record::Key(_) => self.keys += 1,
            Record::Asset(_) => self.assets += 1,
            Record::Text(_) => self.texts += 1,
            Record::Library(_) => self.libraries += 1,
            Record::Pass(_) => self.passes += 1,
            Record::Webhook(_) => self.webhooks += 1,
            Record::Event(_) => self.events += 1,
            Record::Delivery(_) => self.deliveries += 1,
        }
    }

    /// Whether the store holds nothing a move would bring (the signing secret aside).
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }
}

impl std::fmt::Display for RecordCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} keys, {} assets, {} texts, {} libraries, {} passes, {} webhooks, {} events, {} deliveries",
            self.keys,
            self.assets,
            self.texts,
            self.libraries,
            self.passes,
            self.webhooks,
            self.events,
            self.deliveries
        )
    }
}
