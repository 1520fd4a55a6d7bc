//! `--demo`: sample assets of every type and a published sample library, added once.
//!
//! Every record has a fixed id, so seeding is idempotent: each part is added only if it is
//! missing, and the last asset added marks the demo as done. A restart with `--demo` therefore
//! changes nothing, even if the sample library was deleted in the meantime; a seeding cut short
//! by a crash is completed on the next start.

use assetlib::extract::samples;
use assetlib::validate::NewAsset;
use assetlib::{Asset, AssetType, Library, LibraryEntry, LibraryWrite, Section, Service};
use std::net::SocketAddr;

use uuid::Uuid;

use super::BoxError;

/// The sample library's id.
pub(crate) const LIBRARY_ID: Uuid = Uuid::from_u128(0x6a1f_0c2e_5b7d_4e18_9c3a_d0e5_f1a2_b001);
/// The sample library's slug (unless another library already had it).
pub(crate) const LIBRARY_SLUG: &str = "sample-brand-library";

/// One sample asset.
struct Sample {
    id: u128,
    title: &'static str,
    description: &'static str,
    asset_type: AssetType,
    external_url: Option<&'static str>,
    is_public: bool,
    /// A real file for it: its name under `demo/` in the file store, and its content.
    file: Option<SampleFile>,
}

