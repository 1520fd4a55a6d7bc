//! Workspaces through `Service::handle` over MemoryStore: a workspace key sees and writes its
//! own workspace alone, and every record of another answers exactly as a missing one.

use assetlib_core::{Config, Operation, RawRequest, Reply, Scope, Service};
use serde_json::{Value, json};

pub(crate) struct Env {
    pub(crate) service: Service,
    pub(crate) global: String,
    pub(crate) acme: String,
    pub(crate) globex: String,
}

pub(crate) async fn env() -> Env {
    let service = Service::in_memory(Config::default());
    let key = |workspace: Option<&'static str>| {
        let service = service.clone();
        async move {
            let (_, key) = service
                .create_workspace_key("k", Scope::ALL.to_vec(), None, workspace)
                .await
                .unwrap();
            format!("Bearer {key}")
        }
    };
    Env {
        global: key(None).await,
        acme: key(Some("acme")).await,
        globex: key(Some("globex")).await,
        service,
    }
}

/// An operation, another workspace's path ids, a missing record's, and the body.
type Case<'a> = (Operation, Vec<&'a str>, Vec<&'a str>, Option<Value>);

/// What a caller can compare of an answer: status, headers and body.
fn seen(r: &Reply) -> (u16, Vec<(&'static str, String)>, String) {
    (
        r.status,
        r.headers.clone(),
        String::from_utf8_lossy(&r.body).into_owned(),
    )
}

pub(crate) fn json_of(r: &Reply) -> Value {
    serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("{e}: {:?}", r.body))
}

impl Env {
    pub(crate) async fn call(
        &self,
        op: Operation,
        ids: &[&str],
        auth: &str,
        query: Option<&str>,
        body: Option<&Value>,
    ) -> Reply {
        let bytes = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
        self.service
            .handle(
                op,
                ids,
                RawRequest {
                    authorization: Some(auth.as_bytes()),
                    content_type: body.map(|_| &b"application/json"[..]),
                    query,
                    body: bytes.into(),
                    ..RawRequest::default()
                },
            )
            .await
    }

    /// Puts the file `notes/readme.txt` (a document) in the service's files.
    pub(crate) async fn put_readme(&self) {
        self.service
            .files()
            .put("notes/readme.txt", "Hello there, world".into())
            .await
            .unwrap();
    }

    /// Creates an asset with `auth`, expecting 201.
    pub(crate) async fn asset(&self, auth: &str, body: Value) -> Value {
        let r = self
            .call(Operation::CreateAsset, &[], auth, None, Some(&body))
            .await;
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        json_of(&r)["data"].clone()
    }
}

