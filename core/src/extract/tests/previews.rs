//! Thumbnails of every type that carries a picture, their placeholders, and what audio files
//! play.

use base64::Engine as _;
use image::GenericImageView;

use super::*;

/// Decodes a thumbnail, checking that its bytes are the image its fields say.
fn decoded(t: &super::super::Thumbnail) -> image::DynamicImage {
    let image = image::load_from_memory(&t.bytes).expect("a thumbnail decodes");
    assert_eq!(image.dimensions(), (t.width, t.height));
    image
}

/// The placeholder decodes as a ThumbHash whose aspect ratio is the thumbnail's.
fn check_placeholder(t: &super::super::Thumbnail) {
    let hash = base64::engine::general_purpose::STANDARD
        .decode(&t.placeholder)
        .expect("base64");
    assert!(
        (5..=25).contains(&hash.len()),
        "a ThumbHash is 5-25 bytes, got {}",
        hash.len()
    );
    let ratio = thumbhash::thumb_hash_to_approximate_aspect_ratio(&hash).expect("a ThumbHash");
    #[allow(clippy::cast_precision_loss)]
    let actual = t.width as f32 / t.height as f32;
    assert!(
        (ratio / actual - 1.0).abs() < 0.25,
        "placeholder ratio {ratio} vs thumbnail {actual}"
    );
}

#[test]
fn a_pdf_gets_its_first_page_at_320_px_on_the_long_side() {
    let pdf = samples::pdf(3, 200);
    let t = thumbnail(&pdf, 320, &limits())
        .expect("no error")
        .expect("a PDF thumbnail");
    assert_eq!(t.mime_type, "image/png");
    // samples::pdf pages are US Letter (612 x 792 pt): portrait.
    assert_eq!(t.height, 320);
    // The short side rounded up, as `pdftoppm -scale-to 320` makes it (247.3 -> 248).
    assert_eq!(t.width, 248);
    let image = decoded(&t).to_rgb8();
    // White paper with dark text on it: most pixels white, some clearly dark.
    let dark = image
        .pixels()
        .filter(|p| p.0.iter().all(|c| *c < 128))
        .count();
    let white = image.pixels().filter(|p| p.0 == [255, 255, 255]).count();
    let all = image.pixels().count();
    assert!(white * 2 > all, "{white} of {all} white");
    assert!(dark > 50, "text drawn: {dark} dark pixels");
    check_placeholder(&t);
}

/// Page 1 of a real PDF (small text in embedded fonts) against what `pdftoppm` makes of it
/// (`testdata/pdf/make.sh`): the same size, and the same pixels but for anti-aliasing
/// shades. Drawn where `hayro` alone puts glyphs, small text sits a pixel off on many lines:
/// hundreds of pixels then differ by more than a quarter of the range.
#[test]
fn a_pdf_thumbnail_matches_pdftoppm() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/pdf");
    let pdf = std::fs::read(dir.join("ltnews18.pdf")).expect("the committed PDF");
    let reference = image::open(dir.join("ltnews18-pdftoppm.png"))
        .expect("the committed reference")
        .to_luma8();
    let t = thumbnail(&pdf, 320, &limits())
        .expect("no error")
        .expect("a PDF thumbnail");
    let ours = decoded(&t).to_luma8();
    assert_eq!(ours.dimensions(), reference.dimensions());
    let differences: Vec<u8> = ours
        .pixels()
        .zip(reference.pixels())
        .map(|(a, b)| a.0[0].abs_diff(b.0[0]))
        .collect();
    let far = differences.iter().filter(|d| **d > 64).count();
    #[allow(clippy::cast_precision_loss)]
    let mean = differences.iter().map(|d| f64::from(*d)).sum::<f64>() / differences.len() as f64;
    assert_eq!(far, 0, "pixels more than 64 apart from pdftoppm's");
    assert!(mean < 0.25, "mean difference {mean}");
}

