//! `migrate`, `backup` and `restore` on the ready server: a rich sled directory (every asset
//! type with files, drafts, tags, a workspace, a paid library with a pass, a webhook, events,
//! texts for search) moved to PostgreSQL and a bucket of a real S3 server, and into an archive
//! and back on both stores, is answered the same, keys, passes and signed links included;
//! damaged archives and targets that are not empty are refused with nothing written; and each
//! command killed with SIGKILL in the middle finishes on a second run.

use std::path::{Path, PathBuf};
use std::process::Output;

use assetlib::extract::samples;
use reqwest::Method;
use serde_json::{Value, json};

use crate::running::{Running, arg, create_key, kill_when, run_with, spawn, text};

const SERVER: &str = "server";

/// Every scope: the comparisons read everything.
const ALL: &str = "read:assets,write:assets,read:libraries,write:libraries,read:paid,\
                   write:passes,read:events,admin:webhooks";

/// Flags every server of these tests runs with: webhooks to this machine may be registered,
/// and none is ever sent.
const QUIET: [&str; 3] = ["--webhook-workers", "0", "--webhook-allow-private"];

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, bytes).expect("write");
}

/// Runs the server binary with `args` and `env`.
fn ok(out: &Output, what: &str) -> String {
    let said = text(&out.stdout);
    assert!(out.status.success(), "{what}: {said}{}", text(&out.stderr));
    said
}

/// A deployment with something of every kind, and what the comparisons need of it.
struct Rich {
    key: String,
    acme_key: String,
    /// Assets with a file: (id, title).
    files: Vec<(String, String)>,
    libraries: Vec<String>,
    paid: String,
    pass_token: String,
    paid_asset: String,
    signed_link: String,
    image: String,
}

