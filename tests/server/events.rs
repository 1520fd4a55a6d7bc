//! The event log across a crash: a ready server killed with SIGKILL while clients create
//! assets, then started again on the same data, has exactly one `asset.created` event for
//! every create it acknowledged, and no event of a write that did not land; and webhook
//! deliveries go on at once after a graceful restart.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};

use crate::running::{Running, SERVERS};

/// The asset ids of every `asset.created` event of the feed at `base`, in log order, read by
/// following `next` until a page is empty.
pub(crate) async fn created_in_feed(
    client: &reqwest::Client,
    base: &str,
    key: &str,
) -> Vec<String> {
    let mut after = String::new();
    let mut ids = Vec::new();
    loop {
        let mut url = format!("{base}/api/v1/events?type=asset.created&limit=1000");
        if !after.is_empty() {
            url.push_str(&format!("&after={after}"));
        }
        let r = client
            .get(&url)
            .bearer_auth(key)
            .send()
            .await
            .expect("read the feed");
        assert_eq!(r.status(), 200, "{url}");
        let page: Value = r.json().await.expect("JSON");
        let events = page["data"].as_array().expect("data");
        if events.is_empty() {
            return ids;
        }
        ids.extend(events.iter().map(|e| {
            e["resource"]["id"]
                .as_str()
                .expect("resource id")
                .to_owned()
        }));
        after = page["next"].as_str().expect("next").to_owned();
    }
}

