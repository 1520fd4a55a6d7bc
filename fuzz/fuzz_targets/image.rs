//! Image variants of any bytes: the first byte picks the box, the fit and the encoding, the
//! rest is the source. A variant or a clear error (`TransformError`), never a panic, and never
//! more memory than the limits allow.
#![no_main]

use assetlib_core::extract::Limits;
use assetlib_core::variant::{Encoding, Fit, Source, VariantSpec, make};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, source)) = data.split_first() else {
        return;
    };
    // Boxes that shrink most sources by a half, a quarter and an eighth (a JPEG's reduced
    // decoding) and one larger than most (no scaling up).
    let side = [16, 40, 100, 2100][usize::from(pick & 3)];
    let fit = [Fit::Inside, Fit::Cover, Fit::Contain][usize::from((pick >> 2) % 3)];
    let encoding = [Encoding::Jpeg, Encoding::Png, Encoding::Webp][usize::from((pick >> 4) % 3)];
    let spec = VariantSpec {
        fit,
        ..VariantSpec::inside(Some(side), Some(side * 3 / 4))
    };
    let _ = make(Source::Image(source), &spec, encoding, &Limits::default());
});
