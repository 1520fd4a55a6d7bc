//! Importing files that are already somewhere (a folder, a bucket) as assets:
//! [`Service::import_file`] makes each one an asset exactly as an upload does, and
//! [`Service::import_library`] makes, or extends, the library of the tree they came from.
//! The ready server's `import` command walks the tree and calls them.

use std::collections::HashSet;

use bytes::Bytes;
use futures_util::Stream;
use sha2::{Digest as _, Sha256};
use uuid::Uuid;

use super::Service;
use super::assets::Uploaded;
use crate::error::ApiError;
use crate::files::Written;
use crate::model::{Asset, LibraryRows, LibrarySettings, PutOutcome};
use crate::upload;
use crate::validate::{self, EntryDoc, LibraryDoc, OnDuplicate, SectionDoc};

/// A file to import.
#[derive(Debug)]
pub struct ImportFile<S> {
    /// Its path in the tree imported, `/`-separated (`brand/logo.png`). Its last segment is
    /// the asset's title (as an upload's file name is) and the stored file's name.
    pub name: String,
    /// The SHA-256 of its bytes, read by the importer before: a file whose bytes an asset of
    /// the workspace has already is skipped before anything is written, and the file is
    /// stored under a folder of `uploads/` made of it, so a run cut short and run again
    /// writes over what it wrote instead of leaving it behind.
    pub checksum: [u8; 32],
    /// Its bytes.
    pub bytes: S,
}

/// What every asset of an import is made with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Tags of every asset (as an upload's `tags`).
    pub tags: Vec<String>,
    /// Whether the assets are public (as an upload's, false by default).
    pub is_public: bool,
    /// The workspace the assets (and the library) are made in; none by default.
    pub workspace_id: Option<String>,
}

/// What came of one imported file.
#[derive(Debug, Clone, PartialEq)]
pub enum Imported {
    /// A new asset.
    Created(Asset),
    /// The asset of the workspace that has these bytes already: nothing was written.
    Known(Asset),
}

impl Imported {
    /// The asset, new or known.
    pub fn asset(&self) -> &Asset {
        match self {
            Imported::Created(asset) | Imported::Known(asset) => asset,
        }
    }
}

/// The library of an imported tree: a section per folder, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportLibrary {
    /// Its id: the same for the same tree (the ready server makes it of the title and the
    /// workspace), so a second import extends the library the first made.
    pub id: Uuid,
    /// Its title, when it is made.
    pub title: String,
    /// The workspace it is made in.
    pub workspace_id: Option<String>,
    /// Each folder's path (`""` for the files at the top, which are unsectioned) with its
    /// assets in page order.
    pub folders: Vec<(String, Vec<Uuid>)>,
}

/// An id made of `parts`: the first 16 bytes of their SHA-256, each part followed by `0`.
fn derived_id(parts: &[&[u8]]) -> Uuid {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part);
        hash.update([0]);
    }
    let digest = hash.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

impl ImportLibrary {
    /// The id of the section of `folder` in library `library`: the same on every run, so
    /// a second import finds the section the first made.
    pub fn section_id(library: Uuid, folder: &str) -> Uuid {
        derived_id(&[library.as_bytes(), folder.as_bytes()])
    }

    /// The id of the library titled `title` in `workspace` that an import makes.
    pub fn id_of(title: &str, workspace: Option<&str>) -> Uuid {
        derived_id(&[
            b"import",
            workspace.unwrap_or("").as_bytes(),
            title.as_bytes(),
        ])
    }
}

impl Service {
    /// Imports one file: stores it under `uploads/` and makes it an asset exactly as
    /// `POST /api/v1/assets/upload` with its name would (type from the content, metadata,
    /// thumbnail, checksum, text for search, an `asset.created` event), with `options`'
    /// tags, visibility and workspace; published.
    ///
    /// A file whose bytes an asset of the same workspace (of none, without one) has already
    /// is [`Imported::Known`] and nothing is written, so importing a tree again adds only
    /// what is new. Its stored path is `uploads/{id}/{name}` with `id` made of its checksum,
    /// its workspace and its name: a run stopped between storing and creating (or while it
    /// stored) writes the same file again next time, over what it left.
    ///
    /// # Errors
    /// 400 when the file cannot be an asset (its type cannot be inferred, its content is
    /// not what its type needs, an option is invalid), or when its bytes are not those of
    /// `checksum` (it changed since it was read); 413 past
    /// [`crate::Config::max_resumable_upload`]; what reading the stream gives; 500 when the
    /// store fails. Nothing is kept then.
    pub async fn import_file<S, E>(
        &self,
        file: ImportFile<S>,
        options: &ImportOptions,
    ) -> Result<Imported, ApiError>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin + Send,
        E: Into<ApiError>,
    {
        let workspace = options
            .workspace_id
            .as_deref()
            .map(|w| validate::workspace_id("workspace_id", w))
            .transpose()?;
        if let Some(known) = self
            .asset_with_checksum(file.checksum, workspace.as_deref(), true)
            .await?
        {
            return Ok(Imported::Known(known));
        }
        let file_name = file.name.rsplit('/').next().unwrap_or("");
        let slot = derived_id(&[
            &file.checksum,
            workspace.as_deref().unwrap_or("").as_bytes(),
            file_name.as_bytes(),
        ]);
        let path = format!("uploads/{slot}/{}", upload::safe_name(file_name));
        let files = &self.inner.files;
        let mut written = Written::default();
        written.push(path.clone());
        files.remove_unfinished(&path).await;
        let outcome = async {
            let (_, checksum) = files
                .put_stream(&path, file.bytes, self.max_resumable())
                .await?;
            if checksum != file.checksum {
                return Err(ApiError::validation(
                    "file",
                    "The file changed while it was imported; import it again",
                ));
            }
            let form = upload::Form {
                is_public: Some(options.is_public.to_string()),
                tags: (!options.tags.is_empty()).then(|| options.tags.join(",")),
                workspace_id: workspace.clone(),
                file: Some((path.clone(), file_name.to_owned())),
                checksum: Some(checksum),
                ..upload::Form::default()
            };
            // Its bytes are known to be new to the workspace: the check above.
            self.make_uploaded(form, (OnDuplicate::Allow, None), &mut written)
                .await
        }
        .await;
        written.settle(files, &outcome).await;
        match outcome? {
            Uploaded::Created(asset) | Uploaded::Reused(asset) => Ok(Imported::Created(asset)),
        }
    }

