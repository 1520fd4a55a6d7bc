//! The document's parts for organizing assets: the bodies of `POST /api/v1/assets/bulk`
//! (`BulkChange` and its four actions) and the schemas of its answers and of the tag list
//! (`BulkResult`, `BulkItemResult`, `BulkConflict`, `TagCount`, `TagList`).

use serde_json::{Value, json};

use super::bodies::{patch_fields, tag};
use super::build::{
    array, boolean, describe, names, object, one_of_strings, only, or_null, schema, string, uuid,
};
use super::derived;
use super::schemas::{envelope, replaced, whole};
use crate::model::TagCount;

/// Adds the bulk change's bodies.
pub(super) fn add_bodies(add: &mut dyn FnMut(&str, Value)) {
    add("BulkChange", bulk_change());
    add("BulkPatch", bulk_patch());
    add("BulkDelete", bulk_delete());
    add("BulkAddTags", bulk_tag_change(true));
    add("BulkRemoveTags", bulk_tag_change(false));
    add("BulkPatchChanges", bulk_patch_changes());
}

/// Adds the schemas of the bulk change's answers and of the tag list.
pub(super) fn add_schemas(add: &mut dyn FnMut(&str, Value)) {
    add("TagCount", tag_count());
    add("TagList", envelope(array(schema("TagCount")), None));
    add("BulkResult", bulk_result());
    add("BulkResultEnvelope", envelope(schema("BulkResult"), None));
    add("BulkItemResult", bulk_item_result());
    add("BulkConflict", bulk_conflict());
}

/// `POST /api/v1/assets/bulk` ([`crate::validate::bulk_doc`]): one schema per action, told
/// apart by `action`.
fn bulk_change() -> Value {
    let reference = |name: &str| format!("#/components/schemas/{name}");
    json!({
        "description": "One action on up to 100 assets: `patch` (the fields of `changes` \
            set on each, as `PATCH` sets them), `delete` (`force` as for one delete), \
            `add_tags` or `remove_tags` (`changes.tags`). `ids`: 1 to 100 asset ids, each \
            once. `atomic: true` makes it all or nothing. A 400 names the field (`action`, \
            `ids`, `ids[3]`, `changes.title`, `changes.tags[1]`, ...). Unknown fields are \
            ignored.",
        "oneOf": [
            super::build::schema("BulkPatch"),
            super::build::schema("BulkDelete"),
            super::build::schema("BulkAddTags"),
            super::build::schema("BulkRemoveTags"),
        ],
        "discriminator": {"propertyName": "action", "mapping": {
            "patch": reference("BulkPatch"),
            "delete": reference("BulkDelete"),
            "add_tags": reference("BulkAddTags"),
            "remove_tags": reference("BulkRemoveTags"),
        }},
    })
}

/// The fields every bulk change has: `action` (as `action` says), `ids`, `atomic`, `force`.
fn bulk_fields(action: Value, force: &str) -> Vec<(&'static str, Value)> {
    let max = crate::validate::MAX_BULK;
    vec![
        ("action", action),
        (
            "ids",
            describe(
                json!({"type": "array", "items": uuid(), "minItems": 1, "maxItems": max,
                    "uniqueItems": true}),
                "The assets: 1 to 100 ids, each once (else 400 on `ids`, or on `ids[i]` for a \
                 malformed or repeated one). Results come in this order.",
            ),
        ),
        (
            "atomic",
            describe(
                or_null(boolean()),
                "Default false: each asset is changed on its own, and one that fails (404, \
                 409, 400) leaves the others changed. True: every asset in one store change, \
                 or none: when any fails the answer is 409 and nothing changed.",
            ),
        ),
        ("force", describe(or_null(boolean()), force)),
    ]
}

fn bulk_patch() -> Value {
    let mut fields = bulk_fields(only("patch"), "Default false; read by `delete` only.");
    fields.push(("changes", super::build::schema("BulkPatchChanges")));
    describe(
        object(fields, &["action", "ids", "changes"]),
        "The same change of each asset, as `PATCH /api/v1/assets/{asset_id}` makes it.",
    )
}

/// A bulk patch's `changes`. The fields it refuses (`external_url` and those of
/// [`crate::validate::PATCH_FIXED`]) are named in its description, not in a `propertyNames`
/// rule as on [`asset_patch`]: such a rule inside one branch of `BulkChange` makes
/// schemathesis' test generation recurse deeply (the document stays looser than validation,
/// never stricter).
fn bulk_patch_changes() -> Value {
    let mut fixed: Vec<String> = crate::validate::PATCH_FIXED
        .iter()
        .map(|name| format!("`{name}`"))
        .collect();
    fixed.push("`external_url`".to_owned());
    describe(
        object(patch_fields(false), &[]),
        &format!(
            "A `PATCH` body but for `external_url`, which is changed one asset at a time. A \
             field that cannot be set is 400 on `changes.<field>`: {}. Unknown fields are \
             ignored.",
            fixed.join(", ")
        ),
    )
}

