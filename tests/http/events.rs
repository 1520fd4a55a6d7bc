//! The change feed and audit trail (DESIGN.md §5 "Events"): every write through the API is an
//! event naming its key, in order, readable page by page by following `next`, filtered by type
//! and resource; bad parameters are 400 naming them.

use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::Harness;
use crate::support::{Ctx, id_of};

/// Every event after `after` (from the start when empty) that `query` keeps, following `next`
/// with pages of `limit`; and the last `next`.
async fn follow(
    ctx: &Ctx,
    key: &str,
    after: &str,
    query: &str,
    limit: usize,
) -> (Vec<Value>, String) {
    let mut after = after.to_owned();
    let mut all = Vec::new();
    loop {
        let mut path = format!("/api/v1/events?limit={limit}{query}");
        if !after.is_empty() {
            path.push_str(&format!("&after={after}"));
        }
        let r = ctx.get_as(&path, Some(key)).await;
        assert_eq!(r.status, 200, "{path}: {}", r.json);
        assert_eq!(r.json["success"], json!(true));
        let page = r.json["data"].as_array().expect("data").clone();
        assert!(page.len() <= limit);
        let next = r.json["next"].as_str().expect("next").to_owned();
        if page.is_empty() {
            return (all, next);
        }
        all.extend(page);
        after = next;
    }
}

/// [`follow`] until it has given `want` events (or 10 s passed): on PostgreSQL the feed holds
/// an event back while any transaction that started before it runs, and other tests share the
/// server.
pub(crate) async fn follow_until(
    ctx: &Ctx,
    key: &str,
    (after, query): (&str, &str),
    limit: usize,
    want: usize,
) -> (Vec<Value>, String) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let (mut all, mut next) = follow(ctx, key, after, query, limit).await;
    while all.len() < want && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let (more, last) = follow(ctx, key, &next, query, limit).await;
        all.extend(more);
        next = last;
    }
    (all, next)
}