/// A page dark to its edges is dark to the thumbnail's edges: the last row too, although the
/// page is drawn half a pixel up.
#[test]
fn a_page_dark_to_its_edge_is_dark_in_the_last_row() {
    use lopdf::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages = doc.new_object_id();
    let content = doc.add_object(Stream::new(
        dictionary! {},
        b"0.2 0.2 0.2 rg 0 0 612 792 re f".to_vec(),
    ));
    let page = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages, "Contents" => content,
    });
    doc.objects.insert(
        pages,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages });
    doc.trailer.set("Root", catalog);
    let mut pdf = Vec::new();
    doc.save_to(&mut pdf).expect("write");
    let t = thumbnail(&pdf, 320, &limits()).unwrap().expect("rendered");
    let image = decoded(&t).to_luma8();
    let (w, h) = image.dimensions();
    for (name, y) in [("first", 0), ("middle", h / 2), ("last", h - 1)] {
        let row: Vec<u8> = (0..w - 1).map(|x| image.get_pixel(x, y).0[0]).collect();
        assert!(
            row.iter().all(|v| v.abs_diff(51) <= 2),
            "{name} row is the page's grey: {row:?}"
        );
    }
}

#[test]
fn a_blank_pdf_page_is_white() {
    let pdf = samples::pdf(1, 0);
    let t = thumbnail(&pdf, 100, &limits()).unwrap().expect("rendered");
    assert_eq!(t.height, 100);
    let image = decoded(&t).to_rgb8();
    assert!(image.pixels().all(|p| p.0 == [255, 255, 255]));
}

#[test]
fn unreadable_pdfs_get_no_thumbnail_and_no_error() {
    let mut truncated = samples::pdf(2, 30);
    truncated.truncate(truncated.len() / 3);
    for (name, pdf) in [
        ("truncated", truncated),
        ("deep arrays", samples::pdf_deep_arrays(100_000)),
        ("header only", b"%PDF-1.7\n".to_vec()),
    ] {
        let got = thumbnail(&pdf, 320, &limits());
        assert!(matches!(got, Ok(None)), "{name}: {got:?}");
    }
    // Page trees the counts refuse are not rendered either: one rule for both.
    for (name, pdf) in [
        ("deep page tree", samples::pdf_deep_page_tree(100_000)),
        ("page tree loop", samples::pdf_page_tree_loop()),
    ] {
        let got = thumbnail(&pdf, 320, &limits());
        assert!(matches!(got, Ok(None)), "{name}: {got:?}");
        assert_eq!(info(&pdf, "a.pdf", None).page_count, None, "{name}");
    }
}

#[test]
fn preview_gives_what_extract_and_thumbnail_give_apart() {
    let wav = samples::wav(1_000, 8_000, 1, Some(&samples::jpeg(90, 60)));
    let docx = samples::with_embedded_thumbnail(&samples::docx(&["Hi."]), &samples::png(60, 80));
    let cases: [(&str, Vec<u8>, Option<AssetType>); 6] = [
        ("a.pdf", samples::pdf(3, 20), Some(AssetType::Pdf)),
        ("b.png", samples::png(640, 480), None),
        ("c.wav", wav, Some(AssetType::Audio)),
        ("d.docx", docx, Some(AssetType::Document)),
        ("e.txt", b"plain words here".to_vec(), None),
        ("f.pdf", samples::pdf_deep_page_tree(100_000), None),
    ];
    for (name, bytes, declared) in cases {
        let (got, thumb) =
            super::super::preview(&bytes.clone().into(), name, declared, 320, &limits())
                .expect("readable");
        assert_eq!(got, info(&bytes, name, declared), "{name}");
        let apart = thumbnail(&bytes, 320, &limits()).expect("no error");
        assert_eq!(thumb.expect("no error"), apart, "{name}");
    }
    // A video's thumbnail is never made from its bytes.
    let video = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/media/vp9.webm"
    ))
    .expect("the media corpus");
    let (got, thumb) =
        super::super::preview(&video.into(), "v.webm", None, 320, &limits()).expect("readable");
    assert_eq!(
        (got.kind, thumb.ok().flatten()),
        (Some(AssetType::Video), None)
    );
}

