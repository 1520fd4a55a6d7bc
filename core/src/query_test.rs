use super::*;

fn field_of(e: ApiError) -> String {
    match e {
        ApiError::Validation { field, .. } => field,
        other => panic!("expected a validation error, got {other:?}"),
    }
}

fn assets(q: &str) -> Result<AssetQuery, ApiError> {
    asset_query(Some(q), 100)
}

#[test]
fn defaults() {
    assert_eq!(asset_query(None, 100).unwrap(), AssetQuery::default());
    assert_eq!(assets("").unwrap(), AssetQuery::default());
    let d = AssetQuery::default();
    assert_eq!(
        (d.page, d.per_page, d.sort, d.order),
        (1, 20, AssetSort::CreatedAt, SortOrder::Desc)
    );
    assert_eq!(library_query(None, 100).unwrap(), LibraryQuery::default());
    assert_eq!(LibraryQuery::default().limit, 20);
    assert!(!detail_query(None).unwrap().include_assets);
}

#[test]
fn page_sizes_are_positive_integers() {
    for bad in [
        "0", "-1", "abc", "1e3", "", " 5", "5 ", "+5", "1.0", "0x10", "٣",
    ] {
        let e = assets(&format!("per_page={bad}")).unwrap_err();
        assert_eq!(e.status(), 400, "{bad:?}");
        assert_eq!(
            e.message(),
            "per_page must be a positive integer",
            "{bad:?}"
        );
        assert_eq!(field_of(e), "per_page");
        assert_eq!(
            field_of(library_query(Some(&format!("limit={bad}")), 100).unwrap_err()),
            "limit"
        );
        assert_eq!(
            field_of(assets(&format!("page={bad}")).unwrap_err()),
            "page"
        );
    }
    assert_eq!(assets("per_page=1").unwrap().per_page, 1);
    assert_eq!(assets("per_page=007").unwrap().per_page, 7);
    assert_eq!(assets("per_page=100").unwrap().per_page, 100);
}

#[test]
fn page_sizes_above_the_maximum_are_clamped() {
    assert_eq!(assets("per_page=101").unwrap().per_page, 100);
    assert_eq!(assets("per_page=1000").unwrap().per_page, 100);
    assert_eq!(
        assets("per_page=99999999999999999999999999")
            .unwrap()
            .per_page,
        100
    );
    assert_eq!(library_query(Some("limit=500"), 100).unwrap().limit, 100);
    assert_eq!(asset_query(Some("per_page=60"), 50).unwrap().per_page, 50);
    assert_eq!(
        asset_query(None, 10).unwrap().per_page,
        10,
        "the default never exceeds the max"
    );
}

#[test]
fn huge_pages_are_past_the_end_not_errors() {
    let q = assets("page=99999999999999999999999999").unwrap();
    assert_eq!(q.page, u64::MAX);
    assert_eq!(q.offset(), u64::MAX);
    assert_eq!(assets("page=3&per_page=10").unwrap().offset(), 20);
}

#[test]
fn asset_type_filter_takes_the_eight_filter_types() {
    for t in [
        "pdf",
        "document",
        "image",
        "video",
        "audio",
        "link",
        "collection",
        "git",
    ] {
        assert_eq!(
            assets(&format!("asset_type={t}"))
                .unwrap()
                .asset_type
                .unwrap()
                .as_str(),
            t
        );
    }
    for bad in ["external_video", "PDF", "spreadsheet", ""] {
        let e = assets(&format!("asset_type={bad}")).unwrap_err();
        assert!(
            e.message()
                .starts_with("asset_type must be one of: pdf, document, image"),
            "{bad}"
        );
        assert!(!e.message().contains("external_video"));
        assert_eq!(field_of(e), "asset_type");
    }
}

