//! PDFs: the pre-scan, the page and word counts and the page 1 render, on bytes declared a
//! PDF (seeded with real ones and with pages that never finish drawing), never a panic or a
//! hang past the fuzzer's timeout. The page is drawn as a server draws it: by the render child
//! `benches/fuzz.sh` builds (`ASSETLIB_PDF_RENDER`), bounded in time and memory.
#![no_main]

use std::sync::OnceLock;

use assetlib_core::AssetType;
use assetlib_core::extract::{Limits, PdfRenderer, preview};
use libfuzzer_sys::fuzz_target;

fn limits() -> &'static Limits {
    static LIMITS: OnceLock<Limits> = OnceLock::new();
    LIMITS.get_or_init(|| {
        let program = std::env::var_os("ASSETLIB_PDF_RENDER")
            .expect("ASSETLIB_PDF_RENDER names the render child (benches/fuzz.sh builds it)");
        let mut limits = Limits::default();
        limits.pdf_renderer = PdfRenderer::Child {
            program: program.into(),
        };
        limits
    })
}

fuzz_target!(|data: &[u8]| {
    let bytes = bytes::Bytes::copy_from_slice(data);
    let _ = preview(&bytes, "file.pdf", Some(AssetType::Pdf), 320, limits());
});
