//! `on_duplicate` (DESIGN.md §5 "Tags, checksums, bulk changes"): what an upload does when an
//! asset with the same bytes (the same SHA-256) exists already.

use crate::error::ApiError;

/// What an upload does when an asset's file has the same SHA-256 as the one it brings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnDuplicate {
    /// Store a new asset anyway (the default).
    #[default]
    Allow,
    /// Refuse: 409 naming the asset that has the same bytes, nothing stored.
    Reject,
    /// Answer 200 with the asset that has the same bytes, nothing stored.
    Reuse,
}

impl OnDuplicate {
    /// Parses exactly `allow`, `reject` or `reuse` given as `field`; absent or empty is
    /// `allow`.
    ///
    /// ```
    /// use assetlib_core::validate::OnDuplicate;
    ///
    /// assert_eq!(OnDuplicate::parse("on_duplicate", Some("reuse")).unwrap(), OnDuplicate::Reuse);
    /// assert_eq!(OnDuplicate::parse("on_duplicate", None).unwrap(), OnDuplicate::Allow);
    /// assert!(OnDuplicate::parse("on_duplicate", Some("skip")).is_err());
    /// assert!(OnDuplicate::parse("on_duplicate", Some(" reuse")).is_err());
    /// ```
    ///
    /// # Errors
    /// 400 on `field` for any other value.
    pub fn parse(field: &str, raw: Option<&str>) -> Result<Self, ApiError> {
        match raw {
            None | Some("" | "allow") => Ok(OnDuplicate::Allow),
            Some("reject") => Ok(OnDuplicate::Reject),
            Some("reuse") => Ok(OnDuplicate::Reuse),
            Some(_) => Err(ApiError::validation(
                field,
                format!("{field} must be one of: allow, reject, reuse"),
            )),
        }
    }
}
