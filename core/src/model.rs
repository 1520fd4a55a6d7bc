//! The records the service keeps: assets, libraries, sections, entries and API keys.
//!
//! These are storage-neutral records. How they look on the wire is decided by
//! [`crate::render`] and [`crate::tree`]; how they are kept is up to each [`crate::Store`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The kind of an asset. pdf, document, image, video and audio assets are files the service
/// keeps (and the only ones a library holds); link, external_video and git carry an
/// `external_url`; a collection is neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AssetType {
    /// A PDF document.
    Pdf,
    /// A word-processor or text document.
    Document,
    /// An image.
    Image,
    /// A video file.
    Video,
    /// A video hosted elsewhere (YouTube, Vimeo, ...), shown through `video_embed`.
    ExternalVideo,
    /// An audio file.
    Audio,
    /// A link to a web page.
    Link,
    /// A collection of other material.
    Collection,
    /// A git reference.
    Git,
}

impl AssetType {
    /// Every type, in the order the spec lists them for create.
    pub const ALL: [AssetType; 9] = [
        AssetType::Pdf,
        AssetType::Document,
        AssetType::Image,
        AssetType::Video,
        AssetType::ExternalVideo,
        AssetType::Audio,
        AssetType::Link,
        AssetType::Collection,
        AssetType::Git,
    ];

    /// The wire name, e.g. `"external_video"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            AssetType::Pdf => "pdf",
            AssetType::Document => "document",
            AssetType::Image => "image",
            AssetType::Video => "video",
            AssetType::ExternalVideo => "external_video",
            AssetType::Audio => "audio",
            AssetType::Link => "link",
            AssetType::Collection => "collection",
            AssetType::Git => "git",
        }
    }

    /// Parses a wire name (exact, lower case).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Whether the asset list accepts this type as its `asset_type` filter
    /// (every type but `external_video`, as the spec says).
    pub const fn is_filterable(self) -> bool {
        !matches!(self, AssetType::ExternalVideo)
    }

    /// Whether an asset of this type may be placed in a library
    /// (pdf, image, video, audio, document).
    pub const fn is_library_type(self) -> bool {
        matches!(
            self,
            AssetType::Pdf
                | AssetType::Image
                | AssetType::Video
                | AssetType::Audio
                | AssetType::Document
        )
    }

    /// Whether the asset is a file kept by the service (and so may carry `file_path`).
    pub const fn is_file_based(self) -> bool {
        self.is_library_type()
    }

    /// Whether the asset carries an `external_url`.
    pub const fn takes_external_url(self) -> bool {
        matches!(
            self,
            AssetType::ExternalVideo | AssetType::Link | AssetType::Git
        )
    }

    /// Whether `external_url` must be given on create.
    pub const fn requires_external_url(self) -> bool {
        matches!(self, AssetType::ExternalVideo | AssetType::Link)
    }
}

impl std::fmt::Display for AssetType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An asset record.
///
/// Every optional field is `None` where it is unknown or does not apply to the type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asset {
    /// Identifier.
    pub id: Uuid,
    /// Title, at most 500 characters.
    pub title: String,
    /// URL-friendly name, unique among assets.
    pub slug: String,
    /// Optional text.
    pub description: Option<String>,
    /// The kind of asset.
    pub asset_type: AssetType,
    /// Path of the file in the file store.
    pub file_path: Option<String>,
    /// Size of the file in bytes.
    pub file_size: Option<u64>,
    /// Media type of the file.
    pub mime_type: Option<String>,
    /// Path of the thumbnail in the file store.
    pub thumbnail_path: Option<String>,
    /// A ThumbHash of the thumbnail, base64 (a blurred stand-in shown while it loads).
    pub thumbnail_placeholder: Option<String>,
    /// Pages of a paged document.
    pub page_count: Option<u64>,
    /// Words of a pdf or document.
    pub word_count: Option<u64>,
    /// Width of an image or video as displayed, in pixels.
    pub width: Option<u32>,
    /// Height of an image or video as displayed, in pixels.
    pub height: Option<u32>,
    /// What the file of an audio or video asset plays.
    pub media: Media,
    /// Address of a link, external video or git reference.
    pub external_url: Option<String>,
    /// Embeddable address of an external video.
    pub video_embed: Option<String>,
    /// Number of downloads.
    pub download_count: u64,
    /// Whether the asset may be shared without a key.
    pub is_public: bool,
    /// Whether the asset is published (lists and reads show published assets only).
    pub published: bool,
    /// Its tags, in the order given: each 1 to 64 characters, unique ignoring case, at most
    /// 32 ([`crate::validate::tags`]).
    pub tags: Vec<String>,
    /// The SHA-256 of its file, computed while the file came in (`None` without a file, and
    /// for a file stored before checksums were kept until a backfill reads it).
    pub checksum_sha256: Option<[u8; 32]>,
    /// When the asset was created.
    pub created_at: DateTime<Utc>,
    /// When the asset was last changed.
    pub updated_at: DateTime<Utc>,
    /// The workspace it belongs to (`None`: no workspace; see DESIGN "Workspaces").
    pub workspace_id: Option<String>,
}

