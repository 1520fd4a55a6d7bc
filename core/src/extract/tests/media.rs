//! Images, types and sniffing.

use super::*;

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
                media: crate::model::Media::default(),
                text: None,
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
fn thumbnail_of_files_without_a_picture_is_none_and_huge_images_are_refused() {
    assert!(
        thumbnail(
            br#"<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>"#,
            320,
            &limits()
        )
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
    assert_eq!(
        (html.mime_type, html.kind),
        ("text/html", Some(AssetType::Document))
    );
    let pptx = sniff(&samples::pptx(&["x"]), "deck.zip");
    assert_eq!(
        (pptx.mime_type, pptx.kind),
        (super::sniff::PPTX, Some(AssetType::Document))
    );
    let odp = sniff(&samples::odp(&["x"]), "deck.pptx");
    assert_eq!(
        (odp.mime_type, odp.kind),
        (super::sniff::ODP, Some(AssetType::Document))
    );
    let xml = sniff(b"<?xml version=\"1.0\"?><feed/>", "feed.md");
    assert_eq!(xml.kind, None, "XML is text, not a document");
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
            media: crate::model::Media::default(),
            text: None,
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
