//! Stemming: the languages a store may name, so that the forms of a word (`running`, `runs`,
//! `run`) match one another.
//!
//! Nothing is stemmed unless a store names a language (its own configuration:
//! `MemoryStore::with_search_language`, `SledConfig::search_language`,
//! `PgConfig::search_language`). Then every word the
//! store indexes and every word of a query is folded first ([`super::fold`]) and stemmed
//! after, by the Snowball stemmer of that language. A stemmer is given the folded word:
//! German `Häuser` reaches it as `hauser`, French `été` as `ete`. Index and query are stemmed
//! alike, so what folding takes away is taken from both.
//!
//! ```
//! use assetlib_core::search::Language;
//!
//! let english: Language = "en".parse().unwrap();
//! assert_eq!(english, Language::English);
//! assert_eq!(english.to_string(), "english");
//! for word in ["running", "runs", "run"] {
//!     assert_eq!(english.stem(word), "run");
//! }
//! assert!("klingon".parse::<Language>().is_err());
//! ```

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A language whose words a store stems (one Snowball stemmer each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Language {
    /// Arabic (`ar`).
    Arabic,
    /// Danish (`da`).
    Danish,
    /// Dutch (`nl`).
    Dutch,
    /// English (`en`).
    English,
    /// Finnish (`fi`).
    Finnish,
    /// French (`fr`).
    French,
    /// German (`de`).
    German,
    /// Greek (`el`).
    Greek,
    /// Hungarian (`hu`).
    Hungarian,
    /// Italian (`it`).
    Italian,
    /// Norwegian (`no`).
    Norwegian,
    /// Portuguese (`pt`).
    Portuguese,
    /// Romanian (`ro`).
    Romanian,
    /// Russian (`ru`).
    Russian,
    /// Spanish (`es`).
    Spanish,
    /// Swedish (`sv`).
    Swedish,
    /// Tamil (`ta`).
    Tamil,
    /// Turkish (`tr`).
    Turkish,
}

impl Language {
    /// Every language, in the order of their names.
    pub const ALL: [Language; 18] = [
        Language::Arabic,
        Language::Danish,
        Language::Dutch,
        Language::English,
        Language::Finnish,
        Language::French,
        Language::German,
        Language::Greek,
        Language::Hungarian,
        Language::Italian,
        Language::Norwegian,
        Language::Portuguese,
        Language::Romanian,
        Language::Russian,
        Language::Spanish,
        Language::Swedish,
        Language::Tamil,
        Language::Turkish,
    ];

    /// Its English name in lowercase (`english`): what [`Language::from_str`] reads, what
    /// `Display` and serde write.
    pub const fn as_str(self) -> &'static str {
        self.names().0
    }

    /// Its ISO 639-1 code (`en`), which [`Language::from_str`] reads too.
    pub const fn code(self) -> &'static str {
        self.names().1
    }

    const fn names(self) -> (&'static str, &'static str) {
        match self {
            Language::Arabic => ("arabic", "ar"),
            Language::Danish => ("danish", "da"),
            Language::Dutch => ("dutch", "nl"),
            Language::English => ("english", "en"),
            Language::Finnish => ("finnish", "fi"),
            Language::French => ("french", "fr"),
            Language::German => ("german", "de"),
            Language::Greek => ("greek", "el"),
            Language::Hungarian => ("hungarian", "hu"),
            Language::Italian => ("italian", "it"),
            Language::Norwegian => ("norwegian", "no"),
            Language::Portuguese => ("portuguese", "pt"),
            Language::Romanian => ("romanian", "ro"),
            Language::Russian => ("russian", "ru"),
            Language::Spanish => ("spanish", "es"),
            Language::Swedish => ("swedish", "sv"),
            Language::Tamil => ("tamil", "ta"),
            Language::Turkish => ("turkish", "tr"),
        }
    }

    const fn algorithm(self) -> rust_stemmers::Algorithm {
        use rust_stemmers::Algorithm as A;
        match self {
            Language::Arabic => A::Arabic,
            Language::Danish => A::Danish,
            Language::Dutch => A::Dutch,
            Language::English => A::English,
            Language::Finnish => A::Finnish,
            Language::French => A::French,
            Language::German => A::German,
            Language::Greek => A::Greek,
            Language::Hungarian => A::Hungarian,
            Language::Italian => A::Italian,
            Language::Norwegian => A::Norwegian,
            Language::Portuguese => A::Portuguese,
            Language::Romanian => A::Romanian,
            Language::Russian => A::Russian,
            Language::Spanish => A::Spanish,
            Language::Swedish => A::Swedish,
            Language::Tamil => A::Tamil,
            Language::Turkish => A::Turkish,
        }
    }

    /// The stem of `folded_word`, a word already folded ([`super::fold`]: lowercase, without
    /// accents), by this language's Snowball stemmer: `running` is `run` in English. A word
    /// the stemmer would leave empty stays as it is.
    pub fn stem<'a>(self, folded_word: &'a str) -> Cow<'a, str> {
        let stem = rust_stemmers::Stemmer::create(self.algorithm()).stem(folded_word);
        if stem.is_empty() {
            Cow::Borrowed(folded_word)
        } else {
            stem
        }
    }
}

