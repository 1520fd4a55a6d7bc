//! The schemas derived from the wire types (`utoipa::ToSchema`), as JSON.
//!
//! The wire types write every field they have, `null` where a value is unknown, so each of
//! their properties is required, an `Option` too; a derive marks only the fields that are no
//! `Option` as required, so [`of`] marks them all. Doc comments become descriptions; their
//! lines, wrapped for the source, are joined into paragraphs again.

use serde_json::Value;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

/// The schema of `T` as JSON, with every property of each object required.
pub(super) fn of<T: utoipa::PartialSchema>() -> Value {
    let mut schema = T::schema();
    every_property_required(&mut schema);
    // A schema always serializes: its keys are strings.
    let mut value = serde_json::to_value(schema).unwrap_or_default();
    join_lines(&mut value);
    unsigned_ranges(&mut value);
    value
}

/// The properties of the `index`th item of `T`'s `oneOf` (a derived untagged enum: one item
/// per variant, in the order of the variants), in the order of the fields.
pub(super) fn variant<T: utoipa::PartialSchema>(index: usize) -> Vec<(String, Value)> {
    properties(&of::<T>()["oneOf"][index])
}

/// The properties of a derived object schema, in the order of the fields (that of its
/// `required`, which names them all).
pub(super) fn properties(schema: &Value) -> Vec<(String, Value)> {
    let order = schema["required"].as_array().cloned().unwrap_or_default();
    order
        .iter()
        .filter_map(Value::as_str)
        .map(|name| (name.to_owned(), schema["properties"][name].clone()))
        .collect()
}

/// Marks every property of every object in `schema` required, in the order of the fields.
fn every_property_required(schema: &mut RefOr<Schema>) {
    let RefOr::T(schema) = schema else {
        return;
    };
    match schema {
        Schema::Object(object) => {
            object.required = object.properties.keys().cloned().collect();
            object
                .properties
                .values_mut()
                .for_each(every_property_required);
        }
        Schema::OneOf(one_of) => one_of.items.iter_mut().for_each(every_property_required),
        Schema::AllOf(all_of) => all_of.items.iter_mut().for_each(every_property_required),
        Schema::AnyOf(any_of) => any_of.items.iter_mut().for_each(every_property_required),
        _ => {}
    }
}

/// States the range of unsigned integers as JSON Schema and OpenAPI do: the derive writes `u32`
/// and `u64` as formats (`minimum: 0` it writes too), which no validator or generator knows; a
/// `u32` gets its `maximum` instead, a `u64` `format: int64` (every count of the API fits in
/// it), so that clients read counts and sizes past 2^31 (a Java client's `int` would not).
fn unsigned_ranges(value: &mut Value) {
    match value {
        Value::Object(map) => {
            match map.get("format").and_then(Value::as_str) {
                Some("u-int32" | "uint32") => {
                    map.remove("format");
                    map.insert("maximum".into(), u32::MAX.into());
                }
                Some("u-int64" | "uint64") => {
                    map.insert("format".into(), "int64".into());
                }
                _ => {}
            }
            map.values_mut().for_each(unsigned_ranges);
        }
        Value::Array(items) => items.iter_mut().for_each(unsigned_ranges),
        _ => {}
    }
}

/// Joins the source-wrapped lines of every `description` (a line break between two lines of
/// text is a space; an empty line, a new paragraph, stays).
fn join_lines(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(text)) = map.get_mut("description") {
                *text = text
                    .split("\n\n")
                    .map(|paragraph| paragraph.replace('\n', " "))
                    .collect::<Vec<_>>()
                    .join("\n\n");
            }
            map.values_mut().for_each(join_lines);
        }
        Value::Array(items) => items.iter_mut().for_each(join_lines),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn options_are_required_and_nullable_and_lines_are_joined() {
        /// First line
        /// and second.
        ///
        /// Another paragraph.
        #[derive(utoipa::ToSchema)]
        #[allow(dead_code)]
        struct Probe {
            /// A count.
            count: u64,
            maybe: Option<String>,
            side: u32,
        }
        let schema = of::<Probe>();
        assert_eq!(schema["required"], json!(["count", "maybe", "side"]));
        assert_eq!(
            schema["properties"]["count"],
            json!({"type": "integer", "minimum": 0, "format": "int64", "description": "A count."})
        );
        assert_eq!(
            schema["properties"]["side"],
            json!({"type": "integer", "minimum": 0, "maximum": u32::MAX})
        );
        assert_eq!(
            schema["properties"]["maybe"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(
            schema["description"],
            "First line and second.\n\nAnother paragraph."
        );
    }
}
