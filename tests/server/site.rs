//! The example website page (`examples/server/site/`) on the ready servers, in a real headless
//! browser: Debian's `chromium` loads `/site/?library=...&key=...` from a server started with
//! `--demo`, and the test reads the DOM it ends with (`--dump-dom`) and takes screenshots at
//! desktop and phone widths (under `target/site-screenshots/`).
//!
//! Before the browser runs, the test changes the demo library through the API so that every
//! display setting shows: a paid library with a bulk download and a collapsed section, and an
//! asset whose title is markup (it must show as text).
//!
//! The DOM is read with plain string searches on the stable `id` and `data-*` attributes the
//! page writes (`data-role`, `data-asset-id`, `data-section-id`, `data-collapsed`...), which
//! is all the checks need.

use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assetlib_testkit::tools::{CHROMIUM, FFMPEG};
use reqwest::Method;
use serde_json::{Value, json};

use crate::running::{Running, SERVERS};

/// The demo library's slug (`examples/server/app/demo.rs`).
const SLUG: &str = "sample-brand-library";

/// A title that would run script if the page inserted it as markup.
const HOSTILE: &str = "<img src=x onerror=alert(1)>";

/// The files the servers must serve byte for byte.
const INDEX_HTML: &str = include_str!("../../examples/server/site/index.html");
const APP_JS: &str = include_str!("../../examples/server/site/app.js");

/// Longest time one browser run may take.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_page_renders_a_library_in_a_headless_browser() {
    // Fails the test, saying how to install it, when Chromium is missing.
    CHROMIUM.require();
    for example in SERVERS {
        the_example_page_renders_a_library_on(example).await;
    }
}

