//! What happens around the operations: unknown routes (JSON 404), wrong methods (JSON 405 with
//! `Allow`), bodies over the limit (413, by `Content-Length` and while streaming), bodies cut
//! short (400), and `HEAD`.

use assetlib::Config;
use reqwest::Method;
use serde_json::json;

use crate::harness::Harness;
use crate::support::{Ctx, Resp, raw_head, raw_request};

pub(crate) async fn unknown_routes_are_json_404<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let not_found = json!({"error": "Not found", "message": "No such route"});
    for path in [
        "/api/v1",
        "/api/v1/",
        "/api/v1/nothing",
        "/api/v1/assets/",
        "/api/v1/assets/3f2504e0-4f89-41d3-9a0c-0305e82c3301/versions",
        "/api/v1/libraries/x/y/z",
        "/api/v1/ASSETS",
    ] {
        // The route is checked before the key.
        for key in [None, Some(ctx.admin.as_str())] {
            for method in [Method::GET, Method::POST, Method::DELETE] {
                let r = Resp::from(ctx.request(method.clone(), path, key)).await;
                r.assert(404, not_found.clone());
            }
        }
    }
}

pub(crate) async fn wrong_methods_are_json_405_with_allow<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let id = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
    let cases = [
        (
            "/api/v1/assets".to_owned(),
            "GET, HEAD, POST",
            vec!["PUT", "DELETE", "PATCH"],
        ),
        (
            format!("/api/v1/assets/{id}"),
            "GET, HEAD, PATCH, DELETE",
            vec!["POST", "PUT"],
        ),
        (
            "/api/v1/libraries".to_owned(),
            "GET, HEAD",
            vec!["POST", "PUT", "DELETE", "PATCH"],
        ),
        (
            format!("/api/v1/libraries/{id}"),
            "GET, HEAD, PUT, DELETE",
            vec!["POST", "PATCH", "TRACE"],
        ),
    ];
    for (path, allow, methods) in cases {
        for method in methods {
            // The route is checked before the key.
            for key in [None, Some(ctx.admin.as_str())] {
                let m = Method::from_bytes(method.as_bytes()).unwrap();
                let r = Resp::from(ctx.request(m, &path, key)).await;
                r.assert(
                    405,
                    json!({"error": "Method not allowed",
                           "message": format!("Method {method} is not allowed here; allowed: {allow}")}),
                );
                assert_eq!(r.header("allow"), Some(allow), "{method} {path}");
            }
        }
    }
}

pub(crate) async fn oversized_bodies_are_413<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let limit = Config::default().max_json_body;
    let too_large = json!({"error": "Payload too large",
                           "message": format!("Request body exceeds the limit of {limit} bytes")});
    // A declared length over the limit is refused at once: the body is never sent, and the
    // answer must not wait for it.
    let auth = format!("Authorization: Bearer {}\r\n", ctx.admin);
    for (method, path) in [
        ("POST", "/api/v1/assets".to_owned()),
        ("PUT", format!("/api/v1/libraries/{}", uuid::Uuid::new_v4())),
    ] {
        for length in [limit + 1, 100_000_000] {
            let headers =
                format!("{auth}Content-Type: application/json\r\nContent-Length: {length}\r\n");
            let head = raw_head(method, &path, &headers);
            let r = raw_request(ctx.base_url(), &[head.as_bytes()], false).await;
            assert_eq!(
                (r.status, &r.json),
                (413, &too_large),
                "{method} {path} {length}"
            );
        }
    }
    // Exactly at the limit is read and judged by its content.
    let padding = limit
        - json!({"title": "T", "asset_type": "pdf", "p": ""})
            .to_string()
            .len();
    let at_limit = json!({"title": "T", "asset_type": "pdf", "p": " ".repeat(padding)});
    assert_eq!(at_limit.to_string().len(), limit);
    assert_eq!(ctx.post_asset(&at_limit).await.status, 201);
    // One byte more, sent whole by a real client.
    let mut config = Config::default();
    config.max_json_body = 64;
    let small = Ctx::with_config::<H>(config).await;
    let over = json!({"title": "T", "asset_type": "pdf", "p": " ".repeat(64)});
    let r = small.post_asset(&over).await;
    r.assert(
        413,
        json!({"error": "Payload too large",
                         "message": "Request body exceeds the limit of 64 bytes"}),
    );
}