/// The most tags an asset holds.
pub const MAX_TAGS: usize = 32;

/// Whether a library of workspace `library` may hold an asset of workspace `asset`: one of
/// its own workspace, or (for any library) one of no workspace, which is what an upgraded
/// store has (DESIGN "Workspaces"). Every store keeps it in the same change as the write that
/// could break it: a library `PUT`, and an asset's move to another workspace.
///
/// ```
/// use assetlib_core::may_hold;
///
/// assert!(may_hold(Some("acme"), Some("acme")));
/// assert!(may_hold(Some("acme"), None));
/// assert!(!may_hold(None, Some("acme")));
/// assert!(!may_hold(Some("acme"), Some("globex")));
/// ```
pub fn may_hold(library: Option<&str>, asset: Option<&str>) -> bool {
    asset.is_none() || asset == library
}

/// The longest tag, in characters.
pub const MAX_TAG_CHARS: usize = 64;

/// The form of `tag` that tags are compared and filtered by: trimmed, in Unicode lower case
/// (as titles are compared).
pub fn tag_key(tag: &str) -> String {
    tag.trim().to_lowercase()
}

/// A tag and how many published assets have it ([`crate::AssetStore::list_tags`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TagCount {
    /// The tag, as filters name it: trimmed, in lower case ([`crate::validate::tag_key`]).
    pub tag: String,
    /// Published assets with the tag.
    pub count: u64,
}

/// What an audio or video file plays, read from its container: each field `None` where the
/// file does not say (or the type has no such thing).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Media {
    /// Playing time in milliseconds (the API shows `duration_seconds`).
    pub duration_ms: Option<u64>,
    /// Samples per second of the audio.
    pub sample_rate: Option<u32>,
    /// Audio channels.
    pub channels: Option<u8>,
    /// Average bit rate of the audio, in bits per second.
    pub bitrate: Option<u32>,
    /// The video codec, as the container names it in lower case (`h264`, `hevc`, `vp9`,
    /// `av1`, ...).
    pub video_codec: Option<String>,
}

/// What a library's document sets and its page shows: its title and description, its
/// workspace, its cover, its display and download controls, its price and whether it is
/// published. A [`Library`] record and a validated document (`validate::LibraryDoc`) hold the
/// same settings, so a write copies them whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibrarySettings {
    /// Title, at most 500 characters.
    pub title: String,
    /// Optional text.
    pub description: Option<String>,
    /// The workspace the library belongs to.
    pub workspace_id: Option<String>,
    /// URL path of the cover image.
    pub cover_image_path: Option<String>,
    /// Hex colour of the cover overlay (`#RGB` or `#RRGGBB`).
    pub cover_overlay_color: Option<String>,
    /// Opacity of the cover overlay, 0.0 to 1.0.
    pub cover_overlay_opacity: Option<f64>,
    /// Whether the page should display the asset count.
    pub show_asset_count: bool,
    /// Whether each asset shows a download control.
    pub allow_individual_downloads: bool,
    /// Whether a download-all control is shown.
    pub allow_bulk_download: bool,
    /// Whether the library requires payment.
    pub is_paid: bool,
    /// Amount, for paid libraries.
    pub price: Option<f64>,
    /// Three-letter currency code.
    pub currency: String,
    /// Whether the library is published.
    pub published: bool,
}

/// A library record: its settings plus what the store keeps beside them (its slug, its first
/// publication, its view count and its times).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Library {
    /// Identifier.
    pub id: Uuid,
    /// URL-friendly name, unique among libraries.
    pub slug: String,
    /// What its document sets.
    pub settings: LibrarySettings,
    /// When the library was first published.
    pub published_at: Option<DateTime<Utc>>,
    /// Times the detail was read.
    pub view_count: u64,
    /// When the library was created.
    pub created_at: DateTime<Utc>,
    /// When the library document was last replaced.
    pub updated_at: DateTime<Utc>,
}

