//! Which terms a text matches, where, and the snippet that shows them.

use std::ops::Range;

use super::fold::words_in;
use super::language::Language;
use super::query::{SearchQuery, Term};

/// The longest snippet, in characters of the text shown (the `<mark>` tags and the escapes
/// of `<`, `>`, `&` and quotes not counted).
pub const MAX_SNIPPET_CHARS: usize = 200;

/// How many characters of text a snippet shows before its first match, at most.
const LEAD_CHARS: usize = 40;

/// A text's folded words (stemmed in a language, or not) with their byte ranges, read once
/// and matched against many terms. A query's terms are matched against the words of its own
/// language ([`SearchQuery::words_of`]), and marked on the text as it is written: for `runs`
/// in English, `Running` is marked whole.
#[derive(Debug)]
pub struct Words<'a> {
    text: &'a str,
    words: Vec<(String, Range<usize>)>,
}

impl<'a> Words<'a> {
    /// The words of `text`, folded and not stemmed: what a query read without a language
    /// ([`super::parse_query`]) matches.
    pub fn of(text: &'a str) -> Self {
        Self::of_in(text, None)
    }

    /// The words of `text`, folded and stemmed in `language` ([`super::words_in`]): what a
    /// query read in that language matches.
    pub fn of_in(text: &'a str, language: Option<Language>) -> Self {
        Words {
            text,
            words: words_in(text, language).collect(),
        }
    }

    /// The byte ranges in the text of every match of `term`, in order.
    pub fn find(&self, term: &Term) -> Vec<Range<usize>> {
        let n = term.words().len();
        if n == 0 {
            return Vec::new();
        }
        let mut found = Vec::new();
        for (i, window) in self.words.windows(n).enumerate() {
            let hit = match term {
                Term::Word(w) => window[0].0 == *w,
                Term::Prefix(w) => window[0].0.starts_with(w.as_str()),
                Term::Phrase(ws) => window.iter().zip(ws).all(|((got, _), w)| got == w),
            };
            if hit {
                found.push(self.words[i].1.start..self.words[i + n - 1].1.end);
            }
        }
        found
    }

    /// Whether `term` occurs.
    pub fn has(&self, term: &Term) -> bool {
        !self.find(term).is_empty()
    }

    /// Where the query's wanted terms occur (excluded terms aside), in order, overlaps
    /// merged; empty when none does.
    pub fn matches(&self, query: &SearchQuery) -> Vec<Range<usize>> {
        let mut all: Vec<Range<usize>> = query
            .clauses
            .iter()
            .flatten()
            .flat_map(|t| self.find(t))
            .collect();
        all.sort_by_key(|r| (r.start, r.end));
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(all.len());
        for r in all {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        merged
    }

    /// A snippet of at most [`MAX_SNIPPET_CHARS`] characters of the text around its first
    /// matches of `query`, the matches in `<mark>`...`</mark>`, everything else
    /// HTML-escaped; `None` when the query's terms do not occur.
    pub fn snippet(&self, query: &SearchQuery) -> Option<String> {
        let matches = self.matches(query);
        let first = matches.first()?;
        let text = self.text;
        // Start up to LEAD_CHARS before the first match, not inside a word.
        let mut start = first.start;
        for (n, (i, _)) in text[..first.start].char_indices().rev().enumerate() {
            if n >= LEAD_CHARS {
                break;
            }
            start = i;
        }
        if let Some((_, cut)) = self
            .words
            .iter()
            .find(|(_, r)| r.start < start && start < r.end)
        {
            start = cut.end;
        }
        start += text[start..].len() - text[start..].trim_start().len();
        // End after MAX_SNIPPET_CHARS characters, not inside a match.
        let mut end = text.len();
        if let Some((i, _)) = text[start..].char_indices().nth(MAX_SNIPPET_CHARS) {
            end = start + i;
            if let Some(cut) = matches.iter().find(|m| m.start < end && end < m.end) {
                end = cut.start;
            }
        }
        let shown = text[start..end].trim_end();
        let end = start + shown.len();
        let mut out = String::with_capacity(shown.len() + 32);
        let mut at = start;
        for m in matches.iter().filter(|m| m.start >= start && m.end <= end) {
            escape_into(&mut out, &text[at..m.start]);
            out.push_str("<mark>");
            escape_into(&mut out, &text[m.clone()]);
            out.push_str("</mark>");
            at = m.end;
        }
        escape_into(&mut out, &text[at..end]);
        Some(out)
    }
}

impl SearchQuery {
    /// The words of `text` as this query matches them: stemmed in its language
    /// ([`Words::of_in`]).
    ///
    /// ```
    /// use assetlib_core::search::{Language, parse_query_in};
    ///
    /// let q = parse_query_in("runs", Some(Language::English)).unwrap();
    /// let snippet = q.words_of("Running late").snippet(&q);
    /// assert_eq!(snippet.as_deref(), Some("<mark>Running</mark> late"));
    /// ```
    pub fn words_of<'a>(&self, text: &'a str) -> Words<'a> {
        Words::of_in(text, self.language)
    }
}

