//! Variant parameters, plans and making, on real encoded images.

use std::io::Cursor;

use image::{DynamicImage, GenericImageView, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage};

use super::*;
use crate::extract::{Limits, samples};

fn asked(query: &str) -> Result<Asked, crate::error::ApiError> {
    parse(Some(query), &default_presets())
}

fn field_of(query: &str) -> String {
    match asked(query) {
        Err(crate::error::ApiError::Validation { field, .. }) => field,
        other => panic!("{query}: expected a 400, got {other:?}"),
    }
}

fn encoded(image: DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).expect("encode");
    out.into_inner()
}

fn made(source: &[u8], query: &str, encoding: Encoding) -> Variant {
    make(
        Source::Image(source),
        &asked(query).expect("good parameters").spec,
        encoding,
        &Limits::default(),
    )
    .expect("a variant")
}

fn decoded(v: &Variant) -> DynamicImage {
    let image = image::load_from_memory(&v.bytes).expect("the variant decodes");
    assert_eq!(image.dimensions(), (v.width, v.height));
    image
}

#[test]
fn parameters_read_as_the_design_says() {
    assert_eq!(asked("").unwrap().spec, VariantSpec::default());
    let spec = asked("w=300&h=0200&fit=cover&format=webp&q=55&dpr=2")
        .unwrap()
        .spec;
    assert_eq!(
        spec,
        VariantSpec {
            width: Some(600),
            height: Some(400),
            fit: Fit::Cover,
            format: Format::Webp,
            quality: 55,
        }
    );
    // dpr may have a fraction; the product never passes MAX_SIDE.
    assert_eq!(asked("w=100&dpr=1.5").unwrap().spec.width, Some(150));
    assert_eq!(asked("w=4000&dpr=3").unwrap().spec.width, Some(MAX_SIDE));
    // Parameters of others (a signed link's) are left alone.
    assert!(asked("w=10&expires=1&signature=x&expires_in=60").is_ok());
    let card = asked("preset=card").unwrap();
    assert_eq!(
        (card.spec, card.preset.as_deref()),
        (VariantSpec::cover(640, 400), Some("card"))
    );
}

#[test]
fn bad_parameters_are_400_naming_the_parameter() {
    for (query, field) in [
        ("w=0", "w"),
        ("w=-5", "w"),
        ("w=abc", "w"),
        ("w=4097", "w"),
        ("w=99999999999999999999999", "w"),
        ("w=1.5", "w"),
        ("w=+5", "w"),
        ("w=", "w"),
        ("h=0", "h"),
        ("w=1&w=2", "w"),
        ("fit=fill", "fit"),
        ("format=gif", "format"),
        ("q=0", "q"),
        ("q=101", "q"),
        ("dpr=0.5", "dpr"),
        ("dpr=4", "dpr"),
        ("dpr=2x", "dpr"),
        ("dpr=.5", "dpr"),
        ("preset=huge", "preset"),
        ("preset=card&preset=card", "preset"),
        ("preset=card&w=10", "w"),
        ("format=png&preset=card", "format"),
    ] {
        assert_eq!(field_of(query), field, "{query}");
    }
}

#[test]
fn equal_specs_spell_alike() {
    let a = asked("w=640&h=400&fit=cover").unwrap().spec;
    let b = asked("preset=card").unwrap().spec;
    let c = asked("h=200&w=320&dpr=2&fit=cover&q=80&format=auto")
        .unwrap()
        .spec;
    assert_eq!(a.canonical(), b.canonical());
    assert_eq!(a.canonical(), c.canonical());
    assert_ne!(
        a.canonical(),
        asked("w=640&h=400").unwrap().spec.canonical()
    );
}

