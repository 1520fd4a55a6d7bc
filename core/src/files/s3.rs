//! [`Files::s3`] and [`Files::s3_with`]: files in a bucket of an S3-compatible service, with
//! its multipart uploads and presigned URLs.

use std::sync::Arc;

use object_store::ObjectStore;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::prefix::PrefixStore;

use super::parts::{Parts, Presigner};
use super::{Files, FilesError};

impl Files {
    /// Files in a bucket of an S3-compatible service: `url` is `s3://bucket` or
    /// `s3://bucket/prefix`, and everything else comes from the standard environment variables
    /// (read by [`AmazonS3Builder::from_env`]):
    ///
    /// | variable | holds |
    /// |---|---|
    /// | `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`) | the credentials; without them, those of the instance or container (IMDS, ECS, web identity) |
    /// | `AWS_REGION` or `AWS_DEFAULT_REGION` | the region (default `us-east-1`) |
    /// | `AWS_ENDPOINT` | the service's URL, for anything but AWS itself (`http://127.0.0.1:8333`) |
    /// | `AWS_ALLOW_HTTP` | `true` to allow a plain `http://` endpoint |
    ///
    /// Requests use path-style addressing (`ENDPOINT/bucket/key`, never `bucket.ENDPOINT`), so
    /// self-hosted servers work without DNS names per bucket; every request is signed (SigV4).
    /// With a prefix, every file the service reads or writes is under `prefix/` in the bucket,
    /// and `file_path`s are relative to it. The bucket must exist; nothing is contacted until
    /// the first file is read or written.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), assetlib_core::FilesError> {
    /// use assetlib_core::{Config, Files, MemoryStore, Service};
    ///
    /// // AWS_ENDPOINT=http://127.0.0.1:8333 AWS_ALLOW_HTTP=true AWS_REGION=us-east-1
    /// // AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... in the environment.
    /// let files = Files::s3("s3://assets/production")?;
    /// let service = Service::new(MemoryStore::new(), files, Config::default());
    /// # let _ = service;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`FilesError::Url`] when `url` is not `s3://bucket[/prefix]`; [`FilesError::Store`]
    /// when the configuration in the environment is refused (a malformed value).
    #[cfg(feature = "s3")]
    pub fn s3(url: &str) -> Result<Self, FilesError> {
        Self::s3_with(AmazonS3Builder::from_env(), url)
    }

    /// [`Files::s3`] with the configuration from `builder` instead of the environment (start
    /// from [`AmazonS3Builder::new`] to ignore the environment). The bucket is the one `url`
    /// names, and requests are path-style, whatever `builder` says.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), assetlib_core::FilesError> {
    /// use assetlib_core::Files;
    /// use object_store::aws::AmazonS3Builder;
    ///
    /// let builder = AmazonS3Builder::new()
    ///     .with_endpoint("http://127.0.0.1:8333")
    ///     .with_allow_http(true)
    ///     .with_region("us-east-1")
    ///     .with_access_key_id("assetlib")
    ///     .with_secret_access_key("a secret");
    /// let files = Files::s3_with(builder, "s3://assets")?;
    /// # let _ = files;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`Files::s3`].
    #[cfg(feature = "s3")]
    pub fn s3_with(builder: AmazonS3Builder, url: &str) -> Result<Self, FilesError> {
        let bad = |reason| FilesError::Url {
            url: url.to_owned(),
            reason,
        };
        let rest = url
            .strip_prefix("s3://")
            .ok_or_else(|| bad("it must start with s3://"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("it names no bucket"));
        }
        if bucket.contains(['?', '#', '@', ':', '%'])
            || prefix.contains(['?', '#'])
            || prefix.starts_with('/')
        {
            return Err(bad(
                "it must be s3://bucket or s3://bucket/prefix, nothing more",
            ));
        }
        let prefix = prefix.trim_end_matches('/');
        let prefix = ObjectPath::parse(prefix)
            .map_err(|_| bad("its prefix is not a valid path (empty, `.` or `..` segments)"))?;
        let s3 = builder
            .with_bucket_name(bucket)
            .with_virtual_hosted_style_request(false)
            .build()?;
        let prefix = (!prefix.as_ref().is_empty()).then_some(prefix);
        let store: Arc<dyn ObjectStore> = match &prefix {
            Some(prefix) => Arc::new(PrefixStore::new(s3.clone(), prefix.clone())),
            None => Arc::new(s3.clone()),
        };
        let s3 = Arc::new(s3);
        Ok(Files {
            store,
            local_root: None,
            parts: Some(Parts::new(s3.clone(), prefix.clone())),
            presigner: Some(Presigner::new(s3, prefix)),
        })
    }
}
