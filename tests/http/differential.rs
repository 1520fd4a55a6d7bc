//! The differential test: one long list of requests — valid and invalid, every endpoint, every
//! error row, odd headers, odd query strings, oversized bodies — sent over raw sockets to the
//! axum and the warp adapter, each over its own store seeded with identical records. Every
//! answer must be the same: status, the headers that carry meaning, and the body byte for
//! byte, except the ids and timestamps of records the requests themselves create.

use assetlib_core::events::Log;
use std::collections::HashMap;

use assetlib::{Asset, AssetType, Config, Scope, Service};
use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::harness::axum::Axum;
use crate::harness::warp::Warp;
use crate::harness::{Harness, Server};
use crate::support::{RawAnswer, asset, raw_request};

/// The headers compared besides the status and the body.
const COMPARED: [&str; 13] = [
    "content-type",
    "content-length",
    "content-range",
    "content-disposition",
    "accept-ranges",
    "etag",
    "location",
    "www-authenticate",
    "allow",
    "transfer-encoding",
    "vary",
    "access-control-allow-origin",
    "access-control-allow-methods",
];

/// The keys both stores know.
struct Keys {
    admin: String,
    read_assets: String,
    assets_only: String,
    libraries_only: String,
    expired: String,
    revoked: String,
}

/// The one stored file both stores start with, and its path.
const SEED_PDF: &[u8] = b"%PDF-1.4\n% a stand-in: only downloaded, never parsed\n%%EOF\n";
const SEED_FILE: &str = "seed/brand-guide.pdf";

/// The records both stores start with.
struct Seed {
    assets: Vec<Asset>,
    draft: Uuid,
}

fn seed_assets() -> Seed {
    let at = |i: i64| {
        Utc.timestamp_millis_opt(1_750_000_000_000 + i * 1000)
            .unwrap()
    };
    let mut assets = Vec::new();
    let specs = [
        ("Brand guide", AssetType::Pdf),
        ("Café menu", AssetType::Document),
        ("logo", AssetType::Image),
        ("Logo", AssetType::Image),
        ("Launch film", AssetType::Video),
        ("Jingle", AssetType::Audio),
        ("Source", AssetType::Git),
        ("Slides", AssetType::Collection),
    ];
    for (i, (title, asset_type)) in specs.into_iter().enumerate() {
        let mut a = asset(title, asset_type, at(i as i64 / 2));
        a.description = Some(format!("Item {i}: naïve \"quoted\" text"));
        assets.push(a);
    }
    // The pdf has a stored file; the others have none.
    assets[0].file_path = Some(SEED_FILE.to_owned());
    assets[0].file_size = Some(SEED_PDF.len() as u64);
    assets[0].mime_type = Some("application/pdf".to_owned());
    for a in &mut assets[1..] {
        a.file_path = None;
    }
    let mut draft = asset("Hidden draft", AssetType::Pdf, at(20));
    draft.published = false;
    let draft_id = draft.id;
    assets.push(draft);
    Seed {
        assets,
        draft: draft_id,
    }
}

/// A service over a fresh in-memory store holding `seed` and the key records of `keys_from`
/// (or new keys, returned, when `keys_from` is `None`).
async fn seeded(seed: &Seed, keys_from: Option<&Service>) -> (Service, Option<Keys>) {
    let mut config = Config::default();
    config.cors_origins = vec!["https://www.example.com".to_owned()];
    let service = Service::in_memory(config);
    service
        .files()
        .put(SEED_FILE, SEED_PDF.into())
        .await
        .unwrap();
    for a in &seed.assets {
        service
            .store()
            .insert_asset(a.clone(), Log::ANONYMOUS)
            .await
            .unwrap();
    }
    if let Some(source) = keys_from {
        for key in source.list_keys().await.unwrap() {
            service
                .store()
                .insert_key(key, Log::ANONYMOUS)
                .await
                .unwrap();
        }
        return (service, None);
    }
    let key = |scopes: &[Scope], expires: Option<DateTime<Utc>>| {
        let service = service.clone();
        let scopes = scopes.to_vec();
        async move { service.create_key("k", scopes, expires).await.unwrap() }
    };
    let admin = key(&Scope::ALL, None).await.1;
    let read_assets = key(&[Scope::ReadAssets, Scope::ReadLibraries], None)
        .await
        .1;
    let assets_only = key(&[Scope::ReadAssets, Scope::WriteAssets], None).await.1;
    let libraries_only = key(&[Scope::ReadLibraries, Scope::WriteLibraries], None)
        .await
        .1;
    let expired = key(&Scope::ALL, Some(Utc::now() - Duration::days(1)))
        .await
        .1;
    let (record, revoked) = key(&Scope::ALL, None).await;
    service.revoke_key(record.id).await.unwrap();
    let keys = Keys {
        admin,
        read_assets,
        assets_only,
        libraries_only,
        expired,
        revoked,
    };
    (service, Some(keys))
}

