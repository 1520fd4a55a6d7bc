//! Image variants over HTTP (DESIGN.md §5 "Image variants"): made on request and kept in the
//! file store, served by their strong `ETag`, chosen by `Accept`, opened without a key for
//! presets of public assets and through signed links, removed with the file they are made
//! of, made once however many ask, bounded by the workers and the queue, and the paid-file
//! rule past 640 pixels.

use std::collections::BTreeSet;

use assetlib::extract::samples;
use assetlib::{Config, Scope};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::files::create_on;
use crate::harness::Harness;
use crate::support::{Ctx, Resp, id_of};

/// An answer to an image request: its status, headers and bytes (JSON when it is an error).
struct Got {
    status: u16,
    headers: HeaderMap,
    bytes: Vec<u8>,
}

impl Got {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }

    /// The decoded picture's size, checking the media type says what the bytes are.
    #[track_caller]
    fn size(&self) -> (u32, u32) {
        assert_eq!(self.status, 200, "{}", self.json());
        let format = image::guess_format(&self.bytes).expect("an image");
        let mime = match format {
            image::ImageFormat::Jpeg => "image/jpeg",
            image::ImageFormat::Png => "image/png",
            image::ImageFormat::WebP => "image/webp",
            other => panic!("{other:?}"),
        };
        assert_eq!(self.header("content-type"), Some(mime));
        let picture = image::load_from_memory(&self.bytes).expect("decodes");
        (picture.width(), picture.height())
    }
}

/// `GET path` with `key` (and `headers`).
async fn fetch(ctx: &Ctx, path: &str, key: Option<&str>, headers: &[(&str, &str)]) -> Got {
    let mut r = ctx.client.get(format!("{}{path}", ctx.base_url()));
    if let Some(key) = key {
        r = r.header("authorization", format!("Bearer {key}"));
    }
    for (name, value) in headers {
        r = r.header(*name, *value);
    }
    let response = r.send().await.expect("request");
    Got {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        bytes: response.bytes().await.expect("body").to_vec(),
    }
}

/// `GET path` with the key of every scope.
async fn as_admin(ctx: &Ctx, path: &str) -> Got {
    fetch(ctx, path, Some(&ctx.admin), &[]).await
}

/// Every path fetched with the admin key at the same time, the answers in order.
async fn all_at_once(paths: Vec<String>, ctx: &Ctx) -> Vec<Got> {
    let mut running = tokio::task::JoinSet::new();
    for (i, path) in paths.into_iter().enumerate() {
        let request = ctx
            .client
            .get(format!("{}{path}", ctx.base_url()))
            .header("authorization", format!("Bearer {}", ctx.admin));
        running.spawn(async move {
            let response = request.send().await.expect("request");
            let got = Got {
                status: response.status().as_u16(),
                headers: response.headers().clone(),
                bytes: response.bytes().await.expect("body").to_vec(),
            };
            (i, got)
        });
    }
    let mut answers: Vec<(usize, Got)> = running.join_all().await;
    answers.sort_by_key(|(i, _)| *i);
    answers.into_iter().map(|(_, got)| got).collect()
}

/// The variant files kept for asset `id`.
/// `HEAD path` with the admin key.
async fn head_as_admin(ctx: &Ctx, path: &str) -> reqwest::Response {
    ctx.client
        .head(format!("{}{path}", ctx.base_url()))
        .header("authorization", format!("Bearer {}", ctx.admin))
        .send()
        .await
        .expect("request")
}

