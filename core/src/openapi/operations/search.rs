//! The search operation, described (`crate::service::search`).

use super::{Keys, Spec, read_answer};
use crate::openapi::build::{parameter as p, schema};

/// `Operation::Search`.
pub(super) fn search() -> Spec {
    Spec {
        id: "search",
        tag: "assets",
        summary: "Search assets and the text inside their files",
        description: "Ranked hits over the title, description and tags of assets and the \
            text inside the files of pdf and document assets (PDF, DOCX, ODT, PPTX, ODP, \
            plain text, Markdown, HTML), kept when the file arrives.\n\n\
            `q`: words (every one must occur; the last also matches as the beginning of a \
            word, for search as you type), `\"quoted phrases\"` (the words next to each \
            other), `-word` or `-\"phrase\"` (leaves out the assets where it occurs), and \
            `a OR b` (either). Matching ignores case and accents (`Café` is `cafe`). \
            Words are not stemmed unless the server's store names a language (the ready \
            server's `--search-language`): then every form of a word finds the others \
            (`running` finds `runs`), in the text and in `q` alike, and the last word \
            matches as the beginning of a stem. Empty, punctuation only, only exclusions, \
            or longer than 500 characters: 400 on `q`.\n\n\
            Ranking: each clause of `q` adds the weight of the best field one of its terms \
            occurs in: title 8, tags 4, description 2, text 1. Ties rank newest first, \
            then by id descending, so pages never repeat or skip a hit. Each hit carries \
            `matches`: the fields where it matched, each with at most 200 characters of \
            the text around the first matches, matched words in `<mark>`...`</mark>` and \
            everything else HTML-escaped (safe to show as HTML); a match in the text names \
            its page (1-based) when the file has pages (PDF pages, slides), at most three \
            pages a hit.\n\n\
            Who sees what: published assets only, drafts too with `write:assets`; the text \
            of a paid file (an asset that is not public, in a published paid library and \
            in no published free one) only with `read:paid`, so without it such an asset is \
            a hit only by its title, description or tags. A workspace key searches its own \
            workspace. A library pass does not open the search. Filters combine: \
            `asset_type`, `tag` (one, compared ignoring case), `workspace_id`, and \
            `library_id` (assets placed in that library). An answered write is found (or no \
            longer found) by the next search.",
        keys: Keys::Required,
        parameters: vec![
            p("Q"),
            p("Page"),
            p("PerPage"),
            p("AssetTypeFilter"),
            p("SearchTag"),
            p("AssetWorkspaceFilter"),
            p("SearchLibrary"),
            p("IfNoneMatch"),
        ],
        body: None,
        answers: vec![(
            "200",
            read_answer("A page of hits, best first.", schema("SearchResults")),
        )],
        errors: &["BadRequest", "NotFound"],
    }
}
