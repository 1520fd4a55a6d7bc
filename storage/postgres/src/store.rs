//! [`PgStore`] and its [`PgConfig`]: the pool, the schema, and the helpers every module's
//! store trait impl uses.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use assetlib_core::Page;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row};
use uuid::Uuid;

use crate::counters::Counters;
use crate::error::{Error, Failure};
use crate::notices::Replica;
use crate::schema::Schema;

/// How long a connect waits for the change notice connection to listen before it returns
/// (reads check the database's versions until it does).
const LISTEN_WAIT: Duration = Duration::from_secs(2);

/// The schema used unless [`PgConfig::schema`] names another.
const DEFAULT_SCHEMA: &str = "assetlib";

/// Options of a [`PgStore`]: the schema its tables live in, and the size of the pool that
/// [`PgStore::connect_with`] builds.
#[derive(Debug, Clone)]
pub struct PgConfig {
    schema: String,
    pool_size: usize,
    words: WordRules,
}

impl Default for PgConfig {
    fn default() -> Self {
        PgConfig {
            schema: DEFAULT_SCHEMA.to_owned(),
            pool_size: 16,
            words: WordRules::default(),
        }
    }
}

impl PgConfig {
    /// The default options: schema `assetlib`, a pool of 16 connections.
    pub fn new() -> Self {
        Self::default()
    }

    /// The schema the store's tables live in (created when missing). It must be a plain SQL
    /// identifier: 1 to 63 lower-case ASCII letters, digits and underscores, not starting with
    /// a digit or `pg_`; anything else fails at connect with [`Error::InvalidSchemaName`].
    pub fn schema(mut self, name: impl Into<String>) -> Self {
        self.schema = name.into();
        self
    }

    /// The most connections the pool built by [`PgStore::connect_with`] opens (at least 1).
    /// A pool given to [`PgStore::from_pool_with`] keeps its own size.
    pub fn pool_size(mut self, size: usize) -> Self {
        self.pool_size = size.max(1);
        self
    }

    /// The language the search index stems words in (feature `search`; `None`, the default,
    /// stems nothing: words are only folded). The database records the language its index
    /// was made in: a store that connects naming another clears the index's words (searches
    /// then read their candidates, answering right but slowly) until
    /// [`PgStore::reindex_search`] (the ready server's `search reindex`) has made them again
    /// in the new one. Every replica of one database must name the same language.
    #[cfg(feature = "search")]
    pub fn search_language(mut self, language: Option<assetlib_core::search::Language>) -> Self {
        self.words.language = language;
        self
    }
}

/// How the store makes the words of its search index: the language they are stemmed in
/// ([`PgConfig::search_language`]; feature `search`, nothing without it).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WordRules {
    #[cfg(feature = "search")]
    pub(crate) language: Option<assetlib_core::search::Language>,
}

/// A [`Store`](assetlib_core::Store) in PostgreSQL. Cloning is cheap and shares the pool.
#[derive(Clone)]
pub struct PgStore {
    pub(crate) pool: Pool,
    pub(crate) schema: Arc<Schema>,
    /// The versions of this process's cached answers, kept current by change notices.
    pub(crate) replica: Arc<Replica>,
    /// Views and downloads not yet written.
    pub(crate) counters: Arc<Counters>,
    /// Asset inserts waiting to share a transaction and its commit.
    pub(crate) inserts: Arc<crate::batch::Batches<Option<assetlib_core::Asset>>>,
    /// Slugs inserts found taken lately.
    pub(crate) taken_slugs: Arc<crate::slugs::TakenSlugs>,
    /// How the words of the search index are made ([`PgConfig::search_language`]).
    pub(crate) words: WordRules,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("schema", &self.schema.name)
            .field("pool", &self.pool.status())
            .finish()
    }
}

impl PgStore {
    /// Connects to the database at `url` (a `postgres://` URL or a `key=value` string) with a
    /// pool of 16 connections and no TLS, and migrates schema `assetlib`.
    pub async fn connect(url: &str) -> Result<Self, Error> {
        Self::connect_with(url, PgConfig::default()).await
    }

