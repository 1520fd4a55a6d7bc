//! What an outside probe tried on the website surfaces, held to the contract: downloads and
//! zips racing replacements and deletes (run for seconds under load, every status counted),
//! strict ids without a key, usage seen by a read key, `Cache-Control` for shared caches,
//! keyless rate limits per client address, thumbnail names nobody can guess, and the
//! rotation of the signing secret.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use assetlib::extract::samples;
use assetlib::{AssetType, Config, RateLimit, Scope};
use reqwest::Method;
use serde_json::json;
use tokio::sync::Mutex;

use crate::files::{create_on, form, unzip, upload};
use crate::harness::Harness;
use crate::support::{Ctx, Resp, asset, id_of};

/// How long each race runs.
const RACE: Duration = Duration::from_secs(3);

/// The bytes of version `n` of a text file: about 240 KiB, so reading one takes a while.
fn version(n: usize) -> Vec<u8> {
    format!("version {n:06} of the file\n")
        .repeat(9_000)
        .into_bytes()
}

/// `PUT /api/v1/assets/{id}/file` with `bytes` as a text file.
async fn replace(ctx: &Ctx, id: &str, bytes: &[u8]) -> Resp {
    crate::replace::replace(ctx, id, form(&[], Some(("notes.txt", bytes)))).await
}

/// A `GET` of a path with the admin key, for tasks of their own.
fn requester(ctx: &Ctx) -> impl Fn(&str) -> reqwest::RequestBuilder + Send + 'static {
    let (client, base, admin) = (
        ctx.client.clone(),
        ctx.base_url().to_owned(),
        ctx.admin.clone(),
    );
    move |path| client.get(format!("{base}{path}")).bearer_auth(&admin)
}

/// Statuses seen, with how often.
type Counts = BTreeMap<u16, u64>;

fn count(counts: &std::sync::Mutex<Counts>, status: u16) {
    *counts.lock().expect("counts").entry(status).or_default() += 1;
}

pub(crate) async fn a_download_racing_replacements_and_a_delete_never_fails<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let id = id_of(&create_on(&ctx, "docs/notes.txt", version(0), "document").await);
    // Every version ever written; a download must send one of them whole.
    let written = Arc::new(Mutex::new(vec![version(0)]));
    let deleted = Arc::new(AtomicBool::new(false));
    let before = Arc::new(std::sync::Mutex::new(Counts::new()));
    let after = Arc::new(std::sync::Mutex::new(Counts::new()));
    let stop = Instant::now() + RACE;

    let mut readers = Vec::new();
    for _ in 0..6 {
        let (id, written) = (id.clone(), written.clone());
        let (deleted, before, after) = (deleted.clone(), before.clone(), after.clone());
        let request = requester(&ctx);
        readers.push(tokio::spawn(async move {
            let path = format!("/api/v1/assets/{id}/download");
            while Instant::now() < stop + Duration::from_secs(1) {
                let r = request(&path).send().await.expect("download");
                let status = r.status().as_u16();
                let body = r.bytes().await.expect("body");
                // Read once the answer is in: while the flag is down, the delete had not been
                // sent when the server answered.
                let gone = deleted.load(Ordering::SeqCst);
                count(if gone { &after } else { &before }, status);
                assert!(
                    gone || status == 200,
                    "a download while the asset exists: {status} {}",
                    String::from_utf8_lossy(&body)
                );
                if status == 200 {
                    assert!(
                        written.lock().await.iter().any(|v| v[..] == body[..]),
                        "a download sent {} bytes that are no version of the file",
                        body.len()
                    );
                }
            }
        }));
    }
    let mut replaced = 0;
    while Instant::now() < stop {
        replaced += 1;
        let bytes = version(replaced);
        written.lock().await.push(bytes.clone());
        let r = replace(&ctx, &id, &bytes).await;
        assert_eq!(r.status, 200, "{}", r.json);
    }
    // From here on a download may meet the delete.
    deleted.store(true, Ordering::SeqCst);
    let r = Resp::from(ctx.request(
        Method::DELETE,
        &format!("/api/v1/assets/{id}"),
        Some(&ctx.admin),
    ))
    .await;
    assert_eq!(r.status, 204, "{}", r.json);
    for reader in readers {
        reader.await.expect("reader");
    }
    let (before, after) = (
        before.lock().unwrap().clone(),
        after.lock().unwrap().clone(),
    );
    assert!(replaced >= 5, "only {replaced} replacements in {RACE:?}");
    assert_eq!(
        before.keys().copied().collect::<Vec<_>>(),
        [200],
        "before the delete, every download is a 200 ({replaced} replacements): \
         {before:?}"
    );
    assert!(
        before[&200] >= 20,
        "too few downloads to race anything: {before:?}"
    );
    assert!(
        after.keys().all(|s| [200, 404].contains(s)) && after.contains_key(&404),
        "once the delete is sent, a download is 200 or 404: {after:?}"
    );
}

