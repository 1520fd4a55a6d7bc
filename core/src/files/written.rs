//! [`Written`]: the one clean-up of the files a failed request wrote.

use super::Files;

/// The files one request wrote to the store (an upload, a thumbnail), so that one clean-up
/// removes them all when the request fails. Files an app placed itself are never listed.
#[derive(Debug, Default)]
pub(crate) struct Written {
    paths: Vec<String>,
}

impl Written {
    /// Notes a file the request wrote.
    pub(crate) fn push(&mut self, path: String) {
        self.paths.push(path);
    }

    /// Notes each file the request wrote, if any.
    pub(crate) fn extend(&mut self, paths: impl IntoIterator<Item = String>) {
        self.paths.extend(paths);
    }

    /// The one clean-up point: keeps the files when the request succeeded, else removes every
    /// file it wrote.
    pub(crate) async fn settle<T, E>(self, files: &Files, outcome: &Result<T, E>) {
        if outcome.is_err() {
            self.discard(files).await;
        }
    }

    /// Removes every file written, whatever came of the request (an upload answered with an
    /// asset that has its bytes already keeps nothing).
    pub(crate) async fn discard(self, files: &Files) {
        for path in &self.paths {
            files.delete(path).await;
        }
    }
}
