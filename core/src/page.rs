//! Pagination arithmetic and the two pagination objects of the contract.

use serde::Serialize;

/// Number of pages of `size` needed for `total` items: ceil(total / size), 0 when total is 0.
pub const fn total_pages(total: u64, size: u32) -> u64 {
    if size == 0 {
        return 0;
    }
    total.div_ceil(size as u64)
}

/// Index of the first item of 1-based `page` (saturating, so a huge page is simply past the end).
pub const fn offset(page: u64, size: u32) -> u64 {
    page.saturating_sub(1).saturating_mul(size as u64)
}

/// Page `page` of `size` of `all` (a list kept whole in memory: a store's keys, its
/// webhooks of one workspace), with their count.
#[cfg(any(feature = "webhooks", feature = "keys"))]
pub(crate) fn of_all<T>(all: Vec<T>, page: u64, size: u32) -> crate::model::Page<T> {
    let total = all.len() as u64;
    let skip = usize::try_from(offset(page, size)).unwrap_or(usize::MAX);
    crate::model::Page {
        items: all.into_iter().skip(skip).take(size as usize).collect(),
        total,
    }
}

/// The asset list's `pagination` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AssetPagination {
    /// The page returned.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub page: u64,
    /// The page size used, after clamping.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub per_page: u32,
    /// Matching assets in all.
    pub total: u64,
    /// Pages in all.
    pub total_pages: u64,
}

impl AssetPagination {
    /// The object for `page` of size `per_page` out of `total`.
    pub const fn new(page: u64, per_page: u32, total: u64) -> Self {
        AssetPagination {
            page,
            per_page,
            total,
            total_pages: total_pages(total, per_page),
        }
    }
}

/// The library list's `pagination` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LibraryPagination {
    /// The page returned.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub page: u64,
    /// The page size used, after clamping.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub limit: u32,
    /// Matching libraries in all.
    pub total: u64,
    /// Pages in all.
    pub total_pages: u64,
    /// Whether a later page has items: `page < total_pages`.
    pub has_next: bool,
    /// Whether an earlier page exists: `page > 1`.
    pub has_prev: bool,
}

impl LibraryPagination {
    /// The object for `page` of size `limit` out of `total`.
    pub const fn new(page: u64, limit: u32, total: u64) -> Self {
        let total_pages = total_pages(total, limit);
        LibraryPagination {
            page,
            limit,
            total,
            total_pages,
            has_next: page < total_pages,
            has_prev: page > 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_pages_rounds_up_and_is_zero_for_nothing() {
        assert_eq!(total_pages(0, 20), 0);
        assert_eq!(total_pages(1, 20), 1);
        assert_eq!(total_pages(20, 20), 1);
        assert_eq!(total_pages(21, 20), 2);
        assert_eq!(total_pages(250, 100), 3);
        assert_eq!(total_pages(u64::MAX, 1), u64::MAX);
    }

    #[test]
    fn offset_saturates_for_huge_pages() {
        assert_eq!(offset(1, 20), 0);
        assert_eq!(offset(3, 20), 40);
        assert_eq!(offset(u64::MAX, 100), u64::MAX);
    }

    #[test]
    fn library_pagination_flags() {
        let p = LibraryPagination::new(1, 20, 0);
        assert_eq!((p.total_pages, p.has_next, p.has_prev), (0, false, false));
        let p = LibraryPagination::new(1, 20, 41);
        assert_eq!((p.total_pages, p.has_next, p.has_prev), (3, true, false));
        let p = LibraryPagination::new(3, 20, 41);
        assert_eq!((p.has_next, p.has_prev), (false, true));
        let p = LibraryPagination::new(9, 20, 41);
        assert_eq!((p.has_next, p.has_prev), (false, true));
    }

    #[test]
    fn asset_pagination_serializes_in_contract_order() {
        let json = serde_json::to_string(&AssetPagination::new(2, 20, 45)).unwrap();
        assert_eq!(
            json,
            r#"{"page":2,"per_page":20,"total":45,"total_pages":3}"#
        );
    }
}
