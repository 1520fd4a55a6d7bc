//! Tests of the wire forms of `render`.

use super::*;
use crate::model::{Library, LibrarySettings, LibrarySummary};
use chrono::TimeZone;
use serde_json::{Value, json};
use uuid::Uuid;

#[test]
fn timestamps_always_have_three_fraction_digits_and_z() {
    let whole = Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap();
    let v = serde_json::to_value(Timestamp(whole)).unwrap();
    assert_eq!(v, "2026-01-02T03:04:05.000Z");
    let v = serde_json::to_value(Timestamp(whole + chrono::Duration::microseconds(7_999))).unwrap();
    assert_eq!(v, "2026-01-02T03:04:05.007Z", "truncated, not rounded");
}

fn asset(t: AssetType) -> Asset {
    let at = Utc.with_ymd_and_hms(2026, 11, 22, 10, 15, 30).unwrap()
        + chrono::Duration::milliseconds(123);
    Asset {
        id: Uuid::nil(),
        title: "T".into(),
        slug: "t".into(),
        description: None,
        asset_type: t,
        file_path: None,
        file_size: None,
        mime_type: None,
        thumbnail_path: None,
        page_count: None,
        word_count: Some(7),
        width: Some(3),
        height: Some(4),
        thumbnail_placeholder: None,
        media: crate::model::Media::default(),
        external_url: Some("https://example.com/".into()),
        video_embed: Some("https://www.youtube.com/embed/x".into()),
        download_count: 0,
        is_public: false,
        published: true,
        tags: vec!["Brand".into()],
        checksum_sha256: Some([0xab; 32]),
        created_at: at,
        updated_at: at,
        workspace_id: None,
    }
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

const BASE: [&str; 19] = [
    "id",
    "title",
    "slug",
    "description",
    "asset_type",
    "file_path",
    "file_size",
    "mime_type",
    "thumbnail_path",
    "thumbnail_placeholder",
    "page_count",
    "download_count",
    "is_public",
    "published",
    "tags",
    "checksum_sha256",
    "created_at",
    "updated_at",
    "workspace_id",
];

#[test]
fn every_base_field_on_every_type_and_extras_only_for_their_type() {
    for t in AssetType::ALL {
        let v = serde_json::to_value(AssetJson(&asset(t))).unwrap();
        assert_eq!(v["tags"], serde_json::json!(["Brand"]));
        assert_eq!(v["checksum_sha256"], "ab".repeat(32));
        let mut expected: Vec<&str> = BASE.to_vec();
        expected.extend(match t {
            AssetType::Pdf | AssetType::Document => &["word_count"][..],
            AssetType::Image => &["width", "height"][..],
            AssetType::Audio => &["duration_seconds", "sample_rate", "channels", "bitrate"][..],
            AssetType::Video => &["duration_seconds", "width", "height", "video_codec"][..],
            AssetType::ExternalVideo => &["external_url", "video_embed"][..],
            AssetType::Link | AssetType::Git => &["external_url"][..],
            _ => &[][..],
        });
        let mut got = keys(&v);
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got, expected, "{t}");
        assert_eq!(v["created_at"], "2026-11-22T10:15:30.123Z");
        assert_eq!(v["file_size"], Value::Null);
    }
}

#[test]
fn library_item_has_the_list_fields() {
    let at = Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap();
    let summary = LibrarySummary {
        library: Library {
            id: Uuid::nil(),
            settings: LibrarySettings {
                title: "L".into(),
                description: None,
                workspace_id: None,
                cover_image_path: None,
                cover_overlay_color: None,
                cover_overlay_opacity: None,
                show_asset_count: true,
                allow_individual_downloads: true,
                allow_bulk_download: false,
                is_paid: true,
                price: Some(9.5),
                currency: "EUR".into(),
                published: true,
            },
            slug: "l".into(),
            published_at: Some(at),
            view_count: 4,
            created_at: at,
            updated_at: at,
        },
        asset_count: 2,
    };
    let v = serde_json::to_value(LibraryItemJson(&summary)).unwrap();
    assert_eq!(
        v,
        json!({"id": Uuid::nil(), "title": "L", "slug": "l", "description": null,
            "cover_image_path": null, "published_at": "2026-01-02T03:04:05.000Z",
            "is_paid": true, "price": 9.5, "currency": "EUR", "asset_count": 2,
            "view_count": 4, "created_at": "2026-01-02T03:04:05.000Z", "workspace_id": null})
    );
}
