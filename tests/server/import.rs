//! `import`: a tree of files becomes assets as uploads would make them, and a library with a
//! section per folder; a second run adds nothing, a third only the file added; a run killed
//! with SIGKILL in the middle finishes on the next, with no file left behind; and a bucket's
//! prefix is imported into PostgreSQL and another bucket.

use std::path::Path;
use std::process::Command;

use assetlib::extract::samples;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::running::{Running, arg, create_key, kill_when, run, server_binary, spawn, text};

/// The axum server: `import` is the same code in both ready servers.
const SERVER: &str = "server";

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, bytes).expect("write");
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `import` with `args` on `data`: its exit success, standard output and error.
fn import(data: &Path, args: &[&str]) -> (bool, String, String) {
    let mut all = vec!["import"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--data", arg(data)]);
    let out = run(SERVER, &all);
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

/// The library id the summary line names.
fn library_id(summary: &str) -> String {
    summary
        .rsplit("library ")
        .next()
        .expect("a library")
        .trim()
        .to_owned()
}

/// The files the API stored under `uploads/`.
fn uploads(data: &Path) -> usize {
    let Ok(dirs) = std::fs::read_dir(data.join("files/uploads")) else {
        return 0;
    };
    dirs.flatten()
        .map(|d| std::fs::read_dir(d.path()).map_or(0, |f| f.count()))
        .sum()
}

fn titles(assets: &Value) -> Vec<String> {
    assets
        .as_array()
        .expect("an array")
        .iter()
        .map(|a| a["title"].as_str().expect("a title").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_adds_a_tree_once_then_only_what_is_new() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (tree, data, logs) = (
        dir.path().join("tree"),
        dir.path().join("data"),
        dir.path().join("logs"),
    );
    std::fs::create_dir_all(&logs).expect("logs");
    let logo = samples::png(400, 200);
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("top.pdf", samples::pdf(2, 20)),
        ("brand/logo.png", logo.clone()),
        ("brand/guide.pdf", samples::pdf(3, 30)),
        ("docs/copy-of-logo.png", logo.clone()),
        (
            "docs/onepager.docx",
            samples::docx(&["One pager", "What we do."]),
        ),
        ("media/jingle.wav", samples::wav(1_000, 8_000, 1, None)),
        (".hidden/secret.pdf", samples::pdf(1, 5)),
        (
            "junk.bin",
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect(),
        ),
    ];
    for (name, bytes) in &files {
        write(&tree.join(name), bytes);
    }
    std::os::unix::fs::symlink(tree.join("nowhere.pdf"), tree.join("gone.pdf")).expect("link");
    let args = ["--library", "Brand kit", "--tags", "imported,kit"];
    let mut with_tree = vec![arg(&tree)];
    with_tree.extend_from_slice(&args);

    // First run: what can be imported is; the rest is listed and the exit says so.
    let (ok, out, err) = import(&data, &with_tree);
    assert!(!ok, "a file could not be imported: {out}{err}");
    assert!(
        out.contains("7 files found: 5 imported, 1 there already, 2 not imported; library "),
        "{out}{err}"
    );
    assert!(err.contains("not imported: junk.bin: "), "{err}");
    assert!(
        err.contains("not imported: gone.pdf: cannot read it"),
        "{err}"
    );
    let library = library_id(&out);

    // Second run, the unreadable files gone: nothing new.
    std::fs::remove_file(tree.join("junk.bin")).expect("rm");
    std::fs::remove_file(tree.join("gone.pdf")).expect("rm");
    let (ok, out, err) = import(&data, &with_tree);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("6 files found: 0 imported, 6 there already, 0 not imported"),
        "{out}{err}"
    );
    assert_eq!(library_id(&out), library, "the same library");

    // Third run: only the new file.
    let photo = samples::jpeg(300, 200);
    write(&tree.join("brand/new.jpg"), &photo);
    let (ok, out, err) = import(&data, &with_tree);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("7 files found: 1 imported, 6 there already, 0 not imported"),
        "{out}{err}"
    );
    assert_eq!(
        uploads(&data),
        6,
        "one stored file per asset, nothing left behind"
    );

    // What a server answers: the assets as uploads make them, and the library of the tree.
    let key = create_key(SERVER, &data, "read:assets,read:libraries,write:assets");
    let server = Running::start(SERVER, &data, &logs, &[]).await;
    let (status, list) = server
        .get("/api/v1/assets?per_page=100&sort=title&order=asc", &key)
        .await;
    assert_eq!(status, 200, "{list}");
    let assets = list["data"].as_array().expect("data");
    assert_eq!(
        titles(&list["data"]),
        [
            "guide.pdf",
            "jingle.wav",
            "logo.png",
            "new.jpg",
            "onepager.docx",
            "top.pdf"
        ]
    );
    let bytes_of = |title: &str| -> Vec<u8> {
        match title {
            "new.jpg" => photo.clone(),
            _ => files
                .iter()
                .find(|(name, _)| name.rsplit('/').next() == Some(title))
                .map(|(_, b)| b.clone())
                .expect("a file"),
        }
    };
    for (asset, kind) in assets
        .iter()
        .zip(["pdf", "audio", "image", "image", "document", "pdf"])
    {
        let title = asset["title"].as_str().expect("title");
        assert_eq!(asset["asset_type"], kind, "{title}");
        assert_eq!(
            asset["checksum_sha256"],
            hex(&bytes_of(title)).as_str(),
            "{title}"
        );
        assert_eq!(
            asset["tags"],
            serde_json::json!(["imported", "kit"]),
            "{title}"
        );
        assert_eq!(
            (&asset["published"], &asset["is_public"]),
            (&Value::Bool(true), &Value::Bool(false))
        );
        assert!(
            asset["file_path"]
                .as_str()
                .expect("a file")
                .starts_with("uploads/")
        );
        if kind == "image" || kind == "pdf" {
            assert!(asset["thumbnail_path"].is_string(), "{title}: a thumbnail");
        }
    }
    let (status, detail) = server
        .get(
            &format!("/api/v1/libraries/{library}?include_assets=true"),
            &key,
        )
        .await;
    assert_eq!(status, 200, "{detail}");
    assert_eq!(detail["title"], "Brand kit");
    let sections = detail["sections"].as_array().expect("sections");
    let shown: Vec<(String, Vec<String>)> = sections
        .iter()
        .map(|s| {
            (
                s["title"].as_str().expect("title").to_owned(),
                titles(&s["assets"]),
            )
        })
        .collect();
    let owned = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        shown,
        vec![
            (
                "brand".to_owned(),
                owned(&["guide.pdf", "logo.png", "new.jpg"])
            ),
            ("docs".to_owned(), owned(&["onepager.docx"])),
            ("media".to_owned(), owned(&["jingle.wav"])),
        ]
    );
    assert_eq!(titles(&detail["unsectioned_assets"]), ["top.pdf"]);
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_killed_in_the_middle_finishes_on_the_next_run() {
    const FILES: usize = 240;
    let dir = tempfile::tempdir().expect("temp dir");
    let (tree, data, logs) = (
        dir.path().join("tree"),
        dir.path().join("data"),
        dir.path().join("logs"),
    );
    std::fs::create_dir_all(&logs).expect("logs");
    for i in 0..FILES {
        // Distinct bytes: a PNG of its own size each.
        let side = 16 + u32::try_from(i).expect("small");
        write(
            &tree.join(format!("set-{}/image-{i:03}.png", i % 4)),
            &samples::png(side, 16),
        );
    }
    let tree_arg = arg(&tree);
    // Killed once some files are stored, and before the last is.
    let child = spawn(
        &[
            "import",
            tree_arg,
            "--library",
            "Images",
            "--data",
            arg(&data),
        ],
        &[],
    );
    kill_when(child, "the import", || uploads(&data) >= FILES / 5);
    let before = uploads(&data);
    assert!(before < FILES, "killed before the end: {before} stored");

    let (ok, out, err) = import(&data, &[tree_arg, "--library", "Images"]);
    assert!(ok, "{out}{err}");
    let imported: usize = out
        .split(&format!("{FILES} files found: "))
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a summary: {out}"));
    assert!(imported > 0 && imported < FILES, "{out}");
    assert!(
        out.contains(&format!(
            "{} there already, 0 not imported",
            FILES - imported
        )),
        "{out}"
    );
    assert_eq!(uploads(&data), FILES, "each file stored once: {out}");

    let key = create_key(SERVER, &data, "read:assets,read:libraries");
    let server = Running::start(SERVER, &data, &logs, &[]).await;
    let (_, list) = server.get("/api/v1/assets?per_page=1", &key).await;
    assert_eq!(list["pagination"]["total"], FILES, "{list}");
    let (status, detail) = server
        .get(
            &format!("/api/v1/libraries/{}?include_assets=true", library_id(&out)),
            &key,
        )
        .await;
    assert_eq!(status, 200, "{detail}");
    let sections = detail["sections"].as_array().expect("sections");
    assert_eq!(sections.len(), 4);
    let held: usize = sections
        .iter()
        .map(|s| s["assets"].as_array().expect("assets").len())
        .sum();
    assert_eq!(held, FILES);
    server.terminate().await;
}

