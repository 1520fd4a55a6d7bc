//! Search (DESIGN.md §6 "Search"): `GET /api/v1/search` ranks hits over titles, tags,
//! descriptions and the text inside files, with `<mark>`ed snippets and the page of each
//! match; shows drafts and paid text only to the scopes that open them; filters and pages;
//! follows every write at once; and refuses what it cannot read with 400 naming the
//! parameter. On a store that stems in a language, every form of a word finds the others and
//! the snippets mark the words as they are written.

use assetlib::Scope;
use assetlib::extract::samples;
use reqwest::Method;
use serde_json::{Value, json};

use crate::files::{form, upload};
use crate::harness::Harness;
use crate::support::{Ctx, Resp, id_of};

/// `GET /api/v1/search?{query}` with `key`.
async fn search(ctx: &Ctx, key: &str, query: &str) -> Resp {
    ctx.get_as(&format!("/api/v1/search?{query}"), Some(key))
        .await
}

/// The titles of the hits of `query` (admin key), best first, checking the answer's shape.
async fn titles(ctx: &Ctx, query: &str) -> Vec<String> {
    titles_as(ctx, &ctx.admin, query).await
}

async fn titles_as(ctx: &Ctx, key: &str, query: &str) -> Vec<String> {
    let r = search(ctx, key, query).await;
    assert_eq!(r.status, 200, "{query}: {}", r.json);
    let hits = r.json["data"].as_array().expect("data");
    assert_eq!(
        r.json["pagination"]["total"].as_u64(),
        Some(hits.len() as u64).filter(|_| hits.len() < 20),
        "{query}: {}",
        r.json
    );
    hits.iter()
        .map(|h| h["asset"]["title"].as_str().expect("title").to_owned())
        .collect()
}

/// Uploads `bytes` as `name` titled `title` (admin key); answers the asset.
async fn upload_file(ctx: &Ctx, name: &str, bytes: &[u8], title: &str) -> Value {
    let r = upload(ctx, form(&[("title", title)], Some((name, bytes)))).await;
    assert_eq!(r.status, 201, "{name}: {}", r.json);
    r.json["data"].clone()
}

fn a_match(field: &str, page: Option<u64>, snippet: &str) -> Value {
    json!({"field": field, "page": page, "snippet": snippet})
}

pub(crate) async fn hits_rank_by_field_with_snippets_and_pages<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    // Five sample words a page: "photo" is on page 2 only, "asset" on pages 1 and 3.
    upload_file(&ctx, "report.pdf", &samples::pdf(3, 5), "Annual report").await;
    upload_file(
        &ctx,
        "notes.txt",
        b"The photo of the harbour at dawn, <raw> & all.",
        "Field notes",
    )
    .await;
    ctx.create_asset(json!({"title": "Photo guide", "asset_type": "link",
        "external_url": "https://example.com/guide", "tags": ["Harbour"]}))
        .await;

    let r = search(&ctx, &ctx.admin, "q=photo").await;
    assert_eq!(r.status, 200, "{}", r.json);
    let hits = r.json["data"].as_array().expect("data");
    let summary: Vec<(&str, u64)> = hits
        .iter()
        .map(|h| {
            (
                h["asset"]["title"].as_str().expect("title"),
                h["score"].as_u64().expect("score"),
            )
        })
        .collect();
    // A title beats text; equal scores rank newest first.
    assert_eq!(
        summary,
        [("Photo guide", 8), ("Field notes", 1), ("Annual report", 1)]
    );
    assert_eq!(
        hits[0]["matches"],
        json!([a_match("title", None, "<mark>Photo</mark> guide")])
    );
    assert_eq!(
        hits[1]["matches"],
        json!([a_match(
            "content",
            None,
            "The <mark>photo</mark> of the harbour at dawn, &lt;raw&gt; &amp; all."
        )])
    );
    assert_eq!(
        hits[2]["matches"],
        json!([a_match(
            "content",
            Some(2),
            "logo colour print screen <mark>photo</mark>"
        )])
    );
    assert_eq!(hits[2]["asset"]["asset_type"], "pdf");
    assert_eq!(
        r.json["pagination"],
        json!({"page": 1, "per_page": 20, "total": 3, "total_pages": 1})
    );

    // Every page of a file where a term occurs, lowest first.
    let r = search(&ctx, &ctx.admin, "q=asset").await;
    let pages: Vec<&Value> = r.json["data"][0]["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .map(|m| &m["page"])
        .collect();
    assert_eq!(pages, [&json!(1), &json!(3)], "{}", r.json);

    // The language: the last word as a prefix, phrases, exclusions, OR, case and accents.
    assert_eq!(titles(&ctx, "q=PHÓT").await, titles(&ctx, "q=photo").await);
    assert_eq!(
        titles(&ctx, "q=%22print+screen%22").await,
        ["Annual report"]
    );
    assert_eq!(
        titles(&ctx, "q=%22screen+print%22").await,
        Vec::<String>::new()
    );
    assert_eq!(
        titles(&ctx, "q=photo+-harbour").await,
        ["Annual report"],
        "a tag and the text both leave out"
    );
    assert_eq!(
        titles(&ctx, "q=dawn+OR+layout").await,
        ["Field notes", "Annual report"]
    );
    assert_eq!(
        titles(&ctx, "q=harbour").await,
        ["Photo guide", "Field notes"],
        "a tag (4) beats the text (1)"
    );
}

