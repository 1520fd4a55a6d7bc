//! The search query language: what `q` of `GET /api/v1/search` says.
//!
//! - Words: every word must match. The last word of `q` also matches as the beginning of a
//!   word (`rep` finds `report` while someone types).
//! - `"quoted phrases"`: the words in that order, next to each other.
//! - `-word` and `-"a phrase"`: assets that match it are left out.
//! - `a OR b` (the capital word `OR` between two terms): either matches. `OR` binds tighter
//!   than the implicit "and": `report OR summary 2024` is `(report OR summary) AND 2024`.
//!
//! Words are matched folded ([`super::fold`]): case and accents do not matter. A word with
//! punctuation inside (`e-mail`, `3.15`) is the phrase of its parts.
//!
//! Read in a language ([`parse_query_in`]), every word of `q`, kept or excluded, in a phrase
//! or not, is stemmed after it is folded ([`Language::stem`]), as the store stems the words
//! it indexes: `runs` finds `running`, `"annual reports"` finds `Annual report`. The last
//! word is then the beginning of a stem: the stem of what was typed, matching every stem that
//! begins with it. A word typed halfway matches by its own stem, so `runni` (whose stem is
//! `runni`) may find nothing until `running` (stem `run`) is typed whole.

use crate::error::ApiError;

use super::fold::words_in;
use super::language::Language;

/// The longest `q`, in characters.
pub const MAX_QUERY_CHARS: usize = 500;

/// One thing to find: folded words, stemmed when the query is read in a language
/// ([`SearchQuery::language`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Term {
    /// A word, matched whole.
    Word(String),
    /// A word that also matches as the beginning of a word (the last word of `q`).
    Prefix(String),
    /// Words, in this order, next to each other (two or more).
    Phrase(Vec<String>),
}

impl Term {
    /// The term's words, in order.
    pub fn words(&self) -> &[String] {
        match self {
            Term::Word(w) | Term::Prefix(w) => std::slice::from_ref(w),
            Term::Phrase(ws) => ws,
        }
    }
}

/// A parsed `q`: every clause must match (a clause matches when any of its terms does), and
/// no excluded term may.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    /// The clauses, each a list of alternatives (`a OR b`), in the order `q` gives them.
    pub clauses: Vec<Vec<Term>>,
    /// The terms that leave an asset out.
    pub excluded: Vec<Term>,
    /// The language its words are stemmed in (`None`: not stemmed). Texts are matched
    /// against it in the same language ([`SearchQuery::words_of`]).
    pub language: Option<Language>,
}

impl SearchQuery {
    /// Whether every term, kept or excluded, is a word or a prefix (no phrase): then an index
    /// of each text's words says exactly which texts a term occurs in, without reading them.
    pub fn is_word_level(&self) -> bool {
        self.clauses
            .iter()
            .flatten()
            .chain(&self.excluded)
            .all(|t| !matches!(t, Term::Phrase(_)))
    }
}

/// One token of `q` before terms are made of it.
#[derive(Debug)]
enum Token<'a> {
    /// Raw text of a word or a phrase, whether it was quoted, and whether `-` came before.
    Text {
        text: &'a str,
        quoted: bool,
        negated: bool,
    },
    Or,
}

/// Splits `q` into words, quoted phrases and `OR`s. An unclosed quote runs to the end.
fn tokens(q: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = q;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return out;
        }
        let negated = rest.starts_with('-');
        let body = if negated { &rest[1..] } else { rest };
        if let Some(inner) = body.strip_prefix('"') {
            let end = inner.find('"').unwrap_or(inner.len());
            out.push(Token::Text {
                text: &inner[..end],
                quoted: true,
                negated,
            });
            rest = inner.get(end + 1..).unwrap_or("");
            continue;
        }
        let end = body.find(char::is_whitespace).unwrap_or(body.len());
        let text = &body[..end];
        if text == "OR" && !negated {
            out.push(Token::Or);
        } else {
            out.push(Token::Text {
                text,
                quoted: false,
                negated,
            });
        }
        rest = &body[end..];
    }
}

/// The term `text` makes: its folded words stemmed in `language`, one word or a phrase;
/// `None` when it has none.
fn term(text: &str, language: Option<Language>) -> Option<Term> {
    let mut ws: Vec<String> = words_in(text, language).map(|(w, _)| w).collect();
    match ws.len() {
        0 => None,
        1 => ws.pop().map(Term::Word),
        _ => Some(Term::Phrase(ws)),
    }
}

