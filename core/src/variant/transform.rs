//! Making a variant: decode (within the limits, EXIF orientation applied), crop and resize
//! (Lanczos3, `fast_image_resize`), encode (JPEG with `jpeg-encoder`, PNG with the `image`
//! crate, WebP with libwebp under the `webp-lossy` feature). An ICC profile of the source is
//! kept in a JPEG or PNG variant, so colours stay as the source shows them.
//!
//! A JPEG shrunk to a half or less is decoded at a reduced size (libjpeg-turbo's scaled IDCT:
//! a half, a quarter or an eighth, under the `jpeg-turbo` feature), as sharp's shrink-on-load
//! does: less work, and a quarter of the memory or less. A JPEG that path cannot read (CMYK,
//! 12-bit, damaged) is decoded whole.

use std::io::Cursor;

use bytes::Bytes;
use fast_image_resize::{FilterType, ResizeAlg, ResizeOptions, Resizer};
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageEncoder, ImageFormat, ImageReader, RgbaImage};

use super::params::{Fit, Format, MAX_SIDE, VariantSpec};
use crate::extract::{Limits, Opening};

/// The encoding of a made variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// JPEG (`image/jpeg`, `.jpg`).
    Jpeg,
    /// PNG (`image/png`, `.png`).
    Png,
    /// WebP (`image/webp`, `.webp`).
    Webp,
}

impl Encoding {
    /// What `format` gives for a client that takes WebP (`webp`) or not, of a source with
    /// transparency (`alpha`) or not.
    pub fn choose(format: Format, webp: bool, alpha: bool) -> Self {
        match format {
            Format::Jpeg => Encoding::Jpeg,
            Format::Png => Encoding::Png,
            Format::Webp => Encoding::Webp,
            Format::Auto if webp => Encoding::Webp,
            Format::Auto if alpha => Encoding::Png,
            Format::Auto => Encoding::Jpeg,
        }
    }

    /// The media type.
    pub const fn mime_type(self) -> &'static str {
        match self {
            Encoding::Jpeg => "image/jpeg",
            Encoding::Png => "image/png",
            Encoding::Webp => "image/webp",
        }
    }

    /// The file extension, without the dot.
    pub const fn extension(self) -> &'static str {
        match self {
            Encoding::Jpeg => "jpg",
            Encoding::Png => "png",
            Encoding::Webp => "webp",
        }
    }
}

/// Why a source gives no variant. Each is the client's to know (a 400 saying why), as the
/// source is the asset's file: nothing here is a failure of the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransformError {
    /// The source is no image this API decodes (PNG, JPEG, GIF, WebP), or is damaged.
    #[error("the image cannot be read: {0}")]
    Unreadable(String),
    /// The source is larger than [`Limits::max_image_pixels`] or needs more memory than
    /// [`Limits::max_image_alloc`].
    #[error("the image is too large to convert: {0}")]
    TooLarge(String),
    /// The PDF's page 1 cannot be rendered.
    #[error("the PDF's first page cannot be rendered")]
    Unrenderable,
    /// PDF pages are not drawn now: the process is shutting down
    /// ([`crate::extract::stop_pdf_renders`]). The page may well be drawn by another.
    #[error("PDF pages are not drawn while the server shuts down")]
    Stopped,
    /// The encoder refused the result.
    #[error("the image cannot be encoded as {0}")]
    Encode(&'static str),
}

/// What a variant is made of: an image file's bytes, or a PDF whose page 1 is rendered at
/// the size the variant needs.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// A PNG, JPEG, GIF (its first frame) or WebP file.
    Image(&'a [u8]),
    /// A PDF.
    Pdf(&'a Bytes),
}

/// A made variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The encoded image.
    pub bytes: Vec<u8>,
    /// Its encoding.
    pub encoding: Encoding,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
}

