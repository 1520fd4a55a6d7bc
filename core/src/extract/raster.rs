//! Images: size as displayed, and thumbnails.

use std::io::Cursor;

use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};
use quick_xml::events::{BytesStart, Event};

use super::sniff::Format;
use super::{ExtractError, Limits, Thumbnail};

/// Width and height as displayed: from the header (no pixels are decoded), swapped when an
/// EXIF orientation turns the image by a quarter (5-8). SVG sizes come from the root element.
pub(super) fn dimensions(bytes: &[u8], format: Format) -> Option<(u32, u32)> {
    if format == Format::Svg {
        return svg_size(bytes);
    }
    let size = imagesize::blob_size(bytes).ok()?;
    let (w, h) = (
        u32::try_from(size.width).ok()?,
        u32::try_from(size.height).ok()?,
    );
    if w == 0 || h == 0 {
        return None;
    }
    Some(if turns_quarter(orientation(bytes)) {
        (h, w)
    } else {
        (w, h)
    })
}

/// The EXIF orientation of a JPEG, PNG or WebP image, read from its header.
fn orientation(bytes: &[u8]) -> Orientation {
    let Ok(format) = image::guess_format(bytes) else {
        return Orientation::NoTransforms;
    };
    if !matches!(
        format,
        ImageFormat::Jpeg | ImageFormat::Png | ImageFormat::WebP
    ) {
        return Orientation::NoTransforms;
    }
    ImageReader::with_format(Cursor::new(bytes), format)
        .into_decoder()
        .and_then(|mut decoder| decoder.orientation())
        .unwrap_or(Orientation::NoTransforms)
}

fn turns_quarter(orientation: Orientation) -> bool {
    matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    )
}

/// See [`super::thumbnail`].
pub(super) fn thumbnail(
    bytes: &[u8],
    max_side: u32,
    limits: &Limits,
) -> Result<Option<Thumbnail>, ExtractError> {
    let Ok(format @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP)) =
        image::guess_format(bytes)
    else {
        return Ok(None);
    };
    let image_error = |e: image::ImageError| ExtractError::Image(Box::new(e));
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut decoder_limits = image::Limits::default();
    decoder_limits.max_alloc = Some(limits.max_image_alloc);
    reader.limits(decoder_limits);
    let mut decoder = reader.into_decoder().map_err(image_error)?;
    let (w, h) = decoder.dimensions();
    if u64::from(w) * u64::from(h) > limits.max_image_pixels {
        return Err(ExtractError::LimitExceeded {
            what: "image",
            limit: limits.max_image_pixels,
            unit: "pixels",
        });
    }
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let mut image = DynamicImage::from_decoder(decoder).map_err(image_error)?;
    image.apply_orientation(orientation);
    let (tw, th) = fit(image.width(), image.height(), max_side.max(1));
    let small = if (tw, th) == (image.width(), image.height()) {
        image
    } else {
        image.thumbnail_exact(tw, th)
    };
    let mut out = Cursor::new(Vec::new());
    let (mime_type, extension) = if format == ImageFormat::Jpeg {
        let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
        DynamicImage::ImageRgb8(small.to_rgb8())
            .write_with_encoder(encoder)
            .map_err(image_error)?;
        ("image/jpeg", "jpg")
    } else {
        let eight_bit = if small.color().has_alpha() {
            DynamicImage::ImageRgba8(small.to_rgba8())
        } else {
            DynamicImage::ImageRgb8(small.to_rgb8())
        };
        eight_bit
            .write_to(&mut out, ImageFormat::Png)
            .map_err(image_error)?;
        ("image/png", "png")
    };
    Ok(Some(Thumbnail {
        bytes: out.into_inner(),
        mime_type,
        extension,
        width: tw,
        height: th,
    }))
}

/// The size that fits `w` x `h` within `max_side` on the long side, keeping the aspect ratio
/// (rounded, at least one pixel) and never enlarging.
fn fit(w: u32, h: u32, max_side: u32) -> (u32, u32) {
    let long = w.max(h);
    if long <= max_side {
        return (w, h);
    }
    let scale = |side: u32| {
        let scaled =
            (u64::from(side) * u64::from(max_side) + u64::from(long) / 2) / u64::from(long);
        u32::try_from(scaled).unwrap_or(max_side).max(1)
    };
    (scale(w), scale(h))
}

/// How far into an SVG file its root element is looked for.
const SVG_ROOT_WITHIN: u64 = 64 * 1024;

/// Whether UTF-8 text is an SVG image: its root element is `svg`.
pub(super) fn is_svg(text: &[u8]) -> bool {
    with_svg_root(text, |_| ()).is_some()
}

/// The size of an SVG image: `width` and `height` in absolute units, completed or replaced
/// by the `viewBox` where they are missing or relative.
fn svg_size(text: &[u8]) -> Option<(u32, u32)> {
    with_svg_root(text, |root| {
        let attribute = |name: &[u8]| {
            root.attributes()
                .filter_map(Result::ok)
                .find(|a| a.key.as_ref() == name)
                .and_then(|a| String::from_utf8(a.value.into_owned()).ok())
        };
        let width = attribute(b"width").as_deref().and_then(svg_length);
        let height = attribute(b"height").as_deref().and_then(svg_length);
        let view_box = attribute(b"viewBox").and_then(|v| {
            let n: Vec<f64> = v
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|s| !s.is_empty())
                .map(str::parse)
                .collect::<Result<_, _>>()
                .ok()?;
            match n[..] {
                [_, _, w, h] if w > 0.0 && h > 0.0 => Some((w, h)),
                _ => None,
            }
        });
        let (w, h) = match (width, height, view_box) {
            (Some(w), Some(h), _) => (w, h),
            (Some(w), None, Some((vw, vh))) => (w, w * vh / vw),
            (None, Some(h), Some((vw, vh))) => (h * vw / vh, h),
            (None, None, Some(v)) => v,
            _ => return None,
        };
        Some((pixels(w)?, pixels(h)?))
    })
    .flatten()
}

/// Runs `f` on the root element when it is `svg`.
fn with_svg_root<T>(text: &[u8], f: impl FnOnce(&BytesStart<'_>) -> T) -> Option<T> {
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    let mut reader = quick_xml::Reader::from_reader(text);
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) | Event::Empty(e) => {
                return (e.local_name().as_ref() == b"svg").then(|| f(&e));
            }
            Event::Eof => return None,
            _ if reader.buffer_position() > SVG_ROOT_WITHIN => return None,
            _ => {}
        }
    }
}

/// An SVG length in pixels (CSS units: 96 px to the inch); `None` for relative units.
fn svg_length(value: &str) -> Option<f64> {
    let value = value.trim();
    let units: [(&str, f64); 7] = [
        ("px", 1.0),
        ("pt", 96.0 / 72.0),
        ("pc", 16.0),
        ("in", 96.0),
        ("cm", 96.0 / 2.54),
        ("mm", 96.0 / 25.4),
        ("", 1.0),
    ];
    let (number, factor) = units
        .iter()
        .find_map(|(unit, factor)| Some((value.strip_suffix(unit)?, *factor)))?;
    let n: f64 = number.trim().parse().ok()?;
    (n.is_finite() && n > 0.0).then_some(n * factor)
}

/// A positive length rounded to whole pixels (at least one).
fn pixels(v: f64) -> Option<u32> {
    if !(v.is_finite() && v > 0.0 && v < f64::from(u32::MAX)) {
        return None;
    }
    // In range, checked above.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Some((v.round() as u32).max(1))
}
