//! Tags (DESIGN.md §5 "Tags, checksums, bulk changes"): at most [`MAX_TAGS`] on an asset, each
//! 1 to [`MAX_TAG_CHARS`] characters once trimmed, unique ignoring case (the first spelling
//! kept). A tag holds no comma (`any_tag=a,b` lists tags with them), no control character and
//! no invisible format character (Unicode category Cf: zero-width spaces and joiners, bidi
//! controls, the byte order mark, ...), which would make tags that look the same differ.

use serde_json::{Map, Value};

use crate::error::ApiError;

pub use crate::model::{MAX_TAG_CHARS, MAX_TAGS, tag_key};

/// The tags `raw` names, as an asset keeps them: each trimmed, in the order given, a tag that
/// differs from an earlier one only in case left out.
///
/// ```
/// use assetlib_core::validate::tags;
///
/// let kept = tags("tags", ["Logo", " brand ", "logo"]).unwrap();
/// assert_eq!(kept, ["Logo", "brand"]);
/// assert!(tags("tags", [" "]).is_err());
/// ```
///
/// # Errors
/// 400 on `field[i]` for a blank, too long or malformed tag, and on `field` for more than
/// [`MAX_TAGS`] tags (counted after duplicates are left out).
pub fn tags<'a>(
    field: &str,
    raw: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<String>, ApiError> {
    let mut kept: Vec<String> = Vec::new();
    let mut keys: Vec<String> = Vec::new();
    for (i, tag) in raw.into_iter().enumerate() {
        let path = format!("{field}[{i}]");
        let tag = tag.trim();
        let chars = tag.chars().count();
        if chars == 0 || chars > MAX_TAG_CHARS {
            return Err(ApiError::validation(
                &path,
                format!("{path} must be 1 to {MAX_TAG_CHARS} characters (trimmed)"),
            ));
        }
        if let Some(c) = tag
            .chars()
            .find(|c| *c == ',' || c.is_control() || is_format(*c))
        {
            return Err(ApiError::validation(
                &path,
                format!(
                    "{path} must not contain commas, control characters or invisible format \
                     characters (it has U+{:04X})",
                    u32::from(c)
                ),
            ));
        }
        let key = tag_key(tag);
        if keys.contains(&key) {
            continue;
        }
        keys.push(key);
        kept.push(tag.to_owned());
    }
    if kept.len() > MAX_TAGS {
        return Err(ApiError::validation(
            field,
            format!("{field} may hold at most {MAX_TAGS} tags"),
        ));
    }
    Ok(kept)
}

/// The code points of Unicode's general category Cf ("format": invisible characters that
/// steer how text around them is shown), as Unicode 16 assigns it.
const FORMAT: &[(char, char)] = &[
    ('\u{ad}', '\u{ad}'),
    ('\u{600}', '\u{605}'),
    ('\u{61c}', '\u{61c}'),
    ('\u{6dd}', '\u{6dd}'),
    ('\u{70f}', '\u{70f}'),
    ('\u{890}', '\u{891}'),
    ('\u{8e2}', '\u{8e2}'),
    ('\u{180e}', '\u{180e}'),
    ('\u{200b}', '\u{200f}'),
    ('\u{202a}', '\u{202e}'),
    ('\u{2060}', '\u{2064}'),
    ('\u{2066}', '\u{206f}'),
    ('\u{feff}', '\u{feff}'),
    ('\u{fff9}', '\u{fffb}'),
    ('\u{110bd}', '\u{110bd}'),
    ('\u{110cd}', '\u{110cd}'),
    ('\u{13430}', '\u{1343f}'),
    ('\u{1bca0}', '\u{1bca3}'),
    ('\u{1d173}', '\u{1d17a}'),
    ('\u{e0001}', '\u{e0001}'),
    ('\u{e0020}', '\u{e007f}'),
];

/// Whether `c` is a format character (category Cf): zero-width space, non-joiner and joiner
/// (U+200B-U+200D), word joiner (U+2060), byte order mark (U+FEFF), the bidi marks, embeddings,
/// overrides and isolates (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), the soft hyphen, ...
fn is_format(c: char) -> bool {
    FORMAT
        .iter()
        .any(|(first, last)| (*first..=*last).contains(&c))
}