fn kept(ctx: &Ctx, id: &str) -> BTreeSet<String> {
    std::fs::read_dir(ctx.files_dir().join("derived").join(id))
        .map(|dir| {
            dir.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) async fn variants_are_made_once_kept_and_served_by_their_etag<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let photo = id_of(&create_on(&ctx, "photos/a.jpg", samples::jpeg(1600, 1200), "image").await);
    let path = format!("/api/v1/assets/{photo}/image?w=400");
    let first = as_admin(&ctx, &path).await;
    assert_eq!(first.size(), (400, 300));
    assert_eq!(first.header("vary"), Some("Accept"), "format auto");
    let etag = first.header("etag").expect("an ETag").to_owned();
    assert!(
        etag.starts_with('"') && !etag.starts_with("W/"),
        "strong: {etag}"
    );
    assert_eq!(kept(&ctx, &photo).len(), 1, "kept in the file store");
    let made = ctx.service.variants_made();

    // Asked again: the kept bytes, nothing made.
    let again = as_admin(&ctx, &path).await;
    assert_eq!(
        (again.header("etag"), &again.bytes),
        (Some(etag.as_str()), &first.bytes)
    );
    assert_eq!(ctx.service.variants_made(), made);
    let not_modified = fetch(&ctx, &path, Some(&ctx.admin), &[("if-none-match", &etag)]).await;
    assert_eq!((not_modified.status, not_modified.bytes.len()), (304, 0));
    assert_eq!(not_modified.header("etag"), Some(etag.as_str()));

    // WebP for a client that takes it; an explicit format is not chosen by Accept.
    let webp = fetch(
        &ctx,
        &path,
        Some(&ctx.admin),
        &[("accept", "image/avif,image/webp,*/*")],
    )
    .await;
    assert_eq!(webp.size(), (400, 300));
    assert_eq!(webp.header("content-type"), Some("image/webp"));
    assert_ne!(webp.header("etag"), Some(etag.as_str()));
    let png = fetch(
        &ctx,
        &format!("{path}&format=png"),
        Some(&ctx.admin),
        &[("accept", "image/webp")],
    )
    .await;
    assert_eq!(png.header("content-type"), Some("image/png"));
    assert_eq!(png.header("vary"), None);

    // Presets and the other fits; never larger than the source.
    let card = as_admin(&ctx, &format!("/api/v1/assets/{photo}/image?preset=card")).await;
    assert_eq!(card.size(), (640, 400));
    let big = as_admin(
        &ctx,
        &format!("/api/v1/assets/{photo}/image?w=4000&h=1000&fit=cover"),
    )
    .await;
    assert_eq!(big.size(), (1600, 400));
    let retina = as_admin(&ctx, &format!("/api/v1/assets/{photo}/image?w=100&dpr=2")).await;
    assert_eq!(retina.size(), (200, 150));
    let head = head_as_admin(&ctx, &path).await;
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["etag"].to_str().ok(), Some(etag.as_str()));

    // A PDF's page 1, drawn at the size asked.
    let pdf = id_of(&create_on(&ctx, "docs/a.pdf", samples::pdf(2, 50), "pdf").await);
    let page = as_admin(&ctx, &format!("/api/v1/assets/{pdf}/image?w=500")).await;
    assert_eq!(page.size(), (500, 647));
    assert_eq!(page.header("content-type"), Some("image/jpeg"));
}