#[tokio::test]
async fn creates_land_in_the_keys_workspace_and_naming_another_is_403() {
    let e = env().await;
    let mine = e
        .asset(
            &e.acme,
            json!({"title": "Logo", "asset_type": "link",
            "external_url": "https://example.com/"}),
        )
        .await;
    assert_eq!(mine["workspace_id"], "acme");
    let same = e
        .asset(
            &e.acme,
            json!({"title": "Logo", "asset_type": "link",
            "external_url": "https://example.com/", "workspace_id": "acme"}),
        )
        .await;
    assert_eq!(same["workspace_id"], "acme");
    assert_eq!(same["slug"], "logo-2");
    let body = json!({"title": "Logo", "asset_type": "link",
        "external_url": "https://example.com/", "workspace_id": "globex"});
    let r = e
        .call(Operation::CreateAsset, &[], &e.acme, None, Some(&body))
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        json_of(&r),
        json!({"error": "Insufficient permissions",
            "message": "This key reads and writes its own workspace only, not workspace globex"})
    );
    // A global key writes where it says, or in no workspace.
    assert_eq!(e.asset(&e.global, body).await["workspace_id"], "globex");
    let none = e
        .asset(
            &e.global,
            json!({"title": "Logo", "asset_type": "link",
            "external_url": "https://example.com/"}),
        )
        .await;
    assert_eq!(none["workspace_id"], Value::Null);
    assert_eq!(none["slug"], "logo", "slugs are unique per workspace");

    // A library of a workspace key is of its workspace; naming another is 403.
    let lib = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Kit", "sections": [{"title": "All",
        "assets": []}]});
    let r = e
        .call(Operation::PutLibrary, &[&lib], &e.acme, None, Some(&doc))
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(json_of(&r)["workspace_id"], "acme");
    let doc = json!({"title": "Kit", "workspace_id": "globex"});
    let other = uuid::Uuid::new_v4().to_string();
    let r = e
        .call(Operation::PutLibrary, &[&other], &e.acme, None, Some(&doc))
        .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn lists_and_tags_show_the_keys_workspace_alone() {
    let e = env().await;
    for (key, tag) in [
        (&e.acme, "brand"),
        (&e.globex, "print"),
        (&e.global, "misc"),
    ] {
        let body = json!({"title": "A", "asset_type": "link", "external_url": "https://e.com/"});
        let made = e.asset(key, body).await;
        let id = made["id"].as_str().unwrap().to_owned();
        let r = e
            .call(
                Operation::UpdateAsset,
                &[&id],
                key,
                None,
                Some(&json!({"tags": [tag]})),
            )
            .await;
        assert_eq!(r.status, 200);
        let lib = uuid::Uuid::new_v4().to_string();
        let r = e
            .call(
                Operation::PutLibrary,
                &[&lib],
                key,
                None,
                Some(&json!({"title": "Kit"})),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    let workspaces = |r: &Reply, list: &str| -> Vec<Value> {
        json_of(r)[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["workspace_id"].clone())
            .collect()
    };
    let r = e
        .call(Operation::ListAssets, &[], &e.acme, None, None)
        .await;
    assert_eq!(workspaces(&r, "data"), [json!("acme")]);
    assert_eq!(json_of(&r)["pagination"]["total"], 1);
    let r = e
        .call(Operation::ListLibraries, &[], &e.acme, None, None)
        .await;
    assert_eq!(workspaces(&r, "libraries"), [json!("acme")]);
    let r = e.call(Operation::ListTags, &[], &e.acme, None, None).await;
    assert_eq!(json_of(&r)["data"], json!([{"tag": "brand", "count": 1}]));
    for op in [Operation::ListAssets, Operation::ListLibraries] {
        let r = e
            .call(op, &[], &e.acme, Some("workspace_id=globex"), None)
            .await;
        assert_eq!(r.status, 403, "{op:?}");
        assert!(json_of(&r)["message"].as_str().unwrap().contains("globex"));
        let r = e
            .call(op, &[], &e.acme, Some("workspace_id=acme"), None)
            .await;
        assert_eq!(r.status, 200, "{op:?}");
    }
    // A global key sees every workspace, and filters by one.
    let r = e
        .call(Operation::ListAssets, &[], &e.global, None, None)
        .await;
    assert_eq!(json_of(&r)["pagination"]["total"], 3);
    let r = e
        .call(Operation::ListTags, &[], &e.global, None, None)
        .await;
    assert_eq!(json_of(&r)["data"].as_array().unwrap().len(), 3);
    let r = e
        .call(
            Operation::ListAssets,
            &[],
            &e.global,
            Some("workspace_id=globex"),
            None,
        )
        .await;
    assert_eq!(workspaces(&r, "data"), [json!("globex")]);
}

#[tokio::test]
async fn another_workspaces_records_answer_as_missing_ones() {
    let e = env().await;
    e.put_readme().await;
    // globex's records: a document, a library holding it, a pass of the library.
    let doc = e
        .asset(
            &e.globex,
            json!({"title": "Readme", "asset_type": "document",
            "file_path": "notes/readme.txt"}),
        )
        .await;
    let asset = doc["id"].as_str().unwrap().to_owned();
    let library = uuid::Uuid::new_v4().to_string();
    let body = json!({"title": "Kit", "slug": "kit", "allow_bulk_download": true,
        "sections": [{"title": "All", "assets": [{"asset_id": asset}]}]});
    let r = e
        .call(
            Operation::PutLibrary,
            &[&library],
            &e.globex,
            None,
            Some(&body),
        )
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let r = e
        .call(
            Operation::CreatePass,
            &[&library],
            &e.globex,
            None,
            Some(&json!({"label": "order 1", "expires_in": 3600})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let pass = json_of(&r)["data"]["id"].as_str().unwrap().to_owned();

    let missing = uuid::Uuid::new_v4().to_string();
    let patch = json!({"title": "Mine now"});
    let bulk = |id: &str| json!({"action": "add_tags", "ids": [id], "changes": {"tags": ["x"]}});
    let pass_doc = json!({"label": "order 2", "expires_in": 3600});
    let cases: Vec<Case<'_>> = vec![
        (Operation::GetAsset, vec![&asset], vec![&missing], None),
        (
            Operation::UpdateAsset,
            vec![&asset],
            vec![&missing],
            Some(patch),
        ),
        (Operation::DeleteAsset, vec![&asset], vec![&missing], None),
        (Operation::AssetUsage, vec![&asset], vec![&missing], None),
        (
            Operation::RemakeThumbnail,
            vec![&asset],
            vec![&missing],
            None,
        ),
        (Operation::DownloadAsset, vec![&asset], vec![&missing], None),
        (
            Operation::AssetDownloadUrl,
            vec![&asset],
            vec![&missing],
            None,
        ),
        (Operation::GetLibrary, vec![&library], vec![&missing], None),
        (
            Operation::GetLibraryBySlug,
            vec!["kit"],
            vec!["none-such"],
            None,
        ),
        (
            Operation::DeleteLibrary,
            vec![&library],
            vec![&missing],
            None,
        ),
        (
            Operation::DownloadLibrary,
            vec![&library],
            vec![&missing],
            None,
        ),
        (
            Operation::LibraryDownloadUrl,
            vec![&library],
            vec![&missing],
            None,
        ),
        (Operation::ListPasses, vec![&library], vec![&missing], None),
        (
            Operation::CreatePass,
            vec![&library],
            vec![&missing],
            Some(pass_doc),
        ),
        (
            Operation::GetPass,
            vec![&library, &pass],
            vec![&missing, &pass],
            None,
        ),
        (
            Operation::RevokePass,
            vec![&library, &pass],
            vec![&missing, &pass],
            None,
        ),
    ];
    for (op, theirs, none, body) in cases {
        let of_theirs = e.call(op, &theirs, &e.acme, None, body.as_ref()).await;
        let of_none = e.call(op, &none, &e.acme, None, body.as_ref()).await;
        assert!(of_theirs.status >= 400, "{op:?}: {}", of_theirs.status);
        let (status, headers, body) = seen(&of_none);
        let body = body.replace(&missing, &asset);
        assert_eq!(seen(&of_theirs), (status, headers, body), "{op:?}");
    }
    let of_theirs = e
        .call(
            Operation::BulkAssets,
            &[],
            &e.acme,
            None,
            Some(&bulk(&asset)),
        )
        .await;
    let of_none = e
        .call(
            Operation::BulkAssets,
            &[],
            &e.acme,
            None,
            Some(&bulk(&missing)),
        )
        .await;
    let (status, headers, body) = seen(&of_none);
    assert_eq!(
        seen(&of_theirs),
        (status, headers, body.replace(&missing, &asset))
    );
    // A replace of their library is refused as a library of no such id would be found;
    // their asset is to be placed as a missing one is.
    let r = e
        .call(
            Operation::PutLibrary,
            &[&library],
            &e.acme,
            None,
            Some(&json!({"title": "Taken"})),
        )
        .await;
    assert_eq!(r.status, 404);
    let mine = uuid::Uuid::new_v4().to_string();
    let placing = |id: &str| {
        json!({"title": "Mine", "sections": [{"title": "S",
        "assets": [{"asset_id": id}]}]})
    };
    let of_theirs = e
        .call(
            Operation::PutLibrary,
            &[&mine],
            &e.acme,
            None,
            Some(&placing(&asset)),
        )
        .await;
    let of_none = e
        .call(
            Operation::PutLibrary,
            &[&mine],
            &e.acme,
            None,
            Some(&placing(&missing)),
        )
        .await;
    let (status, headers, body) = seen(&of_none);
    assert_eq!(status, 400);
    assert_eq!(
        seen(&of_theirs),
        (status, headers, body.replace(&missing, &asset))
    );

    // Nothing of theirs changed, and no view was counted.
    let r = e
        .call(Operation::GetAsset, &[&asset], &e.globex, None, None)
        .await;
    assert_eq!(json_of(&r)["data"]["title"], "Readme");
    assert!(json_of(&r)["data"]["tags"].as_array().unwrap().is_empty());
    let r = e
        .call(Operation::GetLibrary, &[&library], &e.globex, None, None)
        .await;
    assert_eq!(json_of(&r)["view_count"], 1);
    let r = e
        .call(
            Operation::GetPass,
            &[&library, &pass],
            &e.globex,
            None,
            None,
        )
        .await;
    assert_eq!(json_of(&r)["data"]["revoked_at"], Value::Null);

    // A global key places an asset of one workspace in a library of another: 400.
    let r = e
        .call(
            Operation::PutLibrary,
            &[&mine],
            &e.global,
            None,
            Some(
                &json!({"title": "Mixed", "workspace_id": "acme", "sections": [{"title": "S",
                "assets": [{"asset_id": asset}]}]}),
            ),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        json_of(&r)["message"]
            .as_str()
            .unwrap()
            .contains("another workspace")
    );
}

#[tokio::test]
async fn events_name_their_records_workspace_and_a_workspace_feed_shows_its_own() {
    let e = env().await;
    let lib = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Kit", "sections": []});
    let r = e
        .call(Operation::PutLibrary, &[&lib], &e.acme, None, Some(&doc))
        .await;
    assert_eq!(r.status, 201);
    let r = e
        .call(
            Operation::CreatePass,
            &[&lib],
            &e.acme,
            None,
            Some(&json!({"label": "order", "expires_in": 3600})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let pass = json_of(&r)["data"]["id"].as_str().unwrap().to_owned();
    // Writes of a global key name the workspace of what they change.
    let r = e
        .call(Operation::RevokePass, &[&lib, &pass], &e.global, None, None)
        .await;
    assert_eq!(r.status, 204);
    let r = e
        .call(Operation::DeleteLibrary, &[&lib], &e.global, None, None)
        .await;
    assert_eq!(r.status, 204);
    let (globex_key, _) = e
        .service
        .create_workspace_key("spare", Scope::ALL.to_vec(), None, Some("globex"))
        .await
        .unwrap();
    assert!(e.service.revoke_key(globex_key.id).await.unwrap());
    e.asset(
        &e.globex,
        json!({"title": "Theirs", "asset_type": "link", "external_url": "https://example.com/"}),
    )
    .await;

    let feed = |key: &str| {
        let key = key.to_owned();
        let e = &e;
        async move {
            let r = e
                .call(Operation::ListEvents, &[], &key, Some("limit=100"), None)
                .await;
            assert_eq!(r.status, 200);
            json_of(&r)["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|ev| {
                    (
                        ev["type"].as_str().unwrap().to_owned(),
                        ev["workspace_id"].as_str().unwrap_or("-").to_owned(),
                    )
                })
                .collect::<Vec<_>>()
        }
    };
    let pairs = |list: &[(&str, &str)]| {
        list.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect::<Vec<_>>()
    };
    let acme = pairs(&[
        ("library.created", "acme"),
        ("pass.created", "acme"),
        ("pass.revoked", "acme"),
        ("library.deleted", "acme"),
    ]);
    // The workspace's own key's creation is among its events.
    assert_eq!(
        feed(&e.acme).await,
        [pairs(&[("key.created", "acme")]), acme.clone()].concat()
    );
    let everything = feed(&e.global).await;
    // The three keys of `env` first (made by no key, but in their workspaces).
    assert_eq!(
        everything,
        [
            pairs(&[
                ("key.created", "-"),
                ("key.created", "acme"),
                ("key.created", "globex"),
            ]),
            acme,
            pairs(&[
                ("key.created", "globex"),
                ("key.revoked", "globex"),
                ("asset.created", "globex"),
            ]),
        ]
        .concat()
    );
}