fn bulk_delete() -> Value {
    let fields = bulk_fields(
        only("delete"),
        "Default false: an asset libraries hold is not deleted (its result is 409 naming \
         them); true removes it from them in the same change, as `force=true` does for one \
         delete.",
    );
    describe(
        object(fields, &["action", "ids"]),
        "Deletes each asset and the files the API stored for it; `changes` is not read.",
    )
}

/// `add_tags` (`add`) or `remove_tags`.
fn bulk_tag_change(add: bool) -> Value {
    let action = if add { "add_tags" } else { "remove_tags" };
    let mut fields = bulk_fields(only(action), "Default false; read by `delete` only.");
    let mut changes = object(
        vec![(
            "tags",
            describe(
                json!({"type": "array", "items": tag(), "minItems": 1}),
                "At least one tag, each as an asset's tags are (400 on `changes.tags[i]`, or \
                 on `changes.tags` when none is given).",
            ),
        )],
        &["tags"],
    );
    changes["additionalProperties"] = json!(false);
    fields.push((
        "changes",
        describe(
            changes,
            "`tags` alone (another field is 400 on `changes.<field>`).",
        ),
    ));
    let description = if add {
        "Adds each tag an asset lacks (compared ignoring case) after its own; an asset that \
         would have more than 32 is not changed (its result is 400)."
    } else {
        "Removes the asset's tags equal to one given, ignoring case; the others keep their \
         order."
    };
    describe(object(fields, &["action", "ids", "changes"]), description)
}

/// A tag of the tag list: the fields of [`TagCount`], described for clients.
fn tag_count() -> Value {
    let fields = replaced(
        derived::properties(&derived::of::<TagCount>()),
        "tag",
        describe(
            json!({"type": "string", "minLength": 1}),
            "The tag as filters name it: trimmed and in lower case. Assets may spell it \
             otherwise (`Logo`); they are counted alike.",
        ),
    );
    whole(
        replaced(
            fields,
            "count",
            describe(
                json!({"type": "integer", "minimum": 1}),
                "Published assets with the tag.",
            ),
        ),
        Some("A tag of published assets, and how many have it."),
    )
}

/// The actions of `POST /api/v1/assets/bulk`.
pub(super) const BULK_ACTIONS: &[&str] = &["patch", "delete", "add_tags", "remove_tags"];

/// What a bulk change did (`crate::service::organize`): the `data` of its 200, the `results`
/// of its 409.
fn bulk_result() -> Value {
    let count = |description: &str| {
        describe(
            json!({"type": "integer", "minimum": 0, "maximum": crate::validate::MAX_BULK}),
            description,
        )
    };
    let fields = vec![
        ("action", one_of_strings(BULK_ACTIONS)),
        (
            "atomic",
            describe(boolean(), "Whether the change was all or nothing."),
        ),
        ("succeeded", count("Assets changed (or deleted).")),
        (
            "failed",
            count(
                "Assets not changed: those that failed, and in an atomic change that failed, \
                 every other one too.",
            ),
        ),
        (
            "results",
            describe(
                json!({"type": "array", "items": schema("BulkItemResult"), "minItems": 1,
                    "maxItems": crate::validate::MAX_BULK}),
                "One per id, in the order of `ids`.",
            ),
        ),
    ];
    let required = names(&fields);
    describe(
        object(fields.clone(), &required),
        "What a bulk change did, asset by asset.",
    )
}

/// One asset of a bulk change's result.
fn bulk_item_result() -> Value {
    let fields = vec![
        ("id", uuid()),
        (
            "status",
            describe(
                json!({"type": "integer", "enum": [200, 204, 400, 404, 409, 424]}),
                "What a request for this asset alone would have answered: 200 (changed, with \
                 `asset`), 204 (deleted), 404 (no such asset), 409 (libraries hold it: a \
                 delete without `force`), 400 (it would have more than 32 tags); 424 in an \
                 atomic change that another asset stopped: this one was not changed.",
            ),
        ),
        (
            "asset",
            describe(
                schema("Asset"),
                "The asset as changed: with status 200 (a patch or a change of tags).",
            ),
        ),
        (
            "error",
            describe(
                json!({"anyOf": [schema("ValidationError"), schema("ConflictError"),
                    schema("Error")]}),
                "With any status but 200 and 204: the error body a request for this asset \
                 alone would have read (`libraries` on a 409, `field` on a 400); a 424 reads \
                 `Not applied`.",
            ),
        ),
    ];
    describe(
        object(fields, &["id", "status"]),
        "What one asset of a bulk change came to.",
    )
}

/// The 409 of an atomic bulk change that one asset stopped.
fn bulk_conflict() -> Value {
    let fields = vec![
        ("error", super::schemas::kind(&["Conflict"])),
        (
            "message",
            describe(
                string(),
                "`Nothing was changed: ` and how many assets could not take the change.",
            ),
        ),
        (
            "results",
            describe(
                schema("BulkResult"),
                "Every asset: those that stopped the change with their error, every other \
                 with status 424.",
            ),
        ),
    ];
    describe(
        object(fields, &["error", "message", "results"]),
        "An atomic bulk change that changed nothing: at least one asset could not take it.",
    )
}
