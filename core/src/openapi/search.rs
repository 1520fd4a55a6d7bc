//! The document's schemas of search (`GET /api/v1/search`): `SearchResults`, a page of
//! `SearchHit`s, each with its `SearchMatch`es.

use serde_json::{Value, json};

use super::build::{array, describe, object, one_of_strings, or_null, schema};
use super::schemas::envelope;

/// Adds the schemas of search.
pub(super) fn add_schemas(add: &mut dyn FnMut(&str, Value)) {
    add(
        "SearchResults",
        envelope(array(schema("SearchHit")), Some(schema("AssetPagination"))),
    );
    add("SearchHit", hit());
    add("SearchMatch", a_match());
}

/// One hit: the asset, its score and where it matched.
fn hit() -> Value {
    describe(
        object(
            vec![
                ("asset", schema("Asset")),
                (
                    "score",
                    describe(
                        json!({"type": "integer", "minimum": 1}),
                        "For each clause of `q`, the weight of the best field one of its \
                         terms occurs in (title 8, tags 4, description 2, text 1), summed.",
                    ),
                ),
                (
                    "matches",
                    describe(
                        array(schema("SearchMatch")),
                        "Where it matched: the title, the description, each tag, then up to \
                         three pages of the text, in that order.",
                    ),
                ),
            ],
            &["asset", "score", "matches"],
        ),
        "An asset that matches `q`.",
    )
}

/// Where a hit matched.
fn a_match() -> Value {
    // 200: `crate::search::MAX_SNIPPET_CHARS` (the document is built without the feature too).
    let snippet = "At most 200 characters of the text around its first matches (the tags and \
         escapes not counted), each match in `<mark>`...`</mark>`, everything else \
         HTML-escaped.";
    describe(
        object(
            vec![
                (
                    "field",
                    one_of_strings(&["title", "description", "tags", "content"]),
                ),
                (
                    "page",
                    describe(
                        or_null(json!({"type": "integer", "minimum": 1})),
                        "The page (1-based) of a match in the text of a file with pages (PDF \
                         pages, slides); `null` otherwise.",
                    ),
                ),
                ("snippet", describe(json!({"type": "string"}), snippet)),
            ],
            &["field", "page", "snippet"],
        ),
        "A field where a hit matched, with the words around it.",
    )
}
