//! Small real files made in code: for tests, and for the ready server's demo data.
//!
//! Every function returns the bytes of a complete file that common viewers open. The text of
//! the documents is made of plain words (`asset`, `library`, ...), so word counts are exactly
//! what the arguments say. Image sides of 0 are made 1; sides beyond what a format can hold
//! (65 535 for GIF, JPEG and WebP) panic, as these are for tests and demo data.
//!
//! ```
//! use assetlib_core::extract::{samples, sniff};
//! assert_eq!(sniff(&samples::docx(&["Hello world"]), "a.docx").mime_type,
//!     "application/vnd.openxmlformats-officedocument.wordprocessingml.document");
//! ```

use std::io::{Cursor, Write};

use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};
use zip::write::SimpleFileOptions;

mod hostile;
mod runaway;

/// The words the sample documents are written with.
const WORDS: [&str; 12] = [
    "asset", "library", "brand", "design", "guide", "logo", "colour", "print", "screen", "photo",
    "layout", "type",
];

/// The `i`-th sample word.
fn word(i: usize) -> &'static str {
    WORDS[i % WORDS.len()]
}

/// `count` sample words, separated by single spaces.
pub fn sentence(count: usize) -> String {
    (0..count).map(word).collect::<Vec<_>>().join(" ")
}

/// A PDF of `pages` US-letter pages with `words_per_page` words each, set in Helvetica, ten
/// words to a line, with compressed content streams.
///
/// ```
/// let pdf = assetlib_core::extract::samples::pdf(2, 20);
/// assert!(pdf.starts_with(b"%PDF-1.5"));
/// ```
pub fn pdf(pages: usize, words_per_page: usize) -> Vec<u8> {
    let mut doc = build_pdf(pages, words_per_page);
    let mut out = Vec::new();
    doc.save_to(&mut out)
        .expect("writing a PDF to memory does not fail");
    out
}

/// A PDF as [`pdf`] makes, with `filler` more bytes that no page shows (an incompressible
/// stream the catalog names, standing for the pictures of a print catalogue), saved with
/// object streams and a cross-reference stream: a large file whose text is small.
///
/// ```
/// let pdf = assetlib_core::extract::samples::pdf_with_filler(2, 10, 1 << 20);
/// assert!(pdf.len() > 1 << 20);
/// ```
pub fn pdf_with_filler(pages: usize, words_per_page: usize, filler: usize) -> Vec<u8> {
    let mut doc = build_pdf(pages, words_per_page);
    let noise = noise(filler);
    let filler_id = doc.add_object(Stream::new(dictionary! {}, noise));
    if let Ok(root) = doc.trailer.get(b"Root").and_then(Object::as_reference)
        && let Ok(catalog) = doc.get_dictionary_mut(root)
    {
        catalog.set("AssetlibFiller", filler_id);
    }
    let mut out = Vec::new();
    doc.save_modern(&mut out)
        .expect("writing a PDF to memory does not fail");
    out
}

/// `len` bytes that do not compress (a linear congruential sequence's high bytes).
pub fn noise(len: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_u32;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        })
        .collect()
}

/// The document [`pdf`] writes, for tests that save it differently.
pub(super) fn build_pdf(pages: usize, words_per_page: usize) -> Document {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids = Vec::with_capacity(pages);
    for page in 0..pages {
        let mut operations = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 11.into()]),
            Operation::new("TL", vec![14.into()]),
            Operation::new("Td", vec![72.into(), 720.into()]),
        ];
        let first = page * words_per_page;
        let line: Vec<&str> = (first..first + words_per_page).map(word).collect();
        for chunk in line.chunks(10) {
            operations.push(Operation::new(
                "Tj",
                vec![Object::string_literal(chunk.join(" "))],
            ));
            operations.push(Operation::new("T*", vec![]));
        }
        operations.push(Operation::new("ET", vec![]));
        let content = Content { operations }
            .encode()
            .expect("encoding page content does not fail");
        let mut stream = Stream::new(dictionary! {}, content);
        // Compressing can only fail on a stream that is already filtered.
        let _ = stream.compress();
        let content_id = doc.add_object(stream);
        kids.push(Object::from(doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
        })));
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => i64::try_from(pages).unwrap_or(i64::MAX),
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! {
        "Type" => "Catalog",
        "Pages" => pages_id,
    });
    doc.trailer.set("Root", catalog_id);
    doc
}

