//! Decoding of stream data through the filters `lopdf` supports (Flate, LZW, ASCII85), each
//! into a buffer that refuses to grow past a cap, so measuring what a stream decodes to
//! never costs more memory than the cap.

use std::io::{Read, Write};

/// Bytes a stream decodes to through `filters` (in order), measuring the filters `lopdf`
/// decodes and stopping at the first it does not. `None` when over `cap`.
pub(in crate::extract) fn decoded_len(data: &[u8], filters: &[Vec<u8>], cap: u64) -> Option<u64> {
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
pub(super) fn inflate(input: &[u8], cap: u64) -> Option<Vec<u8>> {
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
pub(super) fn lzw(input: &[u8], cap: u64, early_change: bool) -> Option<Vec<u8>> {
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
pub(super) fn ascii85(input: &[u8], cap: u64) -> Option<Vec<u8>> {
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
