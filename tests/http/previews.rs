//! Previews over HTTP: a video's facts read from its container, its poster frame when the
//! service has an ffmpeg (and a hanging one killed), and `POST .../thumbnail` making a
//! thumbnail anew.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assetlib::AssetType;
use assetlib::Config;
use assetlib::extract::{self, Limits, samples};
use assetlib_testkit::tools::FFMPEG;
use reqwest::Method;
use serde_json::{Value, json};

use crate::files::create_on;
use crate::harness::Harness;
use crate::support::{Ctx, Resp, id_of};

/// A file of the committed media corpus (`testdata/media`, made by its `make.sh`).
fn media(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/media")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// The thumbnail at `path`, fetched without a key, as (width, height, mime type).
async fn thumbnail_size(ctx: &Ctx, path: &str) -> (u32, u32, String) {
    let r = reqwest::get(format!("{}/files/{path}", ctx.base_url()))
        .await
        .expect("request");
    assert_eq!(r.status(), 200, "{path}");
    let bytes = r.bytes().await.expect("body");
    let info = extract::extract(&bytes, path, Some(AssetType::Image), &Limits::default())
        .expect("an image");
    (
        info.width.expect("width"),
        info.height.expect("height"),
        info.mime_type,
    )
}

/// A video asset's width, height, playing time and codec.
fn facts(a: &Value) -> Value {
    json!([
        a["width"],
        a["height"],
        a["duration_seconds"],
        a["video_codec"]
    ])
}

/// A world whose ffmpeg is a shell script running `body`, kept in `dir`, and whose files must
/// be read within `timeout`.
async fn with_fake_ffmpeg<H: Harness>(dir: &Path, body: &str, timeout: Duration) -> Ctx {
    use std::os::unix::fs::PermissionsExt as _;
    let fake = dir.join("ffmpeg");
    std::fs::write(&fake, format!("#!/bin/sh\n{body}")).expect("write script");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut config = Config::default();
    config.ffmpeg = Some(fake);
    config.extract_timeout = timeout;
    Ctx::with_config::<H>(config).await
}

/// Creates a video asset on `h264.mp4`, which must answer within 10 seconds.
async fn create_video_in_time(ctx: &Ctx) -> Value {
    let started = Instant::now();
    let a = create_on(ctx, "video/clip.mp4", media("h264.mp4"), "video").await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "{took:?}");
    a
}

async fn remake(ctx: &Ctx, id: &str, key: &str) -> Resp {
    let path = format!("/api/v1/assets/{id}/thumbnail");
    Resp::from(ctx.request(Method::POST, &path, Some(key))).await
}

pub(crate) async fn videos_read_their_facts_from_the_container<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    // A QuickTime file turned a quarter: shown 120 x 160.
    let a = create_on(&ctx, "video/turned.mov", media("h264-rotated.mov"), "video").await;
    assert_eq!(facts(&a), json!([120, 160, 2.0, "h264"]), "{a}");
    // Without ffmpeg a video has no thumbnail, so no placeholder either.
    assert_eq!(
        (&a["thumbnail_path"], &a["thumbnail_placeholder"]),
        (&Value::Null, &Value::Null)
    );
    let a = create_on(&ctx, "video/clip.webm", media("vp9.webm"), "video").await;
    assert_eq!(facts(&a), json!([160, 120, 2.0, "vp9"]), "{a}");
    // Audio and video facts show on the asset as read back, and on its library.
    let id = id_of(&a);
    let got = ctx.get(&format!("/api/v1/assets/{id}")).await;
    assert_eq!(got.json["data"]["video_codec"], "vp9", "{}", got.json);
    let lib = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Clips", "is_published": true,
        "sections": [{"title": "All", "assets": [{"asset_id": id}]}]});
    assert_eq!(ctx.put_library(&lib, &doc).await.status, 201);
    let got = ctx
        .get(&format!("/api/v1/libraries/{lib}?include_assets=true"))
        .await;
    let placed = &got.json["sections"][0]["assets"][0];
    assert_eq!(placed["duration_seconds"], 2.0, "{}", got.json);
}

