//! `GET /api/v1/assets`: the envelope, filters, sorting, parameter errors, clamping, pages
//! past the end, and walking every page over assets whose sort keys tie.

use std::collections::HashSet;

use assetlib::AssetType;
use chrono::{Duration, TimeZone, Utc};
use serde_json::{Value, json};

use crate::harness::Harness;
use crate::support::{Ctx, asset, ids};

pub(crate) async fn list_defaults_and_envelope<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let empty = ctx.get("/api/v1/assets").await;
    empty.assert(
        200,
        json!({"success": true, "data": [],
               "pagination": {"page": 1, "per_page": 20, "total": 0, "total_pages": 0}}),
    );
    // Newest first by default; 25 assets make two pages of 20.
    let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let mut made = Vec::new();
    for i in 0..25 {
        let a = ctx
            .insert(asset(
                &format!("Asset {i}"),
                AssetType::Pdf,
                start + Duration::minutes(i),
            ))
            .await;
        made.push(a.id.to_string());
    }
    made.reverse();
    let first = ctx.get("/api/v1/assets").await;
    assert_eq!(first.status, 200);
    assert_eq!(first.json["success"], true);
    assert_eq!(
        first.json["pagination"],
        json!({"page": 1, "per_page": 20, "total": 25, "total_pages": 2})
    );
    assert_eq!(ids(&first.json["data"]), made[..20]);
    let second = ctx.get("/api/v1/assets?page=2").await;
    assert_eq!(ids(&second.json["data"]), made[20..]);
    let asc = ctx
        .get("/api/v1/assets?order=asc&per_page=5&sort=created_at")
        .await;
    let oldest: Vec<String> = made.iter().rev().take(5).cloned().collect();
    assert_eq!(ids(&asc.json["data"]), oldest);
    // Leading zeros and unknown parameters are fine.
    let odd = ctx
        .get("/api/v1/assets?order=asc&per_page=005&colour=blue")
        .await;
    assert_eq!(ids(&odd.json["data"]), oldest);
}

pub(crate) async fn filter_by_type_and_search<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let at = Utc::now();
    let mut described = asset("Quarterly report", AssetType::Pdf, at);
    described.description = Some("Numbers for the BOARD".into());
    let report = ctx.insert(described).await.id.to_string();
    let logo = ctx
        .insert(asset("Logo", AssetType::Image, at))
        .await
        .id
        .to_string();
    let board = ctx
        .insert(asset("Boarding pass", AssetType::Image, at))
        .await
        .id
        .to_string();
    let mut video = asset("Board meeting", AssetType::ExternalVideo, at);
    video.external_url = Some("https://vimeo.com/1".into());
    let video = ctx.insert(video).await.id.to_string();

    let set = |v: &Value| ids(&v["data"]).into_iter().collect::<HashSet<_>>();
    let images = ctx.get("/api/v1/assets?asset_type=image").await;
    assert_eq!(
        set(&images.json),
        HashSet::from([logo.clone(), board.clone()])
    );
    assert_eq!(images.json["pagination"]["total"], 2);
    let pdfs = ctx.get("/api/v1/assets?asset_type=pdf").await;
    assert_eq!(set(&pdfs.json), HashSet::from([report.clone()]));
    let none = ctx.get("/api/v1/assets?asset_type=git").await;
    assert_eq!(none.json["pagination"]["total"], 0);

    // Case-insensitive substring of the title or the description.
    let search = ctx.get("/api/v1/assets?search=bOaRd").await;
    assert_eq!(
        set(&search.json),
        HashSet::from([report.clone(), board.clone(), video.clone()])
    );
    let both = ctx
        .get("/api/v1/assets?search=board&asset_type=image")
        .await;
    assert_eq!(set(&both.json), HashSet::from([board.clone()]));
    let encoded = ctx.get("/api/v1/assets?search=boarding+pass").await;
    assert_eq!(set(&encoded.json), HashSet::from([board.clone()]));
    let everything = ctx.get("/api/v1/assets?search=").await;
    assert_eq!(everything.json["pagination"]["total"], 4);
}

