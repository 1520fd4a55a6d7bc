//! Every extracted field against known values, on real files made by [`super::samples`].

#[cfg(feature = "previews")]
use std::io::Cursor;
use std::time::{Duration, Instant};

use lopdf::{EncryptionState, EncryptionVersion, Object, Permissions};

use super::samples::{self, sentence};
use super::{ExtractError, FileInfo, Limits, extract};
#[cfg(feature = "previews")]
use super::{sniff, thumbnail};
use crate::model::AssetType;

mod hostile;
mod text;
// Thumbnails, audio and video facts, and large files' previews need `previews`.
#[cfg(feature = "previews")]
mod large;
#[cfg(feature = "previews")]
mod media;
#[cfg(feature = "previews")]
mod previews;
#[cfg(feature = "previews")]
mod video;

/// The default limits, PDF pages drawn in this process (the files here are the tests' own).
fn limits() -> Limits {
    Limits {
        #[cfg(feature = "previews")]
        pdf_renderer: super::PdfRenderer::InProcess,
        ..Limits::default()
    }
}

fn info(bytes: &[u8], name: &str, declared: Option<AssetType>) -> FileInfo {
    match extract(bytes, name, declared, &limits()) {
        Ok(info) => info,
        Err(e) => panic!("extract({name}) failed: {e}"),
    }
}

/// Decodes an encoded image and gives its size and format.
#[cfg(feature = "previews")]
fn decoded(bytes: &[u8]) -> (u32, u32, image::ImageFormat) {
    let reader = image::ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .expect("in-memory reader");
    let format = reader.format().expect("a known format");
    let image = reader.decode().expect("a decodable image");
    (image.width(), image.height(), format)
}

fn save(doc: &mut lopdf::Document) -> Vec<u8> {
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save");
    out
}

// ---------------------------------------------------------------- PDF

#[test]
fn pdf_three_pages_known_words() {
    let pdf = samples::pdf(3, 57);
    let got = info(&pdf, "report.pdf", Some(AssetType::Pdf));
    assert_eq!(
        got,
        FileInfo {
            mime_type: "application/pdf".into(),
            file_size: pdf.len() as u64,
            kind: Some(AssetType::Pdf),
            page_count: Some(3),
            word_count: Some(171),
            width: None,
            height: None,
            media: crate::model::Media::default(),
            text: None,
        }
    );
}

#[test]
fn pdf_type_is_inferred_when_not_declared() {
    let got = info(&samples::pdf(1, 5), "upload", None);
    assert_eq!(got.kind, Some(AssetType::Pdf));
    assert_eq!((got.page_count, got.word_count), (Some(1), Some(5)));
}

#[test]
fn pdf_with_object_and_xref_streams() {
    let mut doc = samples::build_pdf(4, 25);
    let mut pdf = Vec::new();
    doc.save_modern(&mut pdf).expect("save");
    assert!(
        pdf.windows(6).any(|w| w == b"ObjStm"),
        "object streams used"
    );
    let got = info(&pdf, "modern.pdf", Some(AssetType::Pdf));
    assert_eq!((got.page_count, got.word_count), (Some(4), Some(100)));
}

#[test]
fn pdf_words_split_by_gaps_and_joined_across_strings() {
    // TJ with a wide gap separates words, narrow kerning does not, and a word shown in two
    // strings counts once; a line move separates.
    let mut doc = samples::build_pdf(1, 0);
    let page = *doc.get_pages().values().next().expect("a page");
    let content = b"BT /F1 11 Tf 72 700 Td [(Kern) -20 (ing) -250 (works)] TJ ( sp) Tj (lit) Tj \
                    0 -14 Td (next) Tj (line) ' ET"
        .to_vec();
    let id = doc.add_object(lopdf::Stream::new(lopdf::dictionary! {}, content));
    doc.get_dictionary_mut(page)
        .expect("page")
        .set("Contents", id);
    let pdf = save(&mut doc);
    let got = info(&pdf, "kerning.pdf", Some(AssetType::Pdf));
    // Kerning, works, split, next, line.
    assert_eq!(got.word_count, Some(5));
}

