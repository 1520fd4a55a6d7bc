//! The bounded pre-scan of a PDF: every stream found, its dictionary parsed with a small
//! lexer of its own, and its decoded size measured through the filters `lopdf` supports, with
//! a cap; the nesting of arrays and dictionaries measured; and the references `lopdf` follows
//! to find streams' lengths checked for chains and loops, before `lopdf` is allowed to read
//! the file (see the parent module's docs).

use std::collections::{HashMap, HashSet};

use memchr::memmem;

use super::super::Limits;
use super::decode::decoded_len;
use super::lexer::{Dict, Lexer, Value, is_delimiter, is_white};
use super::{MAX_LENGTH_REFERENCES, MAX_NESTING};

/// What the pre-scan found in a file it lets `lopdf` read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scan {
    pub(super) encrypted: bool,
    pub(super) object_streams: bool,
}

/// Most bytes object streams and cross-reference streams may decode to together.
pub(in crate::extract) const MAX_STRUCTURE: u64 = 32 * 1024 * 1024;

/// How far before a `stream` keyword its object header (`N G obj`) is looked for.
const DICT_LOOKBACK: usize = 64 * 1024;
/// Widest field of a cross-reference stream that a real file uses (offsets of 8 bytes).
const MAX_XREF_FIELD: i64 = 8;

/// Measures what every stream of the file decodes to, how deep its arrays and dictionaries
/// nest, and how far `lopdf` would follow references to find its streams' lengths (see the
/// module docs). `None`: do not parse this file.
pub(super) fn prescan(bytes: &[u8], limits: &Limits) -> Option<Scan> {
    if !nesting_within(bytes, MAX_NESTING) {
        return None;
    }
    let mut scan = Scan {
        encrypted: encrypt_key(bytes),
        object_streams: false,
    };
    let mut total = 0u64;
    let mut structure = 0u64;
    // Streams whose /Length is a reference: (the stream's possible object numbers, the
    // referenced object's number).
    let mut length_references: Vec<(Vec<u32>, u32)> = Vec::new();
    let mut xref_streams = Vec::new();
    for at in memmem::find_iter(bytes, b"stream") {
        let Some(data_start) = stream_keyword(bytes, at) else {
            continue;
        };
        let (dict, numbers) = stream_dictionary(bytes, at)?;
        if let Some(&Value::Ref(target)) = dict.get(b"Length") {
            // lopdf reads that object while it parses the stream, under whatever number its
            // header gives; a header it might read and this scan cannot is refused.
            if numbers.is_empty() {
                return None;
            }
            length_references.push((numbers, target));
        }
        let object_stream = dict.name(b"Type") == Some(b"ObjStm".as_slice());
        scan.object_streams |= object_stream;
        // lopdf reads a stream with /W as cross-reference entries.
        let kept_parsed = object_stream || dict.get(b"W").is_some();
        if let Some(Value::Array(widths)) = dict.get(b"W") {
            let plausible = widths
                .iter()
                .all(|w| matches!(w, Value::Int(n) if (0..=MAX_XREF_FIELD).contains(n)));
            if !plausible {
                return None;
            }
        }
        // Encrypted data measures as the little its ciphertext happens to decode to; `counts`
        // keeps lopdf from decoding it (cross-reference streams are never encrypted).
        let rest = &bytes[data_start..];
        let exact = match dict.get(b"Length") {
            Some(Value::Int(n)) => usize::try_from(*n).ok().and_then(|n| rest.get(..n)),
            _ => None,
        };
        let data = exact.unwrap_or(rest);
        let decoded = decoded_len(data, &dict.filters(), limits.max_pdf_stream)?;
        total += decoded;
        if kept_parsed {
            structure += decoded;
        }
        if total > limits.max_pdf_decoded || structure > MAX_STRUCTURE {
            return None;
        }
        if kept_parsed {
            // Measured above, so decoding is bounded. lopdf parses the objects of an object
            // stream (its raw bytes when it cannot decode them), and reads a cross-reference
            // stream's entries.
            let data = exact.unwrap_or_else(|| until_endstream(rest));
            let content = lopdf_decoded(&dict, data);
            if object_stream && !nesting_within(content.as_deref().unwrap_or(data), MAX_NESTING) {
                return None;
            }
            if let (Some(content), Some(xref)) = (content, XrefStream::new(&dict)) {
                xref_streams.push((xref, content));
            }
        }
    }
    length_references_bounded(&length_references, &xref_streams).then_some(scan)
}