/// Where the source goes in the variant: the part of the source (in source pixels) scaled
/// to `scaled`, placed at `offset` on a canvas of `canvas` pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// The part of the source used: left, top, width, height.
    pub crop: (f64, f64, f64, f64),
    /// The size the used part is scaled to.
    pub scaled: (u32, u32),
    /// The variant's size.
    pub canvas: (u32, u32),
    /// Where the scaled part sits on the canvas.
    pub offset: (u32, u32),
}

/// How `spec` makes a variant of a source of `width` x `height` pixels (as displayed). A
/// variant never scales the source up: a box larger than the source shrinks, keeping its
/// shape, until it fits; and no side passes [`MAX_SIDE`] (the image shrinks to keep its
/// shape).
pub fn plan(spec: &VariantSpec, width: u32, height: u32) -> Plan {
    let (sw, sh) = (f64::from(width.max(1)), f64::from(height.max(1)));
    let whole = (0.0, 0.0, sw, sh);
    let px = |v: f64| {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let v = v.round().clamp(1.0, f64::from(MAX_SIDE)) as u32;
        v
    };
    let inside = |bw: Option<f64>, bh: Option<f64>| {
        let max = f64::from(MAX_SIDE);
        let s = [
            bw.map(|w| w / sw),
            bh.map(|h| h / sh),
            Some(1.0),
            Some(max / sw),
            Some(max / sh),
        ]
        .into_iter()
        .flatten()
        .fold(f64::INFINITY, f64::min);
        (px(sw * s), px(sh * s))
    };
    let (Some(bw), Some(bh), Fit::Cover | Fit::Contain) = (spec.width, spec.height, spec.fit)
    else {
        let size = inside(spec.width.map(f64::from), spec.height.map(f64::from));
        return Plan {
            crop: whole,
            scaled: size,
            canvas: size,
            offset: (0, 0),
        };
    };
    // The box, shrunk to fit the source when larger.
    let (bw, bh) = (f64::from(bw), f64::from(bh));
    let k = (sw / bw).min(sh / bh).min(1.0);
    let (bw, bh) = (bw * k, bh * k);
    let canvas = (px(bw), px(bh));
    if spec.fit == Fit::Cover {
        // The centred part of the source with the box's shape.
        let (cw, ch) = if sw / sh > bw / bh {
            (sh * bw / bh, sh)
        } else {
            (sw, sw * bh / bw)
        };
        return Plan {
            crop: ((sw - cw) / 2.0, (sh - ch) / 2.0, cw, ch),
            scaled: canvas,
            canvas,
            offset: (0, 0),
        };
    }
    let scaled = inside(Some(bw), Some(bh));
    let scaled = (scaled.0.min(canvas.0), scaled.1.min(canvas.1));
    Plan {
        crop: whole,
        scaled,
        canvas,
        offset: ((canvas.0 - scaled.0) / 2, (canvas.1 - scaled.1) / 2),
    }
}

/// Whether an image file may have transparency, from its header (its colour type).
pub fn has_alpha(bytes: &[u8]) -> bool {
    image::guess_format(bytes)
        .ok()
        .and_then(|f| {
            ImageReader::with_format(Cursor::new(bytes), f)
                .into_decoder()
                .ok()
        })
        .is_some_and(|d| d.color_type().has_alpha())
}

