//! How records look on the wire: assets, library list items, timestamps.

use chrono::{DateTime, Utc};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::model::{Asset, AssetType, LibrarySummary};
use crate::reply::Reply;

/// `{"success": true, "data": ...}`, with `pagination` when given: the envelope of every asset
/// answer.
pub(crate) struct Envelope<D, P> {
    pub(crate) data: D,
    pub(crate) pagination: Option<P>,
}

impl<D: Serialize, P: Serialize> Serialize for Envelope<D, P> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("success", &true)?;
        m.serialize_entry("data", &self.data)?;
        if let Some(p) = &self.pagination {
            m.serialize_entry("pagination", p)?;
        }
        m.end()
    }
}

/// A JSON answer `{"success": true, "data": data}`.
pub(crate) fn data<D: Serialize>(status: u16, data: D) -> Reply {
    Reply::json_value(
        status,
        &Envelope::<D, ()> {
            data,
            pagination: None,
        },
    )
}

/// A timestamp as RFC 3339 UTC with milliseconds: `2026-11-22T10:15:30.123Z`.
#[derive(Debug, Clone, Copy)]
pub struct Timestamp(pub DateTime<Utc>);

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // A fixed layout, written without parsing a format pattern per call.
        s.serialize_str(&self.0.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
    }
}

/// An optional timestamp (`null` when absent).
pub(crate) fn opt_ts(t: Option<DateTime<Utc>>) -> Option<Timestamp> {
    t.map(Timestamp)
}

/// An asset as the API shows it: every field of spec §2.1 (null where unknown), then the
/// fields of its type (`word_count` for pdf and document; `width`, `height` for image;
/// `external_url` for external_video, link and git; `video_embed` for external_video).
#[derive(Debug, Clone, Copy)]
pub struct AssetJson<'a>(pub &'a Asset);

impl Serialize for AssetJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &a.id)?;
        m.serialize_entry("title", &a.title)?;
        m.serialize_entry("slug", &a.slug)?;
        m.serialize_entry("description", &a.description)?;
        m.serialize_entry("asset_type", &a.asset_type)?;
        m.serialize_entry("file_path", &a.file_path)?;
        m.serialize_entry("file_size", &a.file_size)?;
        m.serialize_entry("mime_type", &a.mime_type)?;
        m.serialize_entry("thumbnail_path", &a.thumbnail_path)?;
        m.serialize_entry("page_count", &a.page_count)?;
        m.serialize_entry("download_count", &a.download_count)?;
        m.serialize_entry("is_public", &a.is_public)?;
        m.serialize_entry("published", &a.published)?;
        m.serialize_entry("created_at", &Timestamp(a.created_at))?;
        m.serialize_entry("updated_at", &Timestamp(a.updated_at))?;
        match a.asset_type {
            AssetType::Pdf | AssetType::Document => {
                m.serialize_entry("word_count", &a.word_count)?;
            }
            AssetType::Image => {
                m.serialize_entry("width", &a.width)?;
                m.serialize_entry("height", &a.height)?;
            }
            AssetType::ExternalVideo => {
                m.serialize_entry("external_url", &a.external_url)?;
                m.serialize_entry("video_embed", &a.video_embed)?;
            }
            AssetType::Link | AssetType::Git => {
                m.serialize_entry("external_url", &a.external_url)?;
            }
            AssetType::Video | AssetType::Audio | AssetType::Collection => {}
        }
        m.end()
    }
}

/// A library list item (spec §2.2).
#[derive(Debug, Clone, Copy)]
pub struct LibraryItemJson<'a>(pub &'a LibrarySummary);

impl Serialize for LibraryItemJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let l = &self.0.library;
        let mut m = s.serialize_map(Some(13))?;
        m.serialize_entry("id", &l.id)?;
        m.serialize_entry("title", &l.settings.title)?;
        m.serialize_entry("slug", &l.slug)?;
        m.serialize_entry("description", &l.settings.description)?;
        m.serialize_entry("cover_image_path", &l.settings.cover_image_path)?;
        m.serialize_entry("published_at", &opt_ts(l.published_at))?;
        m.serialize_entry("is_paid", &l.settings.is_paid)?;
        m.serialize_entry("price", &l.settings.price)?;
        m.serialize_entry("currency", &l.settings.currency)?;
        m.serialize_entry("asset_count", &self.0.asset_count)?;
        m.serialize_entry("view_count", &l.view_count)?;
        m.serialize_entry("created_at", &Timestamp(l.created_at))?;
        m.serialize_entry("workspace_id", &l.settings.workspace_id)?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
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
        let v =
            serde_json::to_value(Timestamp(whole + chrono::Duration::microseconds(7_999))).unwrap();
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
            external_url: Some("https://example.com/".into()),
            video_embed: Some("https://www.youtube.com/embed/x".into()),
            download_count: 0,
            is_public: false,
            published: true,
            created_at: at,
            updated_at: at,
        }
    }

    fn keys(v: &Value) -> Vec<&str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    }

    const BASE: [&str; 15] = [
        "id",
        "title",
        "slug",
        "description",
        "asset_type",
        "file_path",
        "file_size",
        "mime_type",
        "thumbnail_path",
        "page_count",
        "download_count",
        "is_public",
        "published",
        "created_at",
        "updated_at",
    ];

    #[test]
    fn every_base_field_on_every_type_and_extras_only_for_their_type() {
        for t in AssetType::ALL {
            let v = serde_json::to_value(AssetJson(&asset(t))).unwrap();
            let mut expected: Vec<&str> = BASE.to_vec();
            expected.extend(match t {
                AssetType::Pdf | AssetType::Document => &["word_count"][..],
                AssetType::Image => &["width", "height"][..],
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
}
