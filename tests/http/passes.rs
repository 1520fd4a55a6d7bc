//! Library passes and paid files (DESIGN.md §5 "Library passes"): who may take a paid file
//! out by every path a file leaves by, passes made, listed, read and revoked, their download
//! limits under concurrency, and every bad pass answered alike.

use assetlib::auth::generate_pass;
use assetlib::extract::samples;
use assetlib::{LibraryPass, Scope};
use assetlib_core::events::Log;
use chrono::{Duration, Utc};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::files::create_on;
use crate::harness::Harness;
use crate::support::{Ctx, Resp, id_of};

/// What a request carries in `Authorization`.
#[derive(Debug, Clone, Copy)]
enum Cred<'a> {
    None,
    Key(&'a str),
    Pass(&'a str),
}

/// `method path` with `cred`.
fn send(ctx: &Ctx, method: Method, path: &str, cred: Cred<'_>) -> reqwest::RequestBuilder {
    let r = ctx
        .client
        .request(method, format!("{}{path}", ctx.base_url()));
    match cred {
        Cred::None => r,
        Cred::Key(key) => r.header("authorization", format!("Bearer {key}")),
        Cred::Pass(pass) => r.header("authorization", format!("Pass {pass}")),
    }
}

/// `GET path` with `cred`: the whole answer, its body JSON only when it says so (a file's
/// bytes stay in `raw`).
async fn get(ctx: &Ctx, path: &str, cred: Cred<'_>) -> Resp {
    let response = send(ctx, Method::GET, path, cred)
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let raw = response.bytes().await.expect("body").to_vec();
    let is_json = headers
        .get("content-type")
        .is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
    let json = match is_json {
        true => serde_json::from_slice(&raw).expect("JSON"),
        false => Value::Null,
    };
    Resp {
        status,
        headers,
        raw,
        json,
    }
}

/// A library document: published, selling (`paid`) or not, allowing both kinds of download.
fn library(title: &str, paid: bool, assets: &[&str]) -> Value {
    let entries: Vec<Value> = assets.iter().map(|id| json!({"asset_id": id})).collect();
    json!({"title": title, "is_paid": paid, "price": if paid { json!(49) } else { Value::Null },
        "allow_bulk_download": true, "unsectioned_assets": entries})
}

/// Makes a pass for `library` with the admin key from `body`; answers the pass's `data`.
async fn make_pass(ctx: &Ctx, library: &str, body: Value) -> Value {
    let r = ctx
        .send_json(
            Method::POST,
            &format!("/api/v1/libraries/{library}/passes"),
            Some(&ctx.admin),
            &body,
        )
        .await;
    assert_eq!(r.status, 201, "{body}: {}", r.json);
    r.json["data"].clone()
}

fn token(pass: &Value) -> String {
    pass["token"].as_str().expect("token").to_owned()
}

/// A shop: a paid library `sold` holding two private images, a paid library `elsewhere`
/// holding a third, and keys and passes of every kind.
struct Shop {
    sold: String,
    image: String,
    sibling: String,
    thumbnail: String,
    read_assets: String,
    read_paid: String,
    valid: String,
    expired: String,
    revoked: String,
    exhausted: String,
    other_library: String,
    outside_subset: String,
}

impl Shop {
    async fn open(ctx: &Ctx) -> Shop {
        let image = create_on(ctx, "shop/cover.png", samples::png(400, 300), "image").await;
        let thumbnail = image["thumbnail_path"]
            .as_str()
            .expect("thumbnail")
            .to_owned();
        let image = id_of(&image);
        let sibling = id_of(&create_on(ctx, "shop/back.png", samples::png(40, 30), "image").await);
        let third = id_of(&create_on(ctx, "shop/third.png", samples::png(20, 10), "image").await);
        let (sold, elsewhere) = (Uuid::new_v4().to_string(), Uuid::new_v4().to_string());
        let r = ctx
            .put_library(&sold, &library("Sold", true, &[&image, &sibling]))
            .await;
        assert_eq!(r.status, 201, "{}", r.json);
        let r = ctx
            .put_library(&elsewhere, &library("Elsewhere", true, &[&third]))
            .await;
        assert_eq!(r.status, 201, "{}", r.json);

        let read = [Scope::ReadAssets, Scope::ReadLibraries];
        let read_assets = ctx.key(&read).await;
        let read_paid = ctx.key(&[read[0], read[1], Scope::ReadPaid]).await;
        let month = json!({"label": "Order", "expires_in": 2_592_000});
        let valid = token(&make_pass(ctx, &sold, month.clone()).await);
        let revoked_pass = make_pass(ctx, &sold, month.clone()).await;
        let r = Resp::from(send(
            ctx,
            Method::DELETE,
            &format!("/api/v1/libraries/{sold}/passes/{}", id_of(&revoked_pass)),
            Cred::Key(&ctx.admin),
        ))
        .await;
        assert_eq!(r.status, 204, "{}", r.json);
        let mut one = month.clone();
        one["max_downloads"] = json!(1);
        let exhausted = token(&make_pass(ctx, &sold, one).await);
        let r = get(
            ctx,
            &format!("/api/v1/assets/{sibling}/download"),
            Cred::Pass(&exhausted),
        )
        .await;
        assert_eq!(r.status, 200, "the one download of the pass");
        let other_library = token(&make_pass(ctx, &elsewhere, month.clone()).await);
        let mut subset = month;
        subset["asset_ids"] = json!([sibling]);
        let outside_subset = token(&make_pass(ctx, &sold, subset).await);

        // An expired pass cannot be made through the API: straight into the store.
        let made = generate_pass().expect("random");
        let past = Utc::now() - Duration::seconds(1);
        ctx.store()
            .pass_store()
            .expect("the store keeps passes")
            .insert_pass(
                LibraryPass {
                    id: Uuid::new_v4(),
                    library_id: sold.parse().expect("id"),
                    token_hash: made.hash,
                    label: "Expired".into(),
                    expires_at: past,
                    max_downloads: None,
                    downloads_used: 0,
                    asset_ids: None,
                    created_at: past - Duration::days(1),
                    revoked_at: None,
                },
                Log::ANONYMOUS,
            )
            .await
            .expect("insert pass");
        Shop {
            sold,
            image,
            sibling,
            thumbnail,
            read_assets,
            read_paid,
            valid,
            expired: made.secret,
            revoked: token(&revoked_pass),
            exhausted,
            other_library,
            outside_subset,
        }
    }
}

/// The paths a file leaves by, in the matrix's column order.
const PATHS: [&str; 7] = [
    "download",
    "range from 0",
    "range from the middle",
    "link minted by key",
    "link minted by pass",
    "zip",
    "thumbnail",
];

/// Every status of the matrix: key scopes x pass x path. A request carries the pass when
/// there is one, else the key; a link is minted with the key (or the pass) and used with no
/// credentials. The subject is a private image that only a paid library holds.
#[rustfmt::skip]
const MATRIX: &[(&str, &str, [u16; 7])] = &[
    //  key            pass              download r0   mid  byKey byPass zip  thumb
    ("none",        "none",           [401, 401, 401, 401, 401, 401, 200]),
    ("none",        "valid",          [200, 206, 206, 401, 200, 200, 200]),
    ("none",        "expired",        [401, 401, 401, 401, 401, 401, 200]),
    ("none",        "revoked",        [401, 401, 401, 401, 401, 401, 200]),
    ("none",        "exhausted",      [403, 403, 403, 401, 403, 403, 200]),
    ("none",        "other library",  [403, 403, 403, 401, 403, 403, 200]),
    ("none",        "outside subset", [403, 403, 403, 401, 403, 200, 200]),
    ("read:assets", "none",           [403, 403, 403, 403, 401, 403, 200]),
    ("read:assets", "valid",          [200, 206, 206, 403, 200, 200, 200]),
    ("read:assets", "expired",        [401, 401, 401, 403, 401, 401, 200]),
    ("read:assets", "revoked",        [401, 401, 401, 403, 401, 401, 200]),
    ("read:assets", "exhausted",      [403, 403, 403, 403, 403, 403, 200]),
    ("read:assets", "other library",  [403, 403, 403, 403, 403, 403, 200]),
    ("read:assets", "outside subset", [403, 403, 403, 403, 403, 200, 200]),
    ("read:paid",   "none",           [200, 206, 206, 200, 401, 200, 200]),
    ("read:paid",   "valid",          [200, 206, 206, 200, 200, 200, 200]),
    ("read:paid",   "expired",        [401, 401, 401, 200, 401, 401, 200]),
    ("read:paid",   "revoked",        [401, 401, 401, 200, 401, 401, 200]),
    ("read:paid",   "exhausted",      [403, 403, 403, 200, 403, 403, 200]),
    ("read:paid",   "other library",  [403, 403, 403, 200, 403, 403, 200]),
    ("read:paid",   "outside subset", [403, 403, 403, 200, 403, 200, 200]),
];

/// The status of one cell.
async fn probe(ctx: &Ctx, shop: &Shop, key: Cred<'_>, pass: Cred<'_>, path: &str) -> u16 {
    let cred = match pass {
        Cred::None => key,
        pass => pass,
    };
    let file = format!("/api/v1/assets/{}/download", shop.image);
    let ranged = |range: &'static str| send(ctx, Method::GET, &file, cred).header("range", range);
    let r = match path {
        "download" => send(ctx, Method::GET, &file, cred),
        "range from 0" => ranged("bytes=0-9"),
        "range from the middle" => ranged("bytes=10-19"),
        "zip" => send(
            ctx,
            Method::GET,
            &format!("/api/v1/libraries/{}/download", shop.sold),
            cred,
        ),
        "thumbnail" => send(
            ctx,
            Method::GET,
            &format!("/files/{}", shop.thumbnail),
            cred,
        ),
        minted => {
            let by = if minted == "link minted by key" {
                key
            } else {
                pass
            };
            let url = format!("/api/v1/assets/{}/download-url", shop.image);
            let r = get(ctx, &url, by).await;
            if r.status != 200 {
                return r.status;
            }
            let link = r.json["data"]["url"].as_str().expect("url").to_owned();
            send(ctx, Method::GET, &link, Cred::None)
        }
    };
    let r = r.send().await.expect("request");
    let status = r.status().as_u16();
    r.bytes().await.expect("body");
    status
}

pub(crate) async fn the_paid_file_matrix<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let shop = Shop::open(&ctx).await;
    let mut wrong = Vec::new();
    for (key, pass, expected) in MATRIX {
        let key = match *key {
            "none" => Cred::None,
            "read:assets" => Cred::Key(&shop.read_assets),
            _ => Cred::Key(&shop.read_paid),
        };
        let pass = match *pass {
            "none" => Cred::None,
            "valid" => Cred::Pass(&shop.valid),
            "expired" => Cred::Pass(&shop.expired),
            "revoked" => Cred::Pass(&shop.revoked),
            "exhausted" => Cred::Pass(&shop.exhausted),
            "other library" => Cred::Pass(&shop.other_library),
            _ => Cred::Pass(&shop.outside_subset),
        };
        for (path, want) in PATHS.iter().zip(expected) {
            let got = probe(&ctx, &shop, key, pass, path).await;
            if got != *want {
                wrong.push(format!("{key:?} x {pass:?} x {path}: {got}, not {want}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "cells off the table:\n{}",
        wrong.join("\n")
    );

    // The sibling is in the subset: the subset pass downloads it, and its zip holds it alone.
    let r = get(
        &ctx,
        &format!("/api/v1/assets/{}/download", shop.sibling),
        Cred::Pass(&shop.outside_subset),
    )
    .await;
    assert_eq!(r.status, 200);
    let r = get(
        &ctx,
        &format!("/api/v1/libraries/{}/download", shop.sold),
        Cred::Pass(&shop.outside_subset),
    )
    .await;
    let names = zip_names(&r.raw);
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(names[0].contains("back"), "{names:?}");
    // Metadata stays readable with read:assets.
    let r = get(
        &ctx,
        &format!("/api/v1/assets/{}", shop.image),
        Cred::Key(&shop.read_assets),
    )
    .await;
    assert_eq!(r.status, 200);
}

/// The names in a zip.
fn zip_names(bytes: &[u8]) -> Vec<String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    (0..zip.len())
        .map(|i| zip.by_index(i).expect("entry").name().to_owned())
        .collect()
}

pub(crate) async fn a_file_is_paid_only_where_the_rule_says<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let reader = ctx.key(&[Scope::ReadAssets, Scope::ReadLibraries]).await;
    let writer = ctx
        .key(&[Scope::ReadAssets, Scope::WriteAssets, Scope::ReadLibraries])
        .await;
    let file = |n: &str| format!("rule/{n}.png");
    let mut ids = Vec::new();
    for name in ["paid", "also-free", "public", "in-draft", "nowhere"] {
        ids.push(id_of(
            &create_on(&ctx, &file(name), samples::png(8, 8), "image").await,
        ));
    }
    let [paid, also_free, public, in_draft, nowhere] = [0, 1, 2, 3, 4].map(|i| ids[i].clone());
    let r = ctx
        .send_json(
            Method::PATCH,
            &format!("/api/v1/assets/{public}"),
            Some(&ctx.admin),
            &json!({"is_public": true}),
        )
        .await;
    assert_eq!(r.status, 200);
    let put = |paid_flag: bool, published: bool, assets: &[&str]| {
        let mut doc = library("L", paid_flag, assets);
        doc["published"] = json!(published);
        doc
    };
    for doc in [
        put(true, true, &[&paid, &also_free, &public]),
        put(false, true, &[&also_free]),
        put(true, false, &[&in_draft]),
    ] {
        let r = ctx.put_library(&Uuid::new_v4().to_string(), &doc).await;
        assert_eq!(r.status, 201, "{}", r.json);
    }
    let download = |id: &str, key: &str| {
        let path = format!("/api/v1/assets/{id}/download");
        let key = key.to_owned();
        let ctx = &ctx;
        async move { get(ctx, &path, Cred::Key(&key)).await }
    };
    let r = download(&paid, &reader).await;
    assert_eq!(r.status, 403);
    assert_eq!(r.json["error"], "Insufficient permissions");
    let message = r.json["message"].as_str().expect("message");
    assert!(
        message.contains("read:paid") && message.contains("library pass"),
        "{message}"
    );
    // write:assets alone is no read:paid.
    assert_eq!(download(&paid, &writer).await.status, 403);
    for free in [&also_free, &public, &in_draft, &nowhere] {
        assert_eq!(download(free, &reader).await.status, 200, "{free}");
    }
    // A paid file made free: a free published library takes it in.
    let r = ctx
        .put_library(
            &Uuid::new_v4().to_string(),
            &library("Free", false, &[&paid]),
        )
        .await;
    assert_eq!(r.status, 201);
    assert_eq!(download(&paid, &reader).await.status, 200);
}

pub(crate) async fn passes_are_made_listed_read_and_revoked<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let image = id_of(&create_on(&ctx, "p/a.png", samples::png(8, 8), "image").await);
    let lib = Uuid::new_v4().to_string();
    let r = ctx
        .put_library(&lib, &library("Sold", true, &[&image]))
        .await;
    assert_eq!(r.status, 201);
    let base = format!("/api/v1/libraries/{lib}/passes");

    // Making one: 201, Location, the token once.
    let before = Utc::now();
    let r = ctx
        .send_json(
            Method::POST,
            &base,
            Some(&ctx.admin),
            &json!({"label": "Order 1", "expires_in": 3600, "max_downloads": 5,
                "asset_ids": [image]}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.json);
    let pass = r.json["data"].clone();
    let id = id_of(&pass);
    assert_eq!(
        r.header("location"),
        Some(format!("/api/v1/libraries/{lib}/passes/{id}").as_str())
    );
    let tok = token(&pass);
    assert!(assetlib::auth::is_well_formed_pass(&tok), "{tok}");
    // Every field, in the order the design gives them.
    let text = String::from_utf8_lossy(&r.raw);
    let at: Vec<usize> = [
        "id",
        "token",
        "library_id",
        "label",
        "expires_at",
        "max_downloads",
        "downloads_used",
        "asset_ids",
        "created_at",
        "revoked_at",
    ]
    .iter()
    .map(|k| {
        text.find(&format!("\"{k}\":"))
            .unwrap_or_else(|| panic!("{k} in {text}"))
    })
    .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert_eq!(pass["library_id"], json!(lib));
    assert_eq!(pass["max_downloads"], 5);
    assert_eq!(pass["downloads_used"], 0);
    assert_eq!(pass["asset_ids"], json!([image]));
    assert_eq!(pass["revoked_at"], Value::Null);
    let expires: chrono::DateTime<Utc> = pass["expires_at"]
        .as_str()
        .expect("expires_at")
        .parse()
        .expect("a time");
    assert!(expires >= before + Duration::seconds(3599), "{expires}");
    // Only the hash is stored.
    let stored = ctx
        .store()
        .pass_store()
        .expect("the store keeps passes")
        .get_pass(id.parse().expect("id"))
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(stored.token_hash, assetlib::auth::hash_key(&tok));

    // Reading and listing never show the token.
    let one = ctx.get(&format!("{base}/{id}")).await;
    assert_eq!(one.status, 200);
    assert!(one.json["data"].get("token").is_none(), "{}", one.json);
    assert_eq!(one.json["data"]["label"], "Order 1");
    for n in 2..=3 {
        // Times are kept to the millisecond, and passes made within the same one are listed
        // by id: a new millisecond for each, so the order is the order they were made in.
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        make_pass(
            &ctx,
            &lib,
            json!({"label": format!("Order {n}"), "expires_in": 60}),
        )
        .await;
    }
    let page = ctx.get(&format!("{base}?per_page=2")).await;
    assert_eq!(page.status, 200, "{}", page.json);
    assert_eq!(
        page.json["pagination"],
        json!({"page": 1, "per_page": 2, "total": 3, "total_pages": 2})
    );
    let labels: Vec<&str> = page.json["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|p| p["label"].as_str().expect("label"))
        .collect();
    assert_eq!(labels, ["Order 3", "Order 2"], "newest first");
    assert!(
        !page.raw.windows(4).any(|w| w == b"alp_"),
        "no token in a list"
    );
    let rest = ctx.get(&format!("{base}?page=2&per_page=2")).await;
    assert_eq!(rest.json["data"][0]["id"], json!(id));

    // Revoking: 204, again 204 with the first time kept, and the pass stops at once.
    let file = format!("/api/v1/assets/{image}/download");
    assert_eq!(get(&ctx, &file, Cred::Pass(&tok)).await.status, 200);
    let revoke = || {
        send(
            &ctx,
            Method::DELETE,
            &format!("{base}/{id}"),
            Cred::Key(&ctx.admin),
        )
    };
    assert_eq!(Resp::from(revoke()).await.status, 204);
    let first = ctx.get(&format!("{base}/{id}")).await.json["data"]["revoked_at"].clone();
    assert!(first.is_string(), "{first}");
    assert_eq!(Resp::from(revoke()).await.status, 204);
    let again = ctx.get(&format!("{base}/{id}")).await;
    assert_eq!(again.json["data"]["revoked_at"], first);
    assert_eq!(again.json["data"]["downloads_used"], 1);
    assert_eq!(get(&ctx, &file, Cred::Pass(&tok)).await.status, 401);

    // Unknown passes and libraries, a pass of another library, bad ids.
    let other = Uuid::new_v4();
    let r = ctx.get(&format!("{base}/{other}")).await;
    r.assert(
        404,
        json!({"error": "Not found", "message": "Pass not found"}),
    );
    let r = ctx
        .get(&format!("/api/v1/libraries/{other}/passes/{id}"))
        .await;
    assert_eq!(r.status, 404);
    let r = ctx.get(&format!("/api/v1/libraries/{other}/passes")).await;
    r.assert(
        404,
        json!({"error": "Not found", "message": "Library not found"}),
    );
    let r = ctx
        .send_json(
            Method::POST,
            &format!("/api/v1/libraries/{other}/passes"),
            Some(&ctx.admin),
            &json!({"label": "x", "expires_in": 60}),
        )
        .await;
    assert_eq!(r.status, 404);
    let r = ctx.get(&format!("{base}/not-an-id")).await;
    assert_eq!((r.status, r.json["field"].clone()), (400, json!("pass_id")));

    // Every pass endpoint needs write:passes.
    let without = ctx.key_without(Scope::WritePasses).await;
    for (method, path) in [
        (Method::GET, base.clone()),
        (Method::POST, base.clone()),
        (Method::GET, format!("{base}/{id}")),
        (Method::DELETE, format!("{base}/{id}")),
    ] {
        let r = Resp::from(
            send(&ctx, method.clone(), &path, Cred::Key(&without))
                .header("content-type", "application/json")
                .body(json!({"label": "x", "expires_in": 60}).to_string()),
        )
        .await;
        r.assert(
            403,
            json!({"error": "Insufficient permissions",
                "message": "API key lacks required scope: write:passes"}),
        );
    }
}

pub(crate) async fn bad_pass_bodies_name_the_field<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let image = id_of(&create_on(&ctx, "b/a.png", samples::png(8, 8), "image").await);
    let outside = id_of(&create_on(&ctx, "b/b.png", samples::png(8, 8), "image").await);
    let lib = Uuid::new_v4().to_string();
    assert_eq!(
        ctx.put_library(&lib, &library("Sold", true, &[&image]))
            .await
            .status,
        201
    );
    let ten_years = 315_576_000u64;
    for (body, field) in [
        (json!({"expires_in": 60}), "label"),
        (json!({"label": "", "expires_in": 60}), "label"),
        (json!({"label": "x"}), "expires_in"),
        (json!({"label": "x", "expires_in": 0}), "expires_in"),
        (json!({"label": "x", "expires_in": -1}), "expires_in"),
        (
            json!({"label": "x", "expires_in": ten_years + 1}),
            "expires_in",
        ),
        (
            json!({"label": "x", "expires_at": "2001-01-01T00:00:00Z"}),
            "expires_at",
        ),
        (
            json!({"label": "x", "expires_in": 60, "expires_at": "2099-01-01T00:00:00Z"}),
            "expires_at",
        ),
        (
            json!({"label": "x", "expires_in": 60, "max_downloads": 0}),
            "max_downloads",
        ),
        (
            json!({"label": "x", "expires_in": 60, "max_downloads": -3}),
            "max_downloads",
        ),
        (
            json!({"label": "x", "expires_in": 60, "asset_ids": []}),
            "asset_ids",
        ),
        (
            json!({"label": "x", "expires_in": 60, "asset_ids": ["nope"]}),
            "asset_ids[0]",
        ),
        (
            json!({"label": "x", "expires_in": 60, "asset_ids": [image, outside]}),
            "asset_ids[1]",
        ),
    ] {
        let r = ctx
            .send_json(
                Method::POST,
                &format!("/api/v1/libraries/{lib}/passes"),
                Some(&ctx.admin),
                &body,
            )
            .await;
        assert_eq!(r.status, 400, "{body}: {}", r.json);
        assert_eq!(r.json["field"], field, "{body}: {}", r.json);
    }
    let r = ctx
        .send_json(
            Method::POST,
            &format!("/api/v1/libraries/{lib}/passes"),
            Some(&ctx.admin),
            &json!({"label": "x", "expires_in": ten_years}),
        )
        .await;
    assert_eq!(r.status, 201, "ten years is the longest: {}", r.json);
}

pub(crate) async fn every_bad_pass_looks_the_same<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let shop = Shop::open(&ctx).await;
    let file = format!("/api/v1/assets/{}/download", shop.image);
    let unknown = generate_pass().expect("random").secret;
    let mut bodies = Vec::new();
    for bad in [
        "alp_short".to_owned(),
        format!("alp_{}", "+".repeat(43)),
        unknown,
        shop.expired.clone(),
        shop.revoked.clone(),
    ] {
        let r = get(&ctx, &file, Cred::Pass(&bad)).await;
        assert_eq!(r.status, 401, "{bad}");
        bodies.push(r.raw);
    }
    assert!(
        bodies.windows(2).all(|w| w[0] == w[1]),
        "one body for every bad pass: {:?}",
        bodies
            .iter()
            .map(|b| String::from_utf8_lossy(b))
            .collect::<Vec<_>>()
    );

    // A pass in a query string is never taken, not even with the right one.
    for query in [
        format!("pass={}", shop.valid),
        format!("token={}", shop.valid),
    ] {
        let r = get(&ctx, &format!("{file}?{query}"), Cred::None).await;
        assert_eq!(r.status, 401, "{query}");
        assert!(
            r.json["message"]
                .as_str()
                .expect("message")
                .contains("Authorization"),
            "{}",
            r.json
        );
    }

    // A pass opens its library, by id and slug, and nothing it is not for.
    let by_id = get(
        &ctx,
        &format!("/api/v1/libraries/{}?include_assets=true", shop.sold),
        Cred::Pass(&shop.valid),
    )
    .await;
    assert_eq!(by_id.status, 200, "{}", by_id.json);
    let slug = by_id.json["slug"].as_str().expect("slug").to_owned();
    let by_slug = get(
        &ctx,
        &format!("/api/v1/libraries/slug/{slug}"),
        Cred::Pass(&shop.valid),
    )
    .await;
    assert_eq!(by_slug.status, 200);
    let r = get(
        &ctx,
        &format!("/api/v1/libraries/{}", shop.sold),
        Cred::Pass(&shop.other_library),
    )
    .await;
    r.assert(
        403,
        json!({"error": "Insufficient permissions",
            "message": "This library pass is for another library"}),
    );
    for path in [
        "/api/v1/assets".to_owned(),
        format!("/api/v1/assets/{}", shop.image),
        "/api/v1/libraries".to_owned(),
    ] {
        let r = get(&ctx, &path, Cred::Pass(&shop.valid)).await;
        assert_eq!(r.status, 403, "{path}: {}", r.json);
    }

    // A deleted library takes its passes with it.
    let r = Resp::from(send(
        &ctx,
        Method::DELETE,
        &format!("/api/v1/libraries/{}", shop.sold),
        Cred::Key(&ctx.admin),
    ))
    .await;
    assert_eq!(r.status, 204);
    let r = get(&ctx, &file, Cred::Pass(&shop.valid)).await;
    assert_eq!(r.raw, bodies[0], "{}", r.json);
}

pub(crate) async fn links_minted_with_a_pass_follow_the_pass<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let shop = Shop::open(&ctx).await;
    let pass = make_pass(
        &ctx,
        &shop.sold,
        json!({"label": "Two", "expires_in": 600, "max_downloads": 2}),
    )
    .await;
    let tok = token(&pass);
    let r = get(
        &ctx,
        &format!("/api/v1/assets/{}/download-url", shop.image),
        Cred::Pass(&tok),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.json);
    let link = r.json["data"]["url"].as_str().expect("url").to_owned();
    assert!(link.contains(&format!("pass={}", id_of(&pass))), "{link}");
    assert!(!link.contains("alp_"), "the token never goes into a link");
    let zip = get(
        &ctx,
        &format!("/api/v1/libraries/{}/download-url", shop.sold),
        Cred::Pass(&tok),
    )
    .await;
    let zip_link = zip.json["data"]["url"].as_str().expect("url").to_owned();

    assert_eq!(get(&ctx, &link, Cred::None).await.status, 200);
    assert_eq!(
        get(&ctx, &zip_link, Cred::None).await.status,
        200,
        "a zip is one"
    );
    let r = get(&ctx, &link, Cred::None).await;
    r.assert(
        403,
        json!({"error": "Pass download limit reached",
            "message": "This library pass has made every download it allows"}),
    );
    let used = ctx
        .get(&format!(
            "/api/v1/libraries/{}/passes/{}",
            shop.sold,
            id_of(&pass)
        ))
        .await;
    assert_eq!(used.json["data"]["downloads_used"], 2);

    // A link of a revoked pass stops working.
    let other = make_pass(&ctx, &shop.sold, json!({"label": "R", "expires_in": 600})).await;
    let r = get(
        &ctx,
        &format!("/api/v1/assets/{}/download-url", shop.image),
        Cred::Pass(&token(&other)),
    )
    .await;
    let link = r.json["data"]["url"].as_str().expect("url").to_owned();
    assert_eq!(get(&ctx, &link, Cred::None).await.status, 200);
    let r = Resp::from(send(
        &ctx,
        Method::DELETE,
        &format!("/api/v1/libraries/{}/passes/{}", shop.sold, id_of(&other)),
        Cred::Key(&ctx.admin),
    ))
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(get(&ctx, &link, Cred::None).await.status, 401);
    // A link's pass cannot be swapped for another.
    let swapped = link.replace(&id_of(&other), &id_of(&pass));
    assert_eq!(get(&ctx, &swapped, Cred::None).await.status, 401);
}

