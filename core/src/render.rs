//! How records look on the wire: assets, library list items, timestamps.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use uuid::Uuid;

use crate::model::{Asset, AssetType, LibrarySummary};
use crate::page::LibraryPagination;
use crate::reply::Reply;

/// `{"success": true, "data": ...}`, with `pagination` when given: the envelope of every asset
/// answer.
pub(crate) struct Envelope<D, P> {
    pub(crate) data: D,
    pub(crate) pagination: Option<P>,
}

impl<D: Serialize, P: Serialize> Serialize for Envelope<D, P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("success", &true)?;
        m.serialize_entry("data", &self.data)?;
        if let Some(p) = &self.pagination {
            m.serialize_entry("pagination", p)?;
        }
        m.end()
    }
}

/// A JSON answer `{"success": true, "data": data}`.
pub(crate) fn data<D: Serialize>(status: u16, data: D) -> Reply {
    Reply::json_value(
        status,
        &Envelope::<D, ()> {
            data,
            pagination: None,
        },
    )
}

/// A timestamp as RFC 3339 UTC with milliseconds: `2026-11-22T10:15:30.123Z`.
#[derive(Debug, Clone, Copy)]
pub struct Timestamp(pub DateTime<Utc>);

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // A fixed layout, written without parsing a format pattern per call.
        s.serialize_str(&self.0.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    }
}

/// A timestamp in the document: one schema, referred to by every timestamp field.
#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for Timestamp {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .description(Some(
                "RFC 3339, UTC, with milliseconds: `2026-11-22T10:15:30.123Z`.",
            ))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for Timestamp {}

/// An optional timestamp (`null` when absent).
pub(crate) fn opt_ts(t: Option<DateTime<Utc>>) -> Option<Timestamp> {
    t.map(Timestamp)
}

/// An asset as the API shows it: every field of spec §2.1 (null where unknown), then the
/// fields of its type (`word_count` for pdf and document; `width`, `height` for image;
/// `duration_seconds`, `sample_rate`, `channels`, `bitrate` for audio; `duration_seconds`,
/// `width`, `height`, `video_codec` for video; `external_url` for external_video, link and
/// git; `video_embed` for external_video).
#[derive(Debug, Clone, Copy)]
pub struct AssetJson<'a>(pub &'a Asset);

impl Serialize for AssetJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        AssetWire {
            common: AssetFields::of(self.0),
            of_type: TypeFields::of(self.0),
        }
        .serialize(s)
    }
}

/// An asset on the wire: its common fields, then those of its type, in one object.
#[derive(Serialize)]
struct AssetWire<'a> {
    #[serde(flatten)]
    common: AssetFields<'a>,
    #[serde(flatten)]
    of_type: TypeFields<'a>,
}

/// The fields every asset has, in the order they are written: null where unknown or not
/// applicable.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct AssetFields<'a> {
    id: Uuid,
    /// At most 500 characters.
    title: &'a str,
    /// URL-friendly name, unique among assets.
    slug: &'a str,
    description: Option<&'a str>,
    asset_type: AssetType,
    /// Path of the file in the file store (file-based types).
    file_path: Option<&'a str>,
    /// Size of the file in bytes.
    file_size: Option<u64>,
    /// Media type of the file, read from its content.
    mime_type: Option<&'a str>,
    /// Path of the thumbnail in the file store: an image's own, a PDF's first page, an audio
    /// file's cover art, a document's embedded thumbnail or a video's poster frame.
    thumbnail_path: Option<&'a str>,
    /// A ThumbHash of the thumbnail, base64 (about 30 characters): a blurred stand-in a page
    /// can draw before the thumbnail loads. Null without a thumbnail.
    thumbnail_placeholder: Option<&'a str>,
    /// Pages of a paged document.
    page_count: Option<u64>,
    /// Downloads of the whole file so far.
    download_count: u64,
    /// Whether the asset, once published, is read and downloaded without a key.
    is_public: bool,
    /// Whether the asset is published; a draft is seen only by keys with `write:assets`.
    published: bool,
    /// Its tags, in the order given (at most 32, each 1 to 64 characters, unique ignoring
    /// case).
    tags: &'a [String],
    /// The SHA-256 of its file, 64 lowercase hexadecimal digits, computed while the file came
    /// in; null without a file (and for a file stored before checksums were kept, until the
    /// backfill reads it).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    checksum_sha256: Option<Hex<'a>>,
    created_at: Timestamp,
    updated_at: Timestamp,
    /// The workspace it belongs to; `null`: none.
    workspace_id: Option<&'a str>,
}