/// Pages a sample document claims: one for every 250 words, at least one.
pub fn pages_for(words: usize) -> usize {
    words.div_ceil(250).max(1)
}

/// A DOCX with one paragraph per string, and `docProps/app.xml` giving
/// [`pages_for`] its words as `<Pages>` (as Word saves it).
///
/// ```
/// let docx = assetlib_core::extract::samples::docx(&["First paragraph.", "Second one."]);
/// assert!(docx.starts_with(b"PK"));
/// ```
pub fn docx(paragraphs: &[&str]) -> Vec<u8> {
    let words: usize = paragraphs
        .iter()
        .map(|p| p.split_whitespace().count())
        .sum();
    let body: String = paragraphs
        .iter()
        .map(|p| {
            format!(
                r#"<w:p><w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>"#,
                escape(p)
            )
        })
        .collect();
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}<w:sectPr/></w:body></w:document>"#
    );
    let app = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Application>assetlib</Application><Pages>{}</Pages><Words>{words}</Words></Properties>"#,
        pages_for(words)
    );
    zip_archive(&[
        ("[Content_Types].xml", DOCX_CONTENT_TYPES.as_bytes()),
        ("_rels/.rels", DOCX_RELS.as_bytes()),
        ("word/document.xml", document.as_bytes()),
        ("docProps/app.xml", app.as_bytes()),
    ])
}

const DOCX_CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/></Types>"#;

const DOCX_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/></Relationships>"#;

/// An ODT with one paragraph per string, and `meta.xml` statistics giving [`pages_for`] its
/// words as the page count and its words as the word count (as LibreOffice saves them).
///
/// ```
/// let odt = assetlib_core::extract::samples::odt(&["One paragraph."]);
/// assert_eq!(&odt[30..38], b"mimetype");
/// ```
pub fn odt(paragraphs: &[&str]) -> Vec<u8> {
    let words: usize = paragraphs
        .iter()
        .map(|p| p.split_whitespace().count())
        .sum();
    let statistic = format!(
        r#"<meta:document-statistic meta:page-count="{}" meta:paragraph-count="{}" meta:word-count="{words}"/>"#,
        pages_for(words),
        paragraphs.len()
    );
    odt_with(paragraphs, &statistic)
}

/// An ODT whose `meta.xml` holds `statistic` (an element, or nothing) in `office:meta`.
pub(super) fn odt_with(paragraphs: &[&str], statistic: &str) -> Vec<u8> {
    let body: String = paragraphs
        .iter()
        .map(|p| format!("<text:p>{}</text:p>", escape(p)))
        .collect();
    let content = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3"><office:body><office:text>{body}</office:text></office:body></office:document-content>"#
    );
    let meta = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" office:version="1.3"><office:meta><meta:generator>assetlib</meta:generator>{statistic}</office:meta></office:document-meta>"#
    );
    zip_archive(&[
        ("mimetype", super::sniff::ODT.as_bytes()),
        ("META-INF/manifest.xml", ODT_MANIFEST.as_bytes()),
        ("content.xml", content.as_bytes()),
        ("meta.xml", meta.as_bytes()),
    ])
}

const ODT_MANIFEST: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/><manifest:file-entry manifest:full-path="meta.xml" manifest:media-type="text/xml"/></manifest:manifest>"#;