pub(crate) async fn a_poster_frame_is_drawn_by_the_configured_ffmpeg<H: Harness>() {
    let mut config = Config::default();
    config.ffmpeg = Some(FFMPEG.require());
    let ctx = Ctx::with_config::<H>(config).await;
    let a = create_on(&ctx, "video/turned.mov", media("h264-rotated.mov"), "video").await;
    let thumb = a["thumbnail_path"].as_str().expect("a poster frame");
    assert!(thumb.ends_with(".jpg"), "{thumb}");
    assert!(a["thumbnail_placeholder"].is_string(), "{a}");
    // As shown (turned), and never enlarged past the picture's own size.
    assert_eq!(
        thumbnail_size(&ctx, thumb).await,
        (120, 160, "image/jpeg".into())
    );
    let a = create_on(&ctx, "video/clip.webm", media("av1.webm"), "video").await;
    let thumb = a["thumbnail_path"].as_str().expect("a poster frame");
    assert_eq!(thumbnail_size(&ctx, thumb).await.0, 160);
    // A file ffmpeg cannot read gets no thumbnail, and is still created.
    let mut broken = media("h264.mp4");
    let mdat = broken.windows(4).position(|w| w == b"mdat").expect("mdat");
    broken[mdat + 4..mdat + 2000].fill(0);
    let a = create_on(&ctx, "video/broken.mp4", broken, "video").await;
    assert_eq!(a["width"], 160, "{a}");
    assert_eq!(a["thumbnail_path"], Value::Null, "{a}");
}

pub(crate) async fn an_ffmpeg_that_hangs_is_killed_at_the_deadline<H: Harness>() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pid_file = dir.path().join("pid");
    let body = format!("echo $$ > '{}'\nexec sleep 600\n", pid_file.display());
    let ctx = with_fake_ffmpeg::<H>(dir.path(), &body, Duration::from_secs(2)).await;
    let a = create_video_in_time(&ctx).await;
    assert_eq!(a["thumbnail_path"], Value::Null, "{a}");
    assert_eq!(a["duration_seconds"], 2.0, "the facts are there: {a}");
    let pid = std::fs::read_to_string(&pid_file).expect("the script ran");
    let alive = std::path::Path::new(&format!("/proc/{}", pid.trim())).exists();
    assert!(
        !alive,
        "ffmpeg ({}) still runs past its deadline",
        pid.trim()
    );
}

pub(crate) async fn a_thumbnail_is_made_anew_on_request<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = create_on(&ctx, "docs/report.pdf", samples::pdf(2, 30), "pdf").await;
    let id = id_of(&a);
    let old = a["thumbnail_path"]
        .as_str()
        .expect("a thumbnail")
        .to_owned();
    let r = remake(&ctx, &id, &ctx.admin).await;
    assert_eq!(r.status, 200, "{}", r.json);
    let after = &r.json["data"];
    let new = after["thumbnail_path"].as_str().expect("a thumbnail");
    assert_ne!(new, old, "a new name");
    assert_eq!(
        after["thumbnail_placeholder"], a["thumbnail_placeholder"],
        "same picture"
    );
    assert!(
        after["updated_at"].as_str() > a["updated_at"].as_str(),
        "{after}"
    );
    assert_eq!(thumbnail_size(&ctx, new).await.1, 320);
    let gone = reqwest::get(format!("{}/files/{old}", ctx.base_url()))
        .await
        .expect("request");
    assert_eq!(gone.status(), 404, "the old thumbnail is removed");
    let got = ctx.get(&format!("/api/v1/assets/{id}")).await;
    assert_eq!(got.json["data"]["thumbnail_path"], new, "stored");

    // No file, no thumbnail to make; unknown and malformed ids; a file that is gone.
    let link = ctx
        .create_asset(json!({"title": "Site", "asset_type": "link",
            "external_url": "https://example.com/"}))
        .await;
    let r = remake(&ctx, &id_of(&link), &ctx.admin).await;
    assert_eq!(
        (r.status, &r.json["field"]),
        (400, &json!("asset_id")),
        "{}",
        r.json
    );
    let r = remake(&ctx, &uuid::Uuid::new_v4().to_string(), &ctx.admin).await;
    assert_eq!(
        (r.status, &r.json["message"]),
        (404, &json!("Asset not found")),
        "{}",
        r.json
    );
    let r = remake(&ctx, "not-an-id", &ctx.admin).await;
    assert_eq!(
        (r.status, &r.json["field"]),
        (400, &json!("asset_id")),
        "{}",
        r.json
    );
    std::fs::remove_file(ctx.files_dir().join("docs/report.pdf")).expect("remove");
    let r = remake(&ctx, &id, &ctx.admin).await;
    assert_eq!(
        (r.status, &r.json["field"]),
        (400, &json!("file_path")),
        "{}",
        r.json
    );
    let got = ctx.get(&format!("/api/v1/assets/{id}")).await;
    assert_eq!(
        got.json["data"]["thumbnail_path"], new,
        "a failed remake changes nothing"
    );
    // A key without write:assets may not.
    let reader = ctx.key(&[assetlib::Scope::ReadAssets]).await;
    assert_eq!(remake(&ctx, &id, &reader).await.status, 403);
}

