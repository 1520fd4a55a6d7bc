//! Large media files made on the spot, for the upload tests and benches.

use std::io::{BufWriter, Write as _};
use std::path::Path;

use crate::tools::workspace_root;

/// Writes a video of `size` bytes at `path`: the committed faststart MP4
/// `testdata/media/h264-faststart.mp4` (its index first), then one `free` box of pseudo-random
/// bytes from `seed` (which players and probes skip, and nothing compresses). Every byte
/// written is handed to `observe` too, in order (to hash the file as it is made).
///
/// # Panics
/// When the sample cannot be read, `size` leaves no room for the box, or the file cannot be
/// written.
pub fn write_big_video(path: &Path, size: u64, seed: u64, mut observe: impl FnMut(&[u8])) {
    let sample = workspace_root().join("testdata/media/h264-faststart.mp4");
    let head =
        std::fs::read(&sample).unwrap_or_else(|e| panic!("cannot read {}: {e}", sample.display()));
    let rest = size
        .checked_sub(head.len() as u64)
        .filter(|rest| *rest > 16)
        .unwrap_or_else(|| panic!("{size} bytes leave no room for the free box"));
    let file = std::fs::File::create(path)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut put = |bytes: &[u8]| {
        out.write_all(bytes)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        observe(bytes);
    };
    put(&head);
    // A box with a 64-bit size: 1, `free`, then the size of the whole box.
    put(&1u32.to_be_bytes());
    put(b"free");
    put(&rest.to_be_bytes());
    let mut left = rest - 16;
    let mut state = seed | 1;
    let mut block = vec![0u8; 1 << 20];
    while left > 0 {
        for word in block.chunks_exact_mut(8) {
            // xorshift64: fast, and not compressible by anything on the way.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            word.copy_from_slice(&state.to_le_bytes());
        }
        let n = usize::try_from(left.min(block.len() as u64)).unwrap_or(block.len());
        put(&block[..n]);
        left -= n as u64;
    }
    out.flush()
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}
