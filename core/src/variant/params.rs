//! The parameters of a variant: `w`, `h`, `fit`, `format`, `q`, `dpr`, or `preset` alone.
//!
//! Numbers are ASCII digits (leading zeros allowed, no sign, no spaces), as every query number
//! of the API; `dpr` may have a fraction (`1.5`). A known parameter given twice, a value out of
//! range, an unknown preset or a preset beside any other parameter is a 400 naming the
//! parameter; parameters this module does not know (a signed link's, `expires_in`) are left
//! to others.

use std::collections::BTreeMap;

use crate::error::ApiError;

/// The largest `w` and `h`, and the largest side a variant is made at (after `dpr`).
pub const MAX_SIDE: u32 = 4096;
/// The quality when `q` is not given.
pub const DEFAULT_QUALITY: u8 = 80;

/// How a variant fills the box `w` x `h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Fit {
    /// The whole image, as large as fits in the box (the default).
    #[default]
    Inside,
    /// The box filled, the image's overflow cut off evenly on both sides.
    Cover,
    /// The whole image, as large as fits, centred on a box-sized canvas (white for JPEG,
    /// transparent otherwise).
    Contain,
}

/// The format a variant is asked in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// WebP when the client takes it (`Accept` names `image/webp`), else JPEG, or PNG for a
    /// source with transparency (the default).
    #[default]
    Auto,
    /// JPEG.
    Jpeg,
    /// PNG.
    Png,
    /// WebP.
    Webp,
}

/// A variant's size and format, as its parameters or a preset say (`dpr` already applied).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VariantSpec {
    /// The box's width in pixels (`None`: follows the height, or the source).
    pub width: Option<u32>,
    /// The box's height in pixels (`None`: follows the width, or the source).
    pub height: Option<u32>,
    /// How the image fills the box.
    pub fit: Fit,
    /// The format asked.
    pub format: Format,
    /// JPEG and WebP quality, 1-100.
    pub quality: u8,
}

impl Default for VariantSpec {
    fn default() -> Self {
        Self {
            width: None,
            height: None,
            fit: Fit::Inside,
            format: Format::Auto,
            quality: DEFAULT_QUALITY,
        }
    }
}

impl VariantSpec {
    /// The whole image within `width` x `height` (either may be `None`), format `auto`.
    pub const fn inside(width: Option<u32>, height: Option<u32>) -> Self {
        Self {
            width,
            height,
            fit: Fit::Inside,
            format: Format::Auto,
            quality: DEFAULT_QUALITY,
        }
    }

    /// The box `width` x `height` filled, format `auto`.
    pub const fn cover(width: u32, height: u32) -> Self {
        Self {
            width: Some(width),
            height: Some(height),
            fit: Fit::Cover,
            format: Format::Auto,
            quality: DEFAULT_QUALITY,
        }
    }

    /// The one spelling of this spec, as query parameters in a fixed order (`w` and `h` only
    /// when set): what signed image links carry and sign, and what names the variant in the
    /// derived cache. Equal specs spell alike, whichever parameters (or preset) asked for
    /// them, and [`parse`] reads the spelling back to the same spec.
    pub fn canonical(&self) -> String {
        let fit = match self.fit {
            Fit::Inside => "inside",
            Fit::Cover => "cover",
            Fit::Contain => "contain",
        };
        let format = match self.format {
            Format::Auto => "auto",
            Format::Jpeg => "jpeg",
            Format::Png => "png",
            Format::Webp => "webp",
        };
        let mut out = String::new();
        for (name, side) in [("w", self.width), ("h", self.height)] {
            if let Some(side) = side {
                out.push_str(&format!("{name}={side}&"));
            }
        }
        out.push_str(&format!("fit={fit}&format={format}&q={}", self.quality));
        out
    }
}

/// The presets of the ready server, and of [`crate::Config::default`]: `thumb` (320 inside),
/// `card` (640 x 400 cover), `cover` (1600 x 600 cover) and `full` (2048 inside).
pub fn default_presets() -> BTreeMap<String, VariantSpec> {
    [
        ("thumb", VariantSpec::inside(Some(320), Some(320))),
        ("card", VariantSpec::cover(640, 400)),
        ("cover", VariantSpec::cover(1600, 600)),
        ("full", VariantSpec::inside(Some(2048), Some(2048))),
    ]
    .into_iter()
    .map(|(name, spec)| (name.to_owned(), spec))
    .collect()
}

