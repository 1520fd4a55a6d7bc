//! The operations that organize assets: bulk changes and the tag list.

use super::{Keys, Spec, json_answer, json_body, read_answer};
use crate::openapi::build::{parameter as p, schema};

/// `Operation::BulkAssets`.
pub(super) fn bulk_assets() -> Spec {
    Spec {
        id: "bulkAssets",
        tag: "assets",
        summary: "Change many assets at once",
        description: "One action on up to 100 assets.",
        keys: Keys::Required,
        parameters: vec![],
        body: Some(json_body("BulkChange")),
        answers: vec![("200", json_answer("A result per id, in order.", schema("BulkResult")))],
        errors: &["BadRequest", "Conflict"],
    }
}

/// `Operation::ListTags`.
pub(super) fn list_tags() -> Spec {
    Spec {
        id: "listTags",
        tag: "assets",
        summary: "Tags with their counts",
        description: "The tags of published assets, most used first.",
        keys: Keys::Required,
        parameters: vec![p("IfNoneMatch")],
        body: None,
        answers: vec![("200", read_answer("The tags.", schema("TagList")))],
        errors: &["BadRequest"],
    }
}
