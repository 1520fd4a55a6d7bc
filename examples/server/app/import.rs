//! `import PATH`: every file under a folder or `s3://BUCKET/PREFIX` becomes an asset as an
//! upload would make it ([`Service::import_file`]); with `--library`, the tree becomes a
//! library with a section per folder ([`Service::import_library`]). A progress bar on
//! standard error, a one-line summary on standard output, and a non-zero exit when a file
//! could not be imported (each is listed with why).
//!
//! Files and folders whose name starts with `.` are left out, and links to folders are not
//! followed (a link to a file is read as the file). Files are read twice: first every file
//! for its checksum (a file whose bytes the workspace has already is not stored again, which
//! is what makes a second run add only what is new; of files with the same bytes, the first
//! in name order is imported and the others are placed where it is), then each new one to
//! store it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use assetlib::{ApiError, ImportFile, ImportLibrary, ImportOptions, Imported, Service};
use bytes::Bytes;
use futures_util::FutureExt as _;
use futures_util::stream::{self, BoxStream, StreamExt as _, TryStreamExt as _};
use indicatif::{ProgressBar, ProgressStyle};
use object_store::ObjectStore;
use object_store::path::Path as ObjectPath;
use sha2::{Digest as _, Sha256};
use tokio::io::AsyncReadExt as _;

use super::cli::ImportArgs;
use super::data::{describe_data, open_service};
use super::{BoxError, UserError};

/// Bytes read at a time from a larger file.
const CHUNK: usize = 256 * 1024;

/// The tree imported.
#[derive(Clone)]
enum Tree {
    Folder(PathBuf),
    Bucket(Arc<dyn ObjectStore>),
}

/// A file found in the tree: its `/`-separated path in it.
struct Found {
    name: String,
}

/// What an import came to.
#[derive(Default)]
struct Tally {
    created: u64,
    known: u64,
    /// Each file not imported (or folder not listed), with why.
    failed: Vec<(String, String)>,
}

/// Runs `import`.
pub(crate) async fn run(args: ImportArgs) -> Result<(), BoxError> {
    super::init_logging();
    let mut config = super::keys::command_config();
    config.ffmpeg.clone_from(&args.ffmpeg.path);
    let service = open_service(&args.data, super::drawing_pdfs(config)).await?;
    let options = ImportOptions {
        tags: args.tags.clone(),
        is_public: args.public,
        workspace_id: args.workspace.clone(),
    };
    let tree = open_tree(&args.source)?;
    eprintln!("import {}: {}", args.source, describe_data(&args.data));
    let mut tally = Tally::default();
    let found = list(&tree, &mut tally.failed).await?;

    let bar = ProgressBar::new(found.len() as u64).with_style(ProgressStyle::with_template(
        "{bar:40} {pos}/{len} files  {msg}  [{elapsed_precise}, {eta} left]",
    )?);
    let jobs = args.jobs.map_or_else(default_jobs, usize::from);

    // First every checksum: of files with the same bytes, the first in name order is the one
    // imported (the others are placed where it is), whatever order the reads end in.
    bar.set_message("reading checksums");
    let mut sums: Vec<Option<[u8; 32]>> = vec![None; found.len()];
    let mut reads = stream::iter(found.iter().enumerate())
        .map(|(at, file)| {
            let (tree, name) = (tree.clone(), file.name.clone());
            tokio::spawn(async move { checksum_of(&tree, &name).await.map_err(|e| e.to_string()) })
                .map(move |done| (at, done))
        })
        .buffer_unordered(jobs);
    while let Some((at, sum)) = reads.next().await {
        match sum.unwrap_or_else(|e| Err(e.to_string())) {
            Ok(sum) => sums[at] = Some(sum),
            Err(e) => tally
                .failed
                .push((found[at].name.clone(), format!("cannot read it: {e}"))),
        }
        bar.inc(1);
    }
    drop(reads);
    let mut first: HashMap<[u8; 32], usize> = HashMap::new();
    let copy_of: Vec<Option<usize>> = sums
        .iter()
        .enumerate()
        .map(|(at, sum)| {
            let sum = (*sum)?;
            let owner = *first.entry(sum).or_insert(at);
            (owner != at).then_some(owner)
        })
        .collect();

    bar.set_position(0);
    let mut assets = vec![None; found.len()];
    let owners: Vec<(usize, &Found, [u8; 32])> = found
        .iter()
        .enumerate()
        .filter_map(|(at, file)| Some((at, file, sums[at].filter(|_| copy_of[at].is_none())?)))
        .collect();
    let options = Arc::new(options);
    // Each file is a task of its own, so the runtime's threads share the work.
    let mut results = stream::iter(owners)
        .map(|(at, file, sum)| {
            let (service, tree, options) = (service.clone(), tree.clone(), Arc::clone(&options));
            let name = file.name.clone();
            tokio::spawn(async move { import_one(&service, &tree, name, sum, &options).await })
                .map(move |done| (at, done))
        })
        .buffer_unordered(jobs);
    while let Some((at, result)) = results.next().await {
        match result.unwrap_or_else(|e| Err(e.to_string())) {
            Ok(Imported::Created(asset)) => {
                tally.created += 1;
                assets[at] = Some(asset.id);
            }
            Ok(Imported::Known(asset)) => {
                tally.known += 1;
                assets[at] = Some(asset.id);
            }
            Err(why) => tally.failed.push((found[at].name.clone(), why)),
        }
        bar.inc(1);
        bar.set_message(format!(
            "{} new, {} there already, {} failed",
            tally.created,
            tally.known,
            tally.failed.len()
        ));
    }
    drop(results);
    for (at, owner) in copy_of.iter().enumerate() {
        let Some(owner) = *owner else { continue };
        match assets[owner] {
            Some(asset) => {
                tally.known += 1;
                assets[at] = Some(asset);
            }
            None => tally.failed.push((
                found[at].name.clone(),
                format!(
                    "it has the bytes of {}, which was not imported",
                    found[owner].name
                ),
            )),
        }
        bar.inc(1);
    }
    bar.finish_and_clear();

    let library = match &args.library {
        Some(title) => {
            let library = library_of(title, args.workspace.clone(), &found, &assets);
            let id = library.id;
            service.import_library(library).await.map_err(|e| {
                UserError(format!(
                    "the library {title:?} could not be saved: {}",
                    e.message()
                ))
            })?;
            format!("; library {id}")
        }
        None => String::new(),
    };
    service.store().flush().await?;
    for (name, why) in &tally.failed {
        eprintln!("not imported: {name}: {why}");
    }
    println!(
        "{} files found: {} imported, {} there already, {} not imported{library}",
        found.len(),
        tally.created,
        tally.known,
        tally.failed.len()
    );
    if tally.failed.is_empty() {
        Ok(())
    } else {
        Err(UserError(format!(
            "{} files or folders could not be imported (listed above); run the same import \
             again once they are readable",
            tally.failed.len()
        ))
        .into())
    }
}

