//! Tests of the route table and `match_route`.

use super::*;

fn op(path: &str, method: &str) -> Option<(Operation, Option<String>)> {
    match match_route(path) {
        RouteMatch::Route { route, ids } => route
            .operation(method)
            .map(|op| (op, (!ids.is_empty()).then(|| ids.join("/")))),
        _ => None,
    }
}

/// `expected` when this build has its operation's capability; else the path is no route.
fn built(expected: (Operation, Option<String>)) -> Option<(Operation, Option<String>)> {
    expected.0.is_built().then_some(expected)
}

#[test]
fn routes_match_by_segment() {
    assert_eq!(
        op("/api/v1/assets", "GET"),
        Some((Operation::ListAssets, None))
    );
    assert_eq!(
        op("/api/v1/assets", "HEAD"),
        Some((Operation::ListAssets, None))
    );
    assert_eq!(
        op("/api/v1/assets", "POST"),
        Some((Operation::CreateAsset, None))
    );
    assert_eq!(op("/api/v1/assets", "PUT"), None);
    assert_eq!(
        op("/api/v1/libraries/x/passes/p%2D1", "DELETE"),
        built((Operation::RevokePass, Some("x/p-1".into())))
    );
    assert_eq!(
        op("/api/v1/libraries/x/passes", "POST"),
        built((Operation::CreatePass, Some("x".into())))
    );
    assert_eq!(
        op("/api/v1/assets/abc", "GET"),
        Some((Operation::GetAsset, Some("abc".into())))
    );
    assert_eq!(
        op("/api/v1/assets/a%2Db", "GET"),
        Some((Operation::GetAsset, Some("a-b".into())))
    );
    assert_eq!(
        op("/api/v1/libraries/x", "DELETE"),
        Some((Operation::DeleteLibrary, Some("x".into())))
    );
    assert_eq!(
        op("/api/v1/libraries/x", "PUT"),
        Some((Operation::PutLibrary, Some("x".into())))
    );
    for missing in [
        "/api/v1",
        "/api/v1/",
        "/api/v1/assets/",
        "/api/v1/assets//",
        "/api/v1/assets/a/b",
        "/api/v1/libraries/x/passes/",
        "/api/v1/libraries/x/passes/p/q",
        "/api/v1/nope",
    ] {
        assert_eq!(match_route(missing), RouteMatch::NotFound, "{missing}");
    }
    for outside in ["/", "/api", "/api/v10/assets", "/files/x", ""] {
        assert_eq!(match_route(outside), RouteMatch::Outside, "{outside}");
    }
}

#[test]
fn thumbnails_live_under_the_default_files_base_url() {
    let base = crate::Config::default().files_base_url;
    assert_eq!(THUMBNAIL_ROUTE, format!("{base}thumbnails/{{name}}"));
}

#[test]
fn every_route_allows_what_it_serves() {
    for route in ROUTES {
        for (method, _) in route.methods {
            assert!(
                route.allow.split(", ").any(|m| m == *method),
                "{}",
                route.path
            );
        }
        if route.operation("GET").is_some() {
            assert!(route.allow.contains("HEAD"), "{}", route.path);
        }
    }
}
