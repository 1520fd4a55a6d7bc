//! Pages and words of a PDF too large to read whole, by ranged reads (`xref.rs`): never the
//! whole file in memory, and nothing `lopdf` would parse by recursion.
//!
//! - **Pages**: `/Count` of the page tree's root, which the catalog (the trailer's `/Root`)
//!   names: a handful of objects read, wherever the file is large.
//! - **Words**: the page tree walked in order (iteratively; at most [`MAX_PDF_DEPTH`] levels,
//!   no node twice), each page's fonts read once (their `/Encoding` and `/ToUnicode` objects,
//!   the maps within [`MAX_CMAP`] each and [`MAX_CMAPS`] together), then each page's content
//!   streams read, decoded and counted as a file read whole is counted, one page at a time.
//!   What the walk keeps (fonts, and each page's content references and font names) is at
//!   most [`MAX_STRUCTURE`] bytes. Past any bound, past [`Limits::max_pdf_page_content`] on a
//!   page or [`Limits::max_pdf_decoded`] in all, in an encrypted file, or when a read fails
//!   (a file store that cannot be reached, or the time allowed spent), `word_count` is null.

use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;

use lopdf::{Dictionary, Document, Encoding};

use super::super::words::WordCounter;
use super::super::{Counts, Limits, ReadAt};
use super::decode::decoded_len;
use super::lexer::{Dict, Value};
use super::scan::{MAX_STRUCTURE, lopdf_decoded};
use super::xref::{Object, Objects};
use super::{MAX_CMAP, MAX_CMAPS, MAX_PDF_DEPTH, count_content};

/// Most fonts read for the word count.
const MAX_FONTS: usize = 65_536;

/// Pages and words of the PDF `file`, read by ranges (see the module docs); null where they
/// cannot be read within the bounds.
pub(in crate::extract) fn read_large(file: &mut dyn ReadAt, limits: &Limits) -> Counts {
    catch_unwind(AssertUnwindSafe(|| {
        let Some(mut objects) = Objects::open(file, limits) else {
            return Counts::default();
        };
        let Some(pages) = page_count(&mut objects) else {
            return Counts::default();
        };
        let counter = if objects.encrypted {
            None
        } else {
            words(&mut objects, limits)
        };
        Counts::of(Some(pages), counter, true)
    }))
    .unwrap_or_default()
}

/// The page tree's root: `/Pages` of the catalog.
fn page_tree(objects: &mut Objects<'_>) -> Option<(u32, Dict)> {
    let catalog = objects.dict(&Value::Ref(objects.root?))?;
    let &Value::Ref(root) = catalog.get(b"Pages")? else {
        return None;
    };
    Some((root, objects.dict(&Value::Ref(root))?))
}

/// `/Count` of the page tree's root, when it is at least one.
fn page_count(objects: &mut Objects<'_>) -> Option<u64> {
    let (_, root) = page_tree(objects)?;
    match objects.resolve(root.get(b"Count")?)? {
        Value::Int(n) => u64::try_from(n).ok().filter(|n| *n > 0),
        _ => None,
    }
}

/// Font resource names and the fonts (indexes into [`Fonts::dicts`]) they stand for, the
/// nearest first.
type FontMap = Vec<(Vec<u8>, usize)>;

/// What the word count keeps of a page.
struct Page {
    contents: Vec<u32>,
    fonts: Rc<FontMap>,
}

/// The fonts the pages use, and the objects their encodings read.
#[derive(Default)]
struct Fonts {
    dicts: Vec<Dictionary>,
    by_number: HashMap<u32, usize>,
    /// Each font's `/Encoding` and `/ToUnicode` objects, where `lopdf` looks them up.
    doc: Document,
    cmaps: u64,
}

/// Bytes still allowed to be kept by the walk.
struct Budget(u64);

impl Budget {
    /// Takes `n` bytes; `None` when fewer are left.
    fn take(&mut self, n: u64) -> Option<()> {
        self.0 = self.0.checked_sub(n)?;
        Some(())
    }
}