pub(crate) async fn bad_requests_for_variants_say_what_is_wrong<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let photo = id_of(&create_on(&ctx, "photos/a.png", samples::png(300, 200), "image").await);
    for (query, field) in [
        ("w=0", "w"),
        ("w=-1", "w"),
        ("w=abc", "w"),
        ("w=5000", "w"),
        ("w=1&w=2", "w"),
        ("fit=fill", "fit"),
        ("format=bmp", "format"),
        ("q=0", "q"),
        ("dpr=9", "dpr"),
        ("preset=nope", "preset"),
        ("preset=card&w=10", "w"),
    ] {
        let got = as_admin(&ctx, &format!("/api/v1/assets/{photo}/image?{query}")).await;
        assert_eq!(
            (got.status, &got.json()["field"]),
            (400, &json!(field)),
            "{query}: {}",
            got.json()
        );
    }
    // Assets without an image, and images this API cannot decode.
    let link = ctx
        .create_asset(
            json!({"title": "Site", "asset_type": "link", "external_url": "https://example.com/"}),
        )
        .await;
    let doc = create_on(&ctx, "docs/a.docx", samples::docx(&["Hello"]), "document").await;
    for id in [id_of(&link), id_of(&doc)] {
        let got = as_admin(&ctx, &format!("/api/v1/assets/{id}/image?w=10")).await;
        assert_eq!(
            (got.status, &got.json()["message"]),
            (404, &json!("Asset has no image")),
            "{}",
            got.json()
        );
    }
    let missing = uuid::Uuid::new_v4();
    let got = as_admin(&ctx, &format!("/api/v1/assets/{missing}/image")).await;
    assert_eq!(got.status, 404);
    // An image whose file is gone from the store: 404, as its download.
    std::fs::remove_file(ctx.files_dir().join("photos/a.png")).expect("remove");
    let got = as_admin(&ctx, &format!("/api/v1/assets/{photo}/image?w=10")).await;
    assert_eq!(
        (got.status, &got.json()["message"]),
        (404, &json!("Asset has no downloadable file")),
        "{}",
        got.json()
    );
    // A JPEG cut inside its header: 400 saying why, never a 500.
    let mut cut = samples::jpeg(800, 600);
    cut.truncate(120);
    ctx.put_file("photos/cut.jpg", samples::jpeg(800, 600))
        .await;
    let broken = ctx
        .create_asset(json!({"title": "Cut", "asset_type": "image", "file_path": "photos/cut.jpg"}))
        .await;
    std::fs::write(ctx.files_dir().join("photos/cut.jpg"), &cut).expect("cut the file");
    let got = as_admin(
        &ctx,
        &format!("/api/v1/assets/{}/image?w=10", id_of(&broken)),
    )
    .await;
    assert_eq!(
        (got.status, &got.json()["field"]),
        (400, &json!("file")),
        "{}",
        got.json()
    );
}

