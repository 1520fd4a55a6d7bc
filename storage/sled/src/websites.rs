//! What websites need of the store: libraries by slug and the signing secret.

use assetlib_core::{
    EventStore, MetaStore, PassStore, StoreError, UploadStore, WebhookStore, async_trait,
};
use uuid::Uuid;

use crate::error::Error;
use crate::record::decode_id;
use crate::{Inner, SledStore};

/// The key of the signing secret in the `meta` tree.
const SECRET_KEY: &[u8] = b"signing_secret";

impl Inner {
    /// The library holding `slug`, by the `library_slugs` tree.
    pub(crate) fn library_id_by_slug(&self, slug: &str) -> Result<Option<Uuid>, Error> {
        self.get(&self.library_slugs, slug.as_bytes())?
            .map(|holder| decode_id("library slug", &holder))
            .transpose()
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
}