/// What a request's query asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The spec.
    pub spec: VariantSpec,
    /// The preset named, if the spec is one.
    pub preset: Option<String>,
}

/// Reads the variant parameters of `query` (raw, `application/x-www-form-urlencoded`).
pub fn parse(
    query: Option<&str>,
    presets: &BTreeMap<String, VariantSpec>,
) -> Result<Asked, ApiError> {
    let mut seen: BTreeMap<&'static str, String> = BTreeMap::new();
    for (name, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        let Some(known) = ["w", "h", "fit", "format", "q", "dpr", "preset"]
            .into_iter()
            .find(|k| *k == name)
        else {
            continue;
        };
        if seen.insert(known, value.into_owned()).is_some() {
            return Err(ApiError::validation(
                known,
                format!("{known} is given twice"),
            ));
        }
    }
    if let Some(name) = seen.remove("preset") {
        if let Some(other) = seen.keys().next() {
            return Err(ApiError::validation(
                *other,
                format!(
                    "{other} cannot be combined with preset: a preset sets the size and format"
                ),
            ));
        }
        let spec = presets.get(&name).copied().ok_or_else(|| {
            let known: Vec<&str> = presets.keys().map(String::as_str).collect();
            ApiError::validation(
                "preset",
                format!("preset must be one of: {}", known.join(", ")),
            )
        })?;
        return Ok(Asked {
            spec,
            preset: Some(name),
        });
    }
    let side = |name: &'static str| -> Result<Option<u32>, ApiError> {
        seen.get(name)
            .map(|v| {
                whole(v)
                    .filter(|n| (1..=u64::from(MAX_SIDE)).contains(n))
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        ApiError::validation(
                            name,
                            format!("{name} must be a whole number from 1 to {MAX_SIDE}"),
                        )
                    })
            })
            .transpose()
    };
    let (width, height) = (side("w")?, side("h")?);
    let fit = match seen.get("fit").map(String::as_str) {
        None | Some("inside") => Fit::Inside,
        Some("cover") => Fit::Cover,
        Some("contain") => Fit::Contain,
        Some(_) => {
            return Err(ApiError::validation(
                "fit",
                "fit must be one of: inside, cover, contain",
            ));
        }
    };
    let format = match seen.get("format").map(String::as_str) {
        None | Some("auto") => Format::Auto,
        Some("jpeg") => Format::Jpeg,
        Some("png") => Format::Png,
        Some("webp") => Format::Webp,
        Some(_) => {
            return Err(ApiError::validation(
                "format",
                "format must be one of: auto, jpeg, png, webp",
            ));
        }
    };
    let quality = match seen.get("q") {
        None => DEFAULT_QUALITY,
        Some(v) => whole(v)
            .filter(|q| (1..=100).contains(q))
            .and_then(|q| u8::try_from(q).ok())
            .ok_or_else(|| ApiError::validation("q", "q must be a whole number from 1 to 100"))?,
    };
    let dpr = match seen.get("dpr") {
        None => 1.0,
        Some(v) => decimal(v)
            .filter(|d| (1.0..=3.0).contains(d))
            .ok_or_else(|| ApiError::validation("dpr", "dpr must be a number from 1 to 3"))?,
    };
    let scaled = |side: Option<u32>| {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        side.map(|s| ((f64::from(s) * dpr).round() as u32).min(MAX_SIDE))
    };
    Ok(Asked {
        spec: VariantSpec {
            width: scaled(width),
            height: scaled(height),
            fit,
            format,
            quality,
        },
        preset: None,
    })
}

/// ASCII digits (leading zeros allowed), as a number (saturating past 64 bits, which every
/// range here refuses); `None` for anything else.
fn whole(v: &str) -> Option<u64> {
    (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())).then(|| v.parse().unwrap_or(u64::MAX))
}

/// Digits with at most one `.` between digits (`2`, `1.5`), as a number.
fn decimal(v: &str) -> Option<f64> {
    let (int, frac) = v.split_once('.').unwrap_or((v, "0"));
    let digits = |s: &str| !s.is_empty() && s.len() <= 8 && s.bytes().all(|b| b.is_ascii_digit());
    (digits(int) && digits(frac))
        .then(|| v.parse().ok())
        .flatten()
}
