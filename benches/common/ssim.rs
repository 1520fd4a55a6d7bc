//! The SSIM the benches compare pictures with.

/// SSIM as Wang, Bovik, Sheikh and Simoncelli define it ("Image quality assessment: from error
/// visibility to structural similarity", 2004): local means, variances and covariance under an
/// 11 x 11 Gaussian window of sigma 1.5, K1 = 0.01, K2 = 0.03, L = 255, averaged over every
/// window that fits in the image.
pub(crate) fn ssim(a: &image::GrayImage, b: &image::GrayImage) -> f64 {
    const RADIUS: usize = 5;
    let weights: Vec<f64> = (0..=2 * RADIUS)
        .map(|i| {
            #[allow(clippy::cast_precision_loss)]
            let x = i as f64 - RADIUS as f64;
            (-(x * x) / (2.0 * 1.5 * 1.5)).exp()
        })
        .collect();
    let total: f64 = weights.iter().sum();
    let weights: Vec<f64> = weights.iter().map(|w| w / total).collect();
    let (w, h) = (a.width() as usize, a.height() as usize);
    if w <= 2 * RADIUS || h <= 2 * RADIUS {
        return 1.0;
    }
    let plane = |f: &dyn Fn(f64, f64) -> f64| -> Vec<f64> {
        let raw: Vec<f64> = a
            .as_raw()
            .iter()
            .zip(b.as_raw())
            .map(|(x, y)| f(f64::from(*x), f64::from(*y)))
            .collect();
        // Separable blur, keeping only the windows that fit ("valid").
        let (vw, vh) = (w - 2 * RADIUS, h - 2 * RADIUS);
        let mut rows = vec![0.0; vw * h];
        for y in 0..h {
            for x in 0..vw {
                rows[y * vw + x] = (0..=2 * RADIUS)
                    .map(|k| weights[k] * raw[y * w + x + k])
                    .sum();
            }
        }
        let mut out = vec![0.0; vw * vh];
        for y in 0..vh {
            for x in 0..vw {
                out[y * vw + x] = (0..=2 * RADIUS)
                    .map(|k| weights[k] * rows[(y + k) * vw + x])
                    .sum();
            }
        }
        out
    };
    let (ma, mb) = (plane(&|x, _| x), plane(&|_, y| y));
    let (aa, bb, ab) = (
        plane(&|x, _| x * x),
        plane(&|_, y| y * y),
        plane(&|x, y| x * y),
    );
    let (c1, c2) = ((0.01f64 * 255.0).powi(2), (0.03f64 * 255.0).powi(2));
    let mut sum = 0.0;
    for i in 0..ma.len() {
        let (mx, my) = (ma[i], mb[i]);
        let (vx, vy, cov) = (aa[i] - mx * mx, bb[i] - my * my, ab[i] - mx * my);
        sum +=
            ((2.0 * mx * my + c1) * (2.0 * cov + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2));
    }
    #[allow(clippy::cast_precision_loss)]
    let mean = sum / ma.len() as f64;
    mean
}
