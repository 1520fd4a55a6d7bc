//! Who a request acts as ([`Access`]), which assets that caller sees ([`Reader`]), which files
//! it may download ([`FileRight`], the paid-file rule), and the one loader of an asset by path
//! id for every kind of caller ([`Service::asset_for`]).

use std::collections::HashSet;
use std::sync::Arc;

use uuid::Uuid;

use super::Service;
use crate::auth;
use crate::error::ApiError;
use crate::model::{ApiKey, Asset, LibraryPass, LibraryRows, Scope};
use crate::signed;
use crate::validate;

/// Who a request acts as, once admitted.
pub(super) enum Access {
    /// A valid key with the operation's scopes.
    Key(Arc<ApiKey>),
    /// A valid browser token with the operation's scopes: its minting key with the token's
    /// scopes and expiry, and the libraries it is limited to (`None`: not limited).
    #[cfg_attr(not(feature = "keys"), allow(dead_code))]
    Token {
        /// The minting key as the token carries it.
        key: Arc<ApiKey>,
        /// The libraries it opens alone, if it is limited to some.
        libraries: Option<Arc<[Uuid]>>,
    },
    /// A live library pass (sent as `Authorization: Pass`, or the pass a signed link was
    /// minted with), for an operation a pass opens.
    Pass(LibraryPass),
    /// A keyless read or download of one asset, served only for a published, public asset.
    Public,
    /// A download through a valid signed link minted by a key; `paid` when the key had
    /// `read:paid`.
    Signed {
        /// Whether the link downloads paid files.
        paid: bool,
    },
    /// An operation that needs no scope, so no key: the OpenAPI document.
    Open,
}

/// The 403 of a paid file for a caller without `read:paid` or a pass.
pub(super) const PAID_FILE: ApiError = ApiError::NotPermitted(
    "This file is sold in a paid library: downloading it needs the read:paid scope or a library pass",
);
/// The 403 of a pass used for another library.
pub(super) const OTHER_LIBRARY: ApiError =
    ApiError::NotPermitted("This library pass is for another library");
/// The 403 of a pass used for an asset it does not open.
pub(super) const NOT_IN_PASS: ApiError =
    ApiError::NotPermitted("This library pass does not open this asset");
/// The 403 of a pass used for an operation no pass opens.
pub(super) const NOT_FOR_PASSES: ApiError = ApiError::NotPermitted(
    "A library pass opens its library, its files and their download links; this needs an API key",
);

impl Access {
    /// The key, for an operation that needs one; the 401 of a keyless request otherwise (the
    /// admission lets no other caller through to such an operation).
    pub(super) fn key(&self) -> Result<&ApiKey, ApiError> {
        match self {
            Access::Key(key) | Access::Token { key, .. } => Ok(key.as_ref()),
            Access::Pass(_) => Err(NOT_FOR_PASSES),
            Access::Public | Access::Signed { .. } | Access::Open => Err(no_key()),
        }
    }

    /// Which assets this caller sees.
    pub(super) fn reader(&self) -> Reader<'_> {
        match self {
            Access::Key(key) | Access::Token { key, .. } => Reader::of_key(key),
            Access::Pass(_) | Access::Signed { .. } => Reader::everywhere(Sees::Published),
            Access::Public | Access::Open => Reader::everywhere(Sees::Public),
        }
    }

    /// The workspace whose records alone this caller sees: a workspace key's. `None` for a
    /// global key, and for the callers that open one record they were handed (a pass, a
    /// signed link, a keyless read of a public asset).
    pub(super) fn workspace(&self) -> Option<&str> {
        match self {
            Access::Key(key) | Access::Token { key, .. } => key.workspace_id.as_deref(),
            Access::Pass(_) | Access::Public | Access::Signed { .. } | Access::Open => None,
        }
    }

    /// Which files this caller may download.
    pub(super) fn files(&self) -> FileRight<'_> {
        match self {
            Access::Key(key) | Access::Token { key, .. }
                if key.scopes.contains(&Scope::ReadPaid) =>
            {
                FileRight::All
            }
            Access::Signed { paid: true } => FileRight::All,
            Access::Pass(pass) => FileRight::Pass(pass),
            Access::Key(_)
            | Access::Token { .. }
            | Access::Signed { paid: false }
            | Access::Public
            | Access::Open => FileRight::Free,
        }
    }
}

