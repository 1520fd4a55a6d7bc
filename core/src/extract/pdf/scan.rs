//! The bounded pre-scan of a PDF: every stream found, its dictionary parsed with a small
//! lexer of its own, and its decoded size measured through the filters `lopdf` supports, with
//! a cap, before `lopdf` is allowed to read the file (see the parent module's docs).

use std::io::{Read, Write};

use memchr::memmem;

use super::super::Limits;

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

/// Measures what every stream of the file decodes to (see the module docs). `None`: do not
/// parse this file.
pub(super) fn prescan(bytes: &[u8], limits: &Limits) -> Option<Scan> {
    let mut scan = Scan {
        encrypted: encrypt_key(bytes),
        object_streams: false,
    };
    let mut total = 0u64;
    let mut structure = 0u64;
    for at in memmem::find_iter(bytes, b"stream") {
        let Some(data_start) = stream_keyword(bytes, at) else {
            continue;
        };
        let dict = stream_dictionary(bytes, at)?;
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
        let data = match dict.get(b"Length") {
            Some(Value::Int(n)) => usize::try_from(*n)
                .ok()
                .and_then(|n| rest.get(..n))
                .unwrap_or(rest),
            _ => rest,
        };
        let decoded = decoded_len(data, &dict.filters(), limits.max_pdf_stream)?;
        total += decoded;
        if kept_parsed {
            structure += decoded;
        }
        if total > limits.max_pdf_decoded || structure > MAX_STRUCTURE {
            return None;
        }
    }
    Some(scan)
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

/// The dictionary of the stream whose keyword is at `at`, parsed from its object header.
fn stream_dictionary(bytes: &[u8], at: usize) -> Option<Dict> {
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
    (lexer.pos == lexer.s.len()).then_some(Dict(dict))
}

/// Bytes a stream decodes to through `filters` (in order), measuring the filters `lopdf`
/// decodes and stopping at the first it does not. `None` when over `cap`.
pub(super) fn decoded_len(data: &[u8], filters: &[Vec<u8>], cap: u64) -> Option<u64> {
    let mut current: Option<Vec<u8>> = None;
    for filter in filters {
        let input = current.as_deref().unwrap_or(data);
        let output = match filter.as_slice() {
            b"FlateDecode" => inflate(input, cap)?,
            b"LZWDecode" => {
                // The /EarlyChange parameter picks the variant; measure the larger.
                let early = lzw(input, cap, true)?;
                let late = lzw(input, cap, false)?;
                if early.len() >= late.len() {
                    early
                } else {
                    late
                }
            }
            b"ASCII85Decode" => ascii85(input, cap)?,
            _ => break,
        };
        current = Some(output);
    }
    Some(current.map_or(data.len(), |c| c.len()) as u64)
}

/// Inflates a zlib stream as `lopdf` does (raw deflate after the two header bytes when the
/// zlib stream fails with no output), keeping at most `cap` bytes.
fn inflate(input: &[u8], cap: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let result = flate2::read::ZlibDecoder::new(input)
        .take(cap + 1)
        .read_to_end(&mut out);
    if result.is_err() && out.is_empty() && input.len() > 2 {
        out.clear();
        let _ = flate2::read::DeflateDecoder::new(&input[2..])
            .take(cap + 1)
            .read_to_end(&mut out);
    }
    (out.len() as u64 <= cap).then_some(out)
}

/// Decodes LZW (most significant bit first, as PDF writes it), keeping at most `cap` bytes.
fn lzw(input: &[u8], cap: u64, early_change: bool) -> Option<Vec<u8>> {
    use weezl::{BitOrder, decode::Decoder};
    let mut decoder = if early_change {
        Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
    } else {
        Decoder::new(BitOrder::Msb, 8)
    };
    let mut out = Capped {
        buf: Vec::new(),
        cap,
        over: false,
    };
    let _ = decoder.into_stream(&mut out).decode_all(input);
    (!out.over).then_some(out.buf)
}

/// A buffer that refuses to grow past `cap`.
struct Capped {
    buf: Vec<u8>,
    cap: u64,
    over: bool,
}

impl Write for Capped {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        if (self.buf.len() + data.len()) as u64 > self.cap {
            self.over = true;
            return Err(std::io::Error::other("decoded stream over the limit"));
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Decodes ASCII85 as `lopdf` does, keeping at most `cap` bytes.
fn ascii85(input: &[u8], cap: u64) -> Option<Vec<u8>> {
    let input = input.strip_suffix(b"~>").unwrap_or(input);
    let mut out = Vec::new();
    let mut group: u32 = 0;
    let mut count = 0usize;
    for &c in input {
        if out.len() as u64 > cap {
            return None;
        }
        if c == b'z' {
            if count != 0 {
                break;
            }
            out.extend_from_slice(&[0; 4]);
            continue;
        }
        if c.is_ascii_whitespace() {
            continue;
        }
        if !(b'!'..=b'u').contains(&c) {
            break;
        }
        group = group.checked_mul(85)?.checked_add(u32::from(c - b'!'))?;
        count += 1;
        if count == 5 {
            out.extend_from_slice(&group.to_be_bytes());
            group = 0;
            count = 0;
        }
    }
    if count > 0 {
        for _ in count..5 {
            group = group.checked_mul(85)?.checked_add(84)?;
        }
        out.extend_from_slice(&group.to_be_bytes()[..count - 1]);
    }
    (out.len() as u64 <= cap).then_some(out)
}

/// A PDF value, as far as the pre-scan needs it.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Name(Vec<u8>),
    Int(i64),
    Array(Vec<Value>),
    Dict(Vec<(Vec<u8>, Value)>),
    /// Anything else: reals, strings, booleans, null, references.
    Other,
}

/// A parsed stream dictionary.
struct Dict(Vec<(Vec<u8>, Value)>);

impl Dict {
    /// The last value of `key`, as a PDF reader keeps it.
    fn get(&self, key: &[u8]) -> Option<&Value> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn name(&self, key: &[u8]) -> Option<&[u8]> {
        match self.get(key)? {
            Value::Name(n) => Some(n),
            _ => None,
        }
    }

    /// `/Filter` as a list of names, the way `lopdf` reads it: a name or an array of names;
    /// anything else means no decoding.
    fn filters(&self) -> Vec<Vec<u8>> {
        match self.get(b"Filter") {
            Some(Value::Name(n)) => vec![n.clone()],
            Some(Value::Array(items)) => {
                let names: Option<Vec<_>> = items
                    .iter()
                    .map(|v| match v {
                        Value::Name(n) => Some(n.clone()),
                        _ => None,
                    })
                    .collect();
                names.unwrap_or_default()
            }
            _ => Vec::new(),
        }
    }
}

/// Deepest nesting of arrays and dictionaries the pre-scan parses.
const MAX_DEPTH: usize = 32;

/// A small PDF object lexer and parser for stream dictionaries.
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    /// Skips whitespace and comments.
    fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if is_white(c) {
                self.pos += 1;
            } else if c == b'%' {
                while !matches!(self.peek(), None | Some(b'\r' | b'\n')) {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// Parses one value; `None` on anything malformed.
    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_space();
        let c = self.peek()?;
        match c {
            b'/' => {
                self.pos += 1;
                Some(Value::Name(self.name()))
            }
            b'<' if self.s.get(self.pos + 1) == Some(&b'<') => {
                self.pos += 2;
                let mut entries = Vec::new();
                loop {
                    self.skip_space();
                    match self.peek()? {
                        b'>' if self.s.get(self.pos + 1) == Some(&b'>') => {
                            self.pos += 2;
                            return Some(Value::Dict(entries));
                        }
                        b'/' => {
                            self.pos += 1;
                            let key = self.name();
                            let value = self.value(depth + 1)?;
                            entries.push((key, value));
                        }
                        _ => return None,
                    }
                }
            }
            b'<' => {
                let end = self.s[self.pos..].iter().position(|&c| c == b'>')?;
                self.pos += end + 1;
                Some(Value::Other)
            }
            b'[' => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_space();
                    if self.peek()? == b']' {
                        self.pos += 1;
                        return Some(Value::Array(items));
                    }
                    items.push(self.value(depth + 1)?);
                }
            }
            b'(' => {
                self.string()?;
                Some(Value::Other)
            }
            b'0'..=b'9' | b'+' | b'-' | b'.' => Some(self.number()),
            c if c.is_ascii_alphabetic() => {
                // true, false, null.
                while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
                    self.pos += 1;
                }
                Some(Value::Other)
            }
            _ => None,
        }
    }

    /// A name after its `/`, with `#xx` escapes decoded.
    fn name(&mut self) -> Vec<u8> {
        let mut name = Vec::new();
        while let Some(c) = self.peek() {
            if is_white(c) || is_delimiter(c) {
                break;
            }
            self.pos += 1;
            if c == b'#' {
                let hex = self
                    .s
                    .get(self.pos..self.pos + 2)
                    .and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
                if let Some(b) = hex {
                    self.pos += 2;
                    name.push(b);
                    continue;
                }
            }
            name.push(c);
        }
        name
    }

    /// A number, or a reference `N G R` (which is [`Value::Other`]).
    fn number(&mut self) -> Value {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.'))
        {
            self.pos += 1;
        }
        let Some(n) = std::str::from_utf8(&self.s[start..self.pos])
            .ok()
            .and_then(|t| t.parse::<i64>().ok())
        else {
            return Value::Other;
        };
        // `N G R` is a reference.
        let save = self.pos;
        self.skip_space();
        let gen_start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos > gen_start {
            self.skip_space();
            if self.peek() == Some(b'R') {
                self.pos += 1;
                return Value::Other;
            }
        }
        self.pos = save;
        Value::Int(n)
    }

    /// A literal string with balanced parentheses and escapes.
    fn string(&mut self) -> Option<()> {
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                b'\\' => self.pos += 1,
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
                _ => {}
            }
        }
        None
    }
}