fn encrypted_pdf(user_password: &str) -> Vec<u8> {
    let mut doc = samples::build_pdf(3, 30);
    doc.trailer.set(
        "ID",
        Object::Array(vec![
            Object::string_literal(b"0123456789abcdef".to_vec()),
            Object::string_literal(b"0123456789abcdef".to_vec()),
        ]),
    );
    let state = EncryptionState::try_from(EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner",
        user_password,
        key_length: 128,
        permissions: Permissions::all(),
    })
    .expect("encryption state");
    doc.encrypt(&state).expect("encrypt");
    save(&mut doc)
}

#[test]
fn pdf_encrypted_with_a_password_gives_null_counts() {
    let pdf = encrypted_pdf("secret");
    assert!(pdf.windows(8).any(|w| w == b"/Encrypt"));
    let got = info(&pdf, "locked.pdf", Some(AssetType::Pdf));
    assert_eq!(got.mime_type, "application/pdf");
    assert_eq!((got.page_count, got.word_count), (None, None));
}

#[test]
fn pdf_encrypted_without_user_password_gives_pages_only() {
    let got = info(&encrypted_pdf(""), "restricted.pdf", Some(AssetType::Pdf));
    assert_eq!((got.page_count, got.word_count), (Some(3), None));
}

#[test]
fn pdf_garbage_gives_null_counts() {
    let garbage = b"%PDF-1.7\n\x00\x01 this is not really a PDF \xFF\xFE\n%%EOF\n";
    let got = info(garbage, "broken.pdf", Some(AssetType::Pdf));
    assert_eq!(got.mime_type, "application/pdf");
    assert_eq!((got.page_count, got.word_count), (None, None));

    let pdf = samples::pdf(2, 10);
    let truncated = &pdf[..pdf.len() / 2];
    let got = info(truncated, "truncated.pdf", Some(AssetType::Pdf));
    assert_eq!(got.word_count, None);
}

#[test]
fn pdf_with_a_stream_over_the_limit_gives_null_counts() {
    let mut doc = samples::build_pdf(1, 3);
    let page = *doc.get_pages().values().next().expect("a page");
    // Three MiB of spaces after the text: harmless, but over a 1 MiB stream limit.
    let mut content = b"BT /F1 11 Tf 72 700 Td (three little words) Tj ET\n".to_vec();
    content.resize(content.len() + 3 * 1024 * 1024, b' ');
    let mut stream = lopdf::Stream::new(lopdf::dictionary! {}, content);
    stream.compress().expect("compress");
    let id = doc.add_object(stream);
    doc.get_dictionary_mut(page)
        .expect("page")
        .set("Contents", id);
    let pdf = save(&mut doc);
    assert!(pdf.len() < 64 * 1024, "compressed to {} bytes", pdf.len());

    let got = info(&pdf, "spaces.pdf", Some(AssetType::Pdf));
    assert_eq!((got.page_count, got.word_count), (Some(1), Some(3)));

    let mut small = limits();
    small.max_pdf_stream = 1024 * 1024;
    let got = extract(&pdf, "spaces.pdf", Some(AssetType::Pdf), &small).expect("extract");
    assert_eq!((got.page_count, got.word_count), (None, None));

    let mut small = limits();
    small.max_pdf_page_content = 1024 * 1024;
    let got = extract(&pdf, "spaces.pdf", Some(AssetType::Pdf), &small).expect("extract");
    assert_eq!((got.page_count, got.word_count), (Some(1), None));
}

/// ASCII85 as PDF writes it, ending with `~>`.
fn ascii85(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in data.chunks(4) {
        let mut group = [0u8; 4];
        group[..chunk.len()].copy_from_slice(chunk);
        let mut n = u32::from_be_bytes(group);
        let mut digits = [0u8; 5];
        for d in digits.iter_mut().rev() {
            *d = u8::try_from(n % 85).expect("below 85") + b'!';
            n /= 85;
        }
        out.extend_from_slice(&digits[..chunk.len() + 1]);
    }
    out.extend_from_slice(b"~>");
    out
}

