//! Instruction counts of tree assembly and of the cached read path, under valgrind's
//! callgrind (gungraun): the regression gate CI runs.
//!
//! ```text
//! cargo xtask instructions            # run, compare with benches/instructions.json, fail at +5%
//! cargo xtask instructions --update   # run and write the counts into benches/instructions.json
//! ```
//!
//! Wall time on a shared machine swings by more than the changes worth catching; the count of
//! instructions a call executes does not (it moves by a few hundredths of a percent between
//! runs of the same build). So the gate counts them:
//! - `tree_assembly::assemble_and_serialize`: `assetlib::tree::assemble` on a library's rows, handed
//!   over shuffled as any store may, serialized to JSON: 10 sections x 10 assets and
//!   100 x 100 (the rows of `tree.rs`, from `common/library.rs`);
//! - `cached_reads::cached`: [`Service::handle`] on the three reads of `load.sh` (a library detail
//!   with its 100 assets, the first list page, one asset) over the in-memory store with every
//!   cache on and warm: the key lookup, the version check, the view count, the cache hit;
//! - `cached_reads_in_a_workspace::by_caller`: the same reads of data made in workspace `acme`,
//!   by a global key, by a key of `acme` (each read then checks the records' workspace) and by
//!   a browser token that key minted (a kept checked token): what checking a workspace key or
//!   a token adds to the read path (DESIGN "Workspaces"), without the load run's noise.
//!
//! Only the benchmark function is counted: the setup (generating rows; making the service,
//! its key, 100 assets and a library, and the warming read) is not, and the service is handed
//! back so that its drop is not either. The in-memory store has no background thread, so
//! what runs is the same on every run. The committed counts come from this machine's build
//! (rustc and valgrind as `cargo xtask instructions` reports them); another compiler gives
//! other counts, and `--update` records them.
//!
//! Running it needs valgrind (Debian's package) and `gungraun-runner` at the version of the
//! `gungraun` dev-dependency; `cargo xtask instructions` installs both.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]
// gungraun's macros make public modules, functions and constants of their own.
#![allow(missing_docs, unreachable_pub)]

use std::hint::black_box;

use assetlib::{
    Config, LibraryRows, Operation, RawRequest, Reply, RequestBody, Scope, Service, tree,
};
use bytes::Bytes;
use gungraun::prelude::*;
use gungraun::{Callgrind, LibraryBenchmarkConfig};
use serde_json::{Value, json};

#[path = "common/library.rs"]
mod library;

/// The files base URL of the generated pages.
const BASE: &str = "/files/";

fn shuffled_rows((sections, per_section): (usize, usize)) -> (LibraryRows, Vec<u8>) {
    let rows = library::rows(sections, per_section, true);
    // The output buffer is made here, at its final size, so growing it is not counted.
    let mut out = Vec::new();
    serde_json::to_writer(&mut out, &tree::assemble(&rows, true, BASE)).expect("serialize");
    (rows, out)
}

#[library_benchmark]
#[bench::s10x10(args = ((10, 10)), setup = shuffled_rows)]
#[bench::s100x100(args = ((100, 100)), setup = shuffled_rows)]
fn assemble_and_serialize((rows, mut out): (LibraryRows, Vec<u8>)) -> (LibraryRows, Vec<u8>) {
    out.clear();
    let detail = tree::assemble(black_box(&rows), true, BASE);
    serde_json::to_writer(&mut out, &detail).expect("serialize");
    drop(detail);
    (rows, out)
}

library_benchmark_group!(name = tree_assembly; benchmarks = assemble_and_serialize);

/// A service over the in-memory store, a key, 100 assets and one library holding them, and
/// the read to make, warmed once so the cache holds its answer.
///
/// The service is made on `_runtime`, where its background tasks (the webhook streams' poll, the
/// upload reaper) wait; reads run on `reader`, which drives nothing but the read, so a task's
/// tick never lands in a measured read.
struct World {
    _runtime: tokio::runtime::Runtime,
    reader: tokio::runtime::Runtime,
    service: Service,
    auth: Vec<u8>,
    op: Operation,
    id: String,
    query: Option<&'static str>,
}

