//! Keys and scopes: 401 (with `WWW-Authenticate`), 403 naming the scope, and the order of
//! checks: route, 401, 403, then 400/413/415/404.

use assetlib::Scope;
use chrono::{Duration, Utc};
use reqwest::Method;
use serde_json::{Value, json};

use crate::harness::Harness;
use crate::support::{Ctx, Resp, operations, raw_head, raw_request};

const SOME_ID: &str = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";

fn unauthorized(message: &str) -> Value {
    json!({"error": "Unauthorized", "message": message})
}

#[track_caller]
fn assert_401(r: &Resp, message: &str) {
    r.assert(401, unauthorized(message));
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
}

/// Sends `method path` with an optional raw `Authorization` value and a JSON body.
async fn send_raw(ctx: &Ctx, method: Method, path: &str, authorization: Option<&str>) -> Resp {
    let path = path.replace("{id}", SOME_ID);
    let mut r = ctx
        .client
        .request(method, format!("{}{path}", ctx.base_url()))
        .header("content-type", "application/json")
        .body(json!({"title": "T", "asset_type": "collection"}).to_string());
    if let Some(a) = authorization {
        r = r.header("authorization", a);
    }
    Resp::from(r).await
}

pub(crate) async fn every_operation_without_a_key_is_401_with_www_authenticate<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    for (method, path, _) in operations() {
        let r = send_raw(&ctx, method, path, None).await;
        assert_401(&r, "Missing Authorization header");
    }
}

pub(crate) async fn malformed_unknown_revoked_and_expired_keys_are_401<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let scheme = "Authorization header must be 'Bearer <API key>'";
    let unknown = format!("alk_{}", "A".repeat(43));
    for (header, message) in [
        (format!("Basic {}", ctx.admin), scheme),
        (ctx.admin.clone(), scheme),
        ("Bearer".to_owned(), scheme),
        ("Bearer not-a-key".to_owned(), "Invalid API key"),
        (format!("Bearer {unknown}"), "Invalid API key"),
    ] {
        let r = send_raw(&ctx, Method::GET, "/api/v1/assets", Some(&header)).await;
        assert_401(&r, message);
    }

    let (record, revoked) = ctx
        .service
        .create_key("revoked", Scope::ALL.to_vec(), None)
        .await
        .unwrap();
    let ok = ctx.get_as("/api/v1/assets", Some(&revoked)).await;
    assert_eq!(ok.status, 200, "works before it is revoked");
    assert!(ctx.service.revoke_key(record.id).await.unwrap());
    let r = ctx.get_as("/api/v1/assets", Some(&revoked)).await;
    assert_401(&r, "API key has been revoked");

    let past = Utc::now() - Duration::seconds(1);
    let (_, expired) = ctx
        .service
        .create_key("expired", Scope::ALL.to_vec(), Some(past))
        .await
        .unwrap();
    let r = ctx.get_as("/api/v1/assets", Some(&expired)).await;
    assert_401(&r, "API key has expired");

    let future = Utc::now() + Duration::days(1);
    let (_, valid) = ctx
        .service
        .create_key("later", Scope::ALL.to_vec(), Some(future))
        .await
        .unwrap();
    assert_eq!(ctx.get_as("/api/v1/assets", Some(&valid)).await.status, 200);
}

pub(crate) async fn the_bearer_scheme_is_case_insensitive<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let header = format!("{scheme} {}", ctx.admin);
        let r = send_raw(&ctx, Method::GET, "/api/v1/libraries", Some(&header)).await;
        assert_eq!(r.status, 200, "{scheme}");
    }
}

pub(crate) async fn every_operation_without_its_scope_is_403_naming_it<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    for (method, path, scope) in operations() {
        let key = ctx.key_without(scope).await;
        let r = send_raw(&ctx, method.clone(), path, Some(&format!("Bearer {key}"))).await;
        r.assert(
            403,
            json!({"error": "Insufficient permissions",
                   "message": format!("API key lacks required scope: {scope}")}),
        );
        // The scope alone is enough.
        let only = ctx.key(&[scope]).await;
        let r = send_raw(&ctx, method.clone(), path, Some(&format!("Bearer {only}"))).await;
        assert_ne!(r.status, 403, "{method} {path} with only {scope}");
        assert_ne!(r.status, 401, "{method} {path} with only {scope}");
    }
}

pub(crate) async fn checks_run_in_order_401_then_403_then_400<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let no_read_assets = ctx.key_without(Scope::ReadAssets).await;
    let no_read_libraries = ctx.key_without(Scope::ReadLibraries).await;
    let no_write_libraries = ctx.key_without(Scope::WriteLibraries).await;
    let cases: [(Method, &str, &str, &str, &str); 5] = [
        (
            Method::GET,
            "/api/v1/assets?per_page=abc",
            &no_read_assets,
            "per_page",
            "per_page must be a positive integer",
        ),
        (
            Method::GET,
            "/api/v1/assets/nope",
            &no_read_assets,
            "asset_id",
            "asset_id must be a UUID",
        ),
        (
            Method::GET,
            "/api/v1/libraries?limit=0",
            &no_read_libraries,
            "limit",
            "limit must be a positive integer",
        ),
        (
            Method::GET,
            "/api/v1/libraries/nope",
            &no_read_libraries,
            "library_id",
            "library_id must be a UUID",
        ),
        (
            Method::DELETE,
            "/api/v1/libraries/nope",
            &no_write_libraries,
            "library_id",
            "library_id must be a UUID",
        ),
    ];
    for (method, path, wrong_scope, field, message) in cases {
        let r = ctx
            .request(method.clone(), path, None)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{method} {path} without a key");
        let r = Resp::from(ctx.request(method.clone(), path, Some(wrong_scope))).await;
        assert_eq!(r.status, 403, "{method} {path} without the scope");
        let r = Resp::from(ctx.request(method.clone(), path, Some(&ctx.admin))).await;
        r.assert_invalid(field, message);
    }
}