#[test]
fn plans_never_scale_up_and_keep_the_box_shape() {
    let inside = |q: &str, w, h| plan(&asked(q).unwrap().spec, w, h);
    assert_eq!(inside("w=400", 800, 600).canvas, (400, 300));
    assert_eq!(inside("h=300", 800, 600).canvas, (400, 300));
    assert_eq!(inside("w=400&h=400", 800, 600).canvas, (400, 300));
    assert_eq!(inside("w=4000", 800, 600).canvas, (800, 600));
    assert_eq!(inside("", 800, 600).canvas, (800, 600));
    // Cover: the box filled from the centre of the source.
    let cover = inside("w=300&h=300&fit=cover", 800, 600);
    assert_eq!(cover.canvas, (300, 300));
    assert_eq!(cover.crop, (100.0, 0.0, 600.0, 600.0));
    // A box larger than the source shrinks to fit it, keeping its shape (2:1 here).
    assert_eq!(
        inside("w=2000&h=1000&fit=cover", 800, 600).canvas,
        (800, 400)
    );
    // Contain: the whole image centred on the box.
    let contain = inside("w=400&h=400&fit=contain", 800, 400);
    assert_eq!(
        (contain.canvas, contain.scaled, contain.offset),
        ((400, 400), (400, 200), (0, 100))
    );
    // A 1 x 50000 strip: at most MAX_SIDE long, at least one pixel wide.
    assert_eq!(inside("w=100", 1, 50_000).canvas, (1, MAX_SIDE));
    assert_eq!(inside("", 50_000, 1).canvas, (MAX_SIDE, 1));
    assert_eq!(inside("h=100", 1, 50_000).canvas, (1, 100));
}

#[test]
fn a_jpeg_resizes_and_keeps_its_colours() {
    let source = encoded(
        DynamicImage::ImageRgb8(RgbImage::from_pixel(800, 600, Rgb([200, 40, 40]))),
        ImageFormat::Jpeg,
    );
    let v = made(&source, "w=400&q=90", Encoding::Jpeg);
    assert_eq!((v.width, v.height, v.encoding), (400, 300, Encoding::Jpeg));
    let px = decoded(&v).to_rgb8().get_pixel(200, 150).0;
    for (got, want) in px.iter().zip([200u8, 40, 40]) {
        assert!(got.abs_diff(want) <= 6, "{px:?}");
    }
}

#[test]
fn transparency_stays_in_png_and_webp_and_goes_white_in_jpeg() {
    let mut rgba = RgbaImage::from_pixel(200, 100, Rgba([0, 0, 255, 255]));
    for x in 0..100 {
        for y in 0..100 {
            rgba.put_pixel(x, y, Rgba([0, 0, 0, 0]));
        }
    }
    let source = encoded(DynamicImage::ImageRgba8(rgba), ImageFormat::Png);
    assert!(has_alpha(&source));
    assert_eq!(Encoding::choose(Format::Auto, false, true), Encoding::Png);
    let png = decoded(&made(&source, "w=100", Encoding::Png)).to_rgba8();
    assert_eq!(png.get_pixel(10, 25).0[3], 0);
    assert_eq!(png.get_pixel(90, 25).0, [0, 0, 255, 255]);
    let webp = decoded(&made(&source, "w=100", Encoding::Webp)).to_rgba8();
    assert_eq!(webp.get_pixel(10, 25).0[3], 0);
    let jpeg = decoded(&made(&source, "w=100", Encoding::Jpeg)).to_rgb8();
    assert!(jpeg.get_pixel(10, 25).0.iter().all(|c| *c > 245));
}

#[test]
fn cover_and_contain_fill_the_box() {
    let source = samples::png(800, 400);
    let cover = made(&source, "w=300&h=300&fit=cover", Encoding::Png);
    assert_eq!((cover.width, cover.height), (300, 300));
    let contain = decoded(&made(&source, "w=300&h=300&fit=contain", Encoding::Png)).to_rgba8();
    assert_eq!(contain.dimensions(), (300, 300));
    // Letterboxed: transparent above and below the 300 x 150 picture.
    assert_eq!(contain.get_pixel(150, 10).0[3], 0);
    assert_eq!(contain.get_pixel(150, 150).0[3], 255);
}

#[test]
fn the_exif_orientation_is_applied() {
    // 300 x 200 stored, turned a quarter (orientation 6): 200 x 300 as displayed.
    let source = samples::jpeg_with_orientation(300, 200, 6);
    let info = crate::extract::extract(
        &source,
        "a.jpg",
        Some(crate::model::AssetType::Image),
        &Limits::default(),
    )
    .expect("an image");
    assert_eq!((info.width, info.height), (Some(200), Some(300)));
    let v = made(&source, "h=150", Encoding::Jpeg);
    assert_eq!((v.width, v.height), (100, 150));
}

