//! What the ready servers share: the command line, the `keys` commands, opening the data
//! directory, the first key, the demo data, logging, the shutdown signal, the connection
//! loop with its timeouts ([`http`]) and the example website page ([`site`]).
//!
//! Each server (`examples/server.rs` for axum, `examples/warp_server.rs` for warp) includes
//! this file with `#[path = "common/mod.rs"] mod common;`, and its `main` is
//! `common::main(serve_http)` where `serve_http` builds its framework's service and hands it
//! to [`http::serve`].

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use assetlib::{ApiKey, Config, Files, RateLimit, Scope, Service, Store};
use chrono::{Duration, Utc};
use clap::{Args, Parser, Subcommand};
use uuid::Uuid;

pub(crate) mod demo;
pub(crate) mod http;
pub(crate) mod site;

/// A boxed error with a message for the user.
pub(crate) type BoxError = Box<dyn Error + Send + Sync + 'static>;

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
}

/// Options of `serve`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) data: DataArg,
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
}

impl ServeArgs {
    /// The configuration these options ask for.
    fn config(&self) -> Config {
        let mut config = Config::default();
        config.cors_origins.clone_from(&self.cors_origins);
        config.trusted_proxy_hops = usize::from(self.trusted_proxy_hops);
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
        /// Comma-separated scopes: read:assets, write:assets, read:libraries, write:libraries.
        #[arg(long, value_name = "a,b", value_parser = parse_scopes)]
        scopes: Scopes,
        /// A name to tell keys apart.
        #[arg(long, value_name = "N", default_value = "cli")]
        name: String,
        /// Days until the key stops working, 1 to 36500 (default: never).
        #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..=36_500))]
        expires_in_days: Option<u32>,
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

/// The store's directory inside the data directory (files will live beside it).
pub(crate) fn store_dir(data: &Path) -> PathBuf {
    data.join("db")
}

/// A message for the user, shown instead of a cause's internals.
#[derive(Debug)]
pub(crate) struct UserError(pub(crate) String);

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for UserError {}

/// Runs the command line: parses it, runs a `keys` command, or serves with `serve_http`.
///
/// `serve_http(service, listener)` serves the API on the bound listener with its framework,
/// logs one line per request, and returns once [`shutdown_signal`] has fired and the requests
/// in flight are answered.
pub(crate) fn main<F, Fut>(serve_http: F) -> ExitCode
where
    F: FnOnce(Service, tokio::net::TcpListener) -> Fut,
    Fut: Future<Output = Result<(), BoxError>>,
{
    use clap::Parser as _;
    let command = Cli::parse().command();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match command {
            Command::Serve(args) => serve(args, serve_http).await,
            Command::Keys { command } => run_keys(command).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `serve`: opens the data directory, gives thumbnails that an earlier version named after
/// their asset random names, makes the first key, adds the demo data if asked, listens, hands
/// over to `serve_http`, and flushes the store once it returns.
async fn serve<F, Fut>(args: ServeArgs, serve_http: F) -> Result<(), BoxError>
where
    F: FnOnce(Service, tokio::net::TcpListener) -> Fut,
    Fut: Future<Output = Result<(), BoxError>>,
{
    init_logging();
    let service = open_service(&args.data, args.config()).await?;
    let renamed = service.upgrade_thumbnail_names().await?;
    if renamed > 0 {
        tracing::info!(
            renamed,
            "thumbnails named after their asset now have random names"
        );
    }
    ensure_first_key(&service, args.addr).await?;
    if args.demo {
        demo::seed_and_show(&service, args.addr).await?;
    }
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .map_err(|e| UserError(format!("cannot listen on {}: {e}", args.addr)))?;
    tracing::info!(
        addr = %listener.local_addr()?,
        data = %describe_data(&args.data),
        "serving the API at /api/v1"
    );
    serve_http(service.clone(), listener).await?;
    service.store().flush().await?;
    tracing::info!("stopped; the store is flushed");
    Ok(())
}

/// Opens the store and the file store `data` names, and a service over them: PostgreSQL
/// when `--database-url` is given, else sled in `DIR/db`; an S3-compatible bucket when
/// `--files` is given, else `DIR/files`.
///
/// Fails with a clear message when another process (a running server) holds a sled
/// directory, or when the database or bucket cannot be reached. `ASSETLIB_DETAIL_CACHE=off`
/// (or `0`, `false`) turns the library detail cache off, and `ASSETLIB_PAGE_CACHE=off` the
/// asset list and asset cache, to measure without them.
pub(crate) async fn open_service(data: &DataArg, mut config: Config) -> Result<Service, BoxError> {
    let store = match &data.database_url {
        Some(url) => open_postgres(url).await?,
        None => {
            create_data_dir(&data.data)?;
            open_sled(&data.data)?
        }
    };
    let files = match &data.files {
        Some(url) => open_s3(url)?,
        None => {
            create_data_dir(&data.data)?;
            Files::local(data.data.join("files")).map_err(|e| UserError(e.to_string()))?
        }
    };
    let on = |var| !matches!(std::env::var(var).as_deref(), Ok("off" | "0" | "false"));
    config.detail_cache = on("ASSETLIB_DETAIL_CACHE");
    config.page_cache = on("ASSETLIB_PAGE_CACHE");
    Ok(Service::from_arc(store, files, config))
}

/// Where the records and files are, for the log and the user.
pub(crate) fn describe_data(data: &DataArg) -> String {
    let records = match &data.database_url {
        Some(_) => "PostgreSQL".to_owned(),
        None => store_dir(&data.data).display().to_string(),
    };
    let files = match &data.files {
        Some(url) => url.clone(),
        None => data.data.join("files").display().to_string(),
    };
    format!("records in {records}, files in {files}")
}

fn create_data_dir(data: &Path) -> Result<(), BoxError> {
    std::fs::create_dir_all(data).map_err(|e| {
        UserError(format!(
            "cannot create the data directory {}: {e}",
            data.display()
        ))
        .into()
    })
}

fn open_sled(data: &Path) -> Result<Arc<dyn Store>, BoxError> {
    use assetlib::sled::{OpenError, SledStore};
    match SledStore::open(store_dir(data)) {
        Ok(store) => Ok(Arc::new(store)),
        Err(OpenError::Locked { .. }) => Err(UserError(format!(
            "the data directory {} is in use by another process (is a server running on \
             it?); stop that process and try again",
            data.display()
        ))
        .into()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(feature = "postgres")]
async fn open_postgres(url: &str) -> Result<Arc<dyn Store>, BoxError> {
    match assetlib::postgres::PgStore::connect(url).await {
        Ok(store) => Ok(Arc::new(store)),
        Err(e) => Err(UserError(format!("cannot use the database: {e}")).into()),
    }
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_url: &str) -> Result<Arc<dyn Store>, BoxError> {
    Err(UserError(
        "this server was built without PostgreSQL: build it with `--features postgres`".into(),
    )
    .into())
}

#[cfg(feature = "s3")]
fn open_s3(url: &str) -> Result<Files, BoxError> {
    Files::s3(url).map_err(|e| UserError(format!("cannot use the bucket {url}: {e}")).into())
}

#[cfg(not(feature = "s3"))]
fn open_s3(_url: &str) -> Result<Files, BoxError> {
    Err(UserError(
        "this server was built without S3-compatible storage: build it with `--features s3`".into(),
    )
    .into())
}

/// On a store without keys, creates one with every scope and prints it, once.
pub(crate) async fn ensure_first_key(service: &Service, addr: SocketAddr) -> Result<(), BoxError> {
    if !service.list_keys().await?.is_empty() {
        return Ok(());
    }
    let (record, key) = service
        .create_key("admin", Scope::ALL.to_vec(), None)
        .await?;
    service.store().flush().await?;
    let scopes: Vec<&str> = record.scopes.iter().map(|s| s.as_str()).collect();
    println!();
    println!(
        "  No API keys yet: created one with every scope ({}).",
        scopes.join(", ")
    );
    println!("  It is shown only this once. Keep it somewhere safe:");
    println!();
    println!("      {key}");
    println!();
    println!("  Try it:");
    println!("      curl -H 'Authorization: Bearer {key}' http://{addr}/api/v1/assets");
    println!();
    Ok(())
}

/// Runs a `keys` command; what it prints goes to standard output.
pub(crate) async fn run_keys(command: KeysCommand) -> Result<(), BoxError> {
    match command {
        KeysCommand::Create {
            scopes,
            name,
            expires_in_days,
            data,
        } => {
            let service = open_service(&data, Config::default()).await?;
            let expires_at = expires_in_days.map(|d| Utc::now() + Duration::days(i64::from(d)));
            let (record, key) = service.create_key(&name, scopes.0, expires_at).await?;
            service.store().flush().await?;
            println!(
                "Created key {} ({}): {}",
                record.id,
                record.name,
                describe(&record)
            );
            println!("It is shown only this once:");
            println!("{key}");
        }
        KeysCommand::List { data } => {
            let service = open_service(&data, Config::default()).await?;
            let keys = service.list_keys().await?;
            if keys.is_empty() {
                println!("No keys.");
            }
            for key in keys {
                println!("{}  {}  {}", key.id, key.name, describe(&key));
            }
        }
        KeysCommand::Revoke { id, data } => {
            let service = open_service(&data, Config::default()).await?;
            if !service.revoke_key(id).await? {
                return Err(UserError(format!("no key has the id {id}")).into());
            }
            service.store().flush().await?;
            println!("Revoked key {id}.");
        }
        KeysCommand::RotateSigningSecret { data } => {
            let service = open_service(&data, Config::default()).await?;
            service.rotate_signing_secret().await?;
            service.store().flush().await?;
            println!("Made a new signing secret: links signed before no longer work.");
        }
    }
    Ok(())
}

/// Scopes, dates and state of a key, on one line.
fn describe(key: &ApiKey) -> String {
    let scopes: Vec<&str> = key.scopes.iter().map(|s| s.as_str()).collect();
    let ts = |t: chrono::DateTime<Utc>| t.format("%Y-%m-%d %H:%M UTC").to_string();
    let mut line = format!(
        "scopes {}, created {}",
        scopes.join(","),
        ts(key.created_at)
    );
    if let Some(at) = key.expires_at {
        line.push_str(&format!(", expires {}", ts(at)));
    }
    let state = match (key.revoked_at, key.expires_at) {
        (Some(at), _) => format!("revoked {}", ts(at)),
        (None, Some(at)) if at <= Utc::now() => "expired".to_owned(),
        _ => "active".to_owned(),
    };
    format!("{line} [{state}]")
}

/// Structured logs on standard error, filtered by `RUST_LOG` (default `info`).
pub(crate) fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

/// Resolves on Ctrl-C or (on Unix) SIGTERM.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("Ctrl-C: shutting down"),
        () = terminate => tracing::info!("SIGTERM: shutting down"),
    }
}
