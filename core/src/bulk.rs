//! Bulk download: a library's files as one zip, written while it is sent.
//!
//! The zip is written on a blocking thread into a small bounded channel that the response
//! body reads, so memory stays at a few chunks whatever the library's size, and a client
//! that goes away stops the writing. Files are stored without compression (most asset files
//! — PDFs, images, video — are compressed already) and in page order; each section is a
//! folder named after it, unsectioned files are at the top.

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt as _;
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use uuid::Uuid;

use crate::error::ApiError;
use crate::files::Files;
use crate::model::{Asset, Section};
use crate::reply::ByteStream;
use crate::store::Store;
use crate::tree::LibraryDetail;

/// Bytes gathered before a chunk of the zip is sent.
const CHUNK: usize = 64 * 1024;

/// One file of the zip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    /// Its name in the zip, folders included.
    pub(crate) name: String,
    /// The asset whose file it is.
    pub(crate) asset_id: Uuid,
    /// The asset's file when the zip was planned.
    pub(crate) path: String,
}

/// The zip of a library page: each published asset with a file, in page order, named after
/// its slug inside its section's folder (unsectioned files at the top), every name unique.
/// `assets` holds the page's assets by id; entries without one, or without a file, are left
/// out (and so is a file that is gone when its entry's turn comes, see [`zip_stream`]).
pub(crate) fn plan(detail: &LibraryDetail<'_>, assets: &HashMap<Uuid, Asset>) -> Vec<Item> {
    let mut taken = HashSet::new();
    let mut items = Vec::new();
    let mut section_index: HashMap<Uuid, usize> = HashMap::new();
    for (section, row) in detail.page_order() {
        let Some(asset) = assets.get(&row.entry.asset_id).filter(|a| a.published) else {
            continue;
        };
        let Some(path) = asset.file_path.as_deref() else {
            continue;
        };
        let file = crate::download::file_name(&asset.slug, path);
        let name = match section {
            Some(s) => format!(
                "{}/{file}",
                folder(&s.title, index_of(s, &mut section_index))
            ),
            None => file,
        };
        items.push(Item {
            name: unique(name, &mut taken),
            asset_id: asset.id,
            path: path.to_owned(),
        });
    }
    items
}

/// The position of `section` among the sections met so far, counting from 0.
fn index_of(section: &Section, seen: &mut HashMap<Uuid, usize>) -> usize {
    let next = seen.len();
    *seen.entry(section.id).or_insert(next)
}

/// A folder name for a section: its title made a safe name
/// ([`crate::download::safe_name`]); `Section N` when nothing is left.
pub(crate) fn folder(title: &str, position: usize) -> String {
    crate::download::safe_name(title, &format!("Section {}", position + 1))
}

/// Makes `name` unique among `taken` (compared without case, as many file systems do) by
/// adding `-2`, `-3`, ... before its extension.
pub(crate) fn unique(name: String, taken: &mut HashSet<String>) -> String {
    if taken.insert(name.to_lowercase()) {
        return name;
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !stem.ends_with('/') => {
            (stem.to_owned(), format!(".{ext}"))
        }
        _ => (name.clone(), String::new()),
    };
    (2u32..)
        .map(|n| format!("{stem}-{n}{ext}"))
        .find(|candidate| taken.insert(candidate.to_lowercase()))
        .unwrap_or(name)
}

/// Sends what is written to it as chunks of the response body.
struct ChannelWriter {
    tx: mpsc::Sender<io::Result<Bytes>>,
    buf: Vec<u8>,
}

impl ChannelWriter {
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK)));
        self.tx
            .blocking_send(Ok(chunk))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client went away"))
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

/// How many times an entry's file that keeps going away is looked up again before the entry
/// is left out.
const OPEN_ATTEMPTS: usize = 5;

/// Opens the file of `item` before its entry starts: its size and bytes, of one version. A
/// file gone since the zip was planned (its asset's file replaced or deleted meanwhile) is
/// looked up again through the asset: a replacement's new file is opened instead; an asset
/// deleted, unpublished or left without a file gives `None`, and its entry is left out.
async fn open_item(
    files: &Files,
    store: &dyn Store,
    item: &Item,
) -> Result<Option<(u64, ByteStream)>, ApiError> {
    let mut path = item.path.clone();
    for _ in 0..OPEN_ATTEMPTS {
        if let Some(opened) = files.open_whole(&path).await? {
            return Ok(Some(opened));
        }
        let current = store.get_asset(item.asset_id).await?;
        match current.filter(|a| a.published).and_then(|a| a.file_path) {
            Some(now) if now != path => path = now,
            _ => return Ok(None),
        }
    }
    Ok(None)
}

fn write_zip(
    handle: &Handle,
    files: &Files,
    store: &dyn Store,
    items: &[Item],
    out: ChannelWriter,
) -> io::Result<()> {
    let mut zip = ZipWriter::new_stream(out);
    for item in items {
        let opened = handle
            .block_on(open_item(files, store, item))
            .map_err(|e| io::Error::other(e.to_string()))?;
        let Some((size, mut stream)) = opened else {
            continue;
        };
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .large_file(size >= u64::from(u32::MAX));
        zip.start_file(item.name.as_str(), options)
            .map_err(io::Error::other)?;
        while let Some(chunk) = handle.block_on(stream.next()) {
            zip.write_all(&chunk?)?;
        }
    }
    let mut out = zip.finish().map_err(io::Error::other)?.into_inner();
    out.flush()
}

/// The zip of `items`, as a body stream. Must be called on a tokio runtime. Each file is
/// opened just before its entry starts ([`open_item`]), so a file replaced or deleted while
/// the zip is sent never cuts it short: the zip stays whole and valid.
pub(crate) fn zip_stream(files: Files, store: Arc<dyn Store>, items: Vec<Item>) -> ByteStream {
    let (tx, rx) = mpsc::channel::<io::Result<Bytes>>(4);
    let handle = Handle::current();
    tokio::task::spawn_blocking(move || {
        let out = ChannelWriter {
            tx: tx.clone(),
            buf: Vec::with_capacity(CHUNK),
        };
        if let Err(e) = write_zip(&handle, &files, store.as_ref(), &items, out)
            && e.kind() != io::ErrorKind::BrokenPipe
        {
            tracing::warn!(error = %e, "bulk download cut short");
            let _ = tx.blocking_send(Err(e));
        }
    });
    Box::pin(futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_safe_names() {
        assert_eq!(folder("Logos", 0), "Logos");
        assert_eq!(folder("a/b\\c", 0), "a_b_c");
        assert_eq!(folder("../up", 0), "_up");
        assert_eq!(folder("  ", 2), "Section 3");
        assert_eq!(folder("..", 0), "Section 1");
        assert_eq!(folder(". ..", 3), "Section 4");
        assert_eq!(folder(".\u{3000}..", 0), "Section 1");
        assert_eq!(folder("a/../../b", 0), "a_._._b");
    }

    #[test]
    fn names_are_made_unique_before_the_extension() {
        let mut taken = HashSet::new();
        assert_eq!(unique("a/logo.png".into(), &mut taken), "a/logo.png");
        assert_eq!(unique("a/Logo.png".into(), &mut taken), "a/Logo-2.png");
        assert_eq!(unique("a/logo.png".into(), &mut taken), "a/logo-3.png");
        assert_eq!(unique("notes".into(), &mut taken), "notes");
        assert_eq!(unique("notes".into(), &mut taken), "notes-2");
    }
}
