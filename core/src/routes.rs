//! The route table and the scope table: every path of the API, its methods, the operation
//! each runs and the scopes it needs. Adapters register exactly these routes (or call
//! [`match_route`]); nothing else decides where a request goes.

use crate::error::ApiError;
use crate::model::Scope;
use crate::reply::Reply;

/// The operations of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// `GET /api/v1/assets`
    ListAssets,
    /// `GET /api/v1/assets/{asset_id}`
    GetAsset,
    /// `POST /api/v1/assets`
    CreateAsset,
    /// `GET /api/v1/libraries`
    ListLibraries,
    /// `GET /api/v1/libraries/{library_id}`
    GetLibrary,
    /// `PUT /api/v1/libraries/{library_id}`
    PutLibrary,
    /// `DELETE /api/v1/libraries/{library_id}`
    DeleteLibrary,
    /// `GET /api/v1/assets/{asset_id}/download`
    DownloadAsset,
    /// `POST /api/v1/assets/upload`
    UploadAsset,
    /// `GET /api/v1/libraries/{library_id}/download`
    DownloadLibrary,
    /// `PATCH /api/v1/assets/{asset_id}`
    UpdateAsset,
    /// `DELETE /api/v1/assets/{asset_id}`
    DeleteAsset,
    /// `PUT /api/v1/assets/{asset_id}/file`
    ReplaceAssetFile,
    /// `GET /api/v1/assets/{asset_id}/usage`
    AssetUsage,
    /// `GET /api/v1/libraries/slug/{slug}`
    GetLibraryBySlug,
    /// `GET /api/v1/assets/{asset_id}/download-url`
    AssetDownloadUrl,
    /// `GET /api/v1/libraries/{library_id}/download-url`
    LibraryDownloadUrl,
    /// `GET /api/v1/openapi.json`: the OpenAPI document of the API; needs no key (a 404
    /// when core is built without its `openapi` feature).
    OpenApi,
    /// `POST /api/v1/libraries/{library_id}/passes`
    CreatePass,
    /// `GET /api/v1/libraries/{library_id}/passes`
    ListPasses,
    /// `GET /api/v1/libraries/{library_id}/passes/{pass_id}`
    GetPass,
    /// `DELETE /api/v1/libraries/{library_id}/passes/{pass_id}`
    RevokePass,
    /// `POST /api/v1/assets/{asset_id}/thumbnail`
    RemakeThumbnail,
    /// `GET /api/v1/assets/{asset_id}/image`
    AssetImage,
    /// `GET /api/v1/assets/{asset_id}/image-url`
    AssetImageUrl,
    /// `GET /api/v1/events`: the change feed and audit trail.
    ListEvents,
    /// `POST /api/v1/webhooks`
    CreateWebhook,
    /// `GET /api/v1/webhooks`
    ListWebhooks,
    /// `GET /api/v1/webhooks/{webhook_id}`
    GetWebhook,
    /// `PATCH /api/v1/webhooks/{webhook_id}`
    UpdateWebhook,
    /// `DELETE /api/v1/webhooks/{webhook_id}`
    DeleteWebhook,
    /// `GET /api/v1/webhooks/{webhook_id}/deliveries`
    ListDeliveries,
    /// `POST /api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry`
    RetryDelivery,
    /// `POST /api/v1/webhooks/{webhook_id}/test`
    TestWebhook,
    /// `POST /api/v1/uploads`: a resumable (tus) upload.
    CreateUpload,
    /// `GET` and `HEAD /api/v1/uploads/{upload_id}`
    GetUpload,
    /// `PATCH /api/v1/uploads/{upload_id}`
    PatchUpload,
    /// `DELETE /api/v1/uploads/{upload_id}`
    DeleteUpload,
    /// `POST /api/v1/uploads/direct`
    CreateDirectUpload,
    /// `POST /api/v1/uploads/direct/{upload_id}/complete`
    CompleteDirectUpload,
    /// `POST /api/v1/assets/bulk`: one change of up to 100 assets.
    BulkAssets,
    /// `GET /api/v1/tags`: the tags of published assets, with counts.
    ListTags,
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
    /// Thumbnails and previews (feature `previews`).
    Previews,
    /// Image variants (feature `variants`).
    Variants,
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
            Capability::Previews => cfg!(feature = "previews"),
            Capability::Variants => cfg!(feature = "variants"),
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
            Capability::Previews => "previews",
            Capability::Variants => "variants",
            Capability::OpenApi => "openapi",
        }
    }
}

