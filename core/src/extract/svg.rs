//! SVG images: whether a text is one, and its size from the root element. SVG is XML, not
//! raster data, so none of this decodes pixels.

use quick_xml::events::{BytesStart, Event};

/// How far into an SVG file its root element is looked for.
const SVG_ROOT_WITHIN: u64 = 64 * 1024;

/// Whether UTF-8 text is an SVG image: its root element is `svg`.
pub(super) fn is_svg(text: &[u8]) -> bool {
    with_svg_root(text, |_| ()).is_some()
}

/// The size of an SVG image: `width` and `height` in absolute units, completed or replaced
/// by the `viewBox` where they are missing or relative.
pub(super) fn size(text: &[u8]) -> Option<(u32, u32)> {
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
