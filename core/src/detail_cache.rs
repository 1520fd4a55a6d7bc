//! The library detail cache of [`crate::Service`]: serialized detail pages kept under the
//! store's content version, with the live view count spliced in on every hit.
//!
//! A page is kept per (library, `include_assets`) with the version that
//! [`crate::LibraryStore::record_library_view`] returned when it was rendered. The next view
//! returns the version again; equal versions mean the same content, so the kept bytes are
//! reused with only the `view_count` digits replaced. Any write that can change the page
//! changes the version in the store, so the very next read renders again, in this process
//! or in any other one sharing the store.

use std::ops::Range;

use bytes::Bytes;
use uuid::Uuid;

use crate::page_cache::{Turns, VersionedCache};

/// Most pages kept; when full the cache starts over (simple, and cheap next to a render).
const MAX_PAGES: usize = 4096;

/// The JSON key whose value is spliced. In serialized JSON the bytes `"view_count":` can
/// only be an object key (a quote inside a string is escaped), and the detail's root writes
/// it before any nested object, so the first occurrence is the root's.
const VIEW_KEY: &[u8] = b"\"view_count\":";

/// One kept page.
#[derive(Debug)]
struct CachedPage {
    /// The page's `ETag` (its content without the view count).
    etag: String,
    body: Bytes,
    /// Where the `view_count` digits are in `body`.
    digits: Range<usize>,
}

impl CachedPage {
    fn with_views(&self, views: u64) -> Bytes {
        let views = views.to_string();
        let body = &self.body;
        let mut out = Vec::with_capacity(body.len() + views.len());
        out.extend_from_slice(&body[..self.digits.start]);
        out.extend_from_slice(views.as_bytes());
        out.extend_from_slice(&body[self.digits.end..]);
        out.into()
    }
}

/// Serialized library detail pages by (library, `include_assets`).
#[derive(Debug)]
pub(crate) struct DetailCache {
    pages: VersionedCache<(Uuid, bool), CachedPage>,
    /// The renders of a page that is missing take turns: the views that come while the
    /// first renders it find it kept when their turn comes, instead of each loading the
    /// library (on PostgreSQL a query each, at the moment the library is most read: right
    /// after it changed).
    turns: Turns<(Uuid, bool)>,
}

impl Default for DetailCache {
    fn default() -> Self {
        DetailCache {
            pages: VersionedCache::new(MAX_PAGES),
            turns: Turns::default(),
        }
    }
}

impl DetailCache {
    /// The kept page for this key at `version`, with `views` spliced in, and its `ETag`.
    /// `count` says whether this lookup counts in [`DetailCache::lookups`]: a view that
    /// waited for its turn to render looks again without counting twice.
    pub(crate) fn get(
        &self,
        key: (Uuid, bool),
        version: u64,
        views: u64,
        count: bool,
    ) -> Option<(Bytes, String)> {
        let page = if count {
            self.pages.get(&key, version)?
        } else {
            let (at, page) = self.pages.entry(&key)?;
            (at == version).then_some(page)?
        };
        Some((page.with_views(views), page.etag.clone()))
    }

    /// The renders of missing pages, one at a time per page: the views that come while the
    /// first renders it find it kept when their turn comes.
    pub(crate) fn turns(&self) -> &Turns<(Uuid, bool)> {
        &self.turns
    }

    /// Keeps `body`, rendered at `version` with `views` as its view count. A body whose
    /// view count cannot be found is not kept.
    pub(crate) fn put(
        &self,
        key: (Uuid, bool),
        version: u64,
        views: u64,
        body: Bytes,
        etag: String,
    ) {
        let Some(digits) = view_digits(&body, views) else {
            return;
        };
        let page = CachedPage { etag, body, digits };
        self.pages.put(key, version, std::sync::Arc::new(page));
    }

    /// How often a page was found.
    pub(crate) fn lookups(&self) -> crate::page_cache::Lookups {
        self.pages.lookups()
    }

    /// Drops the pages of one library.
    pub(crate) fn forget(&self, id: Uuid) {
        self.pages.forget(&(id, false));
        self.pages.forget(&(id, true));
    }
}

/// The `ETag` of a serialized detail whose view count is `views`: a hash of everything but
/// the count, so it stays the same from one view to the next (and across replicas).
pub(crate) fn page_etag(body: &[u8], views: u64) -> String {
    match view_digits(body, views) {
        Some(d) => crate::web::etag_of(&[&body[..d.start], &body[d.end..]]),
        None => crate::web::etag_of(&[body]),
    }
}

/// The range of the root `view_count` digits in a serialized detail, checked to read `views`.
fn view_digits(body: &[u8], views: u64) -> Option<Range<usize>> {
    let start = body.windows(VIEW_KEY.len()).position(|w| w == VIEW_KEY)? + VIEW_KEY.len();
    let len = body[start..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let digits = start..start + len;
    let found: u64 = std::str::from_utf8(&body[digits.clone()])
        .ok()?
        .parse()
        .ok()?;
    (found == views).then_some(digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splices_the_root_view_count_only() {
        let body = br#"{"title":"\"view_count\":7","view_count":7,"sections":[]}"#;
        let cache = DetailCache::default();
        let key = (Uuid::nil(), true);
        cache.put(key, 3, 7, Bytes::from_static(body), page_etag(body, 7));
        let (page, etag) = cache.get(key, 3, 12345, true).expect("kept");
        assert_eq!(
            &page[..],
            &br#"{"title":"\"view_count\":7","view_count":12345,"sections":[]}"#[..]
        );
        assert_eq!(etag, page_etag(&page, 12345), "the tag ignores the count");
        let counted = cache.lookups();
        assert!(cache.get(key, 3, 9, false).is_some());
        assert_eq!(cache.get(key, 4, 9, false), None);
        assert_eq!(cache.lookups(), counted, "a look again counts nothing");
        assert_eq!(
            cache.get(key, 4, 8, true),
            None,
            "another version is a miss"
        );
        assert_eq!(cache.get((Uuid::nil(), false), 3, 8, true), None);
        cache.forget(Uuid::nil());
        assert_eq!(cache.get(key, 3, 8, true), None);
    }

    #[test]
    fn a_body_without_the_count_is_not_kept() {
        let cache = DetailCache::default();
        let key = (Uuid::nil(), false);
        cache.put(
            key,
            1,
            5,
            Bytes::from_static(br#"{"view_count":6}"#),
            String::new(),
        );
        let max = (Uuid::max(), false);
        cache.put(max, 1, 5, Bytes::from_static(b"{}"), String::new());
        assert_eq!(cache.get(key, 1, 5, true), None);
        assert_eq!(cache.get((Uuid::max(), false), 1, 5, true), None);
    }
}
