//! How hits rank: the same number on every store.

use serde::Serialize;

use super::query::{SearchQuery, Term};
use super::snippet::Words;

/// Where a hit matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum MatchField {
    /// The asset's title.
    Title,
    /// Its tags.
    Tags,
    /// Its description.
    Description,
    /// The text inside its file.
    Content,
}

impl MatchField {
    /// What a clause matched here adds to a hit's score: title 8, tags 4, description 2,
    /// content 1.
    pub const fn weight(self) -> u32 {
        match self {
            MatchField::Title => 8,
            MatchField::Tags => 4,
            MatchField::Description => 2,
            MatchField::Content => 1,
        }
    }
}

/// A record's searchable texts, by field: each field's texts (tags one each, content one per
/// page), read into words in the language of the query that scores them
/// ([`SearchQuery::words_of`]).
#[derive(Debug, Default)]
pub struct Fields<'a> {
    /// Each field with its texts (a field may be left out: it matches nothing).
    pub texts: Vec<(MatchField, Vec<Words<'a>>)>,
}

impl Fields<'_> {
    /// Whether `term` occurs in any field.
    pub fn has(&self, term: &Term) -> bool {
        self.texts
            .iter()
            .any(|(_, ws)| ws.iter().any(|w| w.has(term)))
    }

    /// The weight of the best field one of `clause`'s terms occurs in; `None` when none does.
    pub fn best(&self, clause: &[Term]) -> Option<u32> {
        self.texts
            .iter()
            .filter(|(_, ws)| ws.iter().any(|w| clause.iter().any(|t| w.has(t))))
            .map(|(field, _)| field.weight())
            .max()
    }
}

impl SearchQuery {
    /// The score of a record whose fields are `fields`: for each clause, the weight of the
    /// best field one of its terms occurs in, summed; `None` when it is no hit (a clause
    /// occurs nowhere, or an excluded term occurs anywhere). Term frequency and length do not
    /// count, so every store computes the same number; ties rank newest first, then by id.
    pub fn score(&self, fields: &Fields<'_>) -> Option<u32> {
        if self.excluded.iter().any(|t| fields.has(t)) {
            return None;
        }
        let mut score = 0;
        for clause in &self.clauses {
            score += fields.best(clause)?;
        }
        Some(score)
    }
}

#[cfg(test)]
mod tests {
    use super::super::query::parse_query;
    use super::*;

    fn fields<'a>(title: &'a str, tags: &[&'a str], content: &[&'a str]) -> Fields<'a> {
        Fields {
            texts: vec![
                (MatchField::Title, vec![Words::of(title)]),
                (
                    MatchField::Tags,
                    tags.iter().map(|t| Words::of(t)).collect(),
                ),
                (MatchField::Description, vec![]),
                (
                    MatchField::Content,
                    content.iter().map(|c| Words::of(c)).collect(),
                ),
            ],
        }
    }

    #[test]
    fn each_clause_counts_its_best_field() {
        let f = fields("Annual report", &["finance"], &["page one", "cash flow"]);
        let score = |q: &str| parse_query(q).unwrap().score(&f);
        assert_eq!(score("report"), Some(8));
        assert_eq!(score("finance"), Some(4));
        assert_eq!(score("cash"), Some(1));
        assert_eq!(score("annual cash"), Some(9));
        assert_eq!(score("flow OR report x"), None, "x occurs nowhere");
        assert_eq!(
            score("flow OR report"),
            Some(8),
            "an OR clause takes its best term"
        );
        assert_eq!(score("report -cash"), None);
        assert_eq!(score("\"cash flow\" finance"), Some(5));
        assert_eq!(score("\"flow cash\""), None, "a phrase keeps its order");
        assert_eq!(score("ann"), Some(8), "the last word as a prefix");
        assert_eq!(score("ann report"), None, "an earlier word whole");
        assert_eq!(
            score("\"one cash\""),
            None,
            "a phrase stays inside one page"
        );
    }

    #[test]
    fn in_a_language_each_form_scores_as_the_word() {
        let en = Some(crate::search::Language::English);
        let q = crate::search::parse_query_in("reporting flows", en).unwrap();
        let fields = Fields {
            texts: vec![
                (MatchField::Title, vec![q.words_of("Annual reports")]),
                (MatchField::Content, vec![q.words_of("cash flow")]),
            ],
        };
        assert_eq!(q.score(&fields), Some(9));
        let plain = parse_query("reporting flows").unwrap();
        let fields = Fields {
            texts: vec![
                (MatchField::Title, vec![plain.words_of("Annual reports")]),
                (MatchField::Content, vec![plain.words_of("cash flow")]),
            ],
        };
        assert_eq!(plain.score(&fields), None, "no language, no stemming");
    }
}