/// Which files a caller may download (DESIGN.md "Library passes"): an asset's file is paid
/// when the asset is not `is_public`, a published paid library holds it, and no published
/// free library does.
#[derive(Debug, Clone, Copy)]
pub(super) enum FileRight<'a> {
    /// Every file (`read:paid`, or a link minted with it).
    All,
    /// Free files only.
    Free,
    /// The files of the pass's library (its `asset_ids` when given), paid or not, while it
    /// has downloads left.
    Pass(&'a LibraryPass),
}

impl<'a> FileRight<'a> {
    /// The pass, if the right is one's.
    pub(super) fn pass(self) -> Option<&'a LibraryPass> {
        match self {
            FileRight::Pass(pass) => Some(pass),
            FileRight::All | FileRight::Free => None,
        }
    }
}

/// Whether a pass opens the asset `id` of its library, as `rows` (the library's rows) hold it:
/// a published entry, in the pass's subset when it has one.
pub(super) fn pass_opens(pass: &LibraryPass, rows: &LibraryRows, id: Uuid) -> bool {
    let placed = rows
        .entries
        .iter()
        .any(|row| row.entry.asset_id == id && row.asset.published);
    placed && pass.asset_ids.as_ref().is_none_or(|ids| ids.contains(&id))
}

/// Of `assets` (id and `is_public`), those whose file is paid, by the store's
/// [`crate::LibraryStore::published_holders`].
pub(super) async fn paid_files(
    service: &Service,
    assets: impl IntoIterator<Item = (Uuid, bool)>,
) -> Result<HashSet<Uuid>, ApiError> {
    let private: Vec<Uuid> = assets
        .into_iter()
        .filter(|(_, is_public)| !is_public)
        .map(|(id, _)| id)
        .collect();
    if private.is_empty() {
        return Ok(HashSet::new());
    }
    let holders = service.inner.store.published_holders(&private).await?;
    Ok(holders
        .into_iter()
        .filter(|h| h.paid && !h.free)
        .map(|h| h.asset_id)
        .collect())
}

/// Whether `key` sees drafts: keys with `write:assets` read and list them.
pub(super) fn sees_drafts(key: &ApiKey) -> bool {
    key.scopes.contains(&Scope::WriteAssets)
}

/// The 401 of a keyless request for an asset that is not served without a key.
pub(super) fn no_key() -> ApiError {
    auth::bearer_key(None).err().unwrap_or(signed::INVALID)
}

/// Which assets a caller sees; an asset read again (while a download starts, say) is judged
/// the same way as the first time.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reader<'a> {
    sees: Sees,
    /// The workspace a workspace key sees alone; `None`: every workspace.
    workspace: Option<&'a str>,
}

/// Which assets of the workspaces a [`Reader`] sees it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sees {
    /// A key that sees drafts (`write:assets`).
    Drafts,
    /// A key without `write:assets`, or a signed link: published assets.
    Published,
    /// No key: published public assets.
    Public,
}

/// The workspace a caller bound to `own` ([`Access::workspace`]) writes into or lists when a
/// body or filter names `named`: what it names, or its own when it names none; 403 when a
/// workspace key names another.
pub(super) fn named_workspace(
    own: Option<&str>,
    named: Option<String>,
) -> Result<Option<String>, ApiError> {
    match (own, named) {
        (None, named) => Ok(named),
        (Some(own), None) => Ok(Some(own.to_owned())),
        (Some(own), Some(named)) if named == own => Ok(Some(named)),
        (Some(_), Some(other)) => Err(ApiError::OtherWorkspace { workspace: other }),
    }
}

