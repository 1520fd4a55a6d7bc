//! The schemas against what the service writes: real values of every wire type are rendered
//! and the keys of each object compared with its schema's `properties` and `required`. A field
//! added to an answer without the document, or the other way round, fails here.

use std::collections::BTreeSet;

use chrono::{TimeZone, Utc};
use serde_json::Value;
use uuid::Uuid;

use super::document;
use super::parts::{ERRORS, error_schema};
use crate::change::LibraryUse;
use crate::error::ApiError;
use crate::model::{
    Asset, AssetType, EntryAsset, EntryRow, Library, LibraryEntry, LibraryRows, LibrarySettings,
    LibrarySummary, Scope, Section,
};
use crate::page::{AssetPagination, LibraryPagination};
use crate::render::{
    AssetJson, Envelope, LibraryList, LibraryListItem, SignedLink, Timestamp, data,
};
use crate::tree;

/// The schema `name` of the document's components.
pub(super) fn component(doc: &Value, name: &str) -> Value {
    let schema = &doc["components"]["schemas"][name];
    assert!(schema.is_object(), "no schema {name}");
    schema.clone()
}

pub(super) fn keys(value: &Value) -> BTreeSet<String> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .cloned()
        .collect()
}

/// Asserts that `value` has exactly the properties of `schema`, all of them required.
pub(super) fn assert_shape(value: &Value, schema: &Value, what: &str) {
    let properties = keys(&schema["properties"]);
    let required: BTreeSet<String> = schema["required"]
        .as_array()
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(keys(value), properties, "{what}: keys and properties");
    assert_eq!(required, properties, "{what}: required");
}

fn rendered(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).expect("JSON")
}

fn at() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 10, 15, 30).unwrap()
}

fn asset(asset_type: AssetType) -> Asset {
    Asset {
        id: Uuid::from_u128(7),
        title: "T".into(),
        slug: "t".into(),
        description: None,
        asset_type,
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
        tags: vec!["Logo".into(), "2026".into()],
        checksum_sha256: Some([0xab; 32]),
        created_at: at(),
        updated_at: at(),
        workspace_id: None,
    }
}

fn library() -> Library {
    Library {
        id: Uuid::from_u128(1),
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
        published_at: Some(at()),
        view_count: 4,
        created_at: at(),
        updated_at: at(),
    }
}

/// A library with one section holding one asset and one unsectioned asset.
fn rows() -> LibraryRows {
    let row = |asset: u128, section: Option<u128>| EntryRow {
        entry: LibraryEntry {
            asset_id: Uuid::from_u128(asset),
            section_id: section.map(Uuid::from_u128),
            display_order: 0,
            title: None,
            description: None,
        },
        asset: EntryAsset {
            title: "A".into(),
            description: None,
            asset_type: AssetType::Image,
            thumbnail_path: Some("thumbnails/a.jpg".into()),
            thumbnail_placeholder: None,
            duration_ms: None,
            published: true,
            tags: vec!["Logo".into()],
        },
    };
    LibraryRows {
        library: library(),
        sections: vec![Section {
            id: Uuid::from_u128(2),
            title: "S".into(),
            description: None,
            display_order: 0,
            collapsed_by_default: false,
        }],
        entries: vec![row(3, Some(2)), row(4, None)],
    }
}

#[test]
fn every_asset_type_has_the_fields_of_its_schema() {
    let doc = document();
    let mapping = &doc["components"]["schemas"]["Asset"]["discriminator"]["mapping"];
    for t in AssetType::ALL {
        let reference = mapping[t.as_str()].as_str().expect("a mapping");
        let name = reference.trim_start_matches("#/components/schemas/");
        let schema = component(&doc, name);
        let value = rendered(AssetJson(&asset(t)));
        assert_shape(&value, &schema, name);
        let types = schema["properties"]["asset_type"]["enum"]
            .as_array()
            .expect("asset_type enum");
        assert!(types.contains(&Value::from(t.as_str())), "{t} in {name}");
    }
}