/// `(type, resource type, resource id)` of each event.
fn what(events: &[Value]) -> Vec<(String, String, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or("").to_owned(),
                e["resource"]["type"].as_str().unwrap_or("").to_owned(),
                e["resource"]["id"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

pub(crate) async fn writes_are_events_with_their_key_in_order<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let reader = ctx.key(&[assetlib::Scope::ReadEvents]).await;
    let editor = ctx
        .service
        .create_key(
            "editor",
            vec![
                assetlib::Scope::WriteAssets,
                assetlib::Scope::ReadAssets,
                assetlib::Scope::WriteLibraries,
            ],
            None,
        )
        .await
        .expect("key");
    let (editor_id, editor_key) = (editor.0.id.to_string(), editor.1);
    // Keys made by Rust code are events too, without an actor.
    let (made, start) = follow_until(&ctx, &reader, ("", "&type=key.created"), 100, 3).await;
    let editor_made = made
        .iter()
        .find(|e| e["resource"]["id"] == json!(editor_id))
        .unwrap_or_else(|| panic!("no key.created of the editor key: {made:?}"));
    assert_eq!(editor_made["actor"], Value::Null);
    let (_, start) = follow(&ctx, &reader, &start, "", 100).await;

    let created = ctx
        .send_json(
            Method::POST,
            "/api/v1/assets",
            Some(&editor_key),
            &json!({"title": "Launch video", "asset_type": "external_video",
                    "external_url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ"}),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.json);
    let asset = id_of(&created.json["data"]);
    let patched = ctx
        .send_json(
            Method::PATCH,
            &format!("/api/v1/assets/{asset}"),
            Some(&editor_key),
            &json!({"title": "Launch video (final)", "published": false}),
        )
        .await;
    assert_eq!(patched.status, 200, "{}", patched.json);
    let deleted = ctx
        .request(
            Method::DELETE,
            &format!("/api/v1/assets/{asset}"),
            Some(&editor_key),
        )
        .send()
        .await
        .expect("delete");
    assert_eq!(deleted.status().as_u16(), 204);
    // Refused writes are no events.
    let refused = ctx
        .send_json(
            Method::PATCH,
            &format!("/api/v1/assets/{asset}"),
            Some(&editor_key),
            &json!({"title": "Gone"}),
        )
        .await;
    assert_eq!(refused.status, 404);

    let (events, end) = follow_until(&ctx, &reader, (&start, ""), 2, 3).await;
    let resource = |t: &str| (t.to_owned(), "asset".to_owned(), asset.clone());
    assert_eq!(
        what(&events),
        vec![
            resource("asset.created"),
            resource("asset.updated"),
            resource("asset.deleted")
        ]
    );
    for event in &events {
        assert_eq!(
            event["actor"],
            json!({"key_id": editor_id, "key_name": "editor"}),
            "{event}"
        );
        let id = event["id"].as_str().expect("id");
        assert!(id.starts_with("evt_") && id.len() == 36, "{id}");
        assert!(
            event["occurred_at"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z'))
        );
    }
    assert_eq!(
        events[1]["data"],
        json!({"changed": ["title", "published"]})
    );
    assert_eq!(events[0]["data"], json!({"changed": []}));

    // The asset's history, and one type.
    let (history, _) = follow_until(
        &ctx,
        &reader,
        ("", &format!("&resource=asset:{asset}")),
        10,
        3,
    )
    .await;
    assert_eq!(what(&history), what(&events));
    let (updates, _) = follow_until(&ctx, &reader, ("", "&type=asset.updated"), 10, 1).await;
    assert_eq!(what(&updates), vec![resource("asset.updated")]);

    // Nothing new: an empty page. Its `next` may have moved on (PostgreSQL's cursor follows
    // the cluster's horizon, which other databases' transactions advance), but never past a
    // write still to come: the next write is the first event after it.
    let again = ctx
        .get_as(&format!("/api/v1/events?after={end}"), Some(&reader))
        .await;
    assert_eq!(again.status, 200);
    assert_eq!(again.json["data"], json!([]));
    let moved = again.json["next"].as_str().expect("next").to_owned();
    let later = ctx
        .send_json(
            Method::POST,
            "/api/v1/assets",
            Some(&editor_key),
            &json!({"title": "Teaser", "asset_type": "link",
                    "external_url": "https://example.com/teaser"}),
        )
        .await;
    assert_eq!(later.status, 201, "{}", later.json);
    let (after_moved, _) = follow_until(&ctx, &reader, (&moved, ""), 10, 1).await;
    assert_eq!(
        what(&after_moved),
        vec![(
            "asset.created".to_owned(),
            "asset".to_owned(),
            id_of(&later.json["data"])
        )]
    );
}

pub(crate) async fn bad_feed_parameters_are_400_naming_them<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    for (query, field) in [
        ("after=nope", "after"),
        ("after=0123456789abcdef0123456789abcdeg", "after"),
        ("type=asset.exploded", "type"),
        ("resource=asset", "resource"),
        (
            "resource=tenant:0b7c7fb6-3d6c-4f1e-9c55-1f7b1f5b4a10",
            "resource",
        ),
        ("resource=asset:not-an-id", "resource"),
        ("limit=0", "limit"),
        ("limit=-1", "limit"),
        ("limit=ten", "limit"),
        ("limit=1&limit=2", "limit"),
    ] {
        let r = ctx.get(&format!("/api/v1/events?{query}")).await;
        assert_eq!(r.status, 400, "{query}: {}", r.json);
        assert_eq!(r.json["field"], json!(field), "{query}: {}", r.json);
    }
    // A large limit is clamped, not refused.
    assert_eq!(ctx.get("/api/v1/events?limit=99999").await.status, 200);
}

/// `after` is a page's `next` (or absent): a cursor the feed never handed out, past the end of
/// the log or not of its form, is 400 naming `after`, not an empty page echoing it forever
/// (nor the whole log again). The places handed out stay good.
pub(crate) async fn cursors_the_feed_never_handed_out_are_400<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let reader = ctx.key(&[assetlib::Scope::ReadEvents]).await;
    let logo = ctx
        .create_asset(json!({"title": "Logo", "asset_type": "link",
            "external_url": "https://example.com/logo"}))
        .await;
    // The end of the log is where the feed has shown the last write, the logo's creation: a
    // log on PostgreSQL shows an event once the writes before it have ended, so a first page
    // may stop short of it.
    let (mut seen, mut end) = follow_until(&ctx, &reader, ("", ""), 100, 1).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !what(&seen).iter().any(|(_, _, id)| *id == id_of(&logo))
        && std::time::Instant::now() < deadline
    {
        let (more, next) = follow_until(&ctx, &reader, (&end, ""), 100, 1).await;
        seen.extend(more);
        end = next;
    }
    assert!(!seen.is_empty());
    let (high, low) = end.split_at(16);
    let (high, low) = (
        u64::from_str_radix(high, 16).expect("hex"),
        u64::from_str_radix(low, 16).expect("hex"),
    );
    let cursor = |high: u64, low: u64| format!("{high:016x}{low:016x}");
    for beyond in [
        cursor(high, low.saturating_add(1000)),
        cursor(high.saturating_add(1 << 40), low),
        cursor(1 << 63, 0),
        cursor(u64::MAX, 0),
        cursor(0, u64::MAX),
        cursor(u64::MAX, u64::MAX),
    ] {
        let r = ctx
            .get_as(&format!("/api/v1/events?after={beyond}"), Some(&reader))
            .await;
        assert_eq!(r.status, 400, "after={beyond} (end {end}): {}", r.json);
        assert_eq!(r.json["error"], json!("Validation error"), "{}", r.json);
        assert_eq!(r.json["field"], json!("after"), "{}", r.json);
    }
    // The end and the start are good; what comes after the end is read from it.
    for good in [end.as_str(), "00000000000000000000000000000000"] {
        let r = ctx
            .get_as(&format!("/api/v1/events?after={good}"), Some(&reader))
            .await;
        assert_eq!(r.status, 200, "after={good}: {}", r.json);
    }
    let later = ctx
        .create_asset(json!({"title": "Later", "asset_type": "link",
            "external_url": "https://example.com/later"}))
        .await;
    let (tail, _) = follow_until(&ctx, &reader, (&end, ""), 100, 1).await;
    assert_eq!(
        what(&tail),
        vec![(
            "asset.created".to_owned(),
            "asset".to_owned(),
            id_of(&later)
        )]
    );
}
