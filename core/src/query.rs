//! Query strings: raw `?...` text -> validated [`AssetQuery`], [`LibraryQuery`], [`DetailQuery`].
//!
//! Rules (DESIGN.md §3): `page`, `per_page` and `limit` are positive integers (ASCII digits,
//! leading zeros allowed, no sign, no spaces); values above the maximum are clamped to it, and
//! values too large for 64 bits count as past the end. Enumerated parameters match exactly.
//! A known parameter given twice is an error; unknown parameters are ignored. Percent-decoding
//! and `+` as space follow `application/x-www-form-urlencoded`.

use crate::error::ApiError;
use crate::model::AssetType;

/// What the asset list is sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AssetSort {
    /// Creation time (the default).
    CreatedAt,
    /// Title, case-insensitive (Unicode lowercase).
    Title,
    /// Last change.
    UpdatedAt,
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortOrder {
    /// Smallest first.
    Asc,
    /// Largest first (the default).
    Desc,
}

/// Which assets a list shows, by publication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AssetStatus {
    /// Published assets only (the default, and all a key without `write:assets` may list).
    #[default]
    Published,
    /// Drafts only.
    Draft,
    /// Published assets and drafts.
    Any,
}

impl AssetStatus {
    /// Whether an asset with this `published` flag is shown.
    pub const fn admits(self, published: bool) -> bool {
        match self {
            AssetStatus::Published => published,
            AssetStatus::Draft => !published,
            AssetStatus::Any => true,
        }
    }
}

/// A validated asset list query. Every sort ends with the asset id, in the same direction,
/// so the order is total.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AssetQuery {
    /// 1-based page.
    pub page: u64,
    /// Page size, 1 to the configured maximum.
    pub per_page: u32,
    /// Only assets of this type.
    pub asset_type: Option<AssetType>,
    /// Only assets whose title or description contains this, case-insensitively. Never empty.
    pub search: Option<String>,
    /// Sort key.
    pub sort: AssetSort,
    /// Sort direction.
    pub order: SortOrder,
    /// Published assets, drafts, or both.
    pub status: AssetStatus,
    /// Only assets with every one of these tags: their keys
    /// ([`crate::validate::tag_key`]), sorted, each once.
    pub tags: Vec<String>,
    /// Only assets with at least one of these tags (when not empty): their keys, sorted,
    /// each once.
    pub any_tags: Vec<String>,
    /// Only assets whose file has this SHA-256.
    pub checksum: Option<[u8; 32]>,
    /// Only assets of this workspace ([`crate::validate::is_workspace_id`]).
    pub workspace_id: Option<String>,
}

impl Default for AssetQuery {
    fn default() -> Self {
        AssetQuery {
            page: 1,
            per_page: 20,
            asset_type: None,
            search: None,
            sort: AssetSort::CreatedAt,
            order: SortOrder::Desc,
            status: AssetStatus::Published,
            tags: Vec::new(),
            any_tags: Vec::new(),
            checksum: None,
            workspace_id: None,
        }
    }
}

impl AssetQuery {
    /// Index of the first asset of the page.
    pub const fn offset(&self) -> u64 {
        crate::page::offset(self.page, self.per_page)
    }
}

/// A validated library list query. Libraries are listed newest `published_at` first, then by
/// id descending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryQuery {
    /// 1-based page.
    pub page: u64,
    /// Page size, 1 to the configured maximum.
    pub limit: u32,
    /// Only libraries of this workspace. Never empty.
    pub workspace_id: Option<String>,
}

impl Default for LibraryQuery {
    fn default() -> Self {
        LibraryQuery {
            page: 1,
            limit: 20,
            workspace_id: None,
        }
    }
}

impl LibraryQuery {
    /// Index of the first library of the page.
    pub const fn offset(&self) -> u64 {
        crate::page::offset(self.page, self.limit)
    }
}

/// A validated library detail query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DetailQuery {
    /// Whether sections carry their assets (else their asset count).
    pub include_assets: bool,
}

/// Decoded `name=value` pairs of a query string, each known name at most once.
struct Params<'k> {
    known: &'k [&'static str],
    values: Vec<Option<String>>,
}

impl<'k> Params<'k> {
    fn parse(raw: Option<&str>, known: &'k [&'static str]) -> Result<Self, ApiError> {
        let mut values = vec![None; known.len()];
        let raw = raw.unwrap_or("");
        for (name, value) in form_urlencoded::parse(raw.as_bytes()) {
            if let Some(i) = known.iter().position(|k| *k == name) {
                if values[i].is_some() {
                    return Err(ApiError::validation(
                        known[i],
                        format!("{} is given more than once", known[i]),
                    ));
                }
                values[i] = Some(value.into_owned());
            }
        }
        Ok(Params { known, values })
    }

    fn take(&mut self, name: &str) -> Option<String> {
        let i = self.known.iter().position(|k| *k == name)?;
        self.values[i].take()
    }
}

