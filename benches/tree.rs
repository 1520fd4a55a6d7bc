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
use assetlib::{
    AssetType, EntryAsset, EntryRow, Library, LibraryEntry, LibraryRows, LibrarySettings, Section,
};
use chrono::{TimeZone, Utc};
use criterion::{BenchmarkId, Criterion, Throughput};
use serde::Serialize;
use uuid::Uuid;

const SIZES: [(usize, usize); 3] = [(10, 10), (100, 100), (1000, 100)];
const UNSECTIONED: usize = 5;
const BASE: &str = "/files/";

/// A small deterministic generator, so every run benches the same input.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

const WORDS: [&str; 12] = [
    "brand",
    "Guidelines",
    "logo",
    "Überblick",
    "café",
    "report \"Q3\"",
    "naïve",
    "漢字",
    "path\\to",
    "line\nbreak",
    "emoji 🎨",
    "tab\tstop",
];

fn text(rng: &mut Rng, words: usize) -> String {
    (0..words)
        .map(|_| WORDS[(rng.next() % WORDS.len() as u64) as usize])
        .collect::<Vec<_>>()
        .join(" ")
}

/// The rows of a library; `shuffled` hands them over in random order (as any store may),
/// else in page order (as `SledStore` and `PgStore` return them).
fn rows(sections: usize, per_section: usize, shuffled: bool) -> LibraryRows {
    let mut rng = Rng(0x5eed ^ (sections * 1000 + per_section) as u64);
    let at = Utc
        .with_ymd_and_hms(2026, 11, 22, 10, 15, 30)
        .single()
        .expect("date");
    let library = Library {
        id: Uuid::from_u128(1),
        settings: LibrarySettings {
            title: "Brand kit — 2026 édition".into(),
            description: Some(text(&mut rng, 20)),
            workspace_id: Some("ws-42".into()),
            cover_image_path: Some("/covers/brand.png".into()),
            cover_overlay_color: Some("#1A2B3C".into()),
            cover_overlay_opacity: Some(0.4),
            show_asset_count: true,
            allow_individual_downloads: true,
            allow_bulk_download: false,
            is_paid: true,
            price: Some(49.0),
            currency: "EUR".into(),
            published: true,
        },
        slug: "brand-kit-2026".into(),
        published_at: Some(at),
        view_count: 12345,
        created_at: at,
        updated_at: at,
    };
    let section_list: Vec<Section> = (0..sections)
        .map(|i| Section {
            id: Uuid::from_u128(rng.next() as u128),
            title: text(&mut rng, 3),
            description: (i % 3 == 0).then(|| text(&mut rng, 8)),
            display_order: i as u32,
            collapsed_by_default: i % 4 == 0,
        })
        .collect();
    let types = [
        AssetType::Pdf,
        AssetType::Image,
        AssetType::Video,
        AssetType::Audio,
        AssetType::Document,
    ];
    let mut entries = Vec::with_capacity(sections * per_section + UNSECTIONED);
    let entry = |rng: &mut Rng, section_id: Option<Uuid>, order: usize| {
        let n = rng.next();
        EntryRow {
            entry: LibraryEntry {
                asset_id: Uuid::from_u128(((n as u128) << 64) | rng.next() as u128),
                section_id,
                display_order: order as u32,
                title: n.is_multiple_of(5).then(|| text(rng, 4)),
                description: n.is_multiple_of(7).then(|| text(rng, 10)),
            },
            asset: EntryAsset {
                title: text(rng, 4),
                description: n.is_multiple_of(2).then(|| text(rng, 12)),
                asset_type: types[(n % 5) as usize],
                thumbnail_path: (!n.is_multiple_of(3)).then(|| format!("thumbnails/{n:016x}.png")),
                thumbnail_placeholder: (!n.is_multiple_of(3))
                    .then(|| "1QcSHQRnh493V4dIh4eXh1h4kJUI".into()),
                duration_ms: None,
                published: true,
                tags: (0..n % 3).map(|k| format!("tag {k}")).collect(),
            },
        }
    };
    for s in &section_list {
        for j in 0..per_section {
            entries.push(entry(&mut rng, Some(s.id), j));
        }
    }
    for j in 0..UNSECTIONED {
        entries.push(entry(&mut rng, None, j));
    }
    if !shuffled {
        return LibraryRows {
            library,
            sections: section_list,
            entries,
        };
    }
    // Shuffle: stores may return rows in any order.
    for i in (1..entries.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        entries.swap(i, j);
    }
    let mut section_list = section_list;
    for i in (1..section_list.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        section_list.swap(i, j);
    }
    LibraryRows {
        library,
        sections: section_list,
        entries,
    }
}

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
