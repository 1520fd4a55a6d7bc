//! `POST /api/v1/assets/bulk` (DESIGN.md §5 "Tags, checksums, bulk changes"): one action on up
//! to [`MAX_BULK`] assets.

use serde_json::{Map, Value};
use uuid::Uuid;

use super::{Fields, json_object, json_tags, strict_id};
use crate::change::{AssetChange, TagChange};
use crate::config::Config;
use crate::error::ApiError;

/// The most ids one bulk change names.
pub const MAX_BULK: usize = 100;

/// What a bulk change does to each asset.
#[derive(Debug, Clone, PartialEq)]
pub enum BulkAction {
    /// Changes the fields of `changes`, as `PATCH` does (all but `external_url`).
    Patch(super::AssetPatch),
    /// Deletes each asset; `force` removes it from the libraries holding it too.
    Delete {
        /// Whether a held asset is removed from its libraries (else it is a 409 item).
        force: bool,
    },
    /// Adds `changes.tags` to each asset's tags.
    AddTags(Vec<String>),
    /// Removes `changes.tags` from each asset's tags.
    RemoveTags(Vec<String>),
}

impl BulkAction {
    /// The action's name on the wire.
    pub const fn name(&self) -> &'static str {
        match self {
            BulkAction::Patch(_) => "patch",
            BulkAction::Delete { .. } => "delete",
            BulkAction::AddTags(_) => "add_tags",
            BulkAction::RemoveTags(_) => "remove_tags",
        }
    }

    /// The change each asset takes (`None` for a delete), at `at`.
    pub fn change(&self, at: chrono::DateTime<chrono::Utc>) -> Option<AssetChange> {
        let tags = |change: TagChange| {
            let mut c = AssetChange::at(at);
            c.tags = Some(change);
            c
        };
        match self {
            BulkAction::Patch(patch) => Some(patch.clone().change_of_fields(at)),
            BulkAction::Delete { .. } => None,
            BulkAction::AddTags(t) => Some(tags(TagChange::Add(t.clone()))),
            BulkAction::RemoveTags(t) => Some(tags(TagChange::Remove(t.clone()))),
        }
    }
}

/// A validated bulk change.
#[derive(Debug, Clone, PartialEq)]
pub struct BulkDoc {
    /// What to do.
    pub action: BulkAction,
    /// The assets, each once, in the order given.
    pub ids: Vec<Uuid>,
    /// All or nothing: one store change for every asset, or none.
    pub atomic: bool,
}

/// Validates a bulk body: `action` one of `patch`, `delete`, `add_tags`, `remove_tags`; `ids`
/// 1 to [`MAX_BULK`] asset ids, each once; `changes` a PATCH body for `patch` (without
/// `external_url`) and `{"tags": [...]}` for the tag actions; `atomic` and `force` (deletes)
/// booleans, false by default. A 400 names the field (`changes.title`, `ids[3]`).
///
/// ```
/// use assetlib_core::Config;
/// use assetlib_core::validate::{BulkAction, bulk_doc};
///
/// let body = br#"{"action": "add_tags", "ids": ["0b9a5fd8-4e9c-4bd6-a4a1-3b4d3c1f1b0e"],
///                 "changes": {"tags": ["Brand", "brand", "2026"]}}"#;
/// let doc = bulk_doc(body, &Config::default()).unwrap();
/// assert_eq!(doc.action, BulkAction::AddTags(vec!["Brand".into(), "2026".into()]));
/// assert!(!doc.atomic);
/// ```
///
/// # Errors
/// 400 naming the first field that breaks a rule.
pub fn bulk_doc(body: &[u8], config: &Config) -> Result<BulkDoc, ApiError> {
    let map = json_object(body)?;
    let f = Fields::new(&map, "");
    let action = f.req_str("action")?;
    let ids = ids(&map)?;
    let atomic = f.opt_bool("atomic")?.unwrap_or(false);
    let force = f.opt_bool("force")?.unwrap_or(false);
    let changes = || -> Result<&Map<String, Value>, ApiError> {
        match map.get("changes") {
            Some(Value::Object(changes)) => Ok(changes),
            Some(Value::Null) | None => Err(ApiError::validation(
                "changes",
                format!("changes is required for {action}"),
            )),
            Some(_) => Err(ApiError::validation("changes", "changes must be an object")),
        }
    };
    let tags = || -> Result<Vec<String>, ApiError> {
        let changes = changes()?;
        if let Some(other) = changes.keys().find(|k| *k != "tags") {
            return Err(ApiError::validation(
                format!("changes.{other}"),
                format!("{action} takes changes.tags alone"),
            ));
        }
        json_tags(changes, "tags")
            .map_err(|e| prefixed(e, "changes."))?
            .filter(|tags| !tags.is_empty())
            .ok_or_else(|| {
                ApiError::validation("changes.tags", "changes.tags must name at least one tag")
            })
    };
    let action = match action {
        "patch" => {
            let changes = changes()?;
            for one_at_a_time in ["external_url", "workspace_id"] {
                if changes.contains_key(one_at_a_time) {
                    return Err(ApiError::validation(
                        format!("changes.{one_at_a_time}"),
                        format!(
                            "{one_at_a_time} is changed one asset at a time (PATCH /api/v1/assets/{{id}})"
                        ),
                    ));
                }
            }
            let patch =
                super::patch::patch_fields(changes, config).map_err(|e| prefixed(e, "changes."))?;
            BulkAction::Patch(patch)
        }
        "delete" => BulkAction::Delete { force },
        "add_tags" => BulkAction::AddTags(tags()?),
        "remove_tags" => BulkAction::RemoveTags(tags()?),
        _ => {
            return Err(ApiError::validation(
                "action",
                "action must be one of: patch, delete, add_tags, remove_tags",
            ));
        }
    };
    Ok(BulkDoc {
        action,
        ids,
        atomic,
    })
}

