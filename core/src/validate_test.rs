use super::*;
use serde_json::json;

fn create(v: serde_json::Value) -> Result<NewAsset, ApiError> {
    new_asset(v.to_string().as_bytes(), &Config::default())
}

#[track_caller]
pub(super) fn fails(result: Result<impl std::fmt::Debug, ApiError>, field: &str) -> String {
    match result {
        Err(ApiError::Validation { field: f, message }) => {
            assert_eq!(f, field, "wrong field; message: {message}");
            message
        }
        other => panic!("expected a 400 on {field}, got {other:?}"),
    }
}

#[test]
fn minimal_create() {
    let a = create(json!({"title": "Report", "asset_type": "pdf"})).unwrap();
    assert_eq!(
        a,
        NewAsset {
            title: "Report".into(),
            description: None,
            asset_type: AssetType::Pdf,
            external_url: None,
            video_embed: None,
            is_public: false,
            published: true,
            file_path: None,
            tags: vec![],
            workspace_id: None,
        }
    );
    let draft = create(json!({"title": "Report", "asset_type": "pdf", "published": false}));
    assert!(!draft.unwrap().published);
    assert_eq!(
        fails(
            create(json!({"title": "R", "asset_type": "pdf", "published": "no"})),
            "published"
        ),
        "published must be a boolean"
    );
}

#[test]
fn title_rules() {
    assert_eq!(
        fails(create(json!({"asset_type": "pdf"})), "title"),
        "title is required"
    );
    assert_eq!(
        fails(create(json!({"title": null, "asset_type": "pdf"})), "title"),
        "title is required"
    );
    for blank in ["", "   ", "\n\t"] {
        assert_eq!(
            fails(
                create(json!({"title": blank, "asset_type": "pdf"})),
                "title"
            ),
            "title must not be blank"
        );
    }
    assert_eq!(
        fails(create(json!({"title": 5, "asset_type": "pdf"})), "title"),
        "title must be a string"
    );
    assert_eq!(
        fails(
            create(json!({"title": ["a"], "asset_type": "pdf"})),
            "title"
        ),
        "title must be a string"
    );
    // 500 characters of 3- and 4-byte characters pass; 501 fail.
    let ok = "漢".repeat(250) + &"😀".repeat(250);
    assert_eq!(ok.chars().count(), 500);
    assert!(ok.len() > 500);
    assert_eq!(
        create(json!({"title": ok, "asset_type": "pdf"}))
            .unwrap()
            .title,
        ok
    );
    let long = ok + "x";
    assert_eq!(
        fails(create(json!({"title": long, "asset_type": "pdf"})), "title"),
        "title must be at most 500 characters"
    );
    // The title is checked first: a missing title wins over other errors.
    fails(
        create(json!({"asset_type": "nope", "is_public": "yes"})),
        "title",
    );
}

#[test]
fn asset_type_rules() {
    fails(create(json!({"title": "t"})), "asset_type");
    let m = fails(
        create(json!({"title": "t", "asset_type": "spreadsheet"})),
        "asset_type",
    );
    assert_eq!(
        m,
        "asset_type must be one of: pdf, document, image, video, external_video, audio, link, collection, git"
    );
    fails(
        create(json!({"title": "t", "asset_type": "PDF"})),
        "asset_type",
    );
    fails(create(json!({"title": "t", "asset_type": 1})), "asset_type");
    for t in AssetType::ALL {
        let mut body = json!({"title": "t", "asset_type": t.as_str()});
        if t.requires_external_url() {
            body["external_url"] = json!("https://youtu.be/dQw4w9WgXcQ");
        }
        assert_eq!(create(body).unwrap().asset_type, t);
    }
}

#[test]
fn external_url_rules() {
    for t in ["link", "external_video"] {
        let m = fails(
            create(json!({"title": "t", "asset_type": t})),
            "external_url",
        );
        assert_eq!(m, format!("external_url is required for {t} assets"));
    }
    for bad in [
        "javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        "data:text/html,hi",
        "ftp://example.com/a",
        "/relative/path",
        "example.com",
        "http://",
        "",
    ] {
        let m = fails(
            create(json!({"title": "t", "asset_type": "link", "external_url": bad})),
            "external_url",
        );
        assert_eq!(m, "external_url must be an absolute http(s) URL", "{bad}");
    }
    fails(
        create(json!({"title": "t", "asset_type": "link", "external_url": 3})),
        "external_url",
    );
    let a = create(
        json!({"title": "t", "asset_type": "link", "external_url": "https://example.com/a?b=c"}),
    )
    .unwrap();
    assert_eq!(a.external_url.as_deref(), Some("https://example.com/a?b=c"));
    assert_eq!(a.video_embed, None);
    let g = create(
        json!({"title": "t", "asset_type": "git", "external_url": "https://github.com/o/r"}),
    )
    .unwrap();
    assert_eq!(
        g.external_url.as_deref(),
        Some("https://github.com/o/r"),
        "kept as sent"
    );
    assert!(
        create(json!({"title": "t", "asset_type": "git"}))
            .unwrap()
            .external_url
            .is_none()
    );
    fails(
        create(json!({"title": "t", "asset_type": "pdf", "external_url": "https://example.com"})),
        "external_url",
    );
}

