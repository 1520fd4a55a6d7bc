//! The command line of the ready servers: `serve` (the default), `keys`, `thumbnails`,
//! `search` and `import`.

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;

use assetlib::{Config, RateLimit, Scope};
use clap::{Args, Parser, Subcommand};
use uuid::Uuid;

/// The Digital Assets and Libraries API server.
#[derive(Debug, Parser)]
#[command(name = env!("CARGO_BIN_NAME"), version, args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// `serve` is the default: its options work without the word `serve`.
    #[command(flatten)]
    serve: ServeArgs,
}

impl Cli {
    /// The command to run (`serve` when none is named).
    pub(crate) fn command(self) -> Command {
        self.command.unwrap_or(Command::Serve(self.serve))
    }
}

/// What to do.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve the API (the default).
    Serve(ServeArgs),
    /// Manage API keys (stop the server first: it holds the data directory).
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Thumbnails of assets stored before their type had them (stop a sled server first).
    Thumbnails {
        #[command(subcommand)]
        command: ThumbnailsCommand,
    },
    /// The search index (stop a sled server first; PostgreSQL replicas may keep serving).
    Search {
        #[command(subcommand)]
        command: SearchCommand,
    },
    /// Make every file under a folder or an S3 prefix an asset, as an upload would (stop a
    /// sled server first; PostgreSQL replicas may keep serving). Files whose bytes are there
    /// already are skipped, so running it again adds only what is new.
    Import(ImportArgs),
    /// Write every record and file into one archive with a manifest of checksums (stop a
    /// sled server first; from PostgreSQL while replicas serve).
    Backup(BackupArgs),
    /// Put an archive's records and files back into an empty data directory or database,
    /// after checking it whole (a damaged archive writes nothing).
    Restore(RestoreArgs),
    /// Copy every record (and with `--to-files` every file) into an empty PostgreSQL
    /// database, then check counts and file checksums; the source is left as it is (stop a
    /// sled server first).
    Migrate(MigrateArgs),
}

/// Options of `backup`.
#[derive(Debug, Clone, Args)]
pub(crate) struct BackupArgs {
    /// The archive to write (replaced if it exists; written beside it until whole).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: PathBuf,
    #[command(flatten)]
    pub(crate) data: DataArg,
}

/// Options of `restore`.
#[derive(Debug, Clone, Args)]
pub(crate) struct RestoreArgs {
    /// The archive `backup` wrote.
    #[arg(value_name = "FILE")]
    pub(crate) archive: PathBuf,
    #[command(flatten)]
    pub(crate) data: DataArg,
}

/// Options of `migrate`.
#[derive(Debug, Clone, Args)]
pub(crate) struct MigrateArgs {
    /// The PostgreSQL database to copy into (empty, or holding what a `migrate` of the same
    /// source stopped before its end left).
    #[arg(long, value_name = "URL")]
    pub(crate) to_database_url: String,
    /// Copy the files too, into this bucket (`s3://BUCKET[/PREFIX]`); without it they stay
    /// where they are, for the new server to use with the same `--data` or `--files`.
    #[arg(long, value_name = "s3://BUCKET[/PREFIX]")]
    pub(crate) to_files: Option<String>,
    #[command(flatten)]
    pub(crate) data: DataArg,
}

/// Options of `import`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ImportArgs {
    /// The folder, or `s3://BUCKET[/PREFIX]` (reached with the `AWS_*` variables, as
    /// `--files` is).
    #[arg(value_name = "PATH")]
    pub(crate) source: String,
    /// Also make a library of this title, with a section per sub-folder (the files at the top
    /// unsectioned), published; a second import with the same title adds what is new to it.
    #[arg(long, value_name = "TITLE")]
    pub(crate) library: Option<String>,
    /// Tags of every asset, comma-separated.
    #[arg(long, value_name = "a,b", value_delimiter = ',')]
    pub(crate) tags: Vec<String>,
    /// Make the assets public (default: private, as an upload's).
    #[arg(long)]
    pub(crate) public: bool,
    /// The workspace the assets (and the library) are made in.
    #[arg(long, value_name = "W", value_parser = parse_workspace)]
    pub(crate) workspace: Option<String>,
    /// Files imported at once (default: four per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub(crate) jobs: Option<u16>,
    #[command(flatten)]
    pub(crate) data: DataArg,
    #[command(flatten)]
    pub(crate) ffmpeg: FfmpegArg,
}

/// The `search` commands.
#[derive(Debug, Subcommand)]
pub(crate) enum SearchCommand {
    /// Bring into the index what it lacks, with a progress bar: the words of assets written
    /// by a build without search, and the text of every PDF and document whose file has none
    /// kept yet (stored before search, or whose reading failed). Stopping and running it
    /// again is safe: what was done is not done again.
    Reindex {
        #[command(flatten)]
        data: DataArg,
    },
}