/// Files imported at once by default: enough to keep every core busy while others wait on
/// their reads and their commits.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) * 4
}

/// The tree `path` names: `s3://BUCKET[/PREFIX]` or a folder.
fn open_tree(path: &str) -> Result<Tree, BoxError> {
    if path.starts_with("s3://") {
        return open_bucket(path);
    }
    let folder = PathBuf::from(path);
    if !folder.is_dir() {
        return Err(UserError(format!("{path} is not a folder (nor s3://BUCKET/PREFIX)")).into());
    }
    Ok(Tree::Folder(folder))
}

#[cfg(feature = "s3")]
fn open_bucket(url: &str) -> Result<Tree, BoxError> {
    let files = assetlib::Files::s3(url)
        .map_err(|e| UserError(format!("cannot use the bucket {url}: {e}")))?;
    Ok(Tree::Bucket(Arc::clone(files.object_store())))
}

#[cfg(not(feature = "s3"))]
fn open_bucket(_url: &str) -> Result<Tree, BoxError> {
    Err(UserError(
        "this server was built without S3-compatible storage: build it with `--features s3`".into(),
    )
    .into())
}

/// Whether a file or folder name is left out (hidden).
fn hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// Every file of the tree, in name order; what cannot be listed goes into `failed`.
async fn list(tree: &Tree, failed: &mut Vec<(String, String)>) -> Result<Vec<Found>, BoxError> {
    let mut found = match tree {
        Tree::Folder(root) => {
            let root = root.clone();
            let (found, unlisted) = tokio::task::spawn_blocking(move || walk(&root)).await?;
            failed.extend(unlisted);
            found
        }
        Tree::Bucket(store) => {
            let objects: Vec<_> = store
                .list(None)
                .try_collect()
                .await
                .map_err(|e| UserError(format!("cannot list the bucket: {e}")))?;
            objects
                .into_iter()
                .filter(|o| !o.location.parts().any(|p| hidden(p.as_ref())))
                .map(|o| Found {
                    name: o.location.to_string(),
                })
                .collect()
        }
    };
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

/// The files under `root` (links to folders not followed), and what could not be listed.
fn walk(root: &Path) -> (Vec<Found>, Vec<(String, String)>) {
    let (mut found, mut failed) = (Vec::new(), Vec::new());
    let mut folders = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = folders.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                failed.push((format!("{prefix}/"), format!("cannot list the folder: {e}")));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    failed.push((format!("{prefix}/"), format!("cannot list the folder: {e}")));
                    continue;
                }
            };
            let Ok(name) = entry.file_name().into_string() else {
                let shown = entry.file_name().to_string_lossy().into_owned();
                failed.push((format!("{prefix}{shown}"), "its name is not UTF-8".into()));
                continue;
            };
            if hidden(&name) {
                continue;
            }
            let rel = format!("{prefix}{name}");
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir {
                folders.push((entry.path(), format!("{rel}/")));
                continue;
            }
            // A link is read as what it leads to; one to a folder is not followed.
            match std::fs::metadata(entry.path()) {
                Ok(meta) if meta.is_file() => found.push(Found { name: rel }),
                Ok(_) => {}
                Err(e) => failed.push((rel, format!("cannot read it: {e}"))),
            }
        }
    }
    (found, failed)
}

