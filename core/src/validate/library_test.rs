use super::*;
use crate::validate::tests::fails;
use serde_json::json;

fn lib(v: serde_json::Value) -> Result<LibraryDoc, ApiError> {
    library_doc(v.to_string().as_bytes(), &Config::default())
}

fn doc() -> serde_json::Value {
    let a = "00000000-0000-0000-0000-00000000000a";
    let b = "00000000-0000-0000-0000-00000000000b";
    let c = "00000000-0000-0000-0000-00000000000c";
    json!({"title": "Brand kit", "slug": null, "description": null, "workspace_id": null,
        "cover_image_path": null, "cover_overlay_color": "#1A2B3C", "cover_overlay_opacity": 0.4,
        "show_asset_count": true, "allow_individual_downloads": true, "allow_bulk_download": false,
        "is_paid": false, "price": null, "currency": "USD", "published": true,
        "sections": [{"id": null, "title": "Logos", "description": null, "collapsed_by_default": false,
            "assets": [{"asset_id": a, "title": null, "description": null},
                       {"asset_id": b, "title": "Override", "description": "D"}]}],
        "unsectioned_assets": [{"asset_id": c, "title": "Custom title", "description": null}]})
}

#[test]
fn the_design_example_document_is_valid() {
    let d = lib(doc()).unwrap();
    assert_eq!(d.settings.title, "Brand kit");
    assert_eq!(d.sections.len(), 1);
    assert_eq!(d.sections[0].assets.len(), 2);
    assert_eq!(d.sections[0].assets[1].title.as_deref(), Some("Override"));
    assert_eq!(
        d.sections[0].assets[1].path,
        "sections[0].assets[1].asset_id"
    );
    assert_eq!(
        d.unsectioned_assets[0].path,
        "unsectioned_assets[0].asset_id"
    );
    assert_eq!(d.entries().count(), 3);
}

#[test]
fn library_defaults() {
    let d = lib(json!({"title": "Only a title"})).unwrap();
    assert!(
        d.settings.show_asset_count
            && d.settings.allow_individual_downloads
            && d.settings.published
    );
    assert!(!d.settings.allow_bulk_download && !d.settings.is_paid);
    assert_eq!(d.settings.currency, "USD");
    assert!(d.sections.is_empty() && d.unsectioned_assets.is_empty());
}

#[test]
fn library_field_rules() {
    let with = |k: &str, v: serde_json::Value| {
        let mut d = doc();
        d[k] = v;
        lib(d)
    };
    fails(with("title", json!(null)), "title");
    fails(with("title", json!(" ")), "title");
    fails(with("title", json!("x".repeat(501))), "title");
    lib({
        let mut d = doc();
        d["title"] = json!("é".repeat(500));
        d
    })
    .unwrap();
    for bad in ["#12", "#1234", "123456", "#GGGGGG", "red", "#1A2B3C4D"] {
        fails(
            with("cover_overlay_color", json!(bad)),
            "cover_overlay_color",
        );
    }
    for ok in ["#abc", "#ABCDEF", "#1a2B3c"] {
        with("cover_overlay_color", json!(ok)).unwrap();
    }
    for bad in [json!(-0.1), json!(1.01), json!("0.5")] {
        fails(with("cover_overlay_opacity", bad), "cover_overlay_opacity");
    }
    with("cover_overlay_opacity", json!(0)).unwrap();
    with("cover_overlay_opacity", json!(1)).unwrap();
    for bad in ["usd", "US", "USDX", "U1D", ""] {
        fails(with("currency", json!(bad)), "currency");
    }
    fails(with("is_paid", json!(true)), "price");
    let mut paid = doc();
    paid["is_paid"] = json!(true);
    paid["price"] = json!(0);
    fails(lib(paid.clone()), "price");
    paid["price"] = json!(-5);
    fails(lib(paid.clone()), "price");
    paid["price"] = json!(9.99);
    assert_eq!(lib(paid).unwrap().settings.price, Some(9.99));
    fails(with("slug", json!("Not A Slug")), "slug");
    fails(with("slug", json!(5)), "slug");
    assert_eq!(
        with("slug", json!("brand-kit")).unwrap().slug.as_deref(),
        Some("brand-kit")
    );
    fails(with("published", json!("yes")), "published");
    fails(with("show_asset_count", json!(1)), "show_asset_count");
    fails(with("workspace_id", json!(7)), "workspace_id");
    fails(with("workspace_id", json!("  ")), "workspace_id");
    fails(with("sections", json!({})), "sections");
    fails(with("unsectioned_assets", json!("x")), "unsectioned_assets");
}

#[test]
fn library_paths_name_the_offending_element() {
    let mut d = doc();
    d["sections"][0]["assets"][1]["asset_id"] = json!("not-a-uuid");
    let m = fails(lib(d), "sections[0].assets[1].asset_id");
    assert_eq!(m, "sections[0].assets[1].asset_id must be a UUID");

    let mut d = doc();
    d["sections"][0]["assets"]
        .as_array_mut()
        .unwrap()
        .push(json!({"title": "no id"}));
    fails(lib(d), "sections[0].assets[2].asset_id");

    let mut d = doc();
    d["sections"]
        .as_array_mut()
        .unwrap()
        .push(json!({"title": ""}));
    fails(lib(d), "sections[1].title");

    let mut d = doc();
    d["sections"][0]["assets"][0]["title"] = json!("");
    fails(lib(d), "sections[0].assets[0].title");

    let mut d = doc();
    d["sections"][0]["assets"][0] = json!("a string");
    fails(lib(d), "sections[0].assets[0]");

    let mut d = doc();
    d["sections"][0]["id"] = json!("nope");
    fails(lib(d), "sections[0].id");

    let mut d = doc();
    d["unsectioned_assets"][0]["description"] = json!(false);
    fails(lib(d), "unsectioned_assets[0].description");

    let mut d = doc();
    d["sections"][0]["collapsed_by_default"] = json!("no");
    fails(lib(d), "sections[0].collapsed_by_default");
}

#[test]
fn an_asset_appears_at_most_once() {
    let mut d = doc();
    d["unsectioned_assets"][0]["asset_id"] = d["sections"][0]["assets"][0]["asset_id"].clone();
    let m = fails(lib(d), "unsectioned_assets[0].asset_id");
    assert!(m.contains("more than once"), "{m}");

    let mut d = doc();
    let s = d["sections"][0].clone();
    d["sections"].as_array_mut().unwrap().push(s);
    // The second section repeats the first one's assets: the first repeat is named.
    fails(lib(d), "sections[1].assets[0].asset_id");

    let mut d = doc();
    let id = "00000000-0000-0000-0000-0000000000ff";
    d["sections"][0]["id"] = json!(id);
    d["sections"]
        .as_array_mut()
        .unwrap()
        .push(json!({"id": id, "title": "Twin"}));
    fails(lib(d), "sections[1].id");
}
