//! Every extracted field against known values, on real files made by [`super::samples`].

use std::io::Cursor;
use std::time::{Duration, Instant};

use lopdf::{EncryptionState, EncryptionVersion, Object, Permissions};

use super::samples::{self, sentence};
use super::{ExtractError, FileInfo, Limits, extract, sniff, thumbnail};
use crate::model::AssetType;

fn limits() -> Limits {
    Limits::default()
}

fn info(bytes: &[u8], name: &str, declared: Option<AssetType>) -> FileInfo {
    match extract(bytes, name, declared, &limits()) {
        Ok(info) => info,
        Err(e) => panic!("extract({name}) failed: {e}"),
    }
}

/// Decodes an encoded image and gives its size and format.
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

// ---------------------------------------------------------------- images

#[test]
fn image_dimensions() {
    let cases: [(Vec<u8>, &str, &str, u32, u32); 4] = [
        (samples::png(640, 480), "a.png", "image/png", 640, 480),
        (samples::jpeg(300, 200), "b.jpg", "image/jpeg", 300, 200),
        (samples::webp(123, 45), "c.webp", "image/webp", 123, 45),
        (samples::gif(64, 32), "d.gif", "image/gif", 64, 32),
    ];
    for (bytes, name, mime, w, h) in cases {
        let got = info(&bytes, name, Some(AssetType::Image));
        assert_eq!(
            got,
            FileInfo {
                mime_type: mime.into(),
                file_size: bytes.len() as u64,
                kind: Some(AssetType::Image),
                page_count: None,
                word_count: None,
                width: Some(w),
                height: Some(h),
            },
            "{name}"
        );
    }
}

#[test]
fn exif_orientation_6_swaps_width_and_height() {
    let turned = samples::jpeg_with_orientation(400, 200, 6);
    let got = info(&turned, "portrait.jpg", Some(AssetType::Image));
    assert_eq!((got.width, got.height), (Some(200), Some(400)));
    // Upside down (3) keeps the sides.
    let flipped = samples::jpeg_with_orientation(400, 200, 3);
    let got = info(&flipped, "flipped.jpg", Some(AssetType::Image));
    assert_eq!((got.width, got.height), (Some(400), Some(200)));
}

#[test]
fn svg_is_an_image_with_its_size() {
    let svg = br#"<?xml version="1.0"?>
<!-- a logo -->
<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40px" viewBox="0 0 12 4"><rect/></svg>"#;
    let got = info(svg, "logo.svg", Some(AssetType::Image));
    assert_eq!(got.mime_type, "image/svg+xml");
    assert_eq!((got.width, got.height), (Some(120), Some(40)));

    let view_box_only = br#"<svg viewBox="0 0 300 150" xmlns="http://www.w3.org/2000/svg"/>"#;
    let got = info(view_box_only, "v.svg", None);
    assert_eq!(got.kind, Some(AssetType::Image));
    assert_eq!((got.width, got.height), (Some(300), Some(150)));

    let relative = br#"<svg width="100%" viewBox="0 0 50 25"/>"#;
    let got = info(relative, "r.svg", None);
    assert_eq!((got.width, got.height), (Some(50), Some(25)));
    // No thumbnail for vector images.
    assert!(thumbnail(svg, 320, &limits()).expect("thumbnail").is_none());
}

#[test]
fn thumbnails_fit_320_and_keep_the_aspect_ratio() {
    let cases: [(Vec<u8>, u32, u32, &str); 6] = [
        (samples::png(800, 400), 320, 160, "image/png"),
        (samples::jpeg(400, 1200), 107, 320, "image/jpeg"),
        (samples::webp(480, 480), 320, 320, "image/png"),
        (samples::gif(480, 270), 320, 180, "image/png"),
        // Never enlarged.
        (samples::png(100, 50), 100, 50, "image/png"),
        // Orientation applied: stored 400 x 200, shown 200 x 400.
        (
            samples::jpeg_with_orientation(400, 200, 6),
            160,
            320,
            "image/jpeg",
        ),
    ];
    for (bytes, w, h, mime) in cases {
        let thumb = thumbnail(&bytes, 320, &limits())
            .expect("thumbnail")
            .expect("an image has one");
        assert_eq!((thumb.width, thumb.height, thumb.mime_type), (w, h, mime));
        let (dw, dh, format) = decoded(&thumb.bytes);
        assert_eq!((dw, dh), (w, h));
        let expected = if mime == "image/jpeg" {
            (image::ImageFormat::Jpeg, "jpg")
        } else {
            (image::ImageFormat::Png, "png")
        };
        assert_eq!((format, thumb.extension), expected);
    }
}

