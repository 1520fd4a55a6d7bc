//! `POST /api/v1/libraries/{id}/passes` bodies: what a new library pass is made from.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{Fields, check_title, json_object, strict_id};
use crate::error::ApiError;

/// The longest a pass may live: 10 years of 365.25 days, in seconds.
pub const MAX_PASS_SECONDS: u64 = 315_576_000;
/// The most downloads a pass may allow.
pub const MAX_PASS_DOWNLOADS: u64 = 1_000_000_000;
/// The longest `label`, in characters.
pub const MAX_PASS_LABEL: usize = 200;
/// The most assets a pass's `asset_ids` may name.
pub const MAX_PASS_ASSETS: usize = 10_000;

/// A validated pass body, before it meets its library.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PassDoc {
    /// A name to tell passes apart: non-blank, at most [`MAX_PASS_LABEL`] characters.
    pub label: String,
    /// When the pass stops working: from `expires_in` (1 second to 10 years) or `expires_at`
    /// (after now, at most 10 years ahead).
    pub expires_at: DateTime<Utc>,
    /// How many downloads it allows (1 to [`MAX_PASS_DOWNLOADS`]); `None`: no limit.
    pub max_downloads: Option<u64>,
    /// The assets it opens, each once in the order given; `None`: every asset of the library.
    /// The library must hold each (checked by the service).
    pub asset_ids: Option<Vec<Uuid>>,
}

/// Validates a pass body at `now`: a JSON object with `label` (required), exactly one of
/// `expires_in` (whole seconds, 1 to 10 years) and `expires_at` (RFC 3339, in the next 10
/// years), optional `max_downloads` (a whole number from 1; `null` for no limit) and optional
/// `asset_ids` (a non-empty array of asset ids; `null` for all). A 400 names the field.
/// Unknown fields are ignored.
///
/// ```
/// use assetlib_core::validate::pass_doc;
///
/// let now = chrono::Utc::now();
/// let doc = pass_doc(br#"{"label": "Order 1042", "expires_in": 86400, "max_downloads": 5}"#, now)
///     .unwrap();
/// assert_eq!(doc.expires_at, now + chrono::Duration::days(1));
/// assert!(pass_doc(br#"{"label": "Order 1042", "expires_in": 0}"#, now).is_err());
/// ```
pub fn pass_doc(body: &[u8], now: DateTime<Utc>) -> Result<PassDoc, ApiError> {
    let map = json_object(body)?;
    let f = Fields::new(&map, "");
    let label = f.req_str("label")?;
    check_title("label", label, MAX_PASS_LABEL)?;
    Ok(PassDoc {
        label: label.to_owned(),
        expires_at: expiry(&map, &f, now)?,
        max_downloads: whole(&map, "max_downloads", MAX_PASS_DOWNLOADS)?,
        asset_ids: asset_ids(&map)?,
    })
}

/// `expires_in` or `expires_at`, exactly one, as a time.
fn expiry(
    map: &Map<String, Value>,
    f: &Fields<'_>,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, ApiError> {
    let seconds = whole(map, "expires_in", MAX_PASS_SECONDS)?;
    let at = f.opt_str("expires_at")?;
    let latest = now + Duration::seconds(MAX_PASS_SECONDS as i64);
    match (seconds, at) {
        (Some(_), Some(_)) => Err(ApiError::validation(
            "expires_at",
            "expires_at and expires_in cannot both be given; give one",
        )),
        (None, None) => Err(ApiError::validation(
            "expires_in",
            "expires_in (seconds) or expires_at (an RFC 3339 time) is required",
        )),
        (Some(seconds), None) => Ok(now + Duration::seconds(seconds as i64)),
        (None, Some(at)) => DateTime::parse_from_rfc3339(at)
            .map(|t| t.with_timezone(&Utc))
            .ok()
            .filter(|t| *t > now && *t <= latest)
            .ok_or_else(|| {
                ApiError::validation(
                    "expires_at",
                    "expires_at must be an RFC 3339 time after now and at most 10 years ahead",
                )
            }),
    }
}

/// A whole number from 1 to `max` in field `name`; `None` when absent or `null`.
pub(super) fn whole(
    map: &Map<String, Value>,
    name: &str,
    max: u64,
) -> Result<Option<u64>, ApiError> {
    let bad = || {
        ApiError::validation(
            name,
            format!("{name} must be a whole number from 1 to {max}"),
        )
    };
    match map.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            })
            .filter(|n| (1..=max).contains(n))
            .map(Some)
            .ok_or_else(bad),
        Some(_) => Err(bad()),
    }
}

/// `asset_ids`: a non-empty array of asset ids, each kept once.
fn asset_ids(map: &Map<String, Value>) -> Result<Option<Vec<Uuid>>, ApiError> {
    ids(map, "asset_ids", ("an asset id", "assets"), MAX_PASS_ASSETS)
}

