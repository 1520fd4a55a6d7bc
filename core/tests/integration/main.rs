//! Integration tests of assetlib-core: the conformance suite on MemoryStore, and the Service
//! end to end over MemoryStore.

mod conformance;
mod detail_cache;
mod service;
