//! The operations table ([`OPERATIONS`]): every operation of the API declared once, with its
//! method, path, scopes, rules and capability. The [`Operation`] enum, the routes
//! ([`crate::ROUTES`]), the scope table and the OpenAPI document's paths and operation objects
//! all come from it. Adding an operation is a row here (naming the function that describes
//! it), its handler (an arm of the service's `dispatch` and the function it calls) and its wire
//! types with that description; nothing else names it.

use crate::model::Scope;

/// Declares the operations once: each row names an [`Operation`], the function that describes
/// it in the OpenAPI document (`module::function` under `openapi/operations`), and everything
/// else about it ([`OperationRow`]). The enum, [`OPERATIONS`], the routes and their `Allow`
/// values ([`ROUTES`]), the scope table and the OpenAPI document's paths and operations all
/// come from here. (The leading `$` is handed in so the macro can define `with_describers!`.)
macro_rules! operations {
    (
        $d:tt
        $($(#[doc = $doc:literal])* $op:ident($module:ident::$describe:ident) => $spec:expr,)*
    ) => {
        /// The operations of the API, in the order of [`OPERATIONS`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Operation {
            $($(#[doc = $doc])* $op,)*
        }

        /// The operations table: every operation of the API, of every capability, with its
        /// method, path, scopes and rules, in the order their routes are matched.
        pub const OPERATIONS: &[OperationSpec] = &[$($spec.of(Operation::$op),)*];

        /// Hands `callback!` each operation with the function (in the OpenAPI document's
        /// `operations` module) that describes it: `Name => module::function,` per row.
        #[cfg_attr(not(feature = "openapi"), allow(unused_macros))]
        macro_rules! with_describers {
            ($d callback:ident) => { $d callback! { $($op => $module::$describe,)* } };
        }
        #[cfg_attr(not(feature = "openapi"), allow(unused_imports))]
        pub(crate) use with_describers;
    };
}

use Scope::{
    AdminKeys as ADMIN_KEYS, AdminWebhooks as ADMIN_WEBHOOKS, ReadAssets as READ_ASSETS,
    ReadEvents as READ_EVENTS, ReadLibraries as READ_LIBRARIES, WriteAssets as WRITE_ASSETS,
    WriteLibraries as WRITE_LIBRARIES, WritePasses as WRITE_PASSES,
};

operations! { $
    /// `GET /api/v1/assets`
    ListAssets(assets::list_assets) => get("/api/v1/assets").scopes(&[READ_ASSETS]).reads(),
    /// `POST /api/v1/assets`
    CreateAsset(assets::create_asset) => post("/api/v1/assets")
        .scopes(&[WRITE_ASSETS])
        .json()
        .events(),
    /// `POST /api/v1/assets/upload`
    UploadAsset(assets::upload_asset) => post("/api/v1/assets/upload")
        .scopes(&[WRITE_ASSETS])
        .events(),
    /// `POST /api/v1/assets/bulk`: one change of up to 100 assets.
    BulkAssets(organize::bulk_assets) => post("/api/v1/assets/bulk")
        .scopes(&[WRITE_ASSETS])
        .json()
        .events()
        .of_capability(Capability::Organize),
    /// `GET /api/v1/tags`: the tags of published assets, with counts.
    ListTags(organize::list_tags) => get("/api/v1/tags")
        .scopes(&[READ_ASSETS])
        .reads()
        .of_capability(Capability::Organize),
    /// `GET /api/v1/search`: ranked hits over the assets and the text inside their files.
    Search(search::search) => get("/api/v1/search")
        .scopes(&[READ_ASSETS])
        .reads()
        .of_capability(Capability::Search),
    /// `GET /api/v1/assets/{asset_id}`
    GetAsset(assets::get_asset) => get("/api/v1/assets/{asset_id}")
        .scopes(&[READ_ASSETS])
        .reads()
        .public(),
    /// `PATCH /api/v1/assets/{asset_id}`
    UpdateAsset(assets::update_asset) => patch("/api/v1/assets/{asset_id}")
        .scopes(&[WRITE_ASSETS])
        .json()
        .events(),
    /// `DELETE /api/v1/assets/{asset_id}`
    DeleteAsset(assets::delete_asset) => delete("/api/v1/assets/{asset_id}")
        .scopes(&[WRITE_ASSETS])
        .events(),
    /// `PUT /api/v1/assets/{asset_id}/file`
    ReplaceAssetFile(assets::replace_asset_file) => put("/api/v1/assets/{asset_id}/file")
        .scopes(&[WRITE_ASSETS])
        .events(),
    /// `POST /api/v1/assets/{asset_id}/thumbnail`
    RemakeThumbnail(assets::remake_thumbnail) => post("/api/v1/assets/{asset_id}/thumbnail")
        .scopes(&[WRITE_ASSETS])
        .events()
        .of_capability(Capability::Previews),
    /// `GET /api/v1/assets/{asset_id}/download-url`
    AssetDownloadUrl(assets::asset_download_url) => get("/api/v1/assets/{asset_id}/download-url")
        .scopes(&[READ_ASSETS])
        .reads()
        .pass(),
    /// `GET /api/v1/assets/{asset_id}/image`
    AssetImage(assets::asset_image) => get("/api/v1/assets/{asset_id}/image")
        .scopes(&[READ_ASSETS])
        .pass()
        .public()
        .link()
        .revalidates()
        .of_capability(Capability::Variants),
    /// `GET /api/v1/assets/{asset_id}/image-url`
    AssetImageUrl(assets::asset_image_url) => get("/api/v1/assets/{asset_id}/image-url")
        .scopes(&[READ_ASSETS])
        .reads()
        .pass()
        .of_capability(Capability::Variants),
    /// `GET /api/v1/assets/{asset_id}/usage`
    AssetUsage(assets::asset_usage) => get("/api/v1/assets/{asset_id}/usage")
        .scopes(&[READ_ASSETS, READ_LIBRARIES])
        .reads(),
    /// `GET /api/v1/assets/{asset_id}/download`
    DownloadAsset(assets::download_asset) => get("/api/v1/assets/{asset_id}/download")
        .scopes(&[READ_ASSETS])
        .pass()
        .public()
        .link()
        .revalidates(),
    /// `GET /api/v1/libraries`
    ListLibraries(libraries::list_libraries) => get("/api/v1/libraries")
        .scopes(&[READ_LIBRARIES])
        .reads(),
    /// `GET /api/v1/libraries/slug/{slug}` (before `/api/v1/libraries/{library_id}`: a
    /// library id is never `slug`)
    GetLibraryBySlug(libraries::get_library_by_slug) => get("/api/v1/libraries/slug/{slug}")
        .scopes(&[READ_LIBRARIES])
        .reads()
        .pass(),
    /// `GET /api/v1/libraries/{library_id}`
    GetLibrary(libraries::get_library) => get("/api/v1/libraries/{library_id}")
        .scopes(&[READ_LIBRARIES])
        .reads()
        .pass(),
    /// `PUT /api/v1/libraries/{library_id}`
    PutLibrary(libraries::put_library) => put("/api/v1/libraries/{library_id}")
        .scopes(&[WRITE_LIBRARIES])
        .json()
        .events(),
    /// `DELETE /api/v1/libraries/{library_id}`
    DeleteLibrary(libraries::delete_library) => delete("/api/v1/libraries/{library_id}")
        .scopes(&[WRITE_LIBRARIES])
        .events(),
    /// `GET /api/v1/libraries/{library_id}/download`
    DownloadLibrary(libraries::download_library) => get("/api/v1/libraries/{library_id}/download")
        .scopes(&[READ_LIBRARIES, READ_ASSETS])
        .pass()
        .link(),
    /// `GET /api/v1/libraries/{library_id}/download-url`
    LibraryDownloadUrl(libraries::library_download_url) =>
        get("/api/v1/libraries/{library_id}/download-url")
        .scopes(&[READ_LIBRARIES, READ_ASSETS])
        .reads()
        .pass(),
    /// `GET /api/v1/libraries/{library_id}/passes`
    ListPasses(passes::list_passes) => get("/api/v1/libraries/{library_id}/passes")
        .scopes(&[WRITE_PASSES])
        .reads()
        .of_capability(Capability::Passes),
    /// `POST /api/v1/libraries/{library_id}/passes`
    CreatePass(passes::create_pass) => post("/api/v1/libraries/{library_id}/passes")
        .scopes(&[WRITE_PASSES])
        .json()
        .events()
        .of_capability(Capability::Passes),
    /// `GET /api/v1/libraries/{library_id}/passes/{pass_id}`
    GetPass(passes::get_pass) =>
        get("/api/v1/libraries/{library_id}/passes/{pass_id}")
        .scopes(&[WRITE_PASSES])
        .reads()
        .of_capability(Capability::Passes),
    /// `DELETE /api/v1/libraries/{library_id}/passes/{pass_id}`
    RevokePass(passes::revoke_pass) =>
        delete("/api/v1/libraries/{library_id}/passes/{pass_id}")
        .scopes(&[WRITE_PASSES])
        .events()
        .of_capability(Capability::Passes),
    /// `GET /api/v1/events`: the change feed and audit trail.
    ListEvents(events::list_events) => get("/api/v1/events")
        .scopes(&[READ_EVENTS])
        .reads()
        .of_capability(Capability::Events),
    /// `GET /api/v1/webhooks`
    ListWebhooks(webhooks::list_webhooks) => get("/api/v1/webhooks")
        .scopes(&[ADMIN_WEBHOOKS])
        .reads()
        .of_capability(Capability::Webhooks),
    /// `POST /api/v1/webhooks`
    CreateWebhook(webhooks::create_webhook) => post("/api/v1/webhooks")
        .scopes(&[ADMIN_WEBHOOKS])
        .json()
        .events()
        .of_capability(Capability::Webhooks),
    /// `GET /api/v1/webhooks/{webhook_id}`
    GetWebhook(webhooks::get_webhook) => get("/api/v1/webhooks/{webhook_id}")
        .scopes(&[ADMIN_WEBHOOKS])
        .reads()
        .of_capability(Capability::Webhooks),
    /// `PATCH /api/v1/webhooks/{webhook_id}`
    UpdateWebhook(webhooks::update_webhook) => patch("/api/v1/webhooks/{webhook_id}")
        .scopes(&[ADMIN_WEBHOOKS])
        .json()
        .events()
        .of_capability(Capability::Webhooks),
    /// `DELETE /api/v1/webhooks/{webhook_id}`
    DeleteWebhook(webhooks::delete_webhook) => delete("/api/v1/webhooks/{webhook_id}")
        .scopes(&[ADMIN_WEBHOOKS])
        .events()
        .of_capability(Capability::Webhooks),
    /// `GET /api/v1/webhooks/{webhook_id}/deliveries`
    ListDeliveries(webhooks::list_deliveries) =>
        get("/api/v1/webhooks/{webhook_id}/deliveries")
        .scopes(&[ADMIN_WEBHOOKS])
        .reads()
        .of_capability(Capability::Webhooks),
    /// `POST /api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry`
    RetryDelivery(webhooks::retry_delivery) =>
        post("/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry")
        .scopes(&[ADMIN_WEBHOOKS])
        .of_capability(Capability::Webhooks),
    /// `POST /api/v1/webhooks/{webhook_id}/test`
    TestWebhook(webhooks::test_webhook) => post("/api/v1/webhooks/{webhook_id}/test")
        .scopes(&[ADMIN_WEBHOOKS])
        .of_capability(Capability::Webhooks),
    /// `POST /api/v1/uploads`: a resumable (tus) upload.
    CreateUpload(uploads::create_upload) => post("/api/v1/uploads")
        .scopes(&[WRITE_ASSETS])
        .events()
        .tus()
        .of_capability(Capability::Uploads),
    /// `POST /api/v1/uploads/direct` (before `/api/v1/uploads/{upload_id}`: an upload id is
    /// never `direct`)
    CreateDirectUpload(uploads::create_direct_upload) => post("/api/v1/uploads/direct")
        .scopes(&[WRITE_ASSETS])
        .json()
        .of_capability(Capability::Uploads),
    /// `POST /api/v1/uploads/direct/{upload_id}/complete`
    CompleteDirectUpload(uploads::complete_direct_upload) =>
        post("/api/v1/uploads/direct/{upload_id}/complete")
        .scopes(&[WRITE_ASSETS])
        .events()
        .of_capability(Capability::Uploads),
    /// `GET` and `HEAD /api/v1/uploads/{upload_id}`
    GetUpload(uploads::get_upload) => get("/api/v1/uploads/{upload_id}")
        .scopes(&[WRITE_ASSETS])
        .events()
        .tus()
        .of_capability(Capability::Uploads),
    /// `PATCH /api/v1/uploads/{upload_id}`
    PatchUpload(uploads::patch_upload) => patch("/api/v1/uploads/{upload_id}")
        .scopes(&[WRITE_ASSETS])
        .events()
        .tus()
        .of_capability(Capability::Uploads),
    /// `DELETE /api/v1/uploads/{upload_id}`
    DeleteUpload(uploads::delete_upload) => delete("/api/v1/uploads/{upload_id}")
        .scopes(&[WRITE_ASSETS])
        .tus()
        .of_capability(Capability::Uploads),
    /// `GET /api/v1/keys`
    ListKeys(keys::list_keys) => get("/api/v1/keys")
        .scopes(&[ADMIN_KEYS])
        .reads()
        .of_capability(Capability::Keys),
    /// `POST /api/v1/keys`
    CreateKey(keys::create_key) => post("/api/v1/keys")
        .scopes(&[ADMIN_KEYS])
        .json()
        .events()
        .of_capability(Capability::Keys),
    /// `GET /api/v1/keys/{key_id}`
    GetKey(keys::get_key) => get("/api/v1/keys/{key_id}")
        .scopes(&[ADMIN_KEYS])
        .reads()
        .of_capability(Capability::Keys),
    /// `DELETE /api/v1/keys/{key_id}`
    RevokeKey(keys::revoke_key) => delete("/api/v1/keys/{key_id}")
        .scopes(&[ADMIN_KEYS])
        .events()
        .of_capability(Capability::Keys),
    /// `POST /api/v1/tokens`: a browser token, for any key (no scope of its own).
    CreateToken(keys::create_token) => post("/api/v1/tokens")
        .any_key()
        .json()
        .of_capability(Capability::Keys),
    /// `GET /api/v1/openapi.json`: the OpenAPI document of the API; needs no key (a 404
    /// when core is built without its `openapi` feature).
    OpenApi(libraries::open_api) => get("/api/v1/openapi.json")
        .reads()
        .of_capability(Capability::OpenApi),
}

/// An operation with its row of the operations table ([`OPERATIONS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OperationSpec {
    /// The operation.
    pub operation: Operation,
    /// Everything the table says of it.
    pub row: OperationRow,
}

/// A row of the operations table: everything said of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OperationRow {
    /// Its method (`HEAD` runs a `GET` operation).
    pub method: &'static str,
    /// Its path as the OpenAPI document names it (`/api/v1/assets/{asset_id}`); the route's
    /// path calls its first parameter `{id}` ([`crate::Route::path`]).
    pub path: &'static str,
    /// What it requires of a key; none: it needs no key at all, unless [`Self::key`].
    pub scopes: &'static [Scope],
    /// Whether it needs a key (any key) though it requires no scope.
    pub key: bool,
    /// The capability it belongs to; `None` for the contract's own operations.
    pub capability: Option<Capability>,
    /// Whether a library pass (`Authorization: Pass`) may run it.
    pub pass: bool,
    /// Whether a request without a key may run it as a public read (served only for a
    /// published, public asset).
    pub public: bool,
    /// Whether a signed link's parameters may run it without a key.
    pub link: bool,
    /// Whether it only reads (a JSON `GET` answers with an `ETag` then).
    pub read: bool,
    /// Whether it answers 304 to an `If-None-Match` naming its `ETag` (the reads, and image
    /// variants).
    pub not_modified: bool,
    /// Whether it may append to the event log.
    pub events: bool,
    /// Whether it reads a JSON body.
    pub json_body: bool,
    /// Whether it speaks the tus protocol (`Tus-Resumable`, never cached).
    pub tus: bool,
}

const fn row(method: &'static str, path: &'static str) -> OperationRow {
    OperationRow {
        method,
        path,
        scopes: &[],
        key: false,
        capability: None,
        pass: false,
        public: false,
        link: false,
        read: false,
        not_modified: false,
        events: false,
        json_body: false,
        tus: false,
    }
}

const fn get(path: &'static str) -> OperationRow {
    row("GET", path)
}

const fn post(path: &'static str) -> OperationRow {
    row("POST", path)
}

const fn put(path: &'static str) -> OperationRow {
    row("PUT", path)
}

const fn patch(path: &'static str) -> OperationRow {
    row("PATCH", path)
}

const fn delete(path: &'static str) -> OperationRow {
    row("DELETE", path)
}

impl OperationRow {
    const fn scopes(mut self, scopes: &'static [Scope]) -> Self {
        self.scopes = scopes;
        self
    }

    const fn any_key(mut self) -> Self {
        self.key = true;
        self
    }

    const fn of_capability(mut self, capability: Capability) -> Self {
        self.capability = Some(capability);
        self
    }

    const fn pass(mut self) -> Self {
        self.pass = true;
        self
    }

    const fn public(mut self) -> Self {
        self.public = true;
        self
    }

    const fn link(mut self) -> Self {
        self.link = true;
        self
    }

    const fn reads(mut self) -> Self {
        self.read = true;
        self.not_modified = true;
        self
    }

    const fn revalidates(mut self) -> Self {
        self.not_modified = true;
        self
    }

    const fn events(mut self) -> Self {
        self.events = true;
        self
    }

    const fn json(mut self) -> Self {
        self.json_body = true;
        self
    }

    const fn tus(mut self) -> Self {
        self.tus = true;
        self
    }

    const fn of(self, operation: Operation) -> OperationSpec {
        OperationSpec {
            operation,
            row: self,
        }
    }
}

/// A capability: a part of the API beyond the contract, built in with the cargo feature of
/// the same name. An operation of a capability this build leaves out has no route: its
/// paths answer 404 as unknown paths do, and [`crate::Service::handle`] answers it so too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Capability {
    /// Library passes (feature `passes`).
    Passes,
    /// The change feed (feature `events`).
    Events,
    /// Webhooks and their deliveries (feature `webhooks`).
    Webhooks,
    /// Resumable (tus) and direct uploads (feature `uploads`).
    Uploads,
    /// Tags and bulk changes (feature `organize`).
    Organize,
    /// Keys minted over HTTP and browser tokens (feature `keys`).
    Keys,
    /// Thumbnails and previews (feature `previews`).
    Previews,
    /// Image variants (feature `variants`).
    Variants,
    /// Search over the assets and the text inside their files (feature `search`).
    Search,
    /// The OpenAPI document (feature `openapi`).
    OpenApi,
}

