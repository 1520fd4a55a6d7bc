//! Telling a file store that cannot be reached from one that failed ([`super::FileError`]).

/// Whether an object store's error says the store could not be reached or answered with a
/// server error (5xx) to the last of its client's retries. A failed connection or request
/// carries the HTTP client's error among its causes; object_store does not export the type of
/// its retries' last answer, so a 5xx is known by the message object_store gives it.
pub(super) fn store_unreachable(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(e) = cause {
        #[cfg(feature = "s3")]
        if e.is::<reqwest::Error>() {
            return true;
        }
        if e.to_string()
            .starts_with("Server returned non-2xx status code: 5")
        {
            return true;
        }
        cause = e.source();
    }
    false
}