pub(crate) async fn presets_of_public_assets_and_signed_links_need_no_key<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let public = create_on(&ctx, "site/hero.jpg", samples::jpeg(1200, 800), "image").await;
    let public = id_of(&public);
    let r = ctx
        .send_json(
            reqwest::Method::PATCH,
            &format!("/api/v1/assets/{public}"),
            Some(&ctx.admin),
            &json!({"is_public": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let private =
        id_of(&create_on(&ctx, "site/private.jpg", samples::jpeg(1200, 800), "image").await);

    let thumb = fetch(
        &ctx,
        &format!("/api/v1/assets/{public}/image?preset=thumb"),
        None,
        &[],
    )
    .await;
    assert_eq!(thumb.size(), (320, 213));
    let again = fetch(
        &ctx,
        &format!("/api/v1/assets/{public}/image?preset=thumb"),
        None,
        &[],
    )
    .await;
    assert_eq!(
        (again.status, again.header("etag")),
        (200, thumb.header("etag"))
    );
    let sized = fetch(
        &ctx,
        &format!("/api/v1/assets/{public}/image?w=100"),
        None,
        &[],
    )
    .await;
    assert_eq!(sized.status, 401, "only presets without a key");
    let hidden = fetch(
        &ctx,
        &format!("/api/v1/assets/{private}/image?preset=thumb"),
        None,
        &[],
    )
    .await;
    assert!(matches!(hidden.status, 401 | 404), "{}", hidden.status);
    // The asset read for an image is kept with its rendered answer (the page cache), and a
    // write of it shows on the very next image request.
    for (is_public, wanted) in [(false, 401), (true, 200)] {
        let r = ctx
            .send_json(
                reqwest::Method::PATCH,
                &format!("/api/v1/assets/{public}"),
                Some(&ctx.admin),
                &json!({ "is_public": is_public }),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.json);
        let now = fetch(
            &ctx,
            &format!("/api/v1/assets/{public}/image?preset=thumb"),
            None,
            &[],
        )
        .await;
        assert_eq!(now.status, wanted, "is_public {is_public}");
    }

    // A signed link to a variant of the private asset.
    let minted = Resp::from(
        ctx.client
            .get(format!(
                "{}/api/v1/assets/{private}/image-url?w=300&h=300&fit=cover&expires_in=60",
                ctx.base_url()
            ))
            .header("authorization", format!("Bearer {}", ctx.admin)),
    )
    .await;
    assert_eq!(minted.status, 200, "{}", minted.json);
    let url = minted.json["data"]["url"].as_str().expect("url").to_owned();
    assert!(url.contains("w=300&h=300&fit=cover"), "{url}");
    let linked = fetch(&ctx, &url, None, &[]).await;
    assert_eq!(linked.size(), (300, 300));
    let tampered = fetch(&ctx, &url.replace("w=300", "w=1200"), None, &[]).await;
    assert_eq!(tampered.status, 401);
    let bad = Resp::from(
        ctx.client
            .get(format!(
                "{}/api/v1/assets/{private}/image-url?w=0",
                ctx.base_url()
            ))
            .header("authorization", format!("Bearer {}", ctx.admin)),
    )
    .await;
    assert_eq!((bad.status, &bad.json["field"]), (400, &json!("w")));
}

pub(crate) async fn a_replaced_or_deleted_file_takes_its_variants_along<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let photo = id_of(&create_on(&ctx, "photos/a.png", samples::png(800, 600), "image").await);
    let path = format!("/api/v1/assets/{photo}/image?w=200");
    let before = as_admin(&ctx, &path).await;
    assert_eq!(before.size(), (200, 150));
    assert_eq!(kept(&ctx, &photo).len(), 1);
    // The process keeps what it served in memory too: with the file store's copy taken away
    // behind the API, the same write of the asset is still answered, and nothing is made.
    std::fs::remove_dir_all(ctx.files_dir().join("derived").join(&photo)).expect("remove");
    let made = ctx.service.variants_made();
    let again = as_admin(&ctx, &path).await;
    assert_eq!(
        (again.status, again.header("etag"), &again.bytes),
        (200, before.header("etag"), &before.bytes)
    );
    let head = head_as_admin(&ctx, &path).await;
    assert_eq!(head.status(), 200);
    assert_eq!(
        head.headers()["content-length"].to_str().ok(),
        Some(before.bytes.len().to_string().as_str())
    );
    assert_eq!(ctx.service.variants_made(), made, "from memory");
    // A replaced file moves the asset: memory answers none of the old file's variants.
    let body = crate::files::form(&[], Some(("b.png", &samples::png(400, 800))));
    let r = crate::replace::replace(&ctx, &photo, body).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert!(
        kept(&ctx, &photo).is_empty(),
        "variants of the old file are gone"
    );
    let after = as_admin(&ctx, &path).await;
    assert_eq!(after.size(), (200, 400), "made of the new file");
    assert_ne!(after.header("etag"), before.header("etag"));
    let r = ctx
        .client
        .delete(format!("{}/api/v1/assets/{photo}", ctx.base_url()))
        .header("authorization", format!("Bearer {}", ctx.admin))
        .send()
        .await
        .expect("delete");
    assert_eq!(r.status(), 204);
    assert!(kept(&ctx, &photo).is_empty(), "and go with the asset");
}

pub(crate) async fn many_asking_at_once_get_one_making<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let photo = id_of(&create_on(&ctx, "photos/a.jpg", samples::jpeg(2000, 1500), "image").await);
    let path = format!("/api/v1/assets/{photo}/image?w=640&q=70");
    let made = ctx.service.variants_made();
    let answers = all_at_once((0..16).map(|_| path.clone()).collect(), &ctx).await;
    let first = &answers[0];
    for got in &answers {
        assert_eq!(got.size(), (640, 480));
        assert_eq!(got.bytes, first.bytes);
    }
    assert_eq!(ctx.service.variants_made() - made, 1, "made once");
}