/// One raw HTTP/1.1 request.
struct Req {
    name: String,
    bytes: Vec<u8>,
}

/// Builds the requests, with a `Connection: close` head and a `Content-Length` when a body is
/// given.
struct Reqs(Vec<Req>);

impl Reqs {
    fn raw(&mut self, name: &str, bytes: Vec<u8>) {
        self.0.push(Req {
            name: name.to_owned(),
            bytes,
        });
    }

    fn send(&mut self, method: &str, target: &str, headers: &[(&str, &str)], body: Option<&[u8]>) {
        let mut head = format!("{method} {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if let Some(body) = body {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body.unwrap_or_default());
        self.raw(&format!("{method} {target}"), bytes);
    }

    fn get(&mut self, target: &str, key: &str) {
        let auth = format!("Bearer {key}");
        self.send("GET", target, &[("Authorization", &auth)], None);
    }

    fn json(&mut self, method: &str, target: &str, key: &str, body: &str) {
        let auth = format!("Bearer {key}");
        let headers = [
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
        ];
        self.send(method, target, &headers, Some(body.as_bytes()));
    }
}

/// Every request of the test, in order (later ones see the effects of earlier writes).
fn requests(keys: &Keys, seed: &Seed) -> Vec<Req> {
    let admin = keys.admin.as_str();
    let ids: Vec<String> = seed.assets.iter().map(|a| a.id.to_string()).collect();
    let (pdf, doc, image, video, audio, git) =
        (&ids[0], &ids[1], &ids[2], &ids[4], &ids[5], &ids[6]);
    let library = "0b7c8f9e-1d2a-4b3c-9d8e-7f6a5b4c3d2e";
    let draft_library = "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f";
    let missing = Uuid::from_u128(7).to_string();
    let mut r = Reqs(Vec::new());

    // Keys, schemes and scopes: 401, 403, and the order of the checks.
    r.send("GET", "/api/v1/assets", &[], None);
    r.send(
        "GET",
        "/api/v1/assets",
        &[("Authorization", "Basic YWxhZGRpbjpvcGVu")],
        None,
    );
    r.send(
        "GET",
        "/api/v1/assets",
        &[("Authorization", "Bearer")],
        None,
    );
    r.send(
        "GET",
        "/api/v1/assets",
        &[("Authorization", "Bearer  ")],
        None,
    );
    r.send(
        "GET",
        "/api/v1/assets",
        &[("Authorization", &format!("bearer {admin}"))],
        None,
    );
    r.send(
        "GET",
        "/api/v1/assets",
        &[("Authorization", &format!("BEARER   {admin}"))],
        None,
    );
    r.get("/api/v1/assets", "alk_not-a-real-key");
    r.get("/api/v1/assets", &format!("alk_{}", "A".repeat(43)));
    r.get("/api/v1/assets", &keys.expired);
    r.get("/api/v1/assets", &keys.revoked);
    r.get("/api/v1/libraries", &keys.assets_only);
    r.get("/api/v1/assets", &keys.libraries_only);
    r.json("POST", "/api/v1/assets", &keys.read_assets, "{not json");
    r.json(
        "PUT",
        &format!("/api/v1/libraries/{library}"),
        &keys.assets_only,
        "{}",
    );
    r.send("DELETE", &format!("/api/v1/libraries/{library}"), &[], None);
    r.send(
        "GET",
        "/api/v1/assets",
        &[
            ("Authorization", "Bearer x"),
            ("Authorization", &format!("Bearer {admin}")),
        ],
        None,
    );

    // Asset lists: defaults, every parameter, and bad values naming the parameter.
    for query in [
        "",
        "?page=2&per_page=3",
        "?per_page=0",
        "?per_page=-1",
        "?per_page=abc",
        "?per_page=101",
        "?per_page=1e3",
        "?page=0",
        "?page=999",
        "?page=99999999999999999999999",
        "?asset_type=image",
        "?asset_type=external_video",
        "?asset_type=IMAGE",
        "?search=caf%C3%A9",
        "?search=CAFÉ",
        "?search=brand+guide",
        "?search=%ZZ",
        "?search=",
        "?sort=title&order=asc",
        "?sort=title&order=desc&per_page=2&page=2",
        "?sort=updated_at",
        "?sort=size",
        "?order=sideways",
        "?page=&per_page=",
        "?unknown=1&&=&per_page=2",
        "?per_page=2&per_page=5",
    ] {
        r.get(&format!("/api/v1/assets{query}"), admin);
    }

    // One asset.
    r.get(&format!("/api/v1/assets/{pdf}"), admin);
    r.get(&format!("/api/v1/assets/{}", pdf.to_uppercase()), admin);
    r.get("/api/v1/assets/not-a-uuid", admin);
    r.get("/api/v1/assets/%F0%9F%8E%A8", admin);
    r.get("/api/v1/assets/%FF", admin);
    r.get(&format!("/api/v1/assets/{missing}"), admin);
    r.get(&format!("/api/v1/assets/{}", seed.draft), admin);
    r.get(&format!("/api/v1/assets/{pdf}?unknown=1"), admin);

    // Creates: valid ones of every kind, then each validation row.
    let creates = [
        json!({"title": "Annual report", "asset_type": "pdf", "description": "2026"}),
        json!({"title": "Annual report", "asset_type": "pdf"}),
        json!({"title": "Docs", "asset_type": "link", "external_url": "https://example.com/a?b=c"}),
        json!({"title": "Teaser", "asset_type": "external_video",
               "external_url": "https://youtu.be/dQw4w9WgXcQ?t=1m5s", "is_public": true}),
        json!({"title": "Clip", "asset_type": "external_video",
               "external_url": "https://cdn.example.com/clip.mp4"}),
        json!({"title": "Ünïcödé 漢字 🎨", "asset_type": "document", "description": null,
               "file_path": null, "extra": [1, 2]}),
        json!({"asset_type": "pdf"}),
        json!({"title": "   ", "asset_type": "pdf"}),
        json!({"title": "é".repeat(501), "asset_type": "pdf"}),
        json!({"title": 5, "asset_type": "pdf"}),
        json!({"title": "T", "asset_type": "spreadsheet"}),
        json!({"title": "T", "asset_type": "link"}),
        json!({"title": "T", "asset_type": "link", "external_url": "javascript:alert(1)"}),
        json!({"title": "T", "asset_type": "link", "external_url": "/relative"}),
        json!({"title": "T", "asset_type": "external_video",
               "external_url": "https://example.com/watch?v=1"}),
        json!({"title": "T", "asset_type": "pdf", "is_public": "yes"}),
        json!({"title": "T", "asset_type": "pdf", "file_path": "../etc/passwd"}),
        json!({"title": "T", "asset_type": "pdf", "file_path": "/etc/passwd"}),
        json!([1, 2, 3]),
    ];
    for body in &creates {
        r.json("POST", "/api/v1/assets", admin, &body.to_string());
    }
    let auth = format!("Bearer {admin}");
    let body = br#"{"title":"Typed","asset_type":"audio"}"#;
    for content_type in [
        None,
        Some("text/plain"),
        Some("application/json; charset=utf-8"),
        Some("APPLICATION/JSON"),
        Some("application/vnd.api+json"),
        Some("application/jsonx"),
    ] {
        let mut headers = vec![("Authorization", auth.as_str())];
        headers.extend(content_type.map(|ct| ("Content-Type", ct)));
        r.send("POST", "/api/v1/assets", &headers, Some(body));
    }
    r.json("POST", "/api/v1/assets", admin, "");
    r.json("POST", "/api/v1/assets", admin, "{\"title\": \"cut");
    // Bodies over the 1 MiB limit, declared and refused before they are sent.
    for length in [(1 << 20) + 1, 1 << 31] {
        r.raw(
            &format!("POST declaring {length} bytes"),
            format!(
                "POST /api/v1/assets HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\
                 Authorization: Bearer {admin}\r\nContent-Type: application/json\r\n\
                 Content-Length: {length}\r\n\r\n"
            )
            .into_bytes(),
        );
    }

    // Library writes.
    let doc = json!({
        "title": "Brand kit", "description": "Everything", "cover_overlay_color": "#1A2B3C",
        "cover_overlay_opacity": 0.4, "allow_bulk_download": false, "published": true,
        "workspace_id": "ws-1",
        "sections": [
            {"title": "Logos", "assets": [{"asset_id": image}, {"asset_id": pdf, "title": "Guide"}]},
            {"title": "Media", "collapsed_by_default": true,
             "assets": [{"asset_id": video}, {"asset_id": audio, "description": "Loud"}]},
            {"title": "Empty"}
        ],
        "unsectioned_assets": [{"asset_id": doc, "title": "Menu"}, {"asset_id": seed.draft}]
    });
    let lib_path = format!("/api/v1/libraries/{library}");
    r.json("PUT", &lib_path, admin, &doc.to_string());
    r.json("PUT", &lib_path, admin, &doc.to_string());
    let mut draft = doc.clone();
    draft["published"] = json!(false);
    draft["title"] = json!("Brand kit");
    r.json(
        "PUT",
        &format!("/api/v1/libraries/{draft_library}"),
        admin,
        &draft.to_string(),
    );
    let bad = |path: &str, value: Value| {
        let mut d = doc.clone();
        let mut at = &mut d;
        let parts: Vec<&str> = path.split('.').collect();
        for part in &parts[..parts.len() - 1] {
            at = match part.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[*part],
            };
        }
        at[parts[parts.len() - 1]] = value;
        d.to_string()
    };
    for body in [
        bad("cover_overlay_color", json!("#12345")),
        bad("cover_overlay_opacity", json!(1.5)),
        bad("is_paid", json!(true)),
        bad("currency", json!("usd")),
        bad("title", json!("")),
        bad("sections.0.assets.1.asset_id", json!(missing)),
        bad("sections.1.assets.0.asset_id", json!(image)),
        bad("sections.0.assets.0.asset_id", json!(git)),
        bad("sections.0.assets.0.asset_id", json!("nope")),
        bad("sections.2.title", json!(null)),
        bad("unsectioned_assets", json!({})),
        "null".to_owned(),
    ] {
        r.json("PUT", &lib_path, admin, &body);
    }
    r.json(
        "PUT",
        "/api/v1/libraries/not-a-uuid",
        admin,
        &doc.to_string(),
    );

