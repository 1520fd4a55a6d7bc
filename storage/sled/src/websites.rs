//! What websites need of the store: libraries by slug and the signing secret.

use assetlib_core::{
    EventStore, MetaStore, PassStore, SlugHolder, StoreError, UploadStore, WebhookStore,
    async_trait,
};

use crate::error::Error;
use crate::record::decode_id;
use crate::{Inner, SledStore, tree_keys};

/// The key of the signing secret in the `meta` tree.
pub(crate) const SECRET_KEY: &[u8] = b"signing_secret";

impl Inner {
    /// The libraries holding `slug`, one per workspace (the one of no workspace first), by
    /// the `library_slugs` tree.
    pub(crate) fn libraries_by_slug(&self, slug: &str) -> Result<Vec<SlugHolder>, Error> {
        let mut found = Vec::new();
        if let Some(holder) = self.get(&self.library_slugs, slug.as_bytes())? {
            let id = decode_id("library slug", &holder)?;
            found.push(SlugHolder {
                workspace_id: None,
                id,
            });
        }
        let mut prefix = slug.as_bytes().to_vec();
        prefix.push(0);
        for kv in self.library_slugs.scan_prefix(&prefix) {
            let (key, holder) = kv?;
            self.touched(1);
            found.push(SlugHolder {
                workspace_id: Some(tree_keys::library_slug_workspace(slug, &key)?),
                id: decode_id("library slug", &holder)?,
            });
        }
        Ok(found)
    }

    /// Keeps `secret` in place of the signing secret; made durable by the caller's commit.
    pub(crate) fn rotate_signing_secret(&self, secret: [u8; 32]) -> Result<(), Error> {
        self.db.open_tree("meta")?.insert(SECRET_KEY, &secret[..])?;
        Ok(())
    }

    /// The kept secret, or `candidate` kept by one compare-and-swap (so concurrent first
    /// calls agree); made durable by the caller's commit.
    pub(crate) fn signing_secret(&self, candidate: [u8; 32]) -> Result<[u8; 32], Error> {
        let meta = self.db.open_tree("meta")?;
        let stored = match meta.compare_and_swap(SECRET_KEY, None::<&[u8]>, Some(&candidate[..]))? {
            Ok(()) => return Ok(candidate),
            Err(clash) => clash.current,
        };
        let stored = stored.ok_or_else(|| Error::invalid("signing secret", "vanished"))?;
        <[u8; 32]>::try_from(&stored[..]).map_err(|_| {
            Error::invalid(
                "signing secret",
                format!("{} bytes, expected 32", stored.len()),
            )
        })
    }
}

#[async_trait]
impl MetaStore for SledStore {
    async fn signing_secret(&self, candidate: [u8; 32]) -> Result<[u8; 32], StoreError> {
        self.write(move |inner| inner.signing_secret(candidate))
            .await
    }

    async fn rotate_signing_secret(&self, secret: [u8; 32]) -> Result<(), StoreError> {
        self.write(move |inner| inner.rotate_signing_secret(secret))
            .await
    }

    async fn flush(&self) -> Result<(), StoreError> {
        self.blocking(|inner| {
            inner.write_counts()?;
            inner.hooks_db.flush()?;
            Ok(inner.db.flush().map(drop)?)
        })
        .await
    }

    fn pass_store(&self) -> Option<&dyn PassStore> {
        Some(self)
    }

    fn event_store(&self) -> Option<&dyn EventStore> {
        Some(self)
    }

    fn webhook_store(&self) -> Option<&dyn WebhookStore> {
        Some(self)
    }

    fn upload_store(&self) -> Option<&dyn UploadStore> {
        Some(self)
    }

    #[cfg(feature = "search")]
    fn search_store(&self) -> Option<&dyn assetlib_core::store::SearchStore> {
        Some(self)
    }

    #[cfg(feature = "transfer")]
    fn transfer_store(&self) -> Option<&dyn assetlib_core::store::TransferStore> {
        Some(self)
    }
}