#[test]
fn sixteen_bit_and_grey_sources_convert() {
    let deep = DynamicImage::ImageRgb16(image::ImageBuffer::from_pixel(
        64,
        64,
        Rgb([65_535u16, 0, 0]),
    ));
    let v = made(&encoded(deep, ImageFormat::Png), "w=32", Encoding::Jpeg);
    let px = decoded(&v).to_rgb8().get_pixel(16, 16).0;
    assert!(px[0] > 240 && px[1] < 20, "{px:?}");
    let grey = DynamicImage::ImageLuma8(image::GrayImage::from_pixel(64, 64, image::Luma([90])));
    let v = made(&encoded(grey, ImageFormat::Png), "w=32", Encoding::Webp);
    assert_eq!((v.width, v.height), (32, 32));
}

#[test]
fn an_animated_gif_gives_its_first_frame() {
    let frame =
        |c: u8| image::Frame::new(RgbaImage::from_pixel(120, 80, Rgba([c, 0, 255 - c, 255])));
    let mut source = Vec::new();
    {
        let mut encoder = image::codecs::gif::GifEncoder::new_with_speed(&mut source, 30);
        encoder
            .encode_frames((0..50).map(|i| frame(if i == 0 { 250 } else { 5 })))
            .expect("encode");
    }
    let v = made(&source, "w=60", Encoding::Png);
    assert_eq!((v.width, v.height), (60, 40));
    let px = decoded(&v).to_rgb8().get_pixel(30, 20).0;
    assert!(
        px[0] > 200 && px[2] < 50,
        "the first frame (red), got {px:?}"
    );
}

#[test]
fn sources_that_cannot_be_converted_say_why() {
    let limits = Limits::default();
    let spec = VariantSpec::inside(Some(100), None);
    // A JPEG cut after its header gives the variant of what is there.
    let jpeg = samples::jpeg(400, 300);
    let cut = &jpeg[..jpeg.len() / 3];
    let v = make(Source::Image(cut), &spec, Encoding::Jpeg, &limits).expect("a variant");
    assert_eq!((v.width, v.height), (100, 75));
    for (name, bytes) in [
        ("JPEG cut inside its header", jpeg[..120].to_vec()),
        ("not an image", b"hello, world".to_vec()),
        ("empty", Vec::new()),
    ] {
        let got = make(Source::Image(&bytes), &spec, Encoding::Jpeg, &limits);
        assert!(
            matches!(got, Err(TransformError::Unreadable(_))),
            "{name}: {got:?}"
        );
    }
    // A bomb: a small file of far more pixels than the limit; refused from its header.
    let bomb = encoded(
        DynamicImage::ImageLuma8(image::GrayImage::new(4000, 4000)),
        ImageFormat::Png,
    );
    assert!(bomb.len() < 100_000, "{} bytes", bomb.len());
    let small = Limits {
        max_image_pixels: 1_000_000,
        ..Limits::default()
    };
    let got = make(Source::Image(&bomb), &spec, Encoding::Jpeg, &small);
    assert!(matches!(got, Err(TransformError::TooLarge(_))), "{got:?}");
}

#[test]
fn a_pdf_page_is_a_source_of_any_size() {
    let pdf = bytes::Bytes::from(samples::pdf(2, 100));
    let limits = Limits {
        pdf_renderer: crate::extract::PdfRenderer::InProcess,
        ..Limits::default()
    };
    let spec = asked("w=1000").unwrap().spec;
    let v = make(Source::Pdf(&pdf), &spec, Encoding::Png, &limits).expect("rendered");
    // US Letter, 612 x 792 pt: 1000 wide is 1294 high.
    assert_eq!((v.width, v.height), (1000, 1294));
    let card = asked("preset=card").unwrap().spec;
    let v = make(Source::Pdf(&pdf), &card, Encoding::Jpeg, &limits).expect("rendered");
    assert_eq!((v.width, v.height), (640, 400));
    let broken = bytes::Bytes::from_static(b"%PDF-1.7\n%%EOF");
    let got = make(Source::Pdf(&broken), &spec, Encoding::Png, &limits);
    assert!(matches!(got, Err(TransformError::Unrenderable)), "{got:?}");
}

/// The mean difference of two pictures of one size, per channel value.
fn mean_difference(a: &RgbImage, b: &RgbImage) -> f64 {
    assert_eq!(a.dimensions(), b.dimensions());
    let total: u64 = a
        .as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| u64::from(x.abs_diff(*y)))
        .sum();
    total as f64 / a.as_raw().len() as f64
}

