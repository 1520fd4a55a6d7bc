//! `ETag`s made of the content: a download's is its bytes' SHA-256, a variant's its source's
//! bytes and its parameters, a thumbnail's its (random, never reused) name, so a copy a
//! client holds stays valid wherever the files are kept; `If-None-Match` on a download is
//! 304 and neither counts nor spends.

use assetlib::extract::samples;
use reqwest::Method;
use serde_json::Value;

use crate::files::create_on;
use crate::harness::Harness;
use crate::support::{Ctx, id_of};

/// Status, `ETag` and body length of a GET (or HEAD) of `path` with the admin key and
/// `headers`.
async fn get(
    ctx: &Ctx,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String, usize) {
    let mut request = ctx.request(method, path, Some(&ctx.admin));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let r = request.send().await.expect("request");
    let status = r.status().as_u16();
    let etag = r
        .headers()
        .get("etag")
        .map(|v| v.to_str().expect("etag").to_owned())
        .unwrap_or_default();
    (status, etag, r.bytes().await.expect("body").len())
}

async fn download_count(ctx: &Ctx, id: &str) -> u64 {
    let r = ctx.get(&format!("/api/v1/assets/{id}")).await;
    r.json["data"]["download_count"].as_u64().expect("count")
}

fn content_tag(asset: &Value) -> String {
    let sum = asset["checksum_sha256"].as_str().expect("a checksum");
    format!("\"sha256-{sum}\"")
}

pub(crate) async fn etags_are_made_of_the_content<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let pdf = samples::pdf(2, 30);
    let a = create_on(&ctx, "docs/a.pdf", pdf.clone(), "pdf").await;
    let b = create_on(&ctx, "elsewhere/b.pdf", pdf.clone(), "pdf").await;
    let (a_id, b_id) = (id_of(&a), id_of(&b));
    let tag = content_tag(&a);
    let path = format!("/api/v1/assets/{a_id}/download");

    // The same bytes under two paths: one tag, the checksum's.
    let (status, etag, len) = get(&ctx, Method::GET, &path, &[]).await;
    assert_eq!((status, etag.as_str(), len), (200, tag.as_str(), pdf.len()));
    let other = get(
        &ctx,
        Method::GET,
        &format!("/api/v1/assets/{b_id}/download"),
        &[],
    )
    .await;
    assert_eq!(other.1, tag, "same bytes, same tag");
    assert_eq!(download_count(&ctx, &a_id).await, 1);

    // A copy the client holds: 304 without a body, not counted (GET and HEAD, a weak
    // comparison, a list).
    for (method, held) in [
        (Method::GET, tag.clone()),
        (Method::HEAD, tag.clone()),
        (Method::GET, format!("W/{tag}")),
        (Method::GET, format!("\"x\", {tag}")),
        (Method::GET, "*".to_owned()),
    ] {
        let answer = get(&ctx, method.clone(), &path, &[("if-none-match", &held)]).await;
        assert_eq!(answer, (304, tag.clone(), 0), "{method} {held}");
    }
    assert_eq!(
        download_count(&ctx, &a_id).await,
        1,
        "a 304 is not a download"
    );
    let changed = get(
        &ctx,
        Method::GET,
        &path,
        &[("if-none-match", "\"sha256-00\"")],
    )
    .await;
    assert_eq!((changed.0, changed.2), (200, pdf.len()));
    assert_eq!(download_count(&ctx, &a_id).await, 2);

    // If-Range names the same tag: the range is served.
    let part = get(
        &ctx,
        Method::GET,
        &path,
        &[("range", "bytes=0-9"), ("if-range", &tag)],
    )
    .await;
    assert_eq!((part.0, part.2), (206, 10));

    // A file changed in place behind the API no longer has the record's size: its tag is the
    // file store's, so a copy held under the checksum's tag is not taken for it.
    ctx.put_file("elsewhere/b.pdf", samples::pdf(3, 30)).await;
    let changed = get(
        &ctx,
        Method::GET,
        &format!("/api/v1/assets/{b_id}/download"),
        &[("if-none-match", &tag)],
    )
    .await;
    assert_eq!(changed.0, 200);
    assert_ne!(changed.1, tag);

    // Variants: the same bytes and parameters give one tag, whichever asset they belong to;
    // other parameters another.
    let jpeg = samples::jpeg(640, 480);
    let p = id_of(&create_on(&ctx, "photos/p.jpg", jpeg.clone(), "image").await);
    let q = id_of(&create_on(&ctx, "photos/q.jpg", jpeg, "image").await);
    let variant = |id: &str, w: u32| format!("/api/v1/assets/{id}/image?w={w}&format=jpeg");
    let (p_status, p_tag, _) = get(&ctx, Method::GET, &variant(&p, 100), &[]).await;
    let (q_status, q_tag, _) = get(&ctx, Method::GET, &variant(&q, 100), &[]).await;
    assert_eq!((p_status, q_status), (200, 200));
    assert_eq!(p_tag, q_tag, "same source bytes and parameters");
    let (_, wider, _) = get(&ctx, Method::GET, &variant(&p, 120), &[]).await;
    assert_ne!(wider, p_tag);
    let held = get(
        &ctx,
        Method::GET,
        &variant(&q, 100),
        &[("if-none-match", &p_tag)],
    )
    .await;
    assert_eq!((held.0, held.2), (304, 0));

    // A thumbnail's tag is its name.
    let image = create_on(&ctx, "img/wide.png", samples::png(800, 400), "image").await;
    let thumb = image["thumbnail_path"].as_str().expect("a thumbnail");
    let name = thumb
        .strip_prefix("thumbnails/")
        .expect("under thumbnails/");
    let r = reqwest::get(format!("{}/files/{thumb}", ctx.base_url()))
        .await
        .expect("request");
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["etag"], format!("\"{name}\"").as_str());
}