impl Capability {
    /// Whether this build has the capability (its cargo feature is on).
    pub const fn is_built(self) -> bool {
        match self {
            Capability::Passes => cfg!(feature = "passes"),
            Capability::Events => cfg!(feature = "events"),
            Capability::Webhooks => cfg!(feature = "webhooks"),
            Capability::Uploads => cfg!(feature = "uploads"),
            Capability::Organize => cfg!(feature = "organize"),
            Capability::Keys => cfg!(feature = "keys"),
            Capability::Previews => cfg!(feature = "previews"),
            Capability::Variants => cfg!(feature = "variants"),
            Capability::Search => cfg!(feature = "search"),
            Capability::OpenApi => cfg!(feature = "openapi"),
        }
    }

    /// The cargo feature that builds the capability in.
    pub const fn feature(self) -> &'static str {
        match self {
            Capability::Passes => "passes",
            Capability::Events => "events",
            Capability::Webhooks => "webhooks",
            Capability::Uploads => "uploads",
            Capability::Organize => "organize",
            Capability::Keys => "keys",
            Capability::Previews => "previews",
            Capability::Variants => "variants",
            Capability::Search => "search",
            Capability::OpenApi => "openapi",
        }
    }
}

impl Operation {
    /// The operation's row of [`OPERATIONS`].
    pub const fn spec(self) -> &'static OperationSpec {
        &OPERATIONS[self as usize]
    }

    /// The capability the operation belongs to; `None` for the contract's own operations,
    /// which every build has.
    pub const fn capability(self) -> Option<Capability> {
        self.spec().row.capability
    }

    /// Whether this build has the operation: it is the contract's, or its capability is built
    /// in.
    pub const fn is_built(self) -> bool {
        match self.capability() {
            Some(capability) => capability.is_built(),
            None => true,
        }
    }

    /// The scope table: what each operation requires of the key.
    pub const fn scopes(self) -> &'static [Scope] {
        self.spec().row.scopes
    }

    /// Whether the operation needs a key: one that requires scopes does, and so does one
    /// that takes any key ([`OperationRow::key`]).
    pub const fn needs_key(self) -> bool {
        !self.spec().row.scopes.is_empty() || self.spec().row.key
    }

    /// Whether a library pass (`Authorization: Pass`) may run the operation: reading its
    /// library (by id or slug), the library's zip and its link, and its assets' downloads,
    /// image variants and their links. Any other operation is 403 for a pass.
    pub const fn opens_with_pass(self) -> bool {
        self.spec().row.pass
    }

    /// Whether the operation only reads (a JSON `GET` answers with an `ETag` then).
    pub const fn is_read(self) -> bool {
        self.spec().row.read
    }

    /// Whether the operation may append to the event log (so the webhook worker of this
    /// process looks at it at once).
    pub const fn writes_events(self) -> bool {
        self.spec().row.events
    }

    /// Whether the operation speaks the tus protocol: its answers carry `Tus-Resumable` and
    /// are never kept by a cache (`Cache-Control: no-store`).
    pub const fn is_tus(self) -> bool {
        self.spec().row.tus
    }

    /// Whether the operation answers 304 to an `If-None-Match` naming its `ETag`: the JSON
    /// reads, and image variants.
    pub const fn answers_not_modified(self) -> bool {
        self.spec().row.not_modified
    }

    /// Whether the operation reads a JSON body.
    pub const fn takes_json_body(self) -> bool {
        self.spec().row.json_body
    }
}