    // Library reads.
    for query in [
        "",
        "?page=1&limit=1",
        "?page=2&limit=1",
        "?limit=0",
        "?limit=500",
        "?workspace_id=ws-1",
        "?workspace_id=other",
    ] {
        r.get(&format!("/api/v1/libraries{query}"), admin);
    }
    for query in [
        "",
        "?include_assets=true",
        "?include_assets=1",
        "?include_assets=false",
        "?include_assets=maybe",
        "?include_assets=true&include_assets=false",
    ] {
        r.get(&format!("{lib_path}{query}"), admin);
    }
    r.send(
        "HEAD",
        &format!("{lib_path}?include_assets=true"),
        &[("Authorization", &auth)],
        None,
    );
    r.get(&lib_path, &keys.read_assets);
    r.get(&format!("/api/v1/libraries/{draft_library}"), admin);
    r.get(&format!("/api/v1/libraries/{missing}"), admin);
    r.get("/api/v1/libraries/123", admin);
    r.send(
        "DELETE",
        &format!("/api/v1/libraries/{draft_library}"),
        &[("Authorization", &auth)],
        None,
    );
    r.send(
        "DELETE",
        &format!("/api/v1/libraries/{draft_library}"),
        &[("Authorization", &auth)],
        None,
    );
    r.send(
        "DELETE",
        "/api/v1/libraries/x",
        &[("Authorization", &auth)],
        None,
    );