#[test]
fn stored_urls_are_normalised_and_never_carry_control_characters() {
    for bad in [
        "https://example.com/a\r\nb",
        "https://example.com/a\nSet-Cookie: x=1",
        "https://exa\nmple.com/",
        "https://example.com/\u{7f}",
        "https://example.com/\ta",
        "https://example.com/\u{85}",
    ] {
        let m = fails(
            create(json!({"title": "t", "asset_type": "link", "external_url": bad})),
            "external_url",
        );
        assert_eq!(
            m, "external_url must not contain control characters",
            "{bad:?}"
        );
    }
    let a = create(json!({"title": "t", "asset_type": "link",
        "external_url": "HTTPS://Example.COM:443/a b?q=é"}))
    .unwrap();
    assert_eq!(
        a.external_url.as_deref(),
        Some("https://example.com/a%20b?q=%C3%A9"),
        "the parsed, normalised URL is kept"
    );
}

#[test]
fn no_text_field_holds_a_nul() {
    for (field, body) in [
        ("title", json!({"title": "a\u{0}b", "asset_type": "pdf"})),
        (
            "description",
            json!({"title": "t", "description": "\u{0}", "asset_type": "pdf"}),
        ),
    ] {
        let m = fails(create(body), field);
        assert_eq!(m, format!("{field} must not contain NUL characters"));
    }
    fails(
        create(json!({"title": "t", "asset_type": "link", "external_url": "https://a.b/\u{0}"})),
        "external_url",
    );
    let doc = json!({"title": "Kit", "description": "x\u{0}y"});
    let e = library_doc(doc.to_string().as_bytes(), &Config::default()).unwrap_err();
    assert!(matches!(e, ApiError::Validation { ref field, .. } if field == "description"));
}

#[test]
fn several_faults_name_the_first_wrong_type_then_the_first_broken_rule() {
    // Every type right: the first field, in order, whose value breaks a rule.
    fails(create(json!({"title": " ", "asset_type": "nope"})), "title");
    fails(
        create(json!({"title": "A", "asset_type": "nope", "file_path": "../x"})),
        "asset_type",
    );
    fails(
        create(json!({"title": "A", "asset_type": "link", "file_path": "x.pdf"})),
        "external_url",
    );
    // A missing field or a wrong type comes first, wherever it is: typing reads the whole
    // body before any rule.
    fails(create(json!({"asset_type": "nope"})), "title");
    fails(
        create(json!({"title": " ", "is_public": true})),
        "asset_type",
    );
    fails(
        create(json!({"title": " ", "asset_type": "nope", "published": "yes"})),
        "published",
    );
    fails(
        create(json!({"title": " ", "asset_type": "pdf", "file_path": 7})),
        "file_path",
    );
    fails(
        create(json!({"title": 1, "description": 2, "is_public": "no"})),
        "title",
    );
    fails(
        create(json!({"title": "A", "description": 2, "asset_type": 3})),
        "description",
    );
    // The same rules hold however the fields came: a filled struct validates alike.
    let given = AssetFields {
        title: "A",
        description: None,
        asset_type: "pdf",
        external_url: Some("https://example.com"),
        is_public: None,
        published: None,
        file_path: None,
        workspace_id: None,
    };
    fails(given.validate(&Config::default()), "external_url");
}

#[test]
fn workspace_ids_are_short_plain_names() {
    let made = create(json!({"title": "T", "asset_type": "pdf", "workspace_id": "acme_2-b"}));
    assert_eq!(made.unwrap().workspace_id.as_deref(), Some("acme_2-b"));
    let longest = "w".repeat(64);
    let made = create(json!({"title": "T", "asset_type": "pdf", "workspace_id": longest}));
    assert_eq!(made.unwrap().workspace_id, Some("w".repeat(64)));
    for bad in ["", "a b", "acme/x", "café", &"w".repeat(65)] {
        fails(
            create(json!({"title": "T", "asset_type": "pdf", "workspace_id": bad})),
            "workspace_id",
        );
    }
    fails(
        create(json!({"title": "T", "asset_type": "pdf", "workspace_id": 7})),
        "workspace_id",
    );
    let global = create(json!({"title": "T", "asset_type": "pdf", "workspace_id": null}));
    assert_eq!(global.unwrap().workspace_id, None);
}