pub(crate) async fn a_zip_racing_replacements_and_deletes_stays_whole<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let mut ids = Vec::new();
    for i in 0..6 {
        let path = format!("docs/file-{i}.txt");
        ids.push(id_of(
            &create_on(&ctx, &path, version(i * 1000), "document").await,
        ));
    }
    let lib = uuid::Uuid::new_v4().to_string();
    let entries: Vec<_> = ids.iter().map(|id| json!({"asset_id": id})).collect();
    let doc = json!({"title": "Kit", "allow_bulk_download": true,
        "unsectioned_assets": entries});
    assert_eq!(ctx.put_library(&lib, &doc).await.status, 201);
    let written = Arc::new(Mutex::new(
        (0..6).map(|i| version(i * 1000)).collect::<Vec<_>>(),
    ));
    let statuses = Arc::new(std::sync::Mutex::new(Counts::new()));
    let stop = Instant::now() + RACE;

    let mut readers = Vec::new();
    for _ in 0..4 {
        let (lib, written, statuses) = (lib.clone(), written.clone(), statuses.clone());
        let request = requester(&ctx);
        readers.push(tokio::spawn(async move {
            let path = format!("/api/v1/libraries/{lib}/download");
            let mut zips = 0;
            while Instant::now() < stop {
                let r = request(&path).send().await.expect("zip");
                let status = r.status().as_u16();
                let body = r.bytes().await.expect("body");
                count(&statuses, status);
                if status == 200 {
                    // `unzip` fails on a cut or malformed zip.
                    for (name, content) in unzip(&body) {
                        assert!(
                            written.lock().await.contains(&content),
                            "{name}: {} bytes that are no version of any file",
                            content.len()
                        );
                    }
                    zips += 1;
                }
            }
            zips
        }));
    }
    // Replace the first four files over and over; half way, delete the last two (forced out
    // of the library), while zips are being sent.
    let mut round = 0;
    let mut removed = false;
    while Instant::now() < stop {
        round += 1;
        for (i, id) in ids.iter().take(4).enumerate() {
            let bytes = version(i * 1000 + round);
            written.lock().await.push(bytes.clone());
            let r = replace(&ctx, id, &bytes).await;
            assert_eq!(r.status, 200, "{}", r.json);
        }
        if !removed && Instant::now() + RACE / 2 > stop {
            for id in &ids[4..] {
                let path = format!("/api/v1/assets/{id}?force=true");
                let r = Resp::from(ctx.request(Method::DELETE, &path, Some(&ctx.admin))).await;
                assert_eq!(r.status, 204, "{}", r.json);
            }
            removed = true;
        }
    }
    let mut zips = 0;
    for reader in readers {
        zips += reader.await.expect("reader");
    }
    let statuses = statuses.lock().unwrap().clone();
    assert!(removed && round >= 2, "{round} rounds");
    assert_eq!(
        statuses.keys().copied().collect::<Vec<_>>(),
        [200],
        "every zip is a 200: {statuses:?}"
    );
    assert!(zips >= 8, "too few zips to race anything: {zips}");
    // After the race the zip holds the four files left, each at its last version.
    let r = ctx
        .request(
            Method::GET,
            &format!("/api/v1/libraries/{lib}/download"),
            Some(&ctx.admin),
        )
        .send()
        .await
        .expect("zip");
    let files = unzip(&r.bytes().await.expect("body"));
    let contents: Vec<Vec<u8>> = files.into_iter().map(|(_, c)| c).collect();
    let last: Vec<Vec<u8>> = (0..4).map(|i| version(i * 1000 + round)).collect();
    assert_eq!(contents, last);
}

