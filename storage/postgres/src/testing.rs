//! A throwaway PostgreSQL server for tests (feature `testing`).
//!
//! [`TestCluster::start`] makes a new cluster with the PostgreSQL server binaries of this
//! machine (`initdb`, `pg_ctl`, `postgres`, found on `PATH`, else the newest
//! `/usr/lib/postgresql/*/bin`, or in the directory `ASSETLIB_PG_BIN` names) in a fresh
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
//! use assetlib_postgres::{PgStore, testing::TestCluster};
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

use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio_postgres::NoTls;

/// Settings of a throwaway cluster: fast, not durable.
const FAST: &str = "-c fsync=off -c full_page_writes=off -c max_connections=300 \
     -c shared_buffers=64MB";

/// Settings of a kept, durable cluster ([`TestCluster::durable_in`]): commits reach the disk
/// as on a production server; otherwise PostgreSQL's defaults, with 256 MB of shared buffers.
const DURABLE: &str = "-c fsync=on -c synchronous_commit=on -c full_page_writes=on \
     -c shared_buffers=256MB -c max_connections=100";

/// The database every [`TestCluster::database`] is copied from, migrated once.
const TEMPLATE: &str = "assetlib_template";

/// The environment variable that may name the directory of the server binaries.
const BIN_ENV: &str = "ASSETLIB_PG_BIN";

/// What to do when no server binaries are found.
const INSTALL_HINT: &str = "PostgreSQL server binaries (initdb, pg_ctl, postgres) were not \
     found on PATH nor in /usr/lib/postgresql/*/bin: install them, e.g. `apt-get install \
     postgresql` on Debian or Ubuntu, or run `cargo xtask setup`, or set ASSETLIB_PG_BIN to the \
     directory holding them";

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
        let bin = find_bin().unwrap_or_else(|| panic!("{INSTALL_HINT}"));
        let as_postgres = running_as_root();
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
                let store = crate::PgStore::connect_with(
                    &self.url(TEMPLATE),
                    crate::PgConfig::default().pool_size(1),
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

    fn start_server(&mut self) {
        let log = self.dir.join("server.log");
        let mut last_error = String::new();
        for _ in 0..5 {
            let port = free_port();
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
                    let removed = self.temp.as_ref().map(|t| t.path());
                    self.watchdog = Some(spawn_watchdog(&self.data, removed, pid));
                    wait_until_ready(&self.url("postgres"));
                    return;
                }
                Some(pid) => stop_pid(pid),
                None => {}
            }
            last_error = std::fs::read_to_string(&log).unwrap_or_default();
        }
        panic!("cannot start PostgreSQL; its log:\n{last_error}");
    }

    fn stop(&mut self) {
        if let Some(mut w) = self.watchdog.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
        if self.pid != 0 {
            stop_pid(self.pid);
            self.pid = 0;
        }
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
    /// Its URL, for [`crate::PgStore::connect`].
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
        // Drop may run inside a runtime, which cannot block on another: use a thread.
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async {
                let (client, conn) = tokio_postgres::connect(&url, NoTls)
                    .await
                    .map_err(|e| e.to_string())?;
                let conn = tokio::spawn(conn);
                let result = client.batch_execute(&sql).await.map_err(|e| e.to_string());
                drop(client);
                let _ = conn.await;
                result
            })
        })
        .join();
        match dropped {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("cannot drop test database {}: {e}", self.name),
            Err(_) => eprintln!(
                "cannot drop test database {}: the thread panicked",
                self.name
            ),
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

/// The directory of `initdb`, `pg_ctl` and `postgres`.
fn find_bin() -> Option<PathBuf> {
    let has_all = |dir: &Path| {
        ["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|b| dir.join(b).is_file())
    };
    if let Some(dir) = std::env::var_os(BIN_ENV).map(PathBuf::from) {
        return has_all(&dir).then_some(dir);
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path).find_map(|dir| {
            // Symlinks (as Debian's /usr/local/bin ones) lead to the real directory, where
            // pg_ctl finds its postgres.
            let initdb = std::fs::canonicalize(dir.join("initdb")).ok()?;
            let real = initdb.parent()?.to_owned();
            has_all(&real).then_some(real)
        })
    });
    if on_path.is_some() {
        return on_path;
    }
    let mut versions: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name
                .split('.')
                .map(str::parse)
                .collect::<Result<Vec<u64>, _>>()
                .ok()?;
            let bin = e.path().join("bin");
            has_all(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// Whether this process runs as root (whose effective uid owns `/proc/self`).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match std::fs::metadata("/proc/self") {
        Ok(m) => m.uid() == 0,
        Err(_) => Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0"),
    }
}

fn run(cmd: &mut Command, what: &str) {
    match cmd.output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!("cannot {what}: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => panic!("cannot {what}: {e}"),
    }
}

/// A port that was free on 127.0.0.1 a moment ago.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("cannot find a free port on 127.0.0.1: {e}"))
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

fn signal(pid: u32, sig: &str) -> bool {
    Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Stops the postmaster `pid` with a fast shutdown (`SIGINT`), and kills it if it is still
/// there after 10 s; returns once it is gone.
fn stop_pid(pid: u32) {
    if !signal(pid, "INT") {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while signal(pid, "0") {
        if Instant::now() > deadline {
            signal(pid, "KILL");
            std::thread::sleep(Duration::from_millis(100));
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts the watchdog: a shell, in a process group of its own (so a Ctrl-C to the tests does
/// not stop it before it cleans up), that waits for this process to exit, then stops the
/// postmaster and removes the cluster's directory.
fn spawn_watchdog(data: &Path, removed: Option<&Path>, postmaster: u32) -> Child {
    const SCRIPT: &str = r#"
        parent=$1; pm=$2; data=$3; root=$4
        while kill -0 "$parent" 2>/dev/null; do sleep 0.2; done
        if [ "$(head -n 1 "$data/postmaster.pid" 2>/dev/null)" = "$pm" ]; then
            kill -INT "$pm" 2>/dev/null
            i=0
            while kill -0 "$pm" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
            kill -KILL "$pm" 2>/dev/null
        fi
        [ -n "$root" ] && rm -rf "$root"
    "#;
    let child = Command::new("sh")
        .arg("-c")
        .arg(SCRIPT)
        .arg("assetlib-pg-watchdog")
        .arg(std::process::id().to_string())
        .arg(postmaster.to_string())
        .arg(data)
        .arg(removed.unwrap_or(Path::new("")))
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match child {
        Ok(c) => c,
        Err(e) => {
            stop_pid(postmaster);
            panic!("cannot start the test cluster's watchdog: {e}");
        }
    }
}

/// Waits until the server at `url` answers a query (at most 30 s).
fn wait_until_ready(url: &str) {
    let url = url.to_owned();
    let ready = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async {
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let error = match tokio_postgres::connect(&url, NoTls).await {
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
        })
    })
    .join();
    match ready {
        Ok(Ok(())) => {}
        Ok(Err(e)) => panic!("the test cluster does not accept connections: {e}"),
        Err(_) => panic!("the test cluster's readiness check panicked"),
    }
}