#[test]
fn pdf_filter_chains_are_measured() {
    use std::io::Write;
    let mut text = b"BT /F1 11 Tf 72 700 Td (four words right here) Tj ET\n".to_vec();
    text.resize(text.len() + 3 * 1024 * 1024, b' ');
    let mut deflated = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    deflated.write_all(&text).expect("deflate");
    let deflated = deflated.finish().expect("deflate");
    let lzw = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
        .encode(&text)
        .expect("lzw");
    let chains: [(Vec<u8>, Vec<Object>); 2] = [
        (
            ascii85(&deflated),
            vec!["ASCII85Decode".into(), "FlateDecode".into()],
        ),
        (lzw, vec!["LZWDecode".into()]),
    ];
    for (encoded, filters) in chains {
        let mut doc = samples::build_pdf(1, 0);
        let page = *doc.get_pages().values().next().expect("a page");
        let stream =
            lopdf::Stream::new(lopdf::dictionary! { "Filter" => filters.clone() }, encoded);
        let id = doc.add_object(stream);
        doc.get_dictionary_mut(page)
            .expect("page")
            .set("Contents", id);
        let pdf = save(&mut doc);
        let got = info(&pdf, "chain.pdf", Some(AssetType::Pdf));
        assert_eq!(
            (got.page_count, got.word_count),
            (Some(1), Some(4)),
            "{filters:?}"
        );
        let mut small = limits();
        small.max_pdf_stream = 1024 * 1024;
        let got = extract(&pdf, "chain.pdf", Some(AssetType::Pdf), &small).expect("extract");
        assert_eq!(
            (got.page_count, got.word_count),
            (None, None),
            "{filters:?}"
        );
    }
}

#[test]
fn pdf_with_an_oversized_font_map_gives_pages_only() {
    let mut doc = samples::build_pdf(1, 3);
    let mut cmap = b"/CIDInit /ProcSet findresource begin\n".to_vec();
    cmap.resize(cmap.len() + 5 * 1024 * 1024, b'\n');
    let mut stream = lopdf::Stream::new(lopdf::dictionary! {}, cmap);
    stream.compress().expect("compress");
    let cmap_id = doc.add_object(stream);
    let font_id = doc
        .objects
        .iter()
        .find(|(_, o)| o.as_dict().is_ok_and(|d| d.has_type(b"Font")))
        .map(|(id, _)| *id)
        .expect("a font");
    doc.get_dictionary_mut(font_id)
        .expect("font")
        .set("ToUnicode", cmap_id);
    let pdf = save(&mut doc);
    let got = info(&pdf, "cmap.pdf", Some(AssetType::Pdf));
    assert_eq!((got.page_count, got.word_count), (Some(1), None));
}

#[test]
fn pdf_with_implausible_xref_widths_is_not_parsed() {
    let pdf = b"%PDF-1.5\n1 0 obj\n<< /Type /XRef /W [99999999999 1 1] /Size 2 /Length 0 >>\n\
                stream\n\nendstream\nendobj\nstartxref\n9\n%%EOF\n";
    let got = info(pdf, "hostile.pdf", Some(AssetType::Pdf));
    assert_eq!((got.page_count, got.word_count), (None, None));
}

// ---------------------------------------------------------------- documents

#[test]
fn docx_words_and_pages() {
    let first = sentence(300);
    let second = sentence(200);
    let docx = samples::docx(&[&first, &second, "Q&A: tips & tricks <fast>"]);
    let got = info(&docx, "guide.docx", Some(AssetType::Document));
    assert_eq!(
        got,
        FileInfo {
            mime_type: super::sniff::DOCX.into(),
            file_size: docx.len() as u64,
            kind: Some(AssetType::Document),
            page_count: Some(3),
            // 300 + 200 + "Q&A:", "tips", "tricks", "<fast>" ("&" alone is no word).
            word_count: Some(504),
            width: None,
            height: None,
            media: crate::model::Media::default(),
            text: None,
        }
    );
}

#[test]
fn docx_runs_join_and_paragraphs_tabs_and_breaks_separate() {
    let document = r#"<?xml version="1.0" encoding="UTF-8"?>
<w:document xmlns:w="w" xmlns:mc="mc"><w:body>
<w:p><w:r><w:t>Hel</w:t></w:r><w:r><w:t>lo</w:t></w:r><w:r><w:tab/><w:t>world</w:t></w:r></w:p>
<w:p><w:r><w:t>one</w:t><w:br/><w:t>two</w:t></w:r></w:p><w:p><w:r><w:t>three</w:t></w:r></w:p>
<w:p><w:r><w:delText>deleted</w:delText><w:instrText> PAGE </w:instrText></w:r></w:p>
<mc:AlternateContent><mc:Choice><w:p><w:r><w:t>boxed text</w:t></w:r></w:p></mc:Choice>
<mc:Fallback><w:p><w:r><w:t>boxed text</w:t></w:r></w:p></mc:Fallback></mc:AlternateContent>
</w:body></w:document>"#;
    let docx = samples::zip_archive(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("word/document.xml", document.as_bytes()),
    ]);
    let got = info(&docx, "runs.docx", Some(AssetType::Document));
    // Hello, world, one, two, three, boxed, text; no app.xml, so no pages.
    assert_eq!((got.word_count, got.page_count), (Some(7), None));
}

