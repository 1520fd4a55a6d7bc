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
use hayro::hayro_interpret::util::TransformExt;
use hayro::hayro_syntax::Pdf;
use hayro::hayro_syntax::page::Page;
use hayro::kurbo::Affine;
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::vello_cpu::{Pixmap, RasterizerSettings, RenderContext, Resources, TargetInit};
use hayro::{RenderCache, RenderSettings};
use image::RgbaImage;

/// Page 1 of a PDF that [`super::pdf::read_pdf`] found renderable, as RGBA; `None` when it
/// cannot be rendered. Its size is the one `pdftoppm -scale-to max_side` gives: the long side
/// `max_side`, the short side scaled alike and rounded up to whole pixels (so at least one).
/// The renderer shares `bytes`, no copy.
pub(super) fn first_page(bytes: &Bytes, max_side: u32) -> Option<RgbaImage> {
    first_page_sized(bytes, |_, _| max_side)
}

/// Page 1 as [`first_page`] renders it, its long side what `long_side` says of the page's
/// width and height in points.
pub(super) fn first_page_sized(
    bytes: &Bytes,
    long_side: impl FnOnce(f64, f64) -> u32,
) -> Option<RgbaImage> {
    catch_unwind(AssertUnwindSafe(|| render(bytes, long_side)))
        .ok()
        .flatten()
}

/// The width and height in points of page 1, as drawn (turned as the page says); `None`
/// when the file has no page or the page no usable size. Only the page tree is read: the
/// page's content is not interpreted.
pub(super) fn page_size(bytes: &Bytes) -> Option<(f64, f64)> {
    catch_unwind(AssertUnwindSafe(|| {
        let pdf = Pdf::new(Arc::new(bytes.clone())).ok()?;
        let pages = pdf.pages();
        size_of(pages.first()?)
    }))
    .ok()
    .flatten()
}

/// A page's drawn size in points, when finite and not empty.
fn size_of(page: &Page<'_>) -> Option<(f64, f64)> {
    let (w, h) = page.render_dimensions();
    if !(w.is_finite() && h.is_finite()) || w <= 0.0 || h <= 0.0 {
        return None;
    }
    Some((f64::from(w), f64::from(h)))
}

/// A long side in pixels as the renderer takes it: 1 to 65,535.
pub(super) fn max_side(long_side: u32) -> u16 {
    u16::try_from(long_side.clamp(1, u32::from(u16::MAX))).unwrap_or(u16::MAX)
}

fn render(bytes: &Bytes, long_side: impl FnOnce(f64, f64) -> u32) -> Option<RgbaImage> {
    let pdf = Pdf::new(Arc::new(bytes.clone())).ok()?;
    let pages = pdf.pages();
    let page = pages.first()?;
    let (w, h) = size_of(page)?;
    let max_side = f64::from(max_side(long_side(w, h)));
    let scale = max_side / w.max(h);
    // A side a rounding error past a whole pixel is that pixel (the long side is `max_side`).
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let pixels = |side: f64| (side * scale - 1e-3).ceil().clamp(1.0, max_side) as u16;
    // Glyphs the way `pdftoppm` places them. `hayro` puts a glyph's origin on the nearest pixel
    // row and the nearest quarter pixel across; poppler's rasterizer (Splash) puts it on the row
    // above and the quarter pixel to the left. Moving the page up half a pixel and left an eighth
    // makes the nearest the one poppler picks, so small text lands on the same rows; the rest
    // of the page moves by less than a pixel. Glyphs are not hinted, as `pdftoppm` does not.
    // Measured against `pdftoppm` on 325 PDFs this raises the median SSIM from 0.89 to 0.99
    // (BENCHMARKS.md).
    let page_transform = Affine::scale(scale) * page.initial_transform(true).to_kurbo();
    let (width, height) = (pixels(w), pixels(h));
    let cache = RenderCache::new();
    let mut pixmap = draw(
        page,
        &cache,
        Affine::translate((-0.125, -0.5)) * page_transform,
        width,
        height,
    );
    // Moved up, the page covers only the top half of the last row. When something is drawn
    // there (a page dark to its edge), that row is drawn again from the page where it is.
    let last = usize::from(height - 1) * usize::from(width);
    if pixmap.data()[last..]
        .iter()
        .any(|p| p.r < 250 || p.g < 250 || p.b < 250)
    {
        let row = draw(
            page,
            &cache,
            Affine::translate((-0.125, -f64::from(height - 1))) * page_transform,
            width,
            1,
        );
        pixmap.data_mut()[last..].copy_from_slice(row.data());
    }
    let (pw, ph) = (u32::from(pixmap.width()), u32::from(pixmap.height()));
    if pw == 0 || ph == 0 {
        return None;
    }
    // Opaque (drawn on white), so premultiplied and straight alpha are the same bytes.
    RgbaImage::from_raw(pw, ph, pixmap.data_as_u8_slice().to_vec())
}

/// The page drawn through `transform` on white, `width` x `height` pixels.
fn draw<'a>(
    page: &'a Page<'a>,
    cache: &RenderCache<'a>,
    transform: Affine,
    width: u16,
    height: u16,
) -> Pixmap {
    let mut ctx = RenderContext::new(width, height);
    let settings = RenderSettings {
        hinting: false,
        ..RenderSettings::default()
    };
    hayro::render_into(
        page,
        cache,
        &InterpreterSettings::default(),
        &settings,
        &mut ctx,
        transform,
    );
    ctx.flush();
    let mut pixmap = Pixmap::new(width, height);
    ctx.render_with(
        &mut pixmap,
        &mut Resources::default(),
        RasterizerSettings {
            target_init: TargetInit::Clear(WHITE),
            ..RasterizerSettings::default()
        },
    );
    pixmap
}