/// Words of every page, as [`super::read_pdf`] counts them (see the module docs).
fn words(objects: &mut Objects<'_>, limits: &Limits) -> Option<WordCounter> {
    let (pages, fonts) = walk(objects)?;
    let mut counter = WordCounter::keeping(limits.keep_text);
    let mut parsed = 0u64;
    let mut encodings: HashMap<usize, Option<Encoding<'_>>> = HashMap::new();
    for (n, page) in pages.iter().enumerate() {
        if n > 0 {
            counter.page();
        }
        let mut content = Vec::new();
        for &number in &page.contents {
            let Some(Object::Stream { dict, data_at }) = objects.object(number) else {
                continue;
            };
            let cap = limits.max_pdf_page_content;
            let raw = objects.stream_data(&dict, data_at, cap, 0)?;
            let data = if dict.filters().is_empty() {
                raw
            } else {
                // Measured within the cap first; what lopdf cannot decode counts as it is.
                decoded_len(&raw, &dict.filters(), cap)?;
                lopdf_decoded(&dict, &raw).unwrap_or(raw)
            };
            parsed += data.len() as u64;
            if parsed > limits.max_pdf_decoded || (content.len() + data.len()) as u64 > cap {
                return None;
            }
            content.extend_from_slice(&data);
            content.push(b'\n');
        }
        for (_, key) in page.fonts.iter() {
            encodings
                .entry(*key)
                .or_insert_with(|| fonts.dicts.get(*key)?.get_font_encoding(&fonts.doc).ok());
        }
        let encoding_of = |name: &[u8]| {
            let (_, key) = page.fonts.iter().find(|(n, _)| n == name)?;
            encodings.get(key)?.as_ref()
        };
        count_content(&mut counter, &content, encoding_of)?;
    }
    Some(counter)
}

/// One level of the page tree being walked: its kids, the next one to visit, and the fonts
/// its pages inherit.
struct Level {
    kids: Vec<u32>,
    next: usize,
    fonts: Rc<FontMap>,
}

/// The pages in order, with their content references and fonts; `None` past a bound, or when
/// the tree loops.
fn walk(objects: &mut Objects<'_>) -> Option<(Vec<Page>, Fonts)> {
    let (root, root_dict) = page_tree(objects)?;
    let mut fonts = Fonts::default();
    let mut budget = Budget(MAX_STRUCTURE);
    let mut seen = HashSet::from([root]);
    let mut pages = Vec::new();
    let inherited = node_fonts(objects, &root_dict, &Rc::default(), &mut fonts, &mut budget)?;
    let mut levels = vec![Level {
        kids: kids(objects, &root_dict, &mut budget)?,
        next: 0,
        fonts: inherited,
    }];
    while let Some(level) = levels.last_mut() {
        let Some(&kid) = level.kids.get(level.next) else {
            levels.pop();
            continue;
        };
        level.next += 1;
        let above = Rc::clone(&level.fonts);
        let Some(node) = objects.dict(&Value::Ref(kid)) else {
            continue;
        };
        match node.name(b"Type") {
            Some(b"Pages") => {
                if levels.len() >= MAX_PDF_DEPTH || !seen.insert(kid) {
                    return None;
                }
                let fonts = node_fonts(objects, &node, &above, &mut fonts, &mut budget)?;
                let kids = kids(objects, &node, &mut budget)?;
                levels.push(Level {
                    kids,
                    next: 0,
                    fonts,
                });
            }
            Some(b"Page") => {
                let page_fonts = node_fonts(objects, &node, &above, &mut fonts, &mut budget)?;
                let contents = contents(objects, &node);
                budget.take(32 + 4 * contents.len() as u64)?;
                pages.push(Page {
                    contents,
                    fonts: page_fonts,
                });
            }
            _ => {}
        }
    }
    Some((pages, fonts))
}

/// The object numbers of a node's `/Kids`.
fn kids(objects: &mut Objects<'_>, node: &Dict, budget: &mut Budget) -> Option<Vec<u32>> {
    let Some(Value::Array(items)) = node.get(b"Kids").and_then(|k| objects.resolve(k)) else {
        return Some(Vec::new());
    };
    budget.take(4 * items.len() as u64)?;
    Some(references(&items))
}

/// The content streams of a page: `/Contents` as a stream, or an array of them (itself
/// perhaps referred to).
fn contents(objects: &mut Objects<'_>, page: &Dict) -> Vec<u32> {
    match page.get(b"Contents") {
        Some(&Value::Ref(number)) => match objects.object(number) {
            Some(Object::Value(Value::Array(items))) => references(&items),
            _ => vec![number],
        },
        Some(Value::Array(items)) => references(items),
        _ => Vec::new(),
    }
}