#[test]
fn thumbnail_turns_the_pixels_too() {
    // The dark band is along the top of the stored picture; turned a quarter clockwise it is
    // along the right side.
    let thumb = thumbnail(&samples::jpeg_with_orientation(400, 200, 6), 320, &limits())
        .expect("thumbnail")
        .expect("an image has one");
    let image = image::load_from_memory(&thumb.bytes)
        .expect("decodable")
        .to_rgb8();
    let right = image.get_pixel(155, 160);
    let left = image.get_pixel(4, 160);
    assert!(
        right[2] < 100 && left[2] > 120,
        "right {right:?}, left {left:?}"
    );
}

#[test]
fn thumbnail_of_non_images_is_none_and_huge_images_are_refused() {
    assert!(
        thumbnail(&samples::pdf(1, 1), 320, &limits())
            .expect("thumbnail")
            .is_none()
    );
    assert!(
        thumbnail(b"plain text", 320, &limits())
            .expect("thumbnail")
            .is_none()
    );
    let mut small = limits();
    small.max_image_pixels = 10_000;
    let err = thumbnail(&samples::png(200, 200), 320, &small).unwrap_err();
    assert!(
        matches!(
            err,
            ExtractError::LimitExceeded {
                unit: "pixels",
                limit: 10_000,
                ..
            }
        ),
        "{err:?}"
    );
    let err = thumbnail(b"\x89PNG\r\n\x1a\n broken", 320, &limits()).unwrap_err();
    assert!(matches!(err, ExtractError::Image(_)), "{err:?}");
}

// ---------------------------------------------------------------- types and sniffing

