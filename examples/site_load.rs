//! The realistic site run's client (`benches/site.sh`): makes a site's data through the API,
//! fetches every URL the run reads for the baseline, and drives the mixed load.
//!
//! ```text
//! site_load seed  --url http://127.0.0.1:8080 --key KEY --state site.json --images DIR
//! site_load crawl --url http://127.0.0.1:8080 --key KEY --state site.json --out bodies.bin
//! site_load run   --url http://127.0.0.1:8080 [--url ...] --key KEY --state site.json
//! ```
//!
//! - `seed`: 2,000 libraries of 20-200 assets (a long tail: most are small), 100,000 assets
//!   in all, 5% of the libraries paid; 200 of the assets are images (PNGs it draws into
//!   `--images`, a directory of the server's file store, and creates with `file_path`). The
//!   libraries hold 112k entries over the 100k assets, so some assets are in two. Writes
//!   what the run needs to `--state`.
//! - `crawl`: every URL `run` reads (each library by id and by slug with its assets, each
//!   asset, the list pages, two image presets of each image), as `bodies.bin` for
//!   `bench_baseline --site`, which answers each from memory.
//! - `run`: `--connections` (64) connections, spread round-robin over the `--url`s, for
//!   `--duration` seconds. Each request is, by chance: a library detail with its assets
//!   (45% by id, 15% by slug; the library drawn by Zipf, s = 1.1, over the 2,000), one
//!   asset (20%, Zipf over the 100k), a list page (12%: one of 130 combinations of type
//!   filter, tag, sort, order and page), an image preset (6%, Zipf over the images), or a
//!   write (2%: three in four a PATCH of a library's asset's title, one in four a PUT of a
//!   library with its description changed, its sections sent back with their ids). Prints
//!   one JSON line: requests, req/s, p50 and p99 in ms (of all, and of each kind of request),
//!   writes, and every status that is not 2xx or 304.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use clap::{Parser, Subcommand};
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Debug, Parser)]
#[command(about = "The realistic site run's client")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Makes the site's assets and libraries.
    Seed {
        #[arg(long)]
        url: String,
        #[arg(long)]
        key: String,
        #[arg(long)]
        state: PathBuf,
        /// A directory of the server's file store the images are drawn into.
        #[arg(long)]
        images: PathBuf,
        #[arg(long, default_value_t = 2000)]
        libraries: usize,
        #[arg(long, default_value_t = 100_000)]
        assets: usize,
    },
    /// Fetches every URL the run reads, for the baseline.
    Crawl {
        #[arg(long)]
        url: String,
        #[arg(long)]
        key: String,
        #[arg(long)]
        state: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
    /// Drives the mixed load.
    Run {
        /// One or more servers; connections go to them in turn.
        #[arg(long, required = true)]
        url: Vec<String>,
        #[arg(long)]
        key: String,
        #[arg(long)]
        state: PathBuf,
        #[arg(long, default_value_t = 64)]
        connections: usize,
        #[arg(long, default_value_t = 30)]
        duration: u64,
        /// Seed of the requests' random choices.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

/// What `seed` made and `crawl` and `run` use.
#[derive(Debug, Serialize, Deserialize)]
struct State {
    libraries: Vec<Lib>,
    assets: Vec<String>,
    images: Vec<String>,
    lists: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Lib {
    id: String,
    slug: String,
    /// The PUT body that made it.
    doc: Value,
    /// Its assets.
    assets: Vec<String>,
}

/// The two image presets the run reads.
const PRESETS: [&str; 2] = ["thumb", "card"];
/// Tags the assets carry (one or two each) and lists filter by.
const TAGS: usize = 20;

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Zipf's law over `n` ranks with exponent `s`: rank k (0-based) is drawn with weight
/// 1 / (k + 1)^s, from the cumulative weights by binary search.
struct Zipf(Vec<f64>);

impl Zipf {
    fn new(n: usize, s: f64) -> Self {
        let mut total = 0.0;
        let cdf = (1..=n)
            .map(|k| {
                total += 1.0 / (k as f64).powf(s);
                total
            })
            .collect::<Vec<_>>();
        Zipf(cdf.into_iter().map(|c| c / total).collect())
    }

    fn draw(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.0.partition_point(|c| *c < u).min(self.0.len() - 1)
    }
}

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    send: SendRequest<Full<Bytes>>,
    host: String,
    auth: String,
}

impl Conn {
    async fn open(url: &str, key: &str) -> Result<Conn, String> {
        let host = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url}: only http:// URLs"))?
            .trim_end_matches('/')
            .to_owned();
        let stream = tokio::net::TcpStream::connect(&host)
            .await
            .map_err(|e| format!("connect {host}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (send, conn) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake {host}: {e}"))?;
        tokio::spawn(conn);
        Ok(Conn {
            send,
            host,
            auth: format!("Bearer {key}"),
        })
    }

    async fn call(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Bytes>,
    ) -> Result<(u16, Bytes), String> {
        self.send.ready().await.map_err(|e| e.to_string())?;
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header("host", &self.host)
            .header("authorization", &self.auth);
        if body.is_some() {
            req = req.header("content-type", "application/json");
        }
        let req = req
            .body(Full::new(body.unwrap_or_default()))
            .map_err(|e| e.to_string())?;
        let res = self
            .send
            .send_request(req)
            .await
            .map_err(|e| format!("{method} {path}: {e}"))?;
        let status = res.status().as_u16();
        let body = res
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("{method} {path}: {e}"))?
            .to_bytes();
        Ok((status, body))
    }

    async fn json(&mut self, method: &str, path: &str, body: &Value) -> Result<Value, String> {
        let (status, bytes) = self
            .call(method, path, Some(Bytes::from(body.to_string())))
            .await?;
        if status >= 300 {
            return Err(format!(
                "{method} {path}: {status} {}",
                String::from_utf8_lossy(&bytes)
            ));
        }
        serde_json::from_slice(&bytes).map_err(|e| format!("{method} {path}: {e}"))
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let result = match args.command {
        Command::Seed {
            url,
            key,
            state,
            images,
            libraries,
            assets,
        } => seed(&url, &key, &state, &images, libraries, assets).await,
        Command::Crawl {
            url,
            key,
            state,
            out,
        } => crawl(&url, &key, &state, &out).await,
        Command::Run {
            url,
            key,
            state,
            connections,
            duration,
            seed,
        } => run(&url, &key, &state, connections, duration, seed).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("site_load: {e}");
            ExitCode::FAILURE
        }
    }
}