#[test]
fn the_envelopes_and_paginations_have_the_fields_of_their_schemas() {
    let doc = document();
    let asset = asset(AssetType::Pdf);
    let one: Value = serde_json::from_slice(&data(200, AssetJson(&asset)).body).expect("JSON");
    assert_shape(&one, &component(&doc, "AssetEnvelope"), "AssetEnvelope");

    let list = rendered(Envelope {
        data: vec![AssetJson(&asset)],
        pagination: Some(AssetPagination::new(1, 20, 1)),
    });
    assert_shape(&list, &component(&doc, "AssetList"), "AssetList");
    assert_shape(
        &list["pagination"],
        &component(&doc, "AssetPagination"),
        "AssetPagination",
    );

    let uses = vec![LibraryUse {
        id: Uuid::nil(),
        title: "L".into(),
        slug: "l".into(),
        published: true,
    }];
    let usage: Value = serde_json::from_slice(&data(200, &uses).body).expect("JSON");
    assert_shape(&usage, &component(&doc, "AssetUsage"), "AssetUsage");
    assert_shape(
        &usage["data"][0],
        &component(&doc, "LibraryUse"),
        "LibraryUse",
    );

    let link = SignedLink {
        expires_at: Timestamp(at()),
        url: "/api/v1/assets/x/download?expires=1&signature=s".into(),
    };
    let link: Value = serde_json::from_slice(&data(200, link).body).expect("JSON");
    let schema = component(&doc, "DownloadLink");
    assert_shape(&link, &schema, "DownloadLink");
    assert_shape(
        &link["data"],
        &schema["properties"]["data"],
        "DownloadLink data",
    );
}

#[test]
fn the_library_list_has_the_fields_of_its_schema() {
    let doc = document();
    let summary = LibrarySummary {
        library: library(),
        asset_count: 2,
    };
    let list = rendered(LibraryList {
        libraries: vec![LibraryListItem::of(&summary)],
        pagination: LibraryPagination::new(1, 20, 1),
    });
    assert_shape(&list, &component(&doc, "LibraryList"), "LibraryList");
    assert_shape(
        &list["libraries"][0],
        &component(&doc, "LibraryListItem"),
        "LibraryListItem",
    );
    assert_shape(
        &list["pagination"],
        &component(&doc, "LibraryPagination"),
        "LibraryPagination",
    );
}

#[test]
fn the_library_detail_has_the_fields_of_its_schemas() {
    let doc = document();
    let rows = rows();
    let library_types = component(&doc, "LibraryAsset")["properties"]["asset_type"]["enum"].clone();
    for (include_assets, section) in [
        (true, "SectionWithAssets"),
        (false, "SectionWithAssetCount"),
    ] {
        let detail = rendered(tree::assemble(&rows, include_assets, "/files/"));
        assert_shape(&detail, &component(&doc, "LibraryDetail"), "LibraryDetail");
        assert_shape(&detail["sections"][0], &component(&doc, section), section);
        let unsectioned = &detail["unsectioned_assets"][0];
        assert_shape(
            unsectioned,
            &component(&doc, "LibraryAsset"),
            "LibraryAsset",
        );
        assert!(
            library_types
                .as_array()
                .is_some_and(|types| types.contains(&unsectioned["asset_type"]))
        );
        if include_assets {
            let asset = &detail["sections"][0]["assets"][0];
            assert_shape(asset, &component(&doc, "LibraryAsset"), "LibraryAsset");
        }
    }
}

#[test]
fn passes_have_the_fields_of_their_schemas() {
    use crate::render::{NewPassWire, PassFields, PassWire};
    let doc = document();
    let mut pass = crate::model::LibraryPass {
        id: Uuid::new_v4(),
        library_id: Uuid::new_v4(),
        token_hash: [1; 32],
        label: "Order 7".into(),
        expires_at: Utc::now(),
        max_downloads: None,
        downloads_used: 2,
        asset_ids: None,
        created_at: Utc::now(),
        revoked_at: None,
    };
    for (max, subset, revoked) in [
        (None, None, None),
        (Some(3), Some(vec![Uuid::new_v4()]), Some(Utc::now())),
    ] {
        pass.max_downloads = max;
        pass.asset_ids = subset;
        pass.revoked_at = revoked;
        let shown = serde_json::to_value(PassWire {
            id: pass.id,
            fields: PassFields::of(&pass),
        })
        .expect("JSON");
        assert_shape(&shown, &component(&doc, "LibraryPass"), "LibraryPass");
        assert!(
            shown.get("token").is_none(),
            "a pass is never shown with its token"
        );
        let made = serde_json::to_value(NewPassWire {
            id: pass.id,
            token: "alp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
            fields: PassFields::of(&pass),
        })
        .expect("JSON");
        assert_shape(&made, &component(&doc, "NewLibraryPass"), "NewLibraryPass");
    }
}

