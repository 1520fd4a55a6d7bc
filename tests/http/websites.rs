//! What websites use, over HTTP: libraries by slug, CORS, signed download links, public
//! assets, and `ETag` / `If-None-Match`.

use assetlib::extract::samples;
use assetlib::{Config, Scope};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::json;

use crate::files::create_on;
use crate::harness::Harness;
use crate::libraries::create_library;
use crate::support::{Ctx, Resp, id_of};

/// A `GET` of `path` without any key.
async fn anonymous(ctx: &Ctx, path: &str) -> Resp {
    Resp::from(ctx.request(Method::GET, path, None)).await
}

/// A keyless `GET` of a download: its status and bytes.
async fn fetch_file(ctx: &Ctx, path: &str) -> (u16, Vec<u8>) {
    let r = ctx
        .request(Method::GET, path, None)
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    (status, r.bytes().await.expect("body").to_vec())
}

/// The path and query of a signed link (what follows the host).
fn link_of(r: &Resp) -> String {
    assert_eq!(r.status, 200, "{}", r.json);
    r.json["data"]["url"].as_str().expect("url").to_owned()
}

/// A link signed with the store's own secret, for expiries the API would not hand out.
async fn forged(ctx: &Ctx, what: &str, id: &str, expires: u64) -> String {
    let secret = ctx.store().signing_secret([0; 32]).await.expect("secret");
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(&secret).expect("key");
    mac.update(format!("{what}:{id}:{expires}").as_bytes());
    let signature =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("expires={expires}&signature={signature}")
}

fn now() -> u64 {
    u64::try_from(chrono::Utc::now().timestamp()).expect("after 1970")
}

const UNAUTHORIZED: &str = "Signed link is invalid or has expired";

pub(crate) async fn a_library_reads_by_slug_as_by_id<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = ctx.asset_id("Logo", "image").await;
    let (id, _) = create_library(
        &ctx,
        &json!({"title": "Brand kit", "slug": "brand-kit",
                "sections": [{"title": "Logos", "assets": [{"asset_id": a}]}]}),
    )
    .await;
    let by_id = ctx
        .get(&format!("/api/v1/libraries/{id}?include_assets=true"))
        .await;
    let by_slug = ctx
        .get("/api/v1/libraries/slug/brand-kit?include_assets=true")
        .await;
    assert_eq!(by_slug.status, 200, "{}", by_slug.json);
    let mut want = by_id.json.clone();
    want["view_count"] = json!(2);
    assert_eq!(by_slug.json, want, "the same answer, one more view");
    assert_eq!(
        by_slug.header("etag"),
        by_id.header("etag"),
        "the same page"
    );
    let short = ctx.get("/api/v1/libraries/slug/brand-kit").await;
    assert_eq!(short.json["sections"][0]["asset_count"], 1);
    ctx.get("/api/v1/libraries/slug/no-such-kit").await.assert(
        404,
        json!({"error": "Not found", "message": "Library not found"}),
    );
    let draft = json!({"title": "Hidden", "slug": "hidden", "published": false});
    create_library(&ctx, &draft).await;
    assert_eq!(ctx.get("/api/v1/libraries/slug/hidden").await.status, 404);
    let reader = ctx.key(&[Scope::ReadAssets]).await;
    assert_eq!(
        ctx.get_as("/api/v1/libraries/slug/brand-kit", Some(&reader))
            .await
            .status,
        403
    );
}

