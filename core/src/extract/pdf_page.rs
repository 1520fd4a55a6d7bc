//! PDF: page 1 rendered with `hayro` (pure Rust; the standard 14 fonts a PDF may name without
//! embedding come with it).
//!
//! The page is drawn straight at the thumbnail's size (as `pdftoppm -scale-to` does), on
//! white, so the work and memory of the raster are bounded by that size whatever the page
//! claims. The file reaches the renderer only after the same pre-scan that guards the page
//! and word counts ([`super::pdf::read_pdf`]): its streams decode within the limits, nothing
//! in it nests too deep, and its pages can be counted. Encrypted files are not rendered. A panic inside the
//! renderer makes the file unrenderable (no thumbnail), like any other failure.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use bytes::Bytes;

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_syntax::Pdf;
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::{PixmapSettings, RenderCache, RenderSettings};
use image::RgbaImage;

/// Page 1 of a PDF that [`super::pdf::read_pdf`] found renderable, at most `max_side` pixels
/// on its long side (exactly that, unless the page is so narrow that its short side rounds
/// below one pixel, which is then one), as RGBA; `None` when it cannot be rendered. The
/// renderer shares `bytes`, no copy.
pub(super) fn first_page(bytes: &Bytes, max_side: u32) -> Option<RgbaImage> {
    catch_unwind(AssertUnwindSafe(|| render(bytes, max_side)))
        .ok()
        .flatten()
}

fn render(bytes: &Bytes, max_side: u32) -> Option<RgbaImage> {
    let pdf = Pdf::new(Arc::new(bytes.clone())).ok()?;
    let pages = pdf.pages();
    let page = pages.first()?;
    let (w, h) = page.render_dimensions();
    let long = w.max(h);
    if !(w.is_finite() && h.is_finite()) || w <= 0.0 || h <= 0.0 {
        return None;
    }
    // The renderer truncates the scaled sides to whole pixels: a hundredth of a pixel more
    // makes the long side `max_side` whatever the rounding, and keeps the drawing where
    // `pdftoppm -scale-to` puts it (half a pixel more would shift the far edge by half a
    // pixel).
    #[allow(clippy::cast_precision_loss)]
    let scale = (max_side.clamp(1, u32::from(u16::MAX) - 1) as f32 + 0.01) / long;
    if w * scale < 1.0 || h * scale < 1.0 {
        return None;
    }
    let settings = PixmapSettings {
        x_scale: scale,
        y_scale: scale,
        bg_color: WHITE,
    };
    let cache = RenderCache::new();
    let pixmap = hayro::render(
        page,
        &cache,
        &InterpreterSettings::default(),
        &RenderSettings::default(),
        &settings,
    );
    let (pw, ph) = (u32::from(pixmap.width()), u32::from(pixmap.height()));
    if pw == 0 || ph == 0 {
        return None;
    }
    // Opaque (drawn on white), so premultiplied and straight alpha are the same bytes.
    RgbaImage::from_raw(pw, ph, pixmap.data_as_u8_slice().to_vec())
}
