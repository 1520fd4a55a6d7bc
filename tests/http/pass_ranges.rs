//! A pass's `max_downloads` against ranges: fetching a file again by ranges spends a download
//! a copy (through the pass and through its signed links), while a download resumed after a
//! broken connection is still one download.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use uuid::Uuid;

use crate::files::create_on;
use crate::harness::Harness;
use crate::support::{Ctx, id_of};

/// A paid library of one text document of `size` bytes: the library's id, the asset's id
/// and the file's bytes.
async fn shop(ctx: &Ctx, size: usize) -> (String, String, Vec<u8>) {
    let line = b"Pages of a catalogue, sold by the copy to whoever bought the pass.\n";
    let file: Vec<u8> = line.iter().copied().cycle().take(size).collect();
    let asset = create_on(ctx, "shop/catalogue.txt", file.clone(), "document").await;
    let id = id_of(&asset);
    let library = Uuid::new_v4().to_string();
    let doc = json!({"title": "Catalogue", "is_paid": true, "price": 30,
        "unsectioned_assets": [{"asset_id": id}]});
    let r = ctx.put_library(&library, &doc).await;
    assert_eq!(r.status, 201, "{}", r.json);
    (library, id, file)
}

/// A pass of `library` allowing `max` downloads: its id and token.
async fn pass(ctx: &Ctx, library: &str, max: u64) -> (String, String) {
    let r = ctx
        .send_json(
            reqwest::Method::POST,
            &format!("/api/v1/libraries/{library}/passes"),
            Some(&ctx.admin),
            &json!({"label": "Buyer", "expires_in": 3600, "max_downloads": max}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let data = &r.json["data"];
    (
        id_of(data),
        data["token"].as_str().expect("token").to_owned(),
    )
}

/// `GET url` with the pass `token` (none for a signed link) and `range`: status and body.
async fn ranged(ctx: &Ctx, url: &str, token: Option<&str>, range: &str) -> (u16, Vec<u8>) {
    let mut request = ctx.client.get(url).header("range", range);
    if let Some(token) = token {
        request = request.header("authorization", format!("Pass {token}"));
    }
    let r = request.send().await.expect("request");
    let status = r.status().as_u16();
    (status, r.bytes().await.expect("body").to_vec())
}

async fn downloads_used(ctx: &Ctx, library: &str, pass: &str) -> Value {
    let r = ctx
        .get(&format!("/api/v1/libraries/{library}/passes/{pass}"))
        .await;
    r.json["data"]["downloads_used"].clone()
}

pub(crate) async fn ranges_cannot_get_around_a_pass_download_limit<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let (library, asset, file) = shop(&ctx, 256 * 1024).await;
    let download = format!("{}/api/v1/assets/{asset}/download", ctx.base_url());

    // Through the pass: the first range is the one download, the next fourteen are refused.
    let (id, token) = pass(&ctx, &library, 1).await;
    let mut statuses = Vec::new();
    for _ in 0..15 {
        let (status, body) = ranged(&ctx, &download, Some(&token), "bytes=1-").await;
        if status == 206 {
            assert_eq!(body, file[1..], "the rest of the file");
        }
        statuses.push(status);
    }
    assert_eq!(statuses[0], 206);
    assert!(statuses[1..].iter().all(|s| *s == 403), "{statuses:?}");
    assert_eq!(downloads_used(&ctx, &library, &id).await, 1);

    // Through a signed link the pass minted: the same.
    let (id, token) = pass(&ctx, &library, 1).await;
    let r = ctx
        .client
        .get(format!(
            "{}/api/v1/assets/{asset}/download-url",
            ctx.base_url()
        ))
        .header("authorization", format!("Pass {token}"))
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 200);
    let link: Value = r.json().await.expect("JSON");
    let link = format!(
        "{}{}",
        ctx.base_url(),
        link["data"]["url"].as_str().expect("url")
    );
    let mut statuses = Vec::new();
    for _ in 0..15 {
        statuses.push(ranged(&ctx, &link, None, "bytes=1-").await.0);
    }
    assert_eq!(statuses[0], 206);
    assert!(statuses[1..].iter().all(|s| *s == 403), "{statuses:?}");
    assert_eq!(downloads_used(&ctx, &library, &id).await, 1);

    // Parallel ranges of one copy are one download; a second copy is not free.
    let (id, token) = pass(&ctx, &library, 1).await;
    let half = file.len() / 2;
    let (a, b) = tokio::join!(ranged(&ctx, &download, Some(&token), "bytes=0-"), async {
        // After the first has begun (and counted).
        tokio::time::sleep(Duration::from_millis(200)).await;
        ranged(&ctx, &download, Some(&token), &format!("bytes={half}-")).await
    });
    assert_eq!((a.0, b.0), (206, 206));
    assert_eq!(b.1, file[half..]);
    assert_eq!(downloads_used(&ctx, &library, &id).await, 1);
    assert_eq!(
        ranged(&ctx, &download, Some(&token), "bytes=10-").await.0,
        403
    );
}