/// Makes the variant `spec` of `source` in `encoding`, within `limits`.
pub fn make(
    source: Source<'_>,
    spec: &VariantSpec,
    encoding: Encoding,
    limits: &Limits,
) -> Result<Variant, TransformError> {
    let decoded = match source {
        Source::Image(bytes) => decode(bytes, spec, limits)?,
        Source::Pdf(bytes) => Decoded::whole(
            DynamicImage::ImageRgba8(render_pdf(bytes, spec, limits)?),
            None,
        ),
    };
    let Decoded {
        image,
        icc,
        size,
        shrink,
    } = decoded;
    let plan = plan(spec, size.0, size.1);
    let alpha = image.color().has_alpha() || plan.canvas != plan.scaled;
    let mut scaled = if alpha {
        DynamicImage::ImageRgba8(RgbaImage::new(plan.scaled.0, plan.scaled.1))
    } else {
        DynamicImage::ImageRgb8(image::RgbImage::new(plan.scaled.0, plan.scaled.1))
    };
    let source = if alpha {
        DynamicImage::ImageRgba8(image.into_rgba8())
    } else {
        DynamicImage::ImageRgb8(image.into_rgb8())
    };
    // The plan is in the source's pixels; a reduced decode has one pixel for `shrink` of them
    // on each side. Its crop is that part exactly, not rounded to whole reduced pixels: a
    // 2725 px wide source decoded at half size is 1362.5 px of picture in 1363 pixels, and
    // taking 1363 would stretch the variant by a third of a pixel at its far edge.
    let k = f64::from(shrink);
    let (left, top, w, h) = plan.crop;
    let options = ResizeOptions::new()
        .resize_alg(ResizeAlg::Convolution(FilterType::Lanczos3))
        .crop(left / k, top / k, w / k, h / k);
    Resizer::new()
        .resize(&source, &mut scaled, &options)
        .map_err(|e| TransformError::TooLarge(e.to_string()))?;
    drop(source);
    let image = if plan.canvas == plan.scaled {
        scaled
    } else {
        // Letterboxed: transparent around the image (white once flattened for JPEG).
        let mut canvas = RgbaImage::new(plan.canvas.0, plan.canvas.1);
        image::imageops::overlay(
            &mut canvas,
            &scaled.into_rgba8(),
            i64::from(plan.offset.0),
            i64::from(plan.offset.1),
        );
        DynamicImage::ImageRgba8(canvas)
    };
    let bytes = encode(&image, encoding, spec.quality, icc)?;
    Ok(Variant {
        bytes,
        encoding,
        width: image.width(),
        height: image.height(),
    })
}

/// A decoded source, turned as its EXIF orientation says.
struct Decoded {
    /// The pixels: `size` divided by `shrink`, rounded up.
    image: DynamicImage,
    /// The source's ICC profile.
    icc: Option<Vec<u8>>,
    /// The source's size as displayed, in its own pixels.
    size: (u32, u32),
    /// Source pixels per decoded pixel on each side: 1, or 2, 4 or 8 for a JPEG decoded at a
    /// reduced size.
    shrink: u32,
}

impl Decoded {
    /// A source decoded at its own size.
    fn whole(image: DynamicImage, icc: Option<Vec<u8>>) -> Self {
        Self {
            size: (image.width(), image.height()),
            image,
            icc,
            shrink: 1,
        }
    }
}

/// Decodes an image file within `limits`, turned as its EXIF orientation says, with its ICC
/// profile: a JPEG at a reduced size when `spec` shrinks it by half or more.
fn decode(bytes: &[u8], spec: &VariantSpec, limits: &Limits) -> Result<Decoded, TransformError> {
    let unreadable = |e: image::ImageError| match e {
        image::ImageError::Limits(l) => TransformError::TooLarge(l.to_string()),
        other => TransformError::Unreadable(other.to_string()),
    };
    let (format, mut decoder) = match crate::extract::open_image(bytes, limits) {
        Ok(Some(opened)) => opened,
        Ok(None) => {
            return Err(TransformError::Unreadable(
                "not a PNG, JPEG, GIF or WebP file".to_owned(),
            ));
        }
        Err(Opening::Failed(e)) => return Err(unreadable(e)),
        Err(Opening::TooLarge { width, height }) => {
            return Err(TransformError::TooLarge(format!(
                "{width} x {height} pixels, more than {}",
                limits.max_image_pixels
            )));
        }
    };
    let (w, h) = decoder.dimensions();
    let icc = decoder.icc_profile().ok().flatten();
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let size = if crate::extract::turns_quarter(orientation) {
        (h, w)
    } else {
        (w, h)
    };
    let shrink = if format == ImageFormat::Jpeg {
        shrink_on_load(spec, size)
    } else {
        1
    };
    let reduced = (shrink > 1)
        .then(|| reduced_jpeg(bytes, (w, h), shrink))
        .flatten();
    let (mut image, shrink) = match reduced {
        Some(image) => (image, shrink),
        None => (DynamicImage::from_decoder(decoder).map_err(unreadable)?, 1),
    };
    image.apply_orientation(orientation);
    Ok(Decoded {
        image,
        icc,
        size,
        shrink,
    })
}

