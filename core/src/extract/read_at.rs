//! [`ReadAt`]: random access to a file, in memory or in a store.

/// Random access to a file's bytes: a slice in memory, or ranged reads of a stored file.
pub trait ReadAt {
    /// The file's size in bytes.
    fn size(&self) -> u64;
    /// The bytes from `offset` on, at most `len` of them (fewer only at the end of the file).
    ///
    /// # Errors
    /// Whatever the underlying read fails with.
    fn read_at(&mut self, offset: u64, len: usize) -> std::io::Result<Vec<u8>>;
}

impl ReadAt for &[u8] {
    fn size(&self) -> u64 {
        self.len() as u64
    }

    fn read_at(&mut self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        let end = start.saturating_add(len).min(self.len());
        Ok(self[start..end].to_vec())
    }
}
