//! Images' thumbnails (their size as displayed is `size`'s).

use std::io::{BufRead, Cursor, Seek};

use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader};

use super::{ExtractError, Limits, Thumbnail};

#[cfg(feature = "variants")]
/// Whether an EXIF orientation turns the image by a quarter (its sides swap).
pub(crate) fn turns_quarter(orientation: Orientation) -> bool {
    matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    )
}

/// Why an image file could not be opened for decoding.
#[derive(Debug)]
#[cfg_attr(not(feature = "variants"), allow(dead_code))]
pub(crate) enum Opening {
    /// Its header cannot be read, or reading it needs more than the memory limit.
    Failed(image::ImageError),
    /// It has more pixels than [`Limits::max_image_pixels`].
    TooLarge {
        /// Its width as stored.
        width: u32,
        /// Its height as stored.
        height: u32,
    },
}

/// A decoder of a PNG, JPEG, GIF or WebP file, its header read and its size checked against
/// `limits` (no pixel decoded yet; the decode is held to [`Limits::max_image_alloc`]), with
/// its format; `None` for any other file.
pub(crate) fn open<'a>(
    bytes: &'a [u8],
    limits: &Limits,
) -> Result<Option<(ImageFormat, impl ImageDecoder + 'a)>, Opening> {
    let Ok(format @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP)) =
        image::guess_format(bytes)
    else {
        return Ok(None);
    };
    open_reader(
        format,
        Cursor::new(bytes),
        limits.max_image_alloc,
        limits.max_image_pixels,
    )
    .map(|decoder| Some((format, decoder)))
}

/// A decoder of `format` reading from `reader`, as [`open`] makes one: its allocations held
/// to `max_alloc`, images of more than `max_pixels` refused.
fn open_reader<'a, R: BufRead + Seek + 'a>(
    format: ImageFormat,
    reader: R,
    max_alloc: u64,
    max_pixels: u64,
) -> Result<impl ImageDecoder + 'a, Opening> {
    let mut reader = ImageReader::with_format(reader, format);
    let mut decoder_limits = image::Limits::default();
    decoder_limits.max_alloc = Some(max_alloc);
    reader.limits(decoder_limits);
    let decoder = reader.into_decoder().map_err(Opening::Failed)?;
    let (width, height) = decoder.dimensions();
    if u64::from(width) * u64::from(height) > max_pixels {
        return Err(Opening::TooLarge { width, height });
    }
    Ok(decoder)
}

/// [`thumbnail`] of an image read by ranges (`head` is its first bytes, `reader` the whole
/// file of `size` bytes). A PNG is decoded as it is read; the decoders of the other formats
/// hold the whole file, which then counts against [`Limits::max_image_alloc`] with the
/// pixels (a file larger than it gets no thumbnail).
pub(super) fn thumbnail_ranged<R: BufRead + Seek>(
    head: &[u8],
    mut reader: R,
    size: u64,
    max_side: u32,
    limits: &Limits,
) -> Result<Option<Thumbnail>, ExtractError> {
    let image_error = |e: image::ImageError| ExtractError::Image(Box::new(e));
    let Ok(format @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP)) =
        image::guess_format(head)
    else {
        return Ok(None);
    };
    // Too many pixels is known from the header: no decoder is made.
    let pixels = imagesize::reader_size(&mut reader)
        .ok()
        .map(|s| (s.width as u64).saturating_mul(s.height as u64));
    if pixels.is_some_and(|p| p > limits.max_image_pixels) {
        return Err(ExtractError::LimitExceeded {
            what: "image",
            limit: limits.max_image_pixels,
            unit: "pixels",
        });
    }
    reader
        .seek(std::io::SeekFrom::Start(0))
        .map_err(|e| ExtractError::Image(Box::new(e)))?;
    let held = if format == ImageFormat::Png { 0 } else { size };
    let Some(max_alloc) = limits.max_image_alloc.checked_sub(held) else {
        return Err(ExtractError::limit(
            "image file held to decode",
            limits.max_image_alloc,
        ));
    };
    let mut decoder = match open_reader(format, reader, max_alloc, limits.max_image_pixels) {
        Ok(decoder) => decoder,
        Err(Opening::Failed(e)) => return Err(image_error(e)),
        Err(Opening::TooLarge { .. }) => {
            return Err(ExtractError::LimitExceeded {
                what: "image",
                limit: limits.max_image_pixels,
                unit: "pixels",
            });
        }
    };
    // The file held and the pixels decoded, together within the allocation limit.
    if held.saturating_add(decoder.total_bytes()) > limits.max_image_alloc {
        return Err(ExtractError::limit(
            "image file and pixels decoded",
            limits.max_image_alloc,
        ));
    }
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let mut image = DynamicImage::from_decoder(decoder).map_err(image_error)?;
    image.apply_orientation(orientation);
    finish(image, max_side, format == ImageFormat::Jpeg).map(Some)
}

