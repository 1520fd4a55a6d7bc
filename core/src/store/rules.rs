//! The pure rules every store applies alike, written once: how titles and descriptions are
//! compared (sort by title, search), and which slug a clash gives.
//!
//! A store calls these instead of spelling the rules again, so the stores cannot drift apart;
//! the conformance suite checks the outcome through each store.
//!
//! ```
//! use assetlib_core::store::rules;
//!
//! assert_eq!(rules::fold_case("Ärger Logo"), "ärger logo");
//! assert!(rules::matches_search("Brand LOGO", None, &rules::fold_case("logo")));
//! let taken = ["logo", "logo-2"];
//! assert_eq!(rules::first_free_slug("logo", |s| taken.contains(&s)), "logo-3");
//! ```

/// `text` as stores compare it: in Unicode lowercase. Sorting by title compares this, then the
/// id; a search compares it with the search text folded the same way.
pub fn fold_case(text: &str) -> String {
    text.to_lowercase()
}

/// Whether an asset with `title` and `description` matches a search for `needle`, which is
/// already folded ([`fold_case`]): either contains it, compared in Unicode lowercase.
pub fn matches_search(title: &str, description: Option<&str>, needle: &str) -> bool {
    fold_case(title).contains(needle) || description.is_some_and(|d| fold_case(d).contains(needle))
}

/// The slug a clash on `wanted` tries `n`-th, from `n = 2`: `wanted-2`, `wanted-3`, ...
pub fn slug_with_suffix(wanted: &str, n: u64) -> String {
    format!("{wanted}-{n}")
}

/// The first of `wanted`, `wanted-2`, `wanted-3`, ... that `taken` says is free.
pub fn first_free_slug(wanted: &str, mut taken: impl FnMut(&str) -> bool) -> String {
    if !taken(wanted) {
        return wanted.to_owned();
    }
    (2u64..)
        .map(|n| slug_with_suffix(wanted, n))
        .find(|s| !taken(s))
        .unwrap_or_else(|| wanted.to_owned())
}

/// Whether an asset with `tags` passes the tag filters of `query`: every key of `query.tags`
/// and, when `query.any_tags` is not empty, one of them (tags compared by their keys).
pub fn matches_tags(tags: &[String], query: &crate::AssetQuery) -> bool {
    if query.tags.is_empty() && query.any_tags.is_empty() {
        return true;
    }
    let keys: Vec<String> = tags.iter().map(|t| crate::model::tag_key(t)).collect();
    query.tags.iter().all(|k| keys.contains(k))
        && (query.any_tags.is_empty() || query.any_tags.iter().any(|k| keys.contains(k)))
}

/// The keys of `tags`, each once, in the order of the tags.
pub fn tag_keys(tags: &[String]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        let key = crate::model::tag_key(tag);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// The tag counts of `keys_and_counts` as [`crate::AssetStore::list_tags`] answers them: those
/// above zero, most used first, then by key, at most `limit`.
pub fn top_tags(
    keys_and_counts: impl IntoIterator<Item = (String, u64)>,
    limit: u32,
) -> Vec<crate::TagCount> {
    let mut all: Vec<crate::TagCount> = keys_and_counts
        .into_iter()
        .filter(|(_, count)| *count > 0)
        .map(|(tag, count)| crate::TagCount { tag, count })
        .collect();
    all.sort_unstable_by(|a, b| b.count.cmp(&a.count).then_with(|| a.tag.cmp(&b.tag)));
    all.truncate(limit as usize);
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_slugs_take_the_first_gap() {
        let taken = ["a", "a-2", "a-4"];
        assert_eq!(first_free_slug("a", |s| taken.contains(&s)), "a-3");
        assert_eq!(first_free_slug("b", |s| taken.contains(&s)), "b");
    }

    #[test]
    fn search_compares_in_unicode_lowercase() {
        let needle = fold_case("ÉTÉ");
        assert!(matches_search("Notes d'été", None, &needle));
        assert!(matches_search("x", Some("Un ÉTÉ"), &needle));
        assert!(!matches_search("x", None, &needle));
    }
}
