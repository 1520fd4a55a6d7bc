//! Every reader of a file read by ranges (a file larger than what is read whole): any bytes,
//! their first KiB handed over as the head, give fields and a thumbnail or a clear error,
//! never a panic, whatever the cross-reference sections, zip directory or headers claim.
#![no_main]

use assetlib_core::extract::{Limits, preview_ranged};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let head = &data[..data.len().min(1024)];
    let mut file = data;
    let _ = preview_ranged(head, &mut file, "file", None, 320, &Limits::default());
});
