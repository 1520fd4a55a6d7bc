//! Uploads larger than `max_upload`, of every type (DESIGN.md §5 "Previews for every asset
//! type" and "Resumable and direct uploads"): a PDF, a WAV, a JPEG, a 300-megapixel scan, a
//! DOCX and a Markdown file, each sent by tus to a service whose `max_upload` is 1 MiB, make
//! their assets with the metadata a smaller file gets and the SHA-256 of their bytes; a file
//! of the store named by `file_path` is read the same way; and a 413 names the limit that
//! applies.
//!
//! Memory is bounded by construction, not measured here: a file larger than `max_upload` is
//! never read whole. `ingest` reads its first MiB, then `extract::preview_ranged` reads the
//! rest by ranges through one buffer of at most 1 MiB, holding only what each type needs (a
//! PDF's cross-reference sections and objects, a zip's central directory of at most 4 MiB,
//! the parts it inflates within `max_zip_inflated`, an image decoded within
//! `max_image_alloc`); core's unit tests (`extract::tests::large`, `extract::pdf::xref`)
//! count the bytes such reads take of files far larger than their limits.

use std::io::{Cursor, Read as _, Write as _};

use assetlib::Config;
use assetlib_core::extract::samples;
use reqwest::Method;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::files::{download, form, upload};
use crate::harness::Harness;
use crate::support::{Ctx, Resp, id_of};
use crate::uploads::{OCTETS, asset_at, create, metadata, patch, tus};

const MIB: usize = 1 << 20;

/// A service whose `max_upload` is 1 MiB and `max_resumable_upload` 8 MiB.
async fn small_limits<H: Harness>() -> Ctx {
    let mut config = Config::default();
    config.max_upload = MIB as u64;
    config.max_resumable_upload = 8 * MIB as u64;
    Ctx::with_config::<H>(config).await
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `jpeg` with application segments of 60 KiB before its frame header, so that its size is
/// read past its first MiB.
fn padded_jpeg(jpeg: &[u8], segments: usize) -> Vec<u8> {
    let mut out = jpeg[..2].to_vec();
    for _ in 0..segments {
        out.extend_from_slice(&[0xFF, 0xEF]);
        out.extend_from_slice(&(60 * 1024u16 + 2).to_be_bytes());
        out.extend(std::iter::repeat_n(b'x', 60 * 1024));
    }
    out.extend_from_slice(&jpeg[2..]);
    out
}

/// A PNG chunk of `kind` holding `data`, with its CRC.
fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(data);
    let mut out = u32::try_from(data.len())
        .expect("small")
        .to_be_bytes()
        .to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    out.extend_from_slice(&crc.sum().to_be_bytes());
    out
}

/// The header of a 20,000 x 15,000 RGB scan (300 megapixels) and 1.2 MiB of its data: more
/// pixels than `max_image_pixels` lets a thumbnail decode, so only its size is read.
fn scan() -> Vec<u8> {
    let mut ihdr = 20_000u32.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&15_000u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(png_chunk(b"IHDR", &ihdr));
    out.extend(png_chunk(b"IDAT", &samples::noise(MIB + MIB / 5)));
    out.extend(png_chunk(b"IEND", b""));
    out
}

/// A DOCX of `paragraphs` that also keeps a video of 1.5 MiB (stored, as Word keeps media).
fn docx_with_media(paragraphs: &[&str]) -> Vec<u8> {
    let docx = samples::docx(paragraphs);
    let mut archive = zip::ZipArchive::new(Cursor::new(&docx)).expect("a docx");
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..archive.len() {
        let mut part = archive.by_index(i).expect("a part");
        let mut bytes = Vec::new();
        part.read_to_end(&mut bytes).expect("inflate");
        out.start_file(part.name(), stored).expect("start");
        out.write_all(&bytes).expect("write");
    }
    out.start_file("word/media/video1.mp4", stored)
        .expect("start");
    out.write_all(&samples::noise(MIB + MIB / 2))
        .expect("write");
    out.finish().expect("finish").into_inner()
}

/// What the asset of each file must say.
struct Case {
    name: &'static str,
    asset_type: &'static str,
    bytes: Vec<u8>,
    /// Fields of the asset, as JSON.
    fields: Value,
    thumbnail: bool,
}

fn cases() -> Vec<Case> {
    let cover = samples::png(64, 64);
    let words = "word ".repeat(250_000);
    vec![
        Case {
            name: "catalogue.pdf",
            asset_type: "pdf",
            bytes: samples::pdf_with_filler(3, 40, MIB + MIB / 4),
            fields: json!({"mime_type": "application/pdf", "page_count": 3, "word_count": 120}),
            thumbnail: false,
        },
        Case {
            name: "interview.wav",
            asset_type: "audio",
            // 70 s of 8 kHz mono, its cover after the samples.
            bytes: samples::wav(70_000, 8000, 1, Some(&cover)),
            fields: json!({"mime_type": "audio/x-wav", "duration_seconds": 70.0,
                           "sample_rate": 8000, "channels": 1, "bitrate": 128_000}),
            thumbnail: true,
        },
        Case {
            name: "photo.jpg",
            asset_type: "image",
            bytes: padded_jpeg(&samples::jpeg(640, 480), 20),
            fields: json!({"mime_type": "image/jpeg", "width": 640, "height": 480}),
            thumbnail: true,
        },
        Case {
            name: "scan.png",
            asset_type: "image",
            bytes: scan(),
            fields: json!({"mime_type": "image/png", "width": 20_000, "height": 15_000}),
            thumbnail: false,
        },
        Case {
            name: "brief.docx",
            asset_type: "document",
            bytes: docx_with_media(&["Nine words in this paragraph of a long brief."]),
            fields: json!({"page_count": 1, "word_count": 9}),
            thumbnail: false,
        },
        Case {
            name: "notes.md",
            asset_type: "document",
            bytes: words.into_bytes(),
            fields: json!({"mime_type": "text/markdown", "word_count": 250_000}),
            thumbnail: false,
        },
    ]
}

