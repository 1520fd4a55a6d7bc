use super::*;
use crate::model::{AssetType, EntryAsset, Library, LibraryEntry, LibrarySettings};
use chrono::{TimeZone, Utc};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::HashMap;

fn library() -> Library {
    let at = Utc.with_ymd_and_hms(2026, 3, 4, 5, 6, 7).unwrap();
    Library {
        id: Uuid::from_u128(1),
        settings: LibrarySettings {
            title: "Brand kit".into(),
            description: None,
            workspace_id: Some("ws".into()),
            cover_image_path: Some("/covers/a.png".into()),
            cover_overlay_color: Some("#1A2B3C".into()),
            cover_overlay_opacity: Some(0.4),
            show_asset_count: true,
            allow_individual_downloads: true,
            allow_bulk_download: false,
            is_paid: false,
            price: None,
            currency: "USD".into(),
            published: true,
        },
        slug: "brand-kit".into(),
        published_at: Some(at),
        view_count: 7,
        created_at: at,
        updated_at: at,
    }
}

fn section(n: u128, order: u32) -> Section {
    Section {
        id: Uuid::from_u128(n),
        title: format!("Section {n}"),
        description: None,
        display_order: order,
        collapsed_by_default: n.is_multiple_of(2),
    }
}

fn row(asset: u128, section: Option<u128>, order: u32) -> EntryRow {
    EntryRow {
        entry: LibraryEntry {
            asset_id: Uuid::from_u128(asset),
            section_id: section.map(Uuid::from_u128),
            display_order: order,
            title: None,
            description: None,
        },
        asset: EntryAsset {
            title: format!("Asset {asset}"),
            description: Some(format!("About {asset}")),
            asset_type: AssetType::Pdf,
            thumbnail_path: None,
            thumbnail_placeholder: None,
            duration_ms: None,
            published: true,
            tags: vec!["tag".into()],
        },
    }
}

fn to_json(rows: &LibraryRows, include: bool) -> Value {
    serde_json::to_value(assemble(rows, include, "/files/")).unwrap()
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect()
}

fn uuid(n: u128) -> String {
    Uuid::from_u128(n).to_string()
}

#[test]
fn orders_sections_and_assets_and_keeps_unsectioned_full() {
    let rows = LibraryRows {
        library: library(),
        sections: vec![section(20, 1), section(10, 0)],
        entries: vec![
            row(103, Some(20), 0),
            row(102, Some(10), 5),
            row(101, Some(10), 2),
            row(105, None, 1),
            row(104, None, 0),
        ],
    };
    let v = to_json(&rows, true);
    assert_eq!(ids(&v["sections"]), [uuid(10), uuid(20)]);
    assert_eq!(ids(&v["sections"][0]["assets"]), [uuid(101), uuid(102)]);
    assert_eq!(ids(&v["sections"][1]["assets"]), [uuid(103)]);
    assert_eq!(ids(&v["unsectioned_assets"]), [uuid(104), uuid(105)]);
    assert!(v["sections"][0].get("asset_count").is_none());
    assert!(v.get("asset_count").is_none(), "no asset_count at the root");

    let v = to_json(&rows, false);
    assert_eq!(v["sections"][0]["asset_count"], 2);
    assert_eq!(v["sections"][1]["asset_count"], 1);
    assert!(v["sections"][0].get("assets").is_none());
    assert_eq!(
        ids(&v["unsectioned_assets"]),
        [uuid(104), uuid(105)],
        "always full objects"
    );
}