/// Whether no array or dictionary in `bytes` nests more than `limit` deep, outside strings,
/// comments and stream data. `lopdf` parses nesting recursively; each object is parsed on its
/// own, so the depth starts again at every `obj` and `endobj` keyword. One pass, no
/// recursion.
fn nesting_within(bytes: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        let next = bytes.get(i + 1).copied();
        match c {
            b'%' => {
                i = memchr::memchr2(b'\r', b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
            }
            b'(' => i = string_end(bytes, i),
            b'<' if next == Some(b'<') => {
                depth += 1;
                if depth > limit {
                    return false;
                }
                i += 2;
            }
            b'<' => i = memchr::memchr(b'>', &bytes[i..]).map_or(bytes.len(), |n| i + n + 1),
            b'>' if next == Some(b'>') => {
                depth = depth.saturating_sub(1);
                i += 2;
            }
            b'[' => {
                depth += 1;
                if depth > limit {
                    return false;
                }
                i += 1;
            }
            b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'/' => {
                // A name: its characters are no keyword.
                i += 1;
                while bytes
                    .get(i)
                    .is_some_and(|&c| !is_white(c) && !is_delimiter(c))
                {
                    i += 1;
                }
            }
            c if is_white(c) || is_delimiter(c) => i += 1,
            _ => {
                let start = i;
                while bytes
                    .get(i)
                    .is_some_and(|&c| !is_white(c) && !is_delimiter(c))
                {
                    i += 1;
                }
                match &bytes[start..i] {
                    b"obj" | b"endobj" => depth = 0,
                    b"stream" => {
                        if let Some(data) = stream_keyword(bytes, start) {
                            i = data + until_endstream(&bytes[data..]).len();
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    true
}

/// Where the literal string opening at `at` ends (just after its closing parenthesis), or the
/// end of `bytes`.
fn string_end(bytes: &[u8], at: usize) -> usize {
    let mut depth = 0usize;
    let mut i = at;
    while let Some(&c) = bytes.get(i) {
        i += 1;
        match c {
            b'\\' => i += 1,
            b'(' => depth += 1,
            b')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    bytes.len()
}

/// Stream data up to its first `endstream`: where a reader that does not know its length
/// stops.
fn until_endstream(data: &[u8]) -> &[u8] {
    memmem::find(data, b"endstream").map_or(data, |end| &data[..end])
}

/// What `lopdf` decodes a stream to, through its own filters and predictors; `None` where it
/// cannot. Only for streams whose decoded size has been measured.
pub(super) fn lopdf_decoded(dict: &Dict, data: &[u8]) -> Option<Vec<u8>> {
    let mut lopdf_dict = lopdf::Dictionary::new();
    for key in [b"Filter".as_slice(), b"DecodeParms"] {
        if let Some(value) = dict.get(key) {
            lopdf_dict.set(key, value.to_lopdf());
        }
    }
    lopdf::Stream::new(lopdf_dict, data.to_vec())
        .decompressed_content()
        .ok()
}

/// The layout of a cross-reference stream's entries, read from its dictionary as `lopdf`
/// reads it.
struct XrefStream {
    /// Bytes of the three fields of an entry.
    widths: [usize; 3],
    /// The first object number and the count of each subsection.
    sections: Vec<(i64, i64)>,
}

impl XrefStream {
    fn new(dict: &Dict) -> Option<XrefStream> {
        let ints = |value: Option<&Value>| -> Option<Vec<i64>> {
            match value? {
                Value::Array(items) => items
                    .iter()
                    .map(|v| match v {
                        Value::Int(n) => Some(*n),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            }
        };
        let widths = ints(dict.get(b"W"))?;
        let widths = [
            usize::try_from(*widths.first()?).ok()?,
            usize::try_from(*widths.get(1)?).ok()?,
            usize::try_from(*widths.get(2)?).ok()?,
        ];
        // Without /Index (or with an unreadable one) lopdf reads /Size entries from 0; with
        // neither it reads none, and at most as many as the data holds are read here.
        let size = match dict.get(b"Size") {
            Some(Value::Int(n)) => *n,
            _ => i64::MAX,
        };
        let index = ints(dict.get(b"Index")).unwrap_or_else(|| vec![0, size]);
        let sections = index.chunks_exact(2).map(|s| (s[0], s[1])).collect();
        Some(XrefStream { widths, sections })
    }

    /// Calls `f(object, container)` for every entry of `data` that stores an object inside an
    /// object stream, reading the entries as `lopdf` does (an entry of an unknown type is only
    /// its first field).
    fn compressed(&self, data: &[u8], mut f: impl FnMut(u32, u32)) {
        let [w0, w1, w2] = self.widths;
        if w0 == 0 {
            // Every entry is then of type 1: no object is compressed.
            return;
        }
        let mut pos = 0usize;
        let mut read = |width: usize| -> Option<u32> {
            let field = data.get(pos..pos + width)?;
            pos += width;
            Some(field.iter().fold(0u32, |v, &b| (v << 8) | u32::from(b)))
        };
        for &(start, count) in &self.sections {
            for j in 0..count.max(0) {
                // Every entry reads at least its first field, so this ends with the data.
                let Some(kind) = read(w0) else { return };
                let fields = match kind {
                    0 | 1 => read(w1).zip(read(w2)),
                    2 => {
                        let Some((container, _)) = read(w1).zip(read(w2)) else {
                            return;
                        };
                        // lopdf numbers entries as a wrapping `u32`.
                        f(start.wrapping_add(j) as u32, container);
                        Some((0, 0))
                    }
                    _ => Some((0, 0)),
                };
                if fields.is_none() {
                    return;
                }
            }
        }
    }
}

/// Whether `lopdf`, finding every stream's length, follows at most [`MAX_LENGTH_REFERENCES`]
/// references in a row, with no loop. While it parses a stream whose /Length is a reference,
/// it reads the referenced object: parsing it if it is a stream too (whose own /Length may be
/// a reference), or, if a cross-reference stream says it is stored in an object stream,
/// parsing that container first (whose /Length may be a reference, or which may itself be
/// said to be stored in another). Each step recurses; through containers it forgets what it
/// has seen, so a loop never ends. Every stream number and container any cross-reference
/// stream gives is followed. Iterative.
fn length_references_bounded(
    references: &[(Vec<u32>, u32)],
    xref_streams: &[(XrefStream, Vec<u8>)],
) -> bool {
    if references.is_empty() {
        return true;
    }
    // What reading an object reads next: a stream's length, or a compressed object's
    // container.
    let mut edges: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut wanted: HashSet<u32> = HashSet::new();
    for (numbers, target) in references {
        for &number in numbers {
            edges.entry(number).or_default().push(*target);
        }
        wanted.insert(*target);
    }
    // Containers of the objects read, then of those containers, as far as the limit (one
    // pass over the entries each, so memory stays with the objects that matter).
    let mut frontier = wanted.clone();
    for _ in 0..=MAX_LENGTH_REFERENCES {
        if frontier.is_empty() {
            break;
        }
        let mut found = HashSet::new();
        for (xref, data) in xref_streams {
            xref.compressed(data, |object, container| {
                if frontier.contains(&object) {
                    let next = edges.entry(object).or_default();
                    if !next.contains(&container) {
                        next.push(container);
                    }
                    if wanted.insert(container) {
                        found.insert(container);
                    }
                }
            });
        }
        frontier = found;
    }
    if !frontier.is_empty() {
        return false;
    }
    // The longest path, depth first with an explicit stack; a node met again on the path is a
    // loop.
    let mut longest: HashMap<u32, usize> = HashMap::new();
    let mut on_path: HashSet<u32> = HashSet::new();
    for &root in edges.keys() {
        if longest.contains_key(&root) {
            continue;
        }
        // Each node on the path, with how many of its children have been followed.
        let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
        on_path.insert(root);
        while let Some(top) = stack.last_mut() {
            let node = top.0;
            let children = edges.get(&node).map_or(&[][..], Vec::as_slice);
            if let Some(&child) = children.get(top.1) {
                top.1 += 1;
                if on_path.contains(&child) {
                    return false;
                }
                if !longest.contains_key(&child) {
                    if stack.len() > MAX_LENGTH_REFERENCES {
                        return false;
                    }
                    on_path.insert(child);
                    stack.push((child, 0));
                }
                continue;
            }
            let length = children
                .iter()
                .map(|c| longest.get(c).map_or(1, |l| l + 1))
                .max()
                .unwrap_or(0);
            if length > MAX_LENGTH_REFERENCES {
                return false;
            }
            longest.insert(node, length);
            on_path.remove(&node);
            stack.pop();
        }
    }
    true
}

/// Whether the file names an `/Encrypt` dictionary (in a trailer or cross-reference stream).
fn encrypt_key(bytes: &[u8]) -> bool {
    memmem::find_iter(bytes, b"/Encrypt").any(|at| {
        bytes
            .get(at + b"/Encrypt".len())
            .is_none_or(|&c| is_white(c) || is_delimiter(c))
    })
}

/// Where the data starts, if the `stream` at `at` may be a stream keyword: not the end of
/// `endstream`, followed by spaces and an end of line, and after a dictionary (`>>`) or a line
/// break (a comment may stand between the two).
fn stream_keyword(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes[..at].ends_with(b"end") {
        return None;
    }
    let space = bytes[..at].iter().rev().take_while(|&&c| is_white(c));
    let mut after_line_break = false;
    let mut spaces = 0;
    for &c in space {
        after_line_break |= matches!(c, b'\r' | b'\n');
        spaces += 1;
    }
    let after_dictionary = bytes[..at - spaces].ends_with(b">");
    if !after_dictionary && !after_line_break {
        return None;
    }
    let mut i = at + b"stream".len();
    while matches!(bytes.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    match (bytes.get(i), bytes.get(i + 1)) {
        (Some(b'\r'), Some(b'\n')) => Some(i + 2),
        (Some(b'\r' | b'\n'), _) => Some(i + 1),
        _ => None,
    }
}

/// The dictionary of the stream whose keyword is at `at`, parsed from its object header, and
/// the object numbers a reader may read that header as (see [`object_numbers`]).
fn stream_dictionary(bytes: &[u8], at: usize) -> Option<(Dict, Vec<u32>)> {
    let from = at.saturating_sub(DICT_LOOKBACK);
    let header = memmem::rfind_iter(&bytes[from..at], b"obj").find(|&i| {
        let i = from + i;
        !bytes[..i].ends_with(b"end") && i > 0 && is_white(bytes[i - 1])
    })?;
    let mut lexer = Lexer {
        s: &bytes[from + header + 3..at],
        pos: 0,
    };
    let Some(Value::Dict(dict)) = lexer.value(0) else {
        return None;
    };
    // The dictionary must run up to the keyword, as lopdf reads it.
    lexer.skip_space();
    (lexer.pos == lexer.s.len()).then(|| (Dict(dict), object_numbers(&bytes[..from + header])))
}

/// The object numbers a reader may take the header `N G` (just before `obj`) for: `N`, or any
/// shorter tail of its digits, since a cross-reference offset may point into it. Empty when the
/// header is not two plain numbers.
fn object_numbers(before_obj: &[u8]) -> Vec<u32> {
    let digits_before = |end: usize| {
        end - before_obj[..end]
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let white_before = |end: usize| {
        end - before_obj[..end]
            .iter()
            .rev()
            .take_while(|&&c| is_white(c))
            .count()
    };
    let generation_end = white_before(before_obj.len());
    let generation_start = digits_before(generation_end);
    let number_end = white_before(generation_start);
    let number_start = digits_before(number_end);
    if generation_start == generation_end
        || number_end == generation_start
        || number_start == number_end
    {
        return Vec::new();
    }
    let mut numbers = Vec::new();
    let mut value = 0u64;
    let mut scale = 1u64;
    for &digit in before_obj[number_start..number_end].iter().rev() {
        value += u64::from(digit - b'0') * scale;
        let Ok(number) = u32::try_from(value) else {
            break;
        };
        if !numbers.contains(&number) {
            numbers.push(number);
        }
        // Past ten digits only leading zeros keep the value a `u32`.
        scale = scale.saturating_mul(10).min(10_000_000_000);
    }
    numbers
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