/// Makes a rich deployment in `data` (and `flags`: a database and a bucket, or nothing for
/// sled), through `import` and a running server's API.
async fn make_rich(dir: &Path, data: &Path, flags: &[&str], env: &[(&str, String)]) -> Rich {
    let tree = dir.join("tree");
    write(&tree.join("docs/report.pdf"), &samples::pdf(3, 40));
    write(
        &tree.join("docs/onepager.docx"),
        &samples::docx(&["One pager", "What we do."]),
    );
    write(&tree.join("images/logo.png"), &samples::png(400, 200));
    write(&tree.join("images/photo.jpg"), &samples::jpeg(300, 200));
    write(
        &tree.join("audio/jingle.wav"),
        &samples::wav(1_000, 8_000, 1, None),
    );
    write(
        &tree.join("video/clip.mp4"),
        include_bytes!("../../testdata/media/h264-aac.mp4"),
    );
    write(
        &tree.join("readme.md"),
        b"# Read me\n\nThe brand kit, in one place.\n",
    );
    let acme = dir.join("acme");
    write(&acme.join("plan.pdf"), &samples::pdf(1, 12));
    let data_arg = arg(data);
    let with = |args: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        all.extend(["--data".to_owned(), data_arg.to_owned()]);
        all.extend(flags.iter().map(|f| (*f).to_owned()));
        all
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_with(SERVER, &args, env)
    };
    ok(
        &run(with(&[
            "import",
            arg(&tree),
            "--library",
            "Brand kit",
            "--tags",
            "kit",
        ])),
        "import",
    );
    ok(
        &run(with(&["import", arg(&acme), "--workspace", "acme"])),
        "import acme",
    );
    let last_line = |out: Output| {
        ok(&out, "keys create")
            .lines()
            .last()
            .expect("a key")
            .to_owned()
    };
    let key = last_line(run(with(&[
        "keys", "create", "--scopes", ALL, "--name", "admin",
    ])));
    let acme_key = last_line(run(with(&[
        "keys",
        "create",
        "--scopes",
        "read:assets",
        "--workspace",
        "acme",
    ])));

    let logs = dir.join("logs-rich");
    std::fs::create_dir_all(&logs).expect("logs");
    let mut serve: Vec<&str> = flags.to_vec();
    serve.extend(QUIET);
    let server = Running::start_with(SERVER, data, &logs, &serve, env).await;
    let (_, list) = server
        .get("/api/v1/assets?per_page=100&sort=title&order=asc", &key)
        .await;
    let assets = list["data"].as_array().expect("assets").clone();
    let id_of = |title: &str| -> String {
        assets
            .iter()
            .find(|a| a["title"] == title)
            .and_then(|a| a["id"].as_str())
            .unwrap_or_else(|| panic!("{title} in {list}"))
            .to_owned()
    };
    let files: Vec<(String, String)> = assets
        .iter()
        .map(|a| {
            (
                a["id"].as_str().expect("id").to_owned(),
                a["title"].as_str().expect("title").to_owned(),
            )
        })
        .collect();
    for body in [
        json!({"title": "Website", "asset_type": "link", "external_url": "https://example.com/"}),
        json!({"title": "Launch film", "asset_type": "external_video",
               "external_url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "tags": ["film"]}),
    ] {
        let (status, made) = server
            .send(Method::POST, "/api/v1/assets", &key, Some(body))
            .await;
        assert_eq!(status, 201, "{made}");
    }
    let (status, _) = server
        .send(
            Method::PATCH,
            &format!("/api/v1/assets/{}", id_of("onepager.docx")),
            &key,
            Some(json!({"published": false, "tags": ["draft", "kit"]})),
        )
        .await;
    assert_eq!(status, 200);
    let paid = uuid::Uuid::new_v4().to_string();
    let paid_asset = id_of("report.pdf");
    let (status, body) = server
        .send(Method::PUT, &format!("/api/v1/libraries/{paid}"), &key,
              Some(json!({"title": "Paid reports", "is_paid": true, "price": 20,
                          "sections": [{"title": "Reports", "assets": [{"asset_id": paid_asset, "title": "The report"}]}]})))
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, pass) = server
        .send(
            Method::POST,
            &format!("/api/v1/libraries/{paid}/passes"),
            &key,
            Some(json!({"label": "Order 1", "expires_in": 86_400, "max_downloads": 5})),
        )
        .await;
    assert_eq!(status, 201, "{pass}");
    let pass_token = pass["data"]["token"].as_str().expect("token").to_owned();
    let (status, hook) = server
        .send(
            Method::POST,
            "/api/v1/webhooks",
            &key,
            Some(json!({"url": "http://127.0.0.1:9/hooks", "event_types": ["asset.created"]})),
        )
        .await;
    assert_eq!(status, 201, "{hook}");
    let (_, libraries) = server.get("/api/v1/libraries?limit=100", &key).await;
    let libraries: Vec<String> = libraries["libraries"]
        .as_array()
        .expect("libraries")
        .iter()
        .map(|l| l["id"].as_str().expect("id").to_owned())
        .collect();
    assert_eq!(libraries.len(), 2, "the imported and the paid library");
    // Downloads and views counted before the move.
    let image = id_of("logo.png");
    for _ in 0..2 {
        let r = reqwest::Client::new()
            .get(format!("{}/api/v1/assets/{image}/download", server.base))
            .bearer_auth(&key)
            .send()
            .await
            .expect("download");
        assert_eq!(r.status(), 200);
        let _ = server
            .get(
                &format!("/api/v1/libraries/{paid}?include_assets=true"),
                &key,
            )
            .await;
    }
    let (status, signed) = server
        .get(
            &format!("/api/v1/assets/{}/download-url", id_of("photo.jpg")),
            &key,
        )
        .await;
    assert_eq!(status, 200, "{signed}");
    let signed_link = signed["data"]["url"].as_str().expect("url").to_owned();
    server.terminate().await;
    Rich {
        key,
        acme_key,
        files,
        libraries,
        paid,
        pass_token,
        paid_asset,
        signed_link,
        image,
    }
}