/// The tags of a JSON body's `field`: `None` when it is absent, else an array of strings held
/// to [`tags`] (`null` is no tags).
pub(crate) fn json_tags(
    map: &Map<String, Value>,
    field: &str,
) -> Result<Option<Vec<String>>, ApiError> {
    match map.get(field) {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(Vec::new())),
        Some(Value::Array(items)) => {
            let mut raw = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let Value::String(tag) = item else {
                    return Err(ApiError::validation(
                        format!("{field}[{i}]"),
                        format!("{field}[{i}] must be a string"),
                    ));
                };
                raw.push(tag.as_str());
            }
            tags(field, raw).map(Some)
        }
        Some(_) => Err(ApiError::validation(
            field,
            format!("{field} must be an array of strings"),
        )),
    }
}

/// The tags of a form part or upload metadata: tags separated by commas, empty pieces
/// skipped (so `"a, b,"` is two tags), held to [`tags`].
pub(crate) fn listed_tags(field: &str, raw: &str) -> Result<Vec<String>, ApiError> {
    tags(field, raw.split(',').filter(|t| !t.trim().is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(e: ApiError) -> Option<String> {
        match e {
            ApiError::Validation { field, .. } => Some(field),
            _ => None,
        }
    }

    #[test]
    fn tags_are_trimmed_and_unique_ignoring_case_first_spelling_kept() {
        let kept = tags(
            "tags",
            ["Brand", "LOGO ", "brand", " logo", "Ünïcode", "üNÏCODE"],
        )
        .unwrap();
        assert_eq!(kept, ["Brand", "LOGO", "Ünïcode"]);
        assert_eq!(tags("tags", []).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn a_bad_tag_names_its_place() {
        let long = "x".repeat(MAX_TAG_CHARS + 1);
        for (bad, at) in [
            (vec!["ok", " "], "tags[1]"),
            (vec![""], "tags[0]"),
            (vec!["ok", "ok2", long.as_str()], "tags[2]"),
            (vec!["a,b"], "tags[0]"),
            (vec!["tab\there"], "tags[0]"),
        ] {
            let e = tags("tags", bad.iter().copied()).unwrap_err();
            assert_eq!(field_of(e).as_deref(), Some(at), "{bad:?}");
        }
        // Invisible format characters (category Cf), wherever they stand.
        for c in [
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{2060}',
            '\u{feff}',
            '\u{200e}',
            '\u{200f}',
            '\u{202a}',
            '\u{202e}',
            '\u{2066}',
            '\u{2069}',
            '\u{ad}',
            '\u{e0041}',
        ] {
            for tag in [format!("lo{c}go"), format!("{c}logo"), format!("logo{c}")] {
                let e = tags("tags", ["ok", tag.as_str()]).unwrap_err();
                assert_eq!(field_of(e).as_deref(), Some("tags[1]"), "{tag:?}");
            }
        }
        // Letters and marks that join or shape text are not format characters.
        assert!(tags("tags", ["café", "नमस्ते", "日本語", "a\u{a0}b"]).is_ok());
        // 64 characters of several bytes each pass.
        assert!(tags("tags", ["é".repeat(MAX_TAG_CHARS).as_str()]).is_ok());
    }

    #[test]
    fn at_most_32_tags_after_duplicates_are_left_out() {
        let many: Vec<String> = (0..=MAX_TAGS).map(|i| format!("t{i}")).collect();
        let e = tags("tags", many.iter().map(String::as_str)).unwrap_err();
        assert_eq!(field_of(e).as_deref(), Some("tags"));
        let mut with_repeats: Vec<String> = many[..MAX_TAGS].to_vec();
        with_repeats.push("T0".to_owned());
        assert_eq!(
            tags("tags", with_repeats.iter().map(String::as_str))
                .unwrap()
                .len(),
            MAX_TAGS
        );
    }

    #[test]
    fn json_and_listed_tags() {
        let body: Map<String, Value> =
            serde_json::from_str(r#"{"a": ["x", "X", "y"], "b": null, "c": "x", "d": [1]}"#)
                .unwrap();
        assert_eq!(
            json_tags(&body, "a").unwrap(),
            Some(vec!["x".into(), "y".into()])
        );
        assert_eq!(json_tags(&body, "b").unwrap(), Some(vec![]));
        assert_eq!(json_tags(&body, "z").unwrap(), None);
        assert_eq!(
            field_of(json_tags(&body, "c").unwrap_err()).as_deref(),
            Some("c")
        );
        assert_eq!(
            field_of(json_tags(&body, "d").unwrap_err()).as_deref(),
            Some("d[0]")
        );
        assert_eq!(listed_tags("tags", " a, B ,,b").unwrap(), ["a", "B"]);
        assert_eq!(listed_tags("tags", "").unwrap(), Vec::<String>::new());
    }
}