/// See [`super::thumbnail`].
pub(super) fn thumbnail(
    bytes: &[u8],
    max_side: u32,
    limits: &Limits,
) -> Result<Option<Thumbnail>, ExtractError> {
    let image_error = |e: image::ImageError| ExtractError::Image(Box::new(e));
    let (format, mut decoder) = match open(bytes, limits) {
        Ok(Some(opened)) => opened,
        Ok(None) => return Ok(None),
        Err(Opening::Failed(e)) => return Err(image_error(e)),
        Err(Opening::TooLarge { .. }) => {
            return Err(ExtractError::LimitExceeded {
                what: "image",
                limit: limits.max_image_pixels,
                unit: "pixels",
            });
        }
    };
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    let mut image = DynamicImage::from_decoder(decoder).map_err(image_error)?;
    image.apply_orientation(orientation);
    finish(image, max_side, format == ImageFormat::Jpeg).map(Some)
}

/// Makes the thumbnail of a decoded image: scaled to fit `max_side` (never enlarged), its
/// placeholder taken, then encoded as a JPEG (quality 85: photos stay small) when `jpeg`,
/// else as a PNG (which keeps transparency).
pub(super) fn finish(
    image: DynamicImage,
    max_side: u32,
    jpeg: bool,
) -> Result<Thumbnail, ExtractError> {
    let image_error = |e: image::ImageError| ExtractError::Image(Box::new(e));
    let (tw, th) = fit(image.width(), image.height(), max_side.max(1));
    let small = if (tw, th) == (image.width(), image.height()) {
        image
    } else {
        image.thumbnail_exact(tw, th)
    };
    let placeholder = placeholder(&small);
    let mut out = Cursor::new(Vec::new());
    let (mime_type, extension) = if jpeg {
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
        // Fast deflate: a thumbnail is small, and is made on every create.
        let encoder = image::codecs::png::PngEncoder::new_with_quality(
            &mut out,
            image::codecs::png::CompressionType::Fast,
            image::codecs::png::FilterType::Adaptive,
        );
        eight_bit.write_with_encoder(encoder).map_err(image_error)?;
        ("image/png", "png")
    };
    Ok(Thumbnail {
        bytes: out.into_inner(),
        mime_type,
        extension,
        width: tw,
        height: th,
        placeholder,
    })
}

/// Longest side of the image a ThumbHash is taken of. The format allows up to 100, but keeps
/// at most 7 cosines an axis, which 32 pixels hold: a tenth of the work of 100 (it was a
/// seventh of rendering a PDF's page 1).
const PLACEHOLDER_SIDE: u32 = 32;

/// The ThumbHash of `image`, base64 (standard alphabet, padded): taken of the image scaled
/// to fit [`PLACEHOLDER_SIDE`] pixels.
fn placeholder(image: &DynamicImage) -> String {
    use base64::Engine as _;
    let (w, h) = fit(image.width(), image.height(), PLACEHOLDER_SIDE);
    let tiny = if (w, h) == (image.width(), image.height()) {
        image.to_rgba8()
    } else {
        image.thumbnail_exact(w, h).to_rgba8()
    };
    let hash = thumbhash::rgba_to_thumb_hash(w as usize, h as usize, tiny.as_raw());
    base64::engine::general_purpose::STANDARD.encode(hash)
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
