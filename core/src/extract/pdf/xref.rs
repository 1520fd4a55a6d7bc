//! A PDF's objects, found through its cross-reference sections and read by ranges, for files
//! too large to read whole (`large.rs`).
//!
//! `startxref` at the end of the file names the newest section; each section's trailer names
//! the one before it (`/Prev`, an incremental update's), and a hybrid file's table names a
//! cross-reference stream of its own (`/XRefStm`), read right after it. Tables stay in the
//! file: only where each subsection's entries start is kept, and an object's entry (20 bytes)
//! is read when the object is wanted. Cross-reference streams are decoded and kept, and so is
//! the last object stream read; together they decode to at most [`MAX_STRUCTURE`] bytes. The
//! newest section that lists an object says where it is.
//!
//! Objects are parsed by the pre-scan's lexer (names, integers, arrays, dictionaries and
//! references; strings and reals are kept as nothing), in a window of the file that grows
//! from 4 KiB to at most 1 MiB until the object fits.

use std::collections::HashSet;

use memchr::memmem;

use super::super::{Limits, ReadAt};
use super::MAX_LENGTH_REFERENCES;
use super::decode::decoded_len;
use super::lexer::{Dict, Lexer, Value, is_white};
use super::scan::{MAX_STRUCTURE, lopdf_decoded};

/// How far from the end of the file `startxref` is looked for.
const TAIL: u64 = 4096;
/// Most cross-reference sections read (a file and its incremental updates).
const MAX_SECTIONS: usize = 1024;
/// Most subsections of one cross-reference table.
const MAX_SUBSECTIONS: usize = 65_536;
/// The windows an object is parsed from, each tried when the one before was too small.
const WINDOWS: [usize; 3] = [4 * 1024, 64 * 1024, 1024 * 1024];
/// Widest field of a cross-reference stream entry (offsets of 8 bytes).
const MAX_FIELD: usize = 8;

/// Where the newest section that lists an object puts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    /// Not in use, or listed nowhere.
    Free,
    /// At this offset of the file.
    At(u64),
    /// The `index`-th object of the object stream numbered `container`.
    InStream {
        /// The object stream's number.
        container: u32,
        /// The object's place in it.
        index: u32,
    },
}

/// One cross-reference section.
enum Section {
    /// A table: where each subsection's entries start in the file.
    Table(Vec<Subsection>),
    /// A cross-reference stream, decoded.
    Stream {
        widths: [usize; 3],
        /// The first object number and the count of each subsection.
        index: Vec<(u64, u64)>,
        data: Vec<u8>,
    },
}

/// A subsection of a table: `count` entries of 20 bytes from `entries_at`, for the objects
/// numbered from `first`.
struct Subsection {
    first: u64,
    count: u64,
    entries_at: u64,
}

/// An object as read: a value, or a stream (its dictionary, and where its data starts).
pub(super) enum Object {
    Value(Value),
    Stream { dict: Dict, data_at: u64 },
}

/// An object stream, decoded: each object's number and offset (after `/First`), and the data.
struct ObjectStream {
    number: u32,
    first: usize,
    offsets: Vec<(u32, usize)>,
    data: Vec<u8>,
}

impl ObjectStream {
    /// The object numbered `number`, expected `index`-th.
    fn value(&self, number: u32, index: u32) -> Option<Value> {
        let offset = match self.offsets.get(usize::try_from(index).ok()?) {
            Some(&(n, offset)) if n == number => offset,
            _ => self.offsets.iter().find(|(n, _)| *n == number)?.1,
        };
        let mut lexer = Lexer {
            s: self.data.get(self.first.checked_add(offset)?..)?,
            pos: 0,
        };
        lexer.value(0)
    }
}