pub(crate) async fn cors_answers_only_allowed_origins<H: Harness>() {
    let mut config = Config::default();
    config.cors_origins = vec!["https://www.example.com".to_owned()];
    let ctx = Ctx::with_config::<H>(config).await;
    let allowed = "https://www.example.com";
    let get = |origin: &'static str, key: Option<String>| {
        let request = ctx
            .request(Method::GET, "/api/v1/assets", key.as_deref())
            .header("origin", origin);
        Resp::from(request)
    };
    let r = get(allowed, Some(ctx.admin.clone())).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("access-control-allow-origin"), Some(allowed));
    assert_eq!(r.header("vary"), Some("Origin"));
    let expose = r.header("access-control-expose-headers").expect("expose");
    assert!(
        expose.contains("ETag") && expose.contains("Content-Disposition"),
        "{expose}"
    );
    // Errors too.
    let r = get(allowed, None).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.header("access-control-allow-origin"), Some(allowed));
    let r = Resp::from(
        ctx.request(Method::GET, "/api/v1/nothing", None)
            .header("origin", allowed),
    )
    .await;
    assert_eq!(
        (r.status, r.header("access-control-allow-origin")),
        (404, Some(allowed))
    );

    // A preflight needs no key and answers the route's methods.
    let preflight = |path: &str, origin: &str| {
        let request = ctx
            .request(Method::OPTIONS, path, None)
            .header("origin", origin)
            .header("access-control-request-method", "PATCH")
            .header(
                "access-control-request-headers",
                "authorization, content-type",
            );
        Resp::from(request)
    };
    let r = preflight("/api/v1/assets/x", allowed).await;
    assert_eq!(r.status, 204);
    assert_eq!(r.header("allow"), Some("GET, HEAD, PATCH, DELETE"));
    assert_eq!(r.header("access-control-allow-origin"), Some(allowed));
    assert_eq!(
        r.header("access-control-allow-methods"),
        Some("GET, HEAD, PATCH, DELETE")
    );
    let headers = r
        .header("access-control-allow-headers")
        .expect("allow headers");
    for h in [
        "Authorization",
        "Content-Type",
        "Range",
        "If-None-Match",
        "If-Range",
    ] {
        assert!(headers.contains(h), "{headers}");
    }
    assert_eq!(r.header("access-control-max-age"), Some("600"));
    assert!(r.raw.is_empty());

    // Another origin: the same answers without any Access-Control-* header, whatever the route.
    for path in ["/api/v1/assets/x", "/api/v1/libraries"] {
        let r = preflight(path, "https://evil.example").await;
        assert_eq!(r.status, 204, "{path}");
        assert!(
            r.headers
                .keys()
                .all(|h| !h.as_str().starts_with("access-control")),
            "{path}"
        );
    }
    let r = get("https://evil.example", Some(ctx.admin.clone())).await;
    assert_eq!(r.status, 200);
    assert!(
        r.headers
            .keys()
            .all(|h| !h.as_str().starts_with("access-control"))
    );

    // Without configured origins there are no CORS headers at all.
    let plain = Ctx::start::<H>().await;
    let r = Resp::from(
        plain
            .request(Method::OPTIONS, "/api/v1/assets", None)
            .header("origin", allowed),
    )
    .await;
    assert_eq!(
        (r.status, r.header("allow")),
        (204, Some("GET, HEAD, POST"))
    );
    assert!(
        r.headers
            .keys()
            .all(|h| !h.as_str().starts_with("access-control") && h != "vary")
    );
}

