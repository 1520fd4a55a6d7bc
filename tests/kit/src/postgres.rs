//! A throwaway PostgreSQL server for tests (feature `postgres`).
//!
//! [`TestCluster::start`] makes a new cluster with the PostgreSQL server binaries of this
//! machine (`initdb`, `pg_ctl`, `postgres`, as [`crate::tools::POSTGRES`] finds them: in the
//! directory `ASSETLIB_PG_BIN` names, else on `PATH`, else the newest
//! `/usr/lib/postgresql/*/bin`) in a fresh
//! temporary directory, and starts it listening on `127.0.0.1` only, on a free port, with its
//! unix socket in that directory. As root it runs the binaries as the `postgres` system user
//! (PostgreSQL refuses to run as root). Durability is off (`fsync=off`): it is for tests.
//! [`TestCluster::durable_in`] starts a durable one (`fsync=on`) kept in a directory across
//! runs instead, for benches.
//!
//! [`TestCluster::database`] makes a fresh database in it for one test from a template
//! database that is migrated once, so a database costs one `CREATE DATABASE`; dropping the
//! [`TestDatabase`] drops it.
//!
//! ```no_run
//! # async fn run() {
//! use assetlib_postgres::PgStore;
//! use assetlib_testkit::postgres::TestCluster;
//!
//! let db = TestCluster::shared().database().await;
//! let store = PgStore::connect(db.url()).await.expect("connect");
//! # let _ = store;
//! # }
//! ```
//!
//! ## Stopping
//!
//! Dropping a [`TestCluster`] stops its server (a fast shutdown, then `SIGKILL` if it is still
//! there after 10 s) and removes its directory. [`TestCluster::shared`] keeps one cluster per
//! process in a static, which is never dropped: for it (and for any cluster whose process dies
//! before dropping it) a small watchdog process, started with the server, waits for the test
//! process to exit and then stops the server the same way and removes the directory. So no
//! server outlives its test binary by more than a moment.
//!
//! If the binaries are missing, [`TestCluster::start`] panics saying what to install
//! (`apt-get install postgresql` on Debian and Ubuntu). Tests never skip.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio_postgres::NoTls;

use crate::process::{Watch, block_on, free_ports, stop_pid};
use crate::tools::{POSTGRES, is_root};

/// Settings of a throwaway cluster: fast, not durable.
const FAST: &str = "-c fsync=off -c full_page_writes=off -c max_connections=300 \
     -c shared_buffers=64MB";

/// Settings of a kept, durable cluster ([`TestCluster::durable_in`]): commits reach the disk
/// as on a production server; otherwise PostgreSQL's defaults, with 256 MB of shared buffers.
const DURABLE: &str = "-c fsync=on -c synchronous_commit=on -c full_page_writes=on \
     -c shared_buffers=256MB -c max_connections=100";

/// How long a stopping server may take before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// The database every [`TestCluster::database`] is copied from, migrated once.
const TEMPLATE: &str = "assetlib_template";

/// A PostgreSQL server for tests, in a temporary directory, listening on `127.0.0.1`.
///
/// See the [module docs](self) for how it is started and stopped.
#[derive(Debug)]
pub struct TestCluster {
    /// The cluster's directory: its data, its log and its socket.
    dir: PathBuf,
    /// The temporary directory behind `dir`, removed when the cluster stops; `None` for a
    /// kept cluster ([`TestCluster::durable_in`]).
    temp: Option<tempfile::TempDir>,
    /// Server settings beyond where it listens.
    options: &'static str,
    data: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
    port: u16,
    pid: u32,
    watchdog: Option<Child>,
    template: tokio::sync::OnceCell<()>,
    next_db: AtomicU64,
}