impl<'a> AssetFields<'a> {
    fn of(a: &'a Asset) -> Self {
        AssetFields {
            id: a.id,
            title: &a.title,
            slug: &a.slug,
            description: a.description.as_deref(),
            asset_type: a.asset_type,
            file_path: a.file_path.as_deref(),
            file_size: a.file_size,
            mime_type: a.mime_type.as_deref(),
            thumbnail_path: a.thumbnail_path.as_deref(),
            thumbnail_placeholder: a.thumbnail_placeholder.as_deref(),
            page_count: a.page_count,
            download_count: a.download_count,
            is_public: a.is_public,
            published: a.published,
            tags: &a.tags,
            checksum_sha256: a.checksum_sha256.as_ref().map(|c| Hex(c)),
            created_at: Timestamp(a.created_at),
            updated_at: Timestamp(a.updated_at),
            workspace_id: a.workspace_id.as_deref(),
        }
    }
}

/// The fields of an asset's type, written after the common ones. The document names each
/// variant's schema (`openapi::schemas`), in this order.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub(crate) enum TypeFields<'a> {
    /// pdf and document.
    PdfOrDocument {
        /// Words of the text, when it could be read.
        word_count: Option<u64>,
    },
    /// image.
    Image {
        /// Pixels as displayed, when the image could be read.
        width: Option<u32>,
        /// Pixels as displayed, when the image could be read.
        height: Option<u32>,
    },
    /// audio.
    Audio {
        /// Playing time in seconds, to the millisecond, when the file says.
        #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
        duration_seconds: Option<Seconds>,
        /// Samples per second, when the file says.
        sample_rate: Option<u32>,
        /// Channels, when the file says.
        channels: Option<u8>,
        /// Average bit rate in bits per second, when the file says.
        bitrate: Option<u32>,
    },
    /// video.
    Video {
        /// Playing time in seconds, to the millisecond, when the container says.
        #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>))]
        duration_seconds: Option<Seconds>,
        /// Pixels as displayed (rotation applied), when the container says.
        width: Option<u32>,
        /// Pixels as displayed (rotation applied), when the container says.
        height: Option<u32>,
        /// The first video track's codec in lower case (`h264`, `hevc`, `vp8`, `vp9`, `av1`,
        /// ...), when the container names it.
        video_codec: Option<&'a str>,
    },
    /// external_video.
    ExternalVideo {
        /// An absolute http(s) URL, in normalised form; never null for this type.
        #[cfg_attr(feature = "openapi", schema(value_type = String))]
        external_url: Option<&'a str>,
        /// The embeddable player address derived from `external_url`.
        #[cfg_attr(feature = "openapi", schema(value_type = String))]
        video_embed: Option<&'a str>,
    },
    /// link.
    Link {
        /// An absolute http(s) URL, in normalised form; never null for this type.
        #[cfg_attr(feature = "openapi", schema(value_type = String))]
        external_url: Option<&'a str>,
    },
    /// git.
    Git {
        /// An absolute http(s) URL, in normalised form (null when cleared).
        external_url: Option<&'a str>,
    },
    /// collection: no fields of its own.
    None,
}

