//! Previews: what they cost, and how they compare with the real peers, side by side in one run.
//!
//! ```text
//! cargo bench --features full --bench previews
//! ```
//!
//! 1. **The cost of a 100-page PDF** (criterion): `extract::extract` (the page and word counts,
//!    all a create read before previews) against `extract::preview` (the counts and page 1
//!    rendered at 320 px, what a create reads now), and the ratio of their medians from an
//!    interleaved timing loop.
//! 2. **PDFs against `pdftoppm`** (Debian's `poppler-utils`): every PDF under
//!    `/usr/share/doc` (gzipped ones unpacked; files the tests did not write) and a few the
//!    bench makes itself. For each: our thumbnail (through `preview`, timed), and
//!    `pdftoppm -f 1 -l 1 -scale-to 320 -png` (timed, the process included); the SSIM of the two
//!    in grey at the same size (MSSIM over 8 x 8 windows, `image-compare`). It reports how many
//!    readable PDFs got a thumbnail, the median and 10th percentile SSIM, and p50/p95 times of
//!    both. A PDF `pdftoppm` cannot render either is not counted as readable.
//! 3. **Media against `ffprobe`** (Debian's `ffmpeg`): every file of `testdata/media`, probed
//!    live by `ffprobe` and read by `video_info` (video) or `extract` (audio): durations within
//!    ±0.05 s, sizes (rotation applied) and codec exactly.
//!
//! Parts 2 and 3 need `pdftoppm` and `ffprobe` on `PATH` and fail saying so when missing.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::hint::black_box;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use assetlib::AssetType;
use assetlib::extract::{self, Limits, PdfRenderer, samples};
use bytes::Bytes;
use criterion::Criterion;
use image_compare::Algorithm;

#[path = "common/ssim.rs"]
mod ssim;
use ssim::ssim;

fn main() {
    let hundred = Bytes::from(samples::pdf(100, 300));
    // Pages drawn as a server draws them: by the render child, bounded in time and memory
    // (its start is part of what a preview costs).
    let mut limits = Limits::default();
    limits.pdf_renderer = PdfRenderer::Child {
        program: env!("CARGO_BIN_EXE_assetlib-pdf-render").into(),
    };
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    let mut group = c.benchmark_group("100-page PDF");
    group.bench_function("extract (counts)", |b| {
        b.iter(|| extract::extract(black_box(&hundred), "a.pdf", Some(AssetType::Pdf), &limits))
    });
    group.bench_function("preview (counts + page 1)", |b| {
        b.iter(|| {
            extract::preview(
                black_box(&hundred),
                "a.pdf",
                Some(AssetType::Pdf),
                320,
                &limits,
            )
        })
    });
    group.finish();
    let (counts, both) = interleaved(&hundred, &limits);
    println!(
        "\n100-page PDF ({} bytes): counts {:.1} ms, counts + page 1 {:.1} ms: {:.2}x\n",
        hundred.len(),
        ms(counts),
        ms(both),
        both.as_secs_f64() / counts.as_secs_f64()
    );

    require("pdftoppm", "poppler-utils");
    require("ffprobe", "ffmpeg");
    pdfs_against_pdftoppm(&limits);
    media_against_ffprobe(&limits);
}

/// Medians of `extract` and `preview` on `pdf`, timed in turn.
fn interleaved(pdf: &Bytes, limits: &Limits) -> (Duration, Duration) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..101 {
        let t = Instant::now();
        let _ = black_box(extract::extract(pdf, "a.pdf", Some(AssetType::Pdf), limits));
        a.push(t.elapsed());
        let t = Instant::now();
        let _ = black_box(extract::preview(
            pdf,
            "a.pdf",
            Some(AssetType::Pdf),
            320,
            limits,
        ));
        b.push(t.elapsed());
    }
    (median(&mut a), median(&mut b))
}