/// One answer of a server, as compared: its status and its body (an event page's `next`
/// left out: places in the log are each store's own).
async fn answer(server: &Running, path: &str, key: &str) -> (u16, Value) {
    let (status, mut body) = server.get(path, key).await;
    if path.starts_with("/api/v1/events")
        && let Some(page) = body.as_object_mut()
    {
        page.remove("next");
    }
    (status, body)
}

/// The bytes and `ETag` of `path`, with `key` or none.
async fn fetch(server: &Running, path: &str, key: Option<&str>) -> (u16, Option<String>, Vec<u8>) {
    let mut r = reqwest::Client::new().get(format!("{}{path}", server.base));
    if let Some(key) = key {
        r = r.header("authorization", key);
    }
    let r = r.send().await.expect("request");
    let etag = r
        .headers()
        .get("etag")
        .map(|v| v.to_str().expect("etag").to_owned());
    (
        r.status().as_u16(),
        etag,
        r.bytes().await.expect("body").to_vec(),
    )
}

/// Asks `target` then `source` every read of `rich`, and checks they answer the same.
async fn same_answers(rich: &Rich, source: &Running, target: &Running) {
    let mut paths = vec![
        "/api/v1/assets?per_page=100&status=any".to_owned(),
        "/api/v1/assets?per_page=100&sort=title&order=asc".to_owned(),
        "/api/v1/libraries?limit=100".to_owned(),
        "/api/v1/libraries/slug/brand-kit?include_assets=true".to_owned(),
        "/api/v1/tags".to_owned(),
        "/api/v1/search?q=report".to_owned(),
        "/api/v1/search?q=sample".to_owned(),
        "/api/v1/webhooks".to_owned(),
        "/api/v1/events?limit=1000".to_owned(),
        format!("/api/v1/libraries/{}/passes", rich.paid),
    ];
    paths.extend(
        rich.files
            .iter()
            .map(|(id, _)| format!("/api/v1/assets/{id}")),
    );
    paths.extend(
        rich.libraries
            .iter()
            .map(|id| format!("/api/v1/libraries/{id}?include_assets=true")),
    );
    for path in &paths {
        let there = answer(target, path, &rich.key).await;
        let here = answer(source, path, &rich.key).await;
        assert_eq!(there.0, 200, "{path}: {}", there.1);
        assert_eq!(there, here, "{path}");
    }
    let acme = "/api/v1/assets?per_page=100";
    assert_eq!(
        answer(target, acme, &rich.acme_key).await,
        answer(source, acme, &rich.acme_key).await
    );
    // Files: the same bytes under the same ETag; an image variant too.
    let bearer = format!("Bearer {}", rich.key);
    for (id, title) in &rich.files {
        let path = format!("/api/v1/assets/{id}/download");
        let there = fetch(target, &path, Some(&bearer)).await;
        assert_eq!(there.0, 200, "{title}");
        assert_eq!(there, fetch(source, &path, Some(&bearer)).await, "{title}");
    }
    let variant = format!("/api/v1/assets/{}/image?w=100&format=png", rich.image);
    let (status, etag, _) = fetch(target, &variant, Some(&bearer)).await;
    assert_eq!(
        (status, etag.clone()),
        (200, fetch(source, &variant, Some(&bearer)).await.1)
    );
    // The link signed before the move, and the pass sold before it.
    let link = &rich.signed_link[rich.signed_link.find("/api/").expect("a path")..];
    assert_eq!(
        fetch(target, link, None).await.0,
        200,
        "a signed link still opens"
    );
    let pass = format!("Pass {}", rich.pass_token);
    let paid = format!("/api/v1/assets/{}/download", rich.paid_asset);
    assert_eq!(
        fetch(target, &paid, Some(&pass)).await.0,
        200,
        "the pass still opens"
    );
    // Keys: the same on both.
    assert_eq!(
        target
            .get("/api/v1/assets?per_page=1", &rich.acme_key)
            .await
            .0,
        200
    );
}

