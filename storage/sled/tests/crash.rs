//! Kill -9 at random moments: every acknowledged write is there afterwards, every count
//! (downloads, views) acknowledged over a second before the kill too, and every index agrees
//! with the records.
//!
//! The test binary runs itself as the child (`child_process` with `CHILD_ENV` set). The child
//! writes in a loop and prints a line for each write after the call returned; the parent kills
//! it with SIGKILL (`Child::kill`), waits for it to exit (sled locks the directory), reopens
//! the store and checks.

use assetlib_core::store::prelude::*;
use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use assetlib_core::{AssetChange, AssetDeletion, AssetQuery, AssetType, LibraryQuery};
use assetlib_sled::SledStore;
use uuid::Uuid;

use crate::common::{all_orders, asset, library, walk};

const CHILD_ENV: &str = "ASSETLIB_SLED_CRASH_CHILD";
const MARK: &str = "@@ack ";
const ROUNDS: usize = 5;
/// How long the child writes records before it only counts views.
const WRITERS_FOR: Duration = Duration::from_millis(700);

fn say(line: String) {
    let mut out = std::io::stdout().lock();
    // The parent reads these lines; a failed write only means it has gone.
    let _ = writeln!(out, "{MARK}{line}");
    let _ = out.flush();
}

/// The child: a no-op in a normal test run.
#[test]
fn child_process() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(child(PathBuf::from(path)));
}

