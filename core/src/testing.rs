//! The store conformance suite (in progress).