async fn start(data: &Path, logs: &Path, flags: &[&str], env: &[(&str, String)]) -> Running {
    let mut all: Vec<&str> = flags.to_vec();
    all.extend(QUIET);
    Running::start_with(SERVER, data, logs, &all, env).await
}

fn logs(dir: &Path, name: &str) -> PathBuf {
    let logs = dir.join(name);
    std::fs::create_dir_all(&logs).expect("logs");
    logs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sled_directory_backed_up_and_restored_answers_the_same() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (data, copy) = (dir.path().join("data"), dir.path().join("copy"));
    let rich = make_rich(dir.path(), &data, &[], &[]).await;
    let archive = dir.path().join("backup.zip");
    let said = ok(
        &run_with(
            SERVER,
            &["backup", "--out", arg(&archive), "--data", arg(&data)],
            &[],
        ),
        "backup",
    );
    assert!(
        said.contains("backup ") && said.contains(" files ("),
        "{said}"
    );
    let said = ok(
        &run_with(
            SERVER,
            &["restore", arg(&archive), "--data", arg(&copy)],
            &[],
        ),
        "restore",
    );
    assert!(said.starts_with("restored "), "{said}");
    // A second restore into the same (now full) directory is refused.
    let again = run_with(
        SERVER,
        &["restore", arg(&archive), "--data", arg(&copy)],
        &[],
    );
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("not empty"),
        "{}",
        text(&again.stderr)
    );

    let source = start(&data, &logs(dir.path(), "a"), &[], &[]).await;
    let target = start(&copy, &logs(dir.path(), "b"), &[], &[]).await;
    same_answers(&rich, &source, &target).await;
    source.terminate().await;
    target.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_archives_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data = dir.path().join("data");
    let tree = dir.path().join("tree");
    for i in 0..20u32 {
        write(&tree.join(format!("f{i}.png")), &samples::png(40 + i, 30));
    }
    ok(
        &run_with(SERVER, &["import", arg(&tree), "--data", arg(&data)], &[]),
        "import",
    );
    let archive = dir.path().join("backup.zip");
    ok(
        &run_with(
            SERVER,
            &["backup", "--out", arg(&archive), "--data", arg(&data)],
            &[],
        ),
        "backup",
    );
    let size = std::fs::metadata(&archive).expect("size").len() as usize;
    let bytes = std::fs::read(&archive).expect("read");
    let mut flipped = bytes.clone();
    flipped[size / 3] ^= 0x40;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", bytes[..size / 2].to_vec()),
        ("one byte flipped", flipped),
        ("its end cut off", bytes[..size - 30].to_vec()),
    ];
    for (what, damaged) in cases {
        let bad = dir.path().join(format!("{}.zip", what.replace(' ', "-")));
        std::fs::write(&bad, damaged).expect("write");
        let target = dir
            .path()
            .join(format!("target-{}", what.replace(' ', "-")));
        let out = run_with(SERVER, &["restore", arg(&bad), "--data", arg(&target)], &[]);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{what}: {}", text(&out.stdout));
        assert!(err.contains("damaged"), "{what}: {err}");
        // Nothing written: no record and no file.
        let files = target.join("files");
        let stored = std::fs::read_dir(&files).map_or(0, |d| d.count());
        assert_eq!(stored, 0, "{what}: files written");
        let keys = run_with(SERVER, &["keys", "list", "--data", arg(&target)], &[]);
        let key = create_key(SERVER, &target, "read:assets,write:assets");
        let logs = logs(dir.path(), &format!("logs-{}", what.replace(' ', "-")));
        let server = start(&target, &logs, &[], &[]).await;
        let (_, list) = server.get("/api/v1/assets?status=any", &key).await;
        assert_eq!(
            list["pagination"]["total"],
            0,
            "{what}: records written: {}",
            text(&keys.stdout)
        );
        server.terminate().await;
    }
}

