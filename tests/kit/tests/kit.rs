//! The kit's own tests: the tool table, and the throwaway servers (each starts, serves, and is
//! gone once dropped).

// Every test target shares the package's dev-dependencies.
#![allow(unused_crate_dependencies)]

mod postgres;
mod tools;
