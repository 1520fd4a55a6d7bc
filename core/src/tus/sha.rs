//! A SHA-256 that a resumable upload carries from request to request (and from replica to
//! replica) in its record: the hash's state after the bytes received so far, so the file's
//! checksum is computed while it streams in, never by reading it back. Built on `sha2`'s
//! compression function; the padding is FIPS 180-4 §5.1.1.

use serde::{Deserialize, Serialize};
use sha2::digest::generic_array::GenericArray;

/// The SHA-256 initial hash value (FIPS 180-4 §5.3.3).
const H0: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// The state of a SHA-256 over the first `hashed` bytes of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningSha256 {
    state: [u32; 8],
    /// Bytes hashed so far.
    hashed: u64,
    /// The bytes past the last whole 64-byte block (fewer than 64).
    rest: Vec<u8>,
}

impl Default for RunningSha256 {
    fn default() -> Self {
        RunningSha256 {
            state: H0,
            hashed: 0,
            rest: Vec::new(),
        }
    }
}

impl RunningSha256 {
    /// How many bytes it has hashed.
    pub fn hashed(&self) -> u64 {
        self.hashed
    }

    /// Hashes `bytes`, which follow those hashed so far.
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.hashed += bytes.len() as u64;
        if !self.rest.is_empty() {
            let take = (64 - self.rest.len()).min(bytes.len());
            self.rest.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.rest.len() < 64 {
                return;
            }
            sha2::compress256(&mut self.state, &[*GenericArray::from_slice(&self.rest)]);
            self.rest.clear();
        }
        let whole = bytes.len() / 64 * 64;
        for block in bytes[..whole].chunks_exact(64) {
            sha2::compress256(&mut self.state, &[*GenericArray::from_slice(block)]);
        }
        self.rest.extend_from_slice(&bytes[whole..]);
    }

    /// The digest of the bytes hashed.
    pub fn finish(&self) -> [u8; 32] {
        let mut state = self.state;
        let mut tail = self.rest.clone();
        tail.push(0x80);
        while tail.len() % 64 != 56 {
            tail.push(0);
        }
        tail.extend_from_slice(&(self.hashed.wrapping_mul(8)).to_be_bytes());
        for block in tail.chunks_exact(64) {
            sha2::compress256(&mut state, &[*GenericArray::from_slice(block)]);
        }
        let mut out = [0u8; 32];
        for (word, bytes) in state.iter().zip(out.chunks_exact_mut(4)) {
            bytes.copy_from_slice(&word.to_be_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn equals_sha2_over_any_split() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for len in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 1000, 5000] {
            let want: [u8; 32] = Sha256::digest(&data[..len]).into();
            for step in [1, 3, 63, 64, 65, 700] {
                let mut h = RunningSha256::default();
                for chunk in data[..len].chunks(step) {
                    // Through its serialized form, as a record carries it between requests.
                    let json = serde_json::to_string(&h).unwrap();
                    h = serde_json::from_str(&json).unwrap();
                    h.update(chunk);
                }
                assert_eq!(h.finish(), want, "len {len} step {step}");
                assert_eq!(h.hashed(), len as u64);
            }
        }
    }
}