/// Checks the feed at `base` against the creates clients had acknowledged: each has exactly
/// one event, no event is there twice, and every event's asset exists.
pub(crate) async fn one_event_per_acknowledged_create(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    acknowledged: &[String],
) {
    // On PostgreSQL the transactions of the killed process end when the server notices its
    // connections are gone; until then the feed holds their events back.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let created = loop {
        let created = created_in_feed(client, base, key).await;
        let seen: HashSet<&String> = created.iter().collect();
        if acknowledged.iter().all(|id| seen.contains(id)) || std::time::Instant::now() > deadline {
            break created;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let unique: HashSet<&String> = created.iter().collect();
    assert_eq!(unique.len(), created.len(), "an asset.created event twice");
    for id in acknowledged {
        assert!(
            unique.contains(id),
            "the acknowledged create {id} has no event"
        );
    }
    for id in &created {
        let r = client
            .get(format!("{base}/api/v1/assets/{id}"))
            .bearer_auth(key)
            .send()
            .await
            .expect("read");
        assert_eq!(
            r.status(),
            200,
            "an event of asset {id}, which is not there"
        );
    }
}

/// Four clients create assets on `victim` as fast as it answers, and 1.5 s in it is killed
/// with SIGKILL; the ids of the creates it acknowledged (at least 20).
pub(crate) async fn kill_while_creating(
    victim: &mut Running,
    client: &reqwest::Client,
    key: &str,
) -> Vec<String> {
    let writers = create_until_gone(client, &victim.base, key);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    victim.child.kill().expect("SIGKILL the server");
    let _ = victim.child.wait();
    let mut acknowledged = Vec::new();
    for w in writers {
        acknowledged.extend(w.await.expect("writer"));
    }
    assert!(
        acknowledged.len() >= 20,
        "the writers got going: {}",
        acknowledged.len()
    );
    acknowledged
}

/// Four clients creating assets as fast as the server answers, until it stops answering; the
/// ids it acknowledged.
fn create_until_gone(
    client: &reqwest::Client,
    base: &str,
    key: &str,
) -> Vec<tokio::task::JoinHandle<Vec<String>>> {
    (0..4)
        .map(|w| {
            let (client, key, base) = (client.clone(), key.to_owned(), base.to_owned());
            tokio::spawn(async move {
                let mut acknowledged = Vec::new();
                for n in 0.. {
                    let r = client
                        .post(format!("{base}/api/v1/assets"))
                        .bearer_auth(&key)
                        .json(&json!({"title": format!("Writer {w} asset {n}"),
                            "asset_type": "link", "external_url": "https://example.com/"}))
                        .send()
                        .await;
                    let Ok(r) = r else { break };
                    if r.status() != 201 {
                        break;
                    }
                    let Ok(body) = r.json::<Value>().await else {
                        break;
                    };
                    acknowledged.push(body["data"]["id"].as_str().expect("id").to_owned());
                }
                acknowledged
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_has_one_event_per_acknowledged_write() {
    for example in SERVERS {
        a_killed_server_has_one_event_per_acknowledged_write_on(example).await;
    }
}

async fn a_killed_server_has_one_event_per_acknowledged_write_on(example: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (data, logs) = (dir.path().join("data"), dir.path().join("logs"));
    std::fs::create_dir_all(&logs).unwrap();
    let mut victim = Running::start(example, &data, &logs, &[]).await;
    // The first start prints a key with every scope.
    let key = victim
        .stdout()
        .split_whitespace()
        .find(|w| w.starts_with("alk_") && w.len() == 47)
        .expect("a key")
        .to_owned();
    let client = reqwest::Client::new();
    let acknowledged = kill_while_creating(&mut victim, &client, &key).await;

    let again = Running::start(example, &data, &logs, &[]).await;
    one_event_per_acknowledged_create(&client, &again.base, &key, &acknowledged).await;
    again.terminate().await;
}

/// Webhook deliveries across a graceful restart: the stopped server gives its stream leases
/// back, and a `keys` command run while it is down takes none (only `serve` delivers), so the
/// first create after the restart is delivered at once, not when the leases run out (90 s
/// with the default 15 s timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_go_on_at_once_after_a_graceful_restart() {
    for example in SERVERS {
        deliveries_go_on_at_once_after_a_graceful_restart_on(example).await;
    }
}

async fn deliveries_go_on_at_once_after_a_graceful_restart_on(example: &str) {
    use assetlib_testkit::receiver::{Answer, Receiver};

    let dir = tempfile::tempdir().unwrap();
    let (data, logs) = (dir.path().join("data"), dir.path().join("logs"));
    std::fs::create_dir_all(&logs).unwrap();
    let key = crate::running::create_key(example, &data, "write:assets,admin:webhooks");
    let flags = ["--webhook-allow-private"];
    let receiver = Receiver::start(Answer::Status(204)).await;
    let server = Running::start(example, &data, &logs, &flags).await;
    let (status, hook) = server
        .send(
            reqwest::Method::POST,
            "/api/v1/webhooks",
            &key,
            Some(json!({"url": receiver.url("/hook"), "event_types": ["asset.created"]})),
        )
        .await;
    assert_eq!(status, 201, "{example}: {hook}");
    let create = |n: usize| json!({"title": format!("Note {n}"), "asset_type": "collection"});
    let (status, _) = server
        .send(
            reqwest::Method::POST,
            "/api/v1/assets",
            &key,
            Some(create(1)),
        )
        .await;
    assert_eq!(status, 201);
    receiver.wait_for(1, Duration::from_secs(20)).await;
    server.terminate().await;

    // While it is down, a key is made: that command delivers nothing and leases nothing.
    crate::running::create_key(example, &data, "read:assets");
    let server = Running::start(example, &data, &logs, &flags).await;
    let (status, _) = server
        .send(
            reqwest::Method::POST,
            "/api/v1/assets",
            &key,
            Some(create(2)),
        )
        .await;
    assert_eq!(status, 201);
    // Far less than a lease (90 s); the poll interval and a first send fit well within it.
    let got = receiver.wait_for(2, Duration::from_secs(20)).await;
    let titles: Vec<String> = got
        .iter()
        .map(|r| r.json()["data"]["resource"]["id"].to_string())
        .collect();
    assert_eq!(titles.len(), 2, "{example}: {titles:?}");
    server.terminate().await;
}
