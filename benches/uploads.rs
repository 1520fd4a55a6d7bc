//! Resumable uploads against the single-request upload, over loopback, on local files and on
//! S3 (SeaweedFS), with the official tus clients side by side; and the API's memory per
//! upload.
//!
//! ```text
//! cargo bench --bench uploads --features s3
//! ```
//!
//! The API runs in this process (the axum adapter, sled records, files in a directory or in a
//! bucket of a SeaweedFS server the bench starts on 127.0.0.1), on a runtime of two workers;
//! every client is a process of its own, so this process's memory is the API's. For each file
//! store, `ROUNDS` rounds (default 3), the clients in turn within a round, each uploads the same
//! `SIZE_MIB` MiB video (default 1024):
//! - `single`: `POST /api/v1/assets/upload`, one multipart request (curl);
//! - `tus`: `POST /api/v1/uploads` then one `PATCH` of the whole file (curl);
//! - `tuspy`: PyPI's `tuspy`, `PATCH`es of 64 MiB;
//! - `tus-js`: npm's `tus-js-client` in Node.js, `PATCH`es of 64 MiB.
//!
//! It prints each client's median MB/s and its median share of `single` (the ratio is taken in
//! each round, then the median of the rounds), the rise of this process's anonymous resident memory
//! (sampled every 5 ms) over what it was before the upload, and the median CPU seconds the API
//! (this process) and the client spent on one upload. Then `CONCURRENT` (default 8)
//! uploads of 128 MiB through tus at once: the rise divided by their number is the memory one
//! upload holds. Every asset is deleted after its round; every process started is stopped by
//! its PID.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use assetlib::sled::SledStore;
use assetlib::{Config, Files, Scope, Service};
use assetlib_testkit::media::write_big_video;
use assetlib_testkit::s3::S3Server;
use assetlib_testkit::tools::{NODE, TUS_JS_CLIENT, TUSPY};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// Makes the file store of a run, in its directory.
type MakeFiles<'a> = Box<dyn Fn(&Path) -> Files + 'a>;

/// One of the uploading clients.
#[derive(Clone, Copy, PartialEq)]
enum Client {
    Single,
    Tus,
    Tuspy,
    TusJs,
}

const CLIENTS: [Client; 4] = [Client::Single, Client::Tus, Client::Tuspy, Client::TusJs];

impl Client {
    fn name(self) -> &'static str {
        match self {
            Client::Single => "single",
            Client::Tus => "tus",
            Client::Tuspy => "tuspy",
            Client::TusJs => "tus-js",
        }
    }
}

/// The API on 127.0.0.1, served from a runtime of its own.
struct Api {
    base: String,
    key: String,
    _runtime: tokio::runtime::Runtime,
}

impl Api {
    fn start(dir: &Path, files: impl FnOnce() -> Files) -> Api {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let store = SledStore::open(dir.join("db")).expect("sled");
        let mut config = Config::default();
        // Room for the single-request upload of the whole file.
        config.max_upload = 4 << 30;
        let files = files();
        let (base, key) = runtime.block_on(async {
            let service = Service::new(store, files, config);
            let (_, key) = service
                .create_key("bench", Scope::ALL.to_vec(), None)
                .await
                .expect("key");
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let base = format!("http://{}", listener.local_addr().expect("address"));
            let app = assetlib::axum::router(service);
            tokio::spawn(async move { axum::serve(listener, app).await });
            (base, key)
        });
        Api {
            base,
            key,
            _runtime: runtime,
        }
    }

    fn auth(&self) -> String {
        format!("Authorization: Bearer {}", self.key)
    }