/// A sample's file: its name under `demo/` and a function making its content.
type SampleFile = (&'static str, fn() -> Vec<u8>);

fn guidelines_pdf() -> Vec<u8> {
    samples::pdf(12, 120)
}

fn logo_png() -> Vec<u8> {
    samples::png(800, 400)
}

fn team_jpeg() -> Vec<u8> {
    samples::jpeg(1200, 800)
}

fn one_pager_docx() -> Vec<u8> {
    samples::docx(&[
        "Product one-pager",
        "assetlib keeps every file, link and video of a brand in one place.",
        "Libraries publish them as sectioned pages that any website can render.",
    ])
}

const fn id(n: u128) -> u128 {
    0x6a1f_0c2e_5b7d_4e18_9c3a_d0e5_f1a2_a000 + n
}

const SAMPLES: [Sample; 10] = [
    Sample {
        id: id(1),
        title: "Brand guidelines",
        description: "Logo use, colours and type, in twelve pages.",
        asset_type: AssetType::Pdf,
        external_url: None,
        is_public: true,
        file: Some(("brand-guidelines.pdf", guidelines_pdf)),
    },
    Sample {
        id: id(2),
        title: "Logo (full colour)",
        description: "The primary logo on a transparent background.",
        asset_type: AssetType::Image,
        external_url: None,
        is_public: true,
        file: Some(("logo.png", logo_png)),
    },
    Sample {
        id: id(3),
        title: "Team photo 2026",
        description: "The whole team at the spring offsite.",
        asset_type: AssetType::Image,
        external_url: None,
        is_public: false,
        file: Some(("team-photo-2026.jpg", team_jpeg)),
    },
    Sample {
        id: id(4),
        title: "Product one-pager",
        description: "What the product does, for press and partners.",
        asset_type: AssetType::Document,
        external_url: None,
        is_public: true,
        file: Some(("product-one-pager.docx", one_pager_docx)),
    },
    Sample {
        id: id(5),
        title: "Product tour",
        description: "A two-minute walk through the app.",
        asset_type: AssetType::Video,
        external_url: None,
        is_public: true,
        file: None,
    },
    Sample {
        id: id(6),
        title: "Podcast: episode 1",
        description: "How the company started.",
        asset_type: AssetType::Audio,
        external_url: None,
        is_public: false,
        file: None,
    },
    Sample {
        id: id(7),
        title: "Launch keynote",
        description: "The launch talk, hosted on YouTube.",
        asset_type: AssetType::ExternalVideo,
        external_url: Some("https://www.youtube.com/watch?v=aqz-KE-bpKQ"),
        is_public: true,
        file: None,
    },
    Sample {
        id: id(8),
        title: "Company website",
        description: "Where customers find us.",
        asset_type: AssetType::Link,
        external_url: Some("https://example.com/"),
        is_public: true,
        file: None,
    },
    Sample {
        id: id(9),
        title: "Press kit",
        description: "Everything a journalist asks for.",
        asset_type: AssetType::Collection,
        external_url: None,
        is_public: false,
        file: None,
    },
    // Added last: its presence marks the demo as done.
    Sample {
        id: id(10),
        title: "Website source",
        description: "The site's repository.",
        asset_type: AssetType::Git,
        external_url: Some("https://example.com/website.git"),
        is_public: false,
        file: None,
    },
];

/// Adds the demo data unless it was added before, and prints where to find it.
pub(crate) async fn seed_and_show(service: &Service, addr: SocketAddr) -> Result<(), BoxError> {
    let added = seed(service).await?;
    let library = format!("http://{addr}/api/v1/libraries/{LIBRARY_ID}?include_assets=true");
    if added {
        println!(
            "  Demo data added: {} sample assets and a published library:",
            SAMPLES.len()
        );
    } else {
        println!(
            "  Demo data (added before): {} sample assets and a library:",
            SAMPLES.len()
        );
    }
    println!("      {library}");
    println!();
    Ok(())
}

/// Adds the demo data unless it was added before. Returns whether anything was added.
pub(crate) async fn seed(service: &Service) -> Result<bool, BoxError> {
    let store = service.store();
    let marker = Uuid::from_u128(SAMPLES[SAMPLES.len() - 1].id);
    if store.get_asset(marker).await?.is_some() {
        return Ok(false);
    }
    let (last, first) = SAMPLES.split_last().ok_or("no samples")?;
    for sample in first {
        add_asset(service, sample).await?;
    }
    if store.load_library(LIBRARY_ID).await?.is_none() {
        store.put_library(library()).await?;
    }
    add_asset(service, last).await?;
    store.flush().await?;
    Ok(true)
}

async fn add_asset(service: &Service, s: &Sample) -> Result<(), BoxError> {
    let store = service.store();
    let id = Uuid::from_u128(s.id);
    if store.get_asset(id).await?.is_some() {
        return Ok(());
    }
    let external_url = s.external_url.map(url::Url::parse).transpose()?;
    let video_embed = match (&external_url, s.asset_type) {
        (Some(url), AssetType::ExternalVideo) => {
            Some(assetlib::embed::video_embed(url, service.config())?)
        }
        _ => None,
    };
    let asset = Asset {
        id,
        ..Asset::from_new(NewAsset {
            title: s.title.to_owned(),
            description: Some(s.description.to_owned()),
            asset_type: s.asset_type,
            external_url: external_url.map(String::from),
            video_embed,
            is_public: s.is_public,
            file_path: None,
        })
    };
    let asset = match s.file {
        Some((name, content)) => {
            let path = format!("demo/{name}");
            service.files().put(&path, content().into()).await?;
            service.attach_file(asset, &path).await?
        }
        None => asset,
    };
    store.insert_asset(asset).await?;
    Ok(())
}

/// The sample library: two sections of two assets and two unsectioned assets, one title
/// overridden. Libraries hold pdf, image, video, audio and document assets only.
fn library() -> LibraryWrite {
    let now = assetlib::service::now();
    let section = |n: u128, title: &str, description: &str, order: u32| Section {
        id: Uuid::from_u128(LIBRARY_ID.as_u128() + n),
        title: title.to_owned(),
        description: Some(description.to_owned()),
        display_order: order,
        collapsed_by_default: false,
    };
    let brand = section(1, "Brand", "Logos and the rules for using them.", 0);
    let media = section(2, "Media", "Video and audio about the product.", 1);
    let entry =
        |sample: usize, section: Option<&Section>, order: u32, title: Option<&str>| LibraryEntry {
            asset_id: Uuid::from_u128(id(sample as u128)),
            section_id: section.map(|s| s.id),
            display_order: order,
            title: title.map(str::to_owned),
            description: None,
        };
    let entries = vec![
        entry(1, Some(&brand), 0, None),
        entry(2, Some(&brand), 1, Some("Primary logo")),
        entry(5, Some(&media), 0, None),
        entry(6, Some(&media), 1, None),
        entry(4, None, 0, None),
        entry(3, None, 1, None),
    ];
    LibraryWrite {
        library: Library {
            id: LIBRARY_ID,
            title: "Sample brand library".to_owned(),
            slug: LIBRARY_SLUG.to_owned(),
            description: Some("A published library of the demo assets.".to_owned()),
            workspace_id: None,
            cover_image_path: None,
            cover_overlay_color: Some("#1A2B3C".to_owned()),
            cover_overlay_opacity: Some(0.4),
            show_asset_count: true,
            allow_individual_downloads: true,
            allow_bulk_download: false,
            is_paid: false,
            price: None,
            currency: "USD".to_owned(),
            published: true,
            published_at: None,
            view_count: 0,
            created_at: now,
            updated_at: now,
        },
        slug_given: false,
        sections: vec![brand, media],
        entries,
    }
}
