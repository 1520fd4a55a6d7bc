//! The document against the code: its paths and methods are the route table's, its
//! security requirements are the scope table's, and everything it refers to exists.

use std::collections::BTreeSet;

use serde_json::Value;

use super::document;
use crate::routes::{Operation, ROUTES};

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// A path with each `{name}` spelled `{}`: the document names its path ids (`asset_id`,
/// `webhook_id`, ...) where the route table has `{id}`, `{pass_id}` or `{delivery_id}`.
fn as_route(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{') && segment.ends_with('}') {
                "{}"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Every operation of the document: (method, path as the route table spells it, operation).
fn operations(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut all = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            assert!(METHODS.contains(&method.as_str()), "{path}: {method}");
            all.push((method.to_ascii_uppercase(), as_route(path), operation));
        }
    }
    all
}

fn route_operation(method: &str, path: &str) -> Option<Operation> {
    ROUTES
        .iter()
        .find(|r| as_route(r.path) == path)
        .and_then(|r| r.methods.iter().find(|(m, _)| *m == method))
        .map(|(_, op)| *op)
}

#[test]
fn the_paths_and_methods_are_the_route_table() {
    let doc = document();
    let documented: BTreeSet<(String, String)> = operations(&doc)
        .into_iter()
        .map(|(method, path, _)| (method, path))
        .collect();
    // HEAD is implicit wherever GET is, in the route table and in the document alike.
    let routed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .flat_map(|r| {
            r.methods
                .iter()
                .map(|(m, _)| ((*m).to_owned(), as_route(r.path)))
        })
        .collect();
    let missing: Vec<_> = routed.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&routed).collect();
    assert!(
        missing.is_empty(),
        "routes missing from the document: {missing:?}"
    );
    assert!(extra.is_empty(), "operations that are no route: {extra:?}");
}

#[test]
fn each_operation_needs_the_scopes_of_the_scope_table() {
    let doc = document();
    for (method, path, operation) in operations(&doc) {
        let op = route_operation(&method, &path).expect("a route");
        let scopes: Vec<&str> = op.scopes().iter().map(|s| s.as_str()).collect();
        let description = operation["description"].as_str().expect("description");
        let security = operation["security"].as_array().expect("security");
        if !op.needs_key() {
            assert!(security.is_empty(), "{method} {path}");
            assert!(description.ends_with("No key needed."), "{method} {path}");
            continue;
        }
        let roles: Vec<&str> = security[0]["bearerAuth"]
            .as_array()
            .expect("bearerAuth")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(roles, scopes, "{method} {path}");
        let named: Vec<String> = scopes.iter().map(|s| format!("`{s}`")).collect();
        let needs = match scopes.is_empty() {
            true => "Any key: no scope of its own.".to_owned(),
            false => format!("Scopes: {}.", named.join(", ")),
        };
        assert!(
            description.ends_with(&needs),
            "{method} {path}: {description}"
        );
        // Only the keyless reads of one asset (and its image presets) and the signed
        // downloads and variants take no key.
        let keyless = security
            .iter()
            .any(|s| s.as_object().is_some_and(|o| o.is_empty()));
        let may_be_keyless = matches!(
            op,
            Operation::GetAsset
                | Operation::DownloadAsset
                | Operation::DownloadLibrary
                | Operation::AssetImage
        );
        assert_eq!(keyless, may_be_keyless, "{method} {path}");
        for status in ["401", "403", "429", "500"] {
            assert!(
                operation["responses"][status].is_object(),
                "{method} {path}: {status}"
            );
        }
    }
}

/// Follows a local `$ref`.
fn resolve<'d>(doc: &'d Value, value: &'d Value) -> &'d Value {
    match value["$ref"].as_str() {
        Some(reference) => {
            let target = doc
                .pointer(reference.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("unresolved {reference}"));
            resolve(doc, target)
        }
        None => value,
    }
}

fn every_reference<'d>(value: &'d Value, found: &mut Vec<&'d str>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get("$ref") {
                found.push(r);
            }
            map.values().for_each(|v| every_reference(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| every_reference(v, found)),
        _ => {}
    }
}

#[test]
fn every_reference_resolves_and_every_path_parameter_is_declared() {
    let doc = document();
    let mut references = Vec::new();
    every_reference(&doc, &mut references);
    assert!(!references.is_empty());
    for reference in references {
        assert!(
            doc.pointer(reference.trim_start_matches('#')).is_some(),
            "unresolved {reference}"
        );
    }
    for (path, item) in doc["paths"].as_object().expect("paths") {
        let named: BTreeSet<&str> = path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .collect();
        for (method, operation) in item.as_object().expect("path item") {
            let declared: BTreeSet<&str> = operation["parameters"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .map(|p| resolve(&doc, p))
                        .filter(|p| p["in"] == "path")
                        .filter_map(|p| p["name"].as_str())
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(declared, named, "{method} {path}");
        }
    }
}

#[test]
fn json_reads_answer_304_and_every_error_is_described() {
    let doc = document();
    for (method, path, operation) in operations(&doc) {
        let op = route_operation(&method, &path).expect("a route");
        assert_eq!(
            operation["responses"]["304"].is_object(),
            op.answers_not_modified(),
            "{method} {path}"
        );
        for (status, answer) in operation["responses"].as_object().expect("responses") {
            let answer = resolve(&doc, answer);
            assert!(
                answer["description"].is_string(),
                "{method} {path} {status}"
            );
        }
    }
}

#[test]
fn the_bytes_are_stable_and_end_with_a_line_break() {
    let text = super::to_json();
    assert_eq!(text, super::to_json());
    assert!(text.ends_with("}\n"));
    let parsed: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(parsed, document());
}