fn positive(name: &'static str, value: &str) -> Result<u64, ApiError> {
    let bad = || ApiError::validation(name, format!("{name} must be a positive integer"));
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    // All digits: the only parse failure left is overflow, which saturates.
    let n = value.parse::<u64>().unwrap_or(u64::MAX);
    if n == 0 {
        return Err(bad());
    }
    Ok(n)
}

fn page_size(name: &'static str, value: Option<String>, max: u32) -> Result<u32, ApiError> {
    match value {
        None => Ok(20.min(max)),
        Some(v) => Ok(positive(name, &v)?.min(u64::from(max)) as u32),
    }
}

fn page_number(value: Option<String>) -> Result<u64, ApiError> {
    value.map_or(Ok(1), |v| positive("page", &v))
}

fn one_of<T: Copy>(name: &'static str, value: &str, options: &[(&str, T)]) -> Result<T, ApiError> {
    options
        .iter()
        .find(|(k, _)| *k == value)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = options.iter().map(|(k, _)| *k).collect();
            ApiError::validation(name, format!("{name} must be one of: {}", names.join(", ")))
        })
}

/// Parses the query of `GET /api/v1/assets`.
pub(crate) fn asset_query(raw: Option<&str>, max_page_size: u32) -> Result<AssetQuery, ApiError> {
    const KNOWN: &[&str] = &[
        "page",
        "per_page",
        "asset_type",
        "search",
        "sort",
        "order",
        "status",
        "any_tag",
        "checksum",
        "workspace_id",
    ];
    let mut p = Params::parse(raw, KNOWN)?;
    let given: Vec<String> = form_urlencoded::parse(raw.unwrap_or("").as_bytes())
        .filter(|(name, _)| name == "tag")
        .map(|(_, value)| value.into_owned())
        .collect();
    let tags = tag_keys("tag", given.iter().map(String::as_str))?;
    let any_tags = match p.take("any_tag") {
        None => Vec::new(),
        Some(v) => tag_keys("any_tag", v.split(','))?,
    };
    let checksum = p
        .take("checksum")
        .map(|v| sha256_hex("checksum", &v))
        .transpose()?;
    let page = page_number(p.take("page"))?;
    let per_page = page_size("per_page", p.take("per_page"), max_page_size)?;
    let asset_type = asset_type_filter(p.take("asset_type"))?;
    let search = p.take("search").filter(|s| !s.is_empty());
    let sort = match p.take("sort") {
        None => AssetSort::CreatedAt,
        Some(v) => one_of(
            "sort",
            &v,
            &[
                ("created_at", AssetSort::CreatedAt),
                ("title", AssetSort::Title),
                ("updated_at", AssetSort::UpdatedAt),
            ],
        )?,
    };
    let order = match p.take("order") {
        None => SortOrder::Desc,
        Some(v) => one_of(
            "order",
            &v,
            &[("asc", SortOrder::Asc), ("desc", SortOrder::Desc)],
        )?,
    };
    let status = match p.take("status") {
        None => AssetStatus::Published,
        Some(v) => one_of(
            "status",
            &v,
            &[
                ("published", AssetStatus::Published),
                ("draft", AssetStatus::Draft),
                ("any", AssetStatus::Any),
            ],
        )?,
    };
    Ok(AssetQuery {
        page,
        per_page,
        asset_type,
        search,
        sort,
        order,
        status,
        tags,
        any_tags,
        checksum,
        workspace_id: workspace_filter(p.take("workspace_id"))?,
    })
}

/// An `asset_type` filter: absent is none; else a type lists can filter by (400 otherwise).
fn asset_type_filter(raw: Option<String>) -> Result<Option<AssetType>, ApiError> {
    let Some(v) = raw else {
        return Ok(None);
    };
    match AssetType::parse(&v).filter(|t| t.is_filterable()) {
        Some(t) => Ok(Some(t)),
        None => {
            let names: Vec<&str> = AssetType::ALL
                .iter()
                .filter(|t| t.is_filterable())
                .map(|t| t.as_str())
                .collect();
            Err(ApiError::validation(
                "asset_type",
                format!("asset_type must be one of: {}", names.join(", ")),
            ))
        }
    }
}

/// A validated query of `GET /api/v1/search` (feature `search`), `q` parsed.
#[cfg(feature = "search")]
#[derive(Debug, Clone)]
pub(crate) struct SearchParams {
    pub(crate) q: crate::search::SearchQuery,
    pub(crate) asset_type: Option<AssetType>,
    /// A tag key.
    pub(crate) tag: Option<String>,
    pub(crate) workspace_id: Option<String>,
    pub(crate) library_id: Option<uuid::Uuid>,
    pub(crate) page: u64,
    pub(crate) per_page: u32,
}