#[test]
fn odt_statistics_from_meta() {
    let odt = samples::odt(&[&sentence(120), &sentence(260)]);
    let got = info(&odt, "notes.odt", Some(AssetType::Document));
    assert_eq!(got.mime_type, "application/vnd.oasis.opendocument.text");
    assert_eq!(got.kind, Some(AssetType::Document));
    assert_eq!((got.page_count, got.word_count), (Some(2), Some(380)));
}

#[test]
fn odt_without_statistics_counts_content() {
    let odt = samples::odt_with(&[&sentence(42), "tail & end"], "");
    let got = info(&odt, "plain.odt", Some(AssetType::Document));
    // 42 + "tail", "end" (a lone "&" is no word).
    assert_eq!((got.page_count, got.word_count), (None, Some(44)));

    let inline = samples::zip_archive(&[
        ("mimetype", super::sniff::ODT.as_bytes()),
        (
            "content.xml",
            br#"<office:document-content xmlns:office="o" xmlns:text="t"><office:body><office:text><text:h>Big<text:span>Title</text:span></text:h><text:p>a<text:s/>b<text:tab/>c<text:line-break/>d</text:p></office:text></office:body></office:document-content>"#,
        ),
    ]);
    let got = info(&inline, "inline.odt", Some(AssetType::Document));
    // BigTitle, a, b, c, d.
    assert_eq!(got.word_count, Some(5));
}

#[test]
fn plain_text_and_markdown() {
    let txt = "Hello world, this is\ttext.\r\nSecond line — with a dash.\n".as_bytes();
    let got = info(txt, "readme.txt", Some(AssetType::Document));
    assert_eq!(got.mime_type, "text/plain");
    assert_eq!(got.file_size, txt.len() as u64);
    assert_eq!(got.word_count, Some(10));
    assert_eq!(got.page_count, None);

    let md =
        b"# Brand guide\n\n- Logo use\n- Colours\n\n| Name | Hex |\n|---|---|\n| Blue | 1A2B3C |\n";
    let got = info(md, "guide.md", Some(AssetType::Document));
    assert_eq!(got.mime_type, "text/markdown");
    assert_eq!(got.kind, Some(AssetType::Document));
    // Brand, guide, Logo, use, Colours, Name, Hex, Blue, 1A2B3C.
    assert_eq!(got.word_count, Some(9));

    let bom = b"\xEF\xBB\xBFone two";
    assert_eq!(info(bom, "bom.txt", None).word_count, Some(2));
    assert_eq!(info(b"", "empty.txt", None).word_count, Some(0));
}

#[test]
fn text_over_the_limit_is_refused() {
    let mut small = limits();
    small.max_text_bytes = 10;
    let err = extract(b"one two three four", "a.txt", None, &small).unwrap_err();
    assert!(matches!(err, ExtractError::LimitExceeded { limit: 10, .. }));
}

/// A DOCX whose document part inflates to `size` bytes from a few kilobytes.
fn docx_bomb(size: usize) -> Vec<u8> {
    let mut document = b"<w:document><w:body><w:p><w:r><w:t>".to_vec();
    document.resize(document.len() + size, b' ');
    document.extend_from_slice(b"</w:t></w:r></w:p></w:body></w:document>");
    samples::zip_archive(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("word/document.xml", &document),
    ])
}

#[test]
fn zip_bomb_is_refused_within_the_limit() {
    let bomb = docx_bomb(32 * 1024 * 1024);
    assert!(bomb.len() < 128 * 1024, "bomb is {} bytes", bomb.len());
    let mut small = limits();
    small.max_zip_inflated = 1024 * 1024;
    let started = Instant::now();
    let err = extract(&bomb, "bomb.docx", Some(AssetType::Document), &small).unwrap_err();
    assert!(
        matches!(
            err,
            ExtractError::LimitExceeded {
                limit: 1_048_576,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // The same shape under the limit is read.
    let fine = docx_bomb(1024);
    let got = extract(&fine, "fine.docx", Some(AssetType::Document), &small).expect("extract");
    assert_eq!(got.word_count, Some(0));
}
