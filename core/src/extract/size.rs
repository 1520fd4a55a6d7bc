//! Images' size as displayed, from the header alone: no pixel is decoded, and no image codec
//! is needed (`imagesize` reads the size, `kamadak-exif` the orientation).

use std::io::{BufRead, Cursor, Seek};

/// Width and height as displayed: from the header (no pixels are decoded), swapped when an
/// EXIF orientation turns the image by a quarter (5-8).
pub(super) fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    displayed(imagesize::blob_size(bytes).ok()?, bytes)
}

/// Width and height as displayed of an image read by ranges: its size from the header
/// (`imagesize` seeks to where it is), its orientation from `head`, the file's first bytes.
pub(super) fn dimensions_ranged<R: BufRead + Seek>(head: &[u8], reader: R) -> Option<(u32, u32)> {
    displayed(imagesize::reader_size(reader).ok()?, head)
}

/// `size` as displayed: swapped when the EXIF orientation in `head` (the file's first bytes)
/// turns the image by a quarter; `None` when a side is zero or past `u32`.
fn displayed(size: imagesize::ImageSize, head: &[u8]) -> Option<(u32, u32)> {
    let (w, h) = (
        u32::try_from(size.width).ok()?,
        u32::try_from(size.height).ok()?,
    );
    if w == 0 || h == 0 {
        return None;
    }
    Some(if turned_quarter(head) { (h, w) } else { (w, h) })
}

/// Whether the EXIF orientation of a JPEG, PNG or WebP image (read from its header) turns
/// it by a quarter: orientations 5 to 8, whose sides swap.
fn turned_quarter(head: &[u8]) -> bool {
    let is_container = head.starts_with(&[0xFF, 0xD8])
        || head.starts_with(b"\x89PNG\r\n\x1a\n")
        || (head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP");
    if !is_container {
        return false;
    }
    let Ok(exif) = exif::Reader::new().read_from_container(&mut Cursor::new(head)) else {
        return false;
    };
    exif.get_field(exif::Tag::Orientation, exif::In::PRIMARY)
        .and_then(|field| field.value.get_uint(0))
        .is_some_and(|orientation| (5..=8).contains(&orientation))
}