pub(crate) async fn sort_by_title_ignores_case_and_orders_both_ways<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let start = Utc::now();
    let mut by_title = Vec::new();
    for (i, title) in ["banana", "Apple", "cherry", "Éclair", "apricot"]
        .iter()
        .enumerate()
    {
        let a = ctx
            .insert(asset(
                title,
                AssetType::Document,
                start + Duration::seconds(i as i64),
            ))
            .await;
        by_title.push((title.to_lowercase(), a.id.to_string()));
    }
    by_title.sort();
    let expected: Vec<String> = by_title.into_iter().map(|(_, id)| id).collect();
    let asc = ctx.get("/api/v1/assets?sort=title&order=asc").await;
    assert_eq!(ids(&asc.json["data"]), expected);
    let desc = ctx.get("/api/v1/assets?sort=title&order=desc").await;
    let reversed: Vec<String> = expected.iter().rev().cloned().collect();
    assert_eq!(ids(&desc.json["data"]), reversed);
    let updated = ctx.get("/api/v1/assets?sort=updated_at&order=asc").await;
    assert_eq!(updated.json["data"][0]["title"], "banana");
}

pub(crate) async fn bad_list_parameters_name_the_parameter<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let filter_types = "pdf, document, image, video, audio, link, collection, git";
    let cases: Vec<(&str, &str, String)> = vec![
        (
            "per_page=0",
            "per_page",
            "per_page must be a positive integer".into(),
        ),
        (
            "per_page=-1",
            "per_page",
            "per_page must be a positive integer".into(),
        ),
        (
            "per_page=abc",
            "per_page",
            "per_page must be a positive integer".into(),
        ),
        (
            "per_page=1e3",
            "per_page",
            "per_page must be a positive integer".into(),
        ),
        (
            "per_page=",
            "per_page",
            "per_page must be a positive integer".into(),
        ),
        (
            "per_page=2.5",
            "per_page",
            "per_page must be a positive integer".into(),
        ),
        (
            "per_page=+5",
            "per_page",
            "per_page must be a positive integer".into(),
        ),
        ("page=0", "page", "page must be a positive integer".into()),
        ("page=-2", "page", "page must be a positive integer".into()),
        (
            "page=first",
            "page",
            "page must be a positive integer".into(),
        ),
        (
            "asset_type=external_video",
            "asset_type",
            format!("asset_type must be one of: {filter_types}"),
        ),
        (
            "asset_type=spreadsheet",
            "asset_type",
            format!("asset_type must be one of: {filter_types}"),
        ),
        (
            "sort=size",
            "sort",
            "sort must be one of: created_at, title, updated_at".into(),
        ),
        (
            "order=up",
            "order",
            "order must be one of: asc, desc".into(),
        ),
        (
            "page=1&page=2",
            "page",
            "page is given more than once".into(),
        ),
    ];
    for (query, field, message) in cases {
        let r = ctx.get(&format!("/api/v1/assets?{query}")).await;
        r.assert_invalid(field, &message);
    }
}

pub(crate) async fn per_page_is_clamped_and_reported<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let at = Utc::now();
    for i in 0..105 {
        ctx.insert(asset(&format!("A{i}"), AssetType::Video, at))
            .await;
    }
    for query in [
        "per_page=1000",
        "per_page=101",
        "per_page=99999999999999999999999",
    ] {
        let r = ctx.get(&format!("/api/v1/assets?{query}")).await;
        assert_eq!(r.status, 200, "{query}");
        assert_eq!(
            r.json["pagination"],
            json!({"page": 1, "per_page": 100, "total": 105, "total_pages": 2}),
            "{query}"
        );
        assert_eq!(r.json["data"].as_array().unwrap().len(), 100, "{query}");
    }
    let r = ctx.get("/api/v1/assets?per_page=1000&page=2").await;
    assert_eq!(r.json["data"].as_array().unwrap().len(), 5);
}