/// A PPTX with one slide per string (a title shape holding it), listed in
/// `ppt/presentation.xml` in reverse part order (`slide1.xml` is shown last), as a deck whose
/// slides were moved is saved.
///
/// ```
/// let pptx = assetlib_core::extract::samples::pptx(&["Intro", "Results"]);
/// assert!(pptx.starts_with(b"PK"));
/// ```
pub fn pptx(slides: &[&str]) -> Vec<u8> {
    let n = slides.len();
    // Shown slide i is part slide{n - i}.xml, relationship rId{n - i + 1}.
    let list: String = (0..n)
        .map(|i| format!(r#"<p:sldId id="{}" r:id="rId{}"/>"#, 256 + i, n - i + 1))
        .collect();
    let rels: String = (1..=n)
        .map(|k| {
            format!(
                r#"<Relationship Id="rId{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide{k}.xml"/>"#,
                k + 1
            )
        })
        .collect();
    let presentation = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<p:presentation xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst><p:sldIdLst>{list}</p:sldIdLst><p:sldSz cx="12192000" cy="6858000"/></p:presentation>"#
    );
    let rels = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slideMaster" Target="slideMasters/slideMaster1.xml"/>{rels}</Relationships>"#
    );
    let slide_xml: Vec<String> = (1..=n)
        .map(|k| {
            let text = escape(slides[n - k]);
            format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:cSld><p:spTree><p:sp><p:nvSpPr><p:cNvPr id="2" name="Title 1"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:p><a:r><a:rPr lang="en-US"/><a:t>{text}</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"#
            )
        })
        .collect();
    let names: Vec<String> = (1..=n)
        .map(|k| format!("ppt/slides/slide{k}.xml"))
        .collect();
    let mut parts: Vec<(&str, &[u8])> = vec![
        ("[Content_Types].xml", PPTX_CONTENT_TYPES.as_bytes()),
        ("ppt/presentation.xml", presentation.as_bytes()),
        ("ppt/_rels/presentation.xml.rels", rels.as_bytes()),
    ];
    parts.extend(
        names
            .iter()
            .zip(&slide_xml)
            .map(|(name, xml)| (name.as_str(), xml.as_bytes())),
    );
    zip_archive(&parts)
}

const PPTX_CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/></Types>"#;

/// An ODP with one slide (`draw:page`) per string, each with a speaker note that is not
/// counted.
///
/// ```
/// let odp = assetlib_core::extract::samples::odp(&["Intro", "Results"]);
/// assert_eq!(&odp[30..38], b"mimetype");
/// ```
pub fn odp(slides: &[&str]) -> Vec<u8> {
    let pages: String = slides
        .iter()
        .enumerate()
        .map(|(i, text)| {
            format!(
                r#"<draw:page draw:name="page{}"><draw:frame><draw:text-box><text:p>{}</text:p></draw:text-box></draw:frame><presentation:notes><draw:frame><draw:text-box><text:p>speaker notes</text:p></draw:text-box></draw:frame></presentation:notes></draw:page>"#,
                i + 1,
                escape(text)
            )
        })
        .collect();
    let content = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" office:version="1.3"><office:body><office:presentation>{pages}</office:presentation></office:body></office:document-content>"#
    );
    zip_archive(&[
        ("mimetype", super::sniff::ODP.as_bytes()),
        ("content.xml", content.as_bytes()),
    ])
}

/// A zip archive of the given parts: `mimetype` stored (as ODF asks), the rest deflated.
pub(super) fn zip_archive(parts: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, data) in parts {
        let method = if *name == "mimetype" {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        writer
            .start_file(
                *name,
                SimpleFileOptions::default().compression_method(method),
            )
            .and_then(|()| writer.write_all(data).map_err(Into::into))
            .expect("writing a zip archive to memory does not fail");
    }
    writer
        .finish()
        .expect("writing a zip archive to memory does not fail")
        .into_inner()
}