impl TestCluster {
    /// The cluster shared by every test of this process, started on first use.
    pub fn shared() -> &'static TestCluster {
        static SHARED: OnceLock<TestCluster> = OnceLock::new();
        SHARED.get_or_init(TestCluster::start)
    }

    /// Makes and starts a new cluster, and waits until it accepts connections.
    ///
    /// # Panics
    /// When the server binaries are missing (the message says what to install), or when
    /// the cluster cannot be made or started (the message carries the server's log).
    pub fn start() -> TestCluster {
        let temp = tempfile::Builder::new()
            .prefix("assetlib-pg-")
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot make a temporary directory: {e}"));
        let dir = temp.path().to_owned();
        Self::start_in(dir, Some(temp), FAST)
    }

    /// Starts a durable cluster (`fsync=on`, `synchronous_commit=on`, as a production server
    /// runs) kept in `dir` across runs: made there on first use, reused after, never removed.
    /// For benches, whose databases take minutes to fill and whose commits must be real.
    ///
    /// # Panics
    /// As [`TestCluster::start`].
    pub fn durable_in(dir: impl Into<PathBuf>) -> TestCluster {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
        let dir = std::fs::canonicalize(&dir)
            .unwrap_or_else(|e| panic!("cannot resolve {}: {e}", dir.display()));
        Self::start_in(dir, None, DURABLE)
    }

    fn start_in(
        dir: PathBuf,
        temp: Option<tempfile::TempDir>,
        options: &'static str,
    ) -> TestCluster {
        let bin = POSTGRES.require();
        let as_postgres = is_root();
        if as_postgres {
            run(
                Command::new("chown").arg("postgres:").arg(&dir),
                "chown the cluster directory to the postgres user (does the `postgres` \
                 system user exist? `apt-get install postgresql` makes it)",
            );
        }
        let mut cluster = TestCluster {
            data: dir.join("data"),
            dir,
            temp,
            options,
            bin,
            as_postgres,
            port: 0,
            pid: 0,
            watchdog: None,
            template: tokio::sync::OnceCell::new(),
            next_db: AtomicU64::new(0),
        };
        if !cluster.data.join("PG_VERSION").is_file() {
            let _ = std::fs::remove_dir_all(&cluster.data);
            cluster.initdb();
        }
        cluster.start_server();
        cluster
    }

    /// The port the server listens on, on `127.0.0.1`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` on this server (user `postgres`, no password).
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// A fresh database with the store's schema already migrated (a copy of a template
    /// database migrated once per cluster).
    ///
    /// # Panics
    /// When the server refuses (the message says why).
    pub async fn database(&self) -> TestDatabase {
        self.template
            .get_or_init(|| async {
                let admin = self.admin().await;
                admin
                    .batch_execute(&format!("CREATE DATABASE {TEMPLATE}"))
                    .await
                    .unwrap_or_else(|e| panic!("cannot create the template database: {e}"));
                let store = assetlib_postgres::PgStore::connect_with(
                    &self.url(TEMPLATE),
                    assetlib_postgres::PgConfig::default().pool_size(1),
                )
                .await
                .unwrap_or_else(|e| panic!("cannot migrate the template database: {e}"));
                drop(store);
            })
            .await;
        self.create(TEMPLATE).await
    }

    /// A fresh, empty database (no schema of the store in it).
    ///
    /// # Panics
    /// When the server refuses.
    pub async fn empty_database(&self) -> TestDatabase {
        self.create("template0").await
    }

    async fn create(&self, template: &str) -> TestDatabase {
        let n = self.next_db.fetch_add(1, Ordering::Relaxed);
        let name = format!("test_{}_{n}", std::process::id());
        let admin = self.admin().await;
        let sql = format!("CREATE DATABASE {name} TEMPLATE {template}");
        // The template's last connections may still be closing: PostgreSQL waits a few
        // seconds for them itself; try a few times beyond that.
        let mut tries = 0;
        loop {
            match admin.batch_execute(&sql).await {
                Ok(()) => break,
                Err(e) if tries < 5 => {
                    tries += 1;
                    eprintln!("CREATE DATABASE {name} failed ({e}); trying again");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => panic!("cannot create database {name}: {e}"),
            }
        }
        TestDatabase {
            url: self.url(&name),
            admin_url: self.url("postgres"),
            name,
        }
    }

    async fn admin(&self) -> tokio_postgres::Client {
        connect(&self.url("postgres")).await
    }

    /// A command running server binary `name`, as the `postgres` user when we are root.
    fn command(&self, name: &str) -> Command {
        let exe = self.bin.join(name);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        cmd.current_dir(&self.dir).stdin(Stdio::null());
        cmd
    }

    fn initdb(&self) {
        let attempt = |locale: &str| {
            self.command("initdb")
                .arg("-D")
                .arg(&self.data)
                .args([
                    "-A",
                    "trust",
                    "-U",
                    "postgres",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    locale,
                ])
                .output()
                .unwrap_or_else(|e| panic!("cannot run initdb: {e}"))
        };
        let out = attempt("--locale=C.UTF-8");
        if out.status.success() {
            return;
        }
        let _ = std::fs::remove_dir_all(&self.data);
        let retry = attempt("--no-locale");
        if !retry.status.success() {
            panic!(
                "initdb failed: {}{}",
                String::from_utf8_lossy(&retry.stdout),
                String::from_utf8_lossy(&retry.stderr)
            );
        }
    }

    /// Stops the server (a fast shutdown, as an operator's restart does), keeping its data:
    /// for tests of an outage. [`TestCluster::resume`] starts it again.
    pub fn pause(&mut self) {
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        if self.pid != 0 {
            stop_pid(self.pid, "INT", STOP_GRACE);
            self.pid = 0;
        }
    }

    /// Starts a paused server again, on the port it had, and waits until it accepts
    /// connections.
    ///
    /// # Panics
    /// When the server cannot start (the message carries its log).
    pub fn resume(&mut self) {
        let port = self.port;
        self.start_on(Some(port));
    }

    fn start_server(&mut self) {
        self.start_on(None);
    }

    /// Starts the server on `port`, or on a free port when `None`.
    fn start_on(&mut self, fixed: Option<u16>) {
        let log = self.dir.join("server.log");
        let mut last_error = String::new();
        for _ in 0..5 {
            let port = fixed.unwrap_or_else(|| free_ports(1)[0]);
            let options = format!(
                "-c listen_addresses=127.0.0.1 -p {port} -k {} {}",
                self.dir.display(),
                self.options
            );
            let status = self
                .command("pg_ctl")
                .arg("start")
                .arg("-w")
                .args(["-t", "60"])
                .arg("-D")
                .arg(&self.data)
                .arg("-l")
                .arg(&log)
                .arg("-o")
                .arg(options)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap_or_else(|e| panic!("cannot run pg_ctl: {e}"));
            let pid = read_pid(&self.data);
            match pid {
                Some(pid) if status.success() => {
                    self.port = port;
                    self.pid = pid;
                    let removed: Vec<&Path> = self.temp.iter().map(|t| t.path()).collect();
                    self.watchdog = Some(
                        Watch {
                            name: "assetlib-pg-watchdog",
                            server: pid,
                            marker: &self.data,
                            signal: "INT",
                            remove: &removed,
                        }
                        .spawn(),
                    );
                    wait_until_ready(&self.url("postgres"));
                    return;
                }
                Some(pid) => stop_pid(pid, "INT", STOP_GRACE),
                None => {}
            }
            last_error = std::fs::read_to_string(&log).unwrap_or_default();
        }
        panic!("cannot start PostgreSQL; its log:\n{last_error}");
    }

    fn stop(&mut self) {
        self.pause();
        if let Some(Err(e)) = self.temp.take().map(tempfile::TempDir::close) {
            eprintln!("cannot remove the test cluster's directory: {e}");
        }
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A database in a [`TestCluster`]; dropping it drops the database (closing any connection
/// still open to it).
#[derive(Debug)]
pub struct TestDatabase {
    name: String,
    url: String,
    admin_url: String,
}

impl TestDatabase {
    /// Its URL, for `assetlib_postgres::PgStore::connect`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        let url = self.admin_url.clone();
        let dropped = block_on(async {
            let (client, conn) = tokio_postgres::connect(&url, NoTls)
                .await
                .map_err(|e| e.to_string())?;
            let conn = tokio::spawn(conn);
            let result = client.batch_execute(&sql).await.map_err(|e| e.to_string());
            drop(client);
            let _ = conn.await;
            result
        });
        if let Err(e) = dropped.and_then(|r| r) {
            eprintln!("cannot drop test database {}: {e}", self.name);
        }
    }
}

/// A plain connection, its connection task spawned on the current runtime.
async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the test cluster at {url}: {e}"));
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

fn run(cmd: &mut Command, what: &str) {
    match cmd.output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!("cannot {what}: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => panic!("cannot {what}: {e}"),
    }
}

/// The postmaster's PID, from the first line of `postmaster.pid`.
fn read_pid(data: &Path) -> Option<u32> {
    std::fs::read_to_string(data.join("postmaster.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

/// Waits until the server at `url` answers a query (at most 30 s).
fn wait_until_ready(url: &str) {
    let ready = block_on(async {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let error = match tokio_postgres::connect(url, NoTls).await {
                Ok((client, conn)) => {
                    let conn = tokio::spawn(conn);
                    let ok = client.simple_query("SELECT 1").await;
                    drop(client);
                    let _ = conn.await;
                    match ok {
                        Ok(_) => return Ok(()),
                        Err(e) => e.to_string(),
                    }
                }
                Err(e) => e.to_string(),
            };
            if Instant::now() > deadline {
                return Err(error);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    if let Err(e) = ready.and_then(|r| r) {
        panic!("the test cluster does not accept connections: {e}");
    }
}
