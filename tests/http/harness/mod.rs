//! How the suite starts an adapter: a [`Harness`] per adapter, each in one small file.

use std::any::Any;
use std::future::Future;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::Arc;

use assetlib::{Config, ReplicaSync, Service, Store};
use tokio::sync::oneshot;

pub(crate) mod axum;
pub(crate) mod warp;

/// What keeps a case's store alive (a database, a directory) until the case ends.
pub(crate) type StoreGuard = Box<dyn Any + Send>;

/// Starts one adapter over real sockets, over the store it names.
pub(crate) trait Harness {
    /// Whether the adapter streams a download's body as the client takes it (axum), or gathers
    /// it whole before the first byte goes out (warp 0.4, which has no public streaming body).
    const STREAMS_BODIES: bool = true;

    /// A fresh store for one case, with what keeps it alive. Sled in `dir` unless the harness
    /// says otherwise.
    fn store(dir: &Path) -> impl Future<Output = (Arc<dyn Store>, StoreGuard)> + Send {
        let store = assetlib::sled::SledStore::open(dir.join("db")).expect("open sled store");
        let store: Arc<dyn Store> = Arc::new(store);
        async move { (store, Box::new(()) as StoreGuard) }
    }

    /// Serves `service` with this adapter on a fresh `127.0.0.1:0` listener, at the root.
    fn spawn(service: Service) -> impl Future<Output = Server> + Send;

    /// Like [`Harness::spawn`], with the API nested under `/{segment}` the way an app of
    /// this framework would mount it.
    fn spawn_under(service: Service, segment: &'static str) -> impl Future<Output = Server> + Send;

    /// The configuration a case asks for, as this harness runs it (unchanged unless the
    /// harness is about a setting).
    fn config(config: Config) -> Config {
        config
    }
}

/// A running server: its base URL, stopped when dropped.
pub(crate) struct Server {
    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub(crate) base_url: String,
    shutdown: Option<oneshot::Sender<()>>,
}

impl Server {
    /// A server at `base_url` that stops when `shutdown` fires.
    pub(crate) fn new(base_url: String, shutdown: oneshot::Sender<()>) -> Self {
        Server {
            base_url,
            shutdown: Some(shutdown),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// A store with `config` on a fresh database (a copy of a migrated template) of the cluster
/// the test binary starts on 127.0.0.1.
async fn postgres_store(config: assetlib_postgres::PgConfig) -> (Arc<dyn Store>, StoreGuard) {
    let database = assetlib_testkit::postgres::TestCluster::shared()
        .database()
        .await;
    let store = assetlib_postgres::PgStore::connect_with(database.url(), config)
        .await
        .expect("connect to the test database");
    (Arc::new(store), Box::new(database))
}

/// Harness `H` over PostgreSQL: every case gets a fresh database (a copy of a migrated
/// template) on the cluster the test binary starts on 127.0.0.1.
pub(crate) struct OnPostgres<H>(PhantomData<H>);

impl<H: Harness> Harness for OnPostgres<H> {
    const STREAMS_BODIES: bool = H::STREAMS_BODIES;

    async fn store(_dir: &Path) -> (Arc<dyn Store>, StoreGuard) {
        postgres_store(assetlib_postgres::PgConfig::new()).await
    }

    fn spawn(service: Service) -> impl Future<Output = Server> + Send {
        H::spawn(service)
    }

    fn spawn_under(service: Service, segment: &'static str) -> impl Future<Output = Server> + Send {
        H::spawn_under(service, segment)
    }
}

/// [`OnPostgres`] with [`ReplicaSync::Strict`]: every read checks the store's versions, as
/// `--replica-sync strict` runs it. The cases are the same; what they read must not change.
pub(crate) struct OnPostgresStrict<H>(PhantomData<H>);

impl<H: Harness> Harness for OnPostgresStrict<H> {
    const STREAMS_BODIES: bool = H::STREAMS_BODIES;

    fn store(dir: &Path) -> impl Future<Output = (Arc<dyn Store>, StoreGuard)> + Send {
        OnPostgres::<H>::store(dir)
    }

    fn spawn(service: Service) -> impl Future<Output = Server> + Send {
        H::spawn(service)
    }

    fn spawn_under(service: Service, segment: &'static str) -> impl Future<Output = Server> + Send {
        H::spawn_under(service, segment)
    }

    fn config(mut config: Config) -> Config {
        config.replica_sync = ReplicaSync::Strict;
        config
    }
}

/// Harness `H` over PostgreSQL whose search stems words in English
/// (`PgConfig::search_language`): a fresh database per case, as [`OnPostgres`].
pub(crate) struct OnPostgresInEnglish<H>(PhantomData<H>);

impl<H: Harness> Harness for OnPostgresInEnglish<H> {
    const STREAMS_BODIES: bool = H::STREAMS_BODIES;

    async fn store(_dir: &Path) -> (Arc<dyn Store>, StoreGuard) {
        use assetlib::search::Language;
        let config = assetlib_postgres::PgConfig::new().search_language(Some(Language::English));
        postgres_store(config).await
    }

    fn spawn(service: Service) -> impl Future<Output = Server> + Send {
        H::spawn(service)
    }

    fn spawn_under(service: Service, segment: &'static str) -> impl Future<Output = Server> + Send {
        H::spawn_under(service, segment)
    }
}

/// Harness `H` over sled whose search stems words in English
/// (`SledConfig::search_language`): for the cases of stemmed search.
pub(crate) struct InEnglish<H>(PhantomData<H>);

impl<H: Harness> Harness for InEnglish<H> {
    const STREAMS_BODIES: bool = H::STREAMS_BODIES;

    fn store(dir: &Path) -> impl Future<Output = (Arc<dyn Store>, StoreGuard)> + Send {
        use assetlib::search::Language;
        use assetlib::sled::{SledConfig, SledStore};
        let config = SledConfig::default().search_language(Some(Language::English));
        let store = SledStore::open_with(dir.join("db"), config).expect("open sled store");
        let store: Arc<dyn Store> = Arc::new(store);
        async move { (store, Box::new(()) as StoreGuard) }
    }

    fn spawn(service: Service) -> impl Future<Output = Server> + Send {
        H::spawn(service)
    }

    fn spawn_under(service: Service, segment: &'static str) -> impl Future<Output = Server> + Send {
        H::spawn_under(service, segment)
    }
}