/// The workspace an upload's asset is made in: the one `metadata` names (checked), or the
/// workspace key's (`own`; 403 when the metadata names another).
pub(super) fn upload_workspace(
    metadata: &crate::tus::Metadata,
    own: Option<&str>,
) -> Result<Option<String>, ApiError> {
    let named = metadata
        .workspace_id
        .as_deref()
        .map(|w| validate::workspace_id("workspace_id", w))
        .transpose()?;
    named_workspace(own, named)
}

/// Whether a record of `workspace` is seen by a caller of `seen` ([`Access::workspace`]):
/// every record when the caller is not bound to a workspace, else its workspace's alone.
pub(super) fn in_workspace(seen: Option<&str>, workspace: Option<&str>) -> bool {
    seen.is_none_or(|w| workspace == Some(w))
}

impl<'a> Reader<'a> {
    /// What a key sees: drafts too with `write:assets`, else published assets; of its
    /// workspace alone for a workspace key.
    pub(super) fn of_key(key: &'a ApiKey) -> Reader<'a> {
        Reader {
            sees: if sees_drafts(key) {
                Sees::Drafts
            } else {
                Sees::Published
            },
            workspace: key.workspace_id.as_deref(),
        }
    }

    /// A reader bound to no workspace.
    pub(super) fn everywhere(sees: Sees) -> Reader<'a> {
        Reader {
            sees,
            workspace: None,
        }
    }

    /// Whether an asset with these flags, of `workspace`, is seen.
    pub(super) fn sees(self, published: bool, is_public: bool, workspace: Option<&str>) -> bool {
        in_workspace(self.workspace, workspace)
            && match self.sees {
                Sees::Drafts => true,
                Sees::Published => published,
                Sees::Public => published && is_public,
            }
    }

    /// Whether `asset` is seen.
    pub(super) fn sees_asset(self, asset: &Asset) -> bool {
        self.sees(
            asset.published,
            asset.is_public,
            asset.workspace_id.as_deref(),
        )
    }

    /// The answer for an asset this reader does not see: 404 with a key or a signed link;
    /// without a key the 401 any asset that is not public gets, so nothing is told.
    pub(super) fn missing(self) -> ApiError {
        match self.sees {
            Sees::Public => no_key(),
            Sees::Drafts | Sees::Published => ApiError::AssetNotFound,
        }
    }

    /// A path's asset id: 400 on `asset_id` when it is not one, or without a key the 401
    /// that tells nothing.
    pub(super) fn asset_id(self, raw: &str) -> Result<uuid::Uuid, ApiError> {
        match self.sees {
            Sees::Public => validate::strict_id(raw).ok_or_else(no_key),
            Sees::Drafts | Sees::Published => validate::parse_id("asset_id", raw),
        }
    }
}

impl Service {
    /// Whether `right` may download `asset`'s file: a paid file needs `read:paid` (403
    /// [`PAID_FILE`]); a pass opens only the published assets of its library in its subset
    /// (403 [`NOT_IN_PASS`]) while it has downloads left (403 `Pass download limit reached`).
    pub(super) async fn may_download(
        &self,
        asset: &Asset,
        right: FileRight<'_>,
    ) -> Result<(), ApiError> {
        self.may_open_file(asset, right).await?;
        match right {
            FileRight::Pass(pass) if pass.is_exhausted() => Err(ApiError::PassLimitReached),
            _ => Ok(()),
        }
    }

    /// [`Service::may_download`] but for a pass's downloads left: a download's own spend
    /// decides those, since a range may continue a download the pass began
    /// ([`super::resumes`]).
    pub(super) async fn may_open_file(
        &self,
        asset: &Asset,
        right: FileRight<'_>,
    ) -> Result<(), ApiError> {
        match right {
            FileRight::All => Ok(()),
            FileRight::Free => match paid_files(self, [(asset.id, asset.is_public)])
                .await?
                .is_empty()
            {
                true => Ok(()),
                false => Err(PAID_FILE),
            },
            FileRight::Pass(pass) => self.pass_opens_asset(pass, asset.id).await,
        }
    }