impl Operation {
    /// The capability the operation belongs to; `None` for the contract's own operations,
    /// which every build has.
    pub const fn capability(self) -> Option<Capability> {
        Some(match self {
            Operation::CreatePass
            | Operation::ListPasses
            | Operation::GetPass
            | Operation::RevokePass => Capability::Passes,
            Operation::ListEvents => Capability::Events,
            Operation::CreateWebhook
            | Operation::ListWebhooks
            | Operation::GetWebhook
            | Operation::UpdateWebhook
            | Operation::DeleteWebhook
            | Operation::ListDeliveries
            | Operation::RetryDelivery
            | Operation::TestWebhook => Capability::Webhooks,
            Operation::CreateUpload
            | Operation::GetUpload
            | Operation::PatchUpload
            | Operation::DeleteUpload
            | Operation::CreateDirectUpload
            | Operation::CompleteDirectUpload => Capability::Uploads,
            Operation::BulkAssets | Operation::ListTags => Capability::Organize,
            Operation::RemakeThumbnail => Capability::Previews,
            Operation::AssetImage | Operation::AssetImageUrl => Capability::Variants,
            Operation::OpenApi => Capability::OpenApi,
            _ => return None,
        })
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
        match self {
            Operation::ListAssets
            | Operation::GetAsset
            | Operation::DownloadAsset
            | Operation::AssetDownloadUrl
            | Operation::AssetImage
            | Operation::AssetImageUrl
            | Operation::ListTags => &[Scope::ReadAssets],
            Operation::CreateAsset
            | Operation::BulkAssets
            | Operation::UploadAsset
            | Operation::UpdateAsset
            | Operation::DeleteAsset
            | Operation::ReplaceAssetFile
            | Operation::RemakeThumbnail
            | Operation::CreateUpload
            | Operation::GetUpload
            | Operation::PatchUpload
            | Operation::DeleteUpload
            | Operation::CreateDirectUpload
            | Operation::CompleteDirectUpload => &[Scope::WriteAssets],
            Operation::AssetUsage => &[Scope::ReadAssets, Scope::ReadLibraries],
            Operation::ListLibraries | Operation::GetLibrary | Operation::GetLibraryBySlug => {
                &[Scope::ReadLibraries]
            }
            Operation::PutLibrary | Operation::DeleteLibrary => &[Scope::WriteLibraries],
            Operation::DownloadLibrary | Operation::LibraryDownloadUrl => {
                &[Scope::ReadLibraries, Scope::ReadAssets]
            }
            Operation::CreatePass
            | Operation::ListPasses
            | Operation::GetPass
            | Operation::RevokePass => &[Scope::WritePasses],
            Operation::ListEvents => &[Scope::ReadEvents],
            Operation::CreateWebhook
            | Operation::ListWebhooks
            | Operation::GetWebhook
            | Operation::UpdateWebhook
            | Operation::DeleteWebhook
            | Operation::ListDeliveries
            | Operation::RetryDelivery
            | Operation::TestWebhook => &[Scope::AdminWebhooks],
            Operation::OpenApi => &[],
        }
    }

    /// Whether a library pass (`Authorization: Pass`) may run the operation: reading its
    /// library (by id or slug), the library's zip and its link, and its assets' downloads,
    /// image variants and their links. Any other operation is 403 for a pass.
    pub const fn opens_with_pass(self) -> bool {
        matches!(
            self,
            Operation::GetLibrary
                | Operation::GetLibraryBySlug
                | Operation::DownloadLibrary
                | Operation::LibraryDownloadUrl
                | Operation::DownloadAsset
                | Operation::AssetDownloadUrl
                | Operation::AssetImage
                | Operation::AssetImageUrl
        )
    }