/// How much smaller than `size` a JPEG may be decoded for `spec`: the largest of 8, 4 and 2
/// that the variant shrinks the source by on both sides, else 1. This is libjpeg's
/// shrink-on-load as sharp uses it (`fastShrinkOnLoad`): the scaled IDCT is itself a good
/// reduction (it keeps the block's lowest frequencies), and Lanczos3 does the rest.
pub(super) fn shrink_on_load(spec: &VariantSpec, size: (u32, u32)) -> u32 {
    if !cfg!(feature = "jpeg-turbo") {
        return 1;
    }
    let plan = plan(spec, size.0, size.1);
    let factor = (plan.crop.2 / f64::from(plan.scaled.0.max(1)))
        .min(plan.crop.3 / f64::from(plan.scaled.1.max(1)));
    [8, 4, 2]
        .into_iter()
        .find(|&s| factor >= f64::from(s))
        .unwrap_or(1)
}

/// A JPEG of `size` (as stored) decoded by libjpeg-turbo at `1 / shrink` of its size on each
/// side (rounded up); `None` when that path cannot read it (CMYK, 12-bit, damaged: then it is
/// decoded whole).
#[cfg(feature = "jpeg-turbo")]
fn reduced_jpeg(bytes: &[u8], (w, h): (u32, u32), shrink: u32) -> Option<DynamicImage> {
    let numerator = u8::try_from(8 / shrink).ok()?;
    let decode = || {
        let mut decompress = mozjpeg::Decompress::new_mem(bytes).ok()?;
        decompress.scale(numerator);
        let (mut started, gray) = match decompress.image().ok()? {
            mozjpeg::decompress::Format::RGB(started) => (started, false),
            mozjpeg::decompress::Format::Gray(started) => (started, true),
            mozjpeg::decompress::Format::CMYK(_) => return None,
        };
        let side = |v: usize| u32::try_from(v).ok();
        let (ow, oh) = (side(started.width())?, side(started.height())?);
        if (ow, oh) != (w.div_ceil(shrink), h.div_ceil(shrink)) {
            return None;
        }
        let pixels: Vec<u8> = started.read_scanlines().ok()?;
        started.finish().ok()?;
        if gray {
            image::GrayImage::from_raw(ow, oh, pixels).map(DynamicImage::ImageLuma8)
        } else {
            image::RgbImage::from_raw(ow, oh, pixels).map(DynamicImage::ImageRgb8)
        }
    };
    // libjpeg's fatal errors unwind (without the panic hook) to here.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(decode))
        .ok()
        .flatten()
}

#[cfg(not(feature = "jpeg-turbo"))]
fn reduced_jpeg(_bytes: &[u8], _size: (u32, u32), _shrink: u32) -> Option<DynamicImage> {
    None
}

/// Page 1 of a PDF, rendered at the size the variant takes (so the resize after it is one to
/// one): a page is a source of any size up to [`MAX_SIDE`] on its long side; without `w` and
/// `h`, 2048.
fn render_pdf(
    bytes: &Bytes,
    spec: &VariantSpec,
    limits: &Limits,
) -> Result<RgbaImage, TransformError> {
    let spec = match (spec.width, spec.height) {
        (None, None) => VariantSpec::inside(Some(2048), Some(2048)),
        _ => *spec,
    };
    let page = crate::extract::pdf_page_image(bytes, limits, |w, h| {
        let long = w.max(h);
        let virtual_side = |side: f64| {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let v = (side / long * f64::from(MAX_SIDE)).round().max(1.0) as u32;
            v
        };
        let plan = plan(&spec, virtual_side(w), virtual_side(h));
        let factor = f64::from(plan.scaled.0) / plan.crop.2;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let side = (f64::from(MAX_SIDE) * factor).round() as u32;
        side
    });
    match page {
        Ok(Some(page)) => Ok(page),
        Err(crate::extract::PageNotDrawn::Stopped) => Err(TransformError::Stopped),
        Ok(None) | Err(_) => Err(TransformError::Unrenderable),
    }
}