fn invalid(message: &str) -> ApiError {
    ApiError::Validation {
        field: "q".into(),
        message: message.into(),
    }
}

/// Reads `q` as the module docs say, without stemming: [`parse_query_in`] with no language.
///
/// Errors (400 naming `q`): longer than [`MAX_QUERY_CHARS`] characters, or nothing to find
/// (empty, only punctuation, or only excluded terms).
///
/// ```
/// use assetlib_core::search::{SearchQuery, Term, parse_query};
///
/// let q = parse_query(r#"Annual "cash flow" -draft report OR summ"#).unwrap();
/// assert_eq!(q.clauses, vec![
///     vec![Term::Word("annual".into())],
///     vec![Term::Phrase(vec!["cash".into(), "flow".into()])],
///     vec![Term::Word("report".into()), Term::Prefix("summ".into())],
/// ]);
/// assert_eq!(q.excluded, vec![Term::Word("draft".into())]);
/// assert!(parse_query("-draft").is_err());
/// ```
pub fn parse_query(q: &str) -> Result<SearchQuery, ApiError> {
    parse_query_in(q, None)
}

/// Reads `q` as the module docs say, its words stemmed in `language` (none: not stemmed).
/// A store's index must hold words stemmed in the same language: a search reads `q` in its
/// store's ([`crate::store::SearchStore::language`]).
///
/// Errors as [`parse_query`].
///
/// ```
/// use assetlib_core::search::{Language, Term, parse_query_in};
///
/// let q = parse_query_in(r#""annual reports" -drafts running"#, Some(Language::English)).unwrap();
/// assert_eq!(q.clauses, vec![
///     vec![Term::Phrase(vec!["annual".into(), "report".into()])],
///     vec![Term::Prefix("run".into())],
/// ]);
/// assert_eq!(q.excluded, vec![Term::Word("draft".into())]);
/// assert_eq!(q.language, Some(Language::English));
/// ```
pub fn parse_query_in(q: &str, language: Option<Language>) -> Result<SearchQuery, ApiError> {
    if q.chars().count() > MAX_QUERY_CHARS {
        return Err(invalid("must be at most 500 characters"));
    }
    let tokens = tokens(q);
    let last_word = tokens.iter().rposition(|t| {
        matches!(
            t,
            Token::Text {
                quoted: false,
                negated: false,
                ..
            }
        )
    });
    let last_is_word = last_word.is_some_and(|i| i + 1 == tokens.len());
    let mut clauses: Vec<Vec<Term>> = Vec::new();
    let mut excluded = Vec::new();
    // Whether the previous token was an `OR` that follows a term (so the next term joins
    // the last clause).
    let mut join = false;
    for (i, token) in tokens.iter().enumerate() {
        let (text, quoted, negated) = match token {
            Token::Or => {
                join = clauses.last().is_some();
                continue;
            }
            Token::Text {
                text,
                quoted,
                negated,
            } => (*text, *quoted, *negated),
        };
        let Some(mut found) = term(text, language) else {
            join = false;
            continue;
        };
        if negated {
            excluded.push(found);
            join = false;
            continue;
        }
        if !quoted
            && last_is_word
            && Some(i) == last_word
            && let Term::Word(w) = found
        {
            found = Term::Prefix(w);
        }
        match clauses.last_mut() {
            Some(last) if join => last.push(found),
            _ => clauses.push(vec![found]),
        }
        join = false;
    }
    if clauses.is_empty() {
        return Err(invalid(if excluded.is_empty() {
            "must contain a word to find"
        } else {
            "must contain a word to find, not only words to leave out"
        }));
    }
    Ok(SearchQuery {
        clauses,
        excluded,
        language,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Term {
        Term::Word(s.into())
    }
    fn p(s: &str) -> Term {
        Term::Prefix(s.into())
    }
    fn ph(s: &[&str]) -> Term {
        Term::Phrase(s.iter().map(|x| (*x).to_owned()).collect())
    }

    #[test]
    fn words_must_all_match_and_the_last_is_a_prefix() {
        let q = parse_query("Quarterly  Rep").unwrap();
        assert_eq!(q.clauses, vec![vec![w("quarterly")], vec![p("rep")]]);
        assert!(q.excluded.is_empty());
        assert_eq!(parse_query("Café").unwrap().clauses, vec![vec![p("cafe")]]);
    }

    #[test]
    fn phrases_exclusions_and_or() {
        let q = parse_query(r#""Brand Guide" -old -"first draft" logo OR icon"#).unwrap();
        assert_eq!(
            q.clauses,
            vec![vec![ph(&["brand", "guide"])], vec![w("logo"), p("icon")]]
        );
        assert_eq!(q.excluded, vec![w("old"), ph(&["first", "draft"])]);
        // A phrase last is no prefix; nor is a word before an exclusion.
        assert_eq!(
            parse_query(r#"logo "dark mode""#).unwrap().clauses,
            vec![vec![w("logo")], vec![ph(&["dark", "mode"])]]
        );
        assert_eq!(
            parse_query("logo -old").unwrap().clauses,
            vec![vec![w("logo")]]
        );
        // An unclosed quote runs to the end.
        assert_eq!(
            parse_query(r#"logo "dark mo"#).unwrap().clauses,
            vec![vec![w("logo")], vec![ph(&["dark", "mo"])]]
        );
    }

    #[test]
    fn or_joins_the_terms_beside_it_and_a_loose_or_is_ignored() {
        assert_eq!(
            parse_query("a OR b OR c d").unwrap().clauses,
            vec![vec![w("a"), w("b"), w("c")], vec![p("d")]]
        );
        assert_eq!(parse_query("OR a OR").unwrap().clauses, vec![vec![w("a")]]);
        assert_eq!(
            parse_query("a or b").unwrap().clauses,
            vec![vec![w("a")], vec![w("or")], vec![p("b")]],
            "only the capital OR"
        );
        // An OR before an exclusion does not join the excluded term.
        let q = parse_query("a OR -b c").unwrap();
        assert_eq!(q.clauses, vec![vec![w("a")], vec![p("c")]]);
        assert_eq!(q.excluded, vec![w("b")]);
    }

    #[test]
    fn in_a_language_every_word_is_stemmed() {
        let en = Some(Language::English);
        let q = parse_query_in(
            r#"Runs "annual reports" -drafts -"old plans" e-mails OR reporting"#,
            en,
        )
        .unwrap();
        assert_eq!(
            q.clauses,
            vec![
                vec![w("run")],
                vec![ph(&["annual", "report"])],
                vec![ph(&["e", "mail"]), p("report")],
            ]
        );
        assert_eq!(q.excluded, vec![w("draft"), ph(&["old", "plan"])]);
        assert_eq!(q.language, en);
        // The last word's stem is the prefix: a half-typed word stands for its own stem.
        assert_eq!(
            parse_query_in("runni", en).unwrap().clauses,
            vec![vec![p("runni")]]
        );
        // Without a language, words are only folded.
        let plain = parse_query("Runs reports").unwrap();
        assert_eq!(plain.clauses, vec![vec![w("runs")], vec![p("reports")]]);
        assert_eq!(plain.language, None);
    }

    #[test]
    fn punctuation_inside_a_word_makes_a_phrase() {
        assert_eq!(
            parse_query("e-mail 3.15").unwrap().clauses,
            vec![vec![ph(&["e", "mail"])], vec![ph(&["3", "15"])]]
        );
    }

    #[test]
    fn nothing_to_find_or_too_long_is_400_on_q() {
        for q in [
            "",
            "   ",
            "-old",
            r#"-"first draft" -x"#,
            "!!! ---",
            "OR",
            "\"\"",
        ] {
            match parse_query(q) {
                Err(ApiError::Validation { field, .. }) => assert_eq!(field, "q", "{q:?}"),
                other => panic!("{q:?}: {other:?}"),
            }
        }
        // Exactly `n` characters of two-letter words of `c`.
        let of_chars = |c: &str, n: usize| {
            let mut q = format!("{c}{c} ").repeat(n / 3);
            while q.chars().count() < n {
                q.push_str(c);
            }
            q
        };
        assert!(parse_query(&of_chars("a", MAX_QUERY_CHARS)).is_ok());
        assert!(
            parse_query(&of_chars("é", MAX_QUERY_CHARS)).is_ok(),
            "characters, not bytes"
        );
        assert!(parse_query(&of_chars("a", MAX_QUERY_CHARS + 1)).is_err());
    }
}
