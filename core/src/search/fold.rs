//! Folding text for matching: the words of a text, lowercased and without accents, with
//! where each word stands in the text.
//!
//! Both stores match on folded words, so `Café`, `CAFE` and `café` are one word everywhere,
//! whatever the database's own rules are.

use std::collections::BTreeSet;
use std::ops::Range;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use super::language::{Language, stemmed};

/// Letters that carry no accent to strip but are written otherwise in plain Latin letters
/// (what a reader typing without them would type).
fn spelled_out(c: char) -> Option<&'static str> {
    Some(match c {
        'ß' | 'ẞ' => "ss",
        'æ' | 'Æ' => "ae",
        'œ' | 'Œ' => "oe",
        'ø' | 'Ø' => "o",
        'ł' | 'Ł' => "l",
        'đ' | 'Đ' | 'ð' | 'Ð' => "d",
        'þ' | 'Þ' => "th",
        'ı' => "i",
        _ => return None,
    })
}

/// `word` lowercased and without accents: `Crème` is `creme`, `Straße` is `strasse`.
pub fn fold(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for c in word.nfd() {
        if is_combining_mark(c) {
            continue;
        }
        match spelled_out(c) {
            Some(s) => out.push_str(s),
            None => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// Whether `c` belongs to a word: letters, digits and marks (a run of them is one word).
fn in_word(c: char) -> bool {
    c.is_alphanumeric() || is_combining_mark(c)
}

/// The longest word, in bytes once folded: a longer run of letters and digits (an encoded
/// blob, say) is no word, so an index never holds it.
pub const MAX_WORD_BYTES: usize = 255;

/// The words of `text` with their byte ranges in it: each run of letters and digits is one
/// word, folded ([`fold`]); a run that folds to nothing or to more than [`MAX_WORD_BYTES`]
/// is skipped.
///
/// ```
/// use assetlib_core::search::words;
///
/// let found: Vec<_> = words("Café-Menü, 2024!").collect();
/// let expected = [("cafe", 0..5), ("menu", 6..11), ("2024", 13..17)];
/// assert_eq!(found, expected.map(|(w, r)| (w.to_owned(), r)));
/// ```
pub fn words(text: &str) -> impl Iterator<Item = (String, Range<usize>)> + '_ {
    let mut rest = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let start = loop {
            let (i, c) = rest.next()?;
            if in_word(c) {
                break i;
            }
        };
        let mut end = text.len();
        while let Some(&(i, c)) = rest.peek() {
            if !in_word(c) {
                end = i;
                break;
            }
            rest.next();
        }
        Some((fold(&text[start..end]), start..end))
    })
    .filter(|(word, _)| !word.is_empty() && word.len() <= MAX_WORD_BYTES)
}

/// The words of `text` as [`words`] makes them, each stemmed in `language` after it is
/// folded ([`Language::stem`]); as [`words`] gives them without a language. The ranges are
/// the words' own: `Running` stands where it stands, as `run`.
///
/// ```
/// use assetlib_core::search::{Language, words_in};
///
/// let found: Vec<_> = words_in("Runs, RUNNING", Some(Language::English)).collect();
/// assert_eq!(found, [("run".to_owned(), 0..4), ("run".to_owned(), 6..13)]);
/// ```
pub fn words_in(
    text: &str,
    language: Option<Language>,
) -> impl Iterator<Item = (String, Range<usize>)> + '_ {
    words(text).map(move |(word, range)| (stemmed(language, word), range))
}

/// The distinct words of `texts`, folded and stemmed in `language` ([`words_in`]), in order:
/// what a store's index holds for them.
pub fn distinct_words<'a>(
    texts: impl IntoIterator<Item = &'a str>,
    language: Option<Language>,
) -> BTreeSet<String> {
    texts
        .into_iter()
        .flat_map(|t| words_in(t, language).map(|(w, _)| w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_ignores_case_and_accents() {
        for (word, folded) in [
            ("Café", "cafe"),
            ("CAFÉ", "cafe"),
            ("cafe\u{301}", "cafe"),
            ("Straße", "strasse"),
            ("Æsir", "aesir"),
            ("Øresund", "oresund"),
            ("Łódź", "lodz"),
            ("naïve", "naive"),
            ("Ångström", "angstrom"),
            ("ΣΟΦΙΑ", "σοφια"),
            ("日本", "日本"),
            ("x2", "x2"),
        ] {
            assert_eq!(fold(word), folded, "{word}");
        }
    }

    #[test]
    fn words_are_runs_of_letters_and_digits_with_their_places() {
        let text = "  Hello, wörld!\nIt's 3:15 — ÉTÉ ";
        let found: Vec<_> = words(text).collect();
        let folded: Vec<&str> = found.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(folded, ["hello", "world", "it", "s", "3", "15", "ete"]);
        for (word, range) in &found {
            assert_eq!(&fold(&text[range.clone()]), word);
        }
        assert_eq!(words("").count(), 0);
        assert_eq!(words(" - ; ").count(), 0);
        // A decomposed accent stays inside its word.
        let decomposed: Vec<_> = words("cafe\u{301} noir").map(|(w, _)| w).collect();
        assert_eq!(decomposed, ["cafe", "noir"]);
    }

    #[test]
    fn runs_that_fold_to_nothing_or_too_long_are_no_words() {
        let blob = "a".repeat(MAX_WORD_BYTES + 1);
        let longest = "b".repeat(MAX_WORD_BYTES);
        let text = format!("\u{301} one {blob} {longest} two");
        let found: Vec<String> = words(&text).map(|(w, _)| w).collect();
        assert_eq!(found, ["one".to_owned(), longest, "two".to_owned()]);
    }
}