impl<'a> TypeFields<'a> {
    fn of(a: &'a Asset) -> Self {
        let external_url = a.external_url.as_deref();
        match a.asset_type {
            AssetType::Pdf | AssetType::Document => TypeFields::PdfOrDocument {
                word_count: a.word_count,
            },
            AssetType::Image => TypeFields::Image {
                width: a.width,
                height: a.height,
            },
            AssetType::Audio => TypeFields::Audio {
                duration_seconds: a.media.duration_ms.map(Seconds),
                sample_rate: a.media.sample_rate,
                channels: a.media.channels,
                bitrate: a.media.bitrate,
            },
            AssetType::Video => TypeFields::Video {
                duration_seconds: a.media.duration_ms.map(Seconds),
                width: a.width,
                height: a.height,
                video_codec: a.media.video_codec.as_deref(),
            },
            AssetType::ExternalVideo => TypeFields::ExternalVideo {
                external_url,
                video_embed: a.video_embed.as_deref(),
            },
            AssetType::Link => TypeFields::Link { external_url },
            AssetType::Git => TypeFields::Git { external_url },
            AssetType::Collection => TypeFields::None,
        }
    }
}

/// A playing time kept in milliseconds, written as seconds (`83.5`, `0.001`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seconds(pub(crate) u64);

impl Serialize for Seconds {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Exact below 2^53 ms (285,000 years); the shortest decimal of the quotient.
        #[allow(clippy::cast_precision_loss)]
        let seconds = self.0 as f64 / 1000.0;
        s.serialize_f64(seconds)
    }
}

/// A library list item (spec §2.2).
#[derive(Debug, Clone, Copy)]
pub struct LibraryItemJson<'a>(pub &'a LibrarySummary);

impl Serialize for LibraryItemJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        LibraryListItem::of(self.0).serialize(s)
    }
}

/// A published library as listed.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct LibraryListItem<'a> {
    id: Uuid,
    title: &'a str,
    slug: &'a str,
    description: Option<&'a str>,
    cover_image_path: Option<&'a str>,
    /// When the library was first published.
    published_at: Option<Timestamp>,
    is_paid: bool,
    /// The amount, for a paid library.
    #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0))]
    price: Option<f64>,
    /// Three upper-case letters, e.g. `USD`.
    currency: &'a str,
    /// Published assets in the library.
    asset_count: u64,
    view_count: u64,
    created_at: Timestamp,
    workspace_id: Option<&'a str>,
}

impl<'a> LibraryListItem<'a> {
    /// The list item of `summary`.
    pub(crate) fn of(summary: &'a LibrarySummary) -> Self {
        let l = &summary.library;
        LibraryListItem {
            id: l.id,
            title: &l.settings.title,
            slug: &l.slug,
            description: l.settings.description.as_deref(),
            cover_image_path: l.settings.cover_image_path.as_deref(),
            published_at: opt_ts(l.published_at),
            is_paid: l.settings.is_paid,
            price: l.settings.price,
            currency: &l.settings.currency,
            asset_count: summary.asset_count,
            view_count: l.view_count,
            created_at: Timestamp(l.created_at),
            workspace_id: l.settings.workspace_id.as_deref(),
        }
    }
}

/// The answer of the library list: a page of libraries and its pagination (no envelope).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct LibraryList<'a> {
    pub(crate) libraries: Vec<LibraryListItem<'a>>,
    pub(crate) pagination: LibraryPagination,
}

/// A library pass as the API shows it (never its token, but in [`NewPassWire`]).
#[derive(Debug, Serialize)]
pub(crate) struct PassWire<'a> {
    pub(crate) id: Uuid,
    #[serde(flatten)]
    pub(crate) fields: PassFields<'a>,
}

/// A pass just made: its fields and, this once, its token.
#[derive(Debug, Serialize)]
pub(crate) struct NewPassWire<'a> {
    pub(crate) id: Uuid,
    pub(crate) token: &'a str,
    #[serde(flatten)]
    pub(crate) fields: PassFields<'a>,
}

/// The fields of a pass after its id, in the order they are written.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct PassFields<'a> {
    /// The library it opens.
    library_id: Uuid,
    /// A name to tell passes apart.
    label: &'a str,
    /// When it stops working.
    expires_at: Timestamp,
    /// How many downloads it allows; null: no limit.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    max_downloads: Option<u64>,
    /// How many downloads it has made (a whole file, a range from byte 0, or a zip).
    downloads_used: u64,
    /// The assets of the library it opens; null: all of them.
    asset_ids: Option<&'a [Uuid]>,
    created_at: Timestamp,
    /// When it was revoked; null while it works.
    revoked_at: Option<Timestamp>,
}