pub(crate) async fn keyless_reads_take_only_the_one_spelling_of_an_id<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let public = ctx
        .create_asset(json!({"title": "Public", "asset_type": "pdf", "is_public": true}))
        .await;
    let id = id_of(&public);
    let uuid = uuid::Uuid::parse_str(&id).expect("uuid");
    let simple = uuid.simple().to_string();
    let spellings = [
        format!("{{{id}}}"),
        format!("urn:uuid:{id}"),
        simple.clone(),
        id.to_uppercase().replace('-', ""),
        format!("%7B{id}%7D"),
    ];
    // The one spelling is served without a key.
    let r = ctx.get_as(&format!("/api/v1/assets/{id}"), None).await;
    assert_eq!(r.status, 200, "{}", r.json);
    for spelling in &spellings {
        for path in [
            format!("/api/v1/assets/{spelling}"),
            format!("/api/v1/assets/{spelling}/download"),
        ] {
            let r = ctx.get_as(&path, None).await;
            assert_eq!(r.status, 401, "{path} without a key: {}", r.json);
            assert_eq!(r.json["error"], "Unauthorized", "{path}");
            let r = ctx.get_as(&path, Some(&ctx.admin)).await;
            assert_eq!(r.status, 400, "{path} with a key: {}", r.json);
            assert_eq!(r.json["field"], "asset_id", "{path}");
        }
        // A signed link's parameters do not make another spelling an id either.
        let path = format!("/api/v1/assets/{spelling}/download?expires=9999999999&signature=x");
        assert_eq!(ctx.get_as(&path, None).await.status, 401, "{path}");
    }
    // Nor in a body: a library entry names its asset in the one spelling.
    let doc = json!({"title": "Kit", "unsectioned_assets": [{"asset_id": simple}]});
    let r = ctx
        .put_library(&uuid::Uuid::new_v4().to_string(), &doc)
        .await;
    r.assert_invalid(
        "unsectioned_assets[0].asset_id",
        "unsectioned_assets[0].asset_id must be a UUID",
    );
}

pub(crate) async fn usage_shows_unpublished_libraries_only_to_library_writers<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let a = ctx.asset_id("Logo", "image").await;
    let entry = json!([{"asset_id": a}]);
    let published = uuid::Uuid::new_v4().to_string();
    let draft = uuid::Uuid::new_v4().to_string();
    for (id, title, is_published) in [
        (&published, "Press", true),
        (&draft, "Secret launch", false),
    ] {
        let doc = json!({"title": title, "published": is_published, "unsectioned_assets": entry});
        assert_eq!(ctx.put_library(id, &doc).await.status, 201);
    }
    let path = format!("/api/v1/assets/{a}/usage");
    let reader = ctx.key(&[Scope::ReadAssets, Scope::ReadLibraries]).await;
    let everything_but = ctx.key_without(Scope::WriteLibraries).await;
    for key in [&reader, &everything_but] {
        let r = ctx.get_as(&path, Some(key)).await;
        assert_eq!(r.status, 200, "{}", r.json);
        let ids: Vec<&str> = r.json["data"]
            .as_array()
            .expect("list")
            .iter()
            .map(|l| l["id"].as_str().expect("id"))
            .collect();
        assert_eq!(ids, [published.as_str()], "{}", r.json);
        assert!(!r.raw.windows(6).any(|w| w == b"Secret"), "{}", r.json);
    }
    let r = ctx.get(&path).await;
    let titles: Vec<&str> = r.json["data"]
        .as_array()
        .expect("list")
        .iter()
        .map(|l| l["title"].as_str().expect("title"))
        .collect();
    assert_eq!(titles, ["Secret launch", "Press"], "{}", r.json);
}