pub(crate) async fn hostile_videos_are_created_without_facts_or_a_thumbnail<H: Harness>() {
    let mut config = Config::default();
    config.ffmpeg = Some(FFMPEG.require());
    config.extract_timeout = Duration::from_secs(10);
    let ctx = Ctx::with_config::<H>(config).await;
    let whole = media("h264-faststart.mp4");
    let moov = whole.windows(4).position(|w| w == b"moov").expect("moov") - 4;
    // moov cut short; moov claiming 4 GiB; endless empty boxes; a Matroska Info claiming 2^50
    // bytes.
    let cut = whole[..moov + 200].to_vec();
    let mut claims = whole.clone();
    claims[moov..moov + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    let mut endless = whole[..moov].to_vec();
    for _ in 0..5000 {
        endless.extend_from_slice(&[0, 0, 0, 8, b'f', b'r', b'e', b'e']);
    }
    let mut huge = media("vp9.webm");
    let info = huge
        .windows(4)
        .position(|w| w == [0x15, 0x49, 0xA9, 0x66])
        .expect("Info");
    let mut size = (1u64 << 50).to_be_bytes();
    size[0] = 0x01;
    huge.splice(info + 4..info + 5, size);
    for (name, bytes) in [
        ("cut.mp4", cut),
        ("claims.mp4", claims),
        ("endless.mp4", endless),
        ("huge.webm", huge),
    ] {
        let started = Instant::now();
        let a = create_on(&ctx, &format!("video/{name}"), bytes, "video").await;
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{name}: {:?}",
            started.elapsed()
        );
        assert_eq!(facts(&a), json!([null, null, null, null]), "{name}: {a}");
        assert_eq!(a["thumbnail_path"], Value::Null, "{name}: {a}");
    }
}

pub(crate) async fn an_ffmpeg_that_writes_much_to_its_error_output_still_gives_its_frame<
    H: Harness,
>() {
    let dir = tempfile::tempdir().expect("temp dir");
    let frame = dir.path().join("frame.jpg");
    std::fs::write(&frame, samples::jpeg(160, 120)).expect("write frame");
    // A megabyte of complaints (16 times a pipe's buffer), then the frame.
    let body = format!(
        "head -c 1048576 /dev/zero | tr '\\000' x >&2\ncat '{}'\n",
        frame.display()
    );
    let ctx = with_fake_ffmpeg::<H>(dir.path(), &body, Duration::from_secs(20)).await;
    let a = create_video_in_time(&ctx).await;
    let thumb = a["thumbnail_path"].as_str().expect("the frame");
    assert_eq!(
        thumbnail_size(&ctx, thumb).await,
        (160, 120, "image/jpeg".into())
    );
}