async fn the_example_page_renders_a_library_on(example: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (data, logs) = (dir.path().join("data"), dir.path().join("logs"));
    std::fs::create_dir_all(&logs).unwrap();
    // With an ffmpeg, so the demo video has its poster frame.
    let ffmpeg = FFMPEG.require();
    let args = ["--demo", "--ffmpeg", ffmpeg.to_str().unwrap()];
    let server = Running::start_with(example, &data, &logs, &args, &[]).await;
    let key = printed_key(&server.stdout());

    the_files_are_served_with_their_headers(&server, example).await;
    let expected = prepare_the_library(&server, &key).await;

    // The page, with the key in its address.
    let page = format!("{}/site/?library={SLUG}&key={key}", server.base);
    let dom = browser(&dir.path().join("browser"), &["--dump-dom"], &page).await;
    let body = opening_tag(&dom, "<body");
    assert!(
        body.contains(r#"data-state="ready""#),
        "{example}: {body}\n{dom}"
    );
    assert!(
        dom.contains(&format!(
            r#"id="library-title">{}</h1>"#,
            escape(&expected.title)
        )),
        "{example}: no library title\n{dom}"
    );
    assert!(!dom.contains(&key), "{example}: the key is in the page");

    // The cover: the overlay colour and opacity, the price, the count, the bulk download.
    let overlay = opening_tag(&dom, r#"data-role="cover-overlay""#);
    assert!(
        overlay.contains(r##"data-overlay-color="#1A2B3C""##)
            && overlay.contains(r#"data-overlay-opacity="0.4""#)
            && overlay.contains("background-color: rgb(26, 43, 60)")
            && overlay.contains("opacity: 0.4"),
        "{example}: {overlay}"
    );
    let at = dom.find(r#"data-role="price""#).expect("a price badge");
    let badge = &dom[at..at + dom[at..].find("</span></span>").unwrap()];
    assert!(badge.contains("49"), "{example}: price badge {badge}");
    let count = opening_tag(&dom, r#"data-role="asset-count""#);
    let total = expected.assets.len();
    assert!(
        count.contains(&format!(r#"data-count="{total}""#)),
        "{example}: {count}"
    );

    // Sections in order, the collapsed one collapsed, the others open.
    let titles = texts(&dom, r#"data-role="section-title">"#);
    let want: Vec<String> = expected.sections.iter().map(|s| escape(&s.1)).collect();
    assert_eq!(titles, want, "{example}: section titles");
    for (id, title, collapsed) in &expected.sections {
        let tag = opening_tag(&dom, &format!(r#"data-section-id="{id}""#));
        assert!(tag.starts_with("<details"), "{example}: {tag}");
        assert_eq!(
            (
                tag.contains(r#"data-collapsed="true""#),
                tag.contains(" open")
            ),
            (*collapsed, !*collapsed),
            "{example}: section {title}: {tag}"
        );
    }

    // One card per asset, in page order, each with its title as text and a signed link.
    let cards = cards(&dom);
    let got: Vec<(String, String)> = cards
        .iter()
        .map(|c| (c.id.clone(), c.title.clone()))
        .collect();
    let want: Vec<(String, String)> = expected
        .assets
        .iter()
        .map(|(id, title)| (id.clone(), escape(title)))
        .collect();
    assert_eq!(got, want, "{example}: asset cards");
    assert!(
        dom.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{example}: the hostile title is not shown as text"
    );
    assert!(
        !dom.contains(r#"<img src="x""#) && !dom.contains("<img src=x"),
        "{example}: the hostile title became markup"
    );
    for (card, thumbnail) in cards.iter().zip(&expected.thumbnails) {
        assert!(
            card.html.contains(r#"data-role="asset-type""#),
            "{example}: {}",
            card.html
        );
        match thumbnail {
            Some(url) => assert!(
                card.html.contains(&format!(r#"src="{url}""#)),
                "{example}: no thumbnail {url}: {}",
                card.html
            ),
            None => assert!(!card.html.contains("<img"), "{}", card.html),
        }
    }
    assert!(expected.thumbnails.iter().any(Option::is_some));
    previews_show_on_the_cards(&cards, example);
    images_come_from_variants(&cards, example);
    cover_comes_from_a_signed_variant(&dom, &expected, example).await;

    // Every asset with a file has a signed link that downloads without a key, the same bytes
    // as a keyed download; the others are shown unavailable.
    let client = reqwest::Client::new();
    for (card, with_file) in cards.iter().zip(&expected.with_file) {
        let Some(href) = download_href(&card.html) else {
            assert!(!with_file, "{example}: no signed link: {}", card.html);
            assert!(
                card.html.contains(r#"data-signed="false""#),
                "{}",
                card.html
            );
            continue;
        };
        assert!(with_file, "{example}: a link to no file: {}", card.html);
        assert!(!href.contains(&key), "{example}: the key is in a link");
        let signed = fetch(&client, &format!("{}{href}", server.base), None).await;
        let keyed = fetch(
            &client,
            &format!("{}/api/v1/assets/{}/download", server.base, card.id),
            Some(&key),
        )
        .await;
        assert!(!keyed.is_empty());
        assert_eq!(
            signed, keyed,
            "{example}: signed and keyed downloads differ"
        );
    }
    let hostile = cards.iter().find(|c| c.title == escape(HOSTILE)).unwrap();
    assert!(download_href(&hostile.html).is_some(), "{example}");
    let all = opening_tag(&dom, r#"data-role="download-all""#);
    let href = attr(all, "href").expect("a signed bulk download link");
    let zip = fetch(&client, &format!("{}{}", server.base, unescape(href)), None).await;
    assert!(
        zip.starts_with(b"PK"),
        "{example}: the bulk download is no zip"
    );

    // The tag filter: a button per tag; an address with `tag` opens the page filtered by it,
    // the cards of other assets hidden, and the tags on each card.
    let buttons = texts(&dom, r#"data-role="tag-button""#);
    assert!(!buttons.is_empty(), "{example}: no tag buttons\n{dom}");
    for (id, _) in &expected.assets {
        let card = opening_tag(&dom, &format!(r#"data-asset-id="{id}""#));
        assert!(!card.contains(" hidden"), "{example}: unfiltered, {card}");
    }
    let filtered = format!("{page}&tag=Print");
    let dom = browser(&dir.path().join("browser"), &["--dump-dom"], &filtered).await;
    let pressed = opening_tag(&dom, r#"data-tag="print""#);
    assert!(
        pressed.contains(r#"aria-pressed="true""#),
        "{example}: {pressed}"
    );
    for (id, _) in &expected.assets {
        let card = opening_tag(&dom, &format!(r#"data-asset-id="{id}""#));
        let tagged = expected.printed.contains(id);
        assert_eq!(
            !card.contains(" hidden"),
            tagged,
            "{example}: filtered by Print, {card}"
        );
        assert_eq!(card.contains("print"), tagged, "{example}: {card}");
    }
    assert!(
        dom.contains(&format!(
            "Showing {} assets tagged “Print”.",
            expected.printed.len()
        )),
        "{example}: the status line\n{dom}"
    );

    // The search box: an address with `q` opens the page with the library's hits, each
    // match in a `<mark>` the page made, the rest of the snippet as text.
    let searched = format!("{page}&q=onerror");
    let dom = browser(&dir.path().join("browser"), &["--dump-dom"], &searched).await;
    let form = opening_tag(&dom, r#"data-role="search""#);
    assert!(
        form.contains(r#"data-state="done""#),
        "{example}: {form}\n{dom}"
    );
    assert_eq!(
        texts(&dom, r#"data-role="search-hit-title">"#),
        [escape(HOSTILE)],
        "{example}: search hits"
    );
    assert!(
        dom.contains("&lt;img src=x <mark>onerror</mark>=alert(1)&gt;"),
        "{example}: the snippet\n{dom}"
    );

    // A browser token in the address fragment, as a site's server mints it for its page.
    let (status, minted) = server
        .send(
            Method::POST,
            "/api/v1/tokens",
            &key,
            Some(json!({"scopes": ["read:libraries", "read:assets"], "expires_in": 600})),
        )
        .await;
    assert_eq!(status, 201, "{example}: {minted}");
    let token = minted["data"]["token"].as_str().unwrap().to_owned();
    let with_token = format!("{}/site/?library={SLUG}#token={token}", server.base);
    let dom = browser(&dir.path().join("browser"), &["--dump-dom"], &with_token).await;
    assert!(
        opening_tag(&dom, "<body").contains(r#"data-state="ready""#)
            && dom.contains(&format!(
                r#"id="library-title">{}</h1>"#,
                escape(&expected.title)
            )),
        "{example}: the page with a browser token\n{dom}"
    );
    assert!(!dom.contains(&token), "{example}: the token is in the page");

    // The error states: a bad key, an unknown slug, no key at all.
    let bad = format!(
        "{}/site/?library={SLUG}&key=alk_{}",
        server.base,
        "x".repeat(43)
    );
    let dom = browser(&dir.path().join("browser"), &["--dump-dom"], &bad).await;
    assert!(
        opening_tag(&dom, "<body").contains(r#"data-state="error""#)
            && opening_tag(&dom, r#"id="error""#).contains(r#"data-status="401""#),
        "{example}: a bad key\n{dom}"
    );
    let unknown = format!("{}/site/?library=no-such-library&key={key}", server.base);
    let dom = browser(&dir.path().join("browser"), &["--dump-dom"], &unknown).await;
    assert!(
        opening_tag(&dom, r#"id="error""#).contains(r#"data-status="404""#),
        "{example}: an unknown slug\n{dom}"
    );
    let bare = format!("{}/site/?library={SLUG}", server.base);
    let dom = browser(&dir.path().join("browser"), &["--dump-dom"], &bare).await;
    assert!(
        opening_tag(&dom, "<body").contains(r#"data-state="need-key""#)
            && dom.contains(r#"data-role="key-form""#),
        "{example}: no key\n{dom}"
    );

    // Screenshots at desktop and phone widths.
    let shots = screenshot_dir();
    for (width, height) in [(1280, 900), (390, 844)] {
        let path = shots.join(format!("{example}-{width}x{height}.png"));
        let _ = std::fs::remove_file(&path);
        let size = format!("--window-size={width},{height}");
        let shot = format!("--screenshot={}", path.display());
        browser(&dir.path().join("browser"), &[&shot, &size], &page).await;
        let png = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 20_000,
            "{example}: {} is no real screenshot ({} bytes)",
            path.display(),
            png.len()
        );
    }

    // The key never reached the server's log, though the page's address held it.
    let stderr = server.terminate().await;
    assert!(!stderr.contains(&key), "{example}: the key is in the log");
    assert!(
        stderr.contains("/site/"),
        "{example}: the page was not logged"
    );

    // A website's key (no read:paid) and a buyer's pass, on the same data.
    let reader = crate::running::create_key(example, &data, "read:assets,read:libraries");
    let server = Running::start(example, &data, &logs, &[]).await;
    the_buyer_view(&server, example, dir.path(), (&key, &reader), &expected).await;
    let stderr = server.terminate().await;
    assert!(!stderr.contains("alp_"), "{example}: a pass is in the log");
}

/// The paid library without a pass (a key with only `read:assets`): its price and no download
/// button for the paid file (the demo's private photo) or the zip, but buttons for the free
/// ones. With `#pass=...` in the address (and no key): the buyer's view, every file and the
/// zip downloadable through links minted with the pass.
async fn the_buyer_view(
    server: &Running,
    example: &str,
    dir: &Path,
    (admin, reader): (&str, &str),
    expected: &Expected,
) {
    let (status, detail) = server
        .get(&format!("/api/v1/libraries/slug/{SLUG}"), admin)
        .await;
    assert_eq!(status, 200, "{detail}");
    let library = detail["id"].as_str().unwrap();
    let (status, made) = server
        .send(
            Method::POST,
            &format!("/api/v1/libraries/{library}/passes"),
            admin,
            Some(json!({"label": "Buyer", "expires_in": 3600})),
        )
        .await;
    assert_eq!(status, 201, "{made}");
    let token = made["data"]["token"].as_str().unwrap().to_owned();
    let mut paid = Vec::new();
    for ((id, _), with_file) in expected.assets.iter().zip(&expected.with_file) {
        let (_, asset) = server.get(&format!("/api/v1/assets/{id}"), admin).await;
        paid.push(*with_file && asset["data"]["is_public"] == json!(false));
    }
    assert!(
        paid.iter().any(|p| *p),
        "{example}: the demo has a paid file"
    );

    let page = format!("{}/site/?library={SLUG}&key={reader}", server.base);
    let dom = browser(&dir.join("browser"), &["--dump-dom"], &page).await;
    assert!(
        opening_tag(&dom, "<body").contains(r#"data-state="ready""#),
        "{example}: {dom}"
    );
    assert!(dom.contains(r#"data-role="price""#) && !dom.contains(r#"data-role="purchased""#));
    assert!(
        !dom.contains(r#"data-role="download-all""#),
        "{example}: a zip of paid files offered without a pass"
    );
    for ((card, is_paid), with_file) in cards(&dom).iter().zip(&paid).zip(&expected.with_file) {
        if *is_paid {
            assert!(
                download_href(&card.html).is_none()
                    && card.html.contains(r#"data-role="for-sale""#),
                "{example}: a paid file offered without a pass: {}",
                card.html
            );
        } else if *with_file {
            assert!(
                download_href(&card.html).is_some(),
                "{example}: {}",
                card.html
            );
        }
    }

    let page = format!("{}/site/?library={SLUG}#pass={token}", server.base);
    let dom = browser(&dir.join("browser"), &["--dump-dom"], &page).await;
    assert!(
        opening_tag(&dom, "<body").contains(r#"data-state="ready""#),
        "{example}: the buyer's view did not load: {dom}"
    );
    assert!(dom.contains(r#"data-role="purchased""#), "{example}: {dom}");
    assert!(!dom.contains(r#"data-role="for-sale""#), "{example}: {dom}");
    let client = reqwest::Client::new();
    for ((card, is_paid), with_file) in cards(&dom).iter().zip(&paid).zip(&expected.with_file) {
        if !with_file {
            continue;
        }
        let href = download_href(&card.html)
            .unwrap_or_else(|| panic!("{example}: no button for the buyer: {}", card.html));
        assert!(href.contains("pass="), "{example}: {href}");
        assert!(!href.contains("alp_"), "{example}: the pass is in a link");
        if *is_paid {
            let bought = fetch(&client, &format!("{}{href}", server.base), None).await;
            let keyed = fetch(
                &client,
                &format!("{}/api/v1/assets/{}/download", server.base, card.id),
                Some(admin),
            )
            .await;
            assert!(
                !keyed.is_empty() && bought == keyed,
                "{example}: the buyer's file differs"
            );
        }
    }
    let all = opening_tag(&dom, r#"data-role="download-all""#);
    let href = attr(all, "href").expect("the buyer's zip link");
    let zip = fetch(&client, &format!("{}{}", server.base, unescape(href)), None).await;
    assert!(zip.starts_with(b"PK"), "{example}: the buyer's zip");
}

/// `/site/`, `/site/index.html` and `/site/app.js` are the embedded files with their types
/// and security headers, without a key; `/site` redirects; other methods are the JSON 404.
async fn the_files_are_served_with_their_headers(server: &Running, example: &str) {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for (path, content_type, body) in [
        ("/site/", "text/html; charset=utf-8", INDEX_HTML),
        ("/site/index.html", "text/html; charset=utf-8", INDEX_HTML),
        ("/site/app.js", "text/javascript; charset=utf-8", APP_JS),
    ] {
        let r = client
            .get(format!("{}{path}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{example} {path}");
        let headers = r.headers().clone();
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        assert_eq!(header("content-type"), content_type, "{example} {path}");
        assert_eq!(header("x-content-type-options"), "nosniff");
        assert_eq!(header("referrer-policy"), "no-referrer");
        let csp = header("content-security-policy");
        assert!(
            csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
            "{example} {path}: {csp}"
        );
        assert_eq!(r.text().await.unwrap(), body, "{example} {path}");
        let head = client
            .head(format!("{}{path}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(head.status(), 200, "{example} HEAD {path}");
        assert!(head.bytes().await.unwrap().is_empty());
    }
    let r = client
        .get(format!("{}/site?library={SLUG}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 308, "{example} /site");
    assert_eq!(r.headers()["location"], format!("/site/?library={SLUG}"));
    for path in ["/site/", "/site/app.js"] {
        let r = client
            .post(format!("{}{path}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 404, "{example} POST {path}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"], "Not found", "{example} POST {path}");
    }
    let r = client
        .get(format!("{}/site/other.js", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404, "{example} /site/other.js");
}

/// What the page must show, in page order.
struct Expected {
    title: String,
    /// Each section's id, title and whether it starts collapsed.
    sections: Vec<(String, String, bool)>,
    /// Each asset's id and title, sections first, then the unsectioned ones.
    assets: Vec<(String, String)>,
    /// Whether each asset has a file to download, in the same order.
    with_file: Vec<bool>,
    /// Each asset's thumbnail address, in the same order.
    thumbnails: Vec<Option<String>>,
    /// The assets tagged `Print` (every other one, from the first).
    printed: Vec<String>,
}

/// Makes the demo library paid, bulk-downloadable and with its last section collapsed, and
/// gives one of its assets a title of markup; returns the library as the API then shows it.
async fn prepare_the_library(server: &Running, key: &str) -> Expected {
    let path = format!("/api/v1/libraries/slug/{SLUG}?include_assets=true");
    let (status, detail) = server.get(&path, key).await;
    assert_eq!(status, 200, "{detail}");
    let id = detail["id"].as_str().unwrap().to_owned();
    let entries = |assets: &Value| -> Vec<Value> {
        assets
            .as_array()
            .unwrap()
            .iter()
            .map(|a| json!({"asset_id": a["id"], "title": null, "description": null}))
            .collect()
    };
    let sections = detail["sections"].as_array().unwrap();
    assert!(sections.len() >= 2, "{detail}");
    let last = sections.len() - 1;
    let doc = json!({
        "title": detail["title"],
        "slug": detail["slug"],
        "description": detail["description"],
        "cover_image_path": detail["cover_image_path"],
        "cover_overlay_color": detail["cover_overlay_color"],
        "cover_overlay_opacity": detail["cover_overlay_opacity"],
        "show_asset_count": true,
        "allow_individual_downloads": true,
        "allow_bulk_download": true,
        "is_paid": true,
        "price": 49.0,
        "currency": "USD",
        "published": true,
        "sections": sections.iter().enumerate().map(|(i, s)| json!({
            "id": s["id"],
            "title": s["title"],
            "description": s["description"],
            "collapsed_by_default": i == last,
            "assets": entries(&s["assets"]),
        })).collect::<Vec<_>>(),
        "unsectioned_assets": entries(&detail["unsectioned_assets"]),
    });
    let (status, body) = server
        .send(
            Method::PUT,
            &format!("/api/v1/libraries/{id}"),
            key,
            Some(doc),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let first = &detail["sections"][0]["assets"][0];
    let (status, body) = server
        .send(
            Method::PATCH,
            &format!("/api/v1/assets/{}", first["id"].as_str().unwrap()),
            key,
            Some(json!({ "title": HOSTILE })),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let (status, detail) = server.get(&path, key).await;
    assert_eq!(status, 200, "{detail}");
    let asset = |a: &Value| {
        (
            a["id"].as_str().unwrap().to_owned(),
            a["title"].as_str().unwrap().to_owned(),
        )
    };
    let sections = detail["sections"].as_array().unwrap();
    let in_order: Vec<&Value> = sections
        .iter()
        .flat_map(|s| s["assets"].as_array().unwrap())
        .chain(detail["unsectioned_assets"].as_array().unwrap())
        .collect();
    let assets: Vec<(String, String)> = in_order.iter().map(|a| asset(a)).collect();
    let thumbnails = in_order
        .iter()
        .map(|a| a["thumbnail_url"].as_str().map(str::to_owned))
        .collect();
    assert!(assets.iter().any(|(_, t)| t == HOSTILE), "{detail}");
    assert_eq!(detail["is_paid"], true);
    let mut with_file = Vec::new();
    for (id, _) in &assets {
        let (status, asset) = server.get(&format!("/api/v1/assets/{id}"), key).await;
        assert_eq!(status, 200, "{asset}");
        with_file.push(asset["data"]["file_path"].is_string());
    }
    assert!(with_file.contains(&true) && with_file.contains(&false));
    // Every other asset tagged Print, the first one Web too, in one bulk change.
    let printed: Vec<String> = assets.iter().step_by(2).map(|(id, _)| id.clone()).collect();
    let (status, body) = server
        .send(
            Method::POST,
            "/api/v1/assets/bulk",
            key,
            Some(json!({"action": "add_tags", "ids": printed, "atomic": true,
                "changes": {"tags": ["Print"]}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = server
        .send(
            Method::POST,
            "/api/v1/assets/bulk",
            key,
            Some(json!({"action": "add_tags", "ids": [assets[0].0],
                "changes": {"tags": ["Web"]}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    Expected {
        printed,
        title: detail["title"].as_str().unwrap().to_owned(),
        sections: sections
            .iter()
            .map(|s| {
                (
                    s["id"].as_str().unwrap().to_owned(),
                    s["title"].as_str().unwrap().to_owned(),
                    s["collapsed_by_default"] == true,
                )
            })
            .collect(),
        assets,
        with_file,
        thumbnails,
    }
}

/// The key the server printed on its first start.
fn printed_key(stdout: &str) -> String {
    stdout
        .split_whitespace()
        .find(|w| w.starts_with("alk_") && w.len() == 47)
        .unwrap_or_else(|| panic!("no key printed: {stdout}"))
        .to_owned()
}

/// A GET's body, which must be a 200.
async fn fetch(client: &reqwest::Client, url: &str, key: Option<&str>) -> Vec<u8> {
    let mut request = client.get(url);
    if let Some(key) = key {
        request = request.bearer_auth(key);
    }
    let r = request.send().await.unwrap();
    assert_eq!(r.status(), 200, "GET {url}");
    r.bytes().await.unwrap().to_vec()
}

/// Where the screenshots go: `target/site-screenshots/`.
fn screenshot_dir() -> PathBuf {
    // This test runs from target/<profile>/deps/.
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).expect("the target directory");
    let dir = target.join("site-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs headless Chromium on `url` with `args` and a fresh profile under `scratch`, and
/// returns what it printed. The browser runs in its own process group, which is killed
/// if it outlives [`BROWSER_TIMEOUT`].
async fn browser(scratch: &Path, args: &[&str], url: &str) -> String {
    std::fs::create_dir_all(scratch).unwrap();
    let profile = tempfile::tempdir_in(scratch).unwrap();
    let stdout = profile.path().with_extension("out");
    let stderr = profile.path().with_extension("err");
    let mut child = Command::new(CHROMIUM.require())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::from(File::create(&stdout).unwrap()))
        .stderr(Stdio::from(File::create(&stderr).unwrap()))
        .process_group(0)
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + BROWSER_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            // The browser's helpers are in its group: end them all, by the group's id.
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            panic!(
                "chromium did not finish in {BROWSER_TIMEOUT:?}: {}",
                std::fs::read_to_string(&stderr).unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        status.success(),
        "chromium failed ({status}): {}",
        std::fs::read_to_string(&stderr).unwrap_or_default()
    );
    std::fs::read_to_string(&stdout).unwrap()
}

/// `text` as an HTML serializer writes a text node.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\u{a0}', "&nbsp;")
}

/// An attribute value as the serializer wrote it, unescaped.
fn unescape(value: &str) -> String {
    value
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The opening tag around the first occurrence of `needle` (or starting with it).
fn opening_tag<'a>(dom: &'a str, needle: &str) -> &'a str {
    let at = dom
        .find(needle)
        .unwrap_or_else(|| panic!("no {needle} in the page:\n{dom}"));
    let start = if needle.starts_with('<') {
        at
    } else {
        dom[..at].rfind('<').unwrap()
    };
    let end = start + dom[start..].find('>').unwrap();
    &dom[start..=end]
}

/// The value of attribute `name` in an opening tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = start + tag[start..].find('"')?;
    Some(&tag[start..end])
}

/// Every text right after `marker` up to the next tag, in order.
fn texts(dom: &str, marker: &str) -> Vec<String> {
    dom.match_indices(marker)
        .map(|(at, _)| {
            let rest = &dom[at + marker.len()..];
            rest[..rest.find('<').unwrap()].to_owned()
        })
        .collect()
}

/// One asset card: its asset id, its title as serialized, its markup.
struct Card {
    id: String,
    title: String,
    html: String,
}

/// Every asset card, in page order.
fn cards(dom: &str) -> Vec<Card> {
    dom.split("<article ")
        .skip(1)
        .map(|chunk| {
            let html = &chunk[..chunk.find("</article>").expect("a closed card")];
            let tag = &html[..html.find('>').unwrap()];
            assert!(tag.contains(r#"data-role="asset""#), "{tag}");
            let id = attr(&format!(" {tag}"), "data-asset-id")
                .expect("data-asset-id")
                .to_owned();
            let title = texts(html, r#"data-role="asset-title">"#)
                .pop()
                .expect("a card title");
            Card {
                id,
                title,
                html: html.to_owned(),
            }
        })
        .collect()
}

/// The PDF, audio and video cards of the demo library show a thumbnail that loaded (a picture
/// of some width), with its placeholder behind it; audio and video cards show their playing
/// time; the video without a file shows its icon and no time.
fn previews_show_on_the_cards(cards: &[Card], example: &str) {
    for (kind, duration) in [
        ("pdf", None),
        ("audio", Some("0:04")),
        ("video", Some("0:02")),
    ] {
        let card = cards
            .iter()
            .find(|c| {
                c.html.contains(&format!(r#"data-asset-type="{kind}""#)) && c.html.contains("<img")
            })
            .unwrap_or_else(|| panic!("{example}: no {kind} card with a thumbnail"));
        let thumb = opening_tag(&card.html, r#"class="thumb""#);
        let loaded: u32 = attr(thumb, "data-loaded")
            .unwrap_or_else(|| panic!("{example}: the {kind} thumbnail did not load: {thumb}"))
            .parse()
            .expect("a width");
        assert!(loaded > 0, "{example}: {thumb}");
        assert!(
            thumb.contains(r#"data-placeholder="shown""#)
                && thumb.contains("background-image: url(&quot;data:image/png;base64,"),
            "{example}: no placeholder behind the {kind} thumbnail: {thumb}"
        );
        let shown = texts(&card.html, r#"data-role="duration">"#);
        assert_eq!(
            shown.first().map(String::as_str),
            duration,
            "{example}: {kind} {}",
            card.html
        );
    }
    let waiting = cards
        .iter()
        .find(|c| c.html.contains(r#"data-asset-type="video""#) && !c.html.contains("<img"))
        .unwrap_or_else(|| panic!("{example}: no video card without a file"));
    assert!(
        !waiting.html.contains(r#"data-role="duration""#),
        "{}",
        waiting.html
    );
}

/// Image and PDF cards ask for the `thumb` and `card` presets (`srcset`): the public logo and
/// brand guidelines (the PDF) load from a variant, the team photo (not public: no variant
/// without a key) from its thumbnail.
fn images_come_from_variants(cards: &[Card], example: &str) {
    let pdf = r#"data-asset-type="pdf""#;
    for (title, from_variant) in [
        ("Logo (full colour)", true),
        (pdf, true),
        ("Team photo 2026", false),
    ] {
        let card = cards
            .iter()
            .find(|c| c.title == title || (title == pdf && c.html.contains(pdf)))
            .unwrap_or_else(|| panic!("{example}: no card {title}"));
        let thumb = opening_tag(&card.html, r#"class="thumb""#);
        let img = opening_tag(&card.html, r#"data-role="thumbnail""#);
        let source = attr(thumb, "data-source")
            .map(unescape)
            .unwrap_or_else(|| panic!("{example}: {title} did not load: {thumb}"));
        let loaded: u32 = attr(thumb, "data-loaded")
            .and_then(|w| w.parse().ok())
            .unwrap_or(0);
        assert!(loaded > 0, "{example}: {title}: {thumb}");
        if from_variant {
            assert!(
                source.contains("/image?preset=thumb") || source.contains("/image?preset=card"),
                "{example}: {title} loaded {source}"
            );
            assert!(
                attr(img, "srcset").is_some_and(|s| s.contains("preset=card 640w")),
                "{example}: {title}: {img}"
            );
        } else {
            assert!(
                source.contains("/files/thumbnails/"),
                "{example}: {title} loaded {source}"
            );
            assert_eq!(
                attr(thumb, "data-variant"),
                Some("thumbnail"),
                "{example}: {thumb}"
            );
        }
    }
}

/// The demo library's cover names the team photo's `cover` preset: the photo is not public,
/// so the keyless presets of the `srcset` are refused and the page signs the preset with its
/// key. The signed variant is 1200 x 450 (its 1200 x 800 source fills no more of the
/// 1600 x 600 box; the browser's `naturalWidth` is that divided by the density the `srcset`
/// chose, so the test reads the picture itself).
async fn cover_comes_from_a_signed_variant(dom: &str, expected: &Expected, example: &str) {
    let team = expected
        .assets
        .iter()
        .find(|(_, title)| title == "Team photo 2026")
        .map(|(id, _)| id)
        .unwrap_or_else(|| panic!("{example}: no team photo in the library"));
    let cover = opening_tag(dom, r#"data-role="cover-image""#);
    assert_eq!(
        attr(cover, "data-variant"),
        Some("signed"),
        "{example}: {cover}"
    );
    let loaded: u32 = attr(cover, "data-loaded")
        .and_then(|w| w.parse().ok())
        .unwrap_or(0);
    assert!(loaded > 0, "{example}: {cover}");
    let source = attr(cover, "data-source").map(unescape).unwrap_or_default();
    assert!(
        source.contains(&format!("/api/v1/assets/{team}/image?")) && source.contains("signature="),
        "{example}: the cover loaded {source}"
    );
    let picture = fetch(&reqwest::Client::new(), &source, None).await;
    let picture = image::load_from_memory(&picture).expect("the cover decodes");
    assert_eq!(
        (picture.width(), picture.height()),
        (1200, 450),
        "{example}: {source}"
    );
}

/// The signed address of a card's download link, once the page has signed it.
fn download_href(card: &str) -> Option<String> {
    let at = card.find(r#"data-role="download""#)?;
    let start = card[..at].rfind('<')?;
    let tag = &card[start..start + card[start..].find('>')?];
    if !tag.contains(r#"data-signed="true""#) {
        return None;
    }
    attr(tag, "href").map(unescape)
}