pub(crate) async fn page_past_the_end_is_empty<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    for i in 0..3 {
        ctx.asset_id(&format!("A{i}"), "pdf").await;
    }
    for page in [
        "2",
        "3",
        "1000",
        "18446744073709551615",
        "99999999999999999999999",
    ] {
        let r = ctx
            .get(&format!("/api/v1/assets?per_page=3&page={page}"))
            .await;
        assert_eq!(r.status, 200, "page {page}");
        assert_eq!(r.json["data"], json!([]), "page {page}");
        assert_eq!(r.json["pagination"]["total"], 3);
        assert_eq!(r.json["pagination"]["total_pages"], 1);
    }
}

pub(crate) async fn walking_pages_over_tied_assets_never_repeats_or_misses<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let at = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
    let mut all = HashSet::new();
    for _ in 0..250 {
        // Equal created_at, updated_at and title: only the id tells them apart.
        let a = ctx.insert(asset("Same title", AssetType::Image, at)).await;
        all.insert(a.id.to_string());
    }
    for sort in ["created_at", "title", "updated_at"] {
        for order in ["asc", "desc"] {
            for per_page in [7u64, 100] {
                let mut seen = Vec::new();
                let pages = 250u64.div_ceil(per_page);
                for page in 1..=pages + 1 {
                    let q = format!("sort={sort}&order={order}&per_page={per_page}&page={page}");
                    let r = ctx.get(&format!("/api/v1/assets?{q}")).await;
                    assert_eq!(r.status, 200, "{q}");
                    assert_eq!(
                        r.json["pagination"],
                        json!({"page": page, "per_page": per_page, "total": 250,
                               "total_pages": pages}),
                        "{q}"
                    );
                    let got = ids(&r.json["data"]);
                    let want = if page <= pages {
                        per_page.min(250 - (page - 1) * per_page)
                    } else {
                        0
                    };
                    assert_eq!(got.len() as u64, want, "{q}");
                    seen.extend(got);
                }
                let unique: HashSet<String> = seen.iter().cloned().collect();
                assert_eq!(
                    unique.len(),
                    seen.len(),
                    "repeats: {sort} {order} {per_page}"
                );
                assert_eq!(unique, all, "missed: {sort} {order} {per_page}");
                // The two directions are mirror images.
                if order == "asc" && per_page == 100 {
                    let desc = walk(&ctx, sort, "desc").await;
                    let mut reversed = seen.clone();
                    reversed.reverse();
                    assert_eq!(desc, reversed, "{sort}");
                }
            }
        }
    }
}

async fn walk(ctx: &Ctx, sort: &str, order: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for page in 1..=3 {
        let r = ctx
            .get(&format!(
                "/api/v1/assets?sort={sort}&order={order}&per_page=100&page={page}"
            ))
            .await;
        seen.extend(ids(&r.json["data"]));
    }
    seen
}

