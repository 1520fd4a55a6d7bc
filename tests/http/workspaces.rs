//! Workspaces over HTTP: a key of workspace A walks every operation of the served
//! `openapi.json` with workspace B's ids and with ids of nothing. It never gets a 2xx on B's
//! records, and each of B's ids is answered byte for byte as a missing one (status, headers
//! but `date`, body with the id). An operation with a path parameter this file does not know
//! fails the walk, so a new route cannot escape it.

use assetlib::{Config, Scope};
use reqwest::Method;
use serde_json::{Value, json};

use crate::files::{BOUNDARY, form};
use crate::harness::Harness;
use crate::support::{Ctx, Resp, id_of};
use assetlib_testkit::receiver::{Answer, Receiver};

/// B's record of each kind of path parameter, and a missing one of the same kind.
struct Ids {
    theirs: Vec<(&'static str, String)>,
    missing: Vec<(&'static str, String)>,
}

impl Ids {
    fn fill(pairs: &[(&'static str, String)], path: &str) -> String {
        let mut path = path.to_owned();
        for (name, value) in pairs {
            path = path.replace(&format!("{{{name}}}"), value);
        }
        assert!(
            !path.contains('{'),
            "{path}: a path parameter the workspace matrix does not know; add B's record \
             and a missing one for it"
        );
        path
    }
}

/// What one operation sends besides its path: query, content type and body.
fn request_of(operation: &str) -> (Option<&'static str>, Option<String>, Vec<u8>) {
    let json = |v: Value| {
        (
            Some("application/json".to_owned()),
            v.to_string().into_bytes(),
        )
    };
    let (content_type, body) = match operation {
        "updateAsset" => json(json!({"title": "Taken over"})),
        "putLibrary" => json(json!({"title": "Taken over"})),
        "createPass" => json(json!({"label": "order 9", "expires_in": 3600})),
        "updateWebhook" => json(json!({"enabled": false})),
        "replaceAssetFile" => (
            Some(format!("multipart/form-data; boundary={BOUNDARY}")),
            form(&[], Some(("notes.txt", b"other words entirely"))),
        ),
        "patchUpload" => (
            Some("application/offset+octet-stream".to_owned()),
            b"more".to_vec(),
        ),
        _ => (None, Vec::new()),
    };
    let query = match operation {
        "assetImage" | "assetImageUrl" => Some("w=64"),
        // Every one of B's assets matches: its title, its text, the tus upload's text.
        "search" => Some("q=readme+OR+hello+OR+words"),
        _ => None,
    };
    (query, content_type, body)
}

async fn send(
    ctx: &Ctx,
    method: &Method,
    path: &str,
    key: &str,
    (query, content_type, body): &(Option<&str>, Option<String>, Vec<u8>),
) -> Resp {
    let path = match query {
        Some(q) => format!("{path}?{q}"),
        None => path.to_owned(),
    };
    let mut r = ctx.request(method.clone(), &path, Some(key));
    if path.starts_with("/api/v1/uploads/") {
        r = r
            .header("tus-resumable", "1.0.0")
            .header("upload-offset", "0");
    }
    if let Some(t) = content_type {
        r = r.header("content-type", t).body(body.clone());
    }
    Resp::from(r).await
}

/// An answer as compared: status, headers but `date`, and the body.
fn seen(r: &Resp) -> (u16, Vec<(String, String)>, String) {
    let mut headers: Vec<(String, String)> = r
        .headers
        .iter()
        .filter(|(name, _)| name.as_str() != "date")
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                value.to_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    headers.sort();
    (
        r.status,
        headers,
        String::from_utf8_lossy(&r.raw).into_owned(),
    )
}

/// A key of `workspace` with every scope: its record and the key.
async fn workspace_key(ctx: &Ctx, workspace: &str) -> (assetlib::ApiKey, String) {
    ctx.service
        .create_workspace_key("k", Scope::ALL.to_vec(), None, Some(workspace))
        .await
        .expect("a workspace key")
}

pub(crate) async fn a_workspace_key_answers_anothers_records_as_missing_ones<H: Harness>() {
    // Webhooks to 127.0.0.1 are allowed here; the one registered has delivery off.
    let mut config = Config::default();
    config.webhook_allow_private = true;
    let ctx = Ctx::with_config::<H>(config).await;
    let acme = workspace_key(&ctx, "acme").await.1;
    let (globex_key, globex) = workspace_key(&ctx, "globex").await;
    let globex_key = globex_key.id.to_string();

    // B's records: a document, a library holding it (slug `kit`), a pass of the library, an
    // upload, a webhook (delivery off) and B's key; and their events.
    let upload = ctx
        .request(Method::POST, "/api/v1/assets/upload", Some(&globex))
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(form(
            &[("title", "Readme")],
            Some(("readme.txt", b"hello there world")),
        ));
    let made = Resp::from(upload).await;
    assert_eq!(made.status, 201, "{}", made.json);
    assert_eq!(made.json["data"]["workspace_id"], "globex");
    let asset = id_of(&made.json["data"]);
    let library = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Kit", "slug": "kit", "allow_bulk_download": true,
        "sections": [{"title": "All", "assets": [{"asset_id": asset}]}]});
    let put = ctx
        .send_json(
            Method::PUT,
            &format!("/api/v1/libraries/{library}"),
            Some(&globex),
            &doc,
        )
        .await;
    assert_eq!(put.status, 201, "{}", put.json);
    let pass = ctx
        .send_json(
            Method::POST,
            &format!("/api/v1/libraries/{library}/passes"),
            Some(&globex),
            &json!({"label": "order 1", "expires_in": 3600}),
        )
        .await;
    assert_eq!(pass.status, 201, "{}", pass.json);
    let pass = id_of(&pass.json["data"]);
    let hook = ctx
        .send_json(
            Method::POST,
            "/api/v1/webhooks",
            Some(&globex),
            &json!({"url": "http://127.0.0.1:9/hooks", "enabled": false}),
        )
        .await;
    assert_eq!(hook.status, 201, "{}", hook.json);
    assert_eq!(hook.json["data"]["workspace_id"], "globex");
    let webhook = id_of(&hook.json["data"]);
    // A resumable upload of B's, whole with its creation: its asset is made in B.
    let tus = ctx
        .request(Method::POST, "/api/v1/uploads", Some(&globex))
        .header("tus-resumable", "1.0.0")
        .header("upload-length", "17")
        // `filename notes.txt`
        .header("upload-metadata", "filename bm90ZXMudHh0")
        .header("content-type", "application/offset+octet-stream")
        .body("some words in it.");
    let tus = Resp::from(tus).await;
    assert_eq!(tus.status, 201, "{}", tus.json);
    let made_at = tus.header("asset-location").expect("an asset").to_owned();
    let made = ctx.get_as(&made_at, Some(&globex)).await;
    assert_eq!(made.json["data"]["workspace_id"], "globex", "{}", made.json);
    let upload_id = tus
        .header("location")
        .and_then(|l| l.rsplit('/').next())
        .expect("an upload's location")
        .to_owned();

    let delivery = uuid::Uuid::new_v4().to_string();
    let ids = Ids {
        theirs: vec![
            ("asset_id", asset.clone()),
            ("library_id", library.clone()),
            ("pass_id", pass.clone()),
            ("slug", "kit".to_owned()),
            ("webhook_id", webhook.clone()),
            ("delivery_id", delivery.clone()),
            ("upload_id", upload_id.clone()),
            ("key_id", globex_key.clone()),
        ],
        missing: vec![
            ("asset_id", uuid::Uuid::new_v4().to_string()),
            ("library_id", uuid::Uuid::new_v4().to_string()),
            ("pass_id", pass.clone()),
            ("slug", "no-such-kit".to_owned()),
            ("webhook_id", uuid::Uuid::new_v4().to_string()),
            ("delivery_id", delivery.clone()),
            ("upload_id", uuid::Uuid::new_v4().to_string()),
            ("key_id", uuid::Uuid::new_v4().to_string()),
        ],
    };
    let to_theirs = |text: &str| {
        ids.missing
            .iter()
            .zip(&ids.theirs)
            .fold(text.to_owned(), |t, ((_, m), (_, b))| {
                t.replace(m.as_str(), b)
            })
    };

    let document = ctx.get("/api/v1/openapi.json").await.json;
    let paths = document["paths"].as_object().expect("paths");
    let mut walked = 0;
    for (path, operations) in paths {
        for (method, operation) in operations.as_object().expect("operations") {
            let Ok(method) = method.to_uppercase().parse::<Method>() else {
                continue;
            };
            let name = operation["operationId"].as_str().expect("an operationId");
            let request = request_of(name);
            if !path.contains('{') {
                // A list or a create: B's records are not in what it answers.
                if method == Method::GET {
                    let r = send(&ctx, &method, path, &acme, &request).await;
                    let body = String::from_utf8_lossy(&r.raw);
                    for id in [&asset, &library, &pass, &webhook, &globex_key] {
                        assert!(!body.contains(id.as_str()), "{name} shows {id}: {body}");
                    }
                }
                continue;
            }
            let of_theirs = send(
                &ctx,
                &method,
                &Ids::fill(&ids.theirs, path),
                &acme,
                &request,
            )
            .await;
            assert!(
                !(200..300).contains(&of_theirs.status),
                "{name}: {} on B's record: {}",
                of_theirs.status,
                String::from_utf8_lossy(&of_theirs.raw)
            );
            walked += 1;
            if name == "putLibrary" {
                // A missing id is created (201); B's is answered as not found.
                assert_eq!(of_theirs.status, 404, "{name}: {}", of_theirs.json);
                continue;
            }
            let of_none = send(
                &ctx,
                &method,
                &Ids::fill(&ids.missing, path),
                &acme,
                &request,
            )
            .await;
            let (status, headers, body) = seen(&of_none);
            let headers = headers
                .into_iter()
                .map(|(n, v)| (n, to_theirs(&v)))
                .collect();
            assert_eq!(
                seen(&of_theirs),
                (status, headers, to_theirs(&body)),
                "{method} {path} ({name})"
            );
        }
    }
    assert!(
        walked >= 25,
        "only {walked} operations with a path id walked"
    );

    // Bulk items name their ids in the body.
    let bulk = |id: &str| json!({"action": "add_tags", "ids": [id], "changes": {"tags": ["x"]}});
    let missing = uuid::Uuid::new_v4().to_string();
    let of_theirs = ctx
        .send_json(
            Method::POST,
            "/api/v1/assets/bulk",
            Some(&acme),
            &bulk(&asset),
        )
        .await;
    let of_none = ctx
        .send_json(
            Method::POST,
            "/api/v1/assets/bulk",
            Some(&acme),
            &bulk(&missing),
        )
        .await;
    let (status, headers, body) = seen(&of_none);
    assert_eq!(
        seen(&of_theirs),
        (status, headers, body.replace(&missing, &asset))
    );

    // B's records are as they were.
    let r = ctx
        .get_as(&format!("/api/v1/assets/{asset}"), Some(&globex))
        .await;
    assert_eq!(r.json["data"]["title"], "Readme");
    assert!(r.json["data"]["tags"].as_array().expect("tags").is_empty());
    let r = ctx
        .get_as(&format!("/api/v1/libraries/{library}"), Some(&globex))
        .await;
    assert_eq!(
        (r.json["title"].clone(), r.json["view_count"].clone()),
        (json!("Kit"), json!(1))
    );
    let r = ctx
        .get_as(
            &format!("/api/v1/libraries/{library}/passes/{pass}"),
            Some(&globex),
        )
        .await;
    assert_eq!(r.json["data"]["revoked_at"], Value::Null);
}

/// Registers a webhook for every event with `key` (delivery to `url`); answers its id.
async fn hook(ctx: &Ctx, key: &str, url: &str) -> String {
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/webhooks",
            Some(key),
            &json!({"url": url, "event_types": ["asset.created"]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    id_of(&r.json["data"])
}

pub(crate) async fn a_workspace_keys_feed_and_webhooks_see_its_events_alone<H: Harness>() {
    let mut config = Config::default();
    config.webhook_allow_private = true;
    config.webhook_poll_interval = std::time::Duration::from_millis(50);
    let ctx = Ctx::with_config::<H>(config).await;
    let acme = workspace_key(&ctx, "acme").await.1;
    let globex = workspace_key(&ctx, "globex").await.1;
    let (to_acme, to_all) = (
        Receiver::start(Answer::Status(204)).await,
        Receiver::start(Answer::Status(204)).await,
    );
    hook(&ctx, &acme, &to_acme.url("/acme")).await;
    hook(&ctx, &ctx.admin, &to_all.url("/all")).await;
    // A workspace key names no other workspace for its webhook.
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/webhooks",
            Some(&acme),
            &json!({"url": to_acme.url("/x"), "workspace_id": "globex"}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.json);
    assert_eq!(
        ctx.get_as("/api/v1/webhooks", Some(&acme)).await.json["pagination"]["total"],
        1
    );

    let made = |key: &str, title: &str| {
        let body = json!({"title": title, "asset_type": "link",
            "external_url": "https://example.com/x", "published": true});
        let key = key.to_owned();
        let ctx = &ctx;
        async move {
            let r = ctx
                .send_json(Method::POST, "/api/v1/assets", Some(&key), &body)
                .await;
            assert_eq!(r.status, 201, "{}", r.json);
            id_of(&r.json["data"])
        }
    };
    let ours = made(&acme, "Ours").await;
    let theirs = made(&globex, "Theirs").await;

    let all = to_all.wait_for(2, std::time::Duration::from_secs(10)).await;
    let mut seen: Vec<(String, String)> = all
        .iter()
        .map(|d| {
            let event = &d.json()["data"];
            (
                event["resource"]["id"].as_str().unwrap_or("").to_owned(),
                event["workspace_id"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    seen.sort();
    let mut expected = vec![
        (ours.clone(), "acme".to_owned()),
        (theirs.clone(), "globex".to_owned()),
    ];
    expected.sort();
    assert_eq!(
        seen, expected,
        "a global webhook gets every workspace's events"
    );
    to_acme
        .wait_for(1, std::time::Duration::from_secs(10))
        .await;
    // The global webhook got both: one of the other workspace's sent here would be by now.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let mine: Vec<String> = to_acme
        .received()
        .iter()
        .map(|d| {
            d.json()["data"]["resource"]["id"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    assert_eq!(
        mine,
        std::slice::from_ref(&ours),
        "a workspace's webhook gets its events alone"
    );

    // The feed of a workspace key: its events alone, each naming it.
    let feed = ctx.get_as("/api/v1/events?limit=100", Some(&acme)).await;
    assert_eq!(feed.status, 200, "{}", feed.json);
    let events = feed.json["data"].as_array().expect("events");
    assert!(
        events.iter().all(|e| e["workspace_id"] == "acme"),
        "{events:#?}"
    );
    assert!(events.iter().any(|e| e["resource"]["id"] == ours.as_str()));
    assert!(!String::from_utf8_lossy(&feed.raw).contains(&theirs));
    let audit = ctx
        .get_as(
            &format!("/api/v1/events?resource=asset:{theirs}"),
            Some(&acme),
        )
        .await;
    assert_eq!(
        audit.json["data"],
        json!([]),
        "another workspace's audit trail is empty"
    );
}

pub(crate) async fn the_walkthrough_mints_a_customer_key_and_a_page_token<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    // 1. The platform's key mints a key for its customer, in the customer's workspace.
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/keys",
            Some(&ctx.admin),
            &json!({"name": "acme", "workspace_id": "acme", "scopes": ["read:assets",
                "write:assets", "read:libraries", "write:libraries"]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let customer = r.json["data"].clone();
    assert_eq!(customer["workspace_id"], "acme");
    let id = id_of(&customer);
    assert!(
        r.header("location")
            .is_some_and(|l| l.ends_with(&format!("/api/v1/keys/{id}")))
    );
    let acme = customer["secret"]
        .as_str()
        .expect("the key, once")
        .to_owned();
    let listed = ctx.get("/api/v1/keys?per_page=100").await;
    assert_eq!(listed.status, 200);
    assert!(
        !String::from_utf8_lossy(&listed.raw).contains(&acme),
        "a list shows no secret"
    );

    // The customer's library, made with its key.
    let kit = uuid::Uuid::new_v4();
    let r = ctx
        .send_json(
            Method::PUT,
            &format!("/api/v1/libraries/{kit}"),
            Some(&acme),
            &json!({"title": "Kit", "slug": "kit", "sections": []}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);

    // 2. The customer's server mints a token for one page view.
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/tokens",
            Some(&acme),
            &json!({"scopes": ["read:libraries", "read:assets"], "expires_in": 3600}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["data"]["workspace_id"], "acme");
    let token = r.json["data"]["token"]
        .as_str()
        .expect("a token")
        .to_owned();
    assert!(token.starts_with("alt_"));

    // 3. The page reads with it, and writes nothing.
    let page = ctx.get_as("/api/v1/libraries/slug/kit", Some(&token)).await;
    assert_eq!((page.status, page.json["id"].clone()), (200, json!(kit)));
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/assets",
            Some(&token),
            &json!({"title": "x", "asset_type": "link", "external_url": "https://example.com/"}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.json);
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/tokens",
            None,
            &json!({"scopes": ["read:assets"]}),
        )
        .await;
    assert_eq!(r.status, 401, "minting a token needs a key");

    // The platform revokes the customer's key: its tokens stop with it.
    let r = Resp::from(ctx.request(
        Method::DELETE,
        &format!("/api/v1/keys/{id}"),
        Some(&ctx.admin),
    ))
    .await;
    assert_eq!(r.status, 204);
    let page = ctx.get_as("/api/v1/libraries/slug/kit", Some(&token)).await;
    assert_eq!(page.status, 401, "{}", page.json);
}

/// `PATCH` of `id` by `key` with `body`: the answer.
async fn patch(ctx: &Ctx, key: &str, id: &str, body: serde_json::Value) -> Resp {
    ctx.send_json(
        Method::PATCH,
        &format!("/api/v1/assets/{id}"),
        Some(key),
        &body,
    )
    .await
}

pub(crate) async fn a_global_key_moves_an_asset_to_another_workspace<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let acme = workspace_key(&ctx, "acme").await.1;
    let globex = workspace_key(&ctx, "globex").await.1;
    let create = |key: String, text: &'static [u8]| {
        let ctx = &ctx;
        async move {
            let upload = ctx
                .request(Method::POST, "/api/v1/assets/upload", Some(&key))
                .header(
                    "content-type",
                    format!("multipart/form-data; boundary={BOUNDARY}"),
                )
                .body(form(&[("title", "Logo")], Some(("logo.txt", text))));
            let r = Resp::from(upload).await;
            assert_eq!(r.status, 201, "{}", r.json);
            r.json["data"].clone()
        }
    };
    let logo = create(acme.clone(), b"acme's logo").await;
    let theirs = create(globex.clone(), b"globex's logo").await;
    let id = id_of(&logo);

    // A workspace key names only its own workspace: its own is no move, another or none 403.
    let r = patch(&ctx, &acme, &id, json!({"workspace_id": "acme"})).await;
    assert_eq!((r.status, r.json["data"].clone()), (200, logo.clone()));
    for other in [json!("globex"), json!(null)] {
        let r = patch(&ctx, &acme, &id, json!({"workspace_id": other})).await;
        assert_eq!(r.status, 403, "{}", r.json);
        assert_eq!(r.json["error"], "Insufficient permissions");
    }
    let r = patch(&ctx, &ctx.admin, &id, json!({"workspace_id": "a b"})).await;
    assert_eq!(
        (r.status, r.json["field"].clone()),
        (400, json!("workspace_id"))
    );

    // A library of acme holds it: the move is 409 naming the library.
    let kit = uuid::Uuid::new_v4();
    let put_kit = |assets: Vec<serde_json::Value>| {
        let ctx = &ctx;
        let acme = acme.clone();
        async move {
            let sections = json!([{"title": "All", "assets": assets}]);
            ctx.send_json(
                Method::PUT,
                &format!("/api/v1/libraries/{kit}"),
                Some(&acme),
                &json!({"title": "Kit", "sections": sections}),
            )
            .await
        }
    };
    let r = put_kit(vec![json!({"asset_id": id})]).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let r = patch(&ctx, &ctx.admin, &id, json!({"workspace_id": "globex"})).await;
    assert_eq!(r.status, 409, "{}", r.json);
    assert_eq!(r.json["libraries"][0]["id"], json!(kit));
    assert_eq!(
        ctx.get_as(&format!("/api/v1/assets/{id}"), Some(&acme))
            .await
            .status,
        200
    );

    // Out of it, the global key moves it: the slug taken there becomes `logo-2`.
    assert_eq!(put_kit(vec![]).await.status, 200);
    let r = patch(&ctx, &ctx.admin, &id, json!({"workspace_id": "globex"})).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let moved = &r.json["data"];
    assert_eq!(
        (moved["workspace_id"].clone(), moved["slug"].clone()),
        (json!("globex"), json!("logo-2"))
    );
    assert_eq!(theirs["slug"], "logo");

    // Now it is globex's: acme's key finds it missing, as a missing id, and cannot place it.
    let path = format!("/api/v1/assets/{id}");
    let missing = format!("/api/v1/assets/{}", uuid::Uuid::new_v4());
    let seen = ctx.get_as(&path, Some(&acme)).await;
    let absent = ctx.get_as(&missing, Some(&acme)).await;
    assert_eq!(
        (seen.status, seen.json.clone()),
        (absent.status, absent.json.clone())
    );
    assert_eq!(
        ctx.get_as(&path, Some(&globex)).await.json["data"]["slug"],
        "logo-2"
    );
    let r = put_kit(vec![json!({"asset_id": id})]).await;
    assert_eq!(r.status, 400, "{}", r.json);
    let listed = ctx
        .get_as("/api/v1/assets?per_page=100", Some(&globex))
        .await;
    assert_eq!(listed.json["pagination"]["total"], 2);

    // Its event is in globex's feed, naming the fields that moved.
    let query = format!("&resource=asset:{id}");
    let (events, _) = crate::events::follow_until(&ctx, &globex, ("", &query), 100, 1).await;
    let event = events
        .iter()
        .find(|e| e["type"] == "asset.updated")
        .expect("the move's event");
    assert_eq!(event["workspace_id"], "globex");
    assert_eq!(event["data"]["changed"], json!(["slug", "workspace_id"]));

    // A bulk change moves nothing.
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/assets/bulk",
            Some(&ctx.admin),
            &json!({"action": "patch", "ids": [id], "changes": {"workspace_id": "acme"}}),
        )
        .await;
    assert_eq!(
        (r.status, r.json["field"].clone()),
        (400, json!("changes.workspace_id"))
    );
}
