//! The event log: every write of the API appends its [`Event`] (a bulk change one per asset)
//! in the same atomic change as the write itself (a store's transaction), so an acknowledged
//! write always has its event and no event exists without its write. Readers follow it as a change feed
//! (`GET /api/v1/events`, [`EventStore::list_events`](crate::store::EventStore)) and as an
//! audit trail (`resource=asset:{id}`).
//!
//! Which event a write appends is decided here, for every store: the service hands each write
//! of a store a [`Log`] (who makes it), the store says what it did in the write's atomic
//! change ([`Written`]: an asset created, changed from one state to another, a library put
//! over none, ...), and appends the event [`Log::event`] makes of it, if any, in that same
//! change. A store never picks an event's kind, fields or actor. The HTTP service runs each
//! request's operation as its key ([`crate::Service::acting_as`]), so events of API writes
//! name it; a write made by Rust code outside any request names none ([`Log::ANONYMOUS`]).
//!
//! ```
//! use assetlib_core::events::{Actor, EventType, Log, Written};
//! let actor = Actor { key_id: uuid::Uuid::nil(), key_name: "ci".into() };
//! let log = Log::by(actor.clone());
//! let event = log.event(Written::LibraryPut { id: uuid::Uuid::nil(), created: true });
//! let event = event.expect("a put appends an event");
//! assert_eq!((event.kind, event.actor), (EventType::LibraryCreated, Some(actor)));
//! ```

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::model::{ApiKey, Asset, LibraryPass};

/// The key a write was made with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The key's id.
    pub key_id: Uuid,
    /// The key's name when the write was made.
    pub key_name: String,
}

impl Actor {
    /// The actor of writes made with `key`.
    pub fn of(key: &ApiKey) -> Self {
        Self {
            key_id: key.id,
            key_name: key.name.clone(),
        }
    }
}

/// What the service hands every write of a store that appends an event: who makes it. The
/// store turns what it did ([`Written`]) into the event with [`Log::event`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Log {
    actor: Option<Actor>,
    workspace: Option<String>,
}

impl Log {
    /// Writes whose events name no key: made by Rust code outside any request, or by the
    /// service's own work that no key asked for (a webhook disabled after failing too long,
    /// expired uploads removed).
    pub const ANONYMOUS: &'static Log = &Log {
        actor: None,
        workspace: None,
    };

    /// Writes made with the key `actor`.
    pub fn by(actor: Actor) -> Self {
        Self::of(Some(actor))
    }

    /// Writes made by `actor`, or by no key.
    pub fn of(actor: Option<Actor>) -> Self {
        Log {
            actor,
            workspace: None,
        }
    }

    /// The same writer, writing records of the workspace `workspace`: the workspace the
    /// events name of a write whose [`Written`] carries no record (a library, a pass, a key
    /// revoked, a webhook). An asset's event and a key's creation name their record's own.
    pub fn in_workspace(&self, workspace: Option<&str>) -> Self {
        Log {
            actor: self.actor.clone(),
            workspace: workspace.map(str::to_owned),
        }
    }

    /// Who the writes' events name.
    pub fn actor(&self) -> Option<&Actor> {
        self.actor.as_ref()
    }

    /// The event a write that did `written` appends in the same atomic change, now; `None`
    /// when it appends none (an asset change that changed no field the log names).
    pub fn event(&self, written: Written<'_>) -> Option<Event> {
        let event = match written {
            Written::AssetCreated(asset) => {
                Event::new(EventType::AssetCreated, ResourceType::Asset, asset.id)
            }
            Written::AssetChanged { before, after } => Event::asset_changed(before, after)?,
            Written::AssetDeleted(asset) => {
                Event::new(EventType::AssetDeleted, ResourceType::Asset, asset.id)
            }
            Written::LibraryPut { id, created } => {
                let kind = if created {
                    EventType::LibraryCreated
                } else {
                    EventType::LibraryUpdated
                };
                Event::new(kind, ResourceType::Library, id)
            }
            Written::LibraryDeleted(id) => {
                Event::new(EventType::LibraryDeleted, ResourceType::Library, id)
            }
            Written::KeyCreated(key) => {
                Event::new(EventType::KeyCreated, ResourceType::Key, key.id)
            }
            Written::KeyRevoked(id) => Event::new(EventType::KeyRevoked, ResourceType::Key, id),
            Written::PassCreated(pass) => {
                Event::new(EventType::PassCreated, ResourceType::Pass, pass.id)
            }
            Written::PassRevoked(id) => Event::new(EventType::PassRevoked, ResourceType::Pass, id),
            Written::WebhookCreated(id) => {
                Event::new(EventType::WebhookCreated, ResourceType::Webhook, id)
            }
            Written::WebhookChanged { id, changed } => Event {
                changed: changed.to_vec(),
                ..Event::new(EventType::WebhookUpdated, ResourceType::Webhook, id)
            },
            Written::WebhookDeleted(id) => {
                Event::new(EventType::WebhookDeleted, ResourceType::Webhook, id)
            }
        };
        let workspace = match written {
            Written::AssetCreated(asset)
            | Written::AssetChanged { after: asset, .. }
            | Written::AssetDeleted(asset) => asset.workspace_id.as_deref(),
            Written::KeyCreated(key) => key.workspace_id.as_deref(),
            _ => self.workspace.as_deref(),
        };
        Some(Event {
            actor: self.actor.clone(),
            workspace_id: workspace.map(str::to_owned),
            ..event
        })
    }
}