#[test]
fn events_have_the_fields_of_their_schemas() {
    use crate::events::{Actor, Event, EventType, ResourceType};
    use crate::render::EventWire;
    let doc = document();
    let schema = component(&doc, "Event");
    let mut event = Event {
        id: Uuid::new_v4(),
        kind: EventType::AssetUpdated,
        occurred_at: at(),
        actor: Some(Actor {
            key_id: Uuid::new_v4(),
            key_name: "editor".into(),
        }),
        workspace_id: Some("acme".into()),
        resource_type: ResourceType::Asset,
        resource_id: Uuid::new_v4(),
        changed: vec!["title".into()],
        at: crate::events::EventCursor(0, 1),
    };
    let shown = rendered(EventWire::of(&event));
    assert_shape(&shown, &schema, "Event");
    let actor = schema["properties"]["actor"]["oneOf"]
        .as_array()
        .and_then(|branches| branches.iter().find(|b| b["type"] == "object"))
        .expect("an object branch");
    assert_shape(&shown["actor"], actor, "Event.actor");
    assert_shape(
        &shown["resource"],
        &schema["properties"]["resource"],
        "Event.resource",
    );
    assert_shape(&shown["data"], &schema["properties"]["data"], "Event.data");
    let types = &schema["properties"]["type"]["enum"];
    for kind in EventType::ALL {
        assert!(
            types
                .as_array()
                .is_some_and(|t| t.contains(&Value::from(kind.as_str()))),
            "{kind} in the schema"
        );
    }
    event.actor = None;
    assert_eq!(rendered(EventWire::of(&event))["actor"], Value::Null);
}

/// One error of each kind. The match names every variant, so a new one cannot be left out.
fn every_error() -> Vec<ApiError> {
    let all = vec![
        ApiError::validation("title", "bad"),
        ApiError::Unauthorized("Missing API key"),
        ApiError::Forbidden(Scope::WriteAssets),
        ApiError::NotPermitted("paid"),
        ApiError::BulkDownloadDisabled,
        ApiError::PassLimitReached,
        ApiError::NotFound("No such route"),
        ApiError::AssetNotFound,
        ApiError::LibraryNotFound,
        ApiError::PassNotFound,
        ApiError::MethodNotAllowed {
            method: "PATCH".into(),
            allow: "GET, HEAD",
        },
        ApiError::Conflict {
            message: "in use".into(),
            libraries: vec![LibraryUse {
                id: Uuid::nil(),
                title: "L".into(),
                slug: "l".into(),
                published: false,
            }],
        },
        ApiError::Duplicate {
            asset_id: Uuid::from_u128(9),
        },
        ApiError::OffsetMismatch { sent: 1, offset: 2 },
        ApiError::UploadConflict("no file yet".into()),
        ApiError::UploadGone,
        ApiError::UnsupportedVersion,
        ApiError::Locked { retry_after: 1 },
        ApiError::ChecksumMismatch,
        ApiError::RequestTimeout { seconds: 30 },
        ApiError::PayloadTooLarge { limit: 1 },
        ApiError::UploadTooLarge {
            subject: "Upload-Length",
            limit: 1,
            of: crate::UploadLimit::MaxResumableUpload,
        },
        ApiError::TooManyRequests { retry_after: 1 },
        ApiError::OtherWorkspace {
            workspace: "acme".into(),
        },
        ApiError::UnsupportedMediaType {
            expected: "application/json",
        },
        ApiError::Unavailable {
            message: "busy",
            retry_after: 1,
        },
        ApiError::internal("broken"),
    ];
    for error in &all {
        match error {
            ApiError::Validation { .. }
            | ApiError::Unauthorized(_)
            | ApiError::Forbidden(_)
            | ApiError::NotPermitted(_)
            | ApiError::OtherWorkspace { .. }
            | ApiError::BulkDownloadDisabled
            | ApiError::PassLimitReached
            | ApiError::NotFound(_)
            | ApiError::AssetNotFound
            | ApiError::LibraryNotFound
            | ApiError::PassNotFound
            | ApiError::MethodNotAllowed { .. }
            | ApiError::Conflict { .. }
            | ApiError::Duplicate { .. }
            | ApiError::OffsetMismatch { .. }
            | ApiError::UploadConflict(_)
            | ApiError::UploadGone
            | ApiError::UnsupportedVersion
            | ApiError::Locked { .. }
            | ApiError::ChecksumMismatch
            | ApiError::RequestTimeout { .. }
            | ApiError::PayloadTooLarge { .. }
            | ApiError::UploadTooLarge { .. }
            | ApiError::TooManyRequests { .. }
            | ApiError::UnsupportedMediaType { .. }
            | ApiError::Unavailable { .. }
            | ApiError::Internal(_) => {}
            // Never an answer of its own: only an item of an atomic bulk change's 409
            // (`BulkItemResult`, checked by the bulk wire test).
            ApiError::NotApplied => {}
        }
    }
    all
}