    /// Uploads `file` with `client`; answers the seconds it took.
    fn upload(&self, client: Client, file: &Path, title: &str) -> f64 {
        let start = Instant::now();
        match client {
            Client::Single => {
                let status = run(Command::new("curl").args([
                    "-sS",
                    "-o",
                    "/dev/null",
                    "-w",
                    "%{http_code}",
                    "-H",
                    "Expect:",
                    "-H",
                    &self.auth(),
                    "-F",
                    &format!("file=@{};type=video/mp4", file.display()),
                    "-F",
                    &format!("title={title}"),
                    &format!("{}/api/v1/assets/upload", self.base),
                ]));
                assert_eq!(status.trim(), "201", "the single upload");
            }
            Client::Tus => self.tus_with_curl(file, title),
            Client::Tuspy => {
                run(Command::new(TUSPY.require())
                    .arg(clients().join("tuspy_upload.py"))
                    .args([
                        &format!("{}/api/v1/uploads", self.base),
                        &self.key,
                        path_str(file),
                        title,
                    ]));
            }
            Client::TusJs => {
                run(Command::new(NODE.require())
                    .arg(clients().join("tus_js_upload.cjs"))
                    .args([
                        path_str(&TUS_JS_CLIENT.require()),
                        &format!("{}/api/v1/uploads", self.base),
                        &self.key,
                        path_str(file),
                        title,
                    ]));
            }
        }
        start.elapsed().as_secs_f64()
    }

    /// A tus upload by curl: the creation, then the whole file in one `PATCH`.
    fn tus_with_curl(&self, file: &Path, title: &str) {
        let size = std::fs::metadata(file).expect("file").len();
        let name = file.file_name().and_then(|n| n.to_str()).expect("a name");
        let metadata = format!(
            "filename {},title {}",
            STANDARD.encode(name),
            STANDARD.encode(title)
        );
        let head = run(Command::new("curl").args([
            "-sS",
            "-o",
            "/dev/null",
            "-D",
            "-",
            "-X",
            "POST",
            "-H",
            &self.auth(),
            "-H",
            "Tus-Resumable: 1.0.0",
            "-H",
            &format!("Upload-Length: {size}"),
            "-H",
            &format!("Upload-Metadata: {metadata}"),
            &format!("{}/api/v1/uploads", self.base),
        ]));
        let location = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("location")
                    .then(|| value.trim().to_owned())
            })
            .unwrap_or_else(|| panic!("no Location in {head}"));
        let url = if location.starts_with("http") {
            location
        } else {
            format!("{}{location}", self.base)
        };
        let status = run(Command::new("curl").args([
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-X",
            "PATCH",
            "-H",
            "Expect:",
            "-H",
            &self.auth(),
            "-H",
            "Tus-Resumable: 1.0.0",
            "-H",
            "Upload-Offset: 0",
            "-H",
            "Content-Type: application/offset+octet-stream",
            "-T",
            path_str(file),
            &url,
        ]));
        assert_eq!(status.trim(), "204", "the PATCH of {url}");
    }

    /// Deletes every asset, with their files.
    fn delete_all(&self) {
        loop {
            let page = run(Command::new("curl").args([
                "-sS",
                "-H",
                &self.auth(),
                &format!("{}/api/v1/assets?per_page=100", self.base),
            ]));
            let page: serde_json::Value = serde_json::from_str(&page).expect("a list");
            let ids: Vec<String> = page["data"]
                .as_array()
                .expect("data")
                .iter()
                .filter_map(|a| a["id"].as_str().map(str::to_owned))
                .collect();
            if ids.is_empty() {
                return;
            }
            for id in ids {
                run(Command::new("curl").args([
                    "-sS",
                    "-X",
                    "DELETE",
                    "-H",
                    &self.auth(),
                    &format!("{}/api/v1/assets/{id}?force=true", self.base),
                ]));
            }
        }
    }
}

/// Runs `command` to its end; answers its standard output, or panics with both outputs.
fn run(command: &mut Command) -> String {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e} (is it installed?)"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// The official clients' scripts, shared with the tests.
fn clients() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/server/clients")
}

/// This process's resident anonymous memory (its heap and stacks; not the files it maps), in
/// bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmRSS")
        * 1024
}