/// A section of a library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// Identifier, unique within its library.
    pub id: Uuid,
    /// Section heading.
    pub title: String,
    /// Optional text.
    pub description: Option<String>,
    /// Rendering order among sections (0-based position in the document).
    pub display_order: u32,
    /// Whether the section starts collapsed.
    pub collapsed_by_default: bool,
}

/// The placement of one asset in a library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryEntry {
    /// The asset placed.
    pub asset_id: Uuid,
    /// The section it is in, or `None` for the unsectioned assets.
    pub section_id: Option<Uuid>,
    /// Order within its section (0-based position in the document).
    pub display_order: u32,
    /// Per-library title, shown instead of the asset's own.
    pub title: Option<String>,
    /// Per-library description, shown instead of the asset's own.
    pub description: Option<String>,
}

/// The fields of an asset that a library page needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntryAsset {
    /// The asset's own title.
    pub title: String,
    /// The asset's own description.
    pub description: Option<String>,
    /// The asset's type.
    pub asset_type: AssetType,
    /// Path of its thumbnail in the file store.
    pub thumbnail_path: Option<String>,
    /// The ThumbHash of its thumbnail, base64.
    pub thumbnail_placeholder: Option<String>,
    /// Playing time of an audio or video file, in milliseconds.
    pub duration_ms: Option<u64>,
    /// Whether the asset is published; unpublished ones are left out of the page.
    pub published: bool,
    /// The asset's tags.
    pub tags: Vec<String>,
}

impl From<&Asset> for EntryAsset {
    fn from(a: &Asset) -> Self {
        EntryAsset {
            title: a.title.clone(),
            description: a.description.clone(),
            asset_type: a.asset_type,
            thumbnail_path: a.thumbnail_path.clone(),
            thumbnail_placeholder: a.thumbnail_placeholder.clone(),
            duration_ms: a.media.duration_ms,
            published: a.published,
            tags: a.tags.clone(),
        }
    }
}

/// An entry joined with the asset it places.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryRow {
    /// The placement.
    pub entry: LibraryEntry,
    /// The asset's fields.
    pub asset: EntryAsset,
}

/// Everything the library detail needs, loaded in one store call.
///
/// Sections and entries may come in any order; [`crate::tree`] sorts them.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryRows {
    /// The library.
    pub library: Library,
    /// Its sections.
    pub sections: Vec<Section>,
    /// Its entries whose asset exists, joined with the asset.
    pub entries: Vec<EntryRow>,
}

/// A library as listed, with its asset count.
#[derive(Debug, Clone, PartialEq)]
pub struct LibrarySummary {
    /// The library.
    pub library: Library,
    /// Number of published assets in the library, all sections and unsectioned.
    pub asset_count: u64,
}

/// A whole library document to store, replacing any earlier one with the same id.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryWrite {
    /// The library. The store keeps `created_at`, `view_count` and a set `published_at` of an
    /// existing library, and sets `published_at` when the library is first published.
    pub library: Library,
    /// Whether `library.slug` was given by the user (a clash is then an error) or made from
    /// the title (a clash then gets a `-2`, `-3`, ... suffix).
    pub slug_given: bool,
    /// The sections.
    pub sections: Vec<Section>,
    /// The entries.
    pub entries: Vec<LibraryEntry>,
}

/// Whether a [`LibraryWrite`] created a library or replaced one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutOutcome {
    /// No library had the id.
    Created,
    /// The library existed and was replaced.
    Replaced,
}

/// A permission an API key carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Scope {
    /// List and read assets, download files.
    #[serde(rename = "read:assets")]
    ReadAssets,
    /// Create assets and upload files.
    #[serde(rename = "write:assets")]
    WriteAssets,
    /// List and read libraries.
    #[serde(rename = "read:libraries")]
    ReadLibraries,
    /// Create, replace and delete libraries.
    #[serde(rename = "write:libraries")]
    WriteLibraries,
    /// Download paid files (those only a paid library offers) without a library pass.
    #[serde(rename = "read:paid")]
    ReadPaid,
    /// Create, list, read and revoke library passes.
    #[serde(rename = "write:passes")]
    WritePasses,
    /// Read the event log (the change feed and audit trail).
    #[serde(rename = "read:events")]
    ReadEvents,
    /// Register, change and delete webhooks, and read and retry their deliveries.
    #[serde(rename = "admin:webhooks")]
    AdminWebhooks,
    /// Mint, list, read and revoke API keys over HTTP (a key mints only scopes it has, in its
    /// own workspace).
    #[serde(rename = "admin:keys")]
    AdminKeys,
}