fn encode(
    image: &DynamicImage,
    encoding: Encoding,
    quality: u8,
    icc: Option<Vec<u8>>,
) -> Result<Vec<u8>, TransformError> {
    let mut out = Vec::new();
    let (w, h) = (image.width(), image.height());
    match encoding {
        Encoding::Jpeg => {
            let rgb = flatten(image);
            let sides = u16::try_from(w).ok().zip(u16::try_from(h).ok());
            let (w, h) = sides.ok_or(TransformError::Encode("JPEG"))?;
            let mut encoder = jpeg_encoder::Encoder::new(&mut out, quality);
            if let Some(icc) = icc {
                // A profile too large for JPEG's markers is left out.
                let _ = encoder.add_icc_profile(&icc);
            }
            encoder
                .encode(rgb.as_raw(), w, h, jpeg_encoder::ColorType::Rgb)
                .map_err(|_| TransformError::Encode("JPEG"))?;
        }
        Encoding::Png => {
            let mut encoder = image::codecs::png::PngEncoder::new(&mut out);
            if let Some(icc) = icc {
                let _ = encoder.set_icc_profile(icc);
            }
            encoder
                .write_image(image.as_bytes(), w, h, image.color().into())
                .map_err(|_| TransformError::Encode("PNG"))?;
        }
        Encoding::Webp => out = webp(image, quality)?,
    }
    Ok(out)
}

/// The image on white, without alpha.
fn flatten(image: &DynamicImage) -> image::RgbImage {
    match image {
        DynamicImage::ImageRgb8(rgb) => rgb.clone(),
        other => {
            let rgba = other.to_rgba8();
            image::RgbImage::from_fn(rgba.width(), rgba.height(), |x, y| {
                let [r, g, b, a] = rgba.get_pixel(x, y).0;
                let on_white = |c: u8| {
                    let (c, a) = (u16::from(c), u16::from(a));
                    #[allow(clippy::cast_possible_truncation)]
                    let v = ((c * a + 255 * (255 - a) + 127) / 255) as u8;
                    v
                };
                image::Rgb([on_white(r), on_white(g), on_white(b)])
            })
        }
    }
}

#[cfg(feature = "webp-lossy")]
fn webp(image: &DynamicImage, quality: u8) -> Result<Vec<u8>, TransformError> {
    let (w, h) = (image.width(), image.height());
    let encoder = match image {
        DynamicImage::ImageRgb8(rgb) => webp::Encoder::from_rgb(rgb.as_raw(), w, h),
        DynamicImage::ImageRgba8(rgba) => webp::Encoder::from_rgba(rgba.as_raw(), w, h),
        _ => return Err(TransformError::Encode("WebP")),
    };
    encoder
        .encode_simple(false, f32::from(quality))
        .map(|memory| memory.to_vec())
        .map_err(|_| TransformError::Encode("WebP"))
}

#[cfg(not(feature = "webp-lossy"))]
fn webp(image: &DynamicImage, _quality: u8) -> Result<Vec<u8>, TransformError> {
    let mut out = Vec::new();
    image::codecs::webp::WebPEncoder::new_lossless(&mut out)
        .write_image(
            image.as_bytes(),
            image.width(),
            image.height(),
            image.color().into(),
        )
        .map_err(|_| TransformError::Encode("WebP"))?;
    Ok(out)
}