    /// For a caller bound to workspace `seen`, that the library `id` is of it: else the 404
    /// of a missing library, before anything else is read or counted. Nothing to ask for a
    /// caller bound to none.
    pub(super) async fn library_in(&self, id: Uuid, seen: Option<&str>) -> Result<(), ApiError> {
        let Some(own) = seen else {
            return Ok(());
        };
        match self.inner.store.library_workspace(id).await? {
            Some(Some(found)) if found == own => Ok(()),
            _ => Err(ApiError::LibraryNotFound),
        }
    }

    /// The [`Log`](crate::events::Log) of a write of the library `id` (or of one of its
    /// passes), its events naming the library's workspace: `seen`'s for a caller bound to one
    /// ([`Service::library_in`] has checked it), else read from the store. (A global key's
    /// `PUT` that moves the library to another workspace at the same moment may leave the
    /// event naming the one it had when this write began.)
    pub(super) async fn log_of_library(
        &self,
        id: Uuid,
        seen: Option<&str>,
    ) -> Result<crate::events::Log, ApiError> {
        let workspace = match seen {
            Some(own) => Some(own.to_owned()),
            None => self.inner.store.library_workspace(id).await?.flatten(),
        };
        Ok(self.log.in_workspace(workspace.as_deref()))
    }

    /// For a caller bound to workspace `seen`, that the asset `id` is of it: else the 404 of
    /// a missing asset (an asset's workspace never changes). Nothing to ask for a caller
    /// bound to none.
    pub(super) async fn asset_in(&self, id: Uuid, seen: Option<&str>) -> Result<(), ApiError> {
        let Some(own) = seen else {
            return Ok(());
        };
        match self.inner.store.get_asset(id).await? {
            Some(asset) if asset.workspace_id.as_deref() == Some(own) => Ok(()),
            _ => Err(ApiError::AssetNotFound),
        }
    }

    /// Whether `pass` opens the asset `id`: a published asset of its library, in its subset
    /// (else 403 [`NOT_IN_PASS`]).
    pub(super) async fn pass_opens_asset(
        &self,
        pass: &LibraryPass,
        id: Uuid,
    ) -> Result<(), ApiError> {
        let rows = self.published_library(pass.library_id).await?;
        if pass_opens(pass, &rows, id) {
            Ok(())
        } else {
            Err(NOT_IN_PASS)
        }
    }

    /// The asset with the path id `id` as `reader` may see it (of its workspace, for a
    /// workspace key), or the answer for one it does not see ([`Reader::missing`]).
    pub(super) async fn asset_for(&self, id: &str, reader: Reader<'_>) -> Result<Asset, ApiError> {
        let id = reader.asset_id(id)?;
        self.inner
            .store
            .get_asset(id)
            .await?
            .filter(|a| reader.sees_asset(a))
            .ok_or_else(|| reader.missing())
    }

    /// The asset with the path id `id` as `reader` may see it, as [`Service::asset_for`]
    /// answers, but from the page cache when it holds the asset at the store's current
    /// version of it ([`crate::AssetStore::asset_version`]), as `GET /api/v1/assets/{id}`
    /// does. For the routes that read an asset often and serve from it what a write of it
    /// moves with it (an image variant is named by the file's checksum); a download reads the
    /// store, so it starts from the newest record.
    #[cfg(feature = "variants")]
    pub(super) async fn seen_asset(
        &self,
        id: &str,
        reader: Reader<'_>,
    ) -> Result<Arc<Asset>, ApiError> {
        if !self.inner.config.page_cache {
            return self.asset_for(id, reader).await.map(Arc::new);
        }
        self.rendered_asset(reader.asset_id(id)?)
            .await?
            .map(|kept| Arc::clone(&kept.asset))
            .filter(|asset| reader.sees_asset(asset))
            .ok_or_else(|| reader.missing())
    }
}
