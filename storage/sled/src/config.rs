//! [`SledConfig`]: how a [`crate::SledStore`] opens its database.

/// When a write reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// Every write is flushed (written and `fsync`ed) before it returns success, so an
    /// acknowledged write survives a crash of the process or the machine. Concurrent writers
    /// share flushes. This is what the assetlib contract asks for, and the default.
    #[default]
    EveryWrite,
    /// Writes return once they are in memory; a background thread flushes every `every_ms`
    /// milliseconds. Much faster for bulk loads, but a crash loses the writes of the last
    /// interval (each of them whole: a change is never half applied).
    Periodic {
        /// Milliseconds between background flushes (at least 1).
        every_ms: u64,
    },
}

/// Settings for [`crate::SledStore::open_with`].
///
/// ```
/// use assetlib_sled::{Durability, SledConfig};
/// let config = SledConfig::default()
///     .cache_capacity(64 * 1024 * 1024)
///     .durability(Durability::EveryWrite);
/// assert_eq!(config.cache_capacity, 64 * 1024 * 1024);
/// ```
///
/// With feature `search`, the language the search index stems words in:
///
/// ```
/// # #[cfg(feature = "search")] {
/// use assetlib_core::search::Language;
/// use assetlib_sled::SledConfig;
/// let config = SledConfig::default().search_language(Some(Language::English));
/// assert_eq!(config.search_language, Some(Language::English));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SledConfig {
    /// Upper bound in bytes of sled's page cache (default 1 GiB, sled's own default). Memory
    /// is used as pages are read, not reserved up front.
    pub cache_capacity: u64,
    /// When writes reach the disk (default [`Durability::EveryWrite`]).
    pub durability: Durability,
    /// The language the search index stems words in (feature `search`; default `None`:
    /// words are folded, not stemmed; see [`assetlib_core::search::Language`]). The index
    /// holds the words of one language: a database indexed in another (or in none) is
    /// indexed again when it is opened, as one opened by a build without the feature is.
    #[cfg(feature = "search")]
    pub search_language: Option<assetlib_core::search::Language>,
}

impl Default for SledConfig {
    fn default() -> Self {
        SledConfig {
            cache_capacity: 1024 * 1024 * 1024,
            durability: Durability::EveryWrite,
            #[cfg(feature = "search")]
            search_language: None,
        }
    }
}

impl SledConfig {
    /// Sets [`SledConfig::cache_capacity`].
    #[must_use]
    pub fn cache_capacity(mut self, bytes: u64) -> Self {
        self.cache_capacity = bytes;
        self
    }

    /// Sets [`SledConfig::durability`].
    #[must_use]
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Sets [`SledConfig::search_language`] (feature `search`).
    #[cfg(feature = "search")]
    #[must_use]
    pub fn search_language(mut self, language: Option<assetlib_core::search::Language>) -> Self {
        self.search_language = language;
        self
    }

    /// The database of webhook streams and deliveries: flushed in the background only (what
    /// a crash loses of it is sent again), with a cache of its own of at most 64 MiB.
    pub(crate) fn delivery_sled(&self, path: &std::path::Path) -> sled::Config {
        sled::Config::new()
            .path(path)
            .cache_capacity(self.cache_capacity.min(64 * 1024 * 1024))
            .flush_every_ms(Some(500))
    }

    pub(crate) fn to_sled(&self, path: &std::path::Path) -> sled::Config {
        let flush_every_ms = match self.durability {
            // Keep sled's background flusher as well: it bounds the work of each explicit
            // flush.
            Durability::EveryWrite => Some(500),
            Durability::Periodic { every_ms } => Some(every_ms.max(1)),
        };
        sled::Config::new()
            .path(path)
            .cache_capacity(self.cache_capacity)
            .flush_every_ms(flush_every_ms)
    }
}