    // Routing: unknown paths, wrong methods, HEAD.
    for path in [
        "/api/v1",
        "/api/v1/",
        "/api/v1/nothing",
        "/api/v1/assets/",
        &format!("/api/v1/assets/{pdf}/extra"),
        "/api/v1/libraries/",
        "/api/v1//assets",
    ] {
        r.get(path, admin);
    }
    for (method, path) in [
        ("DELETE", "/api/v1/assets".to_owned()),
        ("PUT", "/api/v1/assets".to_owned()),
        ("POST", format!("/api/v1/assets/{pdf}")),
        ("PATCH", lib_path.clone()),
        ("POST", "/api/v1/libraries".to_owned()),
        ("OPTIONS", "/api/v1/assets".to_owned()),
    ] {
        r.send(method, &path, &[("Authorization", &auth)], None);
    }
    r.send(
        "HEAD",
        "/api/v1/assets?per_page=2",
        &[("Authorization", &auth)],
        None,
    );
    r.send("HEAD", "/api/v1/assets", &[], None);
    r.send(
        "HEAD",
        &format!("/api/v1/assets/{missing}"),
        &[("Authorization", &auth)],
        None,
    );

    // Downloads: whole, ranges, unsatisfiable, HEAD, no file; uploads; bulk download.
    let download = format!("/api/v1/assets/{pdf}/download");
    r.get(&download, admin);
    for range in [
        "bytes=0-9",
        "bytes=10-",
        "bytes=-5",
        "bytes=0-0",
        "bytes=9999-",
        "bytes=0-1,4-5",
        "bytes=x",
    ] {
        r.send(
            "GET",
            &download,
            &[("Authorization", &auth), ("Range", range)],
            None,
        );
    }
    r.send("HEAD", &download, &[("Authorization", &auth)], None);
    r.get(&format!("/api/v1/assets/{image}/download"), admin);
    r.get(&format!("/api/v1/assets/{missing}/download"), admin);
    r.get("/api/v1/assets/nope/download", admin);
    r.get(
        &format!("/api/v1/assets/{pdf}/download"),
        &keys.libraries_only,
    );
    r.send("POST", &download, &[("Authorization", &auth)], Some(b""));
    let boundary = "differential-boundary";
    let form = |fields: &str| {
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nNotes\r\n\
             {fields}--{boundary}--\r\n"
        )
    };
    let multipart = format!("multipart/form-data; boundary={boundary}");
    let with_file = form(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\n\
         some plain words\r\n"
    ));
    let upload_headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", multipart.as_str()),
    ];
    r.send(
        "POST",
        "/api/v1/assets/upload",
        &upload_headers,
        Some(form("").as_bytes()),
    );
    r.send(
        "POST",
        "/api/v1/assets/upload",
        &upload_headers,
        Some(b"--broken"),
    );
    r.send(
        "POST",
        "/api/v1/assets/upload",
        &[
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
        ],
        Some(with_file.as_bytes()),
    );
    r.send(
        "POST",
        "/api/v1/assets/upload",
        &upload_headers,
        Some(with_file.as_bytes()),
    );
    r.get("/api/v1/assets/upload", admin);
    r.get(&format!("{lib_path}/download"), admin);
    r.get(&format!("/api/v1/libraries/{missing}/download"), admin);

    // The asset lifecycle: changes, drafts, usage, refused and forced deletes, replacements.
    let read_assets = keys.read_assets.as_str();
    let asset_path = |id: &str| format!("/api/v1/assets/{id}");
    r.json(
        "PATCH",
        &asset_path(pdf),
        admin,
        r#"{"title": "Guide v2", "description": null}"#,
    );
    r.json("PATCH", &asset_path(pdf), admin, r#"{"title": "Guide v2"}"#);
    for body in [
        r#"{"slug": "x"}"#,
        r#"{"asset_type": "image"}"#,
        r#"{"title": ""}"#,
        r#"{"title": null}"#,
        r#"{"is_public": "yes"}"#,
        r#"{"external_url": "https://example.com/"}"#,
        "[]",
        "{",
    ] {
        r.json("PATCH", &asset_path(pdf), admin, body);
    }
    r.json(
        "PATCH",
        &asset_path(git),
        admin,
        r#"{"external_url": "https://example.com/repo.git"}"#,
    );
    r.json("PATCH", &asset_path(&missing), admin, "{}");
    r.json("PATCH", &asset_path("nope"), admin, "{}");
    r.json("PATCH", &asset_path(pdf), read_assets, "{}");
    let draft_id = seed.draft.to_string();
    r.get(&asset_path(&draft_id), admin);
    r.get(&asset_path(&draft_id), read_assets);
    for status in ["draft", "any", "published", "drafts"] {
        r.get(
            &format!("/api/v1/assets?status={status}&per_page=100"),
            admin,
        );
    }
    r.get("/api/v1/assets?status=any", read_assets);
    r.get(&format!("{}/usage", asset_path(image)), admin);
    r.get(&format!("{}/usage", asset_path(&missing)), admin);
    r.get(&format!("{}/usage", asset_path(image)), read_assets);
    r.send(
        "DELETE",
        &asset_path(image),
        &[("Authorization", &format!("Bearer {admin}"))],
        None,
    );
    r.send(
        "DELETE",
        &format!("{}?force=perhaps", asset_path(image)),
        &[("Authorization", &format!("Bearer {admin}"))],
        None,
    );
    r.send(
        "DELETE",
        &asset_path(git),
        &[("Authorization", &format!("Bearer {admin}"))],
        None,
    );
    r.send(
        "DELETE",
        &asset_path(git),
        &[("Authorization", &format!("Bearer {admin}"))],
        None,
    );
    r.send(
        "DELETE",
        &format!("{}?force=true", asset_path(audio)),
        &[("Authorization", &format!("Bearer {admin}"))],
        None,
    );
    r.get(&format!("{lib_path}?include_assets=true"), admin);
    r.json("PUT", &format!("{}/file", asset_path(pdf)), admin, "{}");
    for target in [&ids[3], &ids[1]] {
        r.send(
            "PUT",
            &format!("{}/file", asset_path(target)),
            &upload_headers,
            Some(with_file.as_bytes()),
        );
    }
    r.get(&format!("{}/download", asset_path(&ids[1])), admin);

    // Websites: by slug, preflights, keyless reads, signed-link refusals, conditional reads.
    r.get(
        "/api/v1/libraries/slug/brand-kit?include_assets=true",
        admin,
    );
    r.get("/api/v1/libraries/slug/no-such-library", admin);
    for path in ["/api/v1/assets", &asset_path(pdf), "/api/v1/nothing"] {
        r.send(
            "OPTIONS",
            path,
            &[("Origin", "https://www.example.com")],
            None,
        );
    }
    r.send("GET", &asset_path(pdf), &[], None);
    r.send(
        "GET",
        &format!("{}/download?expires=1&signature=x", asset_path(pdf)),
        &[],
        None,
    );
    r.send(
        "GET",
        &format!("{lib_path}/download?signature=x"),
        &[],
        None,
    );
    r.get(
        &format!("{}/download-url?expires_in=0", asset_path(pdf)),
        admin,
    );
    r.get(&format!("{}/download-url", asset_path(&missing)), admin);
    r.get(&format!("{lib_path}/download-url"), admin);
    r.send(
        "GET",
        &asset_path(pdf),
        &[
            ("Authorization", &format!("Bearer {admin}")),
            ("If-None-Match", "\"nope\", *"),
        ],
        None,
    );

    // The effects of all of the above, as both stores now hold them. (Lists that hold the
    // records created above are compared where each was created: among equal titles or
    // timestamps their order comes from their ids, which differ by nature.)
    r.get("/api/v1/assets?per_page=100&search=item", admin);
    r.get(
        "/api/v1/assets?sort=title&order=asc&per_page=100&search=item",
        admin,
    );
    r.get("/api/v1/assets?per_page=100&asset_type=link", admin);
    r.get(&format!("{lib_path}?include_assets=true"), admin);
    r.get("/api/v1/libraries", admin);
    r.0
}