/// The `ids` of a bulk body.
fn ids(map: &Map<String, Value>) -> Result<Vec<Uuid>, ApiError> {
    let items = match map.get("ids") {
        Some(Value::Array(items)) => items,
        None | Some(Value::Null) => return Err(ApiError::validation("ids", "ids is required")),
        Some(_) => {
            return Err(ApiError::validation(
                "ids",
                "ids must be an array of asset ids",
            ));
        }
    };
    if items.is_empty() || items.len() > MAX_BULK {
        return Err(ApiError::validation(
            "ids",
            format!("ids must hold 1 to {MAX_BULK} asset ids"),
        ));
    }
    let mut ids: Vec<Uuid> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = format!("ids[{i}]");
        let id = item
            .as_str()
            .and_then(strict_id)
            .ok_or_else(|| ApiError::validation(&path, format!("{path} must be a UUID")))?;
        if ids.contains(&id) {
            return Err(ApiError::validation(
                &path,
                format!("{path} names {id} a second time"),
            ));
        }
        ids.push(id);
    }
    Ok(ids)
}

/// `e` with its field under `prefix`.
fn prefixed(e: ApiError, prefix: &str) -> ApiError {
    match e {
        ApiError::Validation { field, message } => ApiError::Validation {
            message: message.replacen(&field, &format!("{prefix}{field}"), 1),
            field: format!("{prefix}{field}"),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0b9a5fd8-4e9c-4bd6-a4a1-3b4d3c1f1b0e";

    fn field(body: serde_json::Value) -> String {
        match bulk_doc(body.to_string().as_bytes(), &Config::default()) {
            Err(ApiError::Validation { field, .. }) => field,
            other => panic!("not a 400: {other:?}"),
        }
    }

    #[test]
    fn bad_bodies_name_their_field() {
        use serde_json::json;
        let many: Vec<String> = (0..=MAX_BULK).map(|_| Uuid::new_v4().to_string()).collect();
        assert_eq!(field(json!({"action": "delete", "ids": many})), "ids");
        assert_eq!(field(json!({"action": "delete", "ids": []})), "ids");
        assert_eq!(
            field(json!({"action": "delete", "ids": [ID, ID]})),
            "ids[1]"
        );
        assert_eq!(field(json!({"action": "delete", "ids": ["x"]})), "ids[0]");
        assert_eq!(field(json!({"action": "merge", "ids": [ID]})), "action");
        assert_eq!(field(json!({"ids": [ID]})), "action");
        assert_eq!(
            field(json!({"action": "patch", "ids": [ID], "changes": {"slug": "x"}})),
            "changes.slug"
        );
        assert_eq!(
            field(json!({"action": "patch", "ids": [ID], "changes": {"title": " "}})),
            "changes.title"
        );
        assert_eq!(
            field(
                json!({"action": "patch", "ids": [ID], "changes": {"external_url": "https://a.example/"}})
            ),
            "changes.external_url"
        );
        assert_eq!(field(json!({"action": "patch", "ids": [ID]})), "changes");
        assert_eq!(
            field(json!({"action": "add_tags", "ids": [ID], "changes": {"tags": ["a", " "]}})),
            "changes.tags[1]"
        );
        let tags: Vec<String> = (0..33).map(|i| format!("t{i}")).collect();
        assert_eq!(
            field(json!({"action": "add_tags", "ids": [ID], "changes": {"tags": tags}})),
            "changes.tags"
        );
        assert_eq!(
            field(json!({"action": "remove_tags", "ids": [ID], "changes": {"tags": []}})),
            "changes.tags"
        );
        assert_eq!(
            field(json!({"action": "delete", "ids": [ID], "atomic": "yes"})),
            "atomic"
        );
    }

    #[test]
    fn a_patch_keeps_what_it_names() {
        let body = serde_json::json!({"action": "patch", "ids": [ID], "atomic": true,
            "changes": {"published": false, "tags": ["X"]}});
        let doc = bulk_doc(body.to_string().as_bytes(), &Config::default()).unwrap();
        assert!(doc.atomic);
        let change = doc.action.change(chrono::Utc::now()).unwrap();
        assert_eq!(change.published, Some(false));
        assert_eq!(change.tags, Some(TagChange::Set(vec!["X".into()])));
    }
}