/// Parses the query of `GET /api/v1/search`: `q` (required; read in `language`, the store's:
/// [`crate::search::parse_query_in`]), `asset_type`, `tag`, `workspace_id` and `library_id`
/// as the lists take them, `page` and `per_page`.
#[cfg(feature = "search")]
pub(crate) fn search_query(
    raw: Option<&str>,
    max_page_size: u32,
    language: Option<crate::search::Language>,
) -> Result<SearchParams, ApiError> {
    const KNOWN: &[&str] = &[
        "q",
        "asset_type",
        "tag",
        "workspace_id",
        "library_id",
        "page",
        "per_page",
    ];
    let mut p = Params::parse(raw, KNOWN)?;
    let q = crate::search::parse_query_in(&p.take("q").unwrap_or_default(), language)?;
    let tag = match p.take("tag").filter(|t| !t.is_empty()) {
        Some(t) => tag_keys("tag", [t.as_str()])?.pop(),
        None => None,
    };
    let library_id = match p.take("library_id").filter(|l| !l.is_empty()) {
        Some(l) => Some(crate::validate::parse_id("library_id", &l)?),
        None => None,
    };
    Ok(SearchParams {
        q,
        asset_type: asset_type_filter(p.take("asset_type"))?,
        tag,
        workspace_id: workspace_filter(p.take("workspace_id"))?,
        library_id,
        page: page_number(p.take("page"))?,
        per_page: page_size("per_page", p.take("per_page"), max_page_size.min(100))?,
    })
}

/// A list's `workspace_id` filter: absent or empty is none; anything else must be a
/// workspace id (400 otherwise).
fn workspace_filter(raw: Option<String>) -> Result<Option<String>, ApiError> {
    raw.filter(|s| !s.is_empty())
        .map(|w| crate::validate::workspace_id("workspace_id", &w))
        .transpose()
}

/// The keys of the tags a filter names, sorted and each once: every one a valid tag
/// ([`crate::validate::tags`]), at most [`crate::validate::MAX_TAGS`].
fn tag_keys<'a>(
    name: &'static str,
    given: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<String>, ApiError> {
    let given: Vec<&str> = given.into_iter().collect();
    let kept = crate::validate::tags(name, given.iter().copied()).map_err(|e| match e {
        ApiError::Validation { message, .. } => ApiError::validation(name, message),
        other => other,
    })?;
    let mut keys: Vec<String> = kept.iter().map(|t| crate::model::tag_key(t)).collect();
    keys.sort_unstable();
    Ok(keys)
}

/// A SHA-256 written as 64 hexadecimal digits (either case).
pub(crate) fn sha256_hex(name: &str, value: &str) -> Result<[u8; 32], ApiError> {
    let bad = || {
        ApiError::validation(
            name,
            format!("{name} must be 64 hexadecimal digits (a SHA-256)"),
        )
    };
    let bytes = value.as_bytes();
    if bytes.len() != 64 || !bytes.iter().all(u8::is_ascii_hexdigit) {
        return Err(bad());
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        let text = std::str::from_utf8(pair).map_err(|_| bad())?;
        out[i] = u8::from_str_radix(text, 16).map_err(|_| bad())?;
    }
    Ok(out)
}

/// Parses the query of `POST /api/v1/assets/upload`: `on_duplicate`.
pub(crate) fn on_duplicate_query(
    raw: Option<&str>,
) -> Result<crate::validate::OnDuplicate, ApiError> {
    const KNOWN: &[&str] = &["on_duplicate"];
    let mut p = Params::parse(raw, KNOWN)?;
    crate::validate::OnDuplicate::parse("on_duplicate", p.take("on_duplicate").as_deref())
}

/// Parses a query of `limit` alone (`GET /api/v1/tags`): 1 to `max`, clamped, `default`
/// when absent.
pub(crate) fn limit_query(raw: Option<&str>, default: u32, max: u32) -> Result<u32, ApiError> {
    const KNOWN: &[&str] = &["limit"];
    let mut p = Params::parse(raw, KNOWN)?;
    match p.take("limit") {
        None => Ok(default),
        Some(v) => Ok(positive("limit", &v)?.min(u64::from(max)) as u32),
    }
}

/// Parses the query of `GET /api/v1/libraries`.
pub(crate) fn library_query(
    raw: Option<&str>,
    max_page_size: u32,
) -> Result<LibraryQuery, ApiError> {
    const KNOWN: &[&str] = &["page", "limit", "workspace_id"];
    let mut p = Params::parse(raw, KNOWN)?;
    Ok(LibraryQuery {
        page: page_number(p.take("page"))?,
        limit: page_size("limit", p.take("limit"), max_page_size)?,
        workspace_id: workspace_filter(p.take("workspace_id"))?,
    })
}