    /// Like [`PgStore::connect`], with the schema and pool size of `config`.
    pub async fn connect_with(url: &str, config: PgConfig) -> Result<Self, Error> {
        let schema = Schema::new(&config.schema)?;
        let origin = crate::notices::new_origin();
        let pg = tokio_postgres::Config::from_str(url).map_err(Error::InvalidUrl)?;
        let pg = crate::notices::with_origin(pg, &origin);
        let listen = (pg.clone(), origin);
        let manager = Manager::from_config(
            pg,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(config.pool_size)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .create_timeout(Some(Duration::from_secs(10)))
            .wait_timeout(Some(Duration::from_secs(30)))
            .build()
            .map_err(Error::Pool)?;
        Self::open(pool, schema, config.words, Some(listen)).await
    }

    /// A store over an app's own pool (for example one that connects over TLS), in schema
    /// `assetlib`, migrated before this returns.
    ///
    /// A pool does not tell how to open a connection of one's own, so such a store does not
    /// listen for change notices: every cached read checks the database's version, as with
    /// [`ReplicaSync::Strict`](assetlib_core::ReplicaSync::Strict).
    pub async fn from_pool(pool: Pool) -> Result<Self, Error> {
        Self::from_pool_with(pool, PgConfig::default()).await
    }

    /// Like [`PgStore::from_pool`], in the schema of `config`.
    pub async fn from_pool_with(pool: Pool, config: PgConfig) -> Result<Self, Error> {
        let schema = Schema::new(&config.schema)?;
        Self::open(pool, schema, config.words, None).await
    }

    async fn open(
        pool: Pool,
        schema: Schema,
        words: WordRules,
        listen: Option<(tokio_postgres::Config, String)>,
    ) -> Result<Self, Error> {
        crate::migrate::migrate(&pool, &schema).await?;
        #[cfg(feature = "search")]
        crate::search_language::use_language(&pool, &schema, words.language).await?;
        let store = PgStore {
            pool,
            schema: Arc::new(schema),
            replica: Arc::default(),
            counters: Arc::default(),
            inserts: Arc::default(),
            taken_slugs: Arc::default(),
            words,
        };
        if let Some((config, origin)) = listen {
            let to = crate::notices::Listen {
                config,
                channel: store.schema.name.clone(),
                origin,
            };
            crate::notices::listen(&store.replica, to, LISTEN_WAIT).await;
        }
        store.counting();
        Ok(store)
    }

    /// Makes sure the task writing the counters runs (it stops with the runtime that ran it).
    pub(crate) fn counting(&self) {
        self.counters
            .ensure_flushing(&self.pool, &self.schema, &self.replica);
    }

    /// Whether this store answers version reads from change notices now: the mode is
    /// `notify` and the listening connection is up (for tests of the fallback).
    pub fn listening(&self) -> bool {
        self.replica.trusts_notices()
    }

    /// How many asset inserts this store has run, and in how many commits: inserts that
    /// arrive together share a transaction (feature `stats`, for tests and benches).
    #[cfg(feature = "stats")]
    pub fn insert_commits(&self) -> (u64, u64) {
        self.inserts.counts()
    }

    /// The schema the store's tables live in.
    pub fn schema(&self) -> &str {
        &self.schema.name
    }

    /// The connection pool.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Object, Failure> {
        Ok(self.pool.get().await?)
    }
}

impl PgStore {
    /// Runs a list query whose every row holds the total matching (column 0) and one record
    /// from column 1 on, decoded by `decode`; a page past the end is one row with the total
    /// and nulls from column 1 on (the record's id is null).
    pub(crate) async fn query_page<T>(
        &self,
        sql: &str,
        params: &[Box<dyn ToSql + Sync + Send>],
        what: &'static str,
        decode: impl Fn(&Row) -> Result<T, Failure>,
    ) -> Result<Page<T>, Failure> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql).await?;
        let refs: Vec<&(dyn ToSql + Sync)> = params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect();
        let rows = client.query(&stmt, &refs).await?;
        let mut total = 0;
        let mut items = Vec::with_capacity(rows.len());
        for row in &rows {
            total = to_u64(what, row.try_get(0)?)?;
            if row.try_get::<_, Option<Uuid>>(1)?.is_some() {
                items.push(decode(row)?);
            }
        }
        Ok(Page { items, total })
    }
}

/// `names` as a select list, each prefixed with `p` (a table alias and a dot, or nothing).
pub(crate) fn columns(p: &str, names: &[&str]) -> String {
    names
        .iter()
        .map(|c| format!("{p}{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) use crate::error::{to_i64, to_u32, to_u64};

/// `s` as a `LIKE` pattern matching itself literally (`%`, `_` and `\` escaped).
pub(crate) fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Runs `INSERT`/`UPDATE ... RETURNING` statement `sql` with `synchronous_commit = off`, in one round
/// trip (one simple-query message, which PostgreSQL runs as one transaction), and returns the
/// text of the returned row's columns, if a row was updated.
pub(crate) async fn counter_update(
    client: &tokio_postgres::Client,
    sql: &str,
) -> Result<Option<Vec<String>>, Failure> {
    let message = format!("SET LOCAL synchronous_commit = off; {sql}");
    let mut row = None;
    for m in client.simple_query(&message).await? {
        if let tokio_postgres::SimpleQueryMessage::Row(r) = m {
            let cols = (0..r.len())
                .map(|i| {
                    r.get(i)
                        .map(str::to_owned)
                        .ok_or(Failure::Protocol("a counter is NULL"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if row.replace(cols).is_some() {
                return Err(Failure::Protocol("a counter update returned two rows"));
            }
        }
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns_match_literally() {
        assert_eq!(like_escape("50%_off\\now"), "50\\%\\_off\\\\now");
        assert_eq!(like_escape("ärger"), "ärger");
    }
}