/// A PDF's objects, read by ranges.
pub(super) struct Objects<'a> {
    file: &'a mut dyn ReadAt,
    size: u64,
    /// Newest first.
    sections: Vec<Section>,
    /// The document catalog's number: the newest trailer's `/Root`.
    pub(super) root: Option<u32>,
    /// Whether a trailer names `/Encrypt`.
    pub(super) encrypted: bool,
    /// Bytes of cross-reference and object streams decoded so far.
    structure: u64,
    /// The object stream read last.
    stream: Option<ObjectStream>,
    /// Most bytes of one stream's data read ([`Limits::max_pdf_stream`]).
    max_stream: u64,
}

impl<'a> Objects<'a> {
    /// Reads the cross-reference sections of `file`; `None` when the newest cannot be read.
    /// An older section that cannot be read, or a `/Prev` that loops, ends the chain there.
    pub(super) fn open(file: &'a mut dyn ReadAt, limits: &Limits) -> Option<Self> {
        let size = file.size();
        let mut objects = Objects {
            file,
            size,
            sections: Vec::new(),
            root: None,
            encrypted: false,
            structure: 0,
            stream: None,
            max_stream: limits.max_pdf_stream,
        };
        let mut next = Some(objects.startxref()?);
        let mut seen = HashSet::new();
        while let Some(at) = next.take() {
            if objects.sections.len() >= MAX_SECTIONS || !seen.insert(at) {
                break;
            }
            let Some((section, trailer)) = objects.section(at) else {
                if objects.sections.is_empty() {
                    return None;
                }
                break;
            };
            objects.sections.push(section);
            if objects.root.is_none()
                && let Some(&Value::Ref(root)) = trailer.get(b"Root")
            {
                objects.root = Some(root);
            }
            objects.encrypted |= trailer.get(b"Encrypt").is_some();
            let offset = |key: &[u8]| match trailer.get(key) {
                Some(&Value::Int(n)) => u64::try_from(n).ok(),
                _ => None,
            };
            if let Some(stream_at) = offset(b"XRefStm")
                && seen.insert(stream_at)
                && let Some((section, _)) = objects.section(stream_at)
            {
                objects.sections.push(section);
            }
            next = offset(b"Prev");
        }
        Some(objects)
    }

    /// Up to `len` bytes from `at` (fewer at the end of the file); `None` when the read fails.
    fn read(&mut self, at: u64, len: usize) -> Option<Vec<u8>> {
        if at >= self.size {
            return Some(Vec::new());
        }
        self.file.read_at(at, len).ok()
    }

    /// The offset `startxref` names.
    fn startxref(&mut self) -> Option<u64> {
        let len = self.size.min(TAIL);
        let tail = self.read(self.size - len, usize::try_from(len).ok()?)?;
        let at = memmem::rfind(&tail, b"startxref")?;
        let mut lexer = Lexer {
            s: &tail[at + b"startxref".len()..],
            pos: 0,
        };
        match lexer.value(0)? {
            Value::Int(n) => u64::try_from(n).ok(),
            _ => None,
        }
    }

    /// The section at `at` and its trailer (a stream's dictionary is its trailer).
    fn section(&mut self, at: u64) -> Option<(Section, Dict)> {
        let peek = self.read(at, 64)?;
        let mut lexer = Lexer { s: &peek, pos: 0 };
        lexer.skip_space();
        if peek[lexer.pos..].starts_with(b"xref") {
            self.table(at + (lexer.pos + b"xref".len()) as u64)
        } else {
            self.xref_stream(at)
        }
    }

    /// The table whose first subsection starts at `pos`, and its trailer.
    fn table(&mut self, mut pos: u64) -> Option<(Section, Dict)> {
        let mut subsections = Vec::new();
        loop {
            let head = self.read(pos, 128)?;
            let mut lexer = Lexer { s: &head, pos: 0 };
            lexer.skip_space();
            if head[lexer.pos..].starts_with(b"trailer") {
                let at = pos + (lexer.pos + b"trailer".len()) as u64;
                let Some(Value::Dict(entries)) = self.value_at(at) else {
                    return None;
                };
                return Some((Section::Table(subsections), Dict(entries)));
            }
            let (Some(Value::Int(first)), Some(Value::Int(count))) =
                (lexer.value(0), lexer.value(0))
            else {
                return None;
            };
            lexer.skip_space();
            let (first, count) = (u64::try_from(first).ok()?, u64::try_from(count).ok()?);
            let entries_at = pos + lexer.pos as u64;
            if subsections.len() >= MAX_SUBSECTIONS {
                return None;
            }
            subsections.push(Subsection {
                first,
                count,
                entries_at,
            });
            pos = entries_at.checked_add(count.checked_mul(20)?)?;
            if pos > self.size {
                return None;
            }
        }
    }