#[cfg(all(feature = "postgres", feature = "s3"))]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_prefix_is_imported_into_postgres_and_another_bucket() {
    use assetlib_testkit::postgres::TestCluster;
    use assetlib_testkit::s3::S3Server;
    use object_store::ObjectStore as _;
    use object_store::path::Path as ObjectPath;

    let database = TestCluster::shared().database().await;
    let (source, target) = (
        S3Server::shared().bucket().await,
        S3Server::shared().bucket().await,
    );
    let store = source.store();
    let pdf = samples::pdf(2, 10);
    for (key, bytes) in [
        ("incoming/report.pdf", pdf.clone()),
        ("incoming/logos/mark.png", samples::png(64, 64)),
        ("incoming/.trash/old.pdf", samples::pdf(1, 3)),
        ("elsewhere/other.pdf", samples::pdf(1, 4)),
    ] {
        store
            .put(&ObjectPath::from(key), bytes.into())
            .await
            .expect("put");
    }
    let env = S3Server::shared().env();
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("{}/incoming", source.url());
    let files = format!("{}/assets", target.url());
    let flags = ["--database-url", database.url(), "--files", files.as_str()];
    let mut args = vec![
        "import",
        url.as_str(),
        "--library",
        "From the bucket",
        "--workspace",
        "acme",
    ];
    args.extend_from_slice(&flags);
    for round in ["first", "second"] {
        let out = Command::new(server_binary(SERVER))
            .args(&args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("RUST_LOG", "warn")
            .output()
            .expect("run import");
        let (said, err) = (text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{round}: {said}{err}");
        let want = if round == "first" {
            "2 files found: 2 imported, 0 there"
        } else {
            "2 files found: 0 imported, 2 there"
        };
        assert!(said.contains(want), "{round}: {said}");
    }
    let stored = target.keys().await;
    assert_eq!(
        stored
            .iter()
            .filter(|k| k.starts_with("assets/uploads/"))
            .count(),
        2,
        "{stored:?}"
    );

    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).expect("logs");
    let mut serve_flags: Vec<&str> = flags.to_vec();
    serve_flags.push("--webhook-workers");
    serve_flags.push("0");
    let key_out = Command::new(server_binary(SERVER))
        .args([
            "keys",
            "create",
            "--scopes",
            "read:assets",
            "--workspace",
            "acme",
        ])
        .args(flags)
        .env("RUST_LOG", "warn")
        .output()
        .expect("keys create");
    let key = text(&key_out.stdout)
        .lines()
        .last()
        .expect("a key")
        .to_owned();
    let server = Running::start_with(SERVER, dir.path(), &logs, &serve_flags, &env).await;
    let (status, list) = server
        .get("/api/v1/assets?sort=title&order=asc", &key)
        .await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(titles(&list["data"]), ["mark.png", "report.pdf"]);
    assert_eq!(list["data"][1]["checksum_sha256"], hex(&pdf).as_str());
    assert_eq!(list["data"][1]["workspace_id"], "acme");
    server.terminate().await;
}
