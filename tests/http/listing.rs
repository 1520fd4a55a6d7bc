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
