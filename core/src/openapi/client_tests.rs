//! The document against what client generators need (openapi-python-client, openapi-typescript
//! and openapi-fetch, @hey-api/openapi-ts, openapi-generator's Java and Rust clients): every
//! operation must survive generation with a usable type for each part of it. Each test states
//! one rule; `core/tests/integration/openapi_client.rs` generates a Python client for real.

use serde_json::{Map, Value};

use super::document;
use crate::model::AssetType;

/// Where `AssetType` lives.
const ASSET_TYPE: &str = "#/components/schemas/AssetType";

/// Where `ErrorKind` lives.
const ERROR_KIND: &str = "#/components/schemas/ErrorKind";

/// Keys whose objects map names to values (properties, components, media types, ...), not
/// schema keywords: a name there is no keyword.
const NAME_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "schemas",
    "parameters",
    "headers",
    "responses",
    "securitySchemes",
    "paths",
    "content",
    "links",
    "mapping",
    "examples",
];

/// Calls `visit` with every object of `value` that is no map of names, and its JSON pointer.
fn walk<'v>(value: &'v Value, at: &str, visit: &mut impl FnMut(&str, &'v Map<String, Value>)) {
    match value {
        Value::Object(map) => {
            let names = at
                .rsplit('/')
                .next()
                .is_some_and(|k| NAME_MAPS.contains(&k));
            if !names {
                visit(at, map);
            }
            for (key, inner) in map {
                walk(inner, &format!("{at}/{key}"), visit);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                walk(inner, &format!("{at}/{i}"), visit);
            }
        }
        _ => {}
    }
}

/// `value`, with a local `$ref` followed (once).
fn resolve<'d>(doc: &'d Value, value: &'d Value) -> &'d Value {
    value["$ref"]
        .as_str()
        .and_then(|r| doc.pointer(r.trim_start_matches('#')))
        .unwrap_or(value)
}

/// Every operation: its pointer (`/paths/~1api~1v1~1assets/get`) and its object.
fn operations(doc: &Value) -> Vec<(String, &Value)> {
    let mut all = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            let path = path.replace('~', "~0").replace('/', "~1");
            all.push((format!("/paths/{path}/{method}"), operation));
        }
    }
    all
}

/// Every parameter an operation names, resolved, with where it is.
fn parameters(doc: &Value) -> Vec<(String, &Value)> {
    let mut all = Vec::new();
    for (at, operation) in operations(doc) {
        for (i, parameter) in operation["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            all.push((format!("{at}/parameters/{i}"), resolve(doc, parameter)));
        }
    }
    all
}

/// Every response of every operation, resolved: where it is, its status and the response.
fn responses(doc: &Value) -> Vec<(String, &str, &Value)> {
    let mut all = Vec::new();
    for (at, operation) in operations(doc) {
        for (status, response) in operation["responses"].as_object().expect("responses") {
            all.push((
                format!("{at}/responses/{status}"),
                status.as_str(),
                resolve(doc, response),
            ));
        }
    }
    all
}

/// The schema's types: `type` as a list (`"string"` is `["string"]`).
fn types(schema: &Value) -> Vec<&str> {
    match &schema["type"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    }
}

/// D1: no `const` anywhere. openapi-python-client drops an operation with a `const` header
/// (`Literal['1.0.0'] is not allowed in header`); a one-value `enum` says the same.
#[test]
fn no_schema_is_a_const() {
    let doc = document();
    let mut found = Vec::new();
    walk(&doc, "", &mut |at, map| {
        if map.contains_key("const") {
            found.push(at.to_owned());
        }
    });
    assert!(
        found.is_empty(),
        "`const` (use a one-value `enum`) at {found:#?}"
    );
    let tus = &doc["components"]["parameters"]["TusResumable"]["schema"];
    assert_eq!(
        allowed(&doc, tus),
        [crate::tus::VERSION],
        "Tus-Resumable: {tus}"
    );
}