pub(crate) async fn slides_and_web_pages_are_searched_by_slide<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let slides = ["Welcome", "Quarterly revenue grew", "Revenue by region"];
    upload_file(&ctx, "deck.pptx", &samples::pptx(&slides), "Board deck").await;
    upload_file(&ctx, "deck.odp", &samples::odp(&slides), "Team deck").await;
    let page = b"<html><head><style>.revenue{}</style></head><body>\
        <p>Our revenue&nbsp;report</p></body></html>";
    let html = upload_file(&ctx, "report.html", page, "Web report").await;
    assert_eq!(
        (html["asset_type"].as_str(), html["word_count"].as_u64()),
        (Some("document"), Some(3))
    );

    let r = search(&ctx, &ctx.admin, "q=revenue").await;
    assert_eq!(r.status, 200, "{}", r.json);
    let hits: Vec<(&str, &Value)> = r.json["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|h| (h["asset"]["title"].as_str().expect("title"), &h["matches"]))
        .collect();
    let slide_matches = json!([
        a_match("content", Some(2), "Quarterly <mark>revenue</mark> grew"),
        a_match("content", Some(3), "<mark>Revenue</mark> by region"),
    ]);
    assert_eq!(
        hits,
        [
            (
                "Web report",
                &json!([a_match("content", None, "Our <mark>revenue</mark> report")])
            ),
            ("Team deck", &slide_matches),
            ("Board deck", &slide_matches),
        ],
        "a slide's page is its number; a style sheet is not text"
    );
    // Speaker notes are not text of the deck.
    assert_eq!(titles(&ctx, "q=speaker").await, Vec::<String>::new());
}

