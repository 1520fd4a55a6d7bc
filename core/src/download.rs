//! The rules of a download: which bytes a `Range` header asks for, the
//! `Content-Disposition` of a file, the `ETag` of its content, and the headers that keep a
//! served file from running.
//!
//! ```
//! use assetlib_core::download::{Selection, attachment, content_etag, select};
//!
//! assert_eq!(select(Some(b"bytes=0-99"), 1000), Selection::Part(0..100));
//! assert_eq!(select(Some(b"bytes=-10"), 1000), Selection::Part(990..1000));
//! assert_eq!(select(Some(b"bytes=1000-"), 1000), Selection::Unsatisfiable);
//! assert_eq!(select(Some(b"items=0-1"), 1000), Selection::Whole);
//! assert_eq!(
//!     attachment("fiche", "docs/Fiche.PDF"),
//!     r#"attachment; filename="fiche.pdf""#
//! );
//! // The same bytes have the same tag, wherever they are kept.
//! assert_eq!(content_etag(&[0xab; 32]), format!("\"sha256-{}\"", "ab".repeat(32)));
//! ```

use std::ops::Range;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::reply::Reply;

/// What a download sends, by its `Range` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The whole file (200): no `Range`, one that is not of bytes, malformed, or of several
    /// ranges (which a server may ignore).
    Whole,
    /// One range of bytes (206), end exclusive.
    Part(Range<u64>),
    /// A well-formed range the file cannot satisfy (416).
    Unsatisfiable,
}

/// The bytes a `Range` header selects from a file of `size` bytes (RFC 9110 §14.2). A single
/// range is served; a header that cannot be parsed, or asks for several ranges, is ignored.
pub fn select(range: Option<&[u8]>, size: u64) -> Selection {
    let Some(value) = range.and_then(|r| std::str::from_utf8(r).ok()) else {
        return Selection::Whole;
    };
    let Ok(parsed) = http_range_header::parse_range_header(value.trim()) else {
        return Selection::Whole;
    };
    if parsed.len() != 1 {
        return Selection::Whole;
    }
    match parsed.validate(size) {
        Ok(ranges) => match ranges.as_slice() {
            [one] => Selection::Part(*one.start()..one.end().saturating_add(1)),
            _ => Selection::Whole,
        },
        Err(_) => Selection::Unsatisfiable,
    }
}

/// Characters left as they are in an RFC 8187 `filename*` value (its `attr-char`).
const ATTR_CHAR: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'#')
    .remove(b'$')
    .remove(b'&')
    .remove(b'+')
    .remove(b'-')
    .remove(b'.')
    .remove(b'^')
    .remove(b'_')
    .remove(b'`')
    .remove(b'|')
    .remove(b'~');

/// The `Content-Disposition` of a download: `attachment` with the asset's slug and the
/// extension of its file (lower-cased); `filename*` (UTF-8) is added when the name is not
/// plain ASCII, with an ASCII stand-in in `filename`.
pub fn attachment(slug: &str, file_path: &str) -> String {
    let name = file_name(slug, file_path);
    let ascii: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if ascii == name {
        format!("attachment; filename=\"{ascii}\"")
    } else {
        format!(
            "attachment; filename=\"{ascii}\"; filename*=UTF-8''{}",
            utf8_percent_encode(&name, ATTR_CHAR)
        )
    }
}

/// The name a downloaded file gets: the asset's slug (`download` when empty) and the
/// extension of its file, lower-cased and kept to letters and digits. Like every name core
/// puts in a header or a zip, it passes [`safe_name`].
pub fn file_name(slug: &str, file_path: &str) -> String {
    let file_name = file_path.rsplit('/').next().unwrap_or(file_path);
    let extension = file_name
        .rsplit_once('.')
        .map(|(stem, ext)| (stem, ext.to_lowercase()))
        .map(|(stem, ext)| (stem, ext.chars().filter(|c| c.is_alphanumeric()).collect()))
        .filter(|(stem, ext): &(&str, String)| !stem.is_empty() && !ext.is_empty())
        .map(|(_, ext)| ext);
    let stem = safe_name(slug, "download");
    match extension {
        Some(ext) => format!("{stem}.{ext}"),
        None => stem,
    }
}

