//! Library-tree assembly + serialization vs serialization alone of the identical bytes.
//!
//! ```text
//! cargo bench --bench tree
//! ```
//!
//! For each size (sections x entries, plus a few unsectioned assets; inputs shuffled;
//! realistic strings, some non-ASCII, some needing JSON escapes) it measures:
//! - `assemble+serialize`: `assetlib::tree::assemble` on the rows as a store returns them,
//!   serialized into a presized buffer;
//! - `serialize-only`: the identical output, already assembled into owned structs, serialized
//!   into a presized buffer of its own — the floor that any assembly is measured against.
//!
//! Both write into a buffer kept across iterations, so the ratio is the cost of assembly,
//! not of growing a 26 MB `Vec` from nothing. A third case, `assemble+serialize, rows in
//! page order`, feeds the same rows in the order `SledStore` and `PgStore` return them (sled
//! keeps entries in display order; PostgreSQL's load sorts them): with shuffled rows, writing the page in order reads memory in random
//! order, and past a few thousand entries those cache misses, not the assembly, are most of
//! the difference.
//!
//! Both outputs are asserted byte-identical before timing. After the criterion groups it
//! prints each size's ratio from an interleaved timing loop run in the same process.

// Every test, bench and example target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use assetlib::tree;
use assetlib::{AssetType, EntryRow, LibraryRows, Section};
use chrono::Utc;
use criterion::{BenchmarkId, Criterion, Throughput};
use serde::Serialize;
use uuid::Uuid;

#[path = "common/library.rs"]
mod library;
use library::rows;

const SIZES: [(usize, usize); 3] = [(10, 10), (100, 100), (1000, 100)];
const BASE: &str = "/files/";

/// The same output as owned, already-sorted structs: the serialize-only baseline.
#[derive(Serialize)]
struct OwnedDetail {
    id: Uuid,
    title: String,
    slug: String,
    description: Option<String>,
    cover_image_path: Option<String>,
    cover_overlay_color: Option<String>,
    cover_overlay_opacity: Option<f64>,
    published_at: Option<String>,
    is_paid: bool,
    price: Option<f64>,
    currency: String,
    show_asset_count: bool,
    allow_individual_downloads: bool,
    allow_bulk_download: bool,
    view_count: u64,
    created_at: String,
    updated_at: String,
    workspace_id: Option<String>,
    sections: Vec<OwnedSection>,
    unsectioned_assets: Vec<OwnedAsset>,
}

#[derive(Serialize)]
struct OwnedSection {
    id: Uuid,
    title: String,
    description: Option<String>,
    display_order: u32,
    collapsed_by_default: bool,
    assets: Vec<OwnedAsset>,
}

#[derive(Serialize)]
struct OwnedAsset {
    id: Uuid,
    title: String,
    description: Option<String>,
    asset_type: AssetType,
    thumbnail_url: Option<String>,
    thumbnail_placeholder: Option<String>,
    duration_seconds: Option<f64>,
    tags: Vec<String>,
    display_order: u32,
}

fn owned(rows: &LibraryRows) -> OwnedDetail {
    let ts = |t: chrono::DateTime<Utc>| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    let asset = |r: &EntryRow| OwnedAsset {
        id: r.entry.asset_id,
        title: r
            .entry
            .title
            .clone()
            .unwrap_or_else(|| r.asset.title.clone()),
        description: r
            .entry
            .description
            .clone()
            .or_else(|| r.asset.description.clone()),
        asset_type: r.asset.asset_type,
        thumbnail_url: r
            .asset
            .thumbnail_path
            .as_ref()
            .map(|p| format!("{BASE}{p}")),
        thumbnail_placeholder: r.asset.thumbnail_placeholder.clone(),
        duration_seconds: r.asset.duration_ms.map(|ms| ms as f64 / 1000.0),
        tags: r.asset.tags.clone(),
        display_order: r.entry.display_order,
    };
    let mut sections: Vec<&Section> = rows.sections.iter().collect();
    sections.sort_by_key(|s| (s.display_order, s.id));
    let mut in_order: Vec<&EntryRow> = rows.entries.iter().collect();
    in_order.sort_by_key(|r| (r.entry.display_order, r.entry.asset_id));
    let l = &rows.library;
    OwnedDetail {
        id: l.id,
        title: l.settings.title.clone(),
        slug: l.slug.clone(),
        description: l.settings.description.clone(),
        cover_image_path: l.settings.cover_image_path.clone(),
        cover_overlay_color: l.settings.cover_overlay_color.clone(),
        cover_overlay_opacity: l.settings.cover_overlay_opacity,
        published_at: l.published_at.map(ts),
        is_paid: l.settings.is_paid,
        price: l.settings.price,
        currency: l.settings.currency.clone(),
        show_asset_count: l.settings.show_asset_count,
        allow_individual_downloads: l.settings.allow_individual_downloads,
        allow_bulk_download: l.settings.allow_bulk_download,
        view_count: l.view_count,
        created_at: ts(l.created_at),
        updated_at: ts(l.updated_at),
        workspace_id: l.settings.workspace_id.clone(),
        sections: sections
            .iter()
            .map(|s| OwnedSection {
                id: s.id,
                title: s.title.clone(),
                description: s.description.clone(),
                display_order: s.display_order,
                collapsed_by_default: s.collapsed_by_default,
                assets: in_order
                    .iter()
                    .filter(|r| r.entry.section_id == Some(s.id))
                    .map(|r| asset(r))
                    .collect(),
            })
            .collect(),
        unsectioned_assets: in_order
            .iter()
            .filter(|r| r.entry.section_id.is_none())
            .map(|r| asset(r))
            .collect(),
    }
}