pub(crate) async fn signed_links_download_without_a_key<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let png = samples::png(30, 20);
    let a = create_on(&ctx, "brand/logo.png", png.clone(), "image").await;
    let id = id_of(&a);
    let other = id_of(&create_on(&ctx, "brand/other.png", samples::png(5, 5), "image").await);
    let r = ctx
        .get(&format!("/api/v1/assets/{id}/download-url?expires_in=600"))
        .await;
    let expires_at = r.json["data"]["expires_at"]
        .as_str()
        .expect("expires_at")
        .to_owned();
    let link = link_of(&r);
    assert!(
        link.starts_with(&format!("/api/v1/assets/{id}/download?expires=")),
        "{link}"
    );
    assert!(expires_at.ends_with('Z'), "{expires_at}");

    assert_eq!(fetch_file(&ctx, &link).await, (200, png.clone()));
    let count =
        ctx.get(&format!("/api/v1/assets/{id}")).await.json["data"]["download_count"].clone();
    assert_eq!(count, 1, "a signed download counts");

    let (path, query) = link.split_once('?').expect("query");
    let expires: u64 = query
        .split('&')
        .find_map(|p| p.strip_prefix("expires="))
        .and_then(|e| e.parse().ok())
        .expect("expires");
    let signature = query
        .split("signature=")
        .nth(1)
        .expect("signature")
        .to_owned();
    let far = forged(&ctx, "asset", &id, now() + 8 * 24 * 3600).await;
    let tampered = {
        let (first, rest) = signature.split_at(1);
        format!("{}{rest}", if first == "A" { "B" } else { "A" })
    };
    // Without any of its parameters a link is a plain keyless request: 401 as well.
    let bare = Resp::from(ctx.request(Method::GET, path, None)).await;
    assert_eq!(bare.status, 401);
    let bad = [
        format!("{path}?expires={expires}"),
        format!("{path}?signature={signature}"),
        format!("{path}?{query}&expires={expires}"),
        format!("{path}?{query}&signature={signature}"),
        format!("{path}?expires=abc&signature={signature}"),
        format!("{path}?expires={}&signature={signature}", expires + 1),
        format!("{path}?expires={expires}&signature={tampered}"),
        format!("{path}?expires={expires}&signature=%FF"),
        format!("{path}?{far}"),
        format!("/api/v1/assets/{other}/download?{query}"),
        format!("/api/v1/assets/not-an-id/download?{query}"),
        format!("{path}?{}", forged(&ctx, "asset", &id, now() - 5).await),
    ];
    for target in bad {
        let (status, _) = fetch_file(&ctx, &target).await;
        assert_eq!(status, 401, "{target}");
        let r = Resp::from(ctx.request(Method::GET, &target, None)).await;
        r.assert(
            401,
            json!({"error": "Unauthorized", "message": UNAUTHORIZED}),
        );
        assert_eq!(r.header("www-authenticate"), Some("Bearer"), "{target}");
    }
    // Within the 7 days it works; a key still wins over the link's parameters.
    let week = forged(&ctx, "asset", &id, now() + 7 * 24 * 3600).await;
    assert_eq!(fetch_file(&ctx, &format!("{path}?{week}")).await.0, 200);
    let keyed = ctx
        .request(
            Method::GET,
            &format!("{path}?expires=1&signature=x"),
            Some(&ctx.admin),
        )
        .send()
        .await
        .expect("request");
    assert_eq!(keyed.status(), 200);

    for (value, ok) in [
        ("0", false),
        ("604801", false),
        ("-1", false),
        ("x", false),
        ("604800", true),
        ("1", true),
    ] {
        let r = ctx
            .get(&format!(
                "/api/v1/assets/{id}/download-url?expires_in={value}"
            ))
            .await;
        if ok {
            assert_eq!(r.status, 200, "{value}");
        } else {
            r.assert_invalid(
                "expires_in",
                "expires_in must be a whole number of seconds from 1 to 604800",
            );
        }
    }
    let unknown = uuid::Uuid::new_v4();
    assert_eq!(
        ctx.get(&format!("/api/v1/assets/{unknown}/download-url"))
            .await
            .status,
        404
    );
    let no_scope = ctx.key(&[Scope::ReadLibraries]).await;
    let r = ctx
        .get_as(
            &format!("/api/v1/assets/{id}/download-url"),
            Some(&no_scope),
        )
        .await;
    assert_eq!(r.status, 403);
}

