//! Keys minted over HTTP and browser tokens through `Service::handle` over MemoryStore: a key
//! mints only scopes it has, in its own workspace; a token opens what its scopes and
//! libraries allow, and is refused once expired, tampered with, its minting key revoked, or
//! the signing secret rotated.

use std::time::Duration;

use assetlib_core::{Operation, Reply};
use serde_json::{Value, json};

use crate::workspaces::{Env, env, json_of};

fn bearer(secret: &str) -> String {
    format!("Bearer {secret}")
}

/// The status and JSON body of an answer.
fn answer(r: &Reply) -> (u16, Value) {
    (r.status, json_of(r))
}

impl Env {
    /// Mints a key with `auth`, expecting 201; answers its `data` (with the secret).
    async fn mint(&self, auth: &str, body: Value) -> Value {
        let r = self
            .call(Operation::CreateKey, &[], auth, None, Some(&body))
            .await;
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        json_of(&r)["data"].clone()
    }

    /// Mints a browser token with `auth`; answers the status and body.
    async fn token(&self, auth: &str, body: Value) -> (u16, Value) {
        answer(
            &self
                .call(Operation::CreateToken, &[], auth, None, Some(&body))
                .await,
        )
    }

    /// A token minted by `auth`, expecting 201, as an `Authorization` value.
    async fn token_of(&self, auth: &str, body: Value) -> String {
        let (status, body) = self.token(auth, body).await;
        assert_eq!(status, 201, "{body}");
        bearer(body["data"]["token"].as_str().expect("a token"))
    }
}

