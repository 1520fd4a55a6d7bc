//! Small helpers for writing JSON Schema and OpenAPI objects.

use serde_json::{Map, Value, json};

/// A reference to `#/components/{kind}/{name}`.
fn reference(kind: &str, name: &str) -> Value {
    json!({"$ref": format!("#/components/{kind}/{name}")})
}

/// A reference to the schema `name`.
pub(super) fn schema(name: &str) -> Value {
    reference("schemas", name)
}

/// A reference to the shared response `name`.
pub(super) fn response(name: &str) -> Value {
    reference("responses", name)
}

/// A reference to the shared parameter `name`.
pub(super) fn parameter(name: &str) -> Value {
    reference("parameters", name)
}

/// A reference to the shared header `name`.
pub(super) fn header(name: &str) -> Value {
    reference("headers", name)
}

/// `schema`, with `description`.
pub(super) fn describe(mut schema: Value, description: &str) -> Value {
    if let Value::Object(map) = &mut schema {
        map.insert("description".into(), description.into());
    }
    schema
}

/// `schema` or `null`: a nullable type adds `"null"` to its `type` (and to its `enum`); a
/// reference (narrowed or not) becomes `anyOf` it and `null`.
pub(super) fn or_null(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    if map.contains_key("$ref") {
        let mut outer = Map::new();
        let description = map.remove("description");
        outer.insert(
            "anyOf".into(),
            json!([Value::Object(map), {"type": "null"}]),
        );
        if let Some(description) = description {
            outer.insert("description".into(), description);
        }
        return Value::Object(outer);
    }
    if let Some(Value::String(kind)) = map.get("type").cloned() {
        map.insert("type".into(), json!([kind, "null"]));
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.push(Value::Null);
    }
    Value::Object(map)
}

/// A string.
pub(super) fn string() -> Value {
    json!({"type": "string"})
}

/// A UUID in its hyphenated form.
pub(super) fn uuid() -> Value {
    json!({"type": "string", "format": "uuid"})
}

/// A count of bytes: a whole number of 64 bits (`format: int64`, else some clients read an
/// `int` of 32 and fail past 2 GiB).
pub(super) fn byte_count() -> Value {
    json!({"type": "integer", "minimum": 0, "format": "int64"})
}

/// A boolean.
pub(super) fn boolean() -> Value {
    json!({"type": "boolean"})
}

/// One of `values`, all strings.
pub(super) fn one_of_strings(values: &[&str]) -> Value {
    json!({"type": "string", "enum": values})
}

/// Exactly `value`: a one-value `enum` (never `const`, which openapi-python-client takes for a
/// `Literal` it refuses in a header, dropping the operation).
pub(super) fn only(value: impl Into<Value>) -> Value {
    let value = value.into();
    let kind = match value {
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        _ => "string",
    };
    json!({"type": kind, "enum": [value]})
}

/// The string enum schema `name`, narrowed to `values` (some of its own): a `$ref`, so that
/// generated clients name one type, with the `enum` beside it that validators apply too.
pub(super) fn narrowed(name: &str, values: &[&str]) -> Value {
    let mut narrowed = schema(name);
    narrowed["enum"] = json!(values);
    narrowed
}

/// An array of `items`.
pub(super) fn array(items: Value) -> Value {
    json!({"type": "array", "items": items})
}

/// An object with `properties` (in order), of which `required` are always present. Other
/// properties are not forbidden: clients should ignore fields they do not know.
pub(super) fn object(properties: Vec<(&str, Value)>, required: &[&str]) -> Value {
    let properties: Map<String, Value> = properties
        .into_iter()
        .map(|(name, schema)| (name.to_owned(), schema))
        .collect();
    let mut map = Map::new();
    map.insert("type".into(), "object".into());
    map.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        map.insert("required".into(), json!(required));
    }
    Value::Object(map)
}

/// The names of an object schema's properties, for a `required` list of all of them.
pub(super) fn names<'a>(properties: &'a [(&'a str, Value)]) -> Vec<&'a str> {
    properties.iter().map(|(name, _)| *name).collect()
}

/// A media type object of raw bytes of `media_type`: OpenAPI 3.1 gives them no JSON Schema
/// type (3.0's `type: string, format: binary` reads them as a string), only their
/// `contentMediaType`.
pub(super) fn raw_bytes(media_type: &str) -> Value {
    json!({"schema": {"contentMediaType": media_type}})
}

/// A JSON body of `schema`.
pub(super) fn json_content(schema: Value) -> Value {
    json!({"application/json": {"schema": schema}})
}

/// What registers schemas (or request bodies) of its own into a map another module makes, by
/// name: a module that uses the maker's builders is handed to it this way, so the maker need
/// not name it.
pub(super) type Registrar = fn(&mut dyn FnMut(&str, Value));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_types_enums_and_references() {
        assert_eq!(or_null(string()), json!({"type": ["string", "null"]}));
        assert_eq!(
            or_null(one_of_strings(&["a"])),
            json!({"type": ["string", "null"], "enum": ["a", null]})
        );
        assert_eq!(
            or_null(describe(schema("X"), "d")),
            json!({"anyOf": [{"$ref": "#/components/schemas/X"}, {"type": "null"}],
                "description": "d"})
        );
        assert_eq!(
            or_null(narrowed("X", &["a"])),
            json!({"anyOf": [{"$ref": "#/components/schemas/X", "enum": ["a"]},
                {"type": "null"}]})
        );
        assert_eq!(only(true), json!({"type": "boolean", "enum": [true]}));
        assert_eq!(only("PUT"), json!({"type": "string", "enum": ["PUT"]}));
    }
}