fn is_white(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\0' | b'\x0C')
}

fn is_delimiter(c: u8) -> bool {
    matches!(
        c,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(text: &[u8]) -> Option<Dict> {
        let mut lexer = Lexer { s: text, pos: 0 };
        match lexer.value(0)? {
            Value::Dict(d) => Some(Dict(d)),
            _ => None,
        }
    }

    #[test]
    fn stream_dictionaries_parse_as_a_pdf_reader_reads_them() {
        let d = dict(
            br"<< /Type /XRef /Filter [/ASCII85Decode /Fl#61teDecode] /Length 12 0 R
                  /W [1 2 1] % a comment
                  /DecodeParms << /Columns 5 /Filter /Ignored >> /S (a (nested) \) string) /H <0A>
                  /Flag true /Size 7 >>",
        )
        .expect("parses");
        assert_eq!(d.name(b"Type"), Some(b"XRef".as_slice()));
        assert_eq!(
            d.filters(),
            vec![b"ASCII85Decode".to_vec(), b"FlateDecode".to_vec()]
        );
        assert_eq!(d.get(b"Length"), Some(&Value::Other));
        assert_eq!(d.get(b"Size"), Some(&Value::Int(7)));
        assert_eq!(
            d.get(b"W"),
            Some(&Value::Array(vec![
                Value::Int(1),
                Value::Int(2),
                Value::Int(1)
            ]))
        );
        assert!(dict(b"<< /Filter >>").is_none());
        assert!(dict(b"<< /A [1 2").is_none());
        let deep = format!("<< /A {}{} >>", "[".repeat(64), "]".repeat(64));
        assert!(dict(deep.as_bytes()).is_none(), "nesting is bounded");
    }

    #[test]
    fn stream_keywords_are_told_from_text() {
        let at = |s: &[u8]| {
            let i = memmem::find(s, b"stream").expect("has stream");
            stream_keyword(s, i)
        };
        assert_eq!(at(b">>\nstream\r\nDATA"), Some(11));
        assert_eq!(at(b">> stream\nDATA"), Some(10));
        assert_eq!(at(b">> %comment\n  stream\nDATA"), Some(21));
        assert_eq!(at(b"(a stream\nof text)"), None);
        assert_eq!(at(b">>\nstreamed"), None);
        assert_eq!(at(b"endstream\n"), None);
    }

    #[test]
    fn decoding_stops_at_the_cap() {
        use std::io::Write;
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(&vec![0u8; 1 << 20]).expect("deflate");
        let bomb = encoder.finish().expect("deflate");
        let flate = [b"FlateDecode".to_vec()];
        assert_eq!(decoded_len(&bomb, &flate, 1 << 20), Some(1 << 20));
        assert_eq!(decoded_len(&bomb, &flate, (1 << 20) - 1), None);
        assert_eq!(
            decoded_len(b"zzzz~>", &[b"ASCII85Decode".to_vec()], 16),
            Some(16)
        );
        assert_eq!(
            decoded_len(b"zzzzz~>", &[b"ASCII85Decode".to_vec()], 16),
            None
        );
        // Filters lopdf does not decode stop the measuring.
        assert_eq!(decoded_len(b"raw", &[b"DCTDecode".to_vec()], 1), Some(3));
    }
}