impl World {
    fn read(&self) -> Reply {
        let req = RawRequest {
            authorization: Some(&self.auth),
            query: self.query,
            ..Default::default()
        };
        self.reader
            .block_on(self.service.handle(self.op, &[&self.id], req))
    }
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn world(read: &str) -> World {
    world_of(read, None)
}

/// [`world`] with its data in workspace `acme`, read by `caller`: a global key, a key of
/// `acme`, or a browser token that key minted.
fn world_in_workspace((caller, read): (&str, &str)) -> World {
    world_of(read, Some(caller))
}

/// The world of [`world`]; with `caller`, its data is made in workspace `acme` by a key of
/// it, and read as `caller` says ([`world_in_workspace`]).
fn world_of(read: &str, caller: Option<&str>) -> World {
    let runtime = current_thread();
    let (service, auth, ids, library) = runtime.block_on(async {
        let service = Service::in_memory(Config::default());
        let (_, global) = service
            .create_key("bench", Scope::ALL.to_vec(), None)
            .await
            .expect("key");
        let key = match caller {
            None => global.clone(),
            Some(_) => {
                let (_, acme) = service
                    .create_workspace_key("acme", Scope::ALL.to_vec(), None, Some("acme"))
                    .await
                    .expect("workspace key");
                acme
            }
        };
        let auth = format!("Bearer {key}").into_bytes();
        let call = |op: Operation, id: String, body: Value| {
            let (service, auth) = (&service, &auth);
            async move {
                let req = RawRequest {
                    authorization: Some(auth),
                    content_type: Some(b"application/json"),
                    body: RequestBody::Bytes(Bytes::from(body.to_string())),
                    ..Default::default()
                };
                let reply = service.handle(op, &[&id], req).await;
                assert!(reply.status < 300, "{op:?}: {}", reply.status);
                serde_json::from_slice::<Value>(&reply.body).expect("json")
            }
        };
        let mut ids = Vec::new();
        for i in 1..=100 {
            let body = json!({"title": format!("Asset {i} of the brand kit"), "asset_type": "pdf",
                              "description": format!("Guidelines and files, part {i}")});
            let created = call(Operation::CreateAsset, String::new(), body).await;
            ids.push(created["data"]["id"].as_str().expect("id").to_owned());
        }
        let sections: Vec<Value> = (0..5)
            .map(|s| {
                json!({"title": format!("Section {s}"), "description": format!("Part {s}"),
                       "assets": ids[s * 20..s * 20 + 20].iter()
                           .map(|id| json!({"asset_id": id})).collect::<Vec<_>>()})
            })
            .collect();
        let library = uuid::Uuid::from_u128(7).to_string();
        let body = json!({"title": "Brand kit", "description": "Everything for the brand",
                          "sections": sections, "unsectioned_assets": []});
        call(Operation::PutLibrary, library.clone(), body).await;
        let read_as = match caller {
            Some("global") => format!("Bearer {global}").into_bytes(),
            Some("token") => {
                let body = json!({"scopes": ["read:assets", "read:libraries"]});
                let minted = call(Operation::CreateToken, String::new(), body).await;
                let token = minted["data"]["token"].as_str().expect("token");
                format!("Bearer {token}").into_bytes()
            }
            _ => auth.clone(),
        };
        (service, read_as, ids, library)
    });
    let (op, id, query) = match read {
        "detail" => (Operation::GetLibrary, library, Some("include_assets=true")),
        "list" => (Operation::ListAssets, String::new(), None),
        _ => (Operation::GetAsset, ids[0].clone(), None),
    };
    let world = World {
        _runtime: runtime,
        reader: current_thread(),
        service,
        auth,
        op,
        id,
        query,
    };
    let warm = world.read();
    assert_eq!(warm.status, 200, "{read}: {}", warm.status);
    world
}

#[library_benchmark]
#[bench::detail(args = ("detail"), setup = world)]
#[bench::list(args = ("list"), setup = world)]
#[bench::asset(args = ("asset"), setup = world)]
fn cached(world: World) -> (World, Reply) {
    let reply = world.read();
    (world, black_box(reply))
}

library_benchmark_group!(name = cached_reads; benchmarks = cached);

#[library_benchmark]
#[bench::global_detail(args = (("global", "detail")), setup = world_in_workspace)]
#[bench::global_list(args = (("global", "list")), setup = world_in_workspace)]
#[bench::global_asset(args = (("global", "asset")), setup = world_in_workspace)]
#[bench::workspace_detail(args = (("workspace", "detail")), setup = world_in_workspace)]
#[bench::workspace_list(args = (("workspace", "list")), setup = world_in_workspace)]
#[bench::workspace_asset(args = (("workspace", "asset")), setup = world_in_workspace)]
#[bench::token_detail(args = (("token", "detail")), setup = world_in_workspace)]
#[bench::token_list(args = (("token", "list")), setup = world_in_workspace)]
#[bench::token_asset(args = (("token", "asset")), setup = world_in_workspace)]
fn by_caller(world: World) -> (World, Reply) {
    let reply = world.read();
    (world, black_box(reply))
}

library_benchmark_group!(name = cached_reads_in_a_workspace; benchmarks = by_caller);

main!(
    // No cache simulation: the gate counts instructions, and it costs time.
    config = LibraryBenchmarkConfig::default().tool(Callgrind::with_args(["--cache-sim=no"]));
    library_benchmark_groups = tree_assembly, cached_reads, cached_reads_in_a_workspace
);
