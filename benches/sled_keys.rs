//! What a key written to sled costs, the measure behind the search index's price on sled
//! (BENCHMARKS.md, "What the search index costs a create"): creates of the shape the sled
//! store writes, straight on sled 0.34 with no store code around them.
//!
//! ```text
//! cargo bench --bench sled_keys --features sled
//! ```
//!
//! Each create is one transaction over an `assets` tree (a 300-byte record) and six index
//! trees (a 28-byte key each), as a create's record and its other indexes are; with `k` words
//! it also writes `k` keys of the index's shape (the word, `0`, a random 16-byte id, 13 more
//! bytes) into a `words` tree:
//! - `tx`: the words in the create's transaction, as the sled store writes them today;
//! - `batch`: the words gathered from every writer and written sorted, 100 creates' at a time,
//!   in one `apply_batch` outside the transactions (what a background indexer would do).
//!
//! For 1 and 32 writer threads, 40,000 creates a run into a fresh database in a temporary
//! directory (flushed by sled every 500 ms, not by each create: the cost of the keys, not of
//! the disk), it prints creates per second and the process's CPU time a create (from
//! `/proc/self/stat`), and what each word key adds to it over the run without words.
//! `RESULTS=FILE` appends the rows to FILE as JSON lines (BENCHMARKS.md's table is made of
//! `benches/results/sled_keys.jsonl`).

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use sled::Transactional as _;
use sled::transaction::ConflictableTransactionError;

/// The words of one of the load run's creates (title and description) and its facet.
const WORDS: [&str; 10] = [
    "load", "test", "asset", "1", "23", "created", "by", "benches", "sh", "facet",
];

/// Creates a run.
const CREATES: usize = 40_000;

/// The creates whose words a batch gathers.
const BATCH: usize = 100;

/// Clock ticks a second of `/proc`'s CPU times (`getconf CLK_TCK`: 100 on Linux x86-64 and
/// arm64 alike, fixed by their kernel ABI).
const TICKS_A_SECOND: f64 = 100.0;

/// The CPU time this process has used (user and system), in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<f64>().ok())
        .sum();
    ticks / TICKS_A_SECOND
}

/// One run: creates per second and CPU microseconds a create.
fn run(batch: bool, words: usize, threads: usize) -> (f64, f64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = sled::Config::new()
        .path(dir.path())
        .flush_every_ms(Some(500))
        .open()
        .expect("open sled");
    let assets = db.open_tree("assets").expect("tree");
    let word_tree = db.open_tree("words").expect("tree");
    let indexes: Vec<sled::Tree> = (0..6)
        .map(|i| db.open_tree(format!("index{i}")).expect("tree"))
        .collect();
    let pending: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let per = CREATES / threads;
    let (started, cpu) = (Instant::now(), cpu_seconds());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (assets, word_tree, indexes, pending) = (&assets, &word_tree, &indexes, &pending);
            scope.spawn(move || {
                for _ in 0..per {
                    create(assets, word_tree, indexes, pending, batch, words);
                }
            });
        }
    });
    let (secs, cpu) = (started.elapsed().as_secs_f64(), cpu_seconds() - cpu);
    let done = (per * threads) as f64;
    (done / secs, cpu * 1e6 / done)
}

/// One create: its transaction, and its words in it or into the shared batch.
fn create(
    assets: &sled::Tree,
    word_tree: &sled::Tree,
    indexes: &[sled::Tree],
    pending: &Mutex<Vec<Vec<u8>>>,
    batch: bool,
    words: usize,
) {
    let id = uuid::Uuid::new_v4();
    let keys: Vec<Vec<u8>> = WORDS[..words]
        .iter()
        .map(|word| {
            let mut key = word.as_bytes().to_vec();
            key.push(0);
            key.extend_from_slice(id.as_bytes());
            key.extend_from_slice(&[7u8; 13]);
            key
        })
        .collect();
    let mut trees = vec![assets];
    trees.extend(indexes);
    if !batch {
        trees.push(word_tree);
    }
    trees
        .as_slice()
        .transaction(|t| {
            t[0].insert(id.as_bytes(), vec![1u8; 300])?;
            for (i, tree) in t[1..7].iter().enumerate() {
                let mut key = vec![i as u8; 12];
                key.extend_from_slice(id.as_bytes());
                tree.insert(key, &[])?;
            }
            if !batch {
                for key in &keys {
                    t[7].insert(key.as_slice(), &[])?;
                }
            }
            Ok::<_, ConflictableTransactionError<()>>(())
        })
        .expect("transaction");
    if batch {
        let mut gathered = pending.lock().unwrap_or_else(PoisonError::into_inner);
        gathered.extend(keys);
        if gathered.len() >= BATCH * words.max(1) {
            let mut all = std::mem::take(&mut *gathered);
            drop(gathered);
            all.sort();
            let mut writes = sled::Batch::default();
            for key in all {
                writes.insert(key, &[]);
            }
            word_tree.apply_batch(writes).expect("batch");
        }
    }
}

fn main() {
    let results = std::env::var("RESULTS").ok();
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let mut lines = String::new();
    println!("| writers | words | where | creates/s | CPU µs/create | CPU µs a word |");
    println!("|---:|---:|---|---:|---:|---:|");
    for threads in [1, 32] {
        let mut none = 0.0;
        for (batch, words) in [(false, 0), (false, 4), (false, 10), (true, 10)] {
            let (rate, cpu) = run(batch, words, threads);
            let each = if words == 0 {
                none = cpu;
                None
            } else {
                Some((cpu - none) / words as f64)
            };
            let place = if batch { "batch" } else { "tx" };
            let shown = each.map_or("-".to_owned(), |e| format!("{e:.1}"));
            println!("| {threads} | {words} | {place} | {rate:.0} | {cpu:.0} | {shown} |");
            let row = serde_json::json!({
                "bench": "sled_keys", "writers": threads, "words": words, "where": place,
                "creates_per_s": rate.round(), "cpu_us": (cpu * 10.0).round() / 10.0,
                "cpu_us_a_word": each.map(|e| (e * 10.0).round() / 10.0),
                "commit": commit, "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
            });
            lines.push_str(&format!("{row}\n"));
        }
    }
    if let Some(file) = results {
        use std::io::Write as _;
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .and_then(|mut f| f.write_all(lines.as_bytes()));
        if let Err(e) = written {
            eprintln!("{file}: {e}");
            std::process::exit(1);
        }
    }
}