pub(crate) async fn shared_caches_never_keep_a_keyed_answer<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let png = samples::png(40, 30);
    let r = upload(
        &ctx,
        form(
            &[("title", "Logo"), ("is_public", "true")],
            Some(("logo.png", &png)),
        ),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let id = id_of(&r.json["data"]);
    let thumbnail = r.json["data"]["thumbnail_path"]
        .as_str()
        .expect("thumbnail")
        .to_owned();
    let link = ctx.get(&format!("/api/v1/assets/{id}/download-url")).await;
    let link = link.json["data"]["url"].as_str().expect("url").to_owned();
    let private = Some("private, no-cache".to_owned());
    let public = Some("public, max-age=60".to_owned());
    let keyed = |path: &str, key: &str| ctx.request(Method::GET, path, Some(key));
    let keyless = |path: &str| ctx.request(Method::GET, path, None);
    let unknown = format!("/api/v1/assets/{}", uuid::Uuid::new_v4());
    for (request, status) in [
        (keyed(&format!("/api/v1/assets/{id}"), &ctx.admin), 200),
        (
            keyed(&format!("/api/v1/assets/{id}/download"), &ctx.admin),
            200,
        ),
        (keyed("/api/v1/assets", &ctx.admin), 200),
        (keyed(&unknown, &ctx.admin), 404),
        (keyed("/api/v1/assets", "alk_unknown"), 401),
        (keyed("/api/v1/no-such-route", &ctx.admin), 404),
    ] {
        let (got, cache, _) = raw(request).await;
        assert_eq!((got, &cache), (status, &private), "a keyed answer");
    }
    // A 304 to a key is private too.
    let etag = ctx.get(&format!("/api/v1/assets/{id}")).await;
    let etag = etag.header("etag").expect("etag").to_owned();
    let (status, cache, _) =
        raw(keyed(&format!("/api/v1/assets/{id}"), &ctx.admin).header("if-none-match", etag)).await;
    assert_eq!((status, cache), (304, private));
    for path in [
        format!("/api/v1/assets/{id}"),
        format!("/api/v1/assets/{id}/download"),
        link,
        "/api/v1/openapi.json".to_owned(),
        format!("/files/{thumbnail}"),
    ] {
        let (status, cache, _) = raw(keyless(&path)).await;
        assert_eq!((status, &cache), (200, &public), "{path} without a key");
    }
    // A keyless error is kept by no cache.
    for path in [
        "/api/v1/assets".to_owned(),
        unknown,
        "/files/thumbnails/none.png".to_owned(),
    ] {
        let (status, cache, _) = raw(keyless(&path)).await;
        assert!(status >= 400, "{path}");
        assert_eq!(cache.as_deref(), Some("no-store"), "{path}");
    }
}

/// An answer's status, `Cache-Control` and body, whatever its content.
async fn raw(request: reqwest::RequestBuilder) -> (u16, Option<String>, Vec<u8>) {
    let r = request.send().await.expect("request");
    let status = r.status().as_u16();
    let cache = r
        .headers()
        .get("cache-control")
        .map(|v| v.to_str().expect("ascii").to_owned());
    (status, cache, r.bytes().await.expect("body").to_vec())
}

/// A client whose requests leave from `source` (any address of 127.0.0.0/8).
fn client_from(source: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(source.parse::<IpAddr>().expect("address"))
        .build()
        .expect("client")
}