/// Imports one file of the tree, whose bytes have the SHA-256 `checksum`; the error says why
/// it was not imported.
async fn import_one(
    service: &Service,
    tree: &Tree,
    name: String,
    checksum: [u8; 32],
    options: &ImportOptions,
) -> Result<Imported, String> {
    let bytes = open(tree, &name)
        .await
        .map_err(|e| format!("cannot read it: {e}"))?;
    let import = ImportFile {
        name,
        checksum,
        bytes,
    };
    service
        .import_file(import, options)
        .await
        .map_err(|e| e.message())
}

/// The SHA-256 of a file of the tree, read a chunk at a time.
async fn checksum_of(tree: &Tree, name: &str) -> Result<[u8; 32], BoxError> {
    let mut hash = Sha256::new();
    let mut chunks = open(tree, name).await?;
    while let Some(chunk) = chunks.next().await {
        hash.update(chunk.map_err(|e| e.message())?);
    }
    Ok(hash.finalize().into())
}

fn object_path(name: &str) -> Result<ObjectPath, BoxError> {
    ObjectPath::parse(name).map_err(|e| UserError(format!("{name}: {e}")).into())
}

/// The bytes of a file of the tree, a chunk at a time.
async fn open(
    tree: &Tree,
    name: &str,
) -> Result<BoxStream<'static, Result<Bytes, ApiError>>, BoxError> {
    let failed =
        |e: &dyn std::fmt::Display| ApiError::validation("file", format!("reading it failed: {e}"));
    match tree {
        Tree::Folder(root) => {
            // A small file is read whole in one call of a blocking thread; a larger one a
            // chunk at a time.
            let path = root.join(name);
            let small = tokio::task::spawn_blocking(move || -> std::io::Result<_> {
                let mut file = std::fs::File::open(&path)?;
                if file.metadata()?.len() > CHUNK as u64 {
                    return Ok(Err(file));
                }
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut file, &mut bytes)?;
                Ok(Ok(Bytes::from(bytes)))
            })
            .await??;
            let file = match small {
                Ok(bytes) => return Ok(stream::once(async move { Ok(bytes) }).boxed()),
                Err(file) => tokio::fs::File::from_std(file),
            };
            Ok(stream::try_unfold(file, move |mut file| async move {
                let mut chunk = vec![0u8; CHUNK];
                let n = file.read(&mut chunk).await.map_err(|e| failed(&e))?;
                chunk.truncate(n);
                Ok((n > 0).then(|| (Bytes::from(chunk), file)))
            })
            .boxed())
        }
        Tree::Bucket(store) => {
            let got = store.get(&object_path(name)?).await?;
            Ok(got.into_stream().map_err(move |e| failed(&e)).boxed())
        }
    }
}

/// The library of the tree: a section per folder (the files at the top unsectioned), each
/// with its files' assets in name order.
fn library_of(
    title: &str,
    workspace: Option<String>,
    found: &[Found],
    assets: &[Option<uuid::Uuid>],
) -> ImportLibrary {
    let mut folders: Vec<(String, Vec<uuid::Uuid>)> = Vec::new();
    for (file, asset) in found.iter().zip(assets) {
        let Some(asset) = asset else { continue };
        let folder = file.name.rsplit_once('/').map_or("", |(folder, _)| folder);
        match folders.iter_mut().find(|(f, _)| f == folder) {
            Some((_, assets)) => assets.push(*asset),
            None => folders.push((folder.to_owned(), vec![*asset])),
        }
    }
    folders.sort_by(|a, b| a.0.cmp(&b.0));
    ImportLibrary {
        id: ImportLibrary::id_of(title, workspace.as_deref()),
        title: title.to_owned(),
        workspace_id: workspace,
        folders,
    }
}
