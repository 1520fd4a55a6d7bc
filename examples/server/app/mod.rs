//! What the ready servers share: the command line ([`cli`]), the data they open ([`data`]),
//! the `keys` commands and the first key ([`keys`]), the demo data ([`demo`]), logging, the
//! shutdown signal, the connection loop with its timeouts ([`http`]) and the example website
//! page ([`site`]).
//!
//! The axum server (`examples/server/main.rs`) declares it with `mod app;`, the warp server
//! (`examples/warp_server.rs`) with `#[path = "server/app/mod.rs"] mod app;`; each one's `main`
//! is `app::main(serve_http)`, where `serve_http` builds its framework's service and hands it
//! to [`http::serve`]. Only that function differs between the two.

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::path::Path;
use std::process::ExitCode;

use assetlib::Service;

pub(crate) mod cli;
pub(crate) mod data;
pub(crate) mod demo;
pub(crate) mod http;
pub(crate) mod import;
pub(crate) mod keys;
pub(crate) mod search;
pub(crate) mod site;
pub(crate) mod thumbnails;
pub(crate) mod transfer;

use cli::{Cli, Command, ServeArgs};
use data::{describe_data, open_service};
use keys::{ensure_first_key, run_keys};

/// A boxed error with a message for the user.
pub(crate) type BoxError = Box<dyn Error + Send + Sync + 'static>;

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
    // A run as its own PDF render child draws one page and ends (`extract::PdfRenderer`).
    if let Some(code) = assetlib::extract::pdf_render_child() {
        return code;
    }
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
            Command::Thumbnails { command } => thumbnails::run(command).await,
            Command::Search { command } => search::run(command).await,
            Command::Import(args) => import::run(args).await,
            Command::Backup(args) => transfer::backup(args).await,
            Command::Restore(args) => transfer::restore(args).await,
            Command::Migrate(args) => transfer::migrate(args).await,
        }
    });
    // Requests are answered and the store is flushed: work still on a blocking thread (a
    // file read for its metadata, a variant being made, each bounded by its own deadline)
    // is for answers nobody waits for now, and does not hold the process.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Removes the events past their retention now and every hour after, until aborted.
async fn purge_events_hourly(service: Service) {
    let mut every = tokio::time::interval(std::time::Duration::from_secs(3600));
    loop {
        every.tick().await;
        match service.purge_events().await {
            Ok(0) => {}
            Ok(removed) => tracing::info!(removed, "events past their retention removed"),
            Err(e) => tracing::warn!(error = %e, "removing old events failed"),
        }
    }
}

/// The file in the data directory that says every thumbnail has a random name.
const THUMBNAILS_UPGRADED: &str = "thumbnail-names-upgraded";

/// Gives thumbnails that an earlier version named after their asset random names, unless
/// the data directory says it was done: the pass reads every asset, which on a large store
/// takes long, so it runs once per data directory (and once on a new one, at once).
async fn upgrade_thumbnail_names_once(service: &Service, dir: &Path) -> Result<(), BoxError> {
    let done = dir.join(THUMBNAILS_UPGRADED);
    if done.exists() {
        return Ok(());
    }
    let renamed = service.upgrade_thumbnail_names().await?;
    if renamed > 0 {
        tracing::info!(
            renamed,
            "thumbnails named after their asset now have random names"
        );
    }
    std::fs::create_dir_all(dir)?;
    std::fs::write(&done, b"")?;
    Ok(())
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
    upgrade_thumbnail_names_once(&service, &args.data.data).await?;
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
    let purging = tokio::spawn(purge_events_hourly(service.clone()));
    let preparing = tokio::spawn(prepare_search(service.clone()));
    serve_http(service.clone(), listener).await?;
    purging.abort();
    preparing.abort();
    service.stop_deliveries().await;
    service.store().flush().await?;
    let stats = service.cache_stats();
    tracing::info!(
        "cache hits: details {}/{}, lists {}/{}, assets {}/{}",
        stats.details.hits,
        stats.details.hits + stats.details.misses,
        stats.lists.hits,
        stats.lists.hits + stats.lists.misses,
        stats.assets.hits,
        stats.assets.hits + stats.assets.misses,
    );
    tracing::info!("stopped; the store is flushed");
    Ok(())
}

/// Makes the store's search ready (sled reads the words of every asset's fields into memory)
/// while the server starts answering, so that no search request waits for it.
async fn prepare_search(service: Service) {
    let Some(search) = service.store().search_store() else {
        return;
    };
    let started = std::time::Instant::now();
    match search.prepare().await {
        Ok(()) => tracing::info!(took = ?started.elapsed(), "search is ready"),
        Err(e) => tracing::warn!(error = %e, "search was not made ready; the first search will"),
    }
}

/// `config` with this program as its PDF renderer: each page is drawn in a child process of
/// this binary, bounded in time and memory. Without its own path (which the operating system
/// gives on every platform this runs on) PDFs get no pages, and the log says so.
pub(crate) fn drawing_pdfs(mut config: assetlib::Config) -> assetlib::Config {
    match assetlib::extract::PdfRenderer::this_program() {
        Ok(renderer) => config.extract_limits.pdf_renderer = renderer,
        Err(e) => tracing::warn!(error = %e, "PDF pages are not drawn"),
    }
    config
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

/// Resolves on Ctrl-C or (on Unix) SIGTERM, once PDF renders are stopped.
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
    // Pages being drawn would hold up the answers the shutdown waits for: they stop now,
    // and those files get no thumbnail.
    assetlib::extract::stop_pdf_renders();
}
