//! Every reader at once: any bytes, of a type sniffed from them, give fields and a thumbnail
//! or a clear error, never a panic.
#![no_main]

use assetlib_core::extract::{Limits, preview};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let bytes = bytes::Bytes::copy_from_slice(data);
    let _ = preview(&bytes, "file", None, 320, &Limits::default());
});