fn require(program: &str, package: &str) {
    let found = Command::new(program).arg("-v").output().is_ok();
    assert!(found, "{program} is missing: apt-get install {package}");
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let at = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[at]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Every PDF of the corpus: Debian's manuals (gzipped ones unpacked), and a few made here.
fn pdf_corpus() -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::from("/usr/share/doc")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path.to_string_lossy().into_owned();
            if path.is_dir() {
                stack.push(path);
            } else if name.ends_with(".pdf") {
                if let Ok(bytes) = std::fs::read(&path) {
                    found.push((name, bytes));
                }
            } else if name.ends_with(".pdf.gz")
                && let Ok(file) = std::fs::File::open(&path)
            {
                let mut bytes = Vec::new();
                if flate2::read::GzDecoder::new(file)
                    .read_to_end(&mut bytes)
                    .is_ok()
                {
                    found.push((name, bytes));
                }
            }
        }
    }
    found.sort();
    for (pages, words) in [(1, 50), (3, 400), (12, 120)] {
        found.push((format!("made: {pages} pages"), samples::pdf(pages, words)));
    }
    found
}

fn pdfs_against_pdftoppm(limits: &Limits) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let corpus = pdf_corpus();
    let (mut ours, mut theirs, mut ssims) = (Vec::new(), Vec::new(), Vec::new());
    let mut pairs = Vec::new();
    let (mut readable, mut thumbnails) = (0, 0);
    let mut missing = Vec::new();
    for (i, (name, bytes)) in corpus.iter().enumerate() {
        let input = scratch.path().join(format!("{i}.pdf"));
        std::fs::write(&input, bytes).expect("write");
        let out = scratch.path().join(format!("{i}"));
        let t = Instant::now();
        let done = Command::new("pdftoppm")
            .args([
                "-f",
                "1",
                "-l",
                "1",
                "-scale-to",
                "320",
                "-png",
                "-singlefile",
            ])
            .arg(&input)
            .arg(&out)
            .output()
            .expect("run pdftoppm");
        let their_time = t.elapsed();
        let Ok(reference) = image::open(out.with_extension("png")) else {
            continue; // pdftoppm cannot render it either: not a readable PDF
        };
        if !done.status.success() {
            continue;
        }
        readable += 1;
        theirs.push(their_time);
        let bytes = Bytes::from(bytes.clone());
        let t = Instant::now();
        let made = extract::preview(&bytes, "a.pdf", Some(AssetType::Pdf), 320, limits);
        ours.push(t.elapsed());
        let thumb = made.ok().and_then(|(_, t)| t.ok().flatten());
        let Some(thumb) = thumb else {
            missing.push(name.clone());
            continue;
        };
        thumbnails += 1;
        let mine = image::load_from_memory(&thumb.bytes).expect("our thumbnail decodes");
        let (w, h) = (
            mine.width().min(reference.width()),
            mine.height().min(reference.height()),
        );
        let grey = |img: &image::DynamicImage| {
            image::imageops::crop_imm(&img.to_luma8(), 0, 0, w, h).to_image()
        };
        let (mine, reference) = (grey(&mine), grey(&reference));
        let simple =
            image_compare::gray_similarity_structure(&Algorithm::MSSIMSimple, &mine, &reference)
                .expect("same size")
                .score;
        let standard = ssim(&mine, &reference);
        ssims.push((standard, simple));
        pairs.push((standard, name.clone(), mine, reference));
    }
    // The least similar pairs side by side (ours left), to look at.
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let shown = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/preview-pairs");
    let _ = std::fs::create_dir_all(&shown);
    for (i, (score, name, mine, theirs)) in pairs.iter().take(4).enumerate() {
        let mut both =
            image::GrayImage::from_pixel(mine.width() * 2 + 4, mine.height(), image::Luma([128]));
        image::imageops::replace(&mut both, mine, 0, 0);
        image::imageops::replace(&mut both, theirs, i64::from(mine.width()) + 4, 0);
        let _ = both.save(shown.join(format!("{i}.png")));
        println!("  pair {i}: SSIM {score:.3}: {name}");
    }
    let share = f64::from(thumbnails) / f64::from(readable.max(1)) * 100.0;
    println!(
        "PDFs: {} in the corpus, {readable} readable (pdftoppm renders page 1)",
        corpus.len()
    );
    println!("  thumbnails: {thumbnails} of {readable} ({share:.1}%)");
    for name in &missing {
        println!("  no thumbnail: {name}");
    }
    for (which, pick) in [
        ("SSIM (Gaussian 11 x 11, sigma 1.5)", 0),
        ("MSSIM (8 x 8 windows, image-compare)", 1),
    ] {
        let mut scores: Vec<f64> = ssims
            .iter()
            .map(|s| if pick == 0 { s.0 } else { s.1 })
            .collect();
        scores.sort_by(f64::total_cmp);
        if let (Some(lowest), Some(median), Some(p10)) = (
            scores.first(),
            scores.get(scores.len() / 2),
            scores.get(scores.len() / 10),
        ) {
            println!(
                "  {which} against pdftoppm, grey, same size: median {median:.3}, 10th percentile {p10:.3}, lowest {lowest:.3}"
            );
        }
    }
    let (o50, o95) = (median(&mut ours), percentile(&mut ours, 0.95));
    let (t50, t95) = (median(&mut theirs), percentile(&mut theirs, 0.95));
    println!(
        "  time per PDF (counts + page 1): ours p50 {:.1} ms, p95 {:.1} ms; pdftoppm (page 1, process included) p50 {:.1} ms, p95 {:.1} ms",
        ms(o50),
        ms(o95),
        ms(t50),
        ms(t95)
    );
}