fn assemble_and_serialize(rows: &LibraryRows, out: &mut Vec<u8>) {
    out.clear();
    let detail = tree::assemble(rows, true, BASE);
    serde_json::to_writer(&mut *out, &detail).expect("serialize");
}

/// The rows of `size` in page order, the output identical to the shuffled rows'.
fn rows_in_order(size: (usize, usize)) -> LibraryRows {
    let rows = rows(size.0, size.1, false);
    assert_eq!(
        assembled(&rows),
        assembled(&self::rows(size.0, size.1, true)),
        "the order rows come in does not change the output"
    );
    rows
}

/// The detail of `rows` as `assemble` writes it.
fn assembled(rows: &LibraryRows) -> Vec<u8> {
    let mut out = Vec::new();
    assemble_and_serialize(rows, &mut out);
    out
}

fn serialize_only(detail: &OwnedDetail, out: &mut Vec<u8>) {
    out.clear();
    serde_json::to_writer(&mut *out, detail).expect("serialize");
}

fn label((s, e): (usize, usize)) -> String {
    format!("{s}x{e}")
}

fn bench(c: &mut Criterion) {
    for size in SIZES {
        let rows = rows(size.0, size.1, true);
        let expected = assembled(&rows);
        let detail = owned(&rows);
        let mut buf = Vec::with_capacity(expected.len());
        let mut full_buf = Vec::with_capacity(expected.len());
        serialize_only(&detail, &mut buf);
        assert_eq!(buf, expected, "the baseline writes the identical bytes");

        let mut group = c.benchmark_group("tree");
        group.throughput(Throughput::Bytes(expected.len() as u64));
        if size.0 * size.1 >= 100_000 {
            group.sample_size(20);
        }
        group.bench_with_input(
            BenchmarkId::new("assemble+serialize", label(size)),
            &rows,
            |b, rows| b.iter(|| assemble_and_serialize(black_box(rows), &mut full_buf)),
        );
        let in_order = rows_in_order(size);
        group.bench_with_input(
            BenchmarkId::new("assemble+serialize, rows in page order", label(size)),
            &in_order,
            |b, rows| b.iter(|| assemble_and_serialize(black_box(rows), &mut full_buf)),
        );
        group.bench_with_input(
            BenchmarkId::new("serialize-only", label(size)),
            &detail,
            |b, detail| b.iter(|| serialize_only(black_box(detail), &mut buf)),
        );
        group.finish();
    }
}

/// Interleaved timing of both paths, so the ratio comes from one run on one machine state.
fn print_ratios() {
    println!("\ntree: assembly+serialize vs serialize-only (ratio, lower is better)");
    println!(
        "  SledStore and PgStore hand rows over in page order (sled keeps entries in display \
         order, PostgreSQL's load sorts them): theirs is the page-order ratio"
    );
    for size in SIZES {
        let rows = rows(size.0, size.1, true);
        let detail = owned(&rows);
        let in_order = rows_in_order(size);
        let len = assembled(&rows).len();
        let mut buf = Vec::with_capacity(len);
        let mut full_buf = Vec::with_capacity(len);
        let (mut full, mut ordered, mut only) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
        let budget = Instant::now();
        let mut rounds = 0u32;
        while budget.elapsed() < Duration::from_secs(3) || rounds < 5 {
            let t = Instant::now();
            assemble_and_serialize(black_box(&rows), &mut full_buf);
            full += t.elapsed();
            let t = Instant::now();
            assemble_and_serialize(black_box(&in_order), &mut full_buf);
            ordered += t.elapsed();
            let t = Instant::now();
            serialize_only(black_box(&detail), &mut buf);
            only += t.elapsed();
            rounds += 1;
        }
        let bytes = buf.len();
        println!(
            "  {:>8}: {:>8} bytes  serialize-only {:>9.1?}  assemble+serialize {:>9.1?} (ratio {:.2}x), \
             rows in page order {:>9.1?} (ratio {:.2}x)  ({rounds} rounds)",
            label(size),
            bytes,
            only / rounds,
            full / rounds,
            full.as_secs_f64() / only.as_secs_f64(),
            ordered / rounds,
            ordered.as_secs_f64() / only.as_secs_f64(),
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
    print_ratios();
}
