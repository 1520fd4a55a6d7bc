//! Search on the ready servers: `search reindex` reads the text of files stored while none
//! was kept, and finds nothing to do when run again; every write a server answered is found
//! by search after the server is killed with SIGKILL and started again; and
//! `--search-language` stems, is checked, and indexes the data again when it changes.

use std::process::Command;
use std::time::Duration;

use assetlib::extract::samples;
use reqwest::Method;
use serde_json::{Value, json};

use crate::running::{Running, SERVERS, create_key, run, text};

/// The titles of the hits of `q` on `server`, with the pages of each hit's text matches.
async fn hits(server: &Running, key: &str, q: &str) -> Vec<(String, Vec<Value>)> {
    let (status, body) = server.get(&format!("/api/v1/search?q={q}"), key).await;
    assert_eq!(status, 200, "{q}: {body}");
    body["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|h| {
            let pages = h["matches"]
                .as_array()
                .expect("matches")
                .iter()
                .filter(|m| m["field"] == "content")
                .map(|m| m["page"].clone())
                .collect();
            (
                h["asset"]["title"].as_str().expect("title").to_owned(),
                pages,
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_reindex_reads_the_files_stored_without_their_text() {
    for example in SERVERS {
        search_reindex_reads_the_files_stored_without_their_text_on(example).await;
    }
}

async fn search_reindex_reads_the_files_stored_without_their_text_on(example: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (data, logs) = (dir.path().join("data"), dir.path().join("logs"));
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::create_dir_all(data.join("files/docs")).unwrap();
    // Five sample words a page: "photo" is on page 2.
    std::fs::write(data.join("files/docs/report.pdf"), samples::pdf(3, 5)).unwrap();
    let key = create_key(example, &data, "read:assets,write:assets");

    // Stored by a server that keeps no text: found by its title only.
    let server = Running::start(example, &data, &logs, &["--search-text-limit", "0"]).await;
    for body in [
        json!({"title": "Annual report", "asset_type": "pdf", "file_path": "docs/report.pdf"}),
        json!({"title": "Site", "asset_type": "link", "external_url": "https://example.com/"}),
    ] {
        let (status, made) = server
            .send(Method::POST, "/api/v1/assets", &key, Some(body))
            .await;
        assert_eq!(status, 201, "{made}");
    }
    assert_eq!(hits(&server, &key, "photo").await, vec![]);
    assert_eq!(
        hits(&server, &key, "annual").await,
        vec![("Annual report".to_owned(), vec![])]
    );
    server.terminate().await;

    let args = ["search", "reindex", "--data", data.to_str().unwrap()];
    let out = run(example, &args);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}{}", text(&out.stderr));
    assert!(
        said.contains("2 assets looked at: 1 files read for their text, 0 could not be read"),
        "{said}"
    );
    // Run again: nothing left to do.
    let out = run(example, &args);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}{}", text(&out.stderr));
    assert!(
        said.contains("2 assets looked at: 0 files read for their text"),
        "{said}"
    );

    let server = Running::start(example, &data, &logs, &[]).await;
    assert_eq!(
        hits(&server, &key, "photo").await,
        vec![("Annual report".to_owned(), vec![json!(2)])]
    );
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answered_write_is_found_after_sigkill() {
    for example in SERVERS {
        every_answered_write_is_found_after_sigkill_on(example).await;
    }
}

async fn every_answered_write_is_found_after_sigkill_on(example: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (data, logs) = (dir.path().join("data"), dir.path().join("logs"));
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::create_dir_all(data.join("files/notes")).unwrap();
    const FILES: usize = 400;
    for n in 0..FILES {
        let text = format!("Notes of round {n}: the word inside is inside{n}x.");
        std::fs::write(data.join(format!("files/notes/n{n}.txt")), text).unwrap();
    }
    let key = create_key(example, &data, "read:assets,write:assets");
    let mut victim = Running::start(example, &data, &logs, &[]).await;
    let client = reqwest::Client::new();
    // Two writers, each its own files: a title word and a word inside the file each.
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (client, key, base) = (client.clone(), key.clone(), victim.base.clone());
            tokio::spawn(async move {
                let mut answered = Vec::new();
                for n in (w..FILES).step_by(2) {
                    let body = json!({"title": format!("Note title{n}y"),
                        "asset_type": "document", "file_path": format!("notes/n{n}.txt")});
                    let r = client
                        .post(format!("{base}/api/v1/assets"))
                        .bearer_auth(&key)
                        .json(&body)
                        .send()
                        .await;
                    match r {
                        Ok(r) if r.status() == 201 => answered.push(n),
                        _ => break,
                    }
                }
                answered
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    victim.child.kill().expect("SIGKILL the server");
    let _ = victim.child.wait();
    let mut answered = Vec::new();
    for w in writers {
        answered.extend(w.await.expect("writer"));
    }
    assert!(answered.len() >= 10, "the writers got going: {answered:?}");

    let server = Running::start(example, &data, &logs, &[]).await;
    for n in answered {
        let title = format!("Note title{n}y");
        // Quoted: whole words, not also the beginning of `title{n}0y`.
        let by_title = hits(&server, &key, &format!("%22title{n}y%22")).await;
        assert_eq!(by_title, vec![(title.clone(), vec![])], "{example}: {n}");
        let by_text = hits(&server, &key, &format!("%22inside{n}x%22")).await;
        assert_eq!(by_text, vec![(title, vec![Value::Null])], "{example}: {n}");
    }
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_language_stems_and_a_change_indexes_again() {
    for example in SERVERS {
        the_search_language_stems_and_a_change_indexes_again_on(example).await;
    }
}

async fn the_search_language_stems_and_a_change_indexes_again_on(example: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (data, logs) = (dir.path().join("data"), dir.path().join("logs"));
    std::fs::create_dir_all(&logs).unwrap();
    let data_arg = data.to_str().unwrap();

    // An unknown language is refused, naming every accepted value.
    let out = run(
        example,
        &["serve", "--data", data_arg, "--search-language", "klingon"],
    );
    let said = text(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("unknown language \"klingon\""), "{said}");
    assert!(
        said.contains("english (en)") && said.contains("turkish (tr)"),
        "{said}"
    );

    let key = create_key(example, &data, "read:assets,write:assets");
    let server = Running::start(example, &data, &logs, &["--search-language", "EN"]).await;
    let body = json!({"title": "Runs and runners", "asset_type": "link",
        "external_url": "https://example.com/runs"});
    let (status, made) = server
        .send(Method::POST, "/api/v1/assets", &key, Some(body))
        .await;
    assert_eq!(status, 201, "{made}");
    let runs = vec![("Runs and runners".to_owned(), vec![])];
    assert_eq!(hits(&server, &key, "running").await, runs);
    server.terminate().await;

    // `search reindex` takes the language too (here from the environment).
    let out = Command::new(crate::running::server_binary(example))
        .args(["search", "reindex", "--data", data_arg])
        .env("ASSETLIB_SEARCH_LANGUAGE", "english")
        .env("RUST_LOG", "warn")
        .output()
        .expect("run search reindex");
    assert!(out.status.success(), "{}", text(&out.stderr));

    // Without a language the directory is indexed again: whole words only.
    let server = Running::start(example, &data, &logs, &[]).await;
    assert_eq!(hits(&server, &key, "running").await, vec![]);
    assert_eq!(hits(&server, &key, "runs").await, runs);
    server.terminate().await;
}