pub(crate) async fn a_signed_link_downloads_a_library_zip<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = id_of(&create_on(&ctx, "brand/logo.png", samples::png(8, 8), "image").await);
    let doc = |bulk: bool| {
        json!({"title": "Kit", "allow_bulk_download": bulk,
               "unsectioned_assets": [{"asset_id": a}]})
    };
    let (id, _) = create_library(&ctx, &doc(true)).await;
    let link = link_of(
        &ctx.get(&format!("/api/v1/libraries/{id}/download-url"))
            .await,
    );
    assert!(
        link.starts_with(&format!("/api/v1/libraries/{id}/download?")),
        "{link}"
    );
    let zip = ctx
        .request(Method::GET, &link, None)
        .send()
        .await
        .expect("zip");
    assert_eq!(zip.status(), 200);
    assert_eq!(zip.headers()["content-type"], "application/zip");
    let bytes = zip.bytes().await.expect("body");
    assert_eq!(crate::files::unzip(&bytes).len(), 1);
    // The link is for this library's zip only.
    let query = link.split_once('?').expect("query").1;
    let asset_path = format!("/api/v1/assets/{a}/download?{query}");
    assert_eq!(
        Resp::from(ctx.request(Method::GET, &asset_path, None))
            .await
            .status,
        401
    );
    // No bulk download, no link.
    assert_eq!(ctx.put_library(&id, &doc(false)).await.status, 200);
    let r = ctx
        .get(&format!("/api/v1/libraries/{id}/download-url"))
        .await;
    assert_eq!(
        (r.status, &r.json["error"]),
        (403, &json!("Bulk download disabled"))
    );
    assert_eq!(
        Resp::from(ctx.request(Method::GET, &link, None))
            .await
            .status,
        403
    );
}

pub(crate) async fn public_assets_need_no_key<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let png = samples::png(12, 12);
    ctx.put_file("pub/logo.png", png.clone()).await;
    let public = ctx
        .create_asset(
            json!({"title": "Public logo", "asset_type": "image", "is_public": true,
                             "file_path": "pub/logo.png"}),
        )
        .await;
    let id = id_of(&public);
    let private = ctx.asset_id("Private", "pdf").await;
    let draft = id_of(
        &ctx.create_asset(
            json!({"title": "Draft", "asset_type": "link", "is_public": true,
                                 "published": false, "external_url": "https://example.com/"}),
        )
        .await,
    );
    let r = anonymous(&ctx, &format!("/api/v1/assets/{id}")).await;
    r.assert(200, json!({"success": true, "data": public}));
    let download = format!("/api/v1/assets/{id}/download");
    assert_eq!(fetch_file(&ctx, &download).await, (200, png.clone()));

    let no_key = json!({"error": "Unauthorized", "message": "Missing Authorization header"});
    for target in [
        format!("/api/v1/assets/{private}"),
        format!("/api/v1/assets/{private}/download"),
        format!("/api/v1/assets/{draft}"),
        format!("/api/v1/assets/{}", uuid::Uuid::new_v4()),
        "/api/v1/assets/not-an-id".to_owned(),
        "/api/v1/assets".to_owned(),
        format!("/api/v1/assets/{id}/usage"),
        format!("/api/v1/assets/{id}/download-url"),
    ] {
        anonymous(&ctx, &target).await.assert(401, no_key.clone());
    }
    // A key is judged as a key: a bad one is 401 even for a public asset.
    let r = Resp::from(
        ctx.client
            .get(format!("{}/api/v1/assets/{id}", ctx.base_url()))
            .header("authorization", "Bearer alk_nope"),
    )
    .await;
    assert_eq!(r.status, 401);
}

