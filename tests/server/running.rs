//! Running the ready server binaries: built once per run, each command run to its end, and
//! `serve` on a free port, stopped by its PID.

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The ready servers, each case runs against every one.
pub(crate) const SERVERS: [&str; 2] = ["server", "warp_server"];

/// The README's embedding examples, built with the ready servers.
pub(crate) const EMBEDDINGS: [&str; 2] = ["embed_axum", "embed_warp"];

/// A ready server binary, all of them built once per test run with the features of this
/// test binary.
pub(crate) fn server_binary(example: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let examples = BUILT.get_or_init(|| {
        let mut cargo = Command::new(env!("CARGO"));
        cargo.args(["build", "--quiet", "--workspace", "--all-features"]);
        for name in SERVERS.iter().chain(&EMBEDDINGS) {
            cargo.args(["--example", name]);
        }
        let status = cargo
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo");
        assert!(status.success(), "cargo build of the ready servers failed");
        // This test runs from target/<profile>/deps/; examples are built into
        // target/<profile>/examples/.
        let exe = std::env::current_exe().expect("test binary path");
        let profile_dir = exe.parent().and_then(Path::parent).expect("target dir");
        profile_dir.join("examples")
    });
    let binary = examples.join(format!("{example}{}", std::env::consts::EXE_SUFFIX));
    assert!(binary.exists(), "{} is missing", binary.display());
    binary
}

/// Runs a command of a server binary to its end.
pub(crate) fn run(example: &str, args: &[&str]) -> Output {
    run_with(example, args, &[])
}

/// Runs a command of a server binary to its end with `env` set.
pub(crate) fn run_with(example: &str, args: &[&str], env: &[(&str, String)]) -> Output {
    Command::new(server_binary(example))
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("RUST_LOG", "warn")
        .output()
        .expect("run the server binary")
}

/// A path as a command-line argument.
pub(crate) fn arg(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `keys create` and the key from the last line of its output.
pub(crate) fn create_key(example: &str, data: &Path, scopes: &str) -> String {
    let out = run(
        example,
        &[
            "keys",
            "create",
            "--scopes",
            scopes,
            "--name",
            "e2e",
            "--data",
            data.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "keys create failed: {}",
        text(&out.stderr)
    );
    let stdout = text(&out.stdout);
    let key = stdout.lines().last().expect("output").to_owned();
    assert!(
        key.starts_with("alk_") && key.len() == 47,
        "last line is not a key: {stdout:?}"
    );
    key
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running `serve`, killed if the test ends without stopping it.
pub(crate) struct Running {
    pub(crate) child: Child,
    pub(crate) base: String,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Running {
    pub(crate) async fn start(example: &str, data: &Path, logs: &Path, extra: &[&str]) -> Running {
        Self::start_with(example, data, logs, extra, &[]).await
    }

    /// [`Running::start`] with more environment variables (`AWS_*` for a bucket, say).
    pub(crate) async fn start_with(
        example: &str,
        data: &Path,
        logs: &Path,
        extra: &[&str],
        env: &[(&str, String)],
    ) -> Running {
        // A port found free may be taken by another test before the server binds it: the
        // server then says so and exits, and starts again on another port.
        let mut tries = 0;
        'start: loop {
            tries += 1;
            let port = free_port();
            let addr = format!("127.0.0.1:{port}");
            let n = std::fs::read_dir(logs).unwrap().count();
            let stdout = logs.join(format!("stdout-{n}"));
            let stderr = logs.join(format!("stderr-{n}"));
            let child = Command::new(server_binary(example))
                .args(["serve", "--data", data.to_str().unwrap(), "--addr", &addr])
                .args(extra)
                .envs(env.iter().map(|(k, v)| (k, v)))
                .env("RUST_LOG", "info")
                .stdout(Stdio::from(File::create(&stdout).unwrap()))
                .stderr(Stdio::from(File::create(&stderr).unwrap()))
                .spawn()
                .expect("start the server");
            let mut running = Running {
                child,
                base: format!("http://{addr}"),
                stdout,
                stderr,
            };
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                if reqwest::get(format!("{}/api/v1", running.base))
                    .await
                    .is_ok()
                {
                    return running;
                }
                if let Some(status) = running.child.try_wait().unwrap() {
                    if tries < 3 && running.stderr().contains("Address already in use") {
                        continue 'start;
                    }
                    panic!("server exited ({status}): {}", running.stderr());
                }
                assert!(
                    Instant::now() < deadline,
                    "server did not start: {}",
                    running.stderr()
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }

    pub(crate) fn stdout(&self) -> String {
        std::fs::read_to_string(&self.stdout).unwrap()
    }

    pub(crate) fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    pub(crate) async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut r = reqwest::Client::new()
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(key);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let r = r.send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub(crate) async fn get(&self, path: &str, key: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, path, key, None).await
    }

    /// Sends SIGTERM and waits for a clean exit.
    pub(crate) async fn terminate(mut self) -> String {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let exit = loop {
            if let Some(exit) = self.child.try_wait().unwrap() {
                break exit;
            }
            assert!(Instant::now() < deadline, "no exit after SIGTERM");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let stderr = self.stderr();
        assert!(exit.success(), "exit after SIGTERM: {exit}: {stderr}");
        assert!(stderr.contains("SIGTERM: shutting down"), "{stderr}");
        stderr
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // The server's own account of what went wrong, with the test's failure.
            let log = std::fs::read_to_string(&self.stderr).unwrap_or_default();
            let said: Vec<&str> = log
                .lines()
                .filter(|l| l.contains("ERROR") || l.contains("WARN"))
                .collect();
            let from = said.len().saturating_sub(40);
            eprintln!(
                "{}: the server's last warnings and errors:\n{}",
                self.base,
                said[from..].join("\n")
            );
        }
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Starts the axum ready server's binary with `args` (and `env`) in the background, its
/// output dropped.
pub(crate) fn spawn(args: &[&str], env: &[(&str, String)]) -> std::process::Child {
    Command::new(server_binary("server"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start")
}

/// Kills `child` with SIGKILL once `ready` says so; panics when it ends first.
pub(crate) fn kill_when(
    mut child: std::process::Child,
    what: &str,
    mut ready: impl FnMut() -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !ready() {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "{what} ended before it was killed"
        );
        assert!(
            Instant::now() < deadline,
            "{what} made no progress in 120 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    child.wait().expect("reap");
}