#[test]
fn type_mismatches_are_errors() {
    let png = samples::png(10, 10);
    let err = extract(&png, "logo.png", Some(AssetType::Pdf), &limits()).unwrap_err();
    match err {
        ExtractError::TypeMismatch {
            declared,
            found_mime,
        } => assert_eq!(
            (declared, found_mime.as_str()),
            (AssetType::Pdf, "image/png")
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        extract(&png, "logo.png", Some(AssetType::Pdf), &limits())
            .unwrap_err()
            .to_string(),
        "file_path content is image/png, which is not a valid pdf file"
    );
    let cases: [(Vec<u8>, &str, AssetType); 6] = [
        (b"just some words".to_vec(), "a.txt", AssetType::Image),
        (samples::pdf(1, 1), "a.pdf", AssetType::Document),
        (samples::docx(&["x"]), "a.docx", AssetType::Pdf),
        (samples::png(2, 2), "a.png", AssetType::Video),
        (mp3(), "a.mp3", AssetType::Video),
        (
            b"\x00\x01\x02\x03binary".to_vec(),
            "a.txt",
            AssetType::Document,
        ),
    ];
    for (bytes, name, declared) in cases {
        let err = extract(&bytes, name, Some(declared), &limits()).unwrap_err();
        assert!(
            matches!(err, ExtractError::TypeMismatch { declared: d, .. } if d == declared),
            "{name} as {declared}: {err:?}"
        );
    }
    let err = extract(b"x", "a.txt", Some(AssetType::Link), &limits()).unwrap_err();
    assert!(matches!(err, ExtractError::NotAFileType(AssetType::Link)));
}

fn mp3() -> Vec<u8> {
    let mut mp3 = b"ID3\x04\x00\x00\x00\x00\x00\x00".to_vec();
    mp3.extend_from_slice(&[0xFF, 0xFB, 0x90, 0x00]);
    mp3.resize(256, 0);
    mp3
}

fn mp4(brand: &[u8; 4]) -> Vec<u8> {
    let mut mp4 = vec![0, 0, 0, 0x18];
    mp4.extend_from_slice(b"ftyp");
    mp4.extend_from_slice(brand);
    mp4.extend_from_slice(&[0, 0, 0, 0]);
    mp4.extend_from_slice(b"isommp42");
    mp4.resize(64, 0);
    mp4
}

#[test]
fn sniffing_prefers_content_over_a_lying_extension() {
    let png = sniff(&samples::png(4, 4), "report.pdf");
    assert_eq!(
        (png.mime_type, png.kind),
        ("image/png", Some(AssetType::Image))
    );
    let pdf = sniff(&samples::pdf(1, 1), "photo.jpg");
    assert_eq!(
        (pdf.mime_type, pdf.kind),
        ("application/pdf", Some(AssetType::Pdf))
    );
    let docx = sniff(&samples::docx(&["x"]), "archive.zip");
    assert_eq!(docx.mime_type, super::sniff::DOCX);
    let odt = sniff(&samples::odt(&["x"]), "letter.docx");
    assert_eq!(odt.mime_type, super::sniff::ODT);
    let text = sniff(b"not an image", "picture.png");
    assert_eq!(
        (text.mime_type, text.kind),
        ("text/plain", Some(AssetType::Document))
    );
    let binary = sniff(b"\x00\x9F\x92\x96 unknown", "notes.md");
    assert_eq!(
        (binary.mime_type, binary.kind),
        ("application/octet-stream", None)
    );
    let zip = sniff(&samples::zip_archive(&[("a.txt", b"a")]), "a.docx");
    assert_eq!((zip.mime_type, zip.kind), ("application/zip", None));
    let html = sniff(b"<!DOCTYPE html><html><body>hi</body></html>", "page.md");
    assert_eq!((html.mime_type, html.kind), ("text/html", None));
}

#[test]
fn audio_and_video() {
    let got = info(&mp3(), "song.mp3", Some(AssetType::Audio));
    assert_eq!(
        (got.mime_type.as_str(), got.kind),
        ("audio/mpeg", Some(AssetType::Audio))
    );
    assert_eq!(got.file_size, 256);

    let video = mp4(b"isom");
    let got = info(&video, "clip.mp4", None);
    assert_eq!(
        (got.mime_type.as_str(), got.kind),
        ("video/mp4", Some(AssetType::Video))
    );
    assert_eq!((got.width, got.page_count), (None, None));
    // An MP4 container may hold sound only: named .m4a it is audio, and declared audio it is
    // accepted whatever its name.
    let got = info(&video, "voice.m4a", None);
    assert_eq!(
        (got.mime_type.as_str(), got.kind),
        ("audio/mp4", Some(AssetType::Audio))
    );
    let got = info(&video, "voice.mp4", Some(AssetType::Audio));
    assert_eq!(got.kind, Some(AssetType::Audio));
    let got = info(&mp4(b"M4A "), "voice.bin", None);
    assert_eq!(got.kind, Some(AssetType::Audio));

    let mut wav = b"RIFF\x24\x00\x00\x00WAVEfmt ".to_vec();
    wav.resize(44, 0);
    assert_eq!(info(&wav, "a.wav", None).kind, Some(AssetType::Audio));
}

#[test]
fn unknown_content_has_mime_and_size_only() {
    let zip = samples::zip_archive(&[("a.txt", b"a")]);
    let got = info(&zip, "bundle.zip", None);
    assert_eq!(
        got,
        FileInfo {
            mime_type: "application/zip".into(),
            file_size: zip.len() as u64,
            kind: None,
            page_count: None,
            word_count: None,
            width: None,
            height: None,
        }
    );
}

#[test]
fn image_samples_have_at_least_one_pixel() {
    for bytes in [samples::png(0, 0), samples::gif(0, 3), samples::webp(3, 0)] {
        let got = info(&bytes, "tiny", Some(AssetType::Image));
        assert!(got.width >= Some(1) && got.height >= Some(1), "{got:?}");
    }
}