/// Appends `text` HTML-escaped, its whitespace runs (line breaks too) as one space.
fn escape_into(out: &mut String, text: &str) {
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space {
            out.push(' ');
            space = false;
        }
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    if space {
        out.push(' ');
    }
}

#[cfg(test)]
mod tests {
    use super::super::query::parse_query;
    use super::*;

    fn unmarked(snippet: &str) -> String {
        snippet.replace("<mark>", "").replace("</mark>", "")
    }

    fn shown_chars(snippet: &str) -> usize {
        unmarked(snippet)
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .chars()
            .count()
    }

    #[test]
    fn matches_ignore_case_and_accents_and_prefixes_and_phrases_match() {
        let text = "Le CAFÉ du coin: café-crème, Cafeteria.";
        let w = Words::of(text);
        let q = parse_query("cafe").unwrap();
        let found: Vec<&str> = w.matches(&q).into_iter().map(|r| &text[r]).collect();
        assert_eq!(
            found,
            ["CAFÉ", "café", "Cafeteria"],
            "the last word is a prefix"
        );
        let q = parse_query("cafe du").unwrap();
        let found: Vec<&str> = w.matches(&q).into_iter().map(|r| &text[r]).collect();
        assert_eq!(found, ["CAFÉ", "du", "café"], "an earlier word is whole");
        let q = parse_query(r#""café crème""#).unwrap();
        let found: Vec<&str> = w.matches(&q).into_iter().map(|r| &text[r]).collect();
        assert_eq!(found, ["café-crème"]);
    }

    #[test]
    fn snippets_mark_matches_escape_the_rest_and_keep_to_200_characters() {
        let q = parse_query("budget").unwrap();
        let w = Words::of("<b>Q3</b> budget & \"forecast\"\n\nfor the budget's owners");
        assert_eq!(
            w.snippet(&q).unwrap(),
            "&lt;b&gt;Q3&lt;/b&gt; <mark>budget</mark> &amp; &quot;forecast&quot; for the \
             <mark>budget</mark>&#39;s owners"
        );
        assert_eq!(Words::of("nothing here").snippet(&q), None);

        // A match deep in a long text: the snippet starts shortly before it, at a word.
        let long = format!(
            "{} the budget line {}",
            "word ".repeat(300),
            "tail ".repeat(300)
        );
        let s = Words::of(&long).snippet(&q).unwrap();
        assert!(s.starts_with("word "), "{s}");
        assert!(s.contains("<mark>budget</mark>"));
        assert!(shown_chars(&s) <= MAX_SNIPPET_CHARS, "{}", shown_chars(&s));
        let lead = s.find("<mark>").unwrap();
        assert!(lead <= LEAD_CHARS + 5, "{lead}");

        // Escapes and marks do not count; the text shown does.
        let amps = format!("budget {}", "& ".repeat(400));
        let s = Words::of(&amps).snippet(&q).unwrap();
        assert!(shown_chars(&s) <= MAX_SNIPPET_CHARS);
        assert!(
            s.len() > MAX_SNIPPET_CHARS,
            "the escapes are longer than the text"
        );
    }

    /// The parts of `text` that `q` matches, read in `q`'s language.
    fn matched<'t>(q: &SearchQuery, text: &'t str) -> Vec<&'t str> {
        q.words_of(text)
            .matches(q)
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn stemmed_words_mark_the_text_as_it_is_written() {
        let en = Some(crate::search::Language::English);
        let text = "Running reports: the runner ran; report RUNS.";
        let q = crate::search::parse_query_in("report runs", en).unwrap();
        assert_eq!(q.language, en);
        let w = q.words_of(text);
        assert_eq!(
            matched(&q, text),
            ["Running", "reports", "runner", "report", "RUNS"],
            "the last word is the beginning of a stem (runner); ran is another stem"
        );
        assert_eq!(
            w.snippet(&q).unwrap(),
            "<mark>Running</mark> <mark>reports</mark>: the <mark>runner</mark> ran; \
             <mark>report</mark> <mark>RUNS</mark>."
        );
        // A phrase matches stem by stem, in order.
        let q = crate::search::parse_query_in("\"running report\"", en).unwrap();
        assert_eq!(matched(&q, text), ["Running reports"]);
        // The same text without a language matches whole folded words only.
        let q = parse_query("runs report").unwrap();
        assert_eq!(matched(&q, text), ["reports", "report", "RUNS"]);
    }

    #[test]
    fn a_snippet_never_cuts_a_match_or_a_character() {
        // The phrase would straddle the 200th character: it is left out whole.
        let text = format!("budget {}très long mot", "é ".repeat(95));
        let q = parse_query("budget \"très long mot\"").unwrap();
        let s = Words::of(&text).snippet(&q).unwrap();
        assert!(s.starts_with("<mark>budget</mark> é é"), "{s}");
        assert!(!s.contains("très"), "{s}");
        assert!(shown_chars(&s) <= MAX_SNIPPET_CHARS);
        let q = parse_query("mot").unwrap();
        let s = Words::of(&text).snippet(&q).unwrap();
        assert!(s.ends_with("<mark>mot</mark>"), "{s}");
        assert!(s.starts_with("é é"), "{s}");
    }
}