/// Replaces what differs by nature between two runs: ids not among `known`, each by its
/// order of first appearance, and timestamps after `since`.
struct Normalizer {
    known: Vec<String>,
    since: DateTime<Utc>,
    fresh: HashMap<String, String>,
}

impl Normalizer {
    fn text(&mut self, s: &str) -> String {
        let mut out = s.to_owned();
        for (start, _) in s.match_indices('-') {
            let Some(candidate) = start.checked_sub(8).and_then(|b| s.get(b..b + 36)) else {
                continue;
            };
            if Uuid::parse_str(candidate).is_ok() && !self.known.iter().any(|k| k == candidate) {
                let n = self.fresh.len();
                let name = self
                    .fresh
                    .entry(candidate.to_owned())
                    .or_insert_with(|| format!("<new-{n}>"))
                    .clone();
                out = out.replace(candidate, &name);
            }
        }
        match DateTime::parse_from_rfc3339(&out) {
            Ok(t) if t >= self.since => "<now>".to_owned(),
            _ => out,
        }
    }

    fn json(&mut self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(items) => Value::Array(items.iter().map(|i| self.json(i)).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), self.json(v))).collect())
            }
            other => other.clone(),
        }
    }
}

/// What is compared of one answer.
#[derive(Debug, PartialEq)]
struct Seen {
    status: u16,
    headers: Vec<(String, String)>,
    body_len: usize,
    body: Value,
}