pub(crate) async fn drafts_and_paid_text_need_their_scopes<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let reader = ctx.key(&[Scope::ReadAssets]).await;
    let buyer = ctx.key(&[Scope::ReadAssets, Scope::ReadPaid]).await;
    ctx.create_asset(json!({"title": "Secret plan", "asset_type": "link",
        "external_url": "https://example.com/plan", "published": false}))
        .await;
    assert_eq!(
        titles_as(&ctx, &reader, "q=secret").await,
        Vec::<String>::new()
    );
    assert_eq!(titles(&ctx, "q=secret").await, ["Secret plan"]);

    let priced = upload_file(
        &ctx,
        "prices.txt",
        b"Wholesale tariffs for 2027",
        "Price list",
    )
    .await;
    let library = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Trade kit", "is_paid": true, "price": 49,
        "unsectioned_assets": [{"asset_id": id_of(&priced)}]});
    let r = ctx.put_library(&library, &doc).await;
    assert_eq!(r.status, 201, "{}", r.json);
    // Without `read:paid` the text of a paid file is not searched; its title still is.
    assert_eq!(
        titles_as(&ctx, &reader, "q=tariffs").await,
        Vec::<String>::new()
    );
    let r = search(&ctx, &reader, "q=price").await;
    assert_eq!(
        r.json["data"][0]["matches"],
        json!([a_match("title", None, "<mark>Price</mark> list")]),
        "{}",
        r.json
    );
    let r = search(&ctx, &buyer, "q=tariffs").await;
    assert_eq!(
        r.json["data"][0]["matches"],
        json!([a_match(
            "content",
            None,
            "Wholesale <mark>tariffs</mark> for 2027"
        )]),
        "{}",
        r.json
    );
    // A public asset's file is never paid.
    let r = ctx
        .send_json(
            Method::PATCH,
            &format!("/api/v1/assets/{}", id_of(&priced)),
            Some(&ctx.admin),
            &json!({"is_public": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(titles_as(&ctx, &reader, "q=tariffs").await, ["Price list"]);
}

pub(crate) async fn search_filters_and_pages<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let mut ids = Vec::new();
    for n in 0..5 {
        let tags = if n % 2 == 0 {
            json!(["Blue"])
        } else {
            json!([])
        };
        let made = ctx
            .create_asset(
                json!({"title": format!("Kit item {n}"), "asset_type": "link",
                "external_url": "https://example.com/", "tags": tags}),
            )
            .await;
        ids.push(id_of(&made));
    }
    let packing = upload_file(&ctx, "kit.txt", b"what the kit holds", "Packing list").await;

    // Pages of two never repeat or skip a hit.
    let mut seen = Vec::new();
    for page in 1..=4 {
        let r = search(&ctx, &ctx.admin, &format!("q=kit&per_page=2&page={page}")).await;
        assert_eq!(r.status, 200, "{}", r.json);
        assert_eq!(r.json["pagination"]["total"], 6);
        assert_eq!(r.json["pagination"]["total_pages"], 3);
        for hit in r.json["data"].as_array().expect("data") {
            seen.push(id_of(&hit["asset"]));
        }
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!((seen.len(), unique.len()), (6, 6));

    assert_eq!(
        titles(&ctx, "q=kit&asset_type=document").await,
        ["Packing list"]
    );
    assert_eq!(
        titles(&ctx, "q=kit&tag=+BLUE+").await,
        ["Kit item 4", "Kit item 2", "Kit item 0"]
    );
    let library = uuid::Uuid::new_v4().to_string();
    let doc = json!({"title": "Kit", "unsectioned_assets": [{"asset_id": id_of(&packing)}]});
    let r = ctx.put_library(&library, &doc).await;
    assert_eq!(r.status, 201, "{}", r.json);
    assert_eq!(
        titles(&ctx, &format!("q=kit&library_id={library}")).await,
        ["Packing list"]
    );
    assert_eq!(
        titles(&ctx, &format!("q=kit&library_id={}", uuid::Uuid::new_v4())).await,
        Vec::<String>::new()
    );
}

pub(crate) async fn every_answered_write_is_found_by_the_next_search<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let made = upload_file(&ctx, "a.txt", b"first draft of the lighthouse log", "Log").await;
    let id = id_of(&made);
    assert_eq!(titles(&ctx, "q=lighthouse").await, ["Log"]);

    let path = format!("/api/v1/assets/{id}");
    let r = ctx
        .send_json(
            Method::PATCH,
            &path,
            Some(&ctx.admin),
            &json!({"title": "Keeper's journal", "description": "Storm season"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(titles(&ctx, "q=journal+storm").await, ["Keeper's journal"]);
    assert_eq!(
        titles(&ctx, "q=log+-lighthouse").await,
        Vec::<String>::new()
    );

    // A new file's text replaces the old one's.
    let replace = ctx
        .request(Method::PUT, &format!("{path}/file"), Some(&ctx.admin))
        .header(
            "content-type",
            format!("multipart/form-data; boundary={}", crate::files::BOUNDARY),
        )
        .body(form(
            &[],
            Some(("b.txt", b"second version about the foghorn")),
        ));
    let r = Resp::from(replace).await;
    assert_eq!(r.status, 200, "{}", r.json);
    assert_eq!(titles(&ctx, "q=foghorn").await, ["Keeper's journal"]);
    assert_eq!(titles(&ctx, "q=lighthouse").await, Vec::<String>::new());

    let r = ctx
        .request(Method::DELETE, &path, Some(&ctx.admin))
        .send()
        .await;
    assert_eq!(r.expect("delete").status(), 204);
    assert_eq!(titles(&ctx, "q=foghorn").await, Vec::<String>::new());
    assert_eq!(titles(&ctx, "q=journal").await, Vec::<String>::new());
}

pub(crate) async fn bad_searches_are_400_naming_the_parameter<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let long = "a".repeat(501);
    for (query, field) in [
        ("", "q"),
        ("q=", "q"),
        ("q=%21%3F", "q"),
        ("q=-draft", "q"),
        (&*format!("q={long}"), "q"),
        ("q=a&q=b", "q"),
        ("q=a&library_id=nope", "library_id"),
        ("q=a&asset_type=video_game", "asset_type"),
        ("q=a&workspace_id=no%20spaces", "workspace_id"),
        ("q=a&tag=a%2Cb", "tag"),
        ("q=a&page=0", "page"),
        ("q=a&per_page=x", "per_page"),
    ] {
        let r = search(&ctx, &ctx.admin, query).await;
        assert_eq!(r.status, 400, "{query}: {}", r.json);
        assert_eq!(r.json["field"], field, "{query}: {}", r.json);
    }
}

/// Over a store set to English (`SledConfig::search_language`): every form of a word finds
/// the others in each field, phrases match stem by stem, exclusions leave out every form,
/// the snippets mark the words as written; the list's `search=` stays a substring.
pub(crate) async fn stemmed_searches_find_every_form_of_a_word<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let notes = b"The committee approved the budgets. Running late again.";
    upload_file(&ctx, "notes.txt", notes, "Field notes").await;
    ctx.create_asset(json!({"title": "Runs and runners", "asset_type": "link",
        "external_url": "https://example.com/runs", "tags": ["Libraries"],
        "description": "Reporting on trails"}))
        .await;

    let r = search(&ctx, &ctx.admin, "q=running").await;
    assert_eq!(r.status, 200, "{}", r.json);
    let hits: Vec<(&str, u64, &Value)> = r.json["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|h| {
            let title = h["asset"]["title"].as_str().expect("title");
            (title, h["score"].as_u64().expect("score"), &h["matches"])
        })
        .collect();
    assert_eq!(
        hits,
        [
            (
                "Runs and runners",
                8,
                &json!([a_match(
                    "title",
                    None,
                    "<mark>Runs</mark> and <mark>runners</mark>"
                )])
            ),
            (
                "Field notes",
                1,
                &json!([a_match(
                    "content",
                    None,
                    "The committee approved the budgets. <mark>Running</mark> late again."
                )])
            ),
        ],
        "the last word is the beginning of a stem (run: runs, runner, running)"
    );
    let r = search(&ctx, &ctx.admin, "q=approving+budget").await;
    assert_eq!(
        r.json["data"][0]["matches"],
        json!([a_match(
            "content",
            None,
            "The committee <mark>approved</mark> the <mark>budgets</mark>. Running late again."
        )]),
        "{}",
        r.json
    );
    assert_eq!(
        titles(&ctx, "q=%22approve+the+budget%22").await,
        ["Field notes"],
        "a phrase, stem by stem"
    );
    assert_eq!(
        titles(&ctx, "q=%22budget+the+approve%22").await,
        Vec::<String>::new()
    );
    let r = search(&ctx, &ctx.admin, "q=library+reports").await;
    assert_eq!(
        r.json["data"][0]["matches"],
        json!([
            a_match("description", None, "<mark>Reporting</mark> on trails"),
            a_match("tags", None, "<mark>Libraries</mark>"),
        ]),
        "{}",
        r.json
    );
    assert_eq!(r.json["data"][0]["score"], 6);
    assert_eq!(
        titles(&ctx, "q=run+-approval").await,
        ["Runs and runners"],
        "an excluded word leaves out every form of it"
    );
    assert_eq!(
        titles(&ctx, "q=runni").await,
        Vec::<String>::new(),
        "a word typed halfway is its own stem"
    );

    // The list's `search=` is a substring of the title or description, never stemmed.
    let listed = |needle: &'static str| {
        let ctx = &ctx;
        async move {
            let r = ctx
                .get_as(&format!("/api/v1/assets?search={needle}"), Some(&ctx.admin))
                .await;
            assert_eq!(r.status, 200, "{}", r.json);
            r.json["pagination"]["total"].as_u64()
        }
    };
    assert_eq!(listed("running").await, Some(0));
    assert_eq!(listed("Runs").await, Some(1));
}