/// The `thumbnails` commands.
#[derive(Debug, Subcommand)]
pub(crate) enum ThumbnailsCommand {
    /// Read the file of every asset without a thumbnail (or, for audio and video, without a
    /// playing time) again, with a progress bar. Stopping and running it again is safe: what
    /// was done is not done again.
    Backfill {
        #[command(flatten)]
        data: DataArg,
        #[command(flatten)]
        ffmpeg: FfmpegArg,
    },
}

/// The ffmpeg that draws videos' poster frames.
#[derive(Debug, Clone, Args)]
pub(crate) struct FfmpegArg {
    /// An ffmpeg binary: a video's thumbnail is then its poster frame, drawn by it with no
    /// network and a deadline. Default: none (videos get no thumbnail).
    #[arg(long = "ffmpeg", value_name = "PATH", env = "ASSETLIB_FFMPEG")]
    pub(crate) path: Option<PathBuf>,
}

/// Where the data lives: a data directory by default (records in `DIR/db`, files in
/// `DIR/files`), or a PostgreSQL database and an S3-compatible bucket shared by replicas.
#[derive(Debug, Clone, Args)]
pub(crate) struct DataArg {
    /// The data directory (created if missing).
    #[arg(long, value_name = "DIR", default_value = "./assetlib-data")]
    pub(crate) data: PathBuf,
    /// Keep records in this PostgreSQL database instead of `DIR/db` (several servers may
    /// share it). Needs a build with `--features postgres`.
    #[arg(long, value_name = "URL", env = "ASSETLIB_DATABASE_URL")]
    pub(crate) database_url: Option<String>,
    /// Keep files in an S3-compatible bucket instead of `DIR/files`: `s3://BUCKET[/PREFIX]`,
    /// reached with the standard `AWS_*` variables (`AWS_ENDPOINT` and `AWS_ALLOW_HTTP=true`
    /// for a self-hosted server). Needs a build with `--features s3`.
    #[arg(long, value_name = "s3://BUCKET[/PREFIX]", env = "ASSETLIB_FILES")]
    pub(crate) files: Option<String>,
    /// Stem the words search indexes and looks for in this language, so every form of a word
    /// finds the others (`running`, `runs`, `run`): its English name or ISO 639-1 code
    /// (`english`, `en`, ... `turkish`, `tr`). Default: none (words match whole, folded).
    /// Give every command the same language (or set the variable once): a data directory
    /// opened in another is indexed again at open.
    #[arg(
        long,
        value_name = "LANG",
        env = "ASSETLIB_SEARCH_LANGUAGE",
        value_parser = parse_language
    )]
    pub(crate) search_language: Option<assetlib::search::Language>,
    /// Most memory sled keeps of the data directory's pages, in MiB (default 1024). No effect
    /// on PostgreSQL.
    #[arg(long, value_name = "MIB", env = "ASSETLIB_SLED_CACHE_MB", value_parser = clap::value_parser!(u64).range(8..=1_048_576))]
    pub(crate) sled_cache_mb: Option<u64>,
}

/// Options of `serve`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) data: DataArg,
    #[command(flatten)]
    pub(crate) ffmpeg: FfmpegArg,
    /// The address to listen on.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    pub(crate) addr: SocketAddr,
    /// Add sample assets and a published sample library (once).
    #[arg(long)]
    pub(crate) demo: bool,
    /// An origin whose web pages may call the API (CORS), e.g. `https://www.example.com`;
    /// repeat it for more, or `*` for any. Default: none.
    #[arg(
        long = "cors-origin",
        value_name = "ORIGIN",
        env = "ASSETLIB_CORS_ORIGINS",
        value_delimiter = ','
    )]
    pub(crate) cors_origins: Vec<String>,
    /// Allow each key N requests per second on average (bursts of 2N); more get 429 with
    /// `Retry-After`. Requests without a key share a budget of the same size per client
    /// address. Default: no limit.
    #[arg(long, value_name = "N", env = "ASSETLIB_RATE_LIMIT", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub(crate) rate_limit: Option<u32>,
    /// How many proxies in front of the server append the client's address to
    /// `X-Forwarded-For` (a load balancer: 1). The client address is then the one the
    /// outermost of them saw. Default 0: the header is ignored.
    #[arg(long, value_name = "N", env = "ASSETLIB_TRUSTED_PROXY_HOPS", default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=16))]
    pub(crate) trusted_proxy_hops: u8,
    /// How replicas over one PostgreSQL database keep their caches current: `notify` (each
    /// listens for change notices; another replica's write shows within 100 ms and cached
    /// reads need no round trip) or `strict` (every cached read checks the database's
    /// version; a write shows at once everywhere). No effect on sled.
    #[arg(
        long,
        value_name = "MODE",
        env = "ASSETLIB_REPLICA_SYNC",
        default_value = "notify"
    )]
    pub(crate) replica_sync: assetlib::ReplicaSync,
    /// How many image variants (`GET /api/v1/assets/{id}/image`) are made at once; 16 more
    /// requests wait, the rest get 503. Default: the number of cores.
    #[arg(long, value_name = "N", env = "ASSETLIB_IMAGE_WORKERS", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub(crate) image_workers: Option<u16>,
    /// Let webhooks send to loopback, private and link-local addresses (for trying webhooks
    /// with a receiver on this machine). Default: such URLs are refused (400 on `url`), and a
    /// name that resolves to one fails at delivery.
    #[arg(long, env = "ASSETLIB_WEBHOOK_ALLOW_PRIVATE")]
    pub(crate) webhook_allow_private: bool,
    /// How many webhook deliveries this server sends at once; 0: none (another replica
    /// sends them). Default 16.
    #[arg(long, value_name = "N", env = "ASSETLIB_WEBHOOK_WORKERS", value_parser = clap::value_parser!(u16).range(0..=1024))]
    pub(crate) webhook_workers: Option<u16>,
    /// Seconds an unfinished resumable or direct upload is kept before it is removed (its S3
    /// multipart upload aborted). Default 86400 (24 h).
    #[arg(long, value_name = "S", env = "ASSETLIB_UPLOAD_EXPIRY", value_parser = clap::value_parser!(u64).range(1..=31_536_000))]
    pub(crate) upload_expiry: Option<u64>,
    /// Most bytes of the text inside one file kept for search; 0 keeps none (files are then
    /// found by their title, tags and description; `search reindex` reads them later).
    /// Default 2097152 (2 MiB).
    #[arg(long, value_name = "BYTES", env = "ASSETLIB_SEARCH_TEXT_LIMIT")]
    pub(crate) search_text_limit: Option<u64>,
}