pub(crate) async fn past_the_workers_and_the_queue_the_answer_is_503<H: Harness>() {
    let mut config = Config::default();
    config.image_workers = 1;
    config.image_queue = 1;
    let ctx = Ctx::with_config::<H>(config).await;
    let photo = id_of(&create_on(&ctx, "photos/a.jpg", samples::jpeg(3000, 2000), "image").await);
    // Twelve different variants at once: one is made, one waits, the rest are turned away.
    let paths = (1..=12)
        .map(|i| format!("/api/v1/assets/{photo}/image?w={}", 100 + i))
        .collect();
    let answers = all_at_once(paths, &ctx).await;
    let mut counts = std::collections::BTreeMap::new();
    for got in &answers {
        *counts.entry(got.status).or_insert(0) += 1;
        match got.status {
            200 => {}
            503 => {
                assert_eq!(got.header("retry-after"), Some("1"));
                assert_eq!(got.json()["error"], "Service unavailable");
            }
            other => panic!("{other}: {}", got.json()),
        }
    }
    assert!(counts.get(&503).copied().unwrap_or(0) >= 1, "{counts:?}");
    assert!(counts.get(&200).copied().unwrap_or(0) >= 2, "{counts:?}");
    // Once the rush is over, every variant is made.
    let later = as_admin(&ctx, &format!("/api/v1/assets/{photo}/image?w=105")).await;
    assert_eq!(later.size(), (105, 70));
}

