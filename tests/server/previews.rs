//! `thumbnails backfill`: a video stored while the server had no ffmpeg gets its poster frame
//! from the command, which leaves `updated_at` alone and finds nothing to do when run again.

use reqwest::Method;
use serde_json::json;

use assetlib_testkit::tools::FFMPEG;

use crate::running::{Running, SERVERS, create_key, run, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backfill_gives_old_videos_their_poster_frames() {
    for example in SERVERS {
        a_backfill_gives_old_videos_their_poster_frames_on(example).await;
    }
}

async fn a_backfill_gives_old_videos_their_poster_frames_on(example: &str) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let media = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/media");
    std::fs::create_dir_all(data.join("files/video")).unwrap();
    std::fs::copy(
        media.join("h264-rotated.mov"),
        data.join("files/video/clip.mov"),
    )
    .unwrap();
    let key = create_key(example, &data, "read:assets,write:assets");

    // Stored by a server without ffmpeg: the facts, no thumbnail.
    let server = Running::start(example, &data, &logs, &[]).await;
    let body = json!({"title": "Clip", "asset_type": "video", "file_path": "video/clip.mov"});
    let (status, created) = server
        .send(Method::POST, "/api/v1/assets", &key, Some(body))
        .await;
    assert_eq!(status, 201, "{created}");
    let video = created["data"].clone();
    assert_eq!(video["thumbnail_path"], serde_json::Value::Null, "{video}");
    let (status, _) = server
        .send(
            Method::POST,
            "/api/v1/assets",
            &key,
            Some(json!({"title": "Site", "asset_type": "link", "external_url": "https://example.com/"})),
        )
        .await;
    assert_eq!(status, 201);
    server.terminate().await;

    let ffmpeg = FFMPEG.require();
    let args = [
        "thumbnails",
        "backfill",
        "--data",
        data.to_str().unwrap(),
        "--ffmpeg",
        ffmpeg.to_str().unwrap(),
    ];
    let out = run(example, &args);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{said}{}", text(&out.stderr));
    assert!(
        said.contains("2 assets looked at: 1 read again now have a thumbnail, 0 have none"),
        "{said}"
    );
    // Run again: nothing left to do.
    let out = run(example, &args);
    let said = text(&out.stdout);
    assert!(
        said.contains("2 assets looked at: 0 read again now have a thumbnail, 0 have none"),
        "{said}"
    );

    let server = Running::start(example, &data, &logs, &[]).await;
    let id = video["id"].as_str().unwrap();
    let (status, got) = server.get(&format!("/api/v1/assets/{id}"), &key).await;
    assert_eq!(status, 200);
    let after = &got["data"];
    let thumb = after["thumbnail_path"].as_str().expect("a poster frame");
    assert!(thumb.ends_with(".jpg"), "{thumb}");
    assert!(after["thumbnail_placeholder"].is_string(), "{after}");
    assert_eq!(
        after["updated_at"], video["updated_at"],
        "a backfill is no edit"
    );
    let r = reqwest::get(format!("{}/files/{thumb}", server.base))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    server.terminate().await;
}
