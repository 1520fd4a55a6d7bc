//! PDFs whose page never finishes drawing (`extract::samples::runaway_pdfs`: forms that draw
//! forms, thousands of blended fills, a dash a ten-thousandth of a point long, saved states,
//! curves by the hundred thousand): stored with their counts and without a page, their
//! variants refused and remembered, and no worker kept from anyone else.

use std::path::{Path, PathBuf};
use std::time::Duration;

use assetlib::Config;
use assetlib::extract::{PdfRenderer, samples};
use serde_json::Value;

use crate::files::create_on;
use crate::harness::Harness;
use crate::support::{Ctx, id_of};

/// The shapes no renderer finishes within the deadline (or within its memory) at any size.
const NEVER_DRAWN: [&str; 4] = ["nested forms", "blended fills", "fine dash", "many curves"];

/// A configuration whose renders end within two seconds, on two workers of each kind, drawn
/// by the render child through a name of this case's own (`dir/render`), so that its
/// children can be told from those of the cases running beside it.
fn bounded(dir: &Path) -> (Config, PathBuf) {
    let program = dir.join("render");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_assetlib-pdf-render"), &program)
        .expect("link the render child");
    let mut config = Config::default();
    config.extract_limits.pdf_renderer = PdfRenderer::Child {
        program: program.clone(),
    };
    config.extract_limits.pdf_render_timeout = Duration::from_secs(2);
    config.preview_workers = 2;
    config.image_workers = 2;
    (config, program)
}

/// The processes running `program` (by the name they were started with).
fn running(program: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        panic!("/proc is not readable: the render children cannot be counted");
    };
    let wanted = program.as_os_str().as_encoded_bytes();
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| {
            let line = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            line.split(|&b| b == 0).next() == Some(wanted)
        })
        .count()
}

/// The status of a GET with the admin key, whatever its body.
async fn status_of(ctx: &Ctx, path: &str) -> u16 {
    let response = ctx
        .client
        .get(format!("{}{path}", ctx.base_url()))
        .bearer_auth(&ctx.admin)
        .send()
        .await
        .expect("request");
    response.status().as_u16()
}

/// GETs every path at once with the admin key: each answer's status and JSON, in order.
async fn all_at_once(ctx: &Ctx, paths: &[String]) -> Vec<(u16, Value)> {
    let mut running = tokio::task::JoinSet::new();
    for (i, path) in paths.iter().enumerate() {
        let request = ctx
            .client
            .get(format!("{}{path}", ctx.base_url()))
            .bearer_auth(&ctx.admin);
        running.spawn(async move {
            let response = request.send().await.expect("request");
            let status = response.status().as_u16();
            (i, status, response.json().await.unwrap_or(Value::Null))
        });
    }
    let mut answers = running.join_all().await;
    answers.sort_by_key(|(i, ..)| *i);
    answers.into_iter().map(|(_, s, j)| (s, j)).collect()
}

pub(crate) async fn runaway_pdfs_are_stored_without_a_page_and_their_variants_refused<
    H: Harness,
>() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, program) = bounded(dir.path());
    let ctx = Ctx::with_config::<H>(config).await;
    let mut never = Vec::new();
    for (name, pdf) in samples::runaway_pdfs() {
        let path = format!("runaway/{}.pdf", name.replace(' ', "-"));
        let asset = create_on(&ctx, &path, pdf, "pdf").await;
        assert_eq!(asset["page_count"], 1, "{name}: {asset}");
        if NEVER_DRAWN.contains(&name) {
            assert!(asset["thumbnail_path"].is_null(), "{name}: {asset}");
            assert!(asset["thumbnail_placeholder"].is_null(), "{name}: {asset}");
            never.push((name, id_of(&asset)));
        }
    }

    // Variants of each, several sizes at once: refused (or 503 past the queue), never a hang
    // or a 500; a page that could not be drawn is remembered with the asset's variants.
    let paths: Vec<String> = never
        .iter()
        .flat_map(|(_, id)| {
            [2048, 1999]
                .map(|w| format!("/api/v1/assets/{id}/image?w={w}&format=png"))
                .into_iter()
        })
        .collect();
    let answers = all_at_once(&ctx, &paths).await;
    for (path, (status, json)) in paths.iter().zip(&answers) {
        assert!(*status == 400 || *status == 503, "{path}: {status} {json}");
        if *status == 400 {
            assert_eq!(json["field"], "file", "{path}: {json}");
            let message = json["message"].as_str().unwrap_or("");
            assert!(message.contains("cannot be rendered"), "{path}: {json}");
        }
    }
    for (name, id) in &never {
        let got = ctx
            .get(&format!("/api/v1/assets/{id}/image?w=640&format=jpeg"))
            .await;
        assert_eq!(got.status, 400, "{name}: {}", got.json);
        let mark = ctx.files_dir().join(format!("derived/{id}/unrenderable"));
        assert!(mark.exists(), "{name}: no mark at {}", mark.display());
    }

    // Nothing is left running, and the workers are free for the next file.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(running(&program), 0, "render children still running");
    let plain = create_on(&ctx, "runaway/plain.pdf", samples::pdf(2, 50), "pdf").await;
    assert!(plain["thumbnail_path"].is_string(), "{plain}");
    let variant = format!("/api/v1/assets/{}/image?w=500&format=png", id_of(&plain));
    assert_eq!(status_of(&ctx, &variant).await, 200);
}

pub(crate) async fn a_variant_render_keeps_its_worker_after_the_client_hangs_up<H: Harness>() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut config, program) = bounded(dir.path());
    config.image_workers = 1;
    config.image_queue = 0;
    let ctx = Ctx::with_config::<H>(config).await;
    let forms = create_on(
        &ctx,
        "runaway/forms.pdf",
        samples::pdf_nested_forms(40, 4),
        "pdf",
    )
    .await;
    let plain = create_on(&ctx, "runaway/plain.pdf", samples::pdf(1, 20), "pdf").await;
    // A client that gives up on a render that never ends: the render goes on to its
    // deadline, and holds the one worker until then.
    let impatient = ctx
        .client
        .get(format!(
            "{}/api/v1/assets/{}/image?w=2048",
            ctx.base_url(),
            id_of(&forms)
        ))
        .bearer_auth(&ctx.admin)
        .timeout(Duration::from_millis(700))
        .send()
        .await;
    assert!(impatient.is_err(), "answered before the deadline");
    let plain_variant = format!("/api/v1/assets/{}/image?w=300", id_of(&plain));
    assert_eq!(
        status_of(&ctx, &plain_variant).await,
        503,
        "the worker was freed"
    );
    // Past the deadline the worker is free again.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(status_of(&ctx, &plain_variant).await, 200);
    assert_eq!(running(&program), 0, "render children still running");
}