pub(crate) async fn concurrent_downloads_spend_exactly_the_limit<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let shop = Shop::open(&ctx).await;
    let pass = make_pass(
        &ctx,
        &shop.sold,
        json!({"label": "Ten", "expires_in": 600, "max_downloads": 10}),
    )
    .await;
    let tok = token(&pass);
    let file = format!("/api/v1/assets/{}/download", shop.image);
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let request = send(&ctx, Method::GET, &file, Cred::Pass(&tok));
        tasks.push(tokio::spawn(async move {
            let r = request.send().await.expect("request");
            let status = r.status().as_u16();
            let body = r.bytes().await.expect("body");
            (status, body)
        }));
    }
    let (mut ok, mut limited, mut other) = (0, 0, Vec::new());
    for task in tasks {
        match task.await.expect("task") {
            (200, _) => ok += 1,
            (403, body) => {
                let json: Value = serde_json::from_slice(&body).expect("JSON");
                assert_eq!(json["error"], "Pass download limit reached");
                limited += 1;
            }
            (status, body) => other.push((status, String::from_utf8_lossy(&body).into_owned())),
        }
    }
    assert_eq!((ok, limited, other), (10, 40, vec![]));
    let r = ctx
        .get(&format!(
            "/api/v1/libraries/{}/passes/{}",
            shop.sold,
            id_of(&pass)
        ))
        .await;
    assert_eq!(r.json["data"]["downloads_used"], 10);
}
