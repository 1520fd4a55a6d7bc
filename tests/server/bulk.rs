//! An atomic bulk change across a crash: a ready server killed with SIGKILL while it applies
//! an atomic change of 100 assets has, after a restart, applied all of it or none of it, on
//! its default sled store and on PostgreSQL (with a bucket).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::replicas::Shared;
use crate::running::{Running, SERVERS};

/// Rounds of change-then-kill per server.
const ROUNDS: u64 = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_atomic_bulk_change_lands_whole_or_not_at_all() {
    for example in SERVERS {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::Sled {
            data: dir.path().join("data"),
            logs: dir.path().join("logs"),
        };
        a_killed_atomic_bulk_change_lands_whole_or_not_at_all_on(example, &store).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_atomic_bulk_change_on_postgres_lands_whole_or_not_at_all() {
    for example in SERVERS {
        let store = Store::Postgres(Box::new(Shared::new().await));
        a_killed_atomic_bulk_change_lands_whole_or_not_at_all_on(example, &store).await;
    }
}

/// Where a ready server keeps its records, kept from one start to the next.
enum Store {
    /// A data directory (its sled store and files).
    Sled { data: PathBuf, logs: PathBuf },
    /// A PostgreSQL database and a bucket.
    Postgres(Box<Shared>),
}

impl Store {
    async fn start(&self, example: &str) -> Running {
        match self {
            Store::Sled { data, logs } => {
                std::fs::create_dir_all(logs).unwrap();
                Running::start(example, data, logs, &[]).await
            }
            Store::Postgres(shared) => shared.replica_with(example, &[]).await,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Store::Sled { .. } => "sled",
            Store::Postgres(_) => "PostgreSQL",
        }
    }

    /// A key with the scopes the test needs: the one the first start printed (sled), or a
    /// new one (PostgreSQL).
    fn key(&self, example: &str, first: &Running) -> String {
        match self {
            Store::Sled { .. } => first
                .stdout()
                .split_whitespace()
                .find(|w| w.starts_with("alk_") && w.len() == 47)
                .expect("a key")
                .to_owned(),
            Store::Postgres(shared) => shared.create_key(example, "read:assets,write:assets"),
        }
    }
}

async fn tagged_total(server: &Running, key: &str, tag: &str) -> u64 {
    let (status, body) = server
        .get(
            &format!("/api/v1/assets?tag={tag}&per_page=1&status=any"),
            key,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    body["pagination"]["total"].as_u64().expect("total")
}

async fn a_killed_atomic_bulk_change_lands_whole_or_not_at_all_on(example: &str, store: &Store) {
    let label = format!("{example} on {}", store.name());
    let mut server = store.start(example).await;
    let key = store.key(example, &server);
    let mut ids = Vec::new();
    for i in 0..100 {
        let (status, body) = server
            .send(
                reqwest::Method::POST,
                "/api/v1/assets",
                &key,
                Some(json!({"title": format!("Asset {i}"), "asset_type": "pdf"})),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        ids.push(body["data"]["id"].clone());
    }

    // Each round: an atomic change of all 100, and a SIGKILL a little after it was sent.
    let mut outcomes: BTreeMap<String, u64> = BTreeMap::new();
    for round in 0..ROUNDS {
        let tag = format!("round-{round}");
        let body = json!({"action": "add_tags", "ids": ids, "atomic": true,
            "changes": {"tags": [tag]}});
        let url = format!("{}/api/v1/assets/bulk", server.base);
        let request = reqwest::Client::new()
            .post(url)
            .bearer_auth(&key)
            .json(&body)
            .send();
        let sent = tokio::spawn(async move {
            match request.await {
                Ok(r) => {
                    let status = r.status().as_u16();
                    (status, r.json::<Value>().await.unwrap_or(Value::Null))
                }
                Err(_) => (0, Value::Null),
            }
        });
        // From at once to well after the answer, so some kills land mid-change.
        tokio::time::sleep(Duration::from_millis(round * round * 3)).await;
        server.child.kill().expect("SIGKILL");
        server.child.wait().expect("reaped");
        let (status, answer) = sent.await.expect("request task");
        *outcomes.entry(status.to_string()).or_default() += 1;

        server = store.start(example).await;
        let total = tagged_total(&server, &key, &tag).await;
        assert!(
            total == 0 || total == 100,
            "{label} round {round}: {total} of 100 assets changed ({status} {answer})"
        );
        if status == 200 {
            assert_eq!(total, 100, "{label} round {round}: answered, so kept");
            assert_eq!(answer["data"]["succeeded"], 100);
        }
    }
    // Every answer the client saw is counted; a cut connection is 0.
    assert_eq!(outcomes.values().sum::<u64>(), ROUNDS, "{outcomes:?}");
    eprintln!("{label}: answers to atomic changes killed mid-way: {outcomes:?}");
    server.terminate().await;
}