fn media_against_ffprobe(limits: &Limits) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/media");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("testdata/media")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".sh") && !n.ends_with(".json") && !n.ends_with(".png"))
        .collect();
    names.sort();
    let (mut checked, mut worst) = (0, 0.0f64);
    for name in names {
        let path = dir.join(&name);
        let probe = Command::new("ffprobe")
            .args([
                "-v",
                "error",
                "-print_format",
                "json",
                "-show_format",
                "-show_streams",
            ])
            .arg(&path)
            .output()
            .expect("run ffprobe");
        let report: serde_json::Value =
            serde_json::from_slice(&probe.stdout).expect("ffprobe json");
        let seconds: f64 = report["format"]["duration"]
            .as_str()
            .and_then(|d| d.parse().ok())
            .expect("a duration");
        let bytes = std::fs::read(&path).expect("read");
        let video = report["streams"]
            .as_array()
            .expect("streams")
            .iter()
            .find(|s| s["codec_type"] == "video" && s["disposition"]["attached_pic"] != 1);
        let ms = match video {
            Some(stream) => {
                let got = extract::video_info(&mut &bytes[..], limits).expect("video facts");
                let rotation = stream["side_data_list"]
                    .as_array()
                    .and_then(|l| l.iter().find_map(|d| d["rotation"].as_i64()))
                    .unwrap_or(0);
                let (w, h) = (stream["width"].as_u64(), stream["height"].as_u64());
                let shown = if rotation.rem_euclid(180) == 90 {
                    (h, w)
                } else {
                    (w, h)
                };
                assert_eq!(
                    (got.width.map(u64::from), got.height.map(u64::from)),
                    shown,
                    "{name}"
                );
                assert_eq!(
                    got.media.video_codec.as_deref(),
                    stream["codec_name"].as_str(),
                    "{name}"
                );
                got.media.duration_ms
            }
            None => {
                extract::extract(&bytes, &name, Some(AssetType::Audio), limits)
                    .expect("audio")
                    .media
                    .duration_ms
            }
        };
        #[allow(clippy::cast_precision_loss)]
        let diff = (ms.expect("a duration") as f64 / 1000.0 - seconds).abs();
        assert!(diff <= 0.05, "{name}: {ms:?} ms, ffprobe {seconds} s");
        worst = worst.max(diff);
        checked += 1;
    }
    println!(
        "Media: {checked} files of testdata/media against ffprobe: sizes and codecs equal, durations within {worst:.3} s (at most 0.05 allowed)"
    );
}
