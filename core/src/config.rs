//! Service configuration: limits and presentation settings.

use std::time::Duration;

use crate::extract::Limits;

/// Settings of a [`crate::Service`].
///
/// ```
/// let mut config = assetlib_core::Config::default();
/// config.max_json_body = 256 * 1024;
/// assert_eq!(config.max_page_size, 100);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// Largest JSON request body in bytes (default 1 MiB); more is 413.
    pub max_json_body: usize,
    /// Largest file of one request (`POST /api/v1/assets/upload`, `PUT
    /// /api/v1/assets/{id}/file`) in bytes (default 100 MiB); more is 413 naming this limit.
    /// Files up to this size are read whole for their metadata and thumbnail; a larger one (a
    /// resumable or direct upload, of any type) is read by ranges, in bounded memory
    /// ([`crate::extract::preview_ranged`]; a video's container always is).
    pub max_upload: u64,
    /// Largest resumable (tus) or direct upload in bytes (default 10 GiB), of any asset type;
    /// a larger `Upload-Length` or `size` is 413 naming this limit. A store with multipart
    /// uploads (S3) takes at most 10,000 parts of 5 MiB (48.8 GiB) in one upload, whatever
    /// this says; a direct upload at most 5 GiB (one `PUT`).
    pub max_resumable_upload: u64,
    /// How long an unfinished resumable or direct upload is kept (default 24 h): after it,
    /// `PATCH` is 410 and a reaper on any process sharing the store removes it and what it
    /// kept (its S3 multipart upload aborted).
    pub upload_expiry: Duration,
    /// Largest `per_page` / `limit` (default 100); larger values are clamped to it.
    pub max_page_size: u32,
    /// Longest title in characters (default 500).
    pub max_title_chars: usize,
    /// Prefix joined with a thumbnail's path to make `thumbnail_url` (default `/files/`).
    pub files_base_url: String,
    /// Dailymotion player id; Dailymotion links are accepted for `external_video` only when set.
    pub dailymotion_player_id: Option<String>,
    /// Keep rendered library detail pages and reuse them while the store reports the same
    /// content version (default on). Writes through any process sharing the store show on
    /// the very next read either way; off renders every view anew.
    pub detail_cache: bool,
    /// Keep rendered asset list pages and single assets and reuse them while the store
    /// reports the same version: the assets version for a list page
    /// ([`crate::AssetStore::assets_version`]; where the store keeps list versions, also
    /// its list's [`crate::AssetStore::list_version`] with its assets' versions), the
    /// asset's own for one asset ([`crate::AssetStore::asset_version`]); default on. Writes
    /// through any process sharing the store show on the very next read either way; off
    /// renders every read anew.
    pub page_cache: bool,
    /// Longest time reading one file's metadata may take (default 30 s); longer is 400 on
    /// `file_path`.
    pub extract_timeout: Duration,
    /// Bounds on the memory and work of reading one file's metadata.
    pub extract_limits: Limits,
    /// An ffmpeg binary that draws a video's poster frame, its thumbnail (default none: videos
    /// get no thumbnail). It runs as a child process with no network and is killed past what
    /// is left of [`Config::extract_timeout`]; a video it cannot read gets no thumbnail, and
    /// an MP4, QuickTime, WebM or Matroska file whose index cannot be read is never given
    /// to it.
    pub ffmpeg: Option<std::path::PathBuf>,
    /// How many files may be read and rendered for their metadata and previews at once
    /// (default: the number of cores); more wait their turn. This caps the CPU previews take.
    pub preview_workers: usize,
    /// The named variants `GET /api/v1/assets/{id}/image?preset=NAME` serves (default
    /// [`crate::variant::default_presets`]: `thumb` 320 inside, `card` 640 x 400 cover,
    /// `cover` 1600 x 600 cover, `full` 2048 inside). A preset of a published public asset
    /// needs no key.
    pub image_presets: std::collections::BTreeMap<String, crate::variant::VariantSpec>,
    /// How many image variants may be made at once (default: the number of cores).
    pub image_workers: usize,
    /// How many more requests for variants not made yet may wait for a worker (default 16);
    /// beyond them the answer is 503 with `Retry-After`.
    pub image_queue: usize,
    /// How long the event log keeps an event (default 30 days): [`crate::Service::purge_events`]
    /// removes older ones (the ready server runs it every hour).
    pub event_retention: Duration,
    /// Whether webhooks may send to loopback, private, link-local and other non-public
    /// addresses (default false: such URLs are 400 on `url`, and a name that resolves to one
    /// fails at delivery). For local testing (ready server `--webhook-allow-private`).
    pub webhook_allow_private: bool,
    /// How long one delivery attempt may take, the answer's body included (default 15 s).
    pub webhook_timeout: Duration,
    /// The delays before each retry of a failed delivery (default 5 s, 5 min, 30 min, 2 h,
    /// 5 h, 10 h, 10 h: 8 attempts in all); after the last, the delivery has failed.
    pub webhook_retry_schedule: Vec<Duration>,
    /// How long every attempt to a webhook may fail before it is disabled (default 5 days).
    pub webhook_disable_after: Duration,
    /// Deliveries this process sends at once (default 16). 0: this process sends none (other
    /// processes sharing the store do); [`crate::Service::new`] starts the delivery worker
    /// when called inside a Tokio runtime.
    pub webhook_workers: usize,
    /// How often the delivery worker looks for new events and due retries when no write of
    /// this process wakes it (default 1 s).
    pub webhook_poll_interval: Duration,
    /// Longest gap in a request body (default 30 s): a client whose body stops arriving for
    /// longer is answered 408 and its request ends, so it ties up no more than its buffers.
    pub body_timeout: Duration,
    /// Origins whose browser pages may call the API (CORS), e.g. `https://www.example.com`;
    /// `*` allows any. Default empty: no CORS headers at all. An allowed origin is echoed in
    /// `Access-Control-Allow-Origin` on every answer; no credentials are involved (keys are
    /// bearer tokens).
    pub cors_origins: Vec<String>,
    /// A per-key budget of requests (default none). Spent: 429 with `Retry-After`. Kept in
    /// this process's memory: N replicas behind one balancer allow N times it. Requests
    /// without a valid key never count against a key. Requests without any key (public
    /// reads, signed links) share a budget of the same size per client address
    /// ([`RawRequest::client_address`](crate::RawRequest::client_address)); public
    /// thumbnails ([`crate::Service::thumbnail`]) are not counted: one page view fetches one
    /// per card.
    #[cfg(feature = "rate-limits")]
    pub rate_limit: Option<crate::limit::RateLimit>,
    /// Most bytes of the text inside one asset's file kept for search (default 2 MiB: a
    /// 300-page report); the text past it is not searched. Feature `search`, over a store
    /// that keeps an index: the service then sets [`Limits::keep_text`] to it.
    #[cfg(feature = "search")]
    pub search_text_limit: u64,
    /// How many proxies in front of the API are trusted to append the address they saw to
    /// `X-Forwarded-For` (default 0: the header is ignored and the client address is the
    /// connection's peer). With N, the client address is the Nth address from the right of
    /// that header: the one the outermost trusted proxy saw. Set it to the number of proxies
    /// you run (a load balancer: 1); more lets any client pick its own address.
    pub trusted_proxy_hops: usize,
    /// How a store shared by several processes (replicas) keeps this one's cached answers
    /// current (default [`ReplicaSync::Notify`]). A store one process owns (sled, memory)
    /// sees every write itself and ignores it.
    pub replica_sync: ReplicaSync,
}

