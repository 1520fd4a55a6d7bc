//! Values that look harmless and are not: webhook URLs that reach loopback or a private
//! network through an IPv6 spelling of an IPv4 address, or name port 0; tags that carry
//! invisible characters (Unicode's format characters: zero-width spaces and joiners, bidi
//! controls, the byte order mark), which would make two tags that look alike differ. Each is
//! 400 naming its field, wherever it is given.

use assetlib_core::extract::samples;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use serde_json::{Value, json};

use crate::files::{form, upload};
use crate::harness::Harness;
use crate::support::{Ctx, Resp, id_of};

/// `POST /api/v1/webhooks` with `url`.
async fn webhook(ctx: &Ctx, url: &str) -> Resp {
    ctx.send_json(
        Method::POST,
        "/api/v1/webhooks",
        Some(&ctx.admin),
        &json!({"url": url, "enabled": false}),
    )
    .await
}

pub(crate) async fn ipv4_in_ipv6_spellings_and_port_0_are_400_on_url<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let private = "url must not lead to a loopback, private, link-local or reserved address";
    for url in [
        // IPv4-translated (RFC 2765), the spelling the check let through.
        "http://[::ffff:0:7f00:1]/",
        "http://[::ffff:0:127.0.0.1]:8080/hook",
        "http://[::ffff:0:a00:1]/hook",
        "http://[::ffff:0:a9fe:a9fe]/latest",
        // IPv4-mapped.
        "http://[::ffff:7f00:1]/",
        // NAT64, the well-known prefix and the local-use one.
        "http://[64:ff9b::7f00:1]/",
        "http://[64:ff9b::c0a8:101]/",
        "http://[64:ff9b:1::808:808]/",
        // IPv4-compatible.
        "http://[::7f00:1]/",
        "http://[::a00:1]/",
    ] {
        let host = &url[url.find('[').expect("[") + 1..url.find(']').expect("]")];
        let address: std::net::Ipv6Addr = host.parse().expect("an IPv6 address");
        let r = webhook(&ctx, url).await;
        r.assert_invalid("url", &format!("{private} ({address})"));
    }
    for url in [
        "http://93.184.215.14:0/hook",
        "https://[2606:4700::1111]:0/",
        "http://example.com:0/hook",
        "http://8.8.8.8:000/",
    ] {
        let r = webhook(&ctx, url).await;
        r.assert_invalid("url", "url must not name port 0");
    }
    // Nothing was made; a change to such a URL is refused the same way.
    assert_eq!(
        ctx.get("/api/v1/webhooks").await.json["pagination"]["total"],
        json!(0)
    );
    let made = webhook(&ctx, "https://93.184.215.14/hooks").await;
    assert_eq!(made.status, 201, "{}", made.json);
    let path = format!("/api/v1/webhooks/{}", id_of(&made.json["data"]));
    for (url, message) in [
        (
            "http://[::ffff:0:7f00:1]/",
            format!("{private} (::ffff:0:7f00:1)"),
        ),
        (
            "https://93.184.215.14:0/hooks",
            "url must not name port 0".to_owned(),
        ),
    ] {
        let r = ctx
            .send_json(Method::PATCH, &path, Some(&ctx.admin), &json!({"url": url}))
            .await;
        r.assert_invalid("url", &message);
    }
}

/// The invisible characters a tag may not hold, each inside, before and after a word.
fn disguised() -> Vec<String> {
    let invisible = [
        '\u{200b}',
        '\u{200c}',
        '\u{200d}',
        '\u{2060}',
        '\u{feff}',
        '\u{200e}',
        '\u{200f}',
        '\u{202a}',
        '\u{202b}',
        '\u{202c}',
        '\u{202d}',
        '\u{202e}',
        '\u{2066}',
        '\u{2067}',
        '\u{2068}',
        '\u{2069}',
        '\u{ad}',
        '\u{61c}',
        '\u{180e}',
        '\u{2061}',
        '\u{e0001}',
    ];
    invisible
        .iter()
        .flat_map(|c| [format!("lo{c}go"), format!("{c}logo"), format!("logo{c}")])
        .collect()
}

pub(crate) async fn tags_with_invisible_characters_are_400<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let asset = ctx
        .create_asset(json!({"title": "Logo", "asset_type": "link",
            "external_url": "https://example.com/logo", "tags": ["logo"]}))
        .await;
    let id = id_of(&asset);
    let field = |r: &Resp| r.json["field"].clone();
    for tag in disguised() {
        let tags = json!(["brand", tag]);
        let created = ctx
            .post_asset(&json!({"title": "Twin", "asset_type": "link",
                "external_url": "https://example.com/twin", "tags": tags}))
            .await;
        assert_eq!(
            (created.status, field(&created)),
            (400, json!("tags[1]")),
            "create {tag:?}: {}",
            created.json
        );
        let patched = ctx
            .send_json(
                Method::PATCH,
                &format!("/api/v1/assets/{id}"),
                Some(&ctx.admin),
                &json!({"tags": tags}),
            )
            .await;
        assert_eq!(
            (patched.status, field(&patched)),
            (400, json!("tags[1]")),
            "patch {tag:?}: {}",
            patched.json
        );
        let bulk = ctx
            .send_json(
                Method::POST,
                "/api/v1/assets/bulk",
                Some(&ctx.admin),
                &json!({"action": "add_tags", "ids": [id], "changes": {"tags": [tag]}}),
            )
            .await;
        assert_eq!(bulk.status, 400, "bulk {tag:?}: {}", bulk.json);
        assert_eq!(field(&bulk), json!("changes.tags[0]"), "{}", bulk.json);
        let filtered = ctx
            .get(&format!(
                "/api/v1/assets?tag={}",
                percent_encoding::utf8_percent_encode(&tag, percent_encoding::NON_ALPHANUMERIC)
            ))
            .await;
        assert_eq!(
            (filtered.status, field(&filtered)),
            (400, json!("tag")),
            "filter {tag:?}: {}",
            filtered.json
        );
    }
    // An upload's form and a resumable upload's metadata, as text.
    let png = samples::png(8, 8);
    let tag = "lo\u{200b}go";
    let r = upload(
        &ctx,
        form(
            &[("tags", &format!("brand, {tag}"))],
            Some(("dot.png", &png)),
        ),
    )
    .await;
    assert_eq!((r.status, field(&r)), (400, json!("tags[1]")), "{}", r.json);
    let r = Resp::from(
        ctx.request(Method::POST, "/api/v1/uploads", Some(&ctx.admin))
            .header("tus-resumable", "1.0.0")
            .header("upload-length", png.len().to_string())
            .header(
                "upload-metadata",
                format!(
                    "filename {},tags {}",
                    STANDARD.encode("dot.png"),
                    STANDARD.encode(tag)
                ),
            ),
    )
    .await;
    assert_eq!((r.status, field(&r)), (400, json!("tags[0]")), "{}", r.json);

    // Nothing changed: the asset keeps its one tag, and no other asset was made.
    let kept = ctx.get(&format!("/api/v1/assets/{id}")).await;
    assert_eq!(kept.json["data"]["tags"], json!(["logo"]));
    let all = ctx.get("/api/v1/assets?status=any").await;
    assert_eq!(all.json["pagination"]["total"], json!(1), "{}", all.json);
    let listed: Value = ctx.get("/api/v1/tags").await.json;
    assert_eq!(
        listed["data"],
        json!([{"tag": "logo", "count": 1}]),
        "{listed}"
    );
}
