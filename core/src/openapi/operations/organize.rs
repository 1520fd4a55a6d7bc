//! The operations that organize assets, described: the tag list and bulk changes
//! (`crate::service::organize`).

use super::{JSON_BODY_ERRORS, Keys, Spec, json_answer, json_body, read_answer};
use crate::openapi::build::{parameter as p, schema};

/// `Operation::BulkAssets`.
pub(super) fn bulk_assets() -> Spec {
    Spec {
        id: "bulkAssets",
        tag: "assets",
        summary: "Change or delete many assets at once",
        description: "One action on up to 100 assets (`ids`, each once): `patch` sets the \
            fields of `changes` on each, as `PATCH /api/v1/assets/{asset_id}` does, but for \
            `external_url` (400 on `changes.external_url`: links are changed one at a time); \
            `delete` deletes each, as `DELETE` does (`force` as `force=true`); `add_tags` adds \
            `changes.tags` to each asset's tags (those it lacks, ignoring case, after its \
            own); `remove_tags` removes them (ignoring case). The body is checked whole \
            first: a 400 names the field (`ids`, `ids[3]`, `action`, `changes.title`, \
            `changes.tags[1]`, ...) and nothing is changed.\n\n\
            Each asset fares as a request for it alone would: the answer's `results` has one \
            item per id, in order, with that request's status: 200 with the `asset` as \
            changed, 204 for a delete, or the status and `error` body it would have \
            answered (404 for an unknown id; 409 with `libraries` for a delete of an asset \
            libraries hold, without `force`; 400 when tags added would make more than 32). \
            Each asset changed logs its own event (`asset.updated`, `asset.deleted`), and \
            pages and lists show the changes on their next read.\n\n\
            Without `atomic` (the default) the assets are changed one after another and the \
            answer is 200 however many failed. With `atomic: true` every change lands in one \
            store transaction, or none: when any asset fails, the answer is 409 and nothing \
            was changed; its `results` name the assets that failed with their error, and \
            every other one with status 424 (not changed).",
        keys: Keys::Required,
        parameters: vec![],
        body: Some(json_body("BulkChange")),
        answers: vec![
            (
                "200",
                json_answer(
                    "A result per id, in the order of `ids`: `succeeded` and `failed` count \
                     them.",
                    schema("BulkResultEnvelope"),
                ),
            ),
            (
                "409",
                json_answer(
                    "`atomic: true`, and at least one asset could not take the change: \
                     nothing was changed. `results` says which, and why.",
                    schema("BulkConflict"),
                ),
            ),
        ],
        errors: JSON_BODY_ERRORS,
    }
}

/// `Operation::ListTags`.
pub(super) fn list_tags() -> Spec {
    Spec {
        id: "listTags",
        tag: "assets",
        summary: "Tags in use, with their counts",
        description: "The tags of published assets, each with the number of published assets \
            that have it: most used first, then by tag. Tags are compared ignoring case (and \
            surrounding spaces), and named here by that key: trimmed and in lower case, the \
            form the `tag` and `any_tag` filters of `listAssets` take. Drafts are not \
            counted. At most `limit` tags (default 100, at most 1000).",
        keys: Keys::Required,
        parameters: vec![p("TagLimit"), p("IfNoneMatch")],
        body: None,
        answers: vec![(
            "200",
            read_answer("The tags, most used first.", schema("TagList")),
        )],
        errors: &["BadRequest"],
    }
}
