//! A small lexer and parser of PDF objects, as far as the pre-scan needs them: stream
//! dictionaries with their names, integers, arrays, dictionaries and references, nested at
//! most [`MAX_DEPTH`] deep.

/// A PDF value, as far as the pre-scan needs it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Name(Vec<u8>),
    Int(i64),
    Array(Vec<Value>),
    Dict(Vec<(Vec<u8>, Value)>),
    /// A reference `N G R`, by its object number.
    Ref(u32),
    /// Anything else: reals, strings, booleans, null.
    Other,
}

impl Value {
    /// The same value for `lopdf` (anything else as null, which no filter reads). Recursive,
    /// as deep as the lexer nests: [`MAX_DEPTH`].
    pub(super) fn to_lopdf(&self) -> lopdf::Object {
        match self {
            Value::Name(n) => lopdf::Object::Name(n.clone()),
            Value::Int(n) => lopdf::Object::Integer(*n),
            Value::Array(items) => {
                lopdf::Object::Array(items.iter().map(Value::to_lopdf).collect())
            }
            Value::Dict(entries) => {
                let mut dict = lopdf::Dictionary::new();
                for (key, value) in entries {
                    dict.set(key.clone(), value.to_lopdf());
                }
                lopdf::Object::Dictionary(dict)
            }
            Value::Ref(n) => lopdf::Object::Reference((*n, 0)),
            Value::Other => lopdf::Object::Null,
        }
    }
}

/// A parsed stream dictionary.
pub(super) struct Dict(pub(super) Vec<(Vec<u8>, Value)>);

impl Dict {
    /// The last value of `key`, as a PDF reader keeps it.
    pub(super) fn get(&self, key: &[u8]) -> Option<&Value> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(super) fn name(&self, key: &[u8]) -> Option<&[u8]> {
        match self.get(key)? {
            Value::Name(n) => Some(n),
            _ => None,
        }
    }

    /// `/Filter` as a list of names, the way `lopdf` reads it: a name or an array of names;
    /// anything else means no decoding.
    pub(super) fn filters(&self) -> Vec<Vec<u8>> {
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
pub(super) const MAX_DEPTH: usize = 32;

/// A small PDF object lexer and parser for stream dictionaries.
pub(super) struct Lexer<'a> {
    pub(super) s: &'a [u8],
    pub(super) pos: usize,
}

impl Lexer<'_> {
    pub(super) fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    /// Skips whitespace and comments.
    pub(super) fn skip_space(&mut self) {
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
    pub(super) fn value(&mut self, depth: usize) -> Option<Value> {
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
    pub(super) fn name(&mut self) -> Vec<u8> {
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

    /// A number, or a reference `N G R`.
    pub(super) fn number(&mut self) -> Value {
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
                return u32::try_from(n).map_or(Value::Other, Value::Ref);
            }
        }
        self.pos = save;
        Value::Int(n)
    }

    /// A literal string with balanced parentheses and escapes.
    pub(super) fn string(&mut self) -> Option<()> {
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

pub(super) fn is_white(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\0' | b'\x0C')
}

pub(super) fn is_delimiter(c: u8) -> bool {
    matches!(
        c,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}