/// Keyless `GET`s of `path` from `client` (with `forwarded` as `X-Forwarded-For`, when
/// given) until the first answer that is not a 200; how many passed, and that answer.
async fn until_limited(
    ctx: &Ctx,
    client: &reqwest::Client,
    path: &str,
    forwarded: Option<&str>,
) -> (u32, Resp) {
    let mut passed = 0;
    loop {
        let mut request = client.get(format!("{}{path}", ctx.base_url()));
        if let Some(address) = forwarded {
            request = request.header("x-forwarded-for", address);
        }
        let r = Resp::from(request).await;
        if r.status != 200 {
            return (passed, r);
        }
        passed += 1;
        assert!(passed <= 50, "no 429 after {passed} keyless requests");
    }
}

fn limited_config(trusted_proxy_hops: usize) -> Config {
    let mut config = Config::default();
    config.rate_limit = Some(RateLimit {
        per_second: NonZeroU32::new(1).expect("1"),
        burst: NonZeroU32::new(4).expect("4"),
    });
    config.trusted_proxy_hops = trusted_proxy_hops;
    config
}

pub(crate) async fn keyless_requests_share_a_budget_per_client_address<H: Harness>() {
    let ctx = Ctx::with_config::<H>(limited_config(0)).await;
    let id = id_of(
        &ctx.create_asset(json!({"title": "Public", "asset_type": "pdf", "is_public": true}))
            .await,
    );
    let path = format!("/api/v1/assets/{id}");
    let started = Instant::now();
    let one = client_from("127.0.0.1");
    let (passed, limited) = until_limited(&ctx, &one, &path, None).await;
    let refilled = u32::try_from(started.elapsed().as_secs()).expect("seconds") + 1;
    assert!(
        (4..=4 + refilled).contains(&passed),
        "{passed} passed a burst of 4"
    );
    assert_eq!(limited.status, 429, "{}", limited.json);
    assert_eq!(limited.json["error"], "Too many requests");
    assert!(limited.header("retry-after").is_some());
    // Signed links and unknown ids spend the same budget; X-Forwarded-For is not trusted.
    let r = Resp::from(
        one.get(format!("{}{path}", ctx.base_url()))
            .header("x-forwarded-for", "203.0.113.9"),
    )
    .await;
    assert_eq!(
        r.status, 429,
        "an untrusted X-Forwarded-For changes nothing"
    );
    // Another address has its own budget, and a key its own.
    let other = client_from("127.0.0.2");
    assert_eq!(
        Resp::from(other.get(format!("{}{path}", ctx.base_url())))
            .await
            .status,
        200
    );
    assert_eq!(ctx.get(&path).await.status, 200, "a key is not limited");

    // Behind one trusted proxy, the address it saw is the client's.
    let ctx = Ctx::with_config::<H>(limited_config(1)).await;
    let id = id_of(
        &ctx.create_asset(json!({"title": "Public", "asset_type": "pdf", "is_public": true}))
            .await,
    );
    let path = format!("/api/v1/assets/{id}");
    let (_, limited) = until_limited(&ctx, &one, &path, Some("198.51.100.1, 203.0.113.5")).await;
    assert_eq!(limited.status, 429);
    let (passed, _) = until_limited(&ctx, &one, &path, Some("203.0.113.6")).await;
    assert!(
        passed >= 4,
        "another forwarded address has its own budget: {passed}"
    );
}

