//! What happens around the operations: unknown routes (JSON 404), wrong methods (JSON 405 with
//! `Allow`), bodies over the limit (413, by `Content-Length` and while streaming), and `HEAD`.

use assetlib::Config;
use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::harness::Harness;
use crate::support::{Ctx, Resp};

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
            "GET, HEAD",
            vec!["POST", "PUT", "DELETE", "PATCH"],
        ),
        (
            "/api/v1/libraries".to_owned(),
            "GET, HEAD",
            vec!["POST", "PUT", "DELETE", "PATCH"],
        ),
        (
            format!("/api/v1/libraries/{id}"),
            "GET, HEAD, PUT, DELETE",
            vec!["POST", "PATCH", "OPTIONS"],
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
    let title = "x".repeat(limit);
    let create = json!({"title": title, "asset_type": "pdf"});
    assert!(create.to_string().len() > limit);
    let r = ctx.post_asset(&create).await;
    r.assert(413, too_large.clone());
    let r = ctx
        .put_library(&uuid::Uuid::new_v4().to_string(), &json!({"title": title}))
        .await;
    r.assert(413, too_large);
    // Exactly at the limit is read and judged by its content.
    let padding = limit
        - json!({"title": "T", "asset_type": "pdf", "p": ""})
            .to_string()
            .len();
    let at_limit = json!({"title": "T", "asset_type": "pdf", "p": " ".repeat(padding)});
    assert_eq!(at_limit.to_string().len(), limit);
    assert_eq!(ctx.post_asset(&at_limit).await.status, 201);
}

/// Sends `request` over a fresh connection and returns the status line and the body.
async fn raw_exchange(base_url: &str, head: &str, chunks: &[Vec<u8>]) -> (String, String) {
    let addr = base_url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    for chunk in chunks {
        let framed = [format!("{:x}\r\n", chunk.len()).as_bytes(), chunk, b"\r\n"].concat();
        // The server may answer and stop reading once the limit is passed.
        if stream.write_all(&framed).await.is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.lines().next().unwrap_or("").to_owned();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

pub(crate) async fn oversized_chunked_bodies_are_413<H: Harness>() {
    let mut config = Config::default();
    config.max_json_body = 4096;
    let ctx = Ctx::with_config::<H>(config).await;
    let head = |auth: &str| {
        format!(
            "POST /api/v1/assets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {auth}\r\n\
             Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\
             Connection: close\r\n\r\n"
        )
    };
    // No Content-Length: the server finds out while reading.
    let chunks = vec![vec![b' '; 1024]; 5];
    let (status, body) = raw_exchange(ctx.base_url(), &head(&ctx.admin), &chunks).await;
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&body).unwrap(),
        json!({"error": "Payload too large",
               "message": "Request body exceeds the limit of 4096 bytes"})
    );
    // Under the limit, in chunks, it is read whole.
    let doc = br#"{"title": "Chunked", "asset_type": "collection"}"#;
    let chunks: Vec<Vec<u8>> = doc.chunks(7).map(<[u8]>::to_vec).collect();
    let (status, body) = raw_exchange(ctx.base_url(), &head(&ctx.admin), &chunks).await;
    assert!(status.starts_with("HTTP/1.1 201"), "{status}: {body}");
    assert!(body.contains(r#""title":"Chunked""#), "{body}");
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

pub(crate) async fn declared_oversized_bodies_are_refused_before_they_are_sent<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    // A Content-Length of 100 MB and no body at all: the answer must not wait for it.
    let head = format!(
        "PUT /api/v1/libraries/3f2504e0-4f89-41d3-9a0c-0305e82c3301 HTTP/1.1\r\nHost: test\r\n\
         Authorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Content-Length: 100000000\r\n\r\n",
        ctx.admin
    );
    let addr = ctx.base_url().trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let read = tokio::time::timeout(std::time::Duration::from_secs(10), stream.read(&mut answer))
        .await
        .expect("answered without waiting for the body")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

pub(crate) async fn bodies_cut_short_are_400<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    // 100 bytes promised, 10 sent, then the client stops sending.
    let head = format!(
        "POST /api/v1/assets HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"title\":",
        ctx.admin
    );
    let addr = ctx.base_url().trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.shutdown().await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut answer),
    )
    .await
    .expect("answered")
    .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let (_, body) = answer.split_once("\r\n\r\n").expect("a body");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(body).unwrap(),
        json!({"error": "Validation error", "message": "Request body could not be read",
               "field": "body"})
    );
    assert_eq!(
        ctx.get("/api/v1/assets").await.json["pagination"]["total"],
        0
    );
}