/// The field `name`: `null` or absent, or a non-empty array of at most `max` ids, each kept
/// once in the order given; `(one, many)` say what they are (`("an asset id", "assets")`).
/// A 400 names the field or the item.
pub(super) fn ids(
    map: &Map<String, Value>,
    name: &str,
    (one, many): (&str, &str),
    max: usize,
) -> Result<Option<Vec<Uuid>>, ApiError> {
    let list = match map.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(list)) => list,
        Some(_) => {
            return Err(ApiError::validation(
                name,
                format!("{name} must be an array of ids of {many}"),
            ));
        }
    };
    if list.is_empty() || list.len() > max {
        return Err(ApiError::validation(
            name,
            format!("{name} must name 1 to {max} {many} (leave it out for all)"),
        ));
    }
    let mut ids: Vec<Uuid> = Vec::with_capacity(list.len());
    for (n, value) in list.iter().enumerate() {
        let path = format!("{name}[{n}]");
        let id = value
            .as_str()
            .and_then(strict_id)
            .ok_or_else(|| ApiError::validation(&path, format!("{path} must be {one}")))?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    Ok(Some(ids))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(body: Value) -> String {
        let now = Utc::now();
        match pass_doc(body.to_string().as_bytes(), now) {
            Err(ApiError::Validation { field, .. }) => field,
            other => panic!("{body}: {other:?}"),
        }
    }

    #[test]
    fn a_full_body() {
        let now = Utc::now();
        let a = Uuid::new_v4();
        let b = Uuid::new_v4();
        let body = json!({"label": "Order 7", "expires_in": 60, "max_downloads": 3,
            "asset_ids": [a, b, a], "other": true});
        let doc = pass_doc(body.to_string().as_bytes(), now).unwrap();
        assert_eq!(doc.label, "Order 7");
        assert_eq!(doc.expires_at, now + Duration::seconds(60));
        assert_eq!(doc.max_downloads, Some(3));
        assert_eq!(doc.asset_ids, Some(vec![a, b]));
        let at = (now + Duration::days(30)).to_rfc3339();
        let body =
            json!({"label": "x", "expires_at": at, "max_downloads": null, "asset_ids": null});
        let doc = pass_doc(body.to_string().as_bytes(), now).unwrap();
        assert_eq!(doc.max_downloads, None);
        assert_eq!(doc.asset_ids, None);
        let ten_years = json!({"label": "x", "expires_in": MAX_PASS_SECONDS});
        assert!(pass_doc(ten_years.to_string().as_bytes(), now).is_ok());
    }

    #[test]
    fn each_bad_field_is_named() {
        let now = Utc::now();
        let past = (now - Duration::seconds(1)).to_rfc3339();
        let far = (now + Duration::days(3660)).to_rfc3339();
        let cases = [
            (json!({"expires_in": 60}), "label"),
            (json!({"label": " ", "expires_in": 60}), "label"),
            (json!({"label": 5, "expires_in": 60}), "label"),
            (json!({"label": "x".repeat(201), "expires_in": 60}), "label"),
            (json!({"label": "x"}), "expires_in"),
            (json!({"label": "x", "expires_in": 0}), "expires_in"),
            (json!({"label": "x", "expires_in": -5}), "expires_in"),
            (json!({"label": "x", "expires_in": 1.5}), "expires_in"),
            (json!({"label": "x", "expires_in": "60"}), "expires_in"),
            (
                json!({"label": "x", "expires_in": MAX_PASS_SECONDS + 1}),
                "expires_in",
            ),
            (json!({"label": "x", "expires_at": past}), "expires_at"),
            (json!({"label": "x", "expires_at": far}), "expires_at"),
            (
                json!({"label": "x", "expires_at": "tomorrow"}),
                "expires_at",
            ),
            (
                json!({"label": "x", "expires_in": 5, "expires_at": far}),
                "expires_at",
            ),
            (
                json!({"label": "x", "expires_in": 5, "max_downloads": 0}),
                "max_downloads",
            ),
            (
                json!({"label": "x", "expires_in": 5, "max_downloads": -1}),
                "max_downloads",
            ),
            (
                json!({"label": "x", "expires_in": 5, "max_downloads": true}),
                "max_downloads",
            ),
            (
                json!({"label": "x", "expires_in": 5, "asset_ids": []}),
                "asset_ids",
            ),
            (
                json!({"label": "x", "expires_in": 5, "asset_ids": "a"}),
                "asset_ids",
            ),
            (
                json!({"label": "x", "expires_in": 5, "asset_ids": [Uuid::new_v4(), "nope"]}),
                "asset_ids[1]",
            ),
        ];
        for (body, name) in cases {
            assert_eq!(field(body.clone()), name, "{body}");
        }
        assert_eq!(field(json!([1])), "body");
    }
}