/// The highest resident memory while `work` runs, sampled every 5 ms, over what it was before.
fn rise<T>(work: impl FnOnce() -> T) -> (T, u64) {
    let before = rss();
    let (stop, peak) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(before)),
    );
    let sampler = {
        let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                peak.fetch_max(rss(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let out = work();
    stop.store(true, Ordering::Relaxed);
    sampler.join().expect("sampler");
    (out, peak.load(Ordering::Relaxed).saturating_sub(before))
}

/// CPU seconds (user and system) of this process and of its children waited for, from
/// `/proc/self/stat`.
fn cpu() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command's name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').expect("a stat line").1;
    let field = |n: usize| -> f64 {
        rest.split_whitespace()
            .nth(n - 3)
            .and_then(|v| v.parse::<f64>().ok())
            .expect("a number")
            / 100.0
    };
    (field(14) + field(15), field(16) + field(17))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter of its own is not taken.
    let rounds = env_number("ROUNDS", 3).max(1);
    let size = env_number("SIZE_MIB", 1024) << 20;
    let concurrent = env_number("CONCURRENT", 8).max(1);
    let work = tempfile::tempdir().expect("dir");
    let video = work.path().join("film.mp4");
    write_big_video(&video, size, 0xf11e, |_| {});
    let small = work.path().join("clip.mp4");
    write_big_video(&small, 128 << 20, 0xc119, |_| {});
    println!(
        "uploads of {} MiB, {rounds} rounds; {concurrent} at once of 128 MiB",
        size >> 20
    );

    let s3 = S3Server::start();
    let stores: [(&str, MakeFiles); 2] = [
        (
            "local",
            Box::new(|dir: &Path| Files::local(dir.join("files")).expect("files")),
        ),
        (
            "s3",
            Box::new(|_: &Path| {
                let bucket = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime")
                    .block_on(s3.bucket());
                Files::s3_with(bucket.builder(), &bucket.url()).expect("bucket")
            }),
        ),
    ];
    for (name, files) in &stores {
        let dir = tempfile::tempdir_in(work.path()).expect("dir");
        let api = Api::start(dir.path(), || files(dir.path()));
        let mut seconds: Vec<Vec<f64>> = vec![Vec::new(); CLIENTS.len()];
        let mut memory: Vec<u64> = vec![0; CLIENTS.len()];
        let mut api_cpu: Vec<Vec<f64>> = vec![Vec::new(); CLIENTS.len()];
        let mut client_cpu: Vec<Vec<f64>> = vec![Vec::new(); CLIENTS.len()];
        for round in 0..rounds {
            for (n, client) in CLIENTS.iter().enumerate() {
                let (own, children) = cpu();
                let (took, grew) = rise(|| api.upload(*client, &video, &format!("Film {round}")));
                let (own_after, children_after) = cpu();
                seconds[n].push(took);
                api_cpu[n].push(own_after - own);
                client_cpu[n].push(children_after - children);
                memory[n] = memory[n].max(grew);
                api.delete_all();
            }
        }
        println!(
            "\n{name}: client    MB/s   share of single   RSS rise (MiB)   API CPU s   client CPU s"
        );
        for (n, client) in CLIENTS.iter().enumerate() {
            let speed = median(seconds[n].iter().map(|s| size as f64 / 1e6 / s).collect());
            let share = median(
                (0..rounds as usize)
                    .map(|r| seconds[0][r] / seconds[n][r])
                    .collect(),
            );
            println!(
                "{name}: {:<8} {speed:>7.1}   {share:>15.2}   {:>14.1}   {:>9.2}   {:>12.2}",
                client.name(),
                mib(memory[n]),
                median(api_cpu[n].clone()),
                median(client_cpu[n].clone()),
            );
        }
        let ((), grew) = rise(|| {
            std::thread::scope(|scope| {
                for n in 0..concurrent {
                    let (api, small) = (&api, &small);
                    scope.spawn(move || api.tus_with_curl(small, &format!("Clip {n}")));
                }
            });
        });
        api.delete_all();
        println!(
            "{name}: {concurrent} tus uploads at once: RSS rise {:.1} MiB, {:.2} MiB per upload \
             (target: one part, 5 MiB, + 1 MiB)",
            mib(grew),
            mib(grew) / concurrent as f64
        );
    }
}