/// Escapes text for XML content.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A colourful test picture of `width` x `height` pixels (at least one each): a gradient with
/// a dark band along the top, so orientation shows.
fn picture(width: u32, height: u32) -> RgbImage {
    let (width, height) = (width.max(1), height.max(1));
    RgbImage::from_fn(width, height, |x, y| {
        if y < height / 8 {
            return Rgb([20, 30, 60]);
        }
        let r = u8::try_from(x * 255 / width.max(1)).unwrap_or(255);
        let g = u8::try_from(y * 255 / height.max(1)).unwrap_or(255);
        Rgb([r, g, 160])
    })
}

fn encode(image: DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image
        .write_to(&mut out, format)
        .expect("encoding an image to memory does not fail");
    out.into_inner()
}

/// A PNG of `width` x `height` pixels.
pub fn png(width: u32, height: u32) -> Vec<u8> {
    encode(
        DynamicImage::ImageRgb8(picture(width, height)),
        ImageFormat::Png,
    )
}

/// A baseline JPEG of `width` x `height` pixels.
pub fn jpeg(width: u32, height: u32) -> Vec<u8> {
    encode(
        DynamicImage::ImageRgb8(picture(width, height)),
        ImageFormat::Jpeg,
    )
}

/// A GIF of `width` x `height` pixels.
pub fn gif(width: u32, height: u32) -> Vec<u8> {
    let rgba = DynamicImage::ImageRgb8(picture(width, height)).to_rgba8();
    let mut out = Vec::new();
    // The fastest palette search: the picture is a smooth gradient.
    image::codecs::gif::GifEncoder::new_with_speed(&mut out, 30)
        .encode(
            &rgba,
            rgba.width(),
            rgba.height(),
            image::ExtendedColorType::Rgba8,
        )
        .expect("encoding an image to memory does not fail");
    out
}

/// A lossless WebP of `width` x `height` pixels.
pub fn webp(width: u32, height: u32) -> Vec<u8> {
    encode(
        DynamicImage::ImageRgb8(picture(width, height)),
        ImageFormat::WebP,
    )
}

/// A JPEG of `width` x `height` stored pixels with an EXIF orientation tag (1-8). With
/// orientation 6 (turn a quarter clockwise to view), it displays as `height` x `width`.
pub fn jpeg_with_orientation(width: u32, height: u32, orientation: u16) -> Vec<u8> {
    let jpeg = jpeg(width, height);
    // EXIF in an APP1 segment: a big-endian TIFF header and one IFD with the orientation tag.
    let mut tiff = Vec::new();
    tiff.extend_from_slice(b"MM\0\x2A\0\0\0\x08"); // byte order, magic, IFD at 8
    tiff.extend_from_slice(&1u16.to_be_bytes()); // one entry
    tiff.extend_from_slice(&0x0112u16.to_be_bytes()); // Orientation
    tiff.extend_from_slice(&3u16.to_be_bytes()); // SHORT
    tiff.extend_from_slice(&1u32.to_be_bytes()); // one value
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]); // padding of the value field
    tiff.extend_from_slice(&0u32.to_be_bytes()); // no next IFD
    let mut app1 = vec![0xFF, 0xE1];
    let length = u16::try_from(2 + 6 + tiff.len()).unwrap_or(u16::MAX);
    app1.extend_from_slice(&length.to_be_bytes());
    app1.extend_from_slice(b"Exif\0\0");
    app1.extend_from_slice(&tiff);
    // Right after the start-of-image marker, where EXIF belongs.
    let mut out = Vec::with_capacity(jpeg.len() + app1.len());
    out.extend_from_slice(&jpeg[..2]);
    out.extend_from_slice(&app1);
    out.extend_from_slice(&jpeg[2..]);
    out
}

pub use hostile::*;
pub use runaway::*;