    /// The cross-reference stream at `at`, decoded, and its dictionary.
    fn xref_stream(&mut self, at: u64) -> Option<(Section, Dict)> {
        let Object::Stream { dict, data_at } = self.object_at(at)? else {
            return None;
        };
        let ints = |value: Option<&Value>| -> Option<Vec<u64>> {
            match value? {
                Value::Array(items) => items
                    .iter()
                    .map(|v| match v {
                        Value::Int(n) => u64::try_from(*n).ok(),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            }
        };
        let w = ints(dict.get(b"W"))?;
        let widths = [
            usize::try_from(*w.first()?).ok()?,
            usize::try_from(*w.get(1)?).ok()?,
            usize::try_from(*w.get(2)?).ok()?,
        ];
        if widths.iter().any(|w| *w > MAX_FIELD) || widths.iter().sum::<usize>() == 0 {
            return None;
        }
        let index = match ints(dict.get(b"Index")) {
            Some(pairs) => pairs.chunks_exact(2).map(|p| (p[0], p[1])).collect(),
            None => match dict.get(b"Size") {
                Some(&Value::Int(size)) => vec![(0, u64::try_from(size).ok()?)],
                _ => return None,
            },
        };
        let raw = self.stream_data(&dict, data_at, self.max_stream, 0)?;
        let data = decode(&dict, raw, MAX_STRUCTURE.saturating_sub(self.structure))?;
        self.structure += data.len() as u64;
        Some((
            Section::Stream {
                widths,
                index,
                data,
            },
            dict,
        ))
    }

    /// Where the newest section that lists object `number` puts it.
    pub(super) fn entry(&mut self, number: u32) -> Entry {
        let n = u64::from(number);
        for i in 0..self.sections.len() {
            let found = match &self.sections[i] {
                Section::Table(subsections) => subsections
                    .iter()
                    .find(|s| n >= s.first && n - s.first < s.count)
                    .map(|s| Err(s.entries_at + (n - s.first) * 20)),
                Section::Stream {
                    widths,
                    index,
                    data,
                } => stream_entry(widths, index, data, n).map(Ok),
            };
            match found {
                Some(Ok(entry)) => return entry,
                Some(Err(at)) => {
                    return self.read(at, 20).map_or(Entry::Free, |e| table_entry(&e));
                }
                None => {}
            }
        }
        Entry::Free
    }

    /// Object `number` as its newest section has it; `None` when it is free or cannot be
    /// read.
    pub(super) fn object(&mut self, number: u32) -> Option<Object> {
        self.object_within(number, 0)
    }

    /// [`Objects::object`], `depth` references deep in finding a stream's length.
    fn object_within(&mut self, number: u32, depth: usize) -> Option<Object> {
        match self.entry(number) {
            Entry::Free => None,
            Entry::At(at) => self.object_at(at),
            Entry::InStream { container, index } => {
                if depth >= MAX_LENGTH_REFERENCES {
                    return None;
                }
                self.load_stream(container, depth + 1)?;
                let stream = self.stream.as_ref()?;
                stream.value(number, index).map(Object::Value)
            }
        }
    }

    /// A dictionary: `value` itself, or the object (or stream's dictionary) it refers to.
    pub(super) fn dict(&mut self, value: &Value) -> Option<Dict> {
        match value {
            Value::Dict(entries) => Some(Dict(entries.clone())),
            &Value::Ref(number) => match self.object(number)? {
                Object::Value(Value::Dict(entries)) => Some(Dict(entries)),
                Object::Stream { dict, .. } => Some(dict),
                Object::Value(_) => None,
            },
            _ => None,
        }
    }

    /// `value`, or the value it refers to (not a stream).
    pub(super) fn resolve(&mut self, value: &Value) -> Option<Value> {
        match value {
            &Value::Ref(number) => match self.object(number)? {
                Object::Value(value) => Some(value),
                Object::Stream { .. } => None,
            },
            other => Some(other.clone()),
        }
    }

    /// The object whose header (`N G obj`) is at `at`.
    fn object_at(&mut self, at: u64) -> Option<Object> {
        for len in WINDOWS {
            let window = self.read(at, len)?;
            let whole = window.len() < len;
            let mut lexer = Lexer { s: &window, pos: 0 };
            let numbers = (lexer.value(0), lexer.value(0));
            lexer.skip_space();
            if !matches!(numbers, (Some(Value::Int(_)), Some(Value::Int(_))))
                || !window[lexer.pos..].starts_with(b"obj")
            {
                return None;
            }
            lexer.pos += b"obj".len();
            if let Some(value) = lexer.value(0) {
                lexer.skip_space();
                return Some(match value {
                    Value::Dict(entries) if window[lexer.pos..].starts_with(b"stream") => {
                        let data_at = stream_start(&window, lexer.pos + b"stream".len())?;
                        Object::Stream {
                            dict: Dict(entries),
                            data_at: at + data_at as u64,
                        }
                    }
                    value => Object::Value(value),
                });
            }
            if whole {
                return None;
            }
        }
        None
    }

    /// A value (a trailer's dictionary) at `at`, in windows as [`Objects::object_at`] reads.
    fn value_at(&mut self, at: u64) -> Option<Value> {
        for len in WINDOWS {
            let window = self.read(at, len)?;
            let mut lexer = Lexer { s: &window, pos: 0 };
            if let Some(value) = lexer.value(0) {
                return Some(value);
            }
            if window.len() < len {
                return None;
            }
        }
        None
    }

    /// The data of a stream whose dictionary is `dict`, from `data_at`: `/Length` bytes (a
    /// reference followed at most [`MAX_LENGTH_REFERENCES`] deep), else up to `endstream`;
    /// `None` when longer than `cap` or unreadable.
    pub(super) fn stream_data(
        &mut self,
        dict: &Dict,
        data_at: u64,
        cap: u64,
        depth: usize,
    ) -> Option<Vec<u8>> {
        let length = match dict.get(b"Length") {
            Some(&Value::Int(n)) => u64::try_from(n).ok(),
            Some(&Value::Ref(number)) if depth < MAX_LENGTH_REFERENCES => {
                match self.object_within(number, depth + 1) {
                    Some(Object::Value(Value::Int(n))) => u64::try_from(n).ok(),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(length) = length.filter(|&n| data_at.saturating_add(n) <= self.size) {
            if length > cap {
                return None;
            }
            let data = self.read(data_at, usize::try_from(length).ok()?)?;
            return (data.len() as u64 == length).then_some(data);
        }
        // No length to trust: up to `endstream`, as a reader that does not know it reads.
        let window = usize::try_from(cap.saturating_add(16)).ok()?;
        let mut data = self.read(data_at, window)?;
        let end = memmem::find(&data, b"endstream")?;
        data.truncate(end);
        if data.ends_with(b"\r\n") {
            data.truncate(end - 2);
        } else if data.ends_with(b"\n") || data.ends_with(b"\r") {
            data.truncate(end - 1);
        }
        (data.len() as u64 <= cap).then_some(data)
    }

    /// Makes object stream `number` the one kept (decoded within what is left of
    /// [`MAX_STRUCTURE`]); `None` when it cannot be.
    fn load_stream(&mut self, number: u32, depth: usize) -> Option<()> {
        if self.stream.as_ref().is_some_and(|s| s.number == number) {
            return Some(());
        }
        self.stream = None;
        // An object stream is never inside another.
        let Entry::At(at) = self.entry(number) else {
            return None;
        };
        let Object::Stream { dict, data_at } = self.object_at(at)? else {
            return None;
        };
        let int = |key: &[u8]| match dict.get(key) {
            Some(&Value::Int(n)) => usize::try_from(n).ok(),
            _ => None,
        };
        let (first, count) = (int(b"First")?, int(b"N")?);
        let raw = self.stream_data(&dict, data_at, self.max_stream, depth)?;
        let data = decode(&dict, raw, MAX_STRUCTURE.saturating_sub(self.structure))?;
        self.structure += data.len() as u64;
        let mut lexer = Lexer {
            s: data.get(..first)?,
            pos: 0,
        };
        let mut offsets = Vec::with_capacity(count.min(first / 4));
        for _ in 0..count {
            match (lexer.value(0), lexer.value(0)) {
                (Some(Value::Int(n)), Some(Value::Int(offset))) => {
                    offsets.push((u32::try_from(n).ok()?, usize::try_from(offset).ok()?))
                }
                _ => break,
            }
        }
        self.stream = Some(ObjectStream {
            number,
            first,
            offsets,
            data,
        });
        Some(())
    }
}

/// Where a stream's data starts, after its keyword ends at `at` of `window`: spaces, then an
/// end of line.
fn stream_start(window: &[u8], mut at: usize) -> Option<usize> {
    while matches!(window.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    match (window.get(at), window.get(at + 1)) {
        (Some(b'\r'), Some(b'\n')) => Some(at + 2),
        (Some(b'\r' | b'\n'), _) => Some(at + 1),
        _ => None,
    }
}

/// An entry of a table: `oooooooooo ggggg n` (in use, at offset `o`) or `... f` (free).
fn table_entry(entry: &[u8]) -> Entry {
    let mut fields = entry
        .split(|c| is_white(*c))
        .filter(|f| !f.is_empty())
        .map(|f| std::str::from_utf8(f).unwrap_or(""));
    match (fields.next(), fields.next(), fields.next()) {
        (Some(offset), Some(_), Some("n")) => offset
            .parse::<u64>()
            .ok()
            .filter(|o| *o > 0)
            .map_or(Entry::Free, Entry::At),
        _ => Entry::Free,
    }
}

/// The entry of object `n` in a cross-reference stream, when it lists it.
fn stream_entry(widths: &[usize; 3], index: &[(u64, u64)], data: &[u8], n: u64) -> Option<Entry> {
    let width: usize = widths.iter().sum();
    let mut before = 0u64;
    for &(first, count) in index {
        if n >= first && n - first < count {
            let at = usize::try_from((before + n - first).checked_mul(width as u64)?).ok()?;
            let bytes = data.get(at..at.checked_add(width)?)?;
            let (a, rest) = bytes.split_at(widths[0]);
            let (b, c) = rest.split_at(widths[1]);
            let field = |f: &[u8]| f.iter().fold(0u64, |v, &x| (v << 8) | u64::from(x));
            // A type field of no bytes means type 1.
            let kind = if widths[0] == 0 { 1 } else { field(a) };
            return Some(match kind {
                1 => Entry::At(field(b)),
                2 => Entry::InStream {
                    container: u32::try_from(field(b)).ok()?,
                    index: u32::try_from(field(c)).ok()?,
                },
                _ => Entry::Free,
            });
        }
        before = before.checked_add(count)?;
    }
    None
}

/// A stream's data decoded through its filters (with their predictors), measured first so
/// that it never takes more than `cap` bytes; data without filters as it is.
fn decode(dict: &Dict, raw: Vec<u8>, cap: u64) -> Option<Vec<u8>> {
    let filters = dict.filters();
    if filters.is_empty() {
        return (raw.len() as u64 <= cap).then_some(raw);
    }
    decoded_len(&raw, &filters, cap)?;
    lopdf_decoded(dict, &raw)
}

#[cfg(test)]
#[path = "xref_tests.rs"]
mod tests;