pub(crate) async fn json_reads_answer_304_to_a_matching_etag<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = ctx.asset_id("Tagged", "pdf").await;
    let get_if = |path: String, tag: Option<String>| {
        let mut request = ctx.request(Method::GET, &path, Some(&ctx.admin));
        if let Some(tag) = tag {
            request = request.header("if-none-match", tag);
        }
        Resp::from(request)
    };
    for path in [
        format!("/api/v1/assets/{a}"),
        "/api/v1/assets?per_page=5".to_owned(),
        "/api/v1/libraries".to_owned(),
        format!("/api/v1/assets/{a}/usage"),
    ] {
        let first = get_if(path.clone(), None).await;
        let etag = first
            .header("etag")
            .unwrap_or_else(|| panic!("{path}: no etag"))
            .to_owned();
        let again = get_if(path.clone(), Some(etag.clone())).await;
        assert_eq!((again.status, again.raw.len()), (304, 0), "{path}");
        assert_eq!(again.header("etag"), Some(etag.as_str()));
        let other = get_if(path.clone(), Some("\"other\"".into())).await;
        assert_eq!(other.status, 200, "{path}");
    }
    // A change makes a new tag.
    let before = get_if(format!("/api/v1/assets/{a}"), None).await;
    let path = format!("/api/v1/assets/{a}");
    ctx.send_json(
        Method::PATCH,
        &path,
        Some(&ctx.admin),
        &json!({"title": "Retagged"}),
    )
    .await;
    let tag = before.header("etag").map(str::to_owned);
    assert_eq!(get_if(path, tag).await.status, 200);

    // A library page keeps its tag across views, and a 304 still counts the view.
    let doc = json!({"title": "L", "sections": [{"title": "S", "assets": [{"asset_id": a}]}]});
    let (lib, _) = create_library(&ctx, &doc).await;
    let page = format!("/api/v1/libraries/{lib}");
    let first = get_if(page.clone(), None).await;
    let etag = first.header("etag").expect("etag").to_owned();
    let second = get_if(page.clone(), None).await;
    assert_eq!(second.header("etag"), Some(etag.as_str()));
    assert_eq!(second.json["view_count"], 2);
    let cached = get_if(page.clone(), Some(etag.clone())).await;
    assert_eq!(cached.status, 304);
    let fourth = get_if(page.clone(), None).await;
    assert_eq!(fourth.json["view_count"], 4, "the 304 counted its view");
    let with_assets = get_if(format!("{page}?include_assets=true"), None).await;
    assert_ne!(with_assets.header("etag"), Some(etag.as_str()));
    let head = Resp::from(ctx.request(Method::HEAD, &page, Some(&ctx.admin))).await;
    assert_eq!(head.header("etag"), Some(etag.as_str()));
    ctx.send_json(
        Method::PATCH,
        &format!("/api/v1/assets/{a}"),
        Some(&ctx.admin),
        &json!({"title": "Again"}),
    )
    .await;
    // The page with assets shows the new title; the one with counts only did not change.
    let full = format!("{page}?include_assets=true");
    let full_tag = with_assets.header("etag").map(str::to_owned);
    assert_eq!(get_if(full, full_tag).await.status, 200, "the page changed");
    assert_eq!(get_if(page, Some(etag)).await.status, 304);
}

pub(crate) async fn rate_limits_are_per_key<H: Harness>() {
    let mut config = Config::default();
    config.rate_limit = Some(assetlib::RateLimit {
        per_second: std::num::NonZeroU32::new(1).expect("1"),
        burst: std::num::NonZeroU32::new(5).expect("5"),
    });
    let ctx = Ctx::with_config::<H>(config).await;
    let first = ctx.key(&[Scope::ReadAssets]).await;
    let second = ctx.key(&[Scope::ReadAssets]).await;
    // Requests until the first 429: the burst passes, and then at most the budget that came
    // back meanwhile (one a second), however slow the machine.
    let started = std::time::Instant::now();
    let mut ok = 0;
    let limited = loop {
        let r = ctx.get_as("/api/v1/assets", Some(&first)).await;
        if r.status != 200 {
            break r;
        }
        ok += 1;
        assert!(ok <= 50, "no 429 after {ok} requests");
    };
    let refilled = started.elapsed().as_secs() + 1;
    assert!(
        (5..=5 + refilled).contains(&ok),
        "{ok} requests passed a burst of 5 in {:?}",
        started.elapsed()
    );
    assert_eq!(limited.status, 429, "{}", limited.json);
    assert_eq!(limited.json["error"], "Too many requests");
    let retry: u64 = limited
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in whole seconds");
    assert!((1..=2).contains(&retry), "{retry}");
    // Another key has a budget of its own; requests without a valid key count for no key.
    assert_eq!(
        ctx.get_as("/api/v1/assets", Some(&second)).await.status,
        200
    );
    assert_eq!(
        ctx.get_as("/api/v1/assets", Some("alk_unknown"))
            .await
            .status,
        401
    );
    tokio::time::sleep(std::time::Duration::from_millis(1100 * retry)).await;
    assert_eq!(ctx.get_as("/api/v1/assets", Some(&first)).await.status, 200);
}