pub(crate) async fn body_checks_come_after_the_key_and_the_scope<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let no_write_assets = ctx.key_without(Scope::WriteAssets).await;
    let invalid = json!({"asset_type": "pdf"});
    let bodies: [(&str, String, u16); 3] = [
        ("application/json", invalid.to_string(), 400),
        ("application/json", "{not json".to_owned(), 400),
        ("text/plain", invalid.to_string(), 415),
    ];
    for (content_type, body, status) in bodies {
        let send = |key: Option<&str>| {
            ctx.request(Method::POST, "/api/v1/assets", key)
                .header("content-type", content_type)
                .body(body.clone())
        };
        assert_eq!(
            Resp::from(send(None)).await.status,
            401,
            "{status} without a key"
        );
        let r = Resp::from(send(Some(&no_write_assets))).await;
        assert_eq!(r.status, 403, "{status} without the scope");
        assert_eq!(Resp::from(send(Some(&ctx.admin))).await.status, status);
    }
    // A body over the limit (declared, never sent) is 413 only for a key with the scope.
    let too_large = 1024 * 1024 + 1;
    for (key, status) in [
        (None, 401),
        (Some(&no_write_assets), 403),
        (Some(&ctx.admin), 413),
    ] {
        let auth = key
            .map(|k| format!("Authorization: Bearer {k}\r\n"))
            .unwrap_or_default();
        let headers =
            format!("{auth}Content-Type: application/json\r\nContent-Length: {too_large}\r\n");
        let head = raw_head("POST", "/api/v1/assets", &headers);
        let r = raw_request(ctx.base_url(), &[head.as_bytes()], false).await;
        assert_eq!(r.status, status, "{}", r.json);
    }
}

/// The image routes check the credential first too: without a key a variant is 401
/// whatever its parameters, unless it is a preset of a published public asset (whose
/// parameters are checked then); a signed link's parameters are the link's, so bad ones are
/// its 401. A key without the scope is 403 before any parameter is read.
pub(crate) async fn image_parameters_are_checked_after_the_credential<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let image = |name: &'static str| {
        let ctx = &ctx;
        async move {
            let png = assetlib_core::extract::samples::png(64, 48);
            crate::support::id_of(&crate::files::create_on(ctx, name, png, "image").await)
        }
    };
    let (public, private) = (
        image("site/public.png").await,
        image("site/private.png").await,
    );
    let made_public = ctx
        .send_json(
            Method::PATCH,
            &format!("/api/v1/assets/{public}"),
            Some(&ctx.admin),
            &json!({"is_public": true}),
        )
        .await;
    assert_eq!(made_public.status, 200, "{}", made_public.json);
    let no_read_assets = ctx.key_without(Scope::ReadAssets).await;
    let queries = [
        "w=0",
        "w=abc&fit=sideways",
        "q=0",
        "format=gif",
        "dpr=9",
        "w=1&w=2",
        "preset=thumb&w=0",
        "preset=nosuch",
        "w=0&expires=1&signature=x",
    ];
    for id in [public.as_str(), private.as_str(), SOME_ID, "nope"] {
        for query in queries {
            for route in ["image", "image-url"] {
                let path = format!("/api/v1/assets/{id}/{route}?{query}");
                let keyless = Resp::from(ctx.request(Method::GET, &path, None)).await;
                // A preset of the public asset is served without a key: its parameters count.
                let preset_of_public =
                    route == "image" && id == public && query.starts_with("preset=");
                let want = if preset_of_public { 400 } else { 401 };
                assert_eq!(
                    keyless.status, want,
                    "{path} without a key: {}",
                    keyless.json
                );
                if want == 401 {
                    assert_eq!(keyless.header("www-authenticate"), Some("Bearer"), "{path}");
                }
                let r = Resp::from(ctx.request(Method::GET, &path, Some(&no_read_assets))).await;
                assert_eq!(r.status, 403, "{path} without the scope: {}", r.json);
                let r = Resp::from(ctx.request(Method::GET, &path, Some(&ctx.admin))).await;
                assert_eq!(r.status, 400, "{path} with a key: {}", r.json);
            }
        }
    }
    // The keyless preset itself is served.
    let thumb = ctx
        .request(
            Method::GET,
            &format!("/api/v1/assets/{public}/image?preset=thumb"),
            None,
        )
        .send()
        .await
        .expect("request");
    assert_eq!(thumb.status(), 200);
}
