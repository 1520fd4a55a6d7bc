//! PDFs whose page never finishes drawing, on the ready servers (each its own render child):
//! 32 requests that would draw them at once keep the server and its children under 1 GB
//! together, every answer a 201, 400 or 503, and SIGTERM while pages are being drawn ends the
//! process within 10 s.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use assetlib::extract::samples;
use serde_json::Value;

use crate::running::{Running, SERVERS, create_key};

/// The resident memory of `pid` and of every process whose parent it is, in bytes.
fn family_rss(pid: u32) -> u64 {
    let rss = |stat: &str| -> u64 {
        stat.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    };
    let mut total =
        rss(&std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default());
    let me = pid.to_string();
    for entry in std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
    {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        if after.split_whitespace().nth(1) == Some(me.as_str()) {
            total += rss(&std::fs::read_to_string(entry.path().join("status")).unwrap_or_default());
        }
    }
    total
}

/// Samples [`family_rss`] every 20 ms until `stop`, keeping the largest.
fn watch_memory(
    pid: u32,
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            peak.fetch_max(family_rss(pid), Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(20));
        }
    })
}

/// Uploads `pdf` as `name` through the server at `base`: the status and the answer.
async fn upload(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    name: &str,
    pdf: &[u8],
) -> (u16, Value) {
    let mut body = format!(
        "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
         Content-Type: application/pdf\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(pdf);
    body.extend_from_slice(b"\r\n--b--\r\n");
    let r = client
        .post(format!("{base}/api/v1/assets/upload"))
        .bearer_auth(key)
        .header("content-type", "multipart/form-data; boundary=b")
        .body(body)
        .send()
        .await
        .expect("upload");
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// The shapes that never finish drawing, by name.
fn never_drawn() -> Vec<(&'static str, Vec<u8>)> {
    samples::runaway_pdfs()
        .into_iter()
        .filter(|(name, _)| *name != "saved states")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runaway_pdf_renders_stay_bounded_and_sigterm_still_ends_the_server() {
    for example in SERVERS {
        runaway_on(example).await;
    }
}

async fn runaway_on(example: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (data, logs) = (dir.path().join("data"), dir.path().join("logs"));
    std::fs::create_dir_all(&logs).unwrap();
    let key = create_key(example, &data, "read:assets,write:assets,read:paid");
    let server = Running::start(example, &data, &logs, &[]).await;
    let pid = server.child.id();
    let client = reqwest::Client::new();
    let (stop, peak) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let watcher = watch_memory(pid, Arc::clone(&stop), Arc::clone(&peak));

    // 32 requests at once that would each draw a page that never ends: 8 uploads (two of each
    // shape) and 24 variants of assets of those shapes at sizes nobody asked for before.
    let mut ids = Vec::new();
    for (name, pdf) in never_drawn() {
        let (status, asset) =
            upload(&client, &server.base, &key, &format!("{name}.pdf"), &pdf).await;
        assert_eq!(status, 201, "{example}: {name}: {asset}");
        assert!(
            asset["data"]["thumbnail_path"].is_null(),
            "{example}: {name}: {asset}"
        );
        ids.push(asset["data"]["id"].as_str().expect("id").to_owned());
    }
    let mut running = tokio::task::JoinSet::new();
    for (i, (name, pdf)) in never_drawn().into_iter().cycle().take(8).enumerate() {
        let (client, base, key) = (client.clone(), server.base.clone(), key.clone());
        running.spawn(async move {
            let (status, body) =
                upload(&client, &base, &key, &format!("{i}-{name}.pdf"), &pdf).await;
            (format!("upload {name}"), status, body)
        });
    }
    for i in 0..24 {
        let id = ids[i % ids.len()].clone();
        let url = format!(
            "{}/api/v1/assets/{id}/image?w={}&format=png",
            server.base,
            2048 - i
        );
        let (client, key) = (client.clone(), key.clone());
        running.spawn(async move {
            let r = client
                .get(url)
                .bearer_auth(key)
                .send()
                .await
                .expect("variant");
            let status = r.status().as_u16();
            (
                format!("variant {i}"),
                status,
                r.json().await.unwrap_or(Value::Null),
            )
        });
    }
    let answers = tokio::time::timeout(Duration::from_secs(120), running.join_all())
        .await
        .expect("32 requests answered within two minutes");
    let mut counted = std::collections::BTreeMap::new();
    for (what, status, body) in &answers {
        *counted.entry(*status).or_insert(0) += 1;
        let allowed = if what.starts_with("upload") {
            [201, 201]
        } else {
            [400, 503]
        };
        assert!(
            allowed.contains(status),
            "{example}: {what}: {status} {body}"
        );
    }
    assert_eq!(counted.values().sum::<i32>(), 32, "{example}: {counted:?}");
    stop.store(true, Ordering::Relaxed);
    watcher.join().unwrap();
    let peak = peak.load(Ordering::Relaxed);
    assert!(
        peak < 1 << 30,
        "{example}: server and render children took {peak} bytes at once"
    );
    eprintln!(
        "{example}: 32 runaway renders: {counted:?}, peak {} MiB",
        peak >> 20
    );

    // SIGTERM while two pages are being drawn (and more wait their turn): out within 10 s.
    let mut drawing = tokio::task::JoinSet::new();
    for i in 0..4 {
        let (client, base, key) = (client.clone(), server.base.clone(), key.clone());
        drawing.spawn(async move {
            upload(
                &client,
                &base,
                &key,
                &format!("late-{i}.pdf"),
                &samples::pdf_nested_forms(40, 4),
            )
            .await
        });
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    let started = Instant::now();
    let stderr = server.terminate().await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "{example}: SIGTERM took {took:?} during renders"
    );
    assert!(stderr.contains("the store is flushed"), "{stderr}");
    drawing.abort_all();
}
