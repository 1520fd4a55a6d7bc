//! The text kept for search ([`Limits::keep_text`]): each PDF page's, a document's in one
//! piece, none by default, and never more than the limit.

use super::super::{FileText, preview_ranged};
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

#[test]
fn presentations_keep_a_page_per_slide_in_showing_order() {
    let slides = ["Intro to caf\u{e9}s", "Results & next steps", "Questions"];
    let want = Some(FileText {
        pages: slides.iter().map(|s| (*s).to_owned()).collect(),
        paged: true,
    });
    for (bytes, name, mime) in [
        (
            samples::pptx(&slides),
            "deck.pptx",
            super::super::sniff::PPTX,
        ),
        (samples::odp(&slides), "deck.odp", super::super::sniff::ODP),
    ] {
        let info =
            extract(&bytes, name, Some(AssetType::Document), &keeping(1 << 20)).expect("extract");
        assert_eq!(info.mime_type, mime);
        assert_eq!(
            (info.page_count, info.word_count),
            (Some(3), Some(7)),
            "{name}: slides and words, speaker notes aside"
        );
        assert_eq!(info.text, want, "{name}");
        // Read by ranges (a large file's way), the same counts and text.
        let (ranged, _) = preview_ranged(
            &bytes,
            &mut &bytes[..],
            name,
            Some(AssetType::Document),
            320,
            &keeping(1 << 20),
        )
        .expect("ranged");
        assert_eq!((ranged.page_count, ranged.word_count), (Some(3), Some(7)));
        assert_eq!(ranged.text, want, "{name} by ranges");
    }
}

#[test]
fn an_html_page_keeps_the_text_a_reader_sees() {
    let page = b"<!DOCTYPE html>\n<html><head><title>Price list</title>\
        <script>var a = 1 < 2;</script></head><body><h1>Caf&eacute;</h1>\
        <p>Espresso&nbsp;2&euro;</p></body></html>";
    let info = extract(
        page,
        "prices.html",
        Some(AssetType::Document),
        &keeping(1 << 20),
    )
    .expect("extract");
    assert_eq!(info.mime_type, "text/html");
    assert_eq!(info.word_count, Some(5));
    assert_eq!(
        info.text.expect("text").pages,
        ["Price list Café Espresso 2€"]
    );
    let (ranged, _) = preview_ranged(
        page,
        &mut &page[..],
        "prices.html",
        None,
        320,
        &keeping(1 << 20),
    )
    .expect("ranged");
    assert_eq!(
        (ranged.kind, ranged.word_count),
        (Some(AssetType::Document), Some(5))
    );
}
