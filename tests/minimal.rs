//! The lean build an app gets with `default-features = false, features = ["axum", "sled"]`,
//! over a real socket: the contract's endpoints answer, and the path of every capability this
//! build leaves out is an unknown route (a JSON 404), as DESIGN.md §6 says. CI runs it with
//! that feature set (`cargo xtask test` runs the minimal build after the full one); in the full
//! build the same requests reach their operations, which this test checks too, so a gate that
//! leaks either way fails here.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use assetlib::sled::SledStore;
use assetlib::{Capability, Config, Files, Operation, ROUTES, Scope, Service};

/// Serves `service` with the axum adapter on 127.0.0.1; the address.
async fn serve(service: Service) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("local address");
    let app = assetlib::axum::router(service);
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// A service over a fresh sled store and local files, with a key of every scope.
async fn service_with_key(dir: &std::path::Path) -> (Service, String) {
    let store = SledStore::open(dir.join("db")).expect("open sled");
    let files = Files::local(dir.join("files")).expect("local files");
    let service = Service::new(store, files, Config::default());
    let (_, key) = service
        .create_key("minimal", Scope::ALL.to_vec(), None)
        .await
        .expect("key");
    (service, key)
}

/// A path of `route` with its `{...}` segments filled with a fresh UUID each.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                uuid::Uuid::new_v4().to_string()
            } else {
                segment.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contract_answers_and_left_out_capabilities_are_unknown_routes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (service, key) = service_with_key(dir.path()).await;
    let base = serve(service).await;
    let http = reqwest::Client::new();
    let bearer = format!("Bearer {key}");

    // The contract: create a document from a file in the file store (its words are counted,
    // and no thumbnail is drawn without `previews`), list it, download it, publish a library
    // of it and read the library.
    let text = "three small words";
    std::fs::write(dir.path().join("files/notes.txt"), text).expect("write a file");
    let created = http
        .post(format!("{base}/api/v1/assets"))
        .header("Authorization", &bearer)
        .json(&serde_json::json!({
            "title": "Notes",
            "asset_type": "document",
            "file_path": "notes.txt",
        }))
        .send()
        .await
        .expect("create");
    assert_eq!(created.status(), 201);
    let asset: serde_json::Value = created.json().await.expect("asset body");
    let asset_id = asset["data"]["id"].as_str().expect("asset id").to_owned();
    assert_eq!(asset["data"]["word_count"], 3);
    // Text has no picture to draw in any build; without `previews`, nothing is ever drawn.
    assert!(asset["data"]["thumbnail_path"].is_null());

    let download = http
        .get(format!("{base}/api/v1/assets/{asset_id}/download"))
        .header("Authorization", &bearer)
        .send()
        .await
        .expect("download");
    assert_eq!(download.status(), 200);
    assert_eq!(download.text().await.expect("file"), text);

    let listed: serde_json::Value = http
        .get(format!("{base}/api/v1/assets"))
        .header("Authorization", &bearer)
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("list body");
    assert_eq!(listed["pagination"]["total"], 1);
    assert_eq!(listed["data"][0]["id"], asset_id.as_str());

    let library_id = uuid::Uuid::new_v4();
    let put = http
        .put(format!("{base}/api/v1/libraries/{library_id}"))
        .header("Authorization", &bearer)
        .json(&serde_json::json!({
            "title": "Notes",
            "published": true,
            "sections": [{"title": "All", "assets": [{"asset_id": asset_id}]}],
        }))
        .send()
        .await
        .expect("put library");
    let status = put.status();
    assert!(
        status.is_success(),
        "{status} {}",
        put.text().await.unwrap_or_default()
    );
    let library: serde_json::Value = http
        .get(format!("{base}/api/v1/libraries/{library_id}"))
        .header("Authorization", &bearer)
        .send()
        .await
        .expect("get library")
        .json()
        .await
        .expect("library body");
    assert_eq!(library["title"], "Notes", "{library}");

    // Every route of every capability: a JSON 404 when its feature is off, its operation's
    // own answer (anything but the unknown route's 404) when it is on.
    let mut checked = 0;
    for route in ROUTES {
        let (method, op) = route.methods[0];
        let Some(capability) = op.capability() else {
            continue;
        };
        let url = format!("{base}{}", concrete(route.path));
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let answer = http
            .request(method.clone(), &url)
            .header("Authorization", &bearer)
            .send()
            .await
            .expect("request");
        let status = answer.status().as_u16();
        let body = answer.text().await.expect("body");
        let unknown = status == 404 && body.contains("No such route");
        assert_eq!(
            unknown,
            !capability.is_built(),
            "{method} {} ({op:?}, feature `{}`): {status} {body}",
            route.path,
            capability.feature(),
        );
        checked += 1;
    }
    assert!(
        checked >= 15,
        "only {checked} capability routes were checked"
    );
    assert_eq!(
        Operation::ListPasses.capability(),
        Some(Capability::Passes),
        "passes are a capability"
    );
}