#[tokio::test]
async fn a_key_mints_only_its_scopes_in_its_own_workspace() {
    let e = env().await;
    // A key without admin:keys mints none.
    let reader = e
        .mint(
            &e.global,
            json!({"name": "reader", "scopes": ["read:assets", "read:libraries"]}),
        )
        .await;
    assert_eq!(reader["workspace_id"], Value::Null);
    assert!(reader["secret"].as_str().unwrap().starts_with("alk_"));
    let reader = bearer(reader["secret"].as_str().unwrap());
    let body = json!({"name": "x", "scopes": ["read:assets"]});
    let (status, refused) = answer(
        &e.call(Operation::CreateKey, &[], &reader, None, Some(&body))
            .await,
    );
    assert_eq!(status, 403, "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("admin:keys"));

    // A key mints only scopes it has.
    let minter = e
        .mint(
            &e.global,
            json!({"name": "minter", "scopes": ["admin:keys", "read:assets"]}),
        )
        .await;
    let minter = bearer(minter["secret"].as_str().unwrap());
    let body = json!({"name": "x", "scopes": ["read:assets", "write:assets"]});
    let (status, refused) = answer(
        &e.call(Operation::CreateKey, &[], &minter, None, Some(&body))
            .await,
    );
    assert_eq!(status, 403, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("write:assets")
    );

    // A workspace key mints in its workspace alone; a global key anywhere.
    let mine = e
        .mint(
            &e.acme,
            json!({"name": "acme site", "scopes": ["read:assets"], "expires_in": 3600}),
        )
        .await;
    assert_eq!(mine["workspace_id"], "acme");
    assert!(mine["expires_at"].is_string());
    let body = json!({"name": "x", "scopes": ["read:assets"], "workspace_id": "globex"});
    let (status, refused) = answer(
        &e.call(Operation::CreateKey, &[], &e.acme, None, Some(&body))
            .await,
    );
    assert_eq!(status, 403, "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("globex"));
    let theirs = e.mint(&e.global, body).await;
    assert_eq!(theirs["workspace_id"], "globex");

    // Lists, reads and revocations see the caller's workspace alone.
    let listed = |auth: String| {
        let e = &e;
        async move {
            let r = e
                .call(Operation::ListKeys, &[], &auth, Some("per_page=100"), None)
                .await;
            assert_eq!(r.status, 200);
            let page = json_of(&r);
            assert!(
                page["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|k| k.get("secret").is_none())
            );
            page["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k["workspace_id"].as_str().unwrap_or("-").to_owned())
                .collect::<Vec<_>>()
        }
    };
    let acme_keys = listed(e.acme.clone()).await;
    assert_eq!(
        acme_keys,
        ["acme", "acme"],
        "its own key and the one it minted"
    );
    assert!(listed(e.global.clone()).await.len() >= 7);
    let theirs_id = theirs["id"].as_str().unwrap();
    let missing = uuid::Uuid::new_v4().to_string();
    for op in [Operation::GetKey, Operation::RevokeKey] {
        let of_theirs = e.call(op, &[theirs_id], &e.acme, None, None).await;
        let of_none = e.call(op, &[&missing], &e.acme, None, None).await;
        assert_eq!(of_theirs.status, 404, "{op:?}");
        assert_eq!(
            (of_theirs.status, &of_theirs.body),
            (of_none.status, &of_none.body),
            "{op:?}"
        );
    }
    let r = e
        .call(Operation::GetKey, &[theirs_id], &e.globex, None, None)
        .await;
    assert_eq!(json_of(&r)["data"]["name"], "x");

    // A revoked key stops at once; revoking it again is 204.
    let mine_id = mine["id"].as_str().unwrap();
    let mine_key = bearer(mine["secret"].as_str().unwrap());
    let r = e
        .call(Operation::ListAssets, &[], &mine_key, None, None)
        .await;
    assert_eq!(r.status, 200);
    for _ in 0..2 {
        let r = e
            .call(Operation::RevokeKey, &[mine_id], &e.acme, None, None)
            .await;
        assert_eq!(r.status, 204);
    }
    let r = e
        .call(Operation::ListAssets, &[], &mine_key, None, None)
        .await;
    assert_eq!(r.status, 401);
    let r = e
        .call(Operation::GetKey, &[mine_id], &e.acme, None, None)
        .await;
    assert!(json_of(&r)["data"]["revoked_at"].is_string());
}

#[tokio::test]
async fn a_token_opens_what_its_scopes_and_libraries_allow() {
    let e = env().await;
    e.put_readme().await;
    let document = |title: &str| {
        json!({"title": title, "asset_type": "document", "file_path": "notes/readme.txt",
            "published": true})
    };
    let inside = e.asset(&e.acme, document("Inside")).await;
    let outside = e.asset(&e.acme, document("Outside")).await;
    let theirs = e.asset(&e.globex, document("Theirs")).await;
    let (inside, outside) = (
        inside["id"].as_str().unwrap(),
        outside["id"].as_str().unwrap(),
    );
    let theirs = theirs["id"].as_str().unwrap();
    let shelf = uuid::Uuid::new_v4().to_string();
    let other = uuid::Uuid::new_v4().to_string();
    for (id, assets) in [(&shelf, vec![inside]), (&other, vec![outside])] {
        let assets: Vec<Value> = assets.iter().map(|a| json!({"asset_id": a})).collect();
        let doc = json!({"title": "Shelf", "sections": [{"title": "All", "assets": assets}]});
        let r = e
            .call(Operation::PutLibrary, &[id], &e.acme, None, Some(&doc))
            .await;
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    }

    // Only read scopes, only the caller's, only its workspace's libraries, a day at most.
    for (body, status, field) in [
        (json!({"scopes": ["write:assets"]}), 400, "scopes[0]"),
        (
            json!({"scopes": ["read:assets"], "expires_in": 86401}),
            400,
            "expires_in",
        ),
        (
            json!({"scopes": ["read:assets"], "library_ids": [uuid::Uuid::new_v4()]}),
            400,
            "library_ids[0]",
        ),
    ] {
        let (got, answer) = e.token(&e.acme, body.clone()).await;
        assert_eq!(
            (got, answer["field"].as_str()),
            (status, Some(field)),
            "{body}"
        );
    }
    let (got, answer) = e
        .token(
            &e.globex,
            json!({"scopes": ["read:assets"], "library_ids": [shelf]}),
        )
        .await;
    assert_eq!(
        (got, answer["field"].as_str()),
        (400, Some("library_ids[0]")),
        "another workspace's library is one that does not exist"
    );
    let narrow = e
        .mint(
            &e.global,
            json!({"name": "narrow", "scopes": ["read:assets"]}),
        )
        .await;
    let narrow = bearer(narrow["secret"].as_str().unwrap());
    let (got, answer) = e.token(&narrow, json!({"scopes": ["read:paid"]})).await;
    assert_eq!(got, 403, "{answer}");
    assert!(answer["message"].as_str().unwrap().contains("read:paid"));

    // A token of its workspace: reads, no writes, nothing of another workspace, no token.
    let (got, made) = e
        .token(
            &e.acme,
            json!({"scopes": ["read:libraries", "read:assets"]}),
        )
        .await;
    assert_eq!(got, 201, "{made}");
    let data = &made["data"];
    assert_eq!(data["workspace_id"], "acme");
    assert_eq!(data["scopes"], json!(["read:assets", "read:libraries"]));
    assert_eq!(data["library_ids"], Value::Null);
    assert!(data["token"].as_str().unwrap().starts_with("alt_"));
    let token = bearer(data["token"].as_str().unwrap());
    let get = |op: Operation, id: &str, auth: &str| {
        let (e, id, auth) = (&e, id.to_owned(), auth.to_owned());
        async move { e.call(op, &[&id], &auth, None, None).await }
    };
    assert_eq!(get(Operation::GetAsset, outside, &token).await.status, 200);
    assert_eq!(get(Operation::GetLibrary, &other, &token).await.status, 200);
    let of_theirs = get(Operation::GetAsset, theirs, &token).await;
    let of_none = get(
        Operation::GetAsset,
        &uuid::Uuid::new_v4().to_string(),
        &token,
    )
    .await;
    assert_eq!((of_theirs.status, of_none.status), (404, 404));
    let r = e
        .call(
            Operation::CreateAsset,
            &[],
            &token,
            None,
            Some(&document("Nope")),
        )
        .await;
    assert_eq!(r.status, 403, "a token reads only");
    let (got, _) = e.token(&token, json!({"scopes": ["read:assets"]})).await;
    assert_eq!(got, 403, "a token mints no token");

    // A token limited to a library opens it and what it shows, nothing else.
    let bound = e
        .token_of(
            &e.acme,
            json!({"scopes": ["read:libraries", "read:assets"], "library_ids": [shelf]}),
        )
        .await;
    assert_eq!(get(Operation::GetLibrary, &shelf, &bound).await.status, 200);
    assert_eq!(get(Operation::GetAsset, inside, &bound).await.status, 200);
    assert_eq!(get(Operation::GetLibrary, &other, &bound).await.status, 403);
    assert_eq!(get(Operation::GetAsset, outside, &bound).await.status, 403);
    let r = e.call(Operation::ListAssets, &[], &bound, None, None).await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn a_token_is_refused_once_expired_tampered_revoked_or_rotated() {
    let e = env().await;
    let read = |auth: &str| {
        let (e, auth) = (&e, auth.to_owned());
        async move { answer(&e.call(Operation::ListAssets, &[], &auth, None, None).await) }
    };
    let message = |(status, body): (u16, Value)| {
        assert_eq!(status, 401, "{body}");
        body["message"].as_str().unwrap_or("").to_owned()
    };
    let scopes = json!({"scopes": ["read:assets"]});

    // Expired.
    let short = e
        .token_of(&e.acme, json!({"scopes": ["read:assets"], "expires_in": 1}))
        .await;
    assert_eq!(read(&short).await.0, 200);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_eq!(message(read(&short).await), "Browser token has expired");

    // Tampered: any character changed.
    let token = e.token_of(&e.acme, scopes.clone()).await;
    assert_eq!(read(&token).await.0, 200);
    let at = token.len() - 10;
    let flipped = if &token[at..=at] == "A" { "B" } else { "A" };
    let tampered = format!("{}{flipped}{}", &token[..at], &token[at + 1..]);
    assert_eq!(message(read(&tampered).await), "Invalid browser token");
    assert_eq!(
        message(read(&format!("{token}x")).await),
        "Invalid browser token"
    );

    // Its minting key revoked.
    let minter = e
        .mint(
            &e.global,
            json!({"name": "page minter", "scopes": ["read:assets"]}),
        )
        .await;
    let by_minter = e
        .token_of(&bearer(minter["secret"].as_str().unwrap()), scopes.clone())
        .await;
    assert_eq!(read(&by_minter).await.0, 200);
    let id = minter["id"].as_str().unwrap();
    let r = e
        .call(Operation::RevokeKey, &[id], &e.global, None, None)
        .await;
    assert_eq!(r.status, 204);
    assert!(message(read(&by_minter).await).contains("revoked"));

    // The signing secret rotated.
    assert_eq!(read(&token).await.0, 200);
    e.service.rotate_signing_secret().await.unwrap();
    assert_eq!(message(read(&token).await), "Invalid browser token");
    let fresh = e.token_of(&e.acme, scopes).await;
    assert_eq!(read(&fresh).await.0, 200, "a token minted after works");

    // Scopes beyond the minting key's are refused when minting (see above), and a key
    // reading with the scopes a token lacks is 403.
    let libraries_only = e
        .token_of(&e.acme, json!({"scopes": ["read:libraries"]}))
        .await;
    assert_eq!(read(&libraries_only).await.0, 403);
}