/// What a store's write did, as the store says it in the write's atomic change, for
/// [`Log::event`] to make its event of. A write that changes nothing (a delete of nothing, a
/// revoke of a revoked key, a change [`crate::AssetChange::apply`] or
/// [`crate::webhooks::WebhookChange::apply`] refuses) says nothing.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Written<'a> {
    /// `insert_asset` stored this asset.
    AssetCreated(&'a Asset),
    /// `update_asset` (or `update_assets`, once per asset) changed an asset from `before` to
    /// `after`.
    AssetChanged {
        /// The asset as it was stored.
        before: &'a Asset,
        /// The asset as it is stored now.
        after: &'a Asset,
    },
    /// `delete_asset` (or `delete_assets`, once per asset) deleted this asset (as it was).
    AssetDeleted(&'a Asset),
    /// `put_library` stored this library, over none (`created`) or over one.
    LibraryPut {
        /// The library.
        id: Uuid,
        /// Whether there was none before.
        created: bool,
    },
    /// `delete_library` deleted this library.
    LibraryDeleted(Uuid),
    /// `insert_key` stored this key.
    KeyCreated(&'a ApiKey),
    /// `revoke_key` revoked this key.
    KeyRevoked(Uuid),
    /// `insert_pass` stored this pass.
    PassCreated(&'a LibraryPass),
    /// `revoke_pass` revoked this pass.
    PassRevoked(Uuid),
    /// `insert_webhook` stored this webhook.
    WebhookCreated(Uuid),
    /// `update_webhook` changed these fields of a webhook (as
    /// [`crate::webhooks::WebhookChange::apply`] names them).
    WebhookChanged {
        /// The webhook.
        id: Uuid,
        /// The fields that changed.
        changed: &'a [String],
    },
    /// `delete_webhook` deleted this webhook.
    WebhookDeleted(Uuid),
}

macro_rules! names {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident => $wire:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
        }

        impl $name {
            /// Every value, in order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)*
                }
            }
        }

        impl FromStr for $name {
            type Err = ();

            fn from_str(s: &str) -> Result<Self, ()> {
                match s {
                    $($wire => Ok($name::$variant),)*
                    _ => Err(()),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

names! {
    /// What happened.
    pub enum EventType {
        /// An asset was created.
        AssetCreated => "asset.created",
        /// An asset's fields changed (publishing is a change of `published`).
        AssetUpdated => "asset.updated",
        /// An asset's file was replaced.
        AssetFileReplaced => "asset.file_replaced",
        /// An asset was deleted.
        AssetDeleted => "asset.deleted",
        /// A library was created.
        LibraryCreated => "library.created",
        /// A library was replaced.
        LibraryUpdated => "library.updated",
        /// A library was deleted.
        LibraryDeleted => "library.deleted",
        /// An API key was created.
        KeyCreated => "key.created",
        /// An API key was revoked.
        KeyRevoked => "key.revoked",
        /// A library pass was created.
        PassCreated => "pass.created",
        /// A library pass was revoked.
        PassRevoked => "pass.revoked",
        /// A webhook was registered.
        WebhookCreated => "webhook.created",
        /// A webhook's URL, event types or state changed (a webhook disabled after failing
        /// too long too).
        WebhookUpdated => "webhook.updated",
        /// A webhook was deleted.
        WebhookDeleted => "webhook.deleted",
    }
}

names! {
    /// The kind of resource an event is about.
    pub enum ResourceType {
        /// An asset.
        Asset => "asset",
        /// A library.
        Library => "library",
        /// An API key.
        Key => "key",
        /// A library pass.
        Pass => "pass",
        /// A webhook.
        Webhook => "webhook",
    }
}

/// One change, as the log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The event's id (`evt_` and its simple form on the wire); a webhook delivery's id.
    pub id: Uuid,
    /// What happened.
    pub kind: EventType,
    /// When.
    pub occurred_at: DateTime<Utc>,
    /// The key the write was made with, if any.
    pub actor: Option<Actor>,
    /// The workspace of the record changed (of its library, for a pass); `None` for a
    /// record of no workspace. A workspace key's feed and webhooks see only its own.
    pub workspace_id: Option<String>,
    /// The kind of resource changed.
    pub resource_type: ResourceType,
    /// The resource's id.
    pub resource_id: Uuid,
    /// The fields that changed, for `asset.updated`, `asset.file_replaced` and
    /// `webhook.updated`; empty otherwise.
    pub changed: Vec<String>,
    /// Where the log keeps it: set by the store that read it ([`EventCursor::START`] for an
    /// event not stored yet).
    pub at: EventCursor,
}

impl Event {
    /// An event of `kind` about `resource`, by no key, now.
    pub(crate) fn new(kind: EventType, resource_type: ResourceType, resource_id: Uuid) -> Self {
        Self {
            id: Uuid::new_v4(),
            kind,
            occurred_at: Utc::now(),
            actor: None,
            workspace_id: None,
            resource_type,
            resource_id,
            changed: Vec::new(),
            at: EventCursor::START,
        }
    }

    /// `asset.file_replaced` when the file changed, else `asset.updated`, with the fields
    /// that differ between `old` and `new`; `None` when none does (nothing to record).
    fn asset_changed(old: &Asset, new: &Asset) -> Option<Self> {
        let changed = changed_fields(old, new);
        if changed.is_empty() {
            return None;
        }
        let kind = if old.file_path != new.file_path {
            EventType::AssetFileReplaced
        } else {
            EventType::AssetUpdated
        };
        Some(Self {
            changed,
            ..Self::new(kind, ResourceType::Asset, new.id)
        })
    }
}

/// The contract names of the fields of an asset that differ (the counters and `updated_at`
/// aside, which every change moves).
fn changed_fields(old: &Asset, new: &Asset) -> Vec<String> {
    let mut changed = Vec::new();
    let mut check = |name: &str, differs: bool| {
        if differs {
            changed.push(name.to_owned());
        }
    };
    check("title", old.title != new.title);
    check("slug", old.slug != new.slug);
    check("description", old.description != new.description);
    check("asset_type", old.asset_type != new.asset_type);
    check("file_path", old.file_path != new.file_path);
    check("file_size", old.file_size != new.file_size);
    check("mime_type", old.mime_type != new.mime_type);
    check(
        "thumbnail_url",
        old.thumbnail_path != new.thumbnail_path
            || old.thumbnail_placeholder != new.thumbnail_placeholder,
    );
    check("page_count", old.page_count != new.page_count);
    check("word_count", old.word_count != new.word_count);
    check("width", old.width != new.width);
    check("height", old.height != new.height);
    check("media", old.media != new.media);
    check("external_url", old.external_url != new.external_url);
    check("video_embed", old.video_embed != new.video_embed);
    check("is_public", old.is_public != new.is_public);
    check("published", old.published != new.published);
    check("tags", old.tags != new.tags);
    check(
        "checksum_sha256",
        old.checksum_sha256 != new.checksum_sha256,
    );
    check("workspace_id", old.workspace_id != new.workspace_id);
    changed
}

/// A place in the log: a reader that asks for what follows it sees every later event once.
/// Stores order their log by two numbers (sled and the in-memory store use the second only;
/// PostgreSQL the writing transaction's id and the event's sequence number); on the wire it
/// is opaque.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventCursor(pub u64, pub u64);

impl EventCursor {
    /// The start of the log.
    pub const START: EventCursor = EventCursor(0, 0);
}

impl fmt::Display for EventCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}{:016x}", self.0, self.1)
    }
}