impl Scope {
    /// Every scope.
    pub const ALL: [Scope; 9] = [
        Scope::ReadAssets,
        Scope::WriteAssets,
        Scope::ReadLibraries,
        Scope::WriteLibraries,
        Scope::ReadPaid,
        Scope::WritePasses,
        Scope::ReadEvents,
        Scope::AdminWebhooks,
        Scope::AdminKeys,
    ];

    /// The wire name, e.g. `"write:assets"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::ReadAssets => "read:assets",
            Scope::WriteAssets => "write:assets",
            Scope::ReadLibraries => "read:libraries",
            Scope::WriteLibraries => "write:libraries",
            Scope::ReadPaid => "read:paid",
            Scope::WritePasses => "write:passes",
            Scope::ReadEvents => "read:events",
            Scope::AdminWebhooks => "admin:webhooks",
            Scope::AdminKeys => "admin:keys",
        }
    }

    /// Parses a wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An API key record. The key itself is never stored, only its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKey {
    /// Identifier (shown by `keys list`, used by `keys revoke`).
    pub id: Uuid,
    /// A name to tell keys apart.
    pub name: String,
    /// SHA-256 of the key.
    pub key_hash: [u8; 32],
    /// What the key may do.
    pub scopes: Vec<Scope>,
    /// When the key was made.
    pub created_at: DateTime<Utc>,
    /// When the key stops working, if ever.
    pub expires_at: Option<DateTime<Utc>>,
    /// When the key was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
    /// The workspace whose records alone the key reads and writes; `None` for a global key,
    /// which sees every workspace.
    pub workspace_id: Option<String>,
}

/// A library pass as stored: what a buyer of a paid library gets. The pass itself
/// (`alp_...`) is never stored, only its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LibraryPass {
    /// Identifier.
    pub id: Uuid,
    /// The library it opens.
    pub library_id: Uuid,
    /// SHA-256 of the pass.
    pub token_hash: [u8; 32],
    /// A name to tell passes apart (a buyer's order number, say).
    pub label: String,
    /// When the pass stops working.
    pub expires_at: DateTime<Utc>,
    /// How many downloads it allows, if it is limited.
    pub max_downloads: Option<u64>,
    /// How many downloads it has made.
    pub downloads_used: u64,
    /// The assets of the library it opens, when not all of them.
    pub asset_ids: Option<Vec<Uuid>>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
}

impl LibraryPass {
    /// Whether the pass works at `now`: not revoked and not expired.
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at > now
    }

    /// Whether it has made every download it allows.
    pub fn is_exhausted(&self) -> bool {
        self.max_downloads
            .is_some_and(|max| self.downloads_used >= max)
    }
}

/// What [`crate::PassStore::spend_pass`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PassSpend {
    /// One download was added; the pass as it is now.
    Spent(LibraryPass),
    /// The pass has made every download it allows; nothing changed.
    Exhausted,
    /// No such pass, or it is revoked or expired; nothing changed.
    Dead,
}

/// How the published libraries holding one asset sell it
/// ([`crate::LibraryStore::published_holders`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holders {
    /// The asset.
    pub asset_id: Uuid,
    /// Whether a published paid library (`is_paid`) holds it.
    pub paid: bool,
    /// Whether a published free library holds it.
    pub free: bool,
}

/// A page of records and the number of records matching the query in all.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// The records of the page.
    pub items: Vec<T>,
    /// All matching records.
    pub total: u64,
}

/// A library that holds a slug ([`crate::LibraryStore::libraries_by_slug`]): slugs are
/// unique within a workspace, so one slug may name a library in each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlugHolder {
    /// The library's workspace.
    pub workspace_id: Option<String>,
    /// The library.
    pub id: Uuid,
}

/// What [`crate::LibraryStore::record_library_view`] answers: the library's new view count and its
/// current content version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewCount {
    /// The view count, this view included.
    pub views: u64,
    /// The library's content version. It changes on every write that can change the
    /// library's detail page other than a view: a replace of the library, its deletion and
    /// re-creation, or a change of an asset it holds. Values are never reused for one library,
    /// so equal versions mean the same content (the view count aside), also across processes
    /// sharing one store.
    pub version: u64,
}
