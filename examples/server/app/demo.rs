//! `--demo`: sample assets of every type and a published sample library, added once.
//!
//! Every record has a fixed id, so seeding is idempotent: each part is added only if it is
//! missing, and the last asset added marks the demo as done. A restart with `--demo` therefore
//! changes nothing, even if the sample library was deleted in the meantime; a seeding cut short
//! by a crash is completed on the next start.

use assetlib::extract::samples;
use assetlib::validate::{NewAsset, library_doc};
use assetlib::{AssetType, Service};
use serde_json::{Value, json};
use std::net::SocketAddr;

use uuid::Uuid;

use super::BoxError;

/// The sample library's id.
pub(crate) const LIBRARY_ID: Uuid = Uuid::from_u128(0x6a1f_0c2e_5b7d_4e18_9c3a_d0e5_f1a2_b001);
/// The sample library's slug (unless another library already had it).
pub(crate) const LIBRARY_SLUG: &str = "sample-brand-library";

/// One sample asset.
struct Sample {
    title: &'static str,
    description: &'static str,
    asset_type: AssetType,
    external_url: Option<&'static str>,
    is_public: bool,
    /// A real file for it: its name under `demo/` in the file store, and its content.
    file: Option<SampleFile>,
    /// Whether it is published (else a draft).
    published: bool,
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

/// A two-second clip with sound (from the committed media corpus, `testdata/media`).
fn product_tour_mp4() -> Vec<u8> {
    include_bytes!("../../../testdata/media/h264-aac.mp4").to_vec()
}

/// Four seconds of sound with cover art, which becomes its thumbnail.
fn podcast_wav() -> Vec<u8> {
    samples::wav(4_000, 22_050, 1, Some(&samples::jpeg(600, 600)))
}

const SAMPLES: [Sample; 12] = [
    Sample {
        title: "Brand guidelines",
        description: "Logo use, colours and type, in twelve pages.",
        asset_type: AssetType::Pdf,
        external_url: None,
        is_public: true,
        file: Some(("brand-guidelines.pdf", guidelines_pdf)),
        published: true,
    },
    Sample {
        title: "Logo (full colour)",
        description: "The primary logo on a transparent background.",
        asset_type: AssetType::Image,
        external_url: None,
        is_public: true,
        file: Some(("logo.png", logo_png)),
        published: true,
    },
    Sample {
        title: "Team photo 2026",
        description: "The whole team at the spring offsite.",
        asset_type: AssetType::Image,
        external_url: None,
        is_public: false,
        file: Some(("team-photo-2026.jpg", team_jpeg)),
        published: true,
    },
    Sample {
        title: "Product one-pager",
        description: "What the product does, for press and partners.",
        asset_type: AssetType::Document,
        external_url: None,
        is_public: true,
        file: Some(("product-one-pager.docx", one_pager_docx)),
        published: true,
    },
    Sample {
        title: "Product tour",
        description: "A short walk through the app.",
        asset_type: AssetType::Video,
        external_url: None,
        is_public: true,
        file: Some(("product-tour.mp4", product_tour_mp4)),
        published: true,
    },
    Sample {
        title: "Podcast: episode 1",
        description: "How the company started.",
        asset_type: AssetType::Audio,
        external_url: None,
        is_public: false,
        file: Some(("podcast-episode-1.wav", podcast_wav)),
        published: true,
    },
    Sample {
        title: "Launch keynote",
        description: "The launch talk, hosted on YouTube.",
        asset_type: AssetType::ExternalVideo,
        external_url: Some("https://www.youtube.com/watch?v=aqz-KE-bpKQ"),
        is_public: true,
        file: None,
        published: true,
    },
    Sample {
        title: "Company website",
        description: "Where customers find us.",
        asset_type: AssetType::Link,
        external_url: Some("https://example.com/"),
        is_public: true,
        file: None,
        published: true,
    },
    Sample {
        title: "Press kit",
        description: "Everything a journalist asks for.",
        asset_type: AssetType::Collection,
        external_url: None,
        is_public: false,
        file: None,
        published: true,
    },
    Sample {
        title: "Rebrand proposal",
        description: "Next year's look, not yet approved: a draft only writers see.",
        asset_type: AssetType::Document,
        external_url: None,
        is_public: false,
        file: None,
        published: false,
    },
    Sample {
        title: "Webinar recording",
        description: "Coming soon: the recording is being edited.",
        asset_type: AssetType::Video,
        external_url: None,
        is_public: true,
        file: None,
        published: true,
    },
    Sample {
        title: "Website source",
        description: "The site's repository.",
        asset_type: AssetType::Git,
        external_url: Some("https://example.com/website.git"),
        is_public: false,
        file: None,
        published: true,
    },
];

/// Adds the demo data unless it was added before, and prints where to find it.
pub(crate) async fn seed_and_show(service: &Service, addr: SocketAddr) -> Result<(), BoxError> {
    let added = seed(service).await?;
    let library = format!("http://{addr}/api/v1/libraries/{LIBRARY_ID}?include_assets=true");
    if added {
        println!(
            "  Demo data added: {} sample assets (one a draft) and a published library:",
            SAMPLES.len()
        );
    } else {
        println!(
            "  Demo data (added before): {} sample assets (one a draft) and a library:",
            SAMPLES.len()
        );
    }
    println!("      {library}");
    println!("  and as a website would show it (the page asks for a key if the address has none):");
    println!("      http://{addr}/site/?library={LIBRARY_SLUG}&key=<your key>");
    println!();
    Ok(())
}

/// Adds the demo data unless it was added before (the sample library is written last, so
/// its presence says so). Returns whether anything was added. Everything goes through the
/// service's typed API, so the demo data passes the same rules as data sent over HTTP.
pub(crate) async fn seed(service: &Service) -> Result<bool, BoxError> {
    if service.store().load_library(LIBRARY_ID).await?.is_some() {
        return Ok(false);
    }
    let mut ids = Vec::with_capacity(SAMPLES.len());
    for sample in &SAMPLES {
        ids.push(add_asset(service, sample).await?);
    }
    let doc = library_doc(library(&ids).to_string().as_bytes(), service.config())?;
    service.save_library(LIBRARY_ID, doc).await?;
    service.store().flush().await?;
    Ok(true)
}

/// Creates one sample asset (its file put in the store first), returning its id.
async fn add_asset(service: &Service, s: &Sample) -> Result<Uuid, BoxError> {
    let file_path = match s.file {
        Some((name, content)) => {
            let path = format!("demo/{name}");
            service.files().put(&path, content().into()).await?;
            Some(path)
        }
        None => None,
    };
    let new = NewAsset::from_json(
        &json!({
            "title": s.title,
            "description": s.description,
            "asset_type": s.asset_type.as_str(),
            "external_url": s.external_url,
            "is_public": s.is_public,
            "published": s.published,
            "file_path": file_path,
        }),
        service.config(),
    )?;
    Ok(service.create_asset(new).await?.id)
}

/// The sample library's document: the team photo as its cover, a section of two assets, one of three (a video and an
/// audio file with their previews, and a video without a file yet) and two unsectioned assets,
/// one title overridden. Libraries hold pdf, image, video, audio and document assets only.
/// `ids` are the sample assets' ids, in the order of [`SAMPLES`].
fn library(ids: &[Uuid]) -> Value {
    let entry = |sample: usize, title: Option<&str>| json!({"asset_id": ids[sample - 1], "title": title, "description": null});
    let section_id = |n: u128| Uuid::from_u128(LIBRARY_ID.as_u128() + n);
    json!({
        "title": "Sample brand library",
        "slug": LIBRARY_SLUG,
        "description": "A published library of the demo assets.",
        // The team photo, through its `cover` variant (the example page asks for the size
        // the screen needs).
        "cover_image_path": format!("/api/v1/assets/{}/image?preset=cover", ids[2]),
        "cover_overlay_color": "#1A2B3C",
        "cover_overlay_opacity": 0.4,
        "show_asset_count": true,
        "allow_individual_downloads": true,
        "allow_bulk_download": false,
        "is_paid": false,
        "currency": "USD",
        "published": true,
        "sections": [
            {"id": section_id(1), "title": "Brand",
             "description": "Logos and the rules for using them.",
             "collapsed_by_default": false,
             "assets": [entry(1, None), entry(2, Some("Primary logo"))]},
            {"id": section_id(2), "title": "Media",
             "description": "Video and audio about the product.",
             "collapsed_by_default": false,
             "assets": [entry(5, None), entry(6, None), entry(11, None)]},
        ],
        "unsectioned_assets": [entry(4, None), entry(3, None)],
    })
}
