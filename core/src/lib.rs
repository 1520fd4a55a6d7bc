//! placeholder: crate docs come with the Service
pub mod config;
pub mod error;
pub mod model;
pub mod page;
pub mod query;
pub mod reply;
pub mod store;

pub use config::Config;
pub use error::{ApiError, BoxError, StoreError};
pub use model::*;
pub use query::{AssetQuery, AssetSort, DetailQuery, LibraryQuery, SortOrder};
pub use reply::Reply;
pub use store::Store;
pub use async_trait::async_trait;
