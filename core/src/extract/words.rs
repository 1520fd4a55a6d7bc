//! Counting words in text that arrives in pieces.
//!
//! A word is a run of non-whitespace characters with at least one letter or digit in it, so
//! Markdown markers (`#`, `-`, `|`), dashes and bullets standing alone are not words.

/// Counts words across pieces of text, so that a word split over two pieces (two XML text
/// nodes, two PDF strings) counts once. [`WordCounter::boundary`] marks a break that the text
/// itself does not show (a paragraph end, a tab element, a line move).
#[derive(Debug, Default, Clone)]
pub(super) struct WordCounter {
    /// Whether the current run of non-whitespace has been counted already.
    counted: bool,
    words: u64,
    /// The text kept as it is counted ([`WordCounter::keeping`]), for search.
    kept: Option<Box<Kept>>,
}

/// Text kept while counting: pages, each with its whitespace runs and breaks as one space,
/// at most `left` more bytes in all.
#[derive(Debug, Clone)]
struct Kept {
    pages: Vec<String>,
    left: u64,
    /// A break is due before the next character.
    space: bool,
}

impl Kept {
    fn push(&mut self, c: char) {
        if c.is_whitespace() {
            self.space = true;
            return;
        }
        let Some(page) = self.pages.last_mut() else {
            return;
        };
        let gap = u64::from(self.space && !page.is_empty());
        let need = c.len_utf8() as u64 + gap;
        if need > self.left {
            self.left = 0;
            return;
        }
        self.left -= need;
        if gap == 1 {
            page.push(' ');
        }
        self.space = false;
        page.push(c);
    }
}

impl WordCounter {
    /// A counter that also keeps the text it counts, at most `limit` bytes of it (none when
    /// `limit` is 0): [`crate::extract::Limits::keep_text`].
    pub(super) fn keeping(limit: u64) -> Self {
        WordCounter {
            kept: (limit > 0).then(|| {
                Box::new(Kept {
                    pages: vec![String::new()],
                    left: limit,
                    space: false,
                })
            }),
            ..WordCounter::default()
        }
    }

    /// Starts a new page of the kept text (PDF pages).
    pub(super) fn page(&mut self) {
        self.boundary();
        if let Some(kept) = &mut self.kept {
            kept.pages.push(String::new());
            kept.space = false;
        }
    }

    /// The pages of text kept, if the counter keeps text.
    pub(super) fn take_pages(&mut self) -> Option<Vec<String>> {
        self.kept.take().map(|k| k.pages)
    }

    /// Feeds a piece of text.
    pub(super) fn text(&mut self, piece: &str) {
        for c in piece.chars() {
            self.char(c);
        }
    }

    /// Feeds one character.
    pub(super) fn char(&mut self, c: char) {
        if let Some(kept) = &mut self.kept {
            kept.push(c);
        }
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
        if let Some(kept) = &mut self.kept {
            kept.space = true;
        }
    }

    /// The words counted so far.
    pub(super) fn count(&self) -> u64 {
        self.words
    }
}

/// Words of a whole text (the tests of large files compare with it).
#[cfg(all(test, feature = "previews"))]
pub(super) fn count(text: &str) -> u64 {
    let mut counter = WordCounter::default();
    counter.text(text);
    counter.count()
}