/// Checks `asset` against `case`, and its checksum and download against the bytes.
async fn check(ctx: &Ctx, asset: &Value, case: &Case) {
    let name = case.name;
    assert_eq!(
        asset["asset_type"],
        json!(case.asset_type),
        "{name}: {asset}"
    );
    assert_eq!(asset["file_size"], json!(case.bytes.len()), "{name}");
    for (field, want) in case.fields.as_object().expect("an object") {
        assert_eq!(&asset[field], want, "{name}: {field} of {asset}");
    }
    assert_eq!(
        asset["thumbnail_path"].is_string(),
        case.thumbnail,
        "{name}: {asset}"
    );
    assert_eq!(
        asset["checksum_sha256"],
        json!(hex(&Sha256::digest(&case.bytes))),
        "{name}"
    );
    let (status, _, bytes) = download(ctx, &id_of(asset)).await;
    assert_eq!(status, 200, "{name}");
    assert!(bytes == case.bytes, "{name}: the download is the upload");
}

pub(crate) async fn every_type_may_be_uploaded_past_max_upload<H: Harness>() {
    let ctx = small_limits::<H>().await;
    for case in cases() {
        assert!(
            case.bytes.len() > MIB,
            "{} is larger than max_upload",
            case.name
        );
        let meta = metadata(&[("filename", case.name), ("asset_type", case.asset_type)]);
        let path = create(&ctx, case.bytes.len(), &meta).await;
        let half = case.bytes.len() / 2;
        let r = patch(&ctx, &path, 0, &case.bytes[..half]).await;
        assert_eq!(r.status, 204, "{}: {}", case.name, r.json);
        let r = patch(&ctx, &path, half, &case.bytes[half..]).await;
        assert_eq!(r.status, 204, "{}: {}", case.name, r.json);
        let asset = asset_at(&ctx, &r).await;
        check(&ctx, &asset, &case).await;
    }
    // Without a declared type the content says what it is, as for a smaller file.
    let case = &cases()[0];
    let path = create(
        &ctx,
        case.bytes.len(),
        &metadata(&[("filename", "any.pdf")]),
    )
    .await;
    let r = patch(&ctx, &path, 0, &case.bytes).await;
    assert_eq!(r.status, 204, "{}", r.json);
    check(&ctx, &asset_at(&ctx, &r).await, case).await;
}

pub(crate) async fn a_large_file_named_by_file_path_is_read_by_ranges<H: Harness>() {
    let ctx = small_limits::<H>().await;
    for case in cases().into_iter().take(2) {
        let path = format!("library/{}", case.name);
        ctx.put_file(&path, case.bytes.clone()).await;
        let r = ctx
            .send_json(
                Method::POST,
                "/api/v1/assets",
                Some(&ctx.admin),
                &json!({"title": case.name, "asset_type": case.asset_type, "file_path": path}),
            )
            .await;
        assert_eq!(r.status, 201, "{}: {}", case.name, r.json);
        check(&ctx, &r.json["data"], &case).await;
    }
}

pub(crate) async fn a_413_names_the_limit_that_applies<H: Harness>() {
    let ctx = small_limits::<H>().await;
    let too_large = |message: String| json!({"error": "Payload too large", "message": message});
    // One request: max_upload.
    let one_request = too_large(
        "Request body exceeds the limit of 1048576 bytes (max_upload: the largest file one \
         request uploads; larger files go through /api/v1/uploads)"
            .into(),
    );
    let big = vec![b'a'; MIB + 1];
    let r = upload(
        &ctx,
        form(&[("asset_type", "document")], Some(("big.txt", &big))),
    )
    .await;
    r.assert(413, one_request);
    // Resumable: max_resumable_upload, of any type; what an upload lacks for a PATCH.
    let r = Resp::from(
        tus(&ctx, Method::POST, "/api/v1/uploads")
            .header("upload-length", (8 * MIB + 1).to_string())
            .header("upload-metadata", metadata(&[("filename", "huge.pdf")])),
    )
    .await;
    r.assert(
        413,
        too_large(
            "Upload-Length exceeds the limit of 8388608 bytes (max_resumable_upload: the \
             largest resumable or direct upload, of any asset type)"
                .into(),
        ),
    );
    let r = Resp::from(tus(&ctx, Method::OPTIONS, "/api/v1/uploads")).await;
    assert_eq!(r.header("tus-max-size"), Some("8388608"));
    for asset_type in ["pdf", "audio", "image", "document", "video"] {
        let meta = metadata(&[("filename", "big"), ("asset_type", asset_type)]);
        let path = create(&ctx, 2 * MIB, &meta).await;
        assert_eq!(
            Resp::from(tus(&ctx, Method::DELETE, &path)).await.status,
            204
        );
    }
    let path = create(&ctx, 10, &metadata(&[("filename", "ten.txt")])).await;
    let r = Resp::from(
        tus(&ctx, Method::PATCH, &path)
            .header("content-type", OCTETS)
            .header("upload-offset", "0")
            .body(vec![b'a'; 11]),
    )
    .await;
    r.assert(
        413,
        too_large(
            "Request body exceeds the limit of 10 bytes (what this upload lacks: its \
             Upload-Length minus its Upload-Offset)"
                .into(),
        ),
    );
}