#[test]
fn external_video_gets_its_embed() {
    let v = create(json!({"title": "t", "asset_type": "external_video",
        "external_url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1m"}))
    .unwrap();
    assert_eq!(
        v.video_embed.as_deref(),
        Some("https://www.youtube.com/embed/dQw4w9WgXcQ?start=60")
    );
    fails(
        create(
            json!({"title": "t", "asset_type": "external_video", "external_url": "https://example.com/page"}),
        ),
        "external_url",
    );
}

#[test]
fn optional_fields_types_and_nulls() {
    let a = create(
        json!({"title": "t", "asset_type": "image", "description": null, "is_public": null,
        "file_path": null, "unknown": {"deep": [1, 2]}}),
    )
    .unwrap();
    assert_eq!(
        (a.description, a.is_public, a.file_path),
        (None, false, None)
    );
    let a =
        create(json!({"title": "t", "asset_type": "image", "description": "d", "is_public": true}))
            .unwrap();
    assert_eq!((a.description.as_deref(), a.is_public), (Some("d"), true));
    fails(
        create(json!({"title": "t", "asset_type": "image", "is_public": "true"})),
        "is_public",
    );
    fails(
        create(json!({"title": "t", "asset_type": "image", "is_public": 1})),
        "is_public",
    );
    fails(
        create(json!({"title": "t", "asset_type": "image", "description": 1})),
        "description",
    );
    fails(
        create(json!({"title": "t", "asset_type": "image", "file_path": false})),
        "file_path",
    );
}

#[test]
fn bodies_that_are_not_json_objects() {
    let cfg = Config::default();
    for (body, msg) in [
        (&b"{"[..], "Request body is not valid JSON"),
        (b"", "Request body is not valid JSON"),
        (b"title=x", "Request body is not valid JSON"),
        (b"{\"title\": \"a\",}", "Request body is not valid JSON"),
        (b"\xff\xfe", "Request body is not valid JSON"),
        (b"[]", "Request body must be a JSON object"),
        (b"null", "Request body must be a JSON object"),
        (b"\"str\"", "Request body must be a JSON object"),
    ] {
        let m = fails(new_asset(body, &cfg), "body");
        assert!(m.starts_with(msg), "{body:?}: {m}");
        fails(library_doc(body, &cfg), "body");
    }
}

#[test]
fn file_paths() {
    for ok in [
        "a.pdf",
        "reports/2026/q1.pdf",
        "with space/é.png",
        "a..b/c.txt",
        "..hidden",
    ] {
        check_file_path(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for bad in [
        "",
        "/etc/passwd",
        "\\windows\\system32",
        "C:\\x",
        "c:/x",
        "../x",
        "a/../../x",
        "a\\..\\x",
        "a/..",
        "%2e%2e/x",
        "a/%2E%2E/b",
        "%2fetc/passwd",
        "a//b",
        "./a",
        "a/./b",
        "a\0b",
        "a\nb",
        "a%00b",
    ] {
        fails(check_file_path(bad), "file_path");
    }
    fails(
        create(json!({"title": "t", "asset_type": "pdf", "file_path": "../secret.pdf"})),
        "file_path",
    );
    let m = fails(
        create(
            json!({"title": "t", "asset_type": "link", "external_url": "https://a.b",
        "file_path": "a.pdf"}),
        ),
        "file_path",
    );
    assert!(m.contains("only accepted"), "{m}");
    let a = create(json!({"title": "t", "asset_type": "pdf", "file_path": "docs/a.pdf"})).unwrap();
    assert_eq!(a.file_path.as_deref(), Some("docs/a.pdf"));
}

#[test]
fn ids() {
    let id = uuid::Uuid::new_v4();
    assert_eq!(parse_id("asset_id", &id.to_string()).unwrap(), id);
    assert_eq!(
        parse_id("asset_id", &id.to_string().to_uppercase()).unwrap(),
        id
    );
    for bad in [
        "",
        "abc",
        "123",
        &id.simple().to_string(),
        &format!("{{{id}}}"),
        &format!("{id}x"),
    ] {
        let m = fails(parse_id("library_id", bad), "library_id");
        assert_eq!(m, "library_id must be a UUID");
    }
}

#[test]
fn slugs() {
    assert_eq!(slug_from_title("Brand Kit 2026!", "x"), "brand-kit-2026");
    assert_eq!(slug_from_title("Ärger über Café", "x"), "arger-uber-cafe");
    assert_eq!(slug_from_title("漢字", "x"), "han-zi");
    assert_eq!(slug_from_title("!!!", "asset"), "asset");
    assert_eq!(slug_from_title("", "library"), "library");
    let long = slug_from_title(&"word ".repeat(100), "x");
    assert!(long.len() <= MAX_SLUG_LEN && !long.ends_with('-'), "{long}");
    assert!(is_slug("brand-kit-2"));
    for bad in [
        "",
        "Brand",
        "a--b",
        "-a",
        "a-",
        "a b",
        "é",
        &"a".repeat(201),
    ] {
        assert!(!is_slug(bad), "{bad}");
    }
}