/// `word` (folded) stemmed in `language`, or as it is without one.
pub(super) fn stemmed(language: Option<Language>, word: String) -> String {
    match language {
        Some(language) => language.stem(&word).into_owned(),
        None => word,
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name [`Language::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown language {given:?}: expected one of {}", accepted())]
pub struct UnknownLanguage {
    /// What was given.
    pub given: String,
}

/// The accepted names, each with its code: `arabic (ar), danish (da), ...`.
fn accepted() -> String {
    Language::ALL
        .iter()
        .map(|l| format!("{} ({})", l.as_str(), l.code()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for Language {
    type Err = UnknownLanguage;

    /// Reads a language's English name (`english`) or its ISO 639-1 code (`en`), in any case,
    /// around spaces.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        Language::ALL
            .into_iter()
            .find(|l| {
                wanted.eq_ignore_ascii_case(l.as_str()) || wanted.eq_ignore_ascii_case(l.code())
            })
            .ok_or_else(|| UnknownLanguage { given: s.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stem of `word` folded, as a store indexes it (through the module's `words_in`).
    fn stem(language: Language, word: &str) -> String {
        let words: Vec<String> = super::super::words_in(word, Some(language))
            .map(|(w, _)| w)
            .collect();
        words.join(" ")
    }

    #[test]
    fn english_forms_share_a_stem() {
        for word in ["running", "runs", "run", "Running"] {
            assert_eq!(stem(Language::English, word), "run", "{word}");
        }
        assert_eq!(stem(Language::English, "reports"), "report");
        assert_eq!(stem(Language::English, "reporting"), "report");
        assert_eq!(stem(Language::English, "libraries"), "librari");
        assert_eq!(stem(Language::English, "library"), "librari");
    }

    #[test]
    fn french_and_german_words_are_folded_before_they_are_stemmed() {
        // Accents go first: the French stemmer sees `cafes`, `ete`.
        for (word, stem_of) in [
            ("continuer", "continu"),
            ("continuation", "continu"),
            ("Cafés", "caf"),
            ("café", "caf"),
            ("chevaux", "cheval"),
            ("été", "ete"),
        ] {
            assert_eq!(stem(Language::French, word), stem_of, "{word}");
        }
        // Umlauts and ß are folded (`hauser`, `strasse`) before the German stemmer runs.
        for (word, stem_of) in [
            ("Häuser", "haus"),
            ("Hauses", "haus"),
            ("Straße", "strass"),
            ("Strassen", "strass"),
            ("Kategorien", "kategori"),
        ] {
            assert_eq!(stem(Language::German, word), stem_of, "{word}");
        }
    }

    #[test]
    fn without_a_language_nothing_is_stemmed() {
        assert_eq!(stemmed(None, "running".into()), "running");
        assert_eq!(stemmed(Some(Language::English), "2024".into()), "2024");
    }

    #[test]
    fn names_and_codes_are_read_in_any_case() {
        for language in Language::ALL {
            assert_eq!(language.as_str().parse(), Ok(language));
            assert_eq!(language.code().to_uppercase().parse(), Ok(language));
            assert_eq!(language.to_string(), language.as_str());
            let json = serde_json::to_string(&language).expect("json");
            assert_eq!(json, format!("\"{}\"", language.as_str()));
            assert_eq!(serde_json::from_str::<Language>(&json).ok(), Some(language));
            // Every stemmer runs on a folded word and gives a word back.
            assert!(!language.stem("a").is_empty());
        }
        assert_eq!(" English ".parse(), Ok(Language::English));
        let e = "klingon".parse::<Language>().expect_err("unknown");
        assert_eq!(e.given, "klingon");
        let message = e.to_string();
        assert!(
            message.starts_with(
                "unknown language \"klingon\": expected one of arabic (ar), danish (da)"
            )
        );
        assert!(message.ends_with("turkish (tr)"), "{message}");
    }
}
