//! HTML: the words a reader sees. Markup, comments, and the contents of `script`, `style`,
//! `template` and `noscript` are not text; block elements and line breaks separate words;
//! character references (`&amp;`, `&eacute;`, `&#233;`) are the characters they name, by
//! the HTML5 table quick-xml carries.

use super::words::WordCounter;
use super::{Counts, ExtractError, Limits};

/// Elements whose contents are not text a reader sees.
const RAW: [&str; 4] = ["script", "style", "template", "noscript"];

/// Elements that begin or end a block of text, so a word does not run across them.
const BLOCKS: [&str; 39] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "caption",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "td",
    "th",
    "title",
    "tr",
    "ul",
];

/// An HTML page (UTF-8): its words, and its text when kept.
pub(super) fn html(bytes: &[u8], limits: &Limits) -> Result<Counts, ExtractError> {
    if bytes.len() as u64 > limits.max_text_bytes {
        return Err(ExtractError::limit("text", limits.max_text_bytes));
    }
    let mut counter = WordCounter::keeping(limits.keep_text);
    read(&String::from_utf8_lossy(bytes), &mut counter);
    Ok(Counts::of(None, Some(counter), false))
}

/// Feeds the text of `page` to `counter`.
fn read(page: &str, counter: &mut WordCounter) {
    let mut rest = page;
    while !rest.is_empty() {
        let Some(at) = rest.find(['<', '&']) else {
            counter.text(rest);
            return;
        };
        counter.text(&rest[..at]);
        rest = &rest[at..];
        rest = if rest.starts_with('&') {
            reference(rest, counter)
        } else {
            tag(rest, counter)
        };
    }
}

/// Reads the character reference at the start of `rest` (which begins with `&`); one that
/// names nothing is the text it is. Answers what follows it.
fn reference<'a>(rest: &'a str, counter: &mut WordCounter) -> &'a str {
    let end = rest
        .char_indices()
        .skip(1)
        .take(40)
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '#'))
        .filter(|(_, c)| *c == ';');
    let resolved = end.and_then(|(end, _)| {
        let name = &rest[1..end];
        let text = match name.strip_prefix('#') {
            Some(number) => {
                let code = match number.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => number.parse().ok(),
                };
                let c = code.and_then(char::from_u32)?;
                counter.char(c);
                return Some(end + 1);
            }
            None => quick_xml::escape::resolve_html5_entity(name)?,
        };
        counter.text(text);
        Some(end + 1)
    });
    match resolved {
        Some(after) => &rest[after..],
        None => {
            counter.char('&');
            &rest[1..]
        }
    }
}

/// Reads the markup at the start of `rest` (which begins with `<`): a comment, a
/// declaration, or a tag, and the contents of a raw element after its start tag. Answers
/// what follows it. A `<` that starts no markup is text.
fn tag<'a>(rest: &'a str, counter: &mut WordCounter) -> &'a str {
    if let Some(comment) = rest.strip_prefix("<!--") {
        return comment.find("-->").map_or("", |end| &comment[end + 3..]);
    }
    let after = &rest[1..];
    let closing = after.starts_with('/');
    let name_at = usize::from(closing);
    let name_len = after[name_at..]
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(after.len() - name_at);
    let starts_name = after[name_at..].starts_with(|c: char| c.is_ascii_alphabetic());
    if !starts_name && !after.starts_with(['!', '?']) {
        counter.char('<');
        return after;
    }
    let name = after[name_at..name_at + name_len].to_ascii_lowercase();
    let Some(end) = tag_end(after) else {
        return "";
    };
    let after = &after[end + 1..];
    if BLOCKS.contains(&name.as_str()) {
        counter.boundary();
    }
    if !closing && RAW.contains(&name.as_str()) {
        let close = format!("</{name}");
        return match find_ignoring_case(after, &close) {
            Some(at) => &after[at..],
            None => "",
        };
    }
    after
}

/// Where the tag whose text (after `<`) is `tag` ends: its `>`, outside quoted values.
fn tag_end(tag: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in tag.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

/// Where `needle` (ASCII) first occurs in `hay`, ignoring ASCII case.
fn find_ignoring_case(hay: &str, needle: &str) -> Option<usize> {
    let (hay, needle) = (hay.as_bytes(), needle.as_bytes());
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(page: &str) -> (u64, String) {
        let counts = html(
            page.as_bytes(),
            &Limits {
                keep_text: 1 << 20,
                ..Limits::default()
            },
        )
        .expect("read");
        let text = counts.text.map(|t| t.pages.concat()).unwrap_or_default();
        (counts.words.unwrap_or(0), text)
    }

    #[test]
    fn markup_scripts_and_comments_are_not_text() {
        let page = r#"<!DOCTYPE html><html><head><title>Annual report</title>
            <style>p { color: red }</style><script>if (a<b) { x = "</p>"; }</script></head>
            <body><!-- a <b>comment</b> --><p class="lead">Caf&eacute; &amp; bar,
            <b>bo</b>ld&#33;</p><div>Next&nbsp;block</div><p>1 &lt; 2 &bogus; & done</p>
            </body></html>"#;
        let (words, text) = text_of(page);
        assert_eq!(
            text,
            "Annual report Café & bar, bold! Next block 1 < 2 &bogus; & done"
        );
        assert_eq!(words, 11);
    }

    #[test]
    fn blocks_separate_words_and_inline_tags_do_not() {
        assert_eq!(text_of("<p>one</p><p>two</p>").1, "one two");
        assert_eq!(text_of("<li>a<br>b</li>").1, "a b");
        assert_eq!(text_of("wo<span>rd</span>").1, "word");
    }

    #[test]
    fn unfinished_markup_ends_the_text_without_failing() {
        assert_eq!(text_of("before <a href='x").1, "before");
        assert_eq!(text_of("x <!-- never closed").1, "x");
        assert_eq!(text_of("a < b and c <3").1, "a < b and c <3");
        assert_eq!(text_of("<script>never closed").1, "");
        assert_eq!(text_of("&#xZZ; &#1114112; &").1, "&#xZZ; &#1114112; &");
    }
}