    /// Makes the library of an imported tree, or extends it when an import made it before:
    /// each folder is a section (the same section on every run, titled with the folder's
    /// path; the files at the top are unsectioned), and each asset not yet in the library is
    /// added at the end of its folder's. What the library holds already, its settings and
    /// its order stay as they are; a new library is published, in `library.workspace_id`.
    ///
    /// # Errors
    /// What [`Service::save_library`] gives (an asset that is gone, or of another workspace);
    /// 400 on `title` for an invalid one.
    pub async fn import_library(&self, library: ImportLibrary) -> Result<PutOutcome, ApiError> {
        let mut doc = match self.inner.store.load_library(library.id).await? {
            Some(rows) => doc_of(rows),
            None => LibraryDoc {
                slug: None,
                settings: new_settings(&library, self.inner.config.max_title_chars)?,
                sections: Vec::new(),
                unsectioned_assets: Vec::new(),
            },
        };
        let mut held: HashSet<Uuid> = doc.entries().map(|e| e.asset_id).collect();
        for (folder, assets) in &library.folders {
            let new: Vec<Uuid> = assets.iter().copied().filter(|a| held.insert(*a)).collect();
            if folder.is_empty() {
                push_entries(&mut doc.unsectioned_assets, &new, "unsectioned_assets");
                continue;
            }
            let id = ImportLibrary::section_id(library.id, folder);
            let at = match doc.sections.iter().position(|s| s.id == Some(id)) {
                Some(at) => at,
                None if new.is_empty() => continue,
                None => {
                    doc.sections.push(SectionDoc {
                        id: Some(id),
                        title: folder.clone(),
                        description: None,
                        collapsed_by_default: false,
                        assets: Vec::new(),
                    });
                    doc.sections.len() - 1
                }
            };
            let place = format!("sections[{at}].assets");
            push_entries(&mut doc.sections[at].assets, &new, &place);
        }
        self.save_library(library.id, doc).await
    }
}

/// The settings of a library an import makes.
fn new_settings(library: &ImportLibrary, max_title: usize) -> Result<LibrarySettings, ApiError> {
    let title = library.title.trim();
    let chars = title.chars().count();
    if chars == 0 || chars > max_title {
        return Err(ApiError::validation(
            "title",
            format!("title must be 1 to {max_title} characters"),
        ));
    }
    Ok(LibrarySettings {
        title: title.to_owned(),
        description: None,
        workspace_id: library.workspace_id.clone(),
        cover_image_path: None,
        cover_overlay_color: None,
        cover_overlay_opacity: None,
        show_asset_count: true,
        allow_individual_downloads: true,
        allow_bulk_download: false,
        is_paid: false,
        price: None,
        currency: "USD".to_owned(),
        published: true,
    })
}

/// Adds an entry for each of `assets` to `entries`, which are at `place` in the document.
fn push_entries(entries: &mut Vec<EntryDoc>, assets: &[Uuid], place: &str) {
    for asset_id in assets {
        let path = format!("{place}[{}].asset_id", entries.len());
        entries.push(EntryDoc {
            asset_id: *asset_id,
            title: None,
            description: None,
            path,
        });
    }
}

/// The document of a stored library, as a `PUT` that keeps it as it is would send it.
fn doc_of(rows: LibraryRows) -> LibraryDoc {
    let LibraryRows {
        library,
        mut sections,
        mut entries,
    } = rows;
    sections.sort_by_key(|s| s.display_order);
    entries.sort_by_key(|e| e.entry.display_order);
    let mut doc = LibraryDoc {
        slug: Some(library.slug),
        settings: library.settings,
        sections: Vec::with_capacity(sections.len()),
        unsectioned_assets: Vec::new(),
    };
    for (at, section) in sections.iter().enumerate() {
        let assets = entries
            .iter()
            .filter(|e| e.entry.section_id == Some(section.id))
            .enumerate()
            .map(|(i, e)| entry_doc(&e.entry, format!("sections[{at}].assets[{i}].asset_id")))
            .collect();
        doc.sections.push(SectionDoc {
            id: Some(section.id),
            title: section.title.clone(),
            description: section.description.clone(),
            collapsed_by_default: section.collapsed_by_default,
            assets,
        });
    }
    doc.unsectioned_assets = entries
        .iter()
        .filter(|e| e.entry.section_id.is_none())
        .enumerate()
        .map(|(i, e)| entry_doc(&e.entry, format!("unsectioned_assets[{i}].asset_id")))
        .collect();
    doc
}

fn entry_doc(entry: &crate::model::LibraryEntry, path: String) -> EntryDoc {
    EntryDoc {
        asset_id: entry.asset_id,
        title: entry.title.clone(),
        description: entry.description.clone(),
        path,
    }
}
