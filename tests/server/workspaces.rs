//! The ready servers' `keys create --workspace`: a key of one workspace, listed with it, whose
//! creates land there and whose lists show that workspace alone; a malformed workspace is
//! refused before anything is written.

use reqwest::Method;
use serde_json::json;

use crate::running::{Running, SERVERS, create_key, run, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_create_makes_a_key_of_one_workspace() {
    for example in SERVERS {
        keys_create_makes_a_key_of_one_workspace_on(example).await;
    }
}

async fn keys_create_makes_a_key_of_one_workspace_on(example: &str) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let data_arg = data.to_str().unwrap();
    let scopes = "read:assets,write:assets,read:libraries,write:libraries";
    let global = create_key(example, &data, scopes);

    let bad = run(
        example,
        &[
            "keys",
            "create",
            "--scopes",
            scopes,
            "--workspace",
            "a b",
            "--data",
            data_arg,
        ],
    );
    assert!(!bad.status.success(), "a malformed workspace is refused");
    let stderr = text(&bad.stderr);
    assert!(stderr.contains("--workspace"), "{example}: {stderr}");
    assert!(!text(&bad.stdout).contains("alk_"));

    let out = run(
        example,
        &[
            "keys",
            "create",
            "--scopes",
            scopes,
            "--workspace",
            "acme",
            "--name",
            "acme-site",
            "--data",
            data_arg,
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let acme = stdout.lines().last().expect("a key").to_owned();
    assert!(acme.starts_with("alk_"), "{stdout}");
    assert!(stdout.contains("workspace acme"), "{stdout}");
    let listing = text(&run(example, &["keys", "list", "--data", data_arg]).stdout);
    assert_eq!(listing.lines().count(), 2, "{listing}");
    assert!(
        listing
            .lines()
            .any(|l| l.contains("acme-site") && l.contains("workspace acme")),
        "{listing}"
    );

    let server = Running::start(example, &data, &logs, &[]).await;
    let link = |title: &str| json!({"title": title, "asset_type": "link", "external_url": "https://example.com/"});
    let (status, made) = server
        .send(Method::POST, "/api/v1/assets", &acme, Some(link("Mine")))
        .await;
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["data"]["workspace_id"], "acme");
    let (status, other) = server
        .send(
            Method::POST,
            "/api/v1/assets",
            &global,
            Some(link("Theirs")),
        )
        .await;
    assert_eq!(status, 201, "{other}");
    assert_eq!(other["data"]["workspace_id"], serde_json::Value::Null);
    let (_, mine) = server.get("/api/v1/assets", &acme).await;
    assert_eq!(mine["pagination"]["total"], 1, "{mine}");
    assert_eq!(mine["data"][0]["id"], made["data"]["id"]);
    let theirs = other["data"]["id"].as_str().unwrap();
    let (status, _) = server.get(&format!("/api/v1/assets/{theirs}"), &acme).await;
    assert_eq!(status, 404);
    let (_, all) = server.get("/api/v1/assets", &global).await;
    assert_eq!(all["pagination"]["total"], 2, "{all}");
    server.terminate().await;
}