/// A kept list page outlives the writes that leave it as it is where the store keeps list
/// versions (sled), is rendered again after a write of one of its assets or of its order,
/// and, under concurrent writes, never answers with a page older than the writes that
/// returned before it was asked for.
pub(crate) async fn a_kept_list_page_outlives_writes_that_leave_it_as_it_is<H: Harness>() {
    let ctx = Ctx::start::<H>().await;
    let query = assetlib::AssetQuery {
        sort: assetlib::AssetSort::Title,
        order: assetlib::SortOrder::Asc,
        per_page: 2,
        ..assetlib::AssetQuery::default()
    };
    let path = "/api/v1/assets?sort=title&order=asc&per_page=2";
    let a = ctx.asset_id("Alpha", "pdf").await;
    let b = ctx.asset_id("Beta", "pdf").await;
    // The stores keep an asset's version per group of assets (4,096 by the id's low bits):
    // the asset off the page must not share a group with those on it.
    let group = |id: &str| id.parse::<uuid::Uuid>().map_or(0, |u| u.as_u128() % 4096);
    let mut off = ctx.asset_id("Zulu", "pdf").await;
    while group(&off) == group(&a) || group(&off) == group(&b) {
        off = ctx.asset_id("Zulu", "pdf").await;
    }
    let page = |expected: [(&'static str, &'static str); 2]| {
        let ctx = &ctx;
        async move {
            let r = ctx.get(path).await;
            assert_eq!(r.status, 200, "{}", r.json);
            let got: Vec<(String, String)> = r.json["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    let field = |k: &str| a[k].as_str().unwrap_or("").to_owned();
                    (field("title"), field("description"))
                })
                .collect();
            let expected: Vec<(String, String)> = expected
                .iter()
                .map(|(t, d)| ((*t).to_owned(), (*d).to_owned()))
                .collect();
            assert_eq!(got, expected);
        }
    };
    let patch = |id: String, body: serde_json::Value| {
        let ctx = &ctx;
        async move {
            let path = format!("/api/v1/assets/{id}");
            let r = ctx
                .send_json(reqwest::Method::PATCH, &path, Some(&ctx.admin), &body)
                .await;
            assert_eq!(r.status, 200, "{}", r.json);
        }
    };
    let hits = || ctx.service.cache_stats().lists.hits;
    let keeps_lists = ctx
        .service
        .store()
        .list_version(&query)
        .await
        .unwrap()
        .is_some();

    page([("Alpha", ""), ("Beta", "")]).await;
    page([("Alpha", ""), ("Beta", "")]).await;
    let kept = hits();
    assert!(kept >= 1, "the second read is kept");
    patch(off.clone(), json!({"description": "off the page"})).await;
    page([("Alpha", ""), ("Beta", "")]).await;
    if keeps_lists {
        assert_eq!(hits(), kept + 1, "a write off the page leaves it kept");
    }
    patch(b.clone(), json!({"description": "on the page"})).await;
    page([("Alpha", ""), ("Beta", "on the page")]).await;
    patch(a.clone(), json!({"title": "Omega"})).await;
    page([("Beta", "on the page"), ("Omega", "")]).await;
    patch(off.clone(), json!({"title": "Aardvark"})).await;
    page([("Aardvark", "off the page"), ("Beta", "on the page")]).await;

    // Under load: writers change descriptions and titles while readers read the pages;
    // once the writers are done, every page is the store's.
    let ids = [a, b, off];
    let writers = (0..4).map(|w| {
        let ids = ids.clone();
        let ctx = &ctx;
        async move {
            for round in 0..25 {
                let id = &ids[(w + round) % ids.len()];
                let body = if round % 5 == 0 {
                    json!({"title": format!("T{w} {round}")})
                } else {
                    json!({"description": format!("D{w} {round}")})
                };
                let r = ctx
                    .send_json(
                        reqwest::Method::PATCH,
                        &format!("/api/v1/assets/{id}"),
                        Some(&ctx.admin),
                        &body,
                    )
                    .await;
                assert_eq!(r.status, 200, "{}", r.json);
            }
        }
    });
    let readers = (0..4).map(|_| {
        let ctx = &ctx;
        async move {
            let mut statuses = std::collections::BTreeMap::new();
            for _ in 0..50 {
                *statuses.entry(ctx.get(path).await.status).or_insert(0) += 1;
            }
            statuses
        }
    });
    let (_, reads) = tokio::join!(
        futures_util::future::join_all(writers),
        futures_util::future::join_all(readers)
    );
    let answered: u32 = reads.iter().flat_map(|s| s.get(&200)).sum();
    assert_eq!(answered, 200, "every read is 200: {reads:?}");
    for page_no in 1..=2 {
        let mut q = query.clone();
        q.page = page_no;
        let stored = ctx.service.store().list_assets(&q).await.unwrap();
        let r = ctx.get(&format!("{path}&page={page_no}")).await;
        let shown: Vec<(String, Option<String>)> = r.json["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                let d = a["description"].as_str().map(str::to_owned);
                (a["title"].as_str().unwrap_or("").to_owned(), d)
            })
            .collect();
        let want: Vec<(String, Option<String>)> = stored
            .items
            .iter()
            .map(|a| (a.title.clone(), a.description.clone()))
            .collect();
        assert_eq!(shown, want, "page {page_no} after the writes");
    }
}