async fn child(path: PathBuf) {
    let store = SledStore::open(&path).expect("child opens the store");
    // Writers for a while, then only views until the kill: counts that no write's flush
    // carries, so only sled's background flush can save them.
    let quiet = Instant::now() + WRITERS_FOR;
    // Stop on its own should the parent never kill it.
    let deadline = Instant::now() + Duration::from_secs(60);
    let viewed = Uuid::new_v4();
    store
        .put_library(library(viewed, "Viewed kit", &[], 0, 0), Log::ANONYMOUS)
        .await
        .expect("put viewed");
    say(format!("library {viewed} 0"));
    let mut tasks = tokio::task::JoinSet::new();
    for w in 0..4 {
        let store = store.clone();
        tasks.spawn(async move {
            let mut mine: Vec<Uuid> = Vec::new();
            let mut n = 0usize;
            // Downloads of `mine[0]` acknowledged so far (only this writer downloads it).
            let mut downloads = 0u64;
            while Instant::now() < quiet {
                let a = asset(
                    &format!("Crash {w} {n}"),
                    AssetType::ALL[n % 9],
                    (n % 50) as i64,
                );
                let a = store.insert_asset(a, Log::ANONYMOUS).await.expect("insert");
                say(format!("asset {}", a.id));
                #[cfg(feature = "search")]
                if n.is_multiple_of(3) {
                    keep_text(&store, a.id).await;
                }
                mine.push(a.id);
                n += 1;
                if n.is_multiple_of(5) {
                    store.record_download(mine[0]).await.expect("download");
                    downloads += 1;
                    say(format!("download {} {downloads}", mine[0]));
                }
                if n.is_multiple_of(8) {
                    let lib = Uuid::new_v4();
                    let entries = &mine[mine.len() - 6..];
                    store
                        .put_library(library(lib, "Crash kit", entries, 1, 3), Log::ANONYMOUS)
                        .await
                        .expect("put");
                    say(format!("library {lib} {}", entries.len()));
                    // Views alone for a while: counts that no other write flushes.
                    for _ in 0..3 {
                        if let Some(v) = store.record_library_view(lib).await.expect("view") {
                            say(format!("view {lib} {}", v.views));
                        }
                    }
                }
                if n.is_multiple_of(6) {
                    scratch_lifecycle(&store, w, n, mine[mine.len() - 1]).await;
                }
            }
        });
    }
    while tasks.join_next().await.is_some() {}
    while Instant::now() < deadline {
        if let Some(v) = store.record_library_view(viewed).await.expect("view") {
            say(format!("view {viewed} {}", v.views));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The word only the text kept for asset `id` holds.
fn text_word(id: Uuid) -> String {
    format!("text{}", id.simple())
}

/// Keeps a text of two pages for asset `id`, the second holding [`text_word`].
#[cfg(feature = "search")]
async fn keep_text(store: &SledStore, id: Uuid) {
    use assetlib_core::store::{AssetText, SearchStore as _};
    let text = AssetText {
        pages: vec!["A first page".into(), format!("Then {}", text_word(id))],
        paged: true,
    };
    assert!(store.set_asset_text(id, text).await.expect("set text"));
    say(format!("text {id}"));
}

/// Changes and deletes that the checks after a kill see only through `verify`: an asset no
/// acknowledged record depends on, placed with an acknowledged one in a library of its own,
/// unpublished, then deleted with its entry.
async fn scratch_lifecycle(store: &SledStore, w: usize, n: usize, kept: Uuid) {
    let t = asset(&format!("Scratch {w} {n}"), AssetType::Pdf, 0);
    let t = store
        .insert_asset(t, Log::ANONYMOUS)
        .await
        .expect("insert scratch");
    let lib = library(Uuid::new_v4(), "Scratch kit", &[t.id, kept], 0, 0);
    store
        .put_library(lib, Log::ANONYMOUS)
        .await
        .expect("put scratch");
    let mut hide = AssetChange::at(t.created_at);
    hide.published = Some(false);
    store
        .update_asset(t.id, &hide, Log::ANONYMOUS)
        .await
        .expect("update scratch");
    let deleted = store
        .delete_asset(t.id, true, Log::ANONYMOUS)
        .await
        .expect("delete scratch");
    assert!(matches!(deleted, AssetDeletion::Deleted(_)));
}

fn random_below(n: u64, salt: u64) -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u64(salt);
    h.finish() % n
}

/// Counts reach the disk in the background: only those acknowledged this long before the kill
/// must survive it (DESIGN.md "Durability": at most one second of counts is lost).
const COUNT_WINDOW: Duration = Duration::from_secs(1);

#[derive(Default)]
struct Acked {
    assets: HashSet<Uuid>,
    libraries: HashMap<Uuid, usize>,
    downloads: HashMap<Uuid, u64>,
    views: HashMap<Uuid, u64>,
    /// Assets with a kept text, with the word only it holds.
    #[cfg_attr(not(feature = "search"), allow(dead_code))]
    texts: HashMap<Uuid, String>,
}

impl Acked {
    /// Reads one line of the child; `counts` says whether its counts are old enough to be
    /// owed (writes of records always are).
    fn read(&mut self, line: &str, counts: bool) {
        let Some(at) = line.find(MARK) else {
            return;
        };
        let words: Vec<&str> = line[at + MARK.len()..].split(' ').collect();
        let id = |i: usize| words.get(i).and_then(|w| Uuid::parse_str(w).ok());
        let num = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
        match (words.first().copied(), id(1), num(2)) {
            (Some("asset"), Some(id), _) => {
                self.assets.insert(id);
            }
            (Some("library"), Some(id), Some(n)) => {
                self.libraries.insert(id, n as usize);
            }
            (Some("download"), Some(id), Some(n)) if counts => {
                let d = self.downloads.entry(id).or_default();
                *d = (*d).max(n);
            }
            (Some("view"), Some(id), Some(n)) if counts => {
                let v = self.views.entry(id).or_default();
                *v = (*v).max(n);
            }
            (Some("text"), Some(id), _) => {
                self.texts.insert(id, text_word(id));
            }
            // A line cut short by the kill: its write may or may not have landed.
            _ => {}
        }
    }
}

/// Runs the child until it has acknowledged a write, lets it go on for a random while, kills
/// it and returns what it acknowledged.
fn run_and_kill(path: &Path, round: usize, acked: &mut Acked) {
    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new(exe)
        .args([
            "crash::child_process",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start child");
    let stdout = child.stdout.take().expect("child stdout");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // When the parent saw it: the child acknowledged it no later.
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let started = Instant::now();
    loop {
        let (at, line) = rx
            .recv_timeout(Duration::from_secs(60).saturating_sub(started.elapsed()))
            .unwrap_or_else(|e| panic!("round {round}: child acknowledged nothing ({e})"));
        let first = line.contains(MARK);
        seen.push((at, line));
        if first {
            break;
        }
    }
    // Long enough that some counts are older than the window when the kill comes.
    let run = 1800 + random_below(600, round as u64);
    std::thread::sleep(Duration::from_millis(run));
    let killed = Instant::now();
    child.kill().expect("kill child");
    let status = child.wait().expect("wait for child");
    assert!(!status.success(), "the child was killed, not finished");
    reader.join().expect("reader thread");
    seen.extend(rx.try_iter());
    for (at, line) in seen {
        acked.read(&line, at + COUNT_WINDOW <= killed);
    }
}

async fn check(path: &Path, acked: &Acked, round: usize) {
    let store = SledStore::open(path).expect("reopen after kill");
    for &id in &acked.assets {
        assert!(
            store.get_asset(id).await.expect("get").is_some(),
            "round {round}: asset {id} lost"
        );
    }
    for (&id, &entries) in &acked.libraries {
        let rows = store.load_library(id).await.expect("load");
        let rows = rows.unwrap_or_else(|| panic!("round {round}: library {id} lost"));
        assert_eq!(rows.entries.len(), entries, "round {round}: library {id}");
    }
    for (&id, &n) in &acked.downloads {
        let a = store.get_asset(id).await.expect("get").expect("asset");
        assert!(
            a.download_count >= n,
            "round {round}: downloads of {id} counted over a second before the kill were lost"
        );
    }
    for (&id, &n) in &acked.views {
        let rows = store
            .load_library(id)
            .await
            .expect("load")
            .expect("library");
        assert!(
            rows.library.view_count >= n,
            "round {round}: views of {id} counted over a second before the kill were lost"
        );
    }
    #[cfg(feature = "search")]
    check_texts(&store, acked, round).await;
    let integrity = store.verify().await.expect("verify");
    assert!(integrity.is_ok(), "round {round}: {:?}", integrity.problems);
    for q in all_orders() {
        let walked: HashSet<Uuid> = walk(&store, &q).await.into_iter().collect();
        assert_eq!(
            walked.len() as u64,
            integrity.published_assets,
            "round {round}: {q:?}"
        );
        assert!(walked.is_superset(&acked.assets), "round {round}: {q:?}");
    }
    let mut by_type = 0;
    for t in AssetType::ALL {
        let q = AssetQuery {
            asset_type: Some(t),
            per_page: 100,
            ..AssetQuery::default()
        };
        by_type += walk(&store, &q).await.len() as u64;
    }
    assert_eq!(
        by_type, integrity.published_assets,
        "round {round}: per-type lists"
    );
    let q = LibraryQuery {
        limit: 100,
        ..LibraryQuery::default()
    };
    let libs = store.list_libraries(&q).await.expect("list libraries");
    assert_eq!(libs.total, integrity.published_libraries, "round {round}");
}

/// Every acknowledged text is kept and found by its word, on the page that holds it.
#[cfg(feature = "search")]
async fn check_texts(store: &SledStore, acked: &Acked, round: usize) {
    use assetlib_core::search::parse_query;
    use assetlib_core::store::{SearchRequest, SearchStore as _};
    for (&id, word) in &acked.texts {
        let request = SearchRequest {
            limit: 10,
            ..SearchRequest::new(parse_query(word).expect("query"))
        };
        let found = store.search(&request).await.expect("search");
        let hits: Vec<(Uuid, Vec<u32>)> = found
            .items
            .iter()
            .map(|h| (h.asset.id, h.pages.iter().map(|(p, _)| *p).collect()))
            .collect();
        assert_eq!(hits, vec![(id, vec![1])], "round {round}: the text of {id}");
    }
}

#[test]
fn acknowledged_writes_survive_sigkill() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("db");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut acked = Acked::default();
    for round in 0..ROUNDS {
        run_and_kill(&path, round, &mut acked);
        eprintln!(
            "round {round}: {} assets, {} libraries, {} download and {} view counts owed so far",
            acked.assets.len(),
            acked.libraries.len(),
            acked.downloads.len(),
            acked.views.len()
        );
        rt.block_on(check(&path, &acked, round));
    }
    assert!(
        acked.assets.len() >= ROUNDS,
        "each round acknowledged writes"
    );
    assert!(!acked.libraries.is_empty() || acked.assets.len() < 8);
    assert!(
        !acked.downloads.is_empty() && !acked.views.is_empty(),
        "some counts were acknowledged over a second before a kill"
    );
}