/// A name that is safe as one component of a path, wherever it is unpacked or saved: `/`,
/// `\`, `:` and control characters become `_`, every run of dots becomes one dot (so it never
/// holds `..`), and leading and trailing dots and white space go. A name with nothing left (one
/// made only of dots and spaces, say) becomes `fallback`.
pub fn safe_name(raw: &str, fallback: &str) -> String {
    let mut name = String::with_capacity(raw.len());
    for c in raw.chars() {
        let c = if matches!(c, '/' | '\\' | ':') || c.is_control() {
            '_'
        } else {
            c
        };
        if c == '.' && name.ends_with('.') {
            continue;
        }
        name.push(c);
    }
    let trimmed = name.trim_matches(|c: char| c == '.' || c.is_whitespace());
    if trimmed.is_empty() {
        fallback.to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// The strong `ETag` of a file whose SHA-256 is `checksum` (the asset's `checksum_sha256`):
/// `"sha256-` and its 64 hex digits `"`. It is made of the bytes alone, not of where or how
/// they are kept, so a copy a client holds stays valid when the data moves to another file
/// store (an S3 bucket, a restore, another machine).
pub fn content_etag(checksum: &[u8; 32]) -> String {
    use std::fmt::Write as _;
    let mut tag = String::with_capacity(73);
    tag.push_str("\"sha256-");
    for b in checksum {
        let _ = write!(tag, "{b:02x}");
    }
    tag.push('"');
    tag
}

/// Whether `if_range` (an `If-Range` header) lets a range be served for a file whose current
/// `ETag` is `etag`: only an exact match of a strong tag does (RFC 9110 §13.1.5). A date never
/// matches, as downloads send no `Last-Modified`; a weak tag never matches either.
pub fn if_range_matches(if_range: &[u8], etag: &str) -> bool {
    let Ok(given) = std::str::from_utf8(if_range) else {
        return false;
    };
    let given = given.trim();
    !given.starts_with("W/") && !etag.starts_with("W/") && given == etag
}

/// `Content-Range` of a part: `bytes START-END/SIZE` (end inclusive).
pub fn content_range(part: &Range<u64>, size: u64) -> String {
    format!("bytes {}-{}/{size}", part.start, part.end.saturating_sub(1))
}

/// A file sent to a client is never run in the API's origin: its type is never sniffed, and
/// an HTML or SVG file opened directly is sandboxed with nothing allowed.
pub(crate) fn protected(reply: Reply) -> Reply {
    reply
        .with_header("x-content-type-options", "nosniff")
        .with_header("content-security-policy", "default-src 'none'; sandbox")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_select_as_rfc_9110_says() {
        let size = 1000;
        let cases: &[(&[u8], Selection)] = &[
            (b"bytes=0-0", Selection::Part(0..1)),
            (b"bytes=999-999", Selection::Part(999..1000)),
            (b"bytes=999-", Selection::Part(999..1000)),
            (b"bytes=500-5000", Selection::Part(500..1000)),
            (b"bytes=-1", Selection::Part(999..1000)),
            (b"bytes=-5000", Selection::Part(0..1000)),
            (b"bytes=0-", Selection::Part(0..1000)),
            (b"bytes=1000-", Selection::Unsatisfiable),
            (b"bytes=1000-2000", Selection::Unsatisfiable),
            (b"bytes=-0", Selection::Unsatisfiable),
            (b"bytes=0-1,5-6", Selection::Whole),
            (b"bytes=5-1", Selection::Whole),
            (b"bytes=abc", Selection::Whole),
            (b"lines=0-1", Selection::Whole),
            (b"\xff\xfe", Selection::Whole),
        ];
        for (header, want) in cases {
            assert_eq!(
                &select(Some(header), size),
                want,
                "{}",
                String::from_utf8_lossy(header)
            );
        }
        assert_eq!(select(None, size), Selection::Whole);
    }

    #[test]
    fn an_empty_file_has_no_satisfiable_range() {
        assert_eq!(select(Some(b"bytes=0-"), 0), Selection::Unsatisfiable);
        assert_eq!(select(None, 0), Selection::Whole);
    }

    #[test]
    fn safe_names_never_climb_or_hide() {
        for (raw, want) in [
            (". ..", "S"),
            (".\u{3000}..", "S"),
            ("..", "S"),
            ("  ", "S"),
            ("a/../../b", "a_._._b"),
            ("\\..\\win", "_._win"),
            ("C:evil", "C_evil"),
            ("tab\there", "tab_here"),
            ("Logos", "Logos"),
            ("v1.2...3", "v1.2.3"),
            ("trailing. ", "trailing"),
        ] {
            let got = safe_name(raw, "S");
            assert_eq!(got, want, "{raw:?}");
            assert!(!got.contains("..") && !got.contains(['/', '\\', ':']));
        }
        assert_eq!(file_name("report", "a/b.P:DF"), "report.pdf");
        assert_eq!(file_name("report", "a/b.\u{0}"), "report");
    }

    #[test]
    fn if_range_needs_the_same_strong_tag() {
        assert!(if_range_matches(b"\"abc\"", "\"abc\""));
        assert!(if_range_matches(b" \"abc\" ", "\"abc\""));
        assert!(!if_range_matches(b"\"other\"", "\"abc\""));
        assert!(!if_range_matches(b"W/\"abc\"", "\"abc\""));
        assert!(!if_range_matches(
            b"Sat, 01 Jan 2000 00:00:00 GMT",
            "\"abc\""
        ));
        assert!(!if_range_matches(b"\xff", "\"abc\""));
    }

    #[test]
    fn content_range_is_inclusive() {
        assert_eq!(content_range(&(0..1), 10), "bytes 0-0/10");
        assert_eq!(content_range(&(5..10), 10), "bytes 5-9/10");
    }

    #[test]
    fn attachment_names_ascii_and_utf8() {
        assert_eq!(
            attachment("brand-guide", "docs/Brand Guide.PDF"),
            r#"attachment; filename="brand-guide.pdf""#
        );
        assert_eq!(
            attachment("notes", "notes"),
            r#"attachment; filename="notes""#
        );
        assert_eq!(attachment("x", "a/.hidden"), r#"attachment; filename="x""#);
        assert_eq!(
            attachment("plan", "plan.dоc"),
            "attachment; filename=\"plan.d_c\"; filename*=UTF-8''plan.d%D0%BEc"
        );
        assert_eq!(
            attachment("", "a.txt"),
            r#"attachment; filename="download.txt""#
        );
    }
}
