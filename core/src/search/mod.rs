//! Search inside the assets (feature `search`): the query language of `q`, how text is
//! folded into words (and stemmed, when a store names a language), and the snippets that
//! show where a hit matched.
//!
//! These are the rules every store's search follows, so two stores give the same hits for
//! the same query: a store indexes the words [`words_in`] makes of a text in its language
//! ([`Language`]; none by default: words are folded, not stemmed), a query is read by
//! [`parse_query_in`] in the same language, and a hit's snippets come from
//! [`Words::snippet`].
//!
//! ```
//! use assetlib_core::search::{Fields, MatchField, Words, parse_query};
//!
//! let q = parse_query("cafe menu").unwrap();
//! let title = Words::of("Café menu for <b>spring</b>");
//! let content = Words::of("Opening hours");
//! assert_eq!(q.score(&Fields { texts: vec![(MatchField::Content, vec![content])] }), None);
//! let fields = Fields { texts: vec![(MatchField::Title, vec![title])] };
//! assert_eq!(q.score(&fields), Some(16));
//! assert_eq!(
//!     fields.texts[0].1[0].snippet(&q).unwrap(),
//!     "<mark>Café</mark> <mark>menu</mark> for &lt;b&gt;spring&lt;/b&gt;"
//! );
//! ```
//!
//! In a language, every form of a word finds the others, and the snippet marks the text as
//! it is written:
//!
//! ```
//! use assetlib_core::search::{Language, parse_query_in};
//!
//! let q = parse_query_in("annual reports", Some(Language::English)).unwrap();
//! let title = q.words_of("Reporting on the annual report");
//! assert_eq!(
//!     title.snippet(&q).unwrap(),
//!     "<mark>Reporting</mark> on the <mark>annual</mark> <mark>report</mark>"
//! );
//! ```

mod fold;
mod language;
mod query;
mod score;
mod snippet;

pub use fold::{MAX_WORD_BYTES, distinct_words, fold, words, words_in};
pub use language::{Language, UnknownLanguage};
pub use query::{MAX_QUERY_CHARS, SearchQuery, Term, parse_query, parse_query_in};
pub use score::{Fields, MatchField};
pub use snippet::{MAX_SNIPPET_CHARS, Words};
