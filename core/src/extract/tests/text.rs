//! The text kept for search ([`Limits::keep_text`]): each PDF page's, a document's in one
//! piece, none by default, and never more than the limit.

use super::super::FileText;
use super::*;

/// The tests' limits, keeping up to `keep` bytes of text.
fn keeping(keep: u64) -> Limits {
    Limits {
        keep_text: keep,
        ..limits()
    }
}

fn text_of(bytes: &[u8], name: &str, limits: &Limits) -> Option<FileText> {
    extract(bytes, name, None, limits).expect("extract").text
}

#[test]
fn each_pdf_page_keeps_its_own_text() {
    let pdf = samples::pdf(3, 20);
    let all = sentence(60);
    let words: Vec<&str> = all.split(' ').collect();
    let pages: Vec<String> = words.chunks(20).map(|c| c.join(" ")).collect();
    assert_eq!(
        text_of(&pdf, "report.pdf", &keeping(1 << 20)),
        Some(FileText { pages, paged: true })
    );
    assert_eq!(
        text_of(&pdf, "report.pdf", &limits()),
        None,
        "none by default"
    );
}

#[test]
fn documents_keep_their_text_in_one_piece() {
    let one = |text: &str| {
        Some(FileText {
            pages: vec![text.to_owned()],
            paged: false,
        })
    };
    let docx = samples::docx(&["Alpha beta.", "Gamma"]);
    assert_eq!(
        text_of(&docx, "a.docx", &keeping(1 << 20)),
        one("Alpha beta. Gamma")
    );
    let odt = samples::odt(&["Alpha beta.", "Gamma"]);
    assert_eq!(
        text_of(&odt, "a.odt", &keeping(1 << 20)),
        one("Alpha beta. Gamma")
    );
    let md = b"# Notes\n\n  Caf\xc3\xa9   menu\t2024\n";
    assert_eq!(
        text_of(md, "notes.md", &keeping(1 << 20)),
        one("# Notes Café menu 2024")
    );
    for (bytes, name) in [
        (&docx[..], "a.docx"),
        (&odt[..], "a.odt"),
        (&md[..], "n.md"),
    ] {
        assert_eq!(
            text_of(bytes, name, &limits()),
            None,
            "{name}: none by default"
        );
    }
}

#[test]
fn kept_text_stops_at_its_limit_and_words_are_still_counted() {
    let info = extract(b"abc def ghi", "a.txt", None, &keeping(7)).expect("extract");
    assert_eq!(info.word_count, Some(3));
    assert_eq!(
        info.text,
        Some(FileText {
            pages: vec!["abc def".into()],
            paged: false,
        })
    );
    // A character that does not fit whole is left out, never cut.
    let info = extract("ab é".as_bytes(), "a.txt", None, &keeping(4)).expect("extract");
    assert_eq!(info.text.expect("text").pages, ["ab"]);
}