#[test]
fn an_image_thumbnail_has_a_placeholder_too() {
    for (name, bytes) in [
        ("png", samples::png(640, 480)),
        ("jpeg", samples::jpeg(300, 900)),
        ("tiny png", samples::png(3, 2)),
    ] {
        let t = thumbnail(&bytes, 320, &limits()).unwrap().expect(name);
        decoded(&t);
        check_placeholder(&t);
    }
}

#[test]
fn the_same_picture_gives_the_same_placeholder() {
    let a = thumbnail(&samples::png(640, 480), 320, &limits())
        .unwrap()
        .unwrap();
    let b = thumbnail(&samples::png(640, 480), 320, &limits())
        .unwrap()
        .unwrap();
    let other = thumbnail(&samples::png(480, 640), 320, &limits())
        .unwrap()
        .unwrap();
    assert_eq!(a.placeholder, b.placeholder);
    assert_ne!(a.placeholder, other.placeholder);
}

#[test]
fn a_wav_gives_duration_rate_channels_and_bitrate() {
    let wav = samples::wav(2_500, 22_050, 2, None);
    let info = info(&wav, "tone.wav", Some(AssetType::Audio));
    assert_eq!(info.media.duration_ms, Some(2_500));
    assert_eq!(info.media.sample_rate, Some(22_050));
    assert_eq!(info.media.channels, Some(2));
    // 16-bit PCM: rate x channels x 16 bits, in whole kilobits per second.
    assert_eq!(
        info.media.bitrate,
        Some((22_050 * 2 * 16 + 500) / 1000 * 1000)
    );
    assert_eq!(info.media.video_codec, None);
    assert!(matches!(thumbnail(&wav, 320, &limits()), Ok(None)));
}

#[test]
fn an_audio_files_cover_art_is_its_thumbnail() {
    let cover = samples::png(600, 600);
    let wav = samples::wav(1_000, 8_000, 1, Some(&cover));
    let info = info(&wav, "song.wav", Some(AssetType::Audio));
    assert_eq!(info.media.duration_ms, Some(1_000));
    let t = thumbnail(&wav, 320, &limits()).unwrap().expect("the cover");
    assert_eq!((t.width, t.height), (320, 320));
    assert_eq!(t.mime_type, "image/png");
    check_placeholder(&t);
}

#[test]
fn a_cover_past_the_pixel_limit_is_refused_not_decoded() {
    let wav = samples::wav(100, 8_000, 1, Some(&samples::png(400, 300)));
    let mut small = limits();
    small.max_image_pixels = 100_000;
    let got = thumbnail(&wav, 320, &small);
    assert!(
        matches!(got, Err(ExtractError::LimitExceeded { .. })),
        "{got:?}"
    );
}

#[test]
fn unreadable_audio_has_no_facts() {
    let mut wav = samples::wav(1_000, 8_000, 1, None);
    wav.truncate(20);
    let info = info(&wav, "cut.wav", Some(AssetType::Audio));
    assert_eq!(info.media, crate::model::Media::default());
}

#[test]
fn documents_give_the_thumbnail_they_carry() {
    let docx = samples::with_embedded_thumbnail(
        &samples::docx(&["Hello there."]),
        &samples::jpeg(200, 283),
    );
    let odt =
        samples::with_embedded_thumbnail(&samples::odt(&["Hello there."]), &samples::png(181, 256));
    for (name, bytes, mime, size) in [
        ("docx", &docx, "image/jpeg", (200, 283)),
        ("odt", &odt, "image/png", (181, 256)),
    ] {
        let t = thumbnail(bytes, 320, &limits()).unwrap().expect(name);
        assert_eq!(t.mime_type, mime, "{name}");
        assert_eq!((t.width, t.height), size, "{name}: never enlarged");
        check_placeholder(&t);
        // The words are still counted.
        assert_eq!(
            info(bytes, "doc", Some(AssetType::Document)).word_count,
            Some(2)
        );
    }
    let plain = samples::docx(&["No picture."]);
    assert!(matches!(thumbnail(&plain, 320, &limits()), Ok(None)));
}