pub(crate) async fn oversized_chunked_bodies_are_413<H: Harness>() {
    let mut config = Config::default();
    config.max_json_body = 4096;
    let ctx = Ctx::with_config::<H>(config).await;
    let headers = format!(
        "Authorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\n",
        ctx.admin
    );
    let head = raw_head("POST", "/api/v1/assets", &headers);
    let chunked = |chunks: &[&[u8]]| -> Vec<u8> {
        let mut out = head.as_bytes().to_vec();
        for c in chunks {
            out.extend(format!("{:x}\r\n", c.len()).as_bytes());
            out.extend(*c);
            out.extend(b"\r\n");
        }
        out.extend(b"0\r\n\r\n");
        out
    };
    // No Content-Length: the server finds out while reading.
    let space = [b' '; 1024];
    let request = chunked(&[&space[..]; 5]);
    let r = raw_request(
        ctx.base_url(),
        &request.chunks(1500).collect::<Vec<_>>(),
        false,
    )
    .await;
    assert_eq!(
        (r.status, r.json),
        (
            413,
            json!({"error": "Payload too large",
                     "message": "Request body exceeds the limit of 4096 bytes"})
        )
    );
    // Under the limit, in chunks, it is read whole.
    let doc = br#"{"title": "Chunked", "asset_type": "collection"}"#;
    let request = chunked(&doc.chunks(7).collect::<Vec<_>>());
    let r = raw_request(ctx.base_url(), &[&request], false).await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(r.json["data"]["title"], "Chunked");
}

pub(crate) async fn head_answers_like_get_without_a_body<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let id = ctx.asset_id("Headed", "pdf").await;
    for path in [
        "/api/v1/assets".to_owned(),
        format!("/api/v1/assets/{id}"),
        "/api/v1/libraries".to_owned(),
    ] {
        let get = ctx.get(&path).await;
        let head = Resp::from(ctx.request(Method::HEAD, &path, Some(&ctx.admin))).await;
        assert_eq!(head.status, 200, "{path}");
        assert!(head.raw.is_empty(), "{path}");
        assert_eq!(head.header("content-type"), Some("application/json"));
        assert_eq!(
            head.header("content-length"),
            Some(get.raw.len().to_string().as_str()),
            "{path}"
        );
    }
    let r = Resp::from(ctx.request(Method::HEAD, "/api/v1/assets", None)).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.header("www-authenticate"), Some("Bearer"));
}

pub(crate) async fn bodies_cut_short_are_400<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    // 100 bytes promised, 10 sent, then the client stops sending.
    let headers = format!(
        "Authorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n",
        ctx.admin
    );
    let head = raw_head("POST", "/api/v1/assets", &headers);
    let r = raw_request(ctx.base_url(), &[head.as_bytes(), b"{\"title\":"], true).await;
    assert_eq!(
        (r.status, r.json),
        (
            400,
            json!({"error": "Validation error", "message": "Request body could not be read",
                     "field": "body"})
        )
    );
    assert_eq!(
        ctx.get("/api/v1/assets").await.json["pagination"]["total"],
        0
    );
}

pub(crate) async fn nested_under_a_prefix_locations_include_it<H: Harness>() {
    let ctx = Ctx::start_under::<H>("dam").await;
    let created = ctx
        .post_asset(&json!({"title": "Nested", "asset_type": "pdf"}))
        .await;
    assert_eq!(created.status, 201, "{}", created.json);
    let id = created.json["data"]["id"].as_str().unwrap().to_owned();
    let location = format!("/dam/api/v1/assets/{id}");
    assert_eq!(created.header("location"), Some(location.as_str()));

    let library = uuid::Uuid::new_v4();
    let put = ctx
        .put_library(&library.to_string(), &json!({"title": "Nested library"}))
        .await;
    assert_eq!(put.status, 201, "{}", put.json);
    let location = format!("/dam/api/v1/libraries/{library}");
    assert_eq!(put.header("location"), Some(location.as_str()));

    // The Location is where the record is.
    let origin = ctx.base_url().trim_end_matches("/dam");
    let r = Resp::from(
        ctx.client
            .get(format!("{origin}{location}"))
            .bearer_auth(&ctx.admin),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(r.json["title"], "Nested library");
    ctx.get("/api/v1/nothing").await.assert(
        404,
        json!({"error": "Not found", "message": "No such route"}),
    );
}

pub(crate) async fn the_openapi_document_is_served_without_a_key<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let committed = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/openapi.json"))
        .expect("openapi.json at the repository root");
    for key in [None, Some(ctx.admin.as_str())] {
        let r = ctx.get_as("/api/v1/openapi.json", key).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.headers["content-type"], "application/json");
        assert!(
            r.raw == committed,
            "the served document is not openapi.json"
        );
        let etag = r.headers["etag"].clone();
        let again = Resp::from(
            ctx.request(Method::GET, "/api/v1/openapi.json", key)
                .header("if-none-match", etag),
        )
        .await;
        assert_eq!(again.status, 304);
    }
    let head = Resp::from(ctx.request(Method::HEAD, "/api/v1/openapi.json", None)).await;
    assert_eq!(head.status, 200);
    assert!(head.raw.is_empty());
}
