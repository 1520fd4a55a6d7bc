//! PDFs: the pre-scan, the page and word counts and the page 1 render, on bytes declared a
//! PDF (seeded with real ones), never a panic or a hang past the fuzzer's timeout.
#![no_main]

use assetlib_core::AssetType;
use assetlib_core::extract::{Limits, preview};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let bytes = bytes::Bytes::copy_from_slice(data);
    let _ = preview(&bytes, "file.pdf", Some(AssetType::Pdf), 320, &Limits::default());
});