#[test]
fn every_error_has_the_fields_and_text_of_its_schema() {
    let doc = document();
    let texts = component(&doc, "ErrorKind")["enum"].clone();
    for error in every_error() {
        let status = error.status();
        let body: Value = serde_json::from_slice(&error.into_reply().body).expect("JSON");
        let text = &body["error"];
        assert!(
            texts.as_array().is_some_and(|all| all.contains(text)),
            "{text} is not in Error"
        );
        // A 405 answers a method no operation has: the introduction describes it.
        assert!(
            status == 405
                || ERRORS
                    .iter()
                    .any(|(_, s, all, _)| *s == status && all.iter().any(|t| *t == text)),
            "no shared answer for {status} {text}"
        );
        match status {
            400 => assert_shape(&body, &component(&doc, "ValidationError"), "400"),
            409 if body.get("libraries").is_some() => {
                let schema = component(&doc, "ConflictError");
                assert_shape(&body, &schema, "409");
                assert_shape(
                    &body["libraries"][0],
                    &schema["properties"]["libraries"]["items"],
                    "409 libraries",
                );
            }
            409 if body.get("asset_id").is_some() => {
                assert_shape(&body, &component(&doc, "DuplicateError"), "409 duplicate");
            }
            // A 405 answers a method no operation has: its body is an `Error`.
            405 => assert_shape(&body, &component(&doc, "Error"), "405"),
            // An upload that is not where the request says: `UploadConflictError` without
            // its `asset_id`.
            409 => {
                let schema = component(&doc, "UploadConflictError");
                let mut properties = keys(&schema["properties"]);
                properties.remove("asset_id");
                assert_eq!(keys(&body), properties, "409 of an upload");
                assert_eq!(schema["required"], serde_json::json!(["error", "message"]));
            }
            _ => {
                let name = error_schema("", status);
                let schema = component(&doc, name);
                assert_shape(&body, &schema, name);
                assert!(
                    schema["properties"]["error"]["enum"]
                        .as_array()
                        .is_some_and(|all| all.contains(text)),
                    "{text} is not in {name}"
                );
            }
        }
    }
}

#[test]
fn the_create_body_has_the_fields_a_create_reads() {
    let doc = document();
    let read = super::derived::of::<crate::validate::AssetFields>();
    let body = component(&doc, "NewAsset");
    // `tags` is read beside the fields of `AssetFields` (`validate::json_tags`).
    let mut reads = keys(&read["properties"]);
    reads.insert("tags".to_owned());
    assert_eq!(
        keys(&body["properties"]),
        reads,
        "the NewAsset body and the fields AssetFields reads, and tags"
    );
    let required: BTreeSet<&str> = body["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert_eq!(required, BTreeSet::from(["asset_type", "title"]));
}