/// A validated query of a list that pages and does nothing else (passes, webhooks,
/// deliveries): the page and its size, named as the asset list names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PageQuery {
    /// 1-based page.
    pub(crate) page: u64,
    /// Page size, 1 to the configured maximum.
    pub(crate) per_page: u32,
}

/// Parses a query of `page` and `per_page` alone (the lists of passes, webhooks and
/// deliveries).
pub(crate) fn page_query(raw: Option<&str>, max_page_size: u32) -> Result<PageQuery, ApiError> {
    const KNOWN: &[&str] = &["page", "per_page"];
    let mut p = Params::parse(raw, KNOWN)?;
    Ok(PageQuery {
        page: page_number(p.take("page"))?,
        per_page: page_size("per_page", p.take("per_page"), max_page_size)?,
    })
}

/// The most events one page of the feed gives (`limit`), and how many without `limit`.
pub(crate) const MAX_EVENTS_PAGE: usize = 1000;
const DEFAULT_EVENTS_PAGE: usize = 100;

/// Parses the query of `GET /api/v1/events`: `after` (a page's `next`), `type` (an event
/// type), `resource` (`asset:{id}`, `library:{id}`, `key:{id}`, `pass:{id}` or `webhook:{id}`) and `limit`
/// (1-1000, default 100).
pub(crate) fn events_query(raw: Option<&str>) -> Result<crate::events::EventQuery, ApiError> {
    use crate::events::{EventCursor, EventQuery, EventType, ResourceType};
    const KNOWN: &[&str] = &["after", "type", "resource", "limit"];
    let mut p = Params::parse(raw, KNOWN)?;
    let after = match p.take("after") {
        None => EventCursor::START,
        Some(v) => v.parse().map_err(|()| {
            ApiError::validation("after", "after must be the next of a page of events")
        })?,
    };
    let kind = match p.take("type") {
        None => None,
        Some(v) => Some(v.parse::<EventType>().map_err(|()| {
            let names: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
            ApiError::validation("type", format!("type must be one of: {}", names.join(", ")))
        })?),
    };
    let resource = match p.take("resource") {
        None => None,
        Some(v) => {
            let parsed = v.split_once(':').and_then(|(t, id)| {
                let t = t.parse::<ResourceType>().ok()?;
                let id = crate::validate::parse_id("resource", id).ok()?;
                Some((t, id))
            });
            Some(parsed.ok_or_else(|| {
                ApiError::validation(
                    "resource",
                    "resource must be asset:{id}, library:{id}, key:{id}, pass:{id} or webhook:{id}",
                )
            })?)
        }
    };
    let limit = match p.take("limit") {
        None => DEFAULT_EVENTS_PAGE,
        Some(v) => usize::try_from(positive("limit", &v)?)
            .unwrap_or(MAX_EVENTS_PAGE)
            .min(MAX_EVENTS_PAGE),
    };
    Ok(EventQuery {
        after,
        kind,
        resource,
        workspace: None,
        limit,
    })
}

/// Parses the query of `GET /api/v1/libraries/{id}`.
pub(crate) fn detail_query(raw: Option<&str>) -> Result<DetailQuery, ApiError> {
    const KNOWN: &[&str] = &["include_assets"];
    let mut p = Params::parse(raw, KNOWN)?;
    let include_assets = flag("include_assets", p.take("include_assets"))?;
    Ok(DetailQuery { include_assets })
}

/// The workspace a library slug route names (`workspace_id`), if any; the detail's own
/// parameters are read by [`detail_query`].
pub(crate) fn slug_workspace(raw: Option<&str>) -> Result<Option<String>, ApiError> {
    const KNOWN: &[&str] = &["workspace_id"];
    let mut p = Params::parse(raw, KNOWN)?;
    workspace_filter(p.take("workspace_id"))
}

/// Parses the query of `DELETE /api/v1/assets/{id}`: whether `force` is set.
pub(crate) fn force_query(raw: Option<&str>) -> Result<bool, ApiError> {
    const KNOWN: &[&str] = &["force"];
    let mut p = Params::parse(raw, KNOWN)?;
    flag("force", p.take("force"))
}

/// A boolean parameter: `true`/`false` (also `1`/`0`), false when absent.
fn flag(name: &'static str, value: Option<String>) -> Result<bool, ApiError> {
    match value {
        None => Ok(false),
        Some(v) => one_of(
            name,
            &v,
            &[("true", true), ("false", false), ("1", true), ("0", false)],
        ),
    }
}

#[cfg(test)]
#[path = "query_test.rs"]
mod tests;
