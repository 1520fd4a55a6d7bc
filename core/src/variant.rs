//! Image variants: an image asset (or a PDF's page 1) in the size and format a website asks
//! for (DESIGN.md §5 "Image variants").
//!
//! [`parse`] reads the parameters (`w`, `h`, `fit`, `format`, `q`, `dpr`, or a `preset`) into a
//! [`VariantSpec`], whose [`VariantSpec::canonical`] spelling names the variant. With the
//! `variants` feature, `plan` says where the source goes (never scaled up), and `make`
//! decodes, crops, resizes (Lanczos3) and encodes it within the extraction limits.
//!
//! ```
//! # #[cfg(feature = "variants")] {
//! use assetlib_core::variant::{self, Encoding, Source, VariantSpec};
//! use assetlib_core::extract::Limits;
//!
//! let presets = variant::default_presets();
//! let asked = variant::parse(Some("preset=card"), &presets).unwrap();
//! assert_eq!(asked.spec, VariantSpec::cover(640, 400));
//! assert!(variant::parse(Some("w=0"), &presets).is_err());
//!
//! # let png = {
//! #     let mut out = std::io::Cursor::new(Vec::new());
//! #     image::RgbImage::from_pixel(800, 600, image::Rgb([200, 40, 40]))
//! #         .write_to(&mut out, image::ImageFormat::Png).unwrap();
//! #     out.into_inner()
//! # };
//! let made = variant::make(Source::Image(&png), &asked.spec, Encoding::Jpeg, &Limits::default())
//!     .unwrap();
//! assert_eq!((made.width, made.height), (640, 400));
//! # }
//! ```

mod params;
#[cfg(all(test, feature = "variants"))]
mod tests;
#[cfg(feature = "variants")]
mod transform;

pub use params::{
    Asked, DEFAULT_QUALITY, Fit, Format, MAX_SIDE, VariantSpec, default_presets, parse,
};
#[cfg(feature = "variants")]
pub use transform::{Encoding, Plan, Source, TransformError, Variant, has_alpha, make, plan};
