//! The cached read path in-process: [`Service::handle`] on the three reads of
//! `benches/load.sh` over sled with every cache on, against the floor of handing out the same
//! bytes from memory.
//!
//! ```text
//! cargo bench --bench reads --features sled
//! ```
//!
//! Data as in `load.sh`: 100 pdf assets and one published library of 5 sections x 20 of
//! them. For each read it measures:
//! - `detail`: `GET /api/v1/libraries/{id}?include_assets=true` (one view counted each time);
//! - `list`: `GET /api/v1/assets` (page 1 of 20);
//! - `asset`: `GET /api/v1/assets/{id}`;
//! - `{read}-cold`: the same read with every cache off (`detail_cache` and `page_cache`);
//! - `floor`: a [`Reply`] made from the same bytes kept in memory (what
//!   `examples/bench_baseline.rs` answers with), the cost no cache can go below.
//!
//! No socket and no HTTP framework is involved, so what is measured is core's and the store's
//! work per answer alone: the auth, the version and view count, the cache lookup, the copy of
//! the view count into the page, the headers. The load run (`load.sh`) says what share of the
//! wire that is; this says what each change of the path bought, without the load run's noise.
//! After the criterion groups it prints each read's time over the floor's from an interleaved
//! loop in the same process.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use assetlib::{Config, Files, Operation, RawRequest, Reply, RequestBody, Scope, Service, Store};
use bytes::Bytes;
use criterion::Criterion;
use serde_json::{Value, json};

/// One read: its operation, path ids and query.
struct Read {
    name: &'static str,
    op: Operation,
    id: String,
    query: Option<&'static str>,
}

struct World {
    service: Service,
    /// The same store and files with every cache off: the cold path.
    cold: Service,
    auth: Vec<u8>,
    reads: Vec<Read>,
    _dir: tempfile::TempDir,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

async fn call(service: &Service, op: Operation, ids: &[&str], req: RawRequest<'_>) -> Value {
    let reply = service.handle(op, ids, req).await;
    assert!(
        reply.status < 300,
        "{op:?}: {} {:?}",
        reply.status,
        reply.body
    );
    serde_json::from_slice(&reply.body).expect("json")
}

async fn world() -> World {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = assetlib::sled::SledStore::open(dir.path().join("db")).expect("sled");
    let store: Arc<dyn Store> = Arc::new(store);
    let files = Files::local(dir.path().join("files")).expect("files");
    let mut cold_config = Config::default();
    cold_config.detail_cache = false;
    cold_config.page_cache = false;
    let cold = Service::from_arc(store.clone(), files.clone(), cold_config);
    let service = Service::from_arc(store, files, Config::default());
    let (_, key) = service
        .create_key("bench", Scope::ALL.to_vec(), None)
        .await
        .expect("key");
    let auth = format!("Bearer {key}").into_bytes();
    let with = |body: Value| RawRequest {
        authorization: Some(&auth),
        content_type: Some(b"application/json"),
        body: RequestBody::Bytes(Bytes::from(body.to_string())),
        ..Default::default()
    };
    let mut ids = Vec::new();
    for i in 1..=100 {
        let body = json!({"title": format!("Asset {i} of the brand kit"), "asset_type": "pdf",
                          "description": format!("Guidelines and files, part {i}")});
        let created = call(&service, Operation::CreateAsset, &[], with(body)).await;
        ids.push(created["data"]["id"].as_str().expect("id").to_owned());
    }
    let sections: Vec<Value> = (0..5)
        .map(|s| {
            json!({"title": format!("Section {s}"), "description": format!("Part {s} of the kit"),
                   "assets": ids[s * 20..s * 20 + 20].iter()
                       .map(|id| json!({"asset_id": id})).collect::<Vec<_>>()})
        })
        .collect();
    let library = uuid::Uuid::new_v4().to_string();
    let body = json!({"title": "Brand kit", "description": "Everything for the brand",
                      "sections": sections, "unsectioned_assets": []});
    call(&service, Operation::PutLibrary, &[&library], with(body)).await;
    let reads = vec![
        Read {
            name: "detail",
            op: Operation::GetLibrary,
            id: library,
            query: Some("include_assets=true"),
        },
        Read {
            name: "list",
            op: Operation::ListAssets,
            id: String::new(),
            query: None,
        },
        Read {
            name: "asset",
            op: Operation::GetAsset,
            id: ids[0].clone(),
            query: None,
        },
    ];
    World {
        service,
        cold,
        auth,
        reads,
        _dir: dir,
    }
}

impl World {
    async fn read(&self, read: &Read) -> Reply {
        self.read_on(&self.service, read).await
    }

    async fn read_on(&self, service: &Service, read: &Read) -> Reply {
        let req = RawRequest {
            authorization: Some(&self.auth),
            query: read.query,
            ..Default::default()
        };
        service.handle(read.op, &[&read.id], req).await
    }
}

/// The floor: the kept bytes as a 200 JSON answer with an `ETag` and `Cache-Control`, as the
/// baseline server answers.
fn floor(body: &Bytes) -> Reply {
    Reply::json_bytes(200, body.clone())
        .with_header("etag", "\"0123456789abcdef0123456789abcdef\"")
        .with_header("cache-control", "private, no-cache")
}

/// Mean time of `f` over `n` calls.
fn time(n: u32, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed() / n
}

fn main() {
    let rt = runtime();
    let world = rt.block_on(world());
    {
        let read = &world.reads[0];
        let req = RawRequest::default();
        let ids = [read.id.as_str()];
        let future = world.service.handle(read.op, &ids, req);
        println!(
            "Service::handle future: {} bytes",
            std::mem::size_of_val(&future)
        );
    }
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("reads");
    let mut bodies = Vec::new();
    for read in &world.reads {
        // Warm: the first read renders and keeps the page.
        let body = rt.block_on(world.read(read)).body;
        bodies.push(body);
        group.bench_function(read.name, |b| {
            b.iter(|| black_box(rt.block_on(world.read(read))))
        });
        group.bench_function(format!("{}-cold", read.name), |b| {
            b.iter(|| black_box(rt.block_on(world.read_on(&world.cold, read))))
        });
        let body = bodies.last().cloned().unwrap_or_default();
        group.bench_function(format!("{}-floor", read.name), |b| {
            b.iter(|| black_box(floor(&body)))
        });
    }
    group.finish();
    c.final_summary();

    println!("\ncached reads in-process, time over the floor's (interleaved, 5 rounds):");
    for (read, body) in world.reads.iter().zip(&bodies) {
        let (mut path, mut base) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..5 {
            path += time(20_000, || {
                black_box(rt.block_on(world.read(read)));
            });
            base += time(20_000, || {
                black_box(floor(body));
            });
        }
        println!(
            "  {:<7} {:>9.2?} per read, floor {:>8.2?}: {:.2?} over it",
            read.name,
            path / 5,
            base / 5,
            (path - base) / 5
        );
    }
}