impl ServeArgs {
    /// The configuration these options ask for.
    pub(crate) fn config(&self) -> Config {
        let mut config = super::drawing_pdfs(Config::default());
        config.cors_origins.clone_from(&self.cors_origins);
        config.trusted_proxy_hops = usize::from(self.trusted_proxy_hops);
        config.replica_sync = self.replica_sync;
        config.ffmpeg.clone_from(&self.ffmpeg.path);
        if let Some(n) = self.image_workers {
            config.image_workers = usize::from(n);
        }
        config.webhook_allow_private = self.webhook_allow_private;
        if let Some(n) = self.webhook_workers {
            config.webhook_workers = usize::from(n);
        }
        if let Some(seconds) = self.upload_expiry {
            config.upload_expiry = std::time::Duration::from_secs(seconds);
        }
        if let Some(bytes) = self.search_text_limit {
            config.search_text_limit = bytes;
        }
        config.rate_limit = self.rate_limit.and_then(|n| {
            Some(RateLimit {
                per_second: NonZeroU32::new(n)?,
                burst: NonZeroU32::new(n.saturating_mul(2))?,
            })
        });
        config
    }
}

/// The `keys` commands.
#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    /// Create a key; the key is printed alone on the last line of standard output.
    Create {
        /// Comma-separated scopes: read:assets, write:assets, read:libraries, write:libraries,
        /// read:paid, write:passes, read:events, admin:webhooks.
        #[arg(long, value_name = "a,b", value_parser = parse_scopes)]
        scopes: Scopes,
        /// A name to tell keys apart.
        #[arg(long, value_name = "N", default_value = "cli")]
        name: String,
        /// Days until the key stops working, 1 to 36500 (default: never).
        #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..=36_500))]
        expires_in_days: Option<u32>,
        /// The workspace whose records alone the key reads and writes: 1 to 64 letters,
        /// digits, `_` and `-` (default: a global key, which sees every workspace).
        #[arg(long, value_name = "W", value_parser = parse_workspace)]
        workspace: Option<String>,
        #[command(flatten)]
        data: DataArg,
    },
    /// List every key (never the keys themselves: only their hashes are stored).
    List {
        #[command(flatten)]
        data: DataArg,
    },
    /// Revoke a key by its id (as `keys list` shows it).
    Revoke {
        /// The key's id.
        id: Uuid,
        #[command(flatten)]
        data: DataArg,
    },
    /// Make a new secret for signed download links: every link signed before stops working
    /// (servers sharing a database follow within 5 seconds). Revokes links that leaked.
    RotateSigningSecret {
        #[command(flatten)]
        data: DataArg,
    },
}

/// A parsed `--scopes` list.
#[derive(Debug, Clone)]
pub(crate) struct Scopes(pub(crate) Vec<Scope>);

fn parse_scopes(list: &str) -> Result<Scopes, String> {
    assetlib::auth::parse_scopes(list).map(Scopes)
}

/// A `--search-language`: a language's English name or ISO 639-1 code, in any case; the error
/// lists every accepted value.
fn parse_language(name: &str) -> Result<assetlib::search::Language, String> {
    name.parse()
        .map_err(|e: assetlib::search::UnknownLanguage| e.to_string())
}

fn parse_workspace(id: &str) -> Result<String, String> {
    assetlib::validate::workspace_id("--workspace", id).map_err(|e| e.message())
}