fn read_state(path: &Path) -> Result<State, String> {
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs `jobs` over `workers` connections to `url`, each job's result in its place.
async fn parallel<T, F, Fut>(
    url: &str,
    key: &str,
    workers: usize,
    jobs: Vec<T>,
    f: F,
) -> Result<Vec<Value>, String>
where
    T: Send + 'static,
    F: Fn(Conn, T) -> Fut + Send + Sync + Copy + 'static,
    Fut: std::future::Future<Output = (Conn, Result<Value, String>)> + Send,
{
    let total = jobs.len();
    let queue = Arc::new(std::sync::Mutex::new(
        jobs.into_iter().enumerate().collect::<Vec<_>>(),
    ));
    let mut tasks = Vec::new();
    for _ in 0..workers {
        let queue = Arc::clone(&queue);
        let mut conn = Conn::open(url, key).await?;
        tasks.push(tokio::spawn(async move {
            let mut done = Vec::new();
            loop {
                let job = queue.lock().map(|mut q| q.pop()).ok().flatten();
                let Some((i, job)) = job else { break };
                let (back, result) = f(conn, job).await;
                conn = back;
                done.push((i, result?));
            }
            Ok::<_, String>(done)
        }));
    }
    let mut out = vec![Value::Null; total];
    for task in tasks {
        for (i, value) in task.await.map_err(|e| e.to_string())?? {
            out[i] = value;
        }
    }
    Ok(out)
}

async fn seed(
    url: &str,
    key: &str,
    state: &Path,
    images: &Path,
    libraries: usize,
    assets: usize,
) -> Result<(), String> {
    let started = Instant::now();
    let mut rng = Rng(0x517e);
    // Images: 200 PNGs of 800x600 (a gradient each its own), made with file_path.
    let image_dir = images.join("site");
    std::fs::create_dir_all(&image_dir).map_err(|e| e.to_string())?;
    let image_count = 200.min(assets);
    for i in 0..image_count {
        let img = image::RgbImage::from_fn(800, 600, |x, y| {
            image::Rgb([
                (x * 255 / 800) as u8,
                (y * 255 / 600) as u8,
                (i * 37 % 256) as u8,
            ])
        });
        img.save(image_dir.join(format!("img-{i}.png")))
            .map_err(|e| format!("image {i}: {e}"))?;
    }
    let types = ["pdf", "document", "video", "audio", "pdf"];
    let bodies: Vec<Value> = (0..assets)
        .map(|i| {
            let tags: Vec<String> = (0..1 + i % 2)
                .map(|k| format!("tag-{}", (i * 7 + k * 3) % TAGS))
                .collect();
            if i < image_count {
                json!({"title": format!("Photo {i}"), "asset_type": "image",
                       "file_path": format!("site/img-{i}.png"), "tags": tags})
            } else {
                json!({"title": format!("Asset {i} of the collection"),
                       "asset_type": types[i % types.len()],
                       "description": format!("Files and notes, part {i}"), "tags": tags})
            }
        })
        .collect();
    let made = parallel(url, key, 32, bodies, |mut conn, body| async move {
        let result = conn.json("POST", "/api/v1/assets", &body).await;
        (conn, result)
    })
    .await?;
    let ids: Vec<String> = made
        .iter()
        .map(|v| v["data"]["id"].as_str().unwrap_or_default().to_owned())
        .collect();
    eprintln!(
        "site_load: {} assets in {:.1} s",
        ids.len(),
        started.elapsed().as_secs_f64()
    );
    // Libraries: 20 + 180 u^4 assets each (mean 56), a few sections each, taken in turn from
    // the assets (wrapping round: 112k entries over 100k assets).
    let mut next = 0usize;
    let mut libs = Vec::with_capacity(libraries);
    for l in 0..libraries {
        let size = 20 + (180.0 * rng.unit().powi(4)) as usize;
        let members: Vec<String> = (0..size)
            .map(|k| ids[(next + k) % ids.len()].clone())
            .collect();
        next += size;
        let sections = 1 + size / 40;
        let per = size.div_ceil(sections);
        let doc = json!({
            "title": format!("Collection {l}"),
            "description": format!("Everything in collection {l}"),
            "published": true,
            "is_paid": l % 20 == 0,
            "price": if l % 20 == 0 { json!(19.0) } else { Value::Null },
            "currency": "EUR",
            "sections": members.chunks(per).enumerate().map(|(s, chunk)| json!({
                "title": format!("Part {s}"),
                "assets": chunk.iter().map(|id| json!({"asset_id": id})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "unsectioned_assets": [],
        });
        let id = uuid::Uuid::from_u128(0x5173_0000_0000 + l as u128).to_string();
        libs.push(Lib {
            id,
            slug: String::new(),
            doc,
            assets: members,
        });
    }
    let jobs: Vec<(String, Value)> = libs.iter().map(|l| (l.id.clone(), l.doc.clone())).collect();
    let put = parallel(url, key, 16, jobs, |mut conn, (id, doc)| async move {
        let result = conn
            .json("PUT", &format!("/api/v1/libraries/{id}"), &doc)
            .await;
        (conn, result)
    })
    .await?;
    for (lib, detail) in libs.iter_mut().zip(&put) {
        lib.slug = detail["slug"].as_str().unwrap_or_default().to_owned();
        // The run's PUTs send the sections back with the ids they were given, as an editor
        // that read the library does (a section without an id is a new section).
        let given = detail["sections"].as_array().cloned().unwrap_or_default();
        if let Some(sections) = lib.doc["sections"].as_array_mut() {
            for (section, stored) in sections.iter_mut().zip(&given) {
                section["id"] = stored["id"].clone();
            }
        }
    }
    let mut lists = Vec::new();
    for t in [
        "",
        "&asset_type=pdf",
        "&asset_type=document",
        "&asset_type=image",
    ] {
        for sort in ["created_at", "updated_at", "title"] {
            for order in ["desc", "asc"] {
                for page in 1..=5 {
                    lists.push(format!(
                        "/api/v1/assets?sort={sort}&order={order}&page={page}{t}"
                    ));
                }
            }
        }
    }
    for tag in 0..TAGS / 2 {
        lists.push(format!("/api/v1/assets?tags=tag-{tag}"));
    }
    let state_value = State {
        images: ids[..image_count].to_vec(),
        assets: ids,
        libraries: libs,
        lists,
    };
    let text = serde_json::to_vec(&state_value).map_err(|e| e.to_string())?;
    std::fs::write(state, text).map_err(|e| format!("{}: {e}", state.display()))?;
    eprintln!(
        "site_load: seeded {} libraries, {} assets in {:.1} s",
        state_value.libraries.len(),
        state_value.assets.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Every URL the run reads.
fn read_urls(state: &State) -> Vec<String> {
    let mut urls = Vec::new();
    for lib in &state.libraries {
        urls.push(format!("/api/v1/libraries/{}?include_assets=true", lib.id));
        urls.push(format!(
            "/api/v1/libraries/slug/{}?include_assets=true",
            lib.slug
        ));
    }
    urls.extend(state.assets.iter().map(|id| format!("/api/v1/assets/{id}")));
    urls.extend(state.lists.iter().cloned());
    for id in &state.images {
        for preset in PRESETS {
            urls.push(format!("/api/v1/assets/{id}/image?preset={preset}"));
        }
    }
    urls
}

async fn crawl(url: &str, key: &str, state: &Path, out: &Path) -> Result<(), String> {
    let state = read_state(state)?;
    let urls = read_urls(&state);
    let bodies = parallel(url, key, 16, urls.clone(), |mut conn, path| async move {
        let result = match conn.call("GET", &path, None).await {
            Ok((200, body)) => Ok(Value::String(hex(&body))),
            Ok((status, body)) => Err(format!(
                "GET {path}: {status} {}",
                String::from_utf8_lossy(&body)
            )),
            Err(e) => Err(e),
        };
        (conn, result)
    })
    .await?;
    // bodies.bin: per URL, its length-prefixed path, then its length-prefixed body.
    let mut file = Vec::new();
    for (path, body) in urls.iter().zip(&bodies) {
        let body = unhex(body.as_str().unwrap_or_default());
        file.extend_from_slice(&(path.len() as u32).to_le_bytes());
        file.extend_from_slice(path.as_bytes());
        file.extend_from_slice(&(body.len() as u32).to_le_bytes());
        file.extend_from_slice(&body);
    }
    std::fs::write(out, &file).map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!(
        "site_load: {} URLs, {} MB",
        urls.len(),
        file.len() / 1_000_000
    );
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .filter_map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok())
        .collect()
}

/// The kinds of request of a run, in the order of [`Tally::by_kind`].
const KINDS: [&str; 7] = [
    "detail",
    "detail_slug",
    "asset",
    "list",
    "image",
    "patch",
    "put",
];

/// `latencies` (sorted) at quantile `q`, in ms rounded to 0.01.
fn quantile_ms(latencies: &[u32], q: f64) -> f64 {
    let n = latencies.len();
    if n == 0 {
        return 0.0;
    }
    let us = f64::from(latencies[((n as f64 * q) as usize).min(n - 1)]);
    (us / 10.0).round() / 100.0
}

/// What one connection saw.
#[derive(Default)]
struct Tally {
    latencies_us: Vec<u32>,
    /// The latencies again, by kind of request ([`KINDS`]).
    by_kind: [Vec<u32>; KINDS.len()],
    writes: u64,
    statuses: BTreeMap<u16, u64>,
    errors: u64,
}

async fn run(
    urls: &[String],
    key: &str,
    state: &Path,
    connections: usize,
    duration: u64,
    seed: u64,
) -> Result<(), String> {
    let state = Arc::new(read_state(state)?);
    let library_zipf = Arc::new(Zipf::new(state.libraries.len(), 1.1));
    let asset_zipf = Arc::new(Zipf::new(state.assets.len(), 1.1));
    let image_zipf = Arc::new(Zipf::new(state.images.len().max(1), 1.1));
    let deadline = Instant::now() + Duration::from_secs(duration);
    let mut tasks = Vec::new();
    for c in 0..connections {
        let mut conn = Conn::open(&urls[c % urls.len()], key).await?;
        let (state, library_zipf, asset_zipf, image_zipf) = (
            Arc::clone(&state),
            Arc::clone(&library_zipf),
            Arc::clone(&asset_zipf),
            Arc::clone(&image_zipf),
        );
        tasks.push(tokio::spawn(async move {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9) ^ ((c as u64 + 1) * 0x1234_5678));
            let mut tally = Tally::default();
            let mut flip = false;
            while Instant::now() < deadline {
                let roll = rng.below(1000);
                let (kind, (method, path, body)) = if roll < 450 {
                    let lib = &state.libraries[library_zipf.draw(&mut rng)];
                    let path = format!("/api/v1/libraries/{}?include_assets=true", lib.id);
                    (0, ("GET", path, None))
                } else if roll < 600 {
                    let lib = &state.libraries[library_zipf.draw(&mut rng)];
                    let path = format!("/api/v1/libraries/slug/{}?include_assets=true", lib.slug);
                    (1, ("GET", path, None))
                } else if roll < 800 {
                    let id = &state.assets[asset_zipf.draw(&mut rng)];
                    (2, ("GET", format!("/api/v1/assets/{id}"), None))
                } else if roll < 920 {
                    let path = state.lists[rng.below(state.lists.len())].clone();
                    (3, ("GET", path, None))
                } else if roll < 980 {
                    let id = &state.images[image_zipf.draw(&mut rng)];
                    let preset = PRESETS[rng.below(PRESETS.len())];
                    let path = format!("/api/v1/assets/{id}/image?preset={preset}");
                    (4, ("GET", path, None))
                } else {
                    tally.writes += 1;
                    flip = !flip;
                    let lib = &state.libraries[library_zipf.draw(&mut rng)];
                    if roll < 995 {
                        let id = &lib.assets[rng.below(lib.assets.len())];
                        let title = if flip { "Edited title" } else { "Edited again" };
                        let body = json!({ "title": title }).to_string();
                        let path = format!("/api/v1/assets/{id}");
                        (5, ("PATCH", path, Some(Bytes::from(body))))
                    } else {
                        let mut doc = lib.doc.clone();
                        doc["description"] = json!(if flip { "Changed" } else { "Changed again" });
                        let body = Bytes::from(doc.to_string());
                        let path = format!("/api/v1/libraries/{}", lib.id);
                        (6, ("PUT", path, Some(body)))
                    }
                };
                let start = Instant::now();
                match conn.call(method, &path, body).await {
                    Ok((status, _)) => {
                        let us = start.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
                        tally.latencies_us.push(us);
                        tally.by_kind[kind].push(us);
                        if !(200..300).contains(&status) && status != 304 {
                            *tally.statuses.entry(status).or_default() += 1;
                        }
                    }
                    Err(_) => {
                        tally.errors += 1;
                        break;
                    }
                }
            }
            tally
        }));
    }
    let started = Instant::now();
    let mut all = Tally::default();
    for task in tasks {
        let tally = task.await.map_err(|e| e.to_string())?;
        all.latencies_us.extend(tally.latencies_us);
        for (all, one) in all.by_kind.iter_mut().zip(tally.by_kind) {
            all.extend(one);
        }
        all.writes += tally.writes;
        all.errors += tally.errors;
        for (status, n) in tally.statuses {
            *all.statuses.entry(status).or_default() += n;
        }
    }
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    all.latencies_us.sort_unstable();
    let mut by_kind = serde_json::Map::new();
    for (kind, latencies) in KINDS.iter().zip(&mut all.by_kind) {
        latencies.sort_unstable();
        by_kind.insert(
            (*kind).to_owned(),
            json!([quantile_ms(latencies, 0.50), quantile_ms(latencies, 0.99)]),
        );
    }
    let requests = all.latencies_us.len();
    let line = json!({
        "requests": requests,
        "rps": (requests as f64 / seconds).round(),
        "p50_ms": quantile_ms(&all.latencies_us, 0.50),
        "p99_ms": quantile_ms(&all.latencies_us, 0.99),
        "by_kind_p50_p99_ms": by_kind,
        "writes": all.writes,
        "bad_statuses": all.statuses,
        "connection_errors": all.errors,
    });
    println!("{line}");
    Ok(())
}