#[test]
fn whole_detail_shape() {
    let mut r = row(101, Some(10), 0);
    r.entry.title = Some("Custom title".into());
    r.asset.thumbnail_path = Some("thumbnails/101.png".into());
    r.asset.thumbnail_placeholder = Some("1QcSHQRnh493V4dIh4eXh1h4kJUI".into());
    let mut u = row(102, None, 0);
    u.entry.description = Some("Custom description".into());
    u.asset.asset_type = AssetType::Audio;
    u.asset.duration_ms = Some(83_050);
    let rows = LibraryRows {
        library: library(),
        sections: vec![section(10, 0)],
        entries: vec![r, u],
    };
    let v = to_json(&rows, true);
    assert_eq!(
        v,
        json!({
            "id": uuid(1), "title": "Brand kit", "slug": "brand-kit", "description": null,
            "cover_image_path": "/covers/a.png", "cover_overlay_color": "#1A2B3C",
            "cover_overlay_opacity": 0.4, "published_at": "2026-03-04T05:06:07.000Z",
            "is_paid": false, "price": null, "currency": "USD", "show_asset_count": true,
            "allow_individual_downloads": true, "allow_bulk_download": false, "view_count": 7,
            "created_at": "2026-03-04T05:06:07.000Z", "updated_at": "2026-03-04T05:06:07.000Z",
            "workspace_id": "ws",
            "sections": [{
                "id": uuid(10), "title": "Section 10", "description": null, "display_order": 0,
                "collapsed_by_default": true,
                "assets": [{"id": uuid(101), "title": "Custom title", "description": "About 101",
                    "asset_type": "pdf", "thumbnail_url": "/files/thumbnails/101.png",
                    "thumbnail_placeholder": "1QcSHQRnh493V4dIh4eXh1h4kJUI",
                    "duration_seconds": null, "tags": ["tag"], "display_order": 0}]
            }],
            "unsectioned_assets": [{"id": uuid(102), "title": "Asset 102",
                "description": "Custom description", "asset_type": "audio",
                "thumbnail_url": null, "thumbnail_placeholder": null, "duration_seconds": 83.05,
                "tags": ["tag"], "display_order": 0}]
        })
    );
}

#[test]
fn unpublished_and_orphaned_entries_are_left_out_and_not_counted() {
    let mut hidden = row(102, Some(10), 1);
    hidden.asset.published = false;
    let mut hidden_unsectioned = row(104, None, 0);
    hidden_unsectioned.asset.published = false;
    let rows = LibraryRows {
        library: library(),
        sections: vec![section(10, 0)],
        entries: vec![
            row(101, Some(10), 0),
            hidden,
            row(103, Some(99), 0),
            hidden_unsectioned,
        ],
    };
    let detail = assemble(&rows, false, "/files/");
    assert_eq!(detail.asset_count(), 1);
    let v = to_json(&rows, false);
    assert_eq!(v["sections"][0]["asset_count"], 1);
    assert_eq!(v["unsectioned_assets"], json!([]));
    let v = to_json(&rows, true);
    assert_eq!(ids(&v["sections"][0]["assets"]), [uuid(101)]);
}

#[test]
fn empty_library() {
    let rows = LibraryRows {
        library: library(),
        sections: vec![],
        entries: vec![],
    };
    let v = to_json(&rows, true);
    assert_eq!(v["sections"], json!([]));
    assert_eq!(v["unsectioned_assets"], json!([]));
}

#[test]
fn file_urls_join_with_one_slash() {
    assert_eq!(
        FileUrl("/files/", "thumbnails/a.png").to_string(),
        "/files/thumbnails/a.png"
    );
    assert_eq!(
        FileUrl("/files", "/thumbnails/a.png").to_string(),
        "/files/thumbnails/a.png"
    );
    assert_eq!(
        FileUrl("https://cdn.example.com/f/", "t/a b.png").to_string(),
        "https://cdn.example.com/f/t/a b.png"
    );
}

#[test]
fn strings_needing_escapes_survive() {
    let mut r = row(101, None, 0);
    r.entry.title = Some("Quote \" backslash \\ newline \n tab \t ünï 漢字 \u{1F600}".into());
    let rows = LibraryRows {
        library: library(),
        sections: vec![],
        entries: vec![r.clone()],
    };
    let v = to_json(&rows, true);
    assert_eq!(v["unsectioned_assets"][0]["title"], r.entry.title.unwrap());
}

#[derive(Debug, Clone)]
struct Case {
    sections: Vec<Section>,
    entries: Vec<EntryRow>,
}