#[test]
fn sort_and_order() {
    assert_eq!(assets("sort=title").unwrap().sort, AssetSort::Title);
    assert_eq!(
        assets("sort=updated_at").unwrap().sort,
        AssetSort::UpdatedAt
    );
    assert_eq!(
        assets("sort=created_at").unwrap().sort,
        AssetSort::CreatedAt
    );
    assert_eq!(assets("order=asc").unwrap().order, SortOrder::Asc);
    assert_eq!(assets("order=desc").unwrap().order, SortOrder::Desc);
    let e = assets("sort=size").unwrap_err();
    assert_eq!(
        e.message(),
        "sort must be one of: created_at, title, updated_at"
    );
    assert_eq!(field_of(e), "sort");
    assert_eq!(field_of(assets("order=DESC").unwrap_err()), "order");
    assert_eq!(field_of(assets("order=").unwrap_err()), "order");
}

#[test]
fn search_is_decoded_and_empty_means_none() {
    assert_eq!(assets("search=").unwrap().search, None);
    assert_eq!(
        assets("search=brand+kit").unwrap().search.as_deref(),
        Some("brand kit")
    );
    assert_eq!(
        assets("search=50%25%20off").unwrap().search.as_deref(),
        Some("50% off")
    );
    assert_eq!(
        assets("search=%C3%A9cole").unwrap().search.as_deref(),
        Some("école")
    );
    assert_eq!(
        assets("search=a%26b%3Dc").unwrap().search.as_deref(),
        Some("a&b=c")
    );
    // Malformed escapes are kept literally, as browsers do.
    assert_eq!(
        assets("search=100%").unwrap().search.as_deref(),
        Some("100%")
    );
    // Encoded parameter names decode too.
    assert_eq!(assets("per%5Fpage=5").unwrap().per_page, 5);
}

#[test]
fn unknown_parameters_are_ignored_and_known_ones_may_not_repeat() {
    let q = assets("foo=bar&page=2&&utm_source=x&=y&z").unwrap();
    assert_eq!(q.page, 2);
    for dup in [
        "page=1&page=2",
        "per_page=5&per_page=5",
        "sort=title&sort=title",
        "search=a&search=",
    ] {
        let e = assets(dup).unwrap_err();
        assert!(e.message().ends_with("is given more than once"), "{dup}");
    }
    assert_eq!(
        field_of(assets("order=asc&order=desc").unwrap_err()),
        "order"
    );
}

#[test]
fn first_bad_parameter_in_fixed_order_is_named() {
    // page is checked before per_page, whatever the order in the string.
    assert_eq!(field_of(assets("per_page=x&page=y").unwrap_err()), "page");
}

#[test]
fn library_query_workspace() {
    let q = library_query(Some("workspace_id=ws_1&page=2&limit=5"), 100).unwrap();
    assert_eq!(q.workspace_id.as_deref(), Some("ws_1"));
    for bad in ["ws%201", "a/b", "caf%C3%A9"] {
        let e = library_query(Some(&format!("workspace_id={bad}")), 100).unwrap_err();
        assert_eq!(field_of(e), "workspace_id", "{bad}");
        let e = assets(&format!("workspace_id={bad}")).unwrap_err();
        assert_eq!(field_of(e), "workspace_id", "{bad}");
    }
    assert_eq!(
        assets("workspace_id=acme").unwrap().workspace_id.as_deref(),
        Some("acme")
    );
    assert_eq!(assets("workspace_id=").unwrap().workspace_id, None);
    assert_eq!((q.page, q.limit, q.offset()), (2, 5, 5));
    assert_eq!(
        library_query(Some("workspace_id="), 100)
            .unwrap()
            .workspace_id,
        None
    );
    assert_eq!(
        field_of(library_query(Some("limit=0"), 100).unwrap_err()),
        "limit"
    );
    // per_page means nothing to the library list.
    assert_eq!(library_query(Some("per_page=abc"), 100).unwrap().limit, 20);
}

#[test]
fn include_assets_forms() {
    for (v, want) in [("true", true), ("1", true), ("false", false), ("0", false)] {
        assert_eq!(
            detail_query(Some(&format!("include_assets={v}")))
                .unwrap()
                .include_assets,
            want
        );
    }
    for bad in ["yes", "TRUE", "", "2"] {
        let e = detail_query(Some(&format!("include_assets={bad}"))).unwrap_err();
        assert_eq!(field_of(e), "include_assets", "{bad}");
    }
}