fn count_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| {
            if e.path().is_dir() {
                count_files(&e.path())
            } else {
                1
            }
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_and_restore_killed_in_the_middle_finish_on_a_second_run() {
    const FILES: u32 = 300;
    let dir = tempfile::tempdir().expect("temp dir");
    let (data, copy) = (dir.path().join("data"), dir.path().join("copy"));
    let tree = dir.path().join("tree");
    for i in 0..FILES {
        write(
            &tree.join(format!("set-{}/f{i}.png", i % 3)),
            &samples::png(40 + i, 30),
        );
    }
    let data_arg = arg(&data);
    ok(
        &run_with(
            SERVER,
            &["import", arg(&tree), "--library", "Set", "--data", data_arg],
            &[],
        ),
        "import",
    );
    let key = create_key(SERVER, &data, "read:assets,write:assets,read:libraries");
    let archive = dir.path().join("backup.zip");
    let out = arg(&archive);
    let partial = dir.path().join("backup.zip.partial");
    kill_when(
        spawn(&["backup", "--out", out, "--data", data_arg], &[]),
        "backup",
        || std::fs::metadata(&partial).is_ok_and(|m| m.len() > 64 * 1024),
    );
    assert!(!archive.exists(), "a killed backup leaves no archive");
    ok(
        &run_with(SERVER, &["backup", "--out", out, "--data", data_arg], &[]),
        "backup again",
    );
    assert!(archive.exists());

    let copy_arg = arg(&copy);
    let uploads = copy.join("files/uploads");
    kill_when(
        spawn(&["restore", out, "--data", copy_arg], &[]),
        "restore",
        || count_files(&uploads) >= 20,
    );
    let said = ok(
        &run_with(SERVER, &["restore", out, "--data", copy_arg], &[]),
        "restore again",
    );
    assert!(said.starts_with("restored "), "{said}");
    assert_eq!(
        count_files(&copy.join("files")),
        count_files(&data.join("files"))
    );

    let source = start(&data, &logs(dir.path(), "a"), &[], &[]).await;
    let target = start(&copy, &logs(dir.path(), "b"), &[], &[]).await;
    for path in [
        "/api/v1/assets?per_page=100&status=any",
        "/api/v1/libraries?limit=10",
    ] {
        let there = target.get(path, &key).await;
        assert_eq!(there.0, 200, "{}", there.1);
        assert_eq!(there, source.get(path, &key).await, "{path}");
    }
    let (_, list) = target.get("/api/v1/assets?per_page=1", &key).await;
    assert_eq!(list["pagination"]["total"], FILES);
    source.terminate().await;
    target.terminate().await;
}

#[cfg(all(feature = "postgres", feature = "s3"))]
mod on_postgres {
    use super::*;
    use assetlib_testkit::postgres::TestCluster;
    use assetlib_testkit::s3::S3Server;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_rich_sled_directory_migrated_to_postgres_and_s3_answers_the_same() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        let rich = make_rich(dir.path(), &data, &[], &[]).await;
        let database = TestCluster::shared().database().await;
        let bucket = S3Server::shared().bucket().await;
        let env = S3Server::shared().env();
        let files = format!("{}/assets", bucket.url());
        let data_arg = arg(&data);
        let migrate = [
            "migrate",
            "--to-database-url",
            database.url(),
            "--to-files",
            files.as_str(),
            "--data",
            data_arg,
        ];
        let said = ok(&run_with(SERVER, &migrate, &env), "migrate");
        assert!(
            said.starts_with("migrated ") && said.contains("file checksums verified"),
            "{said}"
        );
        // Done: a second run finds a target that is not empty, and refuses it.
        let again = run_with(SERVER, &migrate, &env);
        assert!(!again.status.success());
        assert!(
            text(&again.stderr).contains("not empty"),
            "{}",
            text(&again.stderr)
        );

        let source = start(&data, &logs(dir.path(), "a"), &[], &[]).await;
        let flags = ["--database-url", database.url(), "--files", files.as_str()];
        let target = start(
            &dir.path().join("unused"),
            &logs(dir.path(), "b"),
            &flags,
            &env,
        )
        .await;
        same_answers(&rich, &source, &target).await;
        source.terminate().await;
        target.terminate().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_postgres_deployment_backed_up_while_serving_restores_the_same() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (database, copy_db) = (
            TestCluster::shared().database().await,
            TestCluster::shared().database().await,
        );
        let (data, copy) = (dir.path().join("data"), dir.path().join("copy"));
        let flags = ["--database-url", database.url()];
        let rich = make_rich(dir.path(), &data, &flags, &[]).await;
        // Backed up while a server serves the database.
        let serving = start(&data, &logs(dir.path(), "a"), &flags, &[]).await;
        let archive = dir.path().join("backup.zip");
        let out = arg(&archive);
        let mut backup = vec!["backup", "--out", out, "--data", arg(&data)];
        backup.extend(flags);
        ok(&run_with(SERVER, &backup, &[]), "backup");
        let copy_flags = ["--database-url", copy_db.url()];
        let mut restore = vec!["restore", out, "--data", arg(&copy)];
        restore.extend(copy_flags);
        ok(&run_with(SERVER, &restore, &[]), "restore");
        let target = start(&copy, &logs(dir.path(), "b"), &copy_flags, &[]).await;
        same_answers(&rich, &serving, &target).await;
        serving.terminate().await;
        target.terminate().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_migrate_killed_in_the_middle_finishes_on_a_second_run() {
        const FILES: u32 = 300;
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        let tree = dir.path().join("tree");
        for i in 0..FILES {
            write(&tree.join(format!("f{i}.png")), &samples::png(40 + i, 30));
        }
        let data_arg = arg(&data);
        ok(
            &run_with(SERVER, &["import", arg(&tree), "--data", data_arg], &[]),
            "import",
        );
        let key = create_key(SERVER, &data, "read:assets,write:assets");
        let database = TestCluster::shared().database().await;
        let bucket = S3Server::shared().bucket().await;
        let env = S3Server::shared().env();
        let files = format!("{}/assets", bucket.url());
        let migrate = [
            "migrate",
            "--to-database-url",
            database.url(),
            "--to-files",
            files.as_str(),
            "--data",
            data_arg,
        ];
        let store = bucket.store();
        let runtime = tokio::runtime::Handle::current();
        kill_when(spawn(&migrate, &env), "migrate", || {
            use futures_util::TryStreamExt as _;
            use object_store::ObjectStore as _;
            let listed: Vec<_> = std::thread::scope(|s| {
                s.spawn(|| runtime.block_on(store.list(None).try_collect::<Vec<_>>()))
                    .join()
                    .expect("list")
                    .expect("list the bucket")
            });
            listed.len() >= 20
        });
        let said = ok(&run_with(SERVER, &migrate, &env), "migrate again");
        assert!(
            said.contains(&format!("{FILES} file checksums verified")),
            "{said}"
        );
        let flags = ["--database-url", database.url(), "--files", files.as_str()];
        let source = start(&data, &logs(dir.path(), "a"), &[], &[]).await;
        let target = start(
            &dir.path().join("unused"),
            &logs(dir.path(), "b"),
            &flags,
            &env,
        )
        .await;
        let path = "/api/v1/assets?per_page=100&status=any";
        let there = target.get(path, &key).await;
        assert_eq!(there.0, 200, "{}", there.1);
        assert_eq!(there.1["pagination"]["total"], FILES);
        assert_eq!(there, source.get(path, &key).await);
        source.terminate().await;
        target.terminate().await;
    }
}
