//! The video container probes: any bytes read as a whole file by ranged reads give facts or
//! none, within the limits, never a panic.
#![no_main]

use assetlib_core::extract::{Limits, video_info};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = video_info(&mut &data[..], &Limits::default());
});