impl FromStr for EventCursor {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        if s.len() != 32 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(());
        }
        let (a, b) = s.split_at(16);
        Ok(EventCursor(
            u64::from_str_radix(a, 16).map_err(|_| ())?,
            u64::from_str_radix(b, 16).map_err(|_| ())?,
        ))
    }
}

/// What a reader of the log asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventQuery {
    /// Only events after this place.
    pub after: EventCursor,
    /// Only events of this type.
    pub kind: Option<EventType>,
    /// Only events about this resource.
    pub resource: Option<(ResourceType, Uuid)>,
    /// Only events of this workspace (the feed of a workspace key, the stream of a webhook of
    /// a workspace); `None` for every event.
    pub workspace: Option<String>,
    /// At most this many.
    pub limit: usize,
}

impl EventQuery {
    /// Whether `event` passes the filters.
    pub fn matches(&self, event: &Event) -> bool {
        self.kind.is_none_or(|k| k == event.kind)
            && self
                .workspace
                .as_ref()
                .is_none_or(|w| event.workspace_id.as_ref() == Some(w))
            && self
                .resource
                .is_none_or(|(t, id)| (t, id) == (event.resource_type, event.resource_id))
    }
}

/// A page of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventPage {
    /// The events, in log order.
    pub events: Vec<Event>,
    /// Where the next page starts: after the last event given, or where the page was asked
    /// from when it is empty.
    pub next: EventCursor,
}
