//! Change notices between two stores over one database (two replicas): a write through one
//! moves the other's versions within 100 ms without a round trip per read; with the listening
//! connection terminated every read checks the database (a write shows at once) until it
//! listens again; `strict` checks on every read; and counters written in batches reach the
//! other store within a second, and survive a kill -9 of the process counting them.

use assetlib_core::store::prelude::*;
use std::time::{Duration, Instant};

use assetlib_core::testing::{sample_asset, sample_library};
use assetlib_core::{AssetQuery, AssetSort, AssetType, LibraryWrite, ReplicaSync};
use assetlib_postgres::PgStore;

use crate::common::{replica, store};

/// Polls `moved` until it is true, for at most `limit`: how long it took.
async fn seen_within(limit: Duration, mut moved: impl AsyncFnMut() -> bool) -> Duration {
    let start = Instant::now();
    loop {
        if moved().await {
            return start.elapsed();
        }
        assert!(start.elapsed() < limit, "not seen within {limit:?}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

fn library(title: &str) -> LibraryWrite {
    LibraryWrite {
        library: sample_library(title, 1),
        slug_given: false,
        sections: vec![],
        entries: vec![],
    }
}

/// One view of the published library `id` through `store`.
async fn view(store: &PgStore, id: uuid::Uuid) -> assetlib_core::ViewCount {
    store
        .record_library_view(id)
        .await
        .expect("view")
        .expect("published")
}

/// Waits until `store` listens for notices.
async fn listening(store: &PgStore) {
    seen_within(Duration::from_secs(10), async || store.listening()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_other_replicas_versions_follow_within_100_ms() {
    let (a, db) = store().await;
    let b = replica(&db).await;
    listening(&b).await;
    for round in 0..5 {
        let before = b.assets_version().await.expect("version");
        assert_eq!(
            b.assets_version().await.expect("version"),
            before,
            "no write, no move"
        );
        a.insert_asset(
            sample_asset(&format!("Round {round}"), AssetType::Pdf, round),
            Log::ANONYMOUS,
        )
        .await
        .expect("insert");
        seen_within(Duration::from_millis(100), async || {
            b.assets_version().await.expect("version") != before
        })
        .await;
        assert_eq!(
            b.list_assets(&Default::default())
                .await
                .expect("list")
                .total,
            round as u64 + 1
        );
    }

    // A library's version on B moves with A's replace; a view through B is answered from
    // memory meanwhile.
    let write = library("Followed");
    let id = write.library.id;
    a.put_library(write.clone(), Log::ANONYMOUS)
        .await
        .expect("put");
    let first = view(&b, id).await;
    let again = view(&b, id).await;
    assert_eq!(again.version, first.version);
    assert_eq!(again.views, first.views + 1);
    let mut renamed = write;
    renamed.library.settings.title = "Followed, renamed".into();
    a.put_library(renamed, Log::ANONYMOUS)
        .await
        .expect("replace");
    seen_within(Duration::from_millis(100), async || {
        view(&b, id).await.version != first.version
    })
    .await;

    // A key revoked through A: B's keys version moves.
    let keys_before = b
        .keys_version()
        .expect("answered from memory while listening");
    let key = assetlib_core::ApiKey {
        id: uuid::Uuid::new_v4(),
        name: "k".into(),
        key_hash: [3; 32],
        scopes: vec![],
        created_at: chrono::Utc::now(),
        expires_at: None,
        revoked_at: None,
        workspace_id: None,
    };
    a.insert_key(key.clone(), Log::ANONYMOUS)
        .await
        .expect("key");
    a.revoke_key(key.id, chrono::Utc::now(), Log::ANONYMOUS)
        .await
        .expect("revoke");
    seen_within(Duration::from_millis(100), async || {
        b.keys_version() != Some(keys_before)
    })
    .await;
}

/// A write of one asset through A moves that asset's version on B (its notice names it) and
/// leaves the versions of other assets, whose answers B keeps, and of the lists in an order
/// the write left as it was (a new title leaves the lists by creation time); a write of its
/// tags moves every list order; a flush of download counts through A names no asset and
/// moves every asset's version on B.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_other_replica_moves_the_version_of_the_asset_written_alone() {
    let (a, db) = store().await;
    let b = replica(&db).await;
    listening(&b).await;
    let written = sample_asset("Written", AssetType::Pdf, 1);
    let mut other = sample_asset("Left alone", AssetType::Pdf, 2);
    // Apart in B's groups of assets (4,096, by the id's low bits).
    other.id = uuid::Uuid::from_u128(written.id.as_u128() ^ 1);
    for asset in [&written, &other] {
        a.insert_asset(asset.clone(), Log::ANONYMOUS)
            .await
            .expect("insert");
    }
    // Both inserts have reached B once the second one's version moved.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let version = async |id| b.asset_version(id).await.expect("version");
    let (w0, o0) = (version(written.id).await, version(other.id).await);
    let list = async |sort| {
        let query = AssetQuery {
            sort,
            ..AssetQuery::default()
        };
        b.list_version(&query)
            .await
            .expect("version")
            .expect("kept")
    };
    let (by_created, by_title) = (
        list(AssetSort::CreatedAt).await,
        list(AssetSort::Title).await,
    );

    let mut change = assetlib_core::AssetChange::at(chrono::Utc::now());
    change.title = Some("Written, renamed".into());
    a.update_asset(written.id, &change, Log::ANONYMOUS)
        .await
        .expect("update")
        .expect("found");
    seen_within(Duration::from_millis(100), async || {
        version(written.id).await != w0
    })
    .await;
    let renamed = b.get_asset(written.id).await.expect("get").expect("found");
    assert_eq!(renamed.title, "Written, renamed");
    assert_eq!(version(other.id).await, o0, "the other asset's stays");
    assert_ne!(
        list(AssetSort::Title).await,
        by_title,
        "the lists by title move"
    );
    assert_eq!(
        list(AssetSort::CreatedAt).await,
        by_created,
        "the lists by creation time stay"
    );

    let w = version(written.id).await;
    let mut change = assetlib_core::AssetChange::at(chrono::Utc::now());
    change.tags = Some(assetlib_core::TagChange::Set(vec!["moved".into()]));
    a.update_asset(written.id, &change, Log::ANONYMOUS)
        .await
        .expect("update")
        .expect("found");
    seen_within(Duration::from_millis(100), async || {
        version(written.id).await != w
    })
    .await;
    assert_ne!(
        list(AssetSort::CreatedAt).await,
        by_created,
        "a change of tags moves every order"
    );

    let w1 = version(written.id).await;
    a.record_download(other.id).await.expect("download");
    a.flush().await.expect("flush");
    seen_within(Duration::from_millis(100), async || {
        version(written.id).await != w1 && version(other.id).await != o0
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminated_listener_falls_back_to_checks_and_comes_back() {
    let (a, db) = store().await;
    let b = replica(&db).await;
    listening(&b).await;
    let admin = a.pool().get().await.expect("connection");
    let killed: i64 = admin
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = current_database() AND application_name = 'assetlib-notices'",
            &[],
        )
        .await
        .expect("terminate")
        .get(0);
    assert_eq!(killed, 2, "both stores' listening connections");
    seen_within(Duration::from_secs(2), async || !b.listening()).await;
    // Not listening: a write through A shows on B's very next version read, until B
    // listens again.
    let mut seen_down = 0;
    while !b.listening() {
        let before = b.assets_version().await.expect("version");
        a.insert_asset(
            sample_asset("While down", AssetType::Pdf, 1),
            Log::ANONYMOUS,
        )
        .await
        .expect("insert");
        if !b.listening() {
            assert_ne!(b.assets_version().await.expect("version"), before);
            seen_down += 1;
        }
    }
    assert!(seen_down > 0, "the fallback was exercised");
    let before = b.assets_version().await.expect("version");
    a.insert_asset(sample_asset("Back", AssetType::Pdf, 2), Log::ANONYMOUS)
        .await
        .expect("insert");
    seen_within(Duration::from_millis(100), async || {
        b.assets_version().await.expect("version") != before
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_sees_the_other_replicas_write_at_once() {
    let (a, db) = store().await;
    let b = replica(&db).await;
    b.use_replica_sync(ReplicaSync::Strict);
    assert!(!b.listening(), "strict answers nothing from memory");
    let write = library("Strict");
    let id = write.library.id;
    a.put_library(write.clone(), Log::ANONYMOUS)
        .await
        .expect("put");
    let first = view(&b, id).await;
    for round in 0..5 {
        let before = b.assets_version().await.expect("version");
        a.insert_asset(
            sample_asset(&format!("S{round}"), AssetType::Pdf, round),
            Log::ANONYMOUS,
        )
        .await
        .expect("insert");
        assert_ne!(b.assets_version().await.expect("version"), before);
    }
    let mut renamed = write;
    renamed.library.settings.title = "Strict, renamed".into();
    a.put_library(renamed, Log::ANONYMOUS)
        .await
        .expect("replace");
    let after = view(&b, id).await;
    assert_ne!(after.version, first.version);
    assert_eq!(after.views, first.views + 1);
}

/// A create whose wanted slug is taken first tries the slug as wanted (an insert that writes
/// no row), then a numbered one: only the row written moves the database's assets version
/// (and sends a notice), so the create commits to the disk once and the other replicas see one
/// change, not two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_of_a_taken_title_moves_the_version_once() {
    let (a, db) = store().await;
    let (raw, conn) = crate::common::raw_client(db.url()).await;
    let version = async || -> i64 {
        raw.query_one(
            "SELECT sum(version)::bigint FROM assetlib.asset_versions",
            &[],
        )
        .await
        .expect("version")
        .get(0)
    };
    let mut steps = Vec::new();
    for n in 0..4 {
        let before = version().await;
        let stored = a
            .insert_asset(sample_asset("Logo", AssetType::Image, n), Log::ANONYMOUS)
            .await
            .expect("insert");
        assert!(stored.slug.starts_with("logo"), "{}", stored.slug);
        steps.push(version().await - before);
    }
    assert_eq!(steps, [1, 1, 1, 1], "version steps per create of \"Logo\"");
    drop(raw);
    conn.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_reach_the_other_replica_within_a_second() {
    let (a, db) = store().await;
    let b = replica(&db).await;
    let write = library("Counted");
    let id = write.library.id;
    a.put_library(write, Log::ANONYMOUS).await.expect("put");
    let asset = a
        .insert_asset(
            sample_asset("Counted file", AssetType::Pdf, 1),
            Log::ANONYMOUS,
        )
        .await
        .expect("insert");
    // B knows the library (and so answers its views from memory).
    b.record_library_view(id).await.expect("view");
    for _ in 0..50 {
        a.record_library_view(id).await.expect("view");
        a.record_download(asset.id).await.expect("download");
    }
    let within = seen_within(Duration::from_secs(1), async || {
        let seen = view(&b, id).await;
        let listed = b
            .list_libraries(&Default::default())
            .await
            .expect("list")
            .items
            .iter()
            .find(|l| l.library.id == id)
            .map(|l| l.library.view_count);
        let downloads = b
            .get_asset(asset.id)
            .await
            .expect("get")
            .expect("asset")
            .download_count;
        seen.views > 50 && listed >= Some(51) && downloads == 50
    })
    .await;
    assert!(within < Duration::from_secs(1));
}

const CHILD_ENV: &str = "ASSETLIB_PG_COUNTER_CHILD";

/// The child of [`a_kill_loses_at_most_the_last_second_of_counts`]: counts views and
/// downloads until killed, printing each acknowledged total. A no-op in a normal run.
#[test]
fn counter_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let [url, library, asset] = spec.split(' ').collect::<Vec<_>>()[..] else {
        panic!("bad child spec {spec:?}");
    };
    let (library, asset): (uuid::Uuid, uuid::Uuid) =
        (library.parse().expect("id"), asset.parse().expect("id"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let store = PgStore::connect(url).await.expect("child connects");
        let mut n = 0u64;
        loop {
            store.record_library_view(library).await.expect("view");
            store.record_download(asset).await.expect("download");
            n += 1;
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "@@ack {n}");
            let _ = out.flush();
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
    });
}

/// A process counting views and downloads is killed with SIGKILL: every count it
/// acknowledged more than one second before the kill is in the database, and nothing else
/// changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_loses_at_most_the_last_second_of_counts() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let (store, db) = store().await;
    let write = library("Killed counts");
    let id = write.library.id;
    store.put_library(write, Log::ANONYMOUS).await.expect("put");
    let asset = store
        .insert_asset(
            sample_asset("Killed file", AssetType::Pdf, 1),
            Log::ANONYMOUS,
        )
        .await
        .expect("insert");
    let exe = std::env::current_exe().expect("test binary path");
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "notices::counter_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, format!("{} {id} {}", db.url(), asset.id))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the child");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(n) = line.strip_prefix("@@ack ") {
                let _ = tx.send((Instant::now(), n.parse::<u64>().expect("count")));
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(2500)).await;
    child.kill().expect("SIGKILL the child");
    let killed = Instant::now();
    child.wait().expect("wait for the child");
    reader.join().expect("reader");
    let acks: Vec<(Instant, u64)> = rx.try_iter().collect();
    let last = acks.last().expect("the child counted").1;
    let safe = acks
        .iter()
        .filter(|(at, _)| *at + Duration::from_secs(1) <= killed)
        .map(|(_, n)| *n)
        .max()
        .expect("counts over a second before the kill");
    let fresh = replica(&db).await;
    let views = fresh
        .load_library(id)
        .await
        .expect("load")
        .expect("library")
        .library
        .view_count;
    let downloads = fresh
        .get_asset(asset.id)
        .await
        .expect("get")
        .expect("asset")
        .download_count;
    for (what, stored) in [("views", views), ("downloads", downloads)] {
        assert!(
            stored >= safe,
            "{what}: {stored} stored, {safe} acknowledged over a second before the kill"
        );
        assert!(
            stored <= last + 1,
            "{what}: {stored} stored, only {last} counted"
        );
    }
    // Nothing else changed.
    assert_eq!(
        fresh
            .list_assets(&Default::default())
            .await
            .expect("list")
            .total,
        1
    );
}

/// A library's workspace, once viewed, is answered from memory; a `PUT` moving it to another
/// workspace through the other replica is seen within 100 ms (its notice), as the database
/// has it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_moved_to_another_workspace_is_seen_by_the_other_replica() {
    let (a, db) = store().await;
    let b = replica(&db).await;
    listening(&b).await;
    let mut write = library("Kit");
    write.library.settings.workspace_id = Some("acme".into());
    let id = write.library.id;
    a.put_library(write.clone(), Log::ANONYMOUS)
        .await
        .expect("put");
    view(&b, id).await;
    assert_eq!(
        b.library_workspace(id).await.expect("workspace"),
        Some(Some("acme".into()))
    );
    write.library.settings.workspace_id = Some("globex".into());
    a.put_library(write, Log::ANONYMOUS).await.expect("move");
    seen_within(Duration::from_millis(100), async || {
        b.library_workspace(id).await.expect("workspace") == Some(Some("globex".into()))
    })
    .await;
    view(&b, id).await;
    assert_eq!(
        b.library_workspace(id).await.expect("workspace"),
        Some(Some("globex".into()))
    );
}

/// An asset changed through a store moves there, at once, the version of every library
/// holding it, and leaves the other libraries' as they were; their loads show the change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asset_change_moves_the_versions_of_the_libraries_holding_it() {
    let (a, _db) = store().await;
    listening(&a).await;
    let mut assets = Vec::new();
    for (n, title) in ["Held", "Held too", "Elsewhere"].into_iter().enumerate() {
        let asset = sample_asset(title, AssetType::Pdf, n as i64);
        assets.push(
            a.insert_asset(asset, Log::ANONYMOUS)
                .await
                .expect("insert")
                .id,
        );
    }
    // Two libraries hold the first asset; the third holds the last.
    let holding = |title: &str, held: &[uuid::Uuid]| {
        let mut write = library(title);
        write.entries = held
            .iter()
            .enumerate()
            .map(|(order, &asset_id)| assetlib_core::LibraryEntry {
                asset_id,
                section_id: None,
                display_order: order as u32,
                title: None,
                description: None,
            })
            .collect();
        write
    };
    let libraries = [
        holding("First holder", &assets[..2]),
        holding("Second holder", &assets[..1]),
        holding("Bystander", &assets[2..]),
    ];
    let mut seen = Vec::new();
    for write in &libraries {
        a.put_library(write.clone(), Log::ANONYMOUS)
            .await
            .expect("put");
        seen.push(view(&a, write.library.id).await.version);
    }
    for round in 0..3 {
        let title = format!("Held, round {round}");
        let change = assetlib_core::AssetChange {
            title: Some(title.clone()),
            ..assetlib_core::AssetChange::at(chrono::Utc::now())
        };
        a.update_asset(assets[0], &change, Log::ANONYMOUS)
            .await
            .expect("change")
            .expect("found");
        for (write, before) in libraries.iter().zip(&mut seen) {
            let id = write.library.id;
            let now = view(&a, id).await.version;
            let holds = write.entries.iter().any(|e| e.asset_id == assets[0]);
            if holds {
                assert_ne!(
                    now, *before,
                    "{}: a holder's version moves",
                    write.library.settings.title
                );
            } else {
                assert_eq!(now, *before, "a bystander's version stays");
            }
            *before = now;
            let rows = a.load_library(id).await.expect("load").expect("found");
            let titles: Vec<&str> = rows
                .entries
                .iter()
                .map(|e| e.asset.title.as_str())
                .collect();
            assert_eq!(titles.contains(&title.as_str()), holds, "{titles:?}");
        }
    }
}

/// The holders of a slug, kept in memory by each store: this store's replace, rename and
/// delete show at once, another store's write within 100 ms (its notice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_holders_of_a_slug_follow_the_writes_of_either_store() {
    let (a, db) = store().await;
    let b = replica(&db).await;
    listening(&a).await;
    listening(&b).await;
    let ids = async |store: &PgStore, slug: &str| -> Vec<uuid::Uuid> {
        let holders = store.libraries_by_slug(slug).await.expect("by slug");
        holders.into_iter().map(|h| h.id).collect()
    };
    let kit = library("Kit");
    a.put_library(kit.clone(), Log::ANONYMOUS)
        .await
        .expect("put");
    for store in [&a, &b] {
        assert_eq!(ids(store, "kit").await, [kit.library.id]);
        assert_eq!(ids(store, "kit").await, [kit.library.id], "read again");
        assert!(ids(store, "tools").await.is_empty());
    }
    // A library of another workspace takes the slug too, through A.
    let mut other = library("Kit");
    other.library.settings.workspace_id = Some("acme".into());
    a.put_library(other.clone(), Log::ANONYMOUS)
        .await
        .expect("put");
    let both = [kit.library.id, other.library.id];
    assert_eq!(ids(&a, "kit").await, both, "at once on A");
    seen_within(Duration::from_millis(100), async || {
        ids(&b, "kit").await == both
    })
    .await;
    // A renames its first library, through B this time.
    let mut renamed = kit.clone();
    renamed.library.slug = "tools".into();
    renamed.slug_given = true;
    b.put_library(renamed, Log::ANONYMOUS)
        .await
        .expect("rename");
    assert_eq!(ids(&b, "kit").await, [other.library.id], "at once on B");
    assert_eq!(ids(&b, "tools").await, [kit.library.id]);
    seen_within(Duration::from_millis(100), async || {
        ids(&a, "kit").await == [other.library.id] && ids(&a, "tools").await == [kit.library.id]
    })
    .await;
    // A deletes the other one.
    assert!(
        a.delete_library(other.library.id, Log::ANONYMOUS)
            .await
            .expect("delete")
    );
    assert!(ids(&a, "kit").await.is_empty(), "at once on A");
    seen_within(Duration::from_millis(100), async || {
        ids(&b, "kit").await.is_empty()
    })
    .await;
}