    /// Whether the operation only reads (a JSON `GET` answers with an `ETag` then).
    pub const fn is_read(self) -> bool {
        matches!(
            self,
            Operation::ListAssets
                | Operation::GetAsset
                | Operation::AssetUsage
                | Operation::AssetDownloadUrl
                | Operation::AssetImageUrl
                | Operation::ListLibraries
                | Operation::GetLibrary
                | Operation::GetLibraryBySlug
                | Operation::LibraryDownloadUrl
                | Operation::ListPasses
                | Operation::GetPass
                | Operation::ListEvents
                | Operation::ListWebhooks
                | Operation::GetWebhook
                | Operation::ListDeliveries
                | Operation::ListTags
                | Operation::OpenApi
        )
    }

    /// Whether the operation may append to the event log (so the webhook worker of this
    /// process looks at it at once).
    pub const fn writes_events(self) -> bool {
        matches!(
            self,
            Operation::CreateAsset
                | Operation::UploadAsset
                | Operation::UpdateAsset
                | Operation::ReplaceAssetFile
                | Operation::DeleteAsset
                | Operation::RemakeThumbnail
                | Operation::PutLibrary
                | Operation::DeleteLibrary
                | Operation::CreatePass
                | Operation::RevokePass
                | Operation::CreateWebhook
                | Operation::UpdateWebhook
                | Operation::DeleteWebhook
                | Operation::CreateUpload
                | Operation::GetUpload
                | Operation::PatchUpload
                | Operation::CompleteDirectUpload
                | Operation::BulkAssets
        )
    }

    /// Whether the operation speaks the tus protocol: its answers carry `Tus-Resumable` and
    /// are never kept by a cache (`Cache-Control: no-store`).
    pub const fn is_tus(self) -> bool {
        matches!(
            self,
            Operation::CreateUpload
                | Operation::GetUpload
                | Operation::PatchUpload
                | Operation::DeleteUpload
        )
    }

    /// Whether the operation answers 304 to an `If-None-Match` naming its `ETag`: the JSON
    /// reads, and image variants.
    pub const fn answers_not_modified(self) -> bool {
        self.is_read() || matches!(self, Operation::AssetImage)
    }

    /// Whether the operation reads a JSON body.
    pub const fn takes_json_body(self) -> bool {
        matches!(
            self,
            Operation::CreateAsset
                | Operation::PutLibrary
                | Operation::UpdateAsset
                | Operation::CreatePass
                | Operation::CreateWebhook
                | Operation::UpdateWebhook
                | Operation::CreateDirectUpload
                | Operation::BulkAssets
        )
    }
}

/// A route of the API: a path (axum-style: `{id}`, and `{pass_id}` below it, for the path
/// ids) and its methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The path, e.g. `/api/v1/assets/{id}`.
    pub path: &'static str,
    /// Each method with its operation.
    pub methods: &'static [(&'static str, Operation)],
    /// The `Allow` header value for a 405 on this path.
    pub allow: &'static str,
}