pub(crate) async fn thumbnails_have_names_nobody_can_guess<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let png = samples::png(64, 48);
    let r = upload(&ctx, form(&[("title", "Logo")], Some(("logo.png", &png)))).await;
    assert_eq!(r.status, 201, "{}", r.json);
    let made = r.json["data"].clone();
    let thumbnail = made["thumbnail_path"].as_str().expect("thumbnail");
    assert_random_name(thumbnail, &id_of(&made));

    // A thumbnail an earlier version named after its asset gets a random name, in the record,
    // in the library that holds it, and in the file store; nothing else changes.
    let bytes = samples::png(32, 32);
    let mut old = asset("Old logo", AssetType::Image, chrono::Utc::now());
    let old_path = format!("thumbnails/{}.png", old.id);
    old.thumbnail_path = Some(old_path.clone());
    ctx.put_file(&old_path, bytes.clone()).await;
    let old = ctx.insert(old).await;
    let lib = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Kit", "unsectioned_assets": [{"asset_id": old.id}]});
    assert_eq!(ctx.put_library(&lib, &doc).await.status, 201);
    let before = ctx.get(&format!("/api/v1/assets/{}", old.id)).await;

    assert_eq!(
        ctx.service
            .upgrade_thumbnail_names()
            .await
            .expect("upgrade"),
        1
    );
    let after = ctx.get(&format!("/api/v1/assets/{}", old.id)).await;
    let renamed = after.json["data"]["thumbnail_path"]
        .as_str()
        .expect("thumbnail")
        .to_owned();
    assert_random_name(&renamed, &old.id.to_string());
    assert_eq!(
        after.json["data"]["updated_at"], before.json["data"]["updated_at"],
        "a rename is no change of the asset"
    );
    let served = raw(ctx.request(Method::GET, &format!("/files/{renamed}"), None)).await;
    assert_eq!((served.0, served.2), (200, bytes));
    let gone = raw(ctx.request(Method::GET, &format!("/files/{old_path}"), None)).await;
    assert_eq!(gone.0, 404, "the old name is gone");
    let page = ctx
        .get(&format!("/api/v1/libraries/{lib}?include_assets=true"))
        .await;
    assert_eq!(
        page.json["unsectioned_assets"][0]["thumbnail_url"],
        format!("/files/{renamed}")
    );
    // Done once: a second run finds nothing, and the upload's thumbnail was never touched.
    assert_eq!(
        ctx.service.upgrade_thumbnail_names().await.expect("again"),
        0
    );
    let again = ctx.get(&format!("/api/v1/assets/{}", id_of(&made))).await;
    assert_eq!(again.json["data"]["thumbnail_path"], made["thumbnail_path"]);
}

/// Asserts that `path` is a thumbnail's path with a random name: 32 hex digits, nothing of
/// the asset's id.
pub(crate) fn assert_random_name(path: &str, id: &str) {
    let name = path.strip_prefix("thumbnails/").expect("under thumbnails/");
    let (stem, ext) = name.split_once('.').expect("an extension");
    assert!(["png", "jpg"].contains(&ext), "{path}");
    assert!(
        stem.len() == 32 && stem.bytes().all(|b| b.is_ascii_hexdigit()),
        "128 random bits: {path}"
    );
    assert!(
        !path.contains(id) && !path.contains(&id.replace('-', "")),
        "{path}"
    );
}

pub(crate) async fn a_rotated_signing_secret_revokes_every_link<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let id = id_of(&create_on(&ctx, "docs/a.txt", b"some words".to_vec(), "document").await);
    let mint = || async {
        let r = ctx.get(&format!("/api/v1/assets/{id}/download-url")).await;
        assert_eq!(r.status, 200, "{}", r.json);
        r.json["data"]["url"].as_str().expect("url").to_owned()
    };
    let download = |link: String| raw(ctx.request(Method::GET, &link, None));
    let old = mint().await;
    assert_eq!(download(old.clone()).await.0, 200);
    ctx.service.rotate_signing_secret().await.expect("rotate");
    let r = ctx.get_as(&old, None).await;
    assert_eq!(
        r.status, 401,
        "a link signed before the rotation: {}",
        r.json
    );
    assert_eq!(r.json["message"], "Signed link is invalid or has expired");
    let new = mint().await;
    assert_ne!(new, old);
    assert_eq!(
        download(new).await,
        (
            200,
            Some("public, max-age=60".into()),
            b"some words".to_vec()
        )
    );
}