#[test]
fn a_jpeg_shrunk_a_lot_is_decoded_small_and_lines_up_with_a_whole_decode() {
    // A detailed picture (stripes a few pixels wide) of an odd size: decoded at half size its
    // last column holds half a pixel of picture, and a variant stretched or shifted by a
    // fraction of a pixel differs from one of the whole picture. The same pixels as a PNG
    // are decoded whole.
    let picture = RgbImage::from_fn(1001, 751, |x, y| {
        let stripe = if (x / 3 + y / 7) % 2 == 0 { 30 } else { 220 };
        Rgb([stripe, ((x * 255) / 1000) as u8, ((y * 255) / 750) as u8])
    });
    let jpeg = {
        let mut out = Vec::new();
        jpeg_encoder::Encoder::new(&mut out, 100)
            .encode(picture.as_raw(), 1001, 751, jpeg_encoder::ColorType::Rgb)
            .expect("encode");
        out
    };
    let png = encoded(DynamicImage::ImageRgb8(picture), ImageFormat::Png);
    // An eighth is each block's average (its DC coefficient): a box filter, which keeps a
    // little of the stripes' aliasing.
    let cases = [
        ("w=260&format=png", 2, 1.0),
        ("w=130&format=png", 4, 1.0),
        ("w=120&format=png", 8, 2.5),
    ];
    for (query, shrink, most) in cases {
        let spec = asked(query).expect("good parameters").spec;
        if cfg!(feature = "jpeg-turbo") {
            assert_eq!(transform::shrink_on_load(&spec, (1001, 751)), shrink);
        }
        let from_jpeg = decoded(&made(&jpeg, query, Encoding::Png)).to_rgb8();
        let from_png = decoded(&made(&png, query, Encoding::Png)).to_rgb8();
        let mean = mean_difference(&from_jpeg, &from_png);
        assert!(mean < most, "{query}: mean difference {mean}");
    }
}

#[test]
fn a_cmyk_jpeg_converts() {
    // No ink is white; full black ink is black.
    let mut cmyk = Vec::new();
    for y in 0..64u32 {
        for _ in 0..64u32 {
            cmyk.extend_from_slice(if y < 32 {
                &[0, 0, 0, 0]
            } else {
                &[0, 0, 0, 255]
            });
        }
    }
    let mut source = Vec::new();
    jpeg_encoder::Encoder::new(&mut source, 95)
        .encode(&cmyk, 64, 64, jpeg_encoder::ColorType::Cmyk)
        .expect("encode");
    let v = decoded(&made(&source, "w=32", Encoding::Png)).to_rgb8();
    assert_eq!(v.dimensions(), (32, 32));
    let (top, bottom) = (v.get_pixel(16, 4).0, v.get_pixel(16, 28).0);
    assert!(top.iter().all(|c| *c > 230), "white: {top:?}");
    assert!(bottom.iter().all(|c| *c < 40), "black: {bottom:?}");
}

#[test]
fn an_icc_profile_stays_with_the_picture() {
    // A profile of some bytes: kept as they are, whatever they say.
    let profile: Vec<u8> = (0..600u32).map(|i| (i % 251) as u8).collect();
    let mut source = Vec::new();
    {
        let mut encoder = image::codecs::png::PngEncoder::new(&mut source);
        image::ImageEncoder::set_icc_profile(&mut encoder, profile.clone()).expect("a profile");
        let picture = RgbImage::from_pixel(200, 100, Rgb([10, 120, 240]));
        image::ImageEncoder::write_image(
            encoder,
            picture.as_raw(),
            200,
            100,
            image::ExtendedColorType::Rgb8,
        )
        .expect("encode");
    }
    for encoding in [Encoding::Jpeg, Encoding::Png] {
        let v = made(&source, "w=100", encoding);
        let mut decoder = image::ImageReader::new(Cursor::new(&v.bytes))
            .with_guessed_format()
            .expect("a format")
            .into_decoder()
            .expect("a decoder");
        use image::ImageDecoder as _;
        assert_eq!(
            decoder.icc_profile().expect("read").as_deref(),
            Some(profile.as_slice()),
            "{encoding:?}"
        );
    }
}