/// Reads a download through the pass `token` on a connection with a small receive buffer, and
/// hangs up after `keep` bytes of its body: the body bytes read.
async fn broken_download(ctx: &Ctx, path: &str, token: &str, keep: usize) -> Vec<u8> {
    let addr: std::net::SocketAddr = ctx
        .base_url()
        .trim_start_matches("http://")
        .parse()
        .expect("address");
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .set_recv_buffer_size(64 * 1024)
        .expect("receive buffer");
    let mut stream = socket.connect(addr).await.expect("connect");
    let head =
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Pass {token}\r\n\r\n");
    stream.write_all(head.as_bytes()).await.expect("send");
    let mut got = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let body_from = loop {
        let n = stream.read(&mut buf).await.expect("read");
        assert!(
            n > 0,
            "closed before the body: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]);
            assert!(head.starts_with("HTTP/1.1 200"), "{head}");
            break end + 4;
        }
    };
    while got.len() - body_from < keep {
        let n = stream.read(&mut buf).await.expect("read");
        assert!(n > 0, "the whole body came");
        got.extend_from_slice(&buf[..n]);
    }
    drop(stream);
    got.split_off(body_from)
}

pub(crate) async fn a_download_resumed_after_a_break_is_one_download<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let (library, asset, file) = shop(&ctx, 24 * 1024 * 1024).await;
    let path = format!("/api/v1/assets/{asset}/download");
    let (id, token) = pass(&ctx, &library, 1).await;
    let mut got = broken_download(&ctx, &path, &token, 1024 * 1024).await;
    assert!(got.len() < file.len());
    let url = format!("{}{path}", ctx.base_url());
    if !H::STREAMS_BODIES {
        // The adapter served the whole file before the first byte left: the rest is a
        // second copy.
        let resume = format!("bytes={}-", got.len());
        assert_eq!(ranged(&ctx, &url, Some(&token), &resume).await.0, 403);
        assert_eq!(downloads_used(&ctx, &library, &id).await, 1);
        return;
    }
    // The server learns of the break when it writes next: until then a range would be a
    // second download, refused (and spending nothing).
    let mut tries = 0;
    let rest = loop {
        let (status, body) =
            ranged(&ctx, &url, Some(&token), &format!("bytes={}-", got.len())).await;
        if status == 206 {
            break body;
        }
        assert_eq!(status, 403, "{}", String::from_utf8_lossy(&body));
        tries += 1;
        assert!(tries < 50, "the broken download was never given back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    got.extend_from_slice(&rest);
    assert!(got == file, "the pieces make the file");
    assert_eq!(downloads_used(&ctx, &library, &id).await, 1);
    // Whole again: that is a second copy.
    assert_eq!(ranged(&ctx, &url, Some(&token), "bytes=0-").await.0, 403);
}