/// `archive` (a DOCX or ODT from [`docx`] or [`odt`]) with `picture` added as the thumbnail
/// its writer keeps: `Thumbnails/thumbnail.png` in an ODT, `docProps/thumbnail.jpeg` in
/// anything else.
pub fn with_embedded_thumbnail(archive: &[u8], picture: &[u8]) -> Vec<u8> {
    let mut zip = zip::ZipArchive::new(Cursor::new(archive)).expect("an archive made here");
    let odt = zip.by_name("mimetype").is_ok();
    let mut parts: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..zip.len() {
        let mut part = zip.by_index(i).expect("a part");
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut part, &mut bytes).expect("inflate");
        parts.push((part.name().to_owned(), bytes));
    }
    let name = if odt {
        "Thumbnails/thumbnail.png"
    } else {
        "docProps/thumbnail.jpeg"
    };
    parts.push((name.to_owned(), picture.to_vec()));
    let borrowed: Vec<(&str, &[u8])> = parts
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    zip_archive(&borrowed)
}

/// An ID3v2.3 tag holding `cover` (a PNG or JPEG) as the front cover (an `APIC` frame).
pub fn id3_with_cover(cover: &[u8]) -> Vec<u8> {
    let mime: &[u8] = if cover.starts_with(b"\x89PNG") {
        b"image/png"
    } else {
        b"image/jpeg"
    };
    let mut body = vec![0u8]; // ISO-8859-1 text
    body.extend_from_slice(mime);
    body.extend_from_slice(&[0, 3, 0]); // end of MIME type, front cover, empty description
    body.extend_from_slice(cover);
    let mut frame = b"APIC".to_vec();
    frame.extend_from_slice(&u32::try_from(body.len()).expect("small").to_be_bytes());
    frame.extend_from_slice(&[0, 0]);
    frame.extend_from_slice(&body);
    let size = u32::try_from(frame.len()).expect("small");
    // The tag size is "synchsafe": 7 bits per byte.
    let synchsafe = [
        ((size >> 21) & 0x7f) as u8,
        ((size >> 14) & 0x7f) as u8,
        ((size >> 7) & 0x7f) as u8,
        (size & 0x7f) as u8,
    ];
    let mut tag = b"ID3\x03\x00\x00".to_vec();
    tag.extend_from_slice(&synchsafe);
    tag.extend_from_slice(&frame);
    tag
}

/// A WAV of 16-bit PCM silence: `millis` milliseconds at `sample_rate` Hz on `channels`
/// channels, with an `id3 ` chunk holding `cover` as the front cover when given.
pub fn wav(millis: u32, sample_rate: u32, channels: u16, cover: Option<&[u8]>) -> Vec<u8> {
    let frames = u64::from(sample_rate) * u64::from(millis) / 1000;
    let block = u32::from(channels) * 2;
    let data_len = u32::try_from(frames).expect("small") * block;
    let mut fmt = Vec::new();
    fmt.extend_from_slice(&1u16.to_le_bytes()); // PCM
    fmt.extend_from_slice(&channels.to_le_bytes());
    fmt.extend_from_slice(&sample_rate.to_le_bytes());
    fmt.extend_from_slice(&(sample_rate * block).to_le_bytes());
    fmt.extend_from_slice(&u16::try_from(block).expect("small").to_le_bytes());
    fmt.extend_from_slice(&16u16.to_le_bytes());
    let mut chunks = Vec::new();
    let mut chunk = |id: &[u8; 4], body: &[u8]| {
        chunks.extend_from_slice(id);
        chunks.extend_from_slice(&u32::try_from(body.len()).expect("small").to_le_bytes());
        chunks.extend_from_slice(body);
        if body.len() % 2 == 1 {
            chunks.push(0);
        }
    };
    chunk(b"fmt ", &fmt);
    chunk(b"data", &vec![0u8; data_len as usize]);
    if let Some(cover) = cover {
        chunk(b"id3 ", &id3_with_cover(cover));
    }
    let mut out = b"RIFF".to_vec();
    out.extend_from_slice(&(u32::try_from(chunks.len()).expect("small") + 4).to_le_bytes());
    out.extend_from_slice(b"WAVE");
    out.extend_from_slice(&chunks);
    out
}