/// Random libraries: up to 8 sections and 60 entries with colliding display orders, some
/// unsectioned, some unpublished, some with overrides, all shuffled.
fn case() -> impl Strategy<Value = Case> {
    (0usize..8, 0usize..60).prop_flat_map(|(n_sections, n_entries)| {
        let sections = proptest::collection::vec(0u32..5, n_sections);
        let entries = proptest::collection::vec(
            (
                proptest::option::of(0..n_sections.max(1)),
                0u32..6,
                any::<bool>(),
                proptest::option::of("[a-zA-Zé \"\\\\]{0,8}"),
                proptest::option::of("[a-z]{0,5}"),
            ),
            n_entries,
        );
        (sections, entries, any::<u64>()).prop_map(move |(orders, raw, seed)| {
            let sections: Vec<Section> = orders
                .iter()
                .enumerate()
                .map(|(i, o)| section(1000 + i as u128, *o))
                .collect();
            let mut entries: Vec<EntryRow> = raw
                .into_iter()
                .enumerate()
                .map(|(i, (s, order, published, title, description))| {
                    let section_id = s.filter(|_| !sections.is_empty()).map(|s| 1000 + s as u128);
                    let mut r = row(i as u128 + 1, section_id, order);
                    r.asset.published = published || i % 3 == 0;
                    r.entry.title = title;
                    r.entry.description = description;
                    r
                })
                .collect();
            // Deterministic shuffle from the seed.
            let mut state = seed | 1;
            for i in (1..entries.len()).rev() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                entries.swap(i, (state % (i as u64 + 1)) as usize);
            }
            Case { sections, entries }
        })
    })
}

proptest! {
    #[test]
    fn tree_is_sorted_complete_counted_and_overridden(c in case(), include in any::<bool>()) {
        let rows = LibraryRows { library: library(), sections: c.sections.clone(), entries: c.entries.clone() };
        let v = to_json(&rows, include);
        let by_id: HashMap<String, &EntryRow> =
            c.entries.iter().map(|r| (r.entry.asset_id.to_string(), r)).collect();

        // Sections sorted by (display_order, id), each once.
        let out_sections = v["sections"].as_array().unwrap();
        prop_assert_eq!(out_sections.len(), c.sections.len());
        let keys: Vec<(u64, String)> = out_sections.iter()
            .map(|s| (s["display_order"].as_u64().unwrap(), s["id"].as_str().unwrap().to_owned()))
            .collect();
        let mut sorted = keys.clone();
        sorted.sort();
        prop_assert_eq!(&keys, &sorted);

        let check_assets = |list: &Value, section: Option<&str>| -> Result<Vec<String>, TestCaseError> {
            let list = list.as_array().unwrap();
            let mut seen = Vec::new();
            let mut last: Option<(u64, String)> = None;
            for a in list {
                let id = a["id"].as_str().unwrap().to_owned();
                let r = by_id[&id];
                prop_assert!(r.asset.published);
                let entry_section = r.entry.section_id.map(|s| s.to_string());
                prop_assert_eq!(entry_section.as_deref(), section);
                prop_assert_eq!(a["title"].as_str().unwrap(), r.entry.title.as_ref().unwrap_or(&r.asset.title));
                prop_assert_eq!(a["description"].as_str(), r.entry.description.as_ref().or(r.asset.description.as_ref()).map(String::as_str));
                let key = (a["display_order"].as_u64().unwrap(), id.clone());
                if let Some(prev) = &last { prop_assert!(prev < &key, "assets out of order"); }
                last = Some(key);
                seen.push(id);
            }
            Ok(seen)
        };

        let mut all = Vec::new();
        for s in out_sections {
            let sid = s["id"].as_str().unwrap();
            let published_here = c.entries.iter()
                .filter(|r| r.asset.published && r.entry.section_id.map(|x| x.to_string()).as_deref() == Some(sid))
                .count();
            if include {
                prop_assert!(s.get("asset_count").is_none());
                let got = check_assets(&s["assets"], Some(sid))?;
                prop_assert_eq!(got.len(), published_here);
                all.extend(got);
            } else {
                prop_assert!(s.get("assets").is_none());
                prop_assert_eq!(s["asset_count"].as_u64().unwrap() as usize, published_here);
                all.extend(c.entries.iter()
                    .filter(|r| r.asset.published && r.entry.section_id.map(|x| x.to_string()).as_deref() == Some(sid))
                    .map(|r| r.entry.asset_id.to_string()));
            }
        }
        all.extend(check_assets(&v["unsectioned_assets"], None)?);

        // Every published entry exactly once; no unpublished one.
        let mut want: Vec<String> = c.entries.iter().filter(|r| r.asset.published)
            .map(|r| r.entry.asset_id.to_string()).collect();
        want.sort();
        all.sort();
        prop_assert_eq!(all, want);
        prop_assert_eq!(assemble(&rows, include, "/f/").asset_count(),
            c.entries.iter().filter(|r| r.asset.published).count());
    }
}
