//! Image variants against npm `sharp`, side by side in one run.
//!
//! ```text
//! cargo bench --features full --bench images
//! ```
//!
//! The sharp benchmark task: a 2725 x 2225 JPEG (a textured picture the bench makes) to
//! 720 x 588 with Lanczos3, JPEG quality 80. Ours is `variant::make` in-process, one thread;
//! sharp's is `benches/sharp.mjs` with `sharp.concurrency(1)` (its prebuilt libvips comes with
//! the npm package, installed pinned under `target/tools/sharp` on first run; needs `node` and
//! `npm`). libjpeg-turbo, which decodes our JPEG at a reduced size (the default `jpeg-turbo`
//! feature), has its SIMD code only when `nasm` was there at build time: the bench stops when
//! `nasm` is missing (`apt-get install nasm`, then `cargo clean --release -p mozjpeg-sys`).
//! Rounds alternate between the two; the report gives the median operations per second of
//! each, the median of the rounds' ratios, and the SSIM of our output against sharp's (grey,
//! same size).

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use assetlib::extract::Limits;
use assetlib::variant::{self, Encoding, Source, VariantSpec};

#[path = "common/ssim.rs"]
mod ssim;

/// The sharp the bench compares with.
const SHARP: &str = "sharp@0.34.5";
const ROUNDS: usize = 9;
const ITERATIONS: usize = 30;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(
        Command::new("nasm").arg("-v").output().is_ok(),
        "nasm is missing, so libjpeg-turbo was built without its SIMD code: apt-get install \
         nasm, then cargo clean --release -p mozjpeg-sys"
    );
    let modules = install_sharp(&root.join("target/tools/sharp"));
    let scratch = tempfile::tempdir().expect("temp dir");
    let input = scratch.path().join("in.jpg");
    let source = picture(2725, 2225);
    std::fs::write(&input, &source).expect("write");
    let spec = VariantSpec {
        quality: 80,
        ..VariantSpec::inside(Some(720), Some(588))
    };
    let limits = Limits::default();
    let make = || {
        variant::make(Source::Image(&source), &spec, Encoding::Jpeg, &limits).expect("a variant")
    };
    let ours_out = make();
    assert_eq!((ours_out.width, ours_out.height), (720, 588));

    let theirs_path = scratch.path().join("sharp.jpg");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut vips = String::new();
    for _ in 0..ROUNDS {
        let done = Command::new("node")
            .arg(root.join("benches/sharp.mjs"))
            .arg(&input)
            .arg(&theirs_path)
            .arg(ITERATIONS.to_string())
            .env("SHARP_MODULES", modules.join("node_modules"))
            .env("UV_THREADPOOL_SIZE", "1")
            .env("VIPS_CONCURRENCY", "1")
            .output()
            .expect("run node");
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        let report: serde_json::Value =
            serde_json::from_slice(&done.stdout).expect("the sharp script's JSON");
        theirs.push(report["opsPerSecond"].as_f64().expect("ops per second"));
        vips = report["vips"].as_str().unwrap_or("").to_owned();

        let started = Instant::now();
        for _ in 0..ITERATIONS {
            black_box(make());
        }
        #[allow(clippy::cast_precision_loss)]
        ours.push(ITERATIONS as f64 / started.elapsed().as_secs_f64());
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    // Each round's ratio pairs runs made a moment apart, so a slower spell of the machine
    // weighs on both sides alike.
    let mut ratios: Vec<f64> = ours.iter().zip(&theirs).map(|(o, t)| o / t).collect();
    let ratio = median(&mut ratios);
    let (ours, theirs) = (median(&mut ours), median(&mut theirs));
    let reference = image::open(&theirs_path)
        .expect("sharp's output")
        .to_luma8();
    let mine = image::load_from_memory(&ours_out.bytes)
        .expect("our output")
        .to_luma8();
    assert_eq!(mine.dimensions(), reference.dimensions());
    println!(
        "2725 x 2225 JPEG -> 720 x 588, Lanczos3, quality 80, one thread ({} bytes in)",
        source.len()
    );
    println!(
        "  ours: {ours:.1} ops/s; sharp {SHARP} (libvips {vips}): {theirs:.1} ops/s (medians of \
         {ROUNDS} rounds of {ITERATIONS}); ratio {ratio:.2}x (median of the rounds' ratios)"
    );
    println!(
        "  output: ours {} bytes, sharp's {} bytes; SSIM against sharp's (grey) {:.4}",
        ours_out.bytes.len(),
        std::fs::metadata(&theirs_path)
            .map(|m| m.len())
            .unwrap_or(0),
        ssim::ssim(&mine, &reference)
    );
}

/// The pinned sharp under `dir` (installed with npm when missing); answers `dir`.
fn install_sharp(dir: &Path) -> std::path::PathBuf {
    if !dir.join("node_modules/sharp/package.json").exists() {
        std::fs::create_dir_all(dir).expect("create the tools folder");
        let done = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(dir)
            .arg(SHARP)
            .status()
            .unwrap_or_else(|e| {
                panic!("npm is needed to install {SHARP} ({e}): apt-get install npm")
            });
        assert!(done.success(), "npm install {SHARP} failed");
    }
    dir.to_owned()
}

/// A photo-like JPEG (quality 90, the same every run): fractal noise, whose detail falls off
/// with its size as a photo's does (a 1/f spectrum), in colours that share their structure.
fn picture(width: u32, height: u32) -> Vec<u8> {
    /// A value from -1 to 1 at grid point (x, y) of octave `seed`.
    fn lattice(x: u32, y: u32, seed: u32) -> f64 {
        let mut h = x.wrapping_mul(0x9E37_79B1)
            ^ y.wrapping_mul(0x85EB_CA77)
            ^ seed.wrapping_mul(0xC2B2_AE3D);
        h ^= h >> 15;
        h = h.wrapping_mul(0x2C1B_3C6D);
        h ^= h >> 12;
        f64::from(h % 2001) / 1000.0 - 1.0
    }
    /// Smoothly interpolated lattice values, cells of `cell` pixels.
    fn smooth(x: u32, y: u32, cell: u32, seed: u32) -> f64 {
        let (gx, gy) = (x / cell, y / cell);
        let t = |v: u32| {
            let f = f64::from(v % cell) / f64::from(cell);
            f * f * (3.0 - 2.0 * f)
        };
        let (tx, ty) = (t(x), t(y));
        let top = lattice(gx, gy, seed) * (1.0 - tx) + lattice(gx + 1, gy, seed) * tx;
        let bottom = lattice(gx, gy + 1, seed) * (1.0 - tx) + lattice(gx + 1, gy + 1, seed) * tx;
        top * (1.0 - ty) + bottom * ty
    }
    let fractal = |x: u32, y: u32, seed: u32| {
        (0..9)
            .map(|octave| {
                let cell = 768 >> octave;
                smooth(x, y, cell.max(1), seed * 16 + octave) * 0.62f64.powi(octave as i32)
            })
            .sum::<f64>()
    };
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        let light = fractal(x, y, 1);
        let channel = |seed: u32, bias: f64| {
            let v = 120.0 + 85.0 * light + 30.0 * fractal(x, y, seed) + bias;
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let v = v.clamp(0.0, 255.0) as u8;
            v
        };
        image::Rgb([channel(2, 10.0), channel(3, 0.0), channel(4, -15.0)])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
        .encode_image(&image)
        .expect("encode");
    out.into_inner()
}