impl<'a> PassFields<'a> {
    pub(crate) fn of(pass: &'a crate::model::LibraryPass) -> Self {
        PassFields {
            library_id: pass.library_id,
            label: &pass.label,
            expires_at: Timestamp(pass.expires_at),
            max_downloads: pass.max_downloads,
            downloads_used: pass.downloads_used,
            asset_ids: pass.asset_ids.as_deref(),
            created_at: Timestamp(pass.created_at),
            revoked_at: opt_ts(pass.revoked_at),
        }
    }
}

/// A signed download link, the `data` of a `download-url` answer.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct SignedLink {
    // Written in this order (the order the answer has always had).
    pub(crate) expires_at: Timestamp,
    /// The download path with `expires` and `signature`: it downloads without a key until
    /// `expires_at`.
    pub(crate) url: String,
}

/// An event as the API writes it: one change, what happened, when, by which key, to what.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub(crate) struct EventWire<'a> {
    /// The event's id; a webhook delivery of it carries it as `webhook-id`.
    #[cfg_attr(feature = "openapi", schema(pattern = "^evt_[0-9a-f]{32}$"))]
    id: String,
    /// What happened (one of `events::EventType`).
    #[serde(rename = "type")]
    kind: &'static str,
    occurred_at: Timestamp,
    /// The key the change was made with; null for a change made by the server itself.
    #[cfg_attr(feature = "openapi", schema(inline))]
    actor: Option<ActorWire<'a>>,
    #[cfg_attr(feature = "openapi", schema(inline))]
    resource: ResourceWire,
    /// The workspace of the resource (of its library, for a pass); null for one of no
    /// workspace.
    #[cfg_attr(feature = "openapi", schema(pattern = "^[A-Za-z0-9_-]{1,64}$"))]
    workspace_id: Option<&'a str>,
    #[cfg_attr(feature = "openapi", schema(inline))]
    data: DataWire<'a>,
}

/// The key an event's change was made with.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
struct ActorWire<'a> {
    /// The key's id.
    key_id: uuid::Uuid,
    /// The key's name when it made the change.
    key_name: &'a str,
}

/// What an event's change was made to.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
struct ResourceWire {
    /// The kind of resource (one of `events::ResourceType`).
    #[serde(rename = "type")]
    kind: &'static str,
    /// The resource's id.
    id: uuid::Uuid,
}

/// What an event says of its change.
#[derive(Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
struct DataWire<'a> {
    /// The fields that changed (`asset.updated`, `asset.file_replaced`, `webhook.updated`);
    /// empty for the other types.
    changed: &'a [String],
}

impl<'a> EventWire<'a> {
    /// The same event, of type `kind` on the wire.
    pub(crate) fn of_kind(self, kind: &'static str) -> Self {
        Self { kind, ..self }
    }

    /// The wire form of `event`.
    pub(crate) fn of(event: &'a crate::events::Event) -> Self {
        Self {
            id: format!("evt_{}", event.id.simple()),
            kind: event.kind.as_str(),
            occurred_at: Timestamp(event.occurred_at),
            actor: event
                .actor
                .as_ref()
                .map(|crate::events::Actor { key_id, key_name }| ActorWire {
                    key_id: *key_id,
                    key_name,
                }),
            resource: ResourceWire {
                kind: event.resource_type.as_str(),
                id: event.resource_id,
            },
            workspace_id: event.workspace_id.as_deref(),
            data: DataWire {
                changed: &event.changed,
            },
        }
    }
}

/// Bytes written as lowercase hexadecimal digits, without an allocation.
#[derive(Debug, Clone, Copy)]
pub struct Hex<'a>(pub &'a [u8]);

impl std::fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl Serialize for Hex<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
#[path = "render_test.rs"]
mod tests;