pub(crate) async fn large_variants_of_paid_files_need_what_downloads_need<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let photo = id_of(&create_on(&ctx, "shop/a.jpg", samples::jpeg(2000, 1000), "image").await);
    let library = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Shop", "is_paid": true, "price": 10,
        "unsectioned_assets": [{"asset_id": photo}]});
    let r = ctx.put_library(&library, &doc).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let reader = ctx.key(&[Scope::ReadAssets]).await;
    let buyer = ctx.key(&[Scope::ReadAssets, Scope::ReadPaid]).await;
    let small = format!("/api/v1/assets/{photo}/image?w=640");
    let large = format!("/api/v1/assets/{photo}/image?w=641");
    assert_eq!(
        fetch(&ctx, &small, Some(&reader), &[]).await.size(),
        (640, 320)
    );
    let refused = fetch(&ctx, &large, Some(&reader), &[]).await;
    assert_eq!(refused.status, 403, "{}", refused.json());
    assert!(
        refused.json()["message"]
            .as_str()
            .unwrap_or("")
            .contains("read:paid")
    );
    assert_eq!(
        fetch(&ctx, &large, Some(&buyer), &[]).await.size(),
        (641, 321)
    );
    // A pass for the library opens its large variants; a pass for another library does not.
    let other = uuid::Uuid::new_v4().to_string();
    let r = ctx
        .put_library(
            &other,
            &json!({"title": "Other", "is_paid": true, "price": 5,
            "unsectioned_assets": []}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let pass = |library: &str| {
        let library = library.to_owned();
        let ctx = &ctx;
        async move {
            let r = ctx
                .send_json(
                    reqwest::Method::POST,
                    &format!("/api/v1/libraries/{library}/passes"),
                    Some(&ctx.admin),
                    &json!({"label": "Order", "expires_in": 3600}),
                )
                .await;
            assert_eq!(r.status, 201, "{}", r.json);
            r.json["data"]["token"].as_str().expect("token").to_owned()
        }
    };
    let (mine, theirs) = (pass(&library).await, pass(&other).await);
    let with_pass = |token: String| {
        let url = format!("{}{large}", ctx.base_url());
        let request = ctx
            .client
            .get(url)
            .header("authorization", format!("Pass {token}"));
        async move { request.send().await.expect("request").status().as_u16() }
    };
    assert_eq!(with_pass(mine).await, 200);
    assert_eq!(with_pass(theirs).await, 403);
    // A variant is not a download: a pass whose downloads are spent still shows them.
    let r = ctx
        .send_json(
            reqwest::Method::POST,
            &format!("/api/v1/libraries/{library}/passes"),
            Some(&ctx.admin),
            &json!({"label": "One", "expires_in": 3600, "max_downloads": 1}),
        )
        .await;
    let spent = r.json["data"]["token"].as_str().expect("token").to_owned();
    let download = ctx
        .client
        .get(format!("{}/api/v1/assets/{photo}/download", ctx.base_url()))
        .header("authorization", format!("Pass {spent}"))
        .send()
        .await
        .expect("download");
    assert_eq!(download.status(), 200);
    assert_eq!(with_pass(spent).await, 200);
    // The link of a key without read:paid carries no more than the key.
    let minted = Resp::from(
        ctx.client
            .get(format!(
                "{}/api/v1/assets/{photo}/image-url?w=641",
                ctx.base_url()
            ))
            .header("authorization", format!("Bearer {reader}")),
    )
    .await;
    assert_eq!(minted.status, 403, "{}", minted.json);
}

pub(crate) async fn hostile_sources_give_a_variant_or_a_400<H: Harness>() {
    let mut config = Config::default();
    config.extract_limits.max_image_pixels = 20_000_000;
    let ctx = Ctx::with_config::<H>(config).await;
    let png = |image: image::DynamicImage| {
        let mut out = std::io::Cursor::new(Vec::new());
        image
            .write_to(&mut out, image::ImageFormat::Png)
            .expect("encode");
        out.into_inner()
    };
    // A decompression bomb: 25 megapixels of one grey in a small file.
    let bomb = png(image::DynamicImage::ImageLuma8(image::GrayImage::new(
        5000, 5000,
    )));
    assert!(bomb.len() < 1_000_000, "{} bytes", bomb.len());
    let id = id_of(&create_on(&ctx, "bad/bomb.png", bomb, "image").await);
    let got = as_admin(&ctx, &format!("/api/v1/assets/{id}/image?w=100")).await;
    assert_eq!(
        (got.status, &got.json()["field"]),
        (400, &json!("file")),
        "{}",
        got.json()
    );
    assert!(
        got.json()["message"]
            .as_str()
            .unwrap_or("")
            .contains("too large"),
        "{}",
        got.json()
    );
    // A 1 x 50000 strip: at most 4096 long.
    let strip = png(image::DynamicImage::ImageLuma8(image::GrayImage::new(
        1, 50_000,
    )));
    let id = id_of(&create_on(&ctx, "bad/strip.png", strip, "image").await);
    let got = as_admin(&ctx, &format!("/api/v1/assets/{id}/image?w=100&format=png")).await;
    assert_eq!(got.size(), (1, 4096));
    // Sixteen bits a channel.
    let deep = png(image::DynamicImage::ImageRgb16(
        image::ImageBuffer::from_pixel(300, 200, image::Rgb([65_535u16, 30_000, 0])),
    ));
    let id = id_of(&create_on(&ctx, "bad/deep.png", deep, "image").await);
    let got = as_admin(
        &ctx,
        &format!("/api/v1/assets/{id}/image?w=150&format=jpeg"),
    )
    .await;
    assert_eq!(got.size(), (150, 100));
    // An animated GIF of 10,000 frames: its first frame.
    let mut gif = Vec::new();
    {
        let mut encoder = image::codecs::gif::GifEncoder::new_with_speed(&mut gif, 30);
        let frames = (0..10_000u32).map(|i| {
            let c = if i == 0 { 250 } else { 10 };
            image::Frame::new(image::RgbaImage::from_pixel(
                16,
                16,
                image::Rgba([c, 0, 0, 255]),
            ))
        });
        encoder.encode_frames(frames).expect("encode");
    }
    let id = id_of(&create_on(&ctx, "bad/many.gif", gif, "image").await);
    let got = as_admin(&ctx, &format!("/api/v1/assets/{id}/image?w=8&format=png")).await;
    assert_eq!(got.size(), (8, 8));
    let first = image::load_from_memory(&got.bytes)
        .expect("decodes")
        .to_rgb8();
    assert!(first.get_pixel(4, 4).0[0] > 200, "the first frame");
}
