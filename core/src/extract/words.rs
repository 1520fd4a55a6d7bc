//! Counting words in text that arrives in pieces.
//!
//! A word is a run of non-whitespace characters with at least one letter or digit in it, so
//! Markdown markers (`#`, `-`, `|`), dashes and bullets standing alone are not words.

/// Counts words across pieces of text, so that a word split over two pieces (two XML text
/// nodes, two PDF strings) counts once. [`WordCounter::boundary`] marks a break that the text
/// itself does not show (a paragraph end, a tab element, a line move).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct WordCounter {
    /// Whether the current run of non-whitespace has been counted already.
    counted: bool,
    words: u64,
}

impl WordCounter {
    /// Feeds a piece of text.
    pub(super) fn text(&mut self, piece: &str) {
        for c in piece.chars() {
            self.char(c);
        }
    }

    /// Feeds one character.
    pub(super) fn char(&mut self, c: char) {
        if c.is_whitespace() {
            self.counted = false;
        } else if !self.counted && c.is_alphanumeric() {
            self.counted = true;
            self.words += 1;
        }
    }

    /// Marks a break between words.
    pub(super) fn boundary(&mut self) {
        self.counted = false;
    }

    /// The words counted so far.
    pub(super) fn count(&self) -> u64 {
        self.words
    }
}

/// Words of a whole text.
pub(super) fn count(text: &str) -> u64 {
    let mut counter = WordCounter::default();
    counter.text(text);
    counter.count()
}
