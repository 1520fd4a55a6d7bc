//! Where the data lives: a data directory (sled records in `DIR/db`, files in `DIR/files`),
//! or a PostgreSQL database and an S3-compatible bucket that replicas share.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use assetlib::search::Language;
use assetlib::{Config, Files, Service, Store};

use super::cli::DataArg;
use super::{BoxError, UserError};

/// The store's directory inside the data directory (files will live beside it).
pub(crate) fn store_dir(data: &Path) -> PathBuf {
    data.join("db")
}

/// Opens the store and the file store `data` names, and a service over them: PostgreSQL
/// when `--database-url` is given, else sled in `DIR/db` (stemming in `--search-language`);
/// an S3-compatible bucket when `--files` is given, else `DIR/files`.
///
/// Fails with a clear message when another process (a running server) holds a sled
/// directory, or when the database or bucket cannot be reached. `ASSETLIB_DETAIL_CACHE=off`
/// (or `0`, `false`) turns the library detail cache off, and `ASSETLIB_PAGE_CACHE=off` the
/// asset list and asset cache, to measure without them.
pub(crate) async fn open_service(data: &DataArg, mut config: Config) -> Result<Service, BoxError> {
    let store = match &data.database_url {
        Some(url) => open_postgres(url, data.search_language).await?,
        None => {
            create_data_dir(&data.data)?;
            open_sled(data)?
        }
    };
    let files = match &data.files {
        Some(url) => open_files(url)?,
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

/// Where the records and files are (and the search language), for the log and the user.
pub(crate) fn describe_data(data: &DataArg) -> String {
    let records = match &data.database_url {
        Some(_) => "PostgreSQL".to_owned(),
        None => store_dir(&data.data).display().to_string(),
    };
    let files = match &data.files {
        Some(url) => url.clone(),
        None => data.data.join("files").display().to_string(),
    };
    match data.search_language {
        Some(language) => {
            format!("records in {records}, files in {files}, search words stemmed in {language}")
        }
        None => format!("records in {records}, files in {files}"),
    }
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

/// Opens sled in `DIR/db`, its search stemming in `--search-language` (a directory indexed in
/// another is indexed again now) and its cache of `--sled-cache-mb`.
fn open_sled(args: &DataArg) -> Result<Arc<dyn Store>, BoxError> {
    use assetlib::sled::{OpenError, SledConfig, SledStore};
    let data = args.data.as_path();
    let mut config = SledConfig::default().search_language(args.search_language);
    if let Some(mib) = args.sled_cache_mb {
        config = config.cache_capacity(mib * 1024 * 1024);
    }
    match SledStore::open_with(store_dir(data), config) {
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

/// Connects to the PostgreSQL database `url`, its search stemming in `language`.
#[cfg(feature = "postgres")]
pub(crate) async fn open_postgres(
    url: &str,
    language: Option<Language>,
) -> Result<Arc<dyn Store>, BoxError> {
    use assetlib::postgres::{PgConfig, PgStore};
    match PgStore::connect_with(url, PgConfig::new().search_language(language)).await {
        Ok(store) => Ok(Arc::new(store)),
        Err(e) => Err(UserError(format!("cannot use the database: {e}")).into()),
    }
}

/// Without PostgreSQL: an error saying so.
#[cfg(not(feature = "postgres"))]
pub(crate) async fn open_postgres(
    _url: &str,
    _language: Option<Language>,
) -> Result<Arc<dyn Store>, BoxError> {
    Err(UserError(
        "this server was built without PostgreSQL: build it with `--features postgres`".into(),
    )
    .into())
}

/// The files in the bucket `url` names (`s3://BUCKET[/PREFIX]`).
#[cfg(feature = "s3")]
pub(crate) fn open_files(url: &str) -> Result<Files, BoxError> {
    Files::s3(url).map_err(|e| UserError(format!("cannot use the bucket {url}: {e}")).into())
}

/// Without S3: an error saying so.
#[cfg(not(feature = "s3"))]
pub(crate) fn open_files(_url: &str) -> Result<Files, BoxError> {
    Err(UserError(
        "this server was built without S3-compatible storage: build it with `--features s3`".into(),
    )
    .into())
}
