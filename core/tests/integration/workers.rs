//! The webhook workers: a thread of their own per service, at a lower priority than the
//! threads that answer requests, gone once the service is dropped.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use assetlib_core::{Config, Service};

/// This process's threads named `assetlib-hooks` (other tests' services have some too), by
/// thread id, with their nice values.
fn workers() -> BTreeMap<String, i64> {
    let mut found = BTreeMap::new();
    for task in std::fs::read_dir("/proc/self/task").expect("/proc/self/task") {
        let dir = task.expect("task").path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim() != "assetlib-hooks" {
            continue;
        }
        let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
        // Past the command (in parentheses), field 19 of stat(5) is the nice value.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        if let Some(nice) = after.split_whitespace().nth(16) {
            let tid = dir
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            found.insert(tid, nice.parse().expect("nice value"));
        }
    }
    found
}

#[test]
fn the_webhook_workers_run_niced_on_a_thread_that_ends_with_the_service() {
    let before = workers();
    let mut config = Config::default();
    config.webhook_poll_interval = Duration::from_millis(20);
    // Built outside any runtime: the workers need none of the caller's.
    let service = Service::in_memory(config);
    let deadline = Instant::now() + Duration::from_secs(10);
    let ours: Vec<(String, i64)> = loop {
        let new: Vec<(String, i64)> = workers()
            .into_iter()
            .filter(|(tid, _)| !before.contains_key(tid))
            .collect();
        if !new.is_empty() {
            break new;
        }
        assert!(Instant::now() < deadline, "no webhook worker thread");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(ours.iter().all(|(_, nice)| *nice == 10), "{ours:?}");
    drop(service);
    let deadline = Instant::now() + Duration::from_secs(10);
    while ours.iter().any(|(tid, _)| workers().contains_key(tid)) {
        assert!(
            Instant::now() < deadline,
            "the worker thread outlived its service"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
