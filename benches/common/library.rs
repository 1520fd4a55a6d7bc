//! A library's rows as a store hands them over, the same on every run: the input of the
//! tree-assembly benches (`tree.rs`, criterion) and of the instruction counts
//! (`instructions.rs`, gungraun).

use assetlib::{
    AssetType, EntryAsset, EntryRow, Library, LibraryEntry, LibraryRows, LibrarySettings, Section,
};
use chrono::{TimeZone, Utc};
use uuid::Uuid;

/// Unsectioned assets in every generated library.
const UNSECTIONED: usize = 5;

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
pub(crate) fn rows(sections: usize, per_section: usize, shuffled: bool) -> LibraryRows {
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