/// D2: a parameter that is a boolean is a boolean, not a string enum of `true`, `false`, `1`
/// and `0` (the server still takes `1` and `0`, which the description says).
#[test]
fn boolean_parameters_are_booleans() {
    let doc = document();
    for (at, parameter) in parameters(&doc) {
        let schema = &parameter["schema"];
        let texts: Vec<&str> = schema["enum"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        assert!(
            !(texts.contains(&"true") || texts.contains(&"false")),
            "{at} ({}): a string enum of booleans: {schema}",
            parameter["name"]
        );
    }
    for name in ["IncludeAssets", "Force"] {
        let parameter = &doc["components"]["parameters"][name];
        assert_eq!(parameter["schema"]["type"], "boolean", "{name}");
        assert_eq!(parameter["schema"]["default"], false, "{name}");
        let description = parameter["description"].as_str().unwrap_or_default();
        assert!(
            description.contains("`1`") && description.contains("`0`"),
            "{name}: its description names `1` and `0`: {description}"
        );
    }
}

/// Whether a schema says what it holds: a `type`, a `$ref`, or alternatives that all do.
fn typed(schema: &Value) -> bool {
    if schema.get("type").is_some() || schema.get("$ref").is_some() {
        return true;
    }
    ["anyOf", "oneOf"].iter().any(|k| {
        schema[k]
            .as_array()
            .is_some_and(|items| !items.is_empty() && items.iter().all(typed))
    })
}

/// D3: every part of every multipart body has a type (else clients see `Any`, `unknown` or
/// `Object`).
#[test]
fn every_multipart_part_is_typed() {
    let doc = document();
    let mut parts = 0;
    for (at, operation) in operations(&doc) {
        let Some(form) = operation["requestBody"]["content"].get("multipart/form-data") else {
            continue;
        };
        let schema = resolve(&doc, &form["schema"]);
        let properties = schema["properties"].as_object().expect("a form's parts");
        for (name, part) in properties {
            parts += 1;
            assert!(typed(part), "{at}: the part `{name}` has no type: {part}");
        }
    }
    assert!(
        parts >= 8,
        "the upload form and the file form: {parts} parts"
    );
}

/// The values of `schema`'s `enum` that are strings.
fn texts(schema: &Value) -> Vec<&str> {
    schema["enum"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The string values a schema allows by `enum`: its own, its `$ref`'s, or its alternatives'.
fn allowed<'d>(doc: &'d Value, schema: &'d Value) -> Vec<&'d str> {
    let mut values = texts(schema);
    if schema.get("$ref").is_some() {
        values.extend(allowed(doc, resolve(doc, schema)));
    }
    for alternatives in ["anyOf", "oneOf"] {
        for alternative in schema[alternatives].as_array().into_iter().flatten() {
            values.extend(allowed(doc, alternative));
        }
    }
    values
}

/// Whether a schema, or one it refers to or offers, has a `pattern`.
fn patterned(doc: &Value, schema: &Value) -> bool {
    schema.get("pattern").is_some()
        || (schema.get("$ref").is_some() && patterned(doc, resolve(doc, schema)))
        || ["anyOf", "oneOf"].iter().any(|k| {
            schema[k]
                .as_array()
                .is_some_and(|items| items.iter().any(|i| patterned(doc, i)))
        })
}

/// D4: `on_duplicate` (a query parameter and a body field) is an enum, not a pattern.
#[test]
fn on_duplicate_is_an_enum() {
    let doc = document();
    let mut schemas = Vec::new();
    for (at, parameter) in parameters(&doc) {
        if parameter["name"] == "on_duplicate" {
            schemas.push((at, parameter["schema"].clone()));
        }
    }
    walk(&doc, "", &mut |at, map| {
        if let Some(schema) = map.get("properties").and_then(|p| p.get("on_duplicate")) {
            schemas.push((at.to_owned(), schema.clone()));
        }
    });
    assert!(schemas.len() >= 2, "on_duplicate found at {schemas:?}");
    for (at, schema) in schemas {
        assert!(!patterned(&doc, &schema), "{at}: a pattern: {schema}");
        let values = allowed(&doc, &schema);
        for value in ["allow", "reject", "reuse"] {
            assert!(
                values.contains(&value),
                "{at}: `{value}` not in its enum: {schema}"
            );
        }
    }
}

/// D5: every error answer's body is a `$ref` to a schema named once (`NotFoundError`, ...),
/// never a schema of its own: generators make a class of each inline schema, one per
/// operation and status (181 of them in the Python client).
#[test]
fn error_answers_refer_to_named_schemas() {
    let doc = document();
    let mut checked = 0;
    for (at, status, response) in responses(&doc) {
        if !status.starts_with('4') && !status.starts_with('5') {
            continue;
        }
        let Some(content) = response["content"].as_object() else {
            continue;
        };
        for (media, body) in content {
            let schema = &body["schema"];
            let reference = schema["$ref"].as_str().unwrap_or_default();
            assert!(
                schema.as_object().is_some_and(|s| s.len() == 1)
                    && reference.starts_with("#/components/schemas/"),
                "{at} {media}: not a `$ref` to a named schema: {schema}"
            );
            assert!(
                resolve(&doc, schema) != schema,
                "{at}: {reference} is no schema"
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} error answers");
    // The shared error answers too, operation or not.
    for (name, response) in doc["components"]["responses"]
        .as_object()
        .expect("responses")
    {
        for body in response["content"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(_, b)| b)
        {
            let schema = body["schema"].as_object().expect("a schema");
            assert!(
                schema.len() == 1 && schema.contains_key("$ref"),
                "the response {name}: not a `$ref`: {schema:?}"
            );
        }
    }
}

/// D6: the asset types are the schema `AssetType` everywhere: an enum of asset types stands
/// beside a `$ref` to it (narrowing it to some), never alone.
#[test]
fn asset_types_refer_to_the_asset_type_schema() {
    let doc = document();
    let all: Vec<&str> = AssetType::ALL.iter().map(|t| t.as_str()).collect();
    let mut narrowed = 0;
    walk(&doc, "", &mut |at, map| {
        let Some(Value::Array(values)) = map.get("enum") else {
            return;
        };
        let of_types = values
            .iter()
            .filter_map(Value::as_str)
            .any(|v| all.contains(&v));
        if !of_types || at == "/components/schemas/AssetType" {
            return;
        }
        assert_eq!(
            map.get("$ref").and_then(Value::as_str),
            Some(ASSET_TYPE),
            "{at}: an enum of asset types of its own: {values:?}"
        );
        narrowed += 1;
    });
    // Every `asset_type` refers to it, alone or narrowed, or (nullable) among alternatives.
    let mut referring = 0;
    let refers = |schema: &Value| {
        schema["$ref"] == ASSET_TYPE
            || ["anyOf", "oneOf"].iter().any(|k| {
                schema[k]
                    .as_array()
                    .is_some_and(|items| items.iter().any(|i| i["$ref"] == ASSET_TYPE))
            })
    };
    for (at, parameter) in parameters(&doc) {
        if parameter["name"] == "asset_type" {
            assert!(refers(&parameter["schema"]), "{at}: {parameter}");
            referring += 1;
        }
    }
    walk(&doc, "", &mut |at, map| {
        if let Some(schema) = map.get("properties").and_then(|p| p.get("asset_type")) {
            assert!(refers(schema), "{at}: asset_type is no AssetType: {schema}");
            referring += 1;
        }
    });
    assert!(
        narrowed >= 8 && referring >= 12,
        "{narrowed} narrowed, {referring} refer"
    );
}

/// Whether `schema` (or, nullable, one of its alternatives) is an integer of `format: int64`.
fn int64(schema: &Value) -> bool {
    let alone = |s: &Value| types(s).contains(&"integer") && s["format"] == "int64";
    alone(schema)
        || ["anyOf", "oneOf"].iter().any(|k| {
            schema[k]
                .as_array()
                .is_some_and(|items| items.iter().any(alone))
        })
}

/// D7: every byte count (`file_size`, an upload's `length`, `offset` and `size`, the
/// `Content-Length`, `Upload-Length` and `Upload-Offset` headers) is an integer of
/// `format: int64`: without it a Java client reads an `int` and fails past 2 GiB.
#[test]
fn byte_counts_are_int64() {
    let doc = document();
    let mut checked = Vec::new();
    walk(&doc, "", &mut |at, map| {
        let Some(properties) = map.get("properties").and_then(Value::as_object) else {
            return;
        };
        for (name, schema) in properties {
            if ["file_size", "size", "length", "offset"].contains(&name.as_str()) {
                assert!(int64(schema), "{at}/properties/{name}: {schema}");
                checked.push(format!("{at}/{name}"));
            }
        }
    });
    const HEADERS: &[&str] = &["Content-Length", "Upload-Length", "Upload-Offset"];
    for (at, parameter) in parameters(&doc) {
        let name = parameter["name"].as_str().unwrap_or_default();
        if HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name)) {
            assert!(int64(&parameter["schema"]), "{at} ({name}): {parameter}");
            checked.push(at);
        }
    }
    for (at, _, response) in responses(&doc) {
        for (name, header) in response["headers"].as_object().into_iter().flatten() {
            if HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name)) {
                let header = resolve(&doc, header);
                assert!(int64(&header["schema"]), "{at} header {name}: {header}");
                checked.push(format!("{at}/{name}"));
            }
        }
    }
    // file_size in each of the 8 asset schemas, Upload's 2, DirectUpload's and its body's
    // size; the two request headers; the answers' headers.
    assert!(checked.len() >= 20, "{checked:#?}");
}

/// Whether a media type is one of JSON, which holds a schema of JSON values.
fn json_media(media: &str) -> bool {
    media == "application/json" || media.ends_with("+json")
}

/// D9: raw bytes (downloads, image variants, the zip, tus bodies) are a media type without a
/// JSON schema, as OpenAPI 3.1 says: no `format: binary` in any answer and no `type: string`
/// for a raw body (openapi-core rejects a real download read as a string).
#[test]
fn raw_bytes_have_no_string_schema() {
    let doc = document();
    let mut raw = 0;
    let mut bodies: Vec<(String, &Value)> = Vec::new();
    for (at, _, response) in responses(&doc) {
        bodies.push((at, &response["content"]));
    }
    for (at, operation) in operations(&doc) {
        bodies.push((
            format!("{at}/requestBody"),
            &operation["requestBody"]["content"],
        ));
    }
    for (at, content) in bodies {
        for (media, body) in content.as_object().into_iter().flatten() {
            let schema = &body["schema"];
            if !at.contains("/responses/") && media == "multipart/form-data" {
                continue;
            }
            let mut binary = Vec::new();
            walk(schema, "", &mut |inner, map| {
                if map.get("format").and_then(Value::as_str) == Some("binary") {
                    binary.push(inner.to_owned());
                }
            });
            assert!(
                binary.is_empty(),
                "{at} {media}: `format: binary` at {binary:?}"
            );
            if !json_media(media) {
                raw += 1;
                assert!(
                    schema.is_null()
                        || (schema.get("type").is_none()
                            && schema.get("contentMediaType").is_some()),
                    "{at} {media}: raw bytes with a schema: {schema}"
                );
            }
        }
    }
    assert!(raw >= 8, "{raw} raw bodies");
}

/// D8: the schema `Error` names its `error` by the schema `ErrorKind`, not by an enum of its
/// own (openapi-generator's Rust client names both `Error`, and does not compile); so does
/// every other error body.
#[test]
fn error_kinds_are_the_error_kind_schema() {
    let doc = document();
    let kind = &doc["components"]["schemas"]["ErrorKind"];
    assert_eq!(kind["type"], "string");
    assert_eq!(texts(kind), super::schemas::ERROR_TEXTS);
    let error = &doc["components"]["schemas"]["Error"]["properties"]["error"];
    assert_eq!(error["$ref"], ERROR_KIND, "Error.error: {error}");
    assert!(error.get("enum").is_none(), "Error.error: {error}");
    let mut named = 0;
    for (name, schema) in doc["components"]["schemas"].as_object().expect("schemas") {
        let Some(error) = schema["properties"].get("error") else {
            continue;
        };
        if error.get("anyOf").is_some() {
            // `BulkItemResult`: one of the error bodies.
            continue;
        }
        assert_eq!(error["$ref"], ERROR_KIND, "{name}.error: {error}");
        named += 1;
    }
    assert!(named >= 10, "{named} error schemas");
}