/// How the replicas of one shared store keep their cached answers current
/// ([`Config::replica_sync`], given to the store by [`crate::MetaStore::use_replica_sync`]).
///
/// Either way a write is seen by the next read through the process that made it, and
/// counters (views, downloads) are exact within each process at once and across processes
/// within one second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReplicaSync {
    /// Each process listens for the store's change notices and answers cached reads with no
    /// round trip; another process's write is seen within 100 ms. While the listening
    /// connection is down, every read checks the store's version instead (as `Strict`).
    #[default]
    Notify,
    /// Every cached read checks the store's version first (one round trip): a write through
    /// any process is seen by the next read through every one.
    Strict,
}

impl ReplicaSync {
    /// The mode's name: `notify` or `strict`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplicaSync::Notify => "notify",
            ReplicaSync::Strict => "strict",
        }
    }
}

impl std::str::FromStr for ReplicaSync {
    type Err = String;

    /// `notify` or `strict`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "notify" => Ok(ReplicaSync::Notify),
            "strict" => Ok(ReplicaSync::Strict),
            other => Err(format!(
                "unknown replica sync {other:?}: use notify or strict"
            )),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_json_body: 1024 * 1024,
            max_upload: 100 * 1024 * 1024,
            max_resumable_upload: 10 * 1024 * 1024 * 1024,
            upload_expiry: Duration::from_secs(24 * 3600),
            max_page_size: 100,
            max_title_chars: 500,
            files_base_url: crate::routes::files_base_url!().to_owned(),
            dailymotion_player_id: None,
            detail_cache: true,
            page_cache: true,
            extract_timeout: Duration::from_secs(30),
            extract_limits: Limits::default(),
            ffmpeg: None,
            preview_workers: std::thread::available_parallelism().map_or(2, usize::from),
            image_presets: crate::variant::default_presets(),
            image_workers: std::thread::available_parallelism().map_or(2, usize::from),
            image_queue: 16,
            event_retention: Duration::from_secs(30 * 24 * 3600),
            webhook_allow_private: false,
            webhook_timeout: Duration::from_secs(15),
            webhook_retry_schedule: crate::webhooks::DEFAULT_RETRY_SCHEDULE.to_vec(),
            webhook_disable_after: Duration::from_secs(5 * 24 * 3600),
            webhook_workers: 16,
            webhook_poll_interval: Duration::from_secs(1),
            body_timeout: Duration::from_secs(30),
            cors_origins: Vec::new(),
            #[cfg(feature = "rate-limits")]
            rate_limit: None,
            #[cfg(feature = "search")]
            search_text_limit: 2 * 1024 * 1024,
            trusted_proxy_hops: 0,
            replica_sync: ReplicaSync::Notify,
        }
    }
}
