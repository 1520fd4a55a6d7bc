//! The routes of the API, derived from the operations table ([`crate::OPERATIONS`]): every
//! path, its methods and the operation each runs. Adapters register exactly these routes (or
//! call [`match_route`]); nothing else decides where a request goes.

pub use crate::operations::{Capability, OPERATIONS, Operation, OperationRow, OperationSpec};

use crate::error::ApiError;
use crate::reply::Reply;

/// A route of the API: a path (axum-style: the first parameter `{id}`, a second one by its
/// name, e.g. `{pass_id}`) and its methods, derived from [`OPERATIONS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// The path, e.g. `/api/v1/assets/{id}`.
    pub path: &'static str,
    /// Each method with its operation.
    pub methods: &'static [(&'static str, Operation)],
    /// The `Allow` header value for a 405 on this path: its methods, `HEAD` after `GET`.
    pub allow: &'static str,
}

/// Every route of the API, of every capability, in the order they are matched: the paths of
/// [`OPERATIONS`] in their order, each with its methods. Adapters register them all, those
/// of a capability the build leaves out ([`Route::is_built`]) as unknown routes.
///
/// ```
/// use assetlib_core::{Operation, ROUTES};
///
/// let assets = ROUTES.iter().find(|r| r.path == "/api/v1/assets/{id}").unwrap();
/// assert_eq!(assets.allow, "GET, HEAD, PATCH, DELETE");
/// assert_eq!(assets.operation("HEAD"), Some(Operation::GetAsset));
/// ```
pub const ROUTES: Routes = Routes;

/// The routes of [`OPERATIONS`] (see [`ROUTES`]): a slice of [`Route`], made once.
#[derive(Debug, Clone, Copy)]
pub struct Routes;

impl std::ops::Deref for Routes {
    type Target = [Route];

    fn deref(&self) -> &[Route] {
        all_routes()
    }
}

impl IntoIterator for Routes {
    type Item = &'static Route;
    type IntoIter = std::slice::Iter<'static, Route>;

    fn into_iter(self) -> Self::IntoIter {
        all_routes().iter()
    }
}

/// The routes, derived on first use.
fn all_routes() -> &'static [Route] {
    static DERIVED: std::sync::LazyLock<&'static [Route]> = std::sync::LazyLock::new(derive_routes);
    *DERIVED
}

/// The routes of [`OPERATIONS`]: one per path, in the order its first operation comes, with
/// its methods in table order; made once, for the life of the process.
fn derive_routes() -> &'static [Route] {
    let mut grouped: Vec<(String, Vec<(&'static str, Operation)>)> = Vec::new();
    for spec in OPERATIONS {
        let path = route_path(spec.row.path);
        match grouped.iter_mut().find(|(p, _)| *p == path) {
            Some((_, methods)) => methods.push((spec.row.method, spec.operation)),
            None => grouped.push((path, vec![(spec.row.method, spec.operation)])),
        }
    }
    let routes: Vec<Route> = grouped
        .into_iter()
        .map(|(path, methods)| {
            let allow: Vec<&str> = methods
                .iter()
                .flat_map(|(m, _)| {
                    if *m == "GET" {
                        vec!["GET", "HEAD"]
                    } else {
                        vec![*m]
                    }
                })
                .collect();
            Route {
                path: path.leak(),
                methods: methods.leak(),
                allow: allow.join(", ").leak(),
            }
        })
        .collect();
    routes.leak()
}

/// An OpenAPI path as a route path: its first parameter is `{id}`.
fn route_path(path: &str) -> String {
    match (path.find('{'), path.find('}')) {
        (Some(open), Some(close)) if open < close => {
            format!("{}{{id}}{}", &path[..open], &path[close + 1..])
        }
        _ => path.to_owned(),
    }
}

/// The prefix under which every route lives; unknown paths below it answer JSON 404s.
pub const API_PREFIX: &str = "/api/v1";

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

/// The error of a path under [`API_PREFIX`] that is no route, and of an operation the build
/// or the store leaves out.
pub(crate) const NO_ROUTE: ApiError = ApiError::NotFound("No such route");

/// The answer for a path under [`API_PREFIX`] that is no route.
pub fn route_not_found() -> Reply {
    NO_ROUTE.into_reply()
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
