//! What `HEAD` tells of a resumable upload (tus 1.0, "HEAD"): besides its offset and length,
//! the `Upload-Metadata` it was made with, exactly as the client sent it: keys this server does
//! not read and the client's own spelling included. A page's script may read the header
//! (CORS). (An upload always has metadata here: without a `filename` or `title` its asset
//! would have no title.)

use assetlib::Config;
use assetlib_core::extract::samples;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::Method;
use serde_json::json;

use crate::harness::Harness;
use crate::support::{Ctx, Resp};
use crate::uploads::{create, metadata, patch, tus};

pub(crate) async fn head_answers_the_metadata_the_upload_was_made_with<H: Harness>() {
    let origin = "https://www.example.com";
    let mut config = Config::default();
    config.cors_origins = vec![origin.to_owned()];
    let ctx = Ctx::with_config::<H>(config).await;
    let bytes = samples::png(8, 8);
    // As tus-js-client sends it (`filetype` too, which this server does not read), with a key
    // alone and a space after a comma.
    let sent = format!(
        "filename {}, filetype {},title {},resumed,description {}",
        STANDARD.encode("dot.png"),
        STANDARD.encode("image/png"),
        STANDARD.encode("Dot"),
        STANDARD.encode("Ünïcode ✓"),
    );
    let path = create(&ctx, bytes.len(), &sent).await;
    let status = |path: String, method: Method| {
        let ctx = &ctx;
        async move { Resp::from(tus(ctx, method, &path).header("origin", origin)).await }
    };
    let head = status(path.clone(), Method::HEAD).await;
    assert_eq!(head.status, 200, "HEAD {path}");
    assert_eq!(head.header("upload-metadata"), Some(sent.as_str()));
    let exposed = head
        .header("access-control-expose-headers")
        .expect("expose")
        .to_ascii_lowercase();
    assert!(
        exposed.split(", ").any(|h| h == "upload-metadata"),
        "{exposed}"
    );
    let got = status(path.clone(), Method::GET).await;
    assert_eq!(got.status, 200, "{}", got.json);
    assert_eq!(got.header("upload-metadata"), Some(sent.as_str()));

    // The bytes so far do not change it; nor does the last one.
    let half = bytes.len() / 2;
    assert_eq!(patch(&ctx, &path, 0, &bytes[..half]).await.status, 204);
    let head = status(path.clone(), Method::HEAD).await;
    assert_eq!(
        head.header("upload-offset"),
        Some(half.to_string().as_str())
    );
    assert_eq!(head.header("upload-metadata"), Some(sent.as_str()));
    let done = patch(&ctx, &path, half, &bytes[half..]).await;
    assert_eq!(done.status, 204, "{}", done.json);
    let head = status(path.clone(), Method::HEAD).await;
    assert_eq!(head.status, 200);
    assert!(head.header("asset-location").is_some());
    assert_eq!(head.header("upload-metadata"), Some(sent.as_str()));
    // What the server read of it made the asset.
    let location = head.header("asset-location").expect("asset location");
    let asset = ctx
        .get(location.strip_prefix(ctx.base_url()).unwrap_or(location))
        .await;
    assert_eq!(
        (
            &asset.json["data"]["title"],
            &asset.json["data"]["is_public"]
        ),
        (&json!("Dot"), &json!(false)),
        "{}",
        asset.json
    );

    // One made with a single pair answers it as sent.
    let one = metadata(&[("filename", "a.png")]);
    let path = create(&ctx, bytes.len(), &one).await;
    let head = status(path, Method::HEAD).await;
    assert_eq!(head.header("upload-metadata"), Some(one.as_str()));
}
