//! Webhooks (DESIGN.md §5 "Events"): registered, read, changed and deleted with
//! `admin:webhooks`; targets that lead to private addresses refused; deliveries in the Standard
//! Webhooks format that PyPI's `standardwebhooks` verifies (and whose tampered or stale copies
//! it refuses); retries of failing endpoints that never hold up a write; endpoints disabled
//! after failing too long; deliveries retried by hand; test pings. Every receiver is a real
//! server on 127.0.0.1 (`assetlib_testkit::receiver`).

use std::time::Duration;

use assetlib::Config;
use assetlib_testkit::receiver::{Answer, Receiver, Verifier};
use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::Harness;
use crate::support::{Ctx, Resp, id_of, keys};

const WITHIN: Duration = Duration::from_secs(10);

/// Deliveries tried at once and retried fast, to any address.
fn quick() -> Config {
    let mut config = Config::default();
    config.webhook_allow_private = true;
    config.webhook_retry_schedule = vec![Duration::from_millis(100); 3];
    config.webhook_timeout = Duration::from_secs(1);
    config.webhook_poll_interval = Duration::from_millis(50);
    config
}

/// Registers a webhook for `url` and `types`; answers its `data` (with the secret).
async fn register(ctx: &Ctx, url: &str, types: &[&str]) -> Value {
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/webhooks",
            Some(&ctx.admin),
            &json!({"url": url, "event_types": types}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    r.json["data"].clone()
}

/// The deliveries of webhook `id`, newest first.
async fn deliveries(ctx: &Ctx, id: &str) -> Vec<Value> {
    let r = ctx
        .get(&format!("/api/v1/webhooks/{id}/deliveries?per_page=100"))
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    r.json["data"].as_array().expect("data").clone()
}

/// The deliveries of webhook `id` once `done` holds for them.
async fn deliveries_when(ctx: &Ctx, id: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let now = deliveries(ctx, id).await;
        if done(&now) {
            return now;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "deliveries of {id} never got there: {now:#?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The events `query` selects, once there are at least `n` (PostgreSQL's feed holds an event
/// back while any older transaction on the server runs, and other tests share the server).
async fn events_when(ctx: &Ctx, query: &str, n: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let r = ctx.get(&format!("/api/v1/events?{query}")).await;
        assert_eq!(r.status, 200, "{}", r.json);
        let events = r.json["data"].as_array().expect("events").clone();
        if events.len() >= n {
            return events;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{query}: {} events, not {n}",
            events.len()
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn statuses(list: &[Value]) -> Vec<&str> {
    list.iter()
        .map(|d| d["status"].as_str().unwrap_or(""))
        .collect()
}

pub(crate) async fn webhooks_are_registered_read_changed_and_deleted<H: Harness>() {
    let ctx = Ctx::with_config::<H>(quick()).await;
    let receiver = Receiver::start(Answer::Status(204)).await;
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/webhooks",
            Some(&ctx.admin),
            &json!({"url": receiver.url("/hooks#frag"),
                    "event_types": ["asset.created", "asset.deleted", "asset.created"],
                    "unknown": 1}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let made = r.json["data"].clone();
    let id = id_of(&made);
    assert!(
        r.header("location")
            .is_some_and(|l| l.ends_with(&format!("/api/v1/webhooks/{id}")))
    );
    assert_eq!(
        keys(&made),
        [
            "created_at",
            "enabled",
            "event_types",
            "failing_since",
            "id",
            "secret",
            "updated_at",
            "url",
            "workspace_id"
        ]
    );
    assert_eq!(made["url"], json!(receiver.url("/hooks")));
    assert_eq!(
        made["workspace_id"],
        Value::Null,
        "a global key's webhook of none"
    );
    assert_eq!(
        made["event_types"],
        json!(["asset.created", "asset.deleted"])
    );
    assert_eq!(
        (&made["enabled"], &made["failing_since"]),
        (&json!(true), &Value::Null)
    );
    let secret = made["secret"].as_str().expect("secret");
    assert!(
        secret.starts_with("whsec_") && secret.len() == 6 + 44,
        "{secret}"
    );

    // The secret is shown once.
    let read = ctx.get(&format!("/api/v1/webhooks/{id}")).await;
    assert_eq!(read.status, 200);
    let mut expected = made.clone();
    expected.as_object_mut().expect("object").remove("secret");
    assert_eq!(read.json["data"], expected);
    let list = ctx.get("/api/v1/webhooks").await;
    assert_eq!(list.json["data"], json!([expected]));
    assert_eq!(list.json["pagination"]["total"], json!(1));

    let path = format!("/api/v1/webhooks/{id}");
    let change = json!({"event_types": ["*"], "enabled": false});
    let patched = ctx
        .send_json(Method::PATCH, &path, Some(&ctx.admin), &change)
        .await;
    assert_eq!(patched.status, 200, "{}", patched.json);
    assert_eq!(patched.json["data"]["event_types"], json!(["*"]));
    assert_eq!(patched.json["data"]["enabled"], json!(false));
    let again = ctx
        .send_json(Method::PATCH, &path, Some(&ctx.admin), &change)
        .await;
    assert_eq!(
        again.json["data"]["updated_at"],
        patched.json["data"]["updated_at"]
    );
    for (body, field, message) in [
        (
            json!({"secret": "whsec_mine"}),
            "secret",
            "secret cannot be set",
        ),
        (json!({"url": null}), "url", "url cannot be null"),
        (
            json!({"url": "ftp://example.com/x"}),
            "url",
            "url must be an absolute http or https URL of at most 2048 bytes",
        ),
        (
            json!({"event_types": ["asset.made"]}),
            "event_types[0]",
            "event_types[0] must be \"*\" or one of: asset.created, asset.updated, \
             asset.file_replaced, asset.deleted, library.created, library.updated, \
             library.deleted, key.created, key.revoked, pass.created, pass.revoked, \
             webhook.created, webhook.updated, webhook.deleted",
        ),
    ] {
        let r = ctx
            .send_json(Method::PATCH, &path, Some(&ctx.admin), &body)
            .await;
        r.assert_invalid(field, message);
    }

    let unknown = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
    ctx.get("/api/v1/webhooks/not-an-id")
        .await
        .assert_invalid("webhook_id", "webhook_id must be a UUID");
    let missing = json!({"error": "Not found", "message": "Webhook not found"});
    ctx.get(&format!("/api/v1/webhooks/{unknown}"))
        .await
        .assert(404, missing.clone());
    ctx.get(&format!("/api/v1/webhooks/{unknown}/deliveries"))
        .await
        .assert(404, missing.clone());
    let retry = format!("/api/v1/webhooks/{id}/deliveries/{unknown}/retry");
    let r = Resp::from(ctx.request(Method::POST, &retry, Some(&ctx.admin))).await;
    r.assert(
        404,
        json!({"error": "Not found", "message": "Delivery not found"}),
    );

    let gone = Resp::from(ctx.request(Method::DELETE, &path, Some(&ctx.admin))).await;
    assert_eq!(gone.status, 204);
    let twice = Resp::from(ctx.request(Method::DELETE, &path, Some(&ctx.admin))).await;
    twice.assert(404, missing);

    // The audit trail of the webhook, with the key that made each change.
    let events = events_when(&ctx, &format!("resource=webhook:{id}"), 3).await;
    let seen: Vec<(&str, &Value, &Value)> = events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or(""),
                &e["data"]["changed"],
                &e["actor"]["key_name"],
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("webhook.created", &json!([]), &json!("admin")),
            (
                "webhook.updated",
                &json!(["event_types", "enabled"]),
                &json!("admin")
            ),
            ("webhook.deleted", &json!([]), &json!("admin")),
        ]
    );
}

pub(crate) async fn private_and_non_http_targets_are_400_on_url<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let private = "url must not lead to a loopback, private, link-local or reserved address";
    for (url, message) in [
        ("http://127.0.0.1:9/hook", format!("{private} (127.0.0.1)")),
        ("http://[::1]:9/hook", format!("{private} (::1)")),
        (
            "http://169.254.169.254/latest/meta-data",
            format!("{private} (169.254.169.254)"),
        ),
        ("http://10.0.0.1/hook", format!("{private} (10.0.0.1)")),
        (
            "http://[::ffff:192.168.0.1]/hook",
            format!("{private} (::ffff:192.168.0.1)"),
        ),
        ("http://0.0.0.0:9/", format!("{private} (0.0.0.0)")),
        (
            "ftp://example.com/hook",
            "url must be an absolute http or https URL of at most 2048 bytes".to_owned(),
        ),
        (
            "no scheme",
            "url must be an absolute http or https URL of at most 2048 bytes".to_owned(),
        ),
        (
            "http://no-such-host.invalid/hook",
            "url's host no-such-host.invalid does not resolve to any address".to_owned(),
        ),
    ] {
        let r = ctx
            .send_json(
                Method::POST,
                "/api/v1/webhooks",
                Some(&ctx.admin),
                &json!({"url": url}),
            )
            .await;
        r.assert_invalid("url", &message);
    }
    // A name that resolves to loopback is refused like the address itself.
    let r = ctx
        .send_json(
            Method::POST,
            "/api/v1/webhooks",
            Some(&ctx.admin),
            &json!({"url": "http://localhost:9/hook"}),
        )
        .await;
    assert_eq!(r.json["field"], json!("url"), "{}", r.json);
    assert!(
        r.json["message"]
            .as_str()
            .unwrap_or("")
            .starts_with(private),
        "{}",
        r.json
    );
    assert_eq!(
        ctx.get("/api/v1/webhooks").await.json["pagination"]["total"],
        json!(0)
    );

    // A public address is taken (disabled: nothing is sent to it), a change to a private
    // one is not.
    let public = json!({"url": "https://93.184.215.14/hooks", "enabled": false});
    let r = ctx
        .send_json(Method::POST, "/api/v1/webhooks", Some(&ctx.admin), &public)
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let path = format!("/api/v1/webhooks/{}", id_of(&r.json["data"]));
    let r = ctx
        .send_json(
            Method::PATCH,
            &path,
            Some(&ctx.admin),
            &json!({"url": "http://192.168.1.1/hook"}),
        )
        .await;
    r.assert_invalid("url", &format!("{private} (192.168.1.1)"));
}

pub(crate) async fn deliveries_are_signed_as_the_reference_library_verifies<H: Harness>() {
    let ctx = Ctx::with_config::<H>(quick()).await;
    let verifier = Verifier::start();
    let hook = register(
        &ctx,
        &verifier.url("/hook"),
        &["asset.created", "asset.updated"],
    )
    .await;
    verifier.set_secret(hook["secret"].as_str().expect("secret"));
    let asset = ctx
        .create_asset(json!({"title": "Logo", "asset_type": "collection"}))
        .await;
    let asset_id = id_of(&asset);
    let patched = ctx
        .send_json(
            Method::PATCH,
            &format!("/api/v1/assets/{asset_id}"),
            Some(&ctx.admin),
            &json!({"title": "Logo (2026)"}),
        )
        .await;
    assert_eq!(patched.status, 200);
    let checked = verifier.wait_for_verified(2, WITHIN).await;
    assert!(
        checked.iter().all(|c| c["verified"] == true),
        "{checked:#?}"
    );
    let events = events_when(&ctx, &format!("resource=asset:{asset_id}"), 2).await;
    assert_eq!(events.len(), 2);
    // Deliveries go out at once, in any order: each is matched to its event by its id.
    for event in &events {
        let delivery = checked
            .iter()
            .find(|c| c["headers"]["webhook-id"] == event["id"])
            .unwrap_or_else(|| panic!("no delivery of {event}"));
        let body: Value =
            serde_json::from_str(delivery["body"].as_str().expect("body")).expect("JSON body");
        assert_eq!(keys(&body), ["data", "timestamp", "type"]);
        assert_eq!(body["type"], event["type"]);
        assert_eq!(body["timestamp"], event["occurred_at"]);
        assert_eq!(body["data"], *event, "the event as the feed shows it");
        assert_eq!(
            delivery["headers"]["content-type"],
            json!("application/json")
        );
        assert_eq!(delivery["path"], json!("/hook"));
    }
    assert_eq!(events[0]["actor"]["key_name"], json!("admin"));
    assert_eq!(events[1]["data"]["changed"], json!(["title"]));

    // The reference library refuses a tampered body and a stale timestamp.
    let client = reqwest::Client::new();
    let first = &checked[0];
    let send = |body: String, id: &str, timestamp: String, signature: String| {
        client
            .post(verifier.url("/hook"))
            .header("webhook-id", id)
            .header("webhook-timestamp", timestamp)
            .header("webhook-signature", signature)
            .body(body)
            .send()
    };
    let header = |name: &str| first["headers"][name].as_str().expect("header").to_owned();
    let (id, body) = (
        header("webhook-id"),
        first["body"].as_str().expect("body").to_owned(),
    );
    let replay = send(
        body.clone(),
        &id,
        header("webhook-timestamp"),
        header("webhook-signature"),
    );
    assert_eq!(
        replay.await.expect("replay").status(),
        204,
        "an untouched copy verifies"
    );
    let tampered = body.replacen("asset.", "asset_", 1);
    assert_ne!(tampered, body);
    let forged = send(
        tampered,
        &id,
        header("webhook-timestamp"),
        header("webhook-signature"),
    );
    assert_eq!(forged.await.expect("tampered").status(), 401);
    let secret = hook["secret"].as_str().expect("secret");
    let old = chrono::Utc::now().timestamp() - 600;
    let signature =
        assetlib::webhooks::sign::signature(secret, &id, old, body.as_bytes()).expect("signature");
    let stale = send(body.clone(), &id, old.to_string(), signature);
    assert_eq!(stale.await.expect("stale").status(), 401);
    let refused: Vec<String> = verifier
        .wait_for(checked.len() + 3, WITHIN)
        .await
        .iter()
        .filter(|c| c["verified"] == false)
        .map(|c| c["error"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        refused,
        [
            "WebhookVerificationError: No matching signature found",
            "WebhookVerificationError: Message timestamp too old",
        ]
    );

    // A test ping: sent at once whatever the event types, signed alike, not in the feed.
    let ping = Resp::from(ctx.request(
        Method::POST,
        &format!("/api/v1/webhooks/{}/test", id_of(&hook)),
        Some(&ctx.admin),
    ))
    .await;
    assert_eq!(ping.status, 200, "{}", ping.json);
    let sent = &ping.json["data"];
    assert_eq!(
        (&sent["status"], &sent["attempts"]),
        (&json!("succeeded"), &json!(1))
    );
    assert_eq!(
        (&sent["event_type"], &sent["last_response_status"]),
        (&json!("webhook.test"), &json!(204))
    );
    // Checked (and written down) by the receiver before it answered.
    let pinged = verifier.checked();
    let ping = pinged
        .iter()
        .find(|c| c["headers"]["webhook-id"] == sent["event_id"])
        .unwrap_or_else(|| panic!("the receiver never saw the ping: {pinged:#?}"));
    assert_eq!(ping["verified"], json!(true));
    let body: Value = serde_json::from_str(ping["body"].as_str().expect("body")).expect("JSON");
    assert_eq!(
        (&body["type"], &body["data"]["resource"]["type"]),
        (&json!("webhook.test"), &json!("webhook"))
    );
    let log = deliveries(&ctx, &id_of(&hook)).await;
    assert_eq!(statuses(&log), ["succeeded", "succeeded", "succeeded"]);
    assert_eq!(log[0]["id"], sent["id"], "newest first");
    let everything = ctx.get("/api/v1/events?limit=1000").await;
    let types: Vec<&str> = everything.json["data"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["type"].as_str().unwrap_or(""))
        .collect();
    assert!(!types.contains(&"webhook.test"), "{types:?}");
}

/// A port on 127.0.0.1 that refuses every connection while the returned socket lives: the
/// socket holds it, so no other test's server is given it, and never listens.
fn refusing_port() -> (tokio::net::TcpSocket, u16) {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .expect("bind");
    let port = socket.local_addr().expect("address").port();
    (socket, port)
}

pub(crate) async fn failing_endpoints_are_retried_and_never_hold_up_writes<H: Harness>() {
    let ctx = Ctx::with_config::<H>(quick()).await;
    let flaky = Receiver::start(Answer::Status(500)).await;
    let slow = Receiver::start(Answer::Slow(Duration::from_secs(20))).await;
    let elsewhere = Receiver::start(Answer::Status(204)).await;
    let moved = Receiver::start(Answer::Redirect(elsewhere.url("/stolen"))).await;
    let reset = Receiver::start(Answer::Reset).await;
    let endless = Receiver::start(Answer::Endless).await;
    let (_closed, closed) = refusing_port();
    let types = &["asset.created"];
    let hook = |r: &Receiver| r.url("/hook");
    let flaky_id = id_of(&register(&ctx, &hook(&flaky), types).await);
    let slow_id = id_of(&register(&ctx, &hook(&slow), types).await);
    let moved_id = id_of(&register(&ctx, &hook(&moved), types).await);
    let reset_id = id_of(&register(&ctx, &hook(&reset), types).await);
    let endless_id = id_of(&register(&ctx, &hook(&endless), types).await);
    let down = format!("http://127.0.0.1:{closed}/hook");
    let down_id = id_of(&register(&ctx, &down, types).await);

    let first = ctx.asset_id("Brochure", "collection").await;
    // The slow endpoint holds its first delivery; writes go on meanwhile.
    let deadline = std::time::Instant::now() + WITHIN;
    while slow.in_flight() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the slow endpoint got nothing"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for n in 0..10 {
        ctx.asset_id(&format!("Flyer {n}"), "collection").await;
    }
    assert!(
        slow.in_flight() >= 1,
        "every write was answered while deliveries hung"
    );

    // 500: retried with the same webhook-id, then delivered once the endpoint recovers.
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let got = flaky.received();
        let ids: Vec<Option<&str>> = got.iter().map(|r| r.header("webhook-id")).collect();
        if ids.iter().enumerate().any(|(n, id)| ids[..n].contains(id)) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no delivery was tried again: {ids:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    flaky.answer(Answer::Status(204));
    let log = deliveries_when(&ctx, &flaky_id, |d| {
        d.len() == 11 && statuses(d).iter().all(|s| *s == "succeeded")
    })
    .await;
    let oldest = log.last().expect("the first delivery");
    assert!(oldest["attempts"].as_u64().unwrap_or(0) >= 2, "{oldest}");
    assert_eq!(oldest["last_response_status"], json!(204));
    assert_eq!(oldest["last_error"], Value::Null);

    // Slow: the attempt ends at the timeout and is retried.
    let log = deliveries_when(&ctx, &slow_id, |d| {
        d.iter()
            .any(|x| x["last_error"] == json!("no answer within 1 s"))
    })
    .await;
    assert!(
        log.iter()
            .all(|d| d["status"] == json!("pending") || d["status"] == json!("failed"))
    );

    // A redirect is not followed: it is a failure, and the other address gets nothing.
    let log = deliveries_when(&ctx, &moved_id, |d| {
        d.iter().any(|x| x["last_response_status"] == json!(301))
    })
    .await;
    let redirected = log
        .iter()
        .find(|x| x["last_response_status"] == json!(301))
        .expect("301");
    assert_eq!(redirected["last_error"], json!("the endpoint answered 301"));
    assert!(elsewhere.received().is_empty(), "a redirect was followed");

    // A reset connection: retried.
    reset.wait_for(2, WITHIN).await;
    let log = deliveries_when(&ctx, &reset_id, |d| {
        d.iter().any(|x| x["attempts"].as_u64() >= Some(2))
    })
    .await;
    assert!(log.iter().all(|d| d["status"] != json!("succeeded")));

    // An endless body: a 200 is success, and only a little of the body is read.
    deliveries_when(&ctx, &endless_id, |d| {
        d.len() == 11 && statuses(d).iter().all(|s| *s == "succeeded")
    })
    .await;
    // The client reads 64 KiB; the rest is what the sockets' buffers on loopback take
    // (a few MiB). A client reading on until its timeout would take gigabytes.
    assert!(
        endless.endless_bytes() < 16 * 1024 * 1024,
        "{} bytes of an endless answer were taken on one connection",
        endless.endless_bytes()
    );

    // Nobody listening: every attempt of the schedule fails, then the delivery has failed.
    let log = deliveries_when(&ctx, &down_id, |d| {
        d.len() == 11 && statuses(d).iter().all(|s| *s == "failed")
    })
    .await;
    for d in &log {
        assert_eq!(
            (&d["attempts"], &d["next_attempt_at"]),
            (&json!(4), &Value::Null)
        );
        assert_eq!(d["last_response_status"], Value::Null);
        assert!(
            d["last_error"]
                .as_str()
                .is_some_and(|e| e.starts_with("could not deliver")),
            "{d}"
        );
    }
    let failing = ctx.get(&format!("/api/v1/webhooks/{down_id}")).await;
    assert!(failing.json["data"]["failing_since"].is_string());
    let _ = first;
}

pub(crate) async fn a_failing_endpoint_is_disabled_and_a_delivery_retried_by_hand<H: Harness>() {
    let mut config = quick();
    config.webhook_retry_schedule = vec![Duration::from_millis(100); 10];
    config.webhook_disable_after = Duration::from_millis(300);
    let ctx = Ctx::with_config::<H>(config).await;
    let receiver = Receiver::start(Answer::Status(503)).await;
    let id = id_of(&register(&ctx, &receiver.url("/hook"), &["asset.created"]).await);
    ctx.asset_id("Poster", "collection").await;
    let path = format!("/api/v1/webhooks/{id}");
    let deadline = std::time::Instant::now() + WITHIN;
    loop {
        let hook = ctx.get(&path).await.json["data"].clone();
        if hook["enabled"] == json!(false) {
            assert!(hook["failing_since"].is_string(), "{hook}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never disabled: {hook}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let updated = format!("resource=webhook:{id}&type=webhook.updated");
    let events = events_when(&ctx, &updated, 1).await;
    let disabled = &events[0];
    assert_eq!(
        (&disabled["data"]["changed"], &disabled["actor"]),
        (&json!(["enabled"]), &Value::Null)
    );
    let log = deliveries(&ctx, &id).await;
    assert_eq!(log.len(), 1);
    let tried = log[0]["attempts"].as_u64().expect("attempts");
    assert!(tried >= 2, "{log:?}");

    // Enabled again and retried by hand, it goes out.
    receiver.answer(Answer::Status(200));
    let on = ctx
        .send_json(
            Method::PATCH,
            &path,
            Some(&ctx.admin),
            &json!({"enabled": true}),
        )
        .await;
    assert_eq!(
        (
            &on.json["data"]["enabled"],
            &on.json["data"]["failing_since"]
        ),
        (&json!(true), &Value::Null)
    );
    let retry = format!("{path}/deliveries/{}/retry", id_of(&log[0]));
    let r = Resp::from(ctx.request(Method::POST, &retry, Some(&ctx.admin))).await;
    assert_eq!(r.status, 202, "{}", r.json);
    assert_eq!(r.json["data"]["status"], json!("pending"));
    let done = deliveries_when(&ctx, &id, |d| statuses(d) == ["succeeded"]).await;
    assert!(done[0]["attempts"].as_u64().expect("attempts") > tried);
    assert_eq!(done[0]["last_response_status"], json!(200));

    // A test ping to nobody fails at once and says why.
    let (_closed, closed) = refusing_port();
    let nowhere = id_of(
        &register(
            &ctx,
            &format!("http://127.0.0.1:{closed}/"),
            &["key.created"],
        )
        .await,
    );
    let ping = Resp::from(ctx.request(
        Method::POST,
        &format!("/api/v1/webhooks/{nowhere}/test"),
        Some(&ctx.admin),
    ))
    .await;
    assert_eq!(ping.status, 200, "{}", ping.json);
    let sent = &ping.json["data"];
    assert_eq!(
        (&sent["status"], &sent["last_response_status"]),
        (&json!("failed"), &Value::Null)
    );
    assert!(
        sent["last_error"]
            .as_str()
            .is_some_and(|e| e.starts_with("could not deliver")),
        "{sent}"
    );
    assert_eq!(
        sent["next_attempt_at"],
        Value::Null,
        "a ping is not retried"
    );
}