/// Every route of the API, of every capability. Adapters register [`routes`]: those of this
/// build.
pub const ROUTES: &[Route] = &[
    Route {
        path: "/api/v1/assets",
        methods: &[
            ("GET", Operation::ListAssets),
            ("POST", Operation::CreateAsset),
        ],
        allow: "GET, HEAD, POST",
    },
    Route {
        path: "/api/v1/assets/upload",
        methods: &[("POST", Operation::UploadAsset)],
        allow: "POST",
    },
    Route {
        path: "/api/v1/assets/bulk",
        methods: &[("POST", Operation::BulkAssets)],
        allow: "POST",
    },
    Route {
        path: "/api/v1/tags",
        methods: &[("GET", Operation::ListTags)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/assets/{id}",
        methods: &[
            ("GET", Operation::GetAsset),
            ("PATCH", Operation::UpdateAsset),
            ("DELETE", Operation::DeleteAsset),
        ],
        allow: "GET, HEAD, PATCH, DELETE",
    },
    Route {
        path: "/api/v1/assets/{id}/file",
        methods: &[("PUT", Operation::ReplaceAssetFile)],
        allow: "PUT",
    },
    Route {
        path: "/api/v1/assets/{id}/thumbnail",
        methods: &[("POST", Operation::RemakeThumbnail)],
        allow: "POST",
    },
    Route {
        path: "/api/v1/assets/{id}/download-url",
        methods: &[("GET", Operation::AssetDownloadUrl)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/assets/{id}/image",
        methods: &[("GET", Operation::AssetImage)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/assets/{id}/image-url",
        methods: &[("GET", Operation::AssetImageUrl)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/assets/{id}/usage",
        methods: &[("GET", Operation::AssetUsage)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/assets/{id}/download",
        methods: &[("GET", Operation::DownloadAsset)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/libraries",
        methods: &[("GET", Operation::ListLibraries)],
        allow: "GET, HEAD",
    },
    // Before `/api/v1/libraries/{id}/...`: a library id is never `slug`.
    Route {
        path: "/api/v1/libraries/slug/{id}",
        methods: &[("GET", Operation::GetLibraryBySlug)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/libraries/{id}",
        methods: &[
            ("GET", Operation::GetLibrary),
            ("PUT", Operation::PutLibrary),
            ("DELETE", Operation::DeleteLibrary),
        ],
        allow: "GET, HEAD, PUT, DELETE",
    },
    Route {
        path: "/api/v1/libraries/{id}/download",
        methods: &[("GET", Operation::DownloadLibrary)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/libraries/{id}/download-url",
        methods: &[("GET", Operation::LibraryDownloadUrl)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/libraries/{id}/passes",
        methods: &[
            ("GET", Operation::ListPasses),
            ("POST", Operation::CreatePass),
        ],
        allow: "GET, HEAD, POST",
    },
    Route {
        path: "/api/v1/libraries/{id}/passes/{pass_id}",
        methods: &[
            ("GET", Operation::GetPass),
            ("DELETE", Operation::RevokePass),
        ],
        allow: "GET, HEAD, DELETE",
    },
    Route {
        path: "/api/v1/events",
        methods: &[("GET", Operation::ListEvents)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/webhooks",
        methods: &[
            ("GET", Operation::ListWebhooks),
            ("POST", Operation::CreateWebhook),
        ],
        allow: "GET, HEAD, POST",
    },
    Route {
        path: "/api/v1/webhooks/{id}",
        methods: &[
            ("GET", Operation::GetWebhook),
            ("PATCH", Operation::UpdateWebhook),
            ("DELETE", Operation::DeleteWebhook),
        ],
        allow: "GET, HEAD, PATCH, DELETE",
    },
    Route {
        path: "/api/v1/webhooks/{id}/deliveries",
        methods: &[("GET", Operation::ListDeliveries)],
        allow: "GET, HEAD",
    },
    Route {
        path: "/api/v1/webhooks/{id}/deliveries/{delivery_id}/retry",
        methods: &[("POST", Operation::RetryDelivery)],
        allow: "POST",
    },
    Route {
        path: "/api/v1/webhooks/{id}/test",
        methods: &[("POST", Operation::TestWebhook)],
        allow: "POST",
    },
    Route {
        path: "/api/v1/uploads",
        methods: &[("POST", Operation::CreateUpload)],
        allow: "POST",
    },
    // Before `/api/v1/uploads/{id}`: an upload id is never `direct`.
    Route {
        path: "/api/v1/uploads/direct",
        methods: &[("POST", Operation::CreateDirectUpload)],
        allow: "POST",
    },
    Route {
        path: "/api/v1/uploads/direct/{id}/complete",
        methods: &[("POST", Operation::CompleteDirectUpload)],
        allow: "POST",
    },
    Route {
        path: "/api/v1/uploads/{id}",
        methods: &[
            ("GET", Operation::GetUpload),
            ("PATCH", Operation::PatchUpload),
            ("DELETE", Operation::DeleteUpload),
        ],
        allow: "GET, HEAD, PATCH, DELETE",
    },
    Route {
        path: "/api/v1/openapi.json",
        methods: &[("GET", Operation::OpenApi)],
        allow: "GET, HEAD",
    },
];

/// The prefix under which every route lives; unknown paths below it answer JSON 404s.
pub const API_PREFIX: &str = "/api/v1";

/// The routes of this build: [`ROUTES`] without those of the capabilities it leaves out.
/// Adapters register exactly these.
pub fn routes() -> impl Iterator<Item = &'static Route> {
    ROUTES.iter().filter(|route| route.is_built())
}

impl Route {
    /// Whether this build has the route (the capability of its operations is built in).
    pub fn is_built(&self) -> bool {
        self.methods.iter().all(|(_, op)| op.is_built())
    }

    /// The operation `method` runs on this route; `HEAD` runs the `GET` operation.
    pub fn operation(&self, method: &str) -> Option<Operation> {
        let method = if method == "HEAD" { "GET" } else { method };
        self.methods
            .iter()
            .find(|(m, _)| *m == method)
            .map(|(_, op)| *op)
    }
}

/// Where a request path leads, by [`ROUTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteMatch<'p> {
    /// A route, with its percent-decoded path ids.
    Route {
        /// The route.
        route: &'static Route,
        /// The `{...}` segments in path order, percent-decoded (empty for a route without).
        ids: Vec<std::borrow::Cow<'p, str>>,
    },
    /// Under [`API_PREFIX`] but no route: a JSON 404.
    NotFound,
    /// Not under [`API_PREFIX`]: not ours to answer.
    Outside,
}

/// Matches a request path (without query) against [`ROUTES`], segment by segment, in their
/// order: a path whose first match is a route of a capability this build leaves out is
/// [`RouteMatch::NotFound`] (so `/api/v1/assets/bulk` without `organize` is not an asset
/// id). Adapters whose framework routes by itself need not call it.
pub fn match_route(path: &str) -> RouteMatch<'_> {
    let Some(rest) = path.strip_prefix(API_PREFIX) else {
        return RouteMatch::Outside;
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return RouteMatch::Outside;
    }
    for route in ROUTES {
        let mut ids = Vec::new();
        let mut got = path.split('/');
        let mut want = route.path.split('/');
        let matched = loop {
            match (got.next(), want.next()) {
                (None, None) => break true,
                (Some(g), Some(w)) if w.starts_with('{') && !g.is_empty() => {
                    ids.push(percent_encoding::percent_decode_str(g).decode_utf8_lossy());
                }
                (Some(g), Some(w)) if g == w => {}
                _ => break false,
            }
        };
        if matched {
            if !route.is_built() {
                return RouteMatch::NotFound;
            }
            return RouteMatch::Route { route, ids };
        }
    }
    RouteMatch::NotFound
}

/// The default [`crate::Config::files_base_url`], spelled once for [`THUMBNAIL_ROUTE`].
macro_rules! files_base_url {
    () => {
        "/files/"
    };
}
pub(crate) use files_base_url;

/// The public route of image thumbnails (axum-style, `{name}` for the file name), for
/// servers that serve them next to the API under the default [`crate::Config::files_base_url`]:
/// `GET` and `HEAD`, no key. Adapters register it and hand the name to
/// [`crate::Service::thumbnail`].
pub const THUMBNAIL_ROUTE: &str = concat!(files_base_url!(), "thumbnails/{name}");

/// The answer for a path under [`API_PREFIX`] that is no route.
pub fn route_not_found() -> Reply {
    ApiError::NotFound("No such route").into_reply()
}

/// The answer for a known path with a method it does not take.
pub fn method_not_allowed(method: &str, route: &Route) -> Reply {
    ApiError::MethodNotAllowed {
        method: method.to_owned(),
        allow: route.allow,
    }
    .into_reply()
}

#[cfg(test)]
#[path = "routes_test.rs"]
mod tests;