fn seen(answer: &RawAnswer, normalize: &mut Normalizer) -> Seen {
    let headers = COMPARED
        .iter()
        .filter_map(|name| {
            let value = answer.headers.iter().find(|(n, _)| n == name)?;
            // A JSON answer's tag hashes its bytes, ids and times included, which differ by
            // nature between the two runs: that it is there is what both must agree on.
            let json = answer
                .headers
                .iter()
                .any(|(n, v)| n == "content-type" && v == "application/json");
            if *name == "etag" && (json || answer.status == 304) {
                return Some((value.0.clone(), "<json etag>".to_owned()));
            }
            Some((value.0.clone(), normalize.text(&value.1)))
        })
        .collect();
    Seen {
        status: answer.status,
        headers,
        body_len: answer.body.len(),
        body: if answer.json.is_null() {
            Value::String(normalize.text(&answer.body))
        } else {
            normalize.json(&answer.json)
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axum_and_warp_answer_every_request_alike() {
    let since = Utc::now();
    let seed = seed_assets();
    let (axum_service, keys) = seeded(&seed, None).await;
    let keys = keys.expect("keys made");
    let (warp_service, _) = seeded(&seed, Some(&axum_service)).await;
    let servers: [Server; 2] = [
        Axum::spawn(axum_service).await,
        Warp::spawn(warp_service).await,
    ];

    let known: Vec<String> = seed.assets.iter().map(|a| a.id.to_string()).collect();
    let known = known
        .into_iter()
        .chain(
            [
                "0b7c8f9e-1d2a-4b3c-9d8e-7f6a5b4c3d2e",
                "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f",
            ]
            .map(String::from),
        )
        .chain([Uuid::from_u128(7).to_string()])
        .collect::<Vec<_>>();
    let mut normalizers = [0, 1].map(|_| Normalizer {
        known: known.clone(),
        since,
        fresh: HashMap::new(),
    });

    let requests = requests(&keys, &seed);
    assert!(requests.len() >= 60, "{} requests", requests.len());
    let mut statuses = HashMap::new();
    for req in &requests {
        let mut answers = Vec::new();
        for (server, normalize) in servers.iter().zip(normalizers.iter_mut()) {
            let answer = raw_request(&server.base_url, &[&req.bytes], false).await;
            answers.push(seen(&answer, normalize));
        }
        assert_eq!(
            answers[0], answers[1],
            "axum (left) and warp (right) differ on {}",
            req.name
        );
        *statuses.entry(answers[0].status).or_insert(0) += 1;
    }
    // The list covers every row of the error table and the success codes.
    for status in [200, 201, 204, 400, 401, 403, 404, 405, 413, 415] {
        assert!(
            statuses.contains_key(&status),
            "no request answered {status}: {statuses:?}"
        );
    }
}