fn references(items: &[Value]) -> Vec<u32> {
    items
        .iter()
        .filter_map(|v| match v {
            Value::Ref(number) => Some(*number),
            _ => None,
        })
        .collect()
}

/// The fonts a node's pages use: those of its own `/Resources`, then those it inherits
/// (`above`), a name used in both meaning its own. Its fonts are read as they are met.
fn node_fonts(
    objects: &mut Objects<'_>,
    node: &Dict,
    above: &Rc<FontMap>,
    fonts: &mut Fonts,
    budget: &mut Budget,
) -> Option<Rc<FontMap>> {
    let own = node
        .get(b"Resources")
        .and_then(|r| objects.dict(r))
        .and_then(|resources| objects.dict(resources.get(b"Font")?));
    let Some(own) = own else {
        return Some(Rc::clone(above));
    };
    let mut map: FontMap = Vec::new();
    for (name, value) in &own.0 {
        if map.iter().any(|(n, _)| n == name) {
            continue;
        }
        if let Some(key) = fonts.read(objects, value, budget)? {
            budget.take(16 + name.len() as u64)?;
            map.push((name.clone(), key));
        }
    }
    for (name, key) in above.iter() {
        if !map.iter().any(|(n, _)| n == name) {
            budget.take(16 + name.len() as u64)?;
            map.push((name.clone(), *key));
        }
    }
    Some(Rc::new(map))
}

impl Fonts {
    /// The font `value` names (a reference or a dictionary), read with the objects its
    /// encoding reads when first met: `Some(None)` when it is not a font dictionary, `None`
    /// past a bound.
    fn read(
        &mut self,
        objects: &mut Objects<'_>,
        value: &Value,
        budget: &mut Budget,
    ) -> Option<Option<usize>> {
        let number = match value {
            &Value::Ref(number) => {
                if let Some(&key) = self.by_number.get(&number) {
                    return Some(Some(key));
                }
                Some(number)
            }
            _ => None,
        };
        let Some(dict) = objects.dict(value) else {
            return Some(None);
        };
        if self.dicts.len() >= MAX_FONTS {
            return None;
        }
        if let Some(&Value::Ref(encoding)) = dict.get(b"Encoding")
            && !self.doc.objects.contains_key(&(encoding, 0))
            && let Some(Object::Value(value)) = objects.object(encoding)
        {
            budget.take(weight(&value))?;
            self.doc.objects.insert((encoding, 0), value.to_lopdf());
        }
        if let Some(&Value::Ref(map)) = dict.get(b"ToUnicode")
            && !self.doc.objects.contains_key(&(map, 0))
            && let Some(Object::Stream { dict, data_at }) = objects.object(map)
        {
            let raw = objects.stream_data(&dict, data_at, MAX_CMAP, 0)?;
            self.cmaps += decoded_len(&raw, &dict.filters(), MAX_CMAP)?;
            if self.cmaps > MAX_CMAPS {
                return None;
            }
            budget.take(raw.len() as u64)?;
            let lopdf::Object::Dictionary(stream_dict) = Value::Dict(dict.0).to_lopdf() else {
                return None;
            };
            let stream = lopdf::Stream::new(stream_dict, raw);
            self.doc
                .objects
                .insert((map, 0), lopdf::Object::Stream(stream));
        }
        let entries = Value::Dict(dict.0);
        budget.take(weight(&entries))?;
        let lopdf::Object::Dictionary(font) = entries.to_lopdf() else {
            return None;
        };
        let key = self.dicts.len();
        self.dicts.push(font);
        if let Some(number) = number {
            self.by_number.insert(number, key);
        }
        Some(Some(key))
    }
}

/// About what a value takes in memory, parsed.
fn weight(value: &Value) -> u64 {
    match value {
        Value::Name(name) => 32 + name.len() as u64,
        Value::Array(items) => 32 + items.iter().map(weight).sum::<u64>(),
        Value::Dict(entries) => {
            32 + entries
                .iter()
                .map(|(key, value)| key.len() as u64 + weight(value))
                .sum::<u64>()
        }
        _ => 32,
    }
}

/// How many pages the walk finds and how many fonts it reads, for tests.
#[cfg(test)]
pub(super) fn pages_and_fonts(file: &mut dyn ReadAt, limits: &Limits) -> Option<(usize, usize)> {
    let mut objects = Objects::open(file, limits)?;
    let (pages, fonts) = walk(&mut objects)?;
    Some((pages.len(), fonts.dicts.len()))
}
