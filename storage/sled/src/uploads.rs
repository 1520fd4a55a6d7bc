//! Uploads in progress ([`UploadStore`]).
//!
//! | tree | key | value |
//! |---|---|---|
//! | `uploads` | upload `id` | [`UploadRec`]: the upload and its lease |
//!
//! Each write is one compare-and-swap of one record (the lease checked and the record
//! changed at once), made durable before it returns, as every API write is. An upload lives
//! for [`assetlib_core::Config::upload_expiry`]. Records written before uploads kept their
//! `Upload-Metadata` header ([`Upload::metadata_header`]) or their workspace
//! ([`Upload::workspace_id`], the last field) still decode: they read as uploads without them
//! ([`decode_rec`]), so an upload a server started before an upgrade goes on after it.

use assetlib_core::store::{UploadLease, UploadStore};
use assetlib_core::tus::{Metadata, RunningSha256, Stored, Upload};
use assetlib_core::{StoreError, async_trait};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::Error;
use crate::record::{Ts, decode, encode};
use crate::{Inner, SledStore};

/// An upload and who holds it until when.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct UploadRec {
    upload: Upload,
    lease: Option<(Uuid, Ts)>,
}

impl UploadRec {
    const WHAT: &'static str = "upload";

    /// The end of a lease other than `holder`'s that runs at `now`.
    fn busy(
        &self,
        holder: Option<Uuid>,
        now: DateTime<Utc>,
    ) -> Result<Option<DateTime<Utc>>, Error> {
        match self.lease {
            Some((h, until)) if Some(h) != holder => {
                let until = until.time()?;
                Ok((until > now).then_some(until))
            }
            _ => Ok(None),
        }
    }
}

/// What a compare-and-swap step decided: write this record (or remove it), and answer.
enum Step<T> {
    Write(Option<Box<UploadRec>>, T),
    Answer(T),
}

/// The fields of an [`Upload`] before `metadata_header`, in their order: where they end in a
/// record written before it.
#[derive(Deserialize)]
#[allow(dead_code)] // read only to find their end
struct FieldsBeforeHeader(
    Uuid,
    u64,
    u64,
    Metadata,
    String,
    Stored,
    Uuid,
    bool,
    DateTime<Utc>,
    DateTime<Utc>,
    Option<RunningSha256>,
);

/// The fields of an [`Upload`] before `workspace_id` (the header last): where they end in a
/// record written before uploads kept their workspace.
#[derive(Deserialize)]
#[allow(dead_code)] // read only to find their end
struct FieldsBeforeWorkspace(FieldsBeforeHeader, Option<String>);

/// An upload's record. One written before uploads kept their workspace (the upload's fields
/// but that last one, then the lease) reads as one of no workspace; one written before they
/// kept their `Upload-Metadata` header, as one without header and workspace.
fn decode_rec(bytes: &[u8]) -> Result<UploadRec, Error> {
    let current = decode::<UploadRec>(UploadRec::WHAT, bytes);
    // An older record that happens to read as this layout names no real workspace.
    if let Ok(rec) = &current
        && rec
            .upload
            .workspace_id
            .as_deref()
            .is_none_or(assetlib_core::validate::is_workspace_id)
    {
        return current;
    }
    with_nones::<FieldsBeforeWorkspace>(bytes, 1)
        .or_else(|| with_nones::<FieldsBeforeHeader>(bytes, 2))
        .map_or_else(
            || current.and_then(|_| Err(Error::invalid(UploadRec::WHAT, "no workspace id"))),
            Ok,
        )
}

/// `bytes` (an upload's fields of the layout `T`, then the lease) with `nones` fields of
/// `None` (postcard writes each as one zero byte) put before the lease, read as a record.
fn with_nones<T: serde::de::DeserializeOwned>(bytes: &[u8], nones: usize) -> Option<UploadRec> {
    let (_, lease) = postcard::take_from_bytes::<T>(bytes).ok()?;
    let fields = &bytes[..bytes.len() - lease.len()];
    let upgraded = [fields, &vec![0; nones], lease].concat();
    decode(UploadRec::WHAT, &upgraded).ok()
}

impl Inner {
    fn upload_rec(&self, id: Uuid) -> Result<Option<(sled::IVec, UploadRec)>, Error> {
        self.get(&self.uploads, id.as_bytes())?
            .map(|bytes| Ok((bytes.clone(), decode_rec(&bytes)?)))
            .transpose()
    }

    /// Changes the record of upload `id` by `step` (which sees it as stored, or `None`),
    /// again from the start when another write changed it in between.
    fn swap_upload<T>(
        &self,
        id: Uuid,
        step: impl Fn(Option<UploadRec>) -> Result<Step<T>, Error>,
    ) -> Result<T, Error> {
        loop {
            let found = self.upload_rec(id)?;
            let (old, rec) = match found {
                Some((bytes, rec)) => (Some(bytes), Some(rec)),
                None => (None, None),
            };
            match step(rec)? {
                Step::Answer(answer) => return Ok(answer),
                Step::Write(new, answer) => {
                    let new = new.map(|rec| encode(UploadRec::WHAT, &rec)).transpose()?;
                    let swapped = self.uploads.compare_and_swap(id.as_bytes(), old, new)?;
                    if swapped.is_ok() {
                        return Ok(answer);
                    }
                }
            }
        }
    }
}

#[async_trait]
impl UploadStore for SledStore {
    async fn insert_upload(
        &self,
        upload: &Upload,
        holder: Uuid,
        until: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let rec = UploadRec {
            upload: upload.clone(),
            lease: Some((holder, (&until).into())),
        };
        let id = upload.id;
        self.write(move |inner| {
            inner.swap_upload(id, |found| match found {
                Some(_) => Err(Error::DuplicateId(id)),
                None => Ok(Step::Write(Some(Box::new(rec.clone())), ())),
            })
        })
        .await
    }

    async fn get_upload(&self, id: Uuid) -> Result<Option<Upload>, StoreError> {
        self.point_read(|inner| Ok(inner.upload_rec(id)?.map(|(_, rec)| rec.upload)))
    }

    async fn lease_upload(
        &self,
        id: Uuid,
        holder: Uuid,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<UploadLease, StoreError> {
        let until = Ts::from(&until);
        self.write(move |inner| {
            inner.swap_upload(id, |found| {
                let Some(mut rec) = found else {
                    return Ok(Step::Answer(UploadLease::Missing));
                };
                if let Some(busy) = rec.busy(Some(holder), now)? {
                    return Ok(Step::Answer(UploadLease::Busy(busy)));
                }
                rec.lease = Some((holder, until));
                let taken = UploadLease::Taken(Box::new(rec.upload.clone()));
                Ok(Step::Write(Some(Box::new(rec)), taken))
            })
        })
        .await
    }

    async fn save_upload(
        &self,
        upload: &Upload,
        holder: Uuid,
        until: Option<DateTime<Utc>>,
    ) -> Result<bool, StoreError> {
        let upload = upload.clone();
        let lease = until.map(|until| (holder, Ts::from(&until)));
        self.write(move |inner| {
            inner.swap_upload(upload.id, |found| match found {
                Some(rec) if rec.lease.as_ref().map(|(h, _)| *h) == Some(holder) => {
                    let rec = UploadRec {
                        upload: upload.clone(),
                        lease,
                    };
                    Ok(Step::Write(Some(Box::new(rec)), true))
                }
                _ => Ok(Step::Answer(false)),
            })
        })
        .await
    }

    async fn delete_upload(&self, id: Uuid) -> Result<bool, StoreError> {
        self.write(move |inner| Ok(inner.uploads.remove(id.as_bytes())?.is_some()))
            .await
    }

    async fn expired_uploads(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<Upload>, StoreError> {
        self.blocking(move |inner| {
            let mut expired = Vec::new();
            for entry in inner.scan(&inner.uploads, &[], false) {
                let (_, bytes) = entry?;
                let rec = decode_rec(&bytes)?;
                if rec.upload.expires_at <= now && rec.busy(None, now)?.is_none() {
                    expired.push(rec.upload);
                }
            }
            expired.sort_by_key(|u| (u.expires_at, u.id));
            expired.truncate(limit as usize);
            Ok(expired)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn records_written_before_the_metadata_header_still_decode() {
        let at = Utc.with_ymd_and_hms(2026, 11, 28, 4, 51, 49).unwrap();
        // An upload's fields as the version before wrote them: no header at the end.
        let before = (
            Uuid::from_u128(1),
            10u64,
            4u64,
            Metadata::default(),
            "uploads/1/a.pdf",
            Stored::Appended,
            Uuid::from_u128(2),
            false,
            at,
            at,
            Some(RunningSha256::default()),
        );
        let fields = encode("upload", &before).unwrap();
        for lease in [None, Some((Uuid::from_u128(3), Ts::from(&at)))] {
            let old = [fields.clone(), encode("lease", &lease).unwrap()].concat();
            let read = decode_rec(&old).expect("a record of the version before");
            let u = &read.upload;
            assert_eq!((u.id, u.length, u.offset), (before.0, 10, 4));
            assert_eq!((u.path.as_str(), u.asset_id), (before.4, before.6));
            assert_eq!((u.created_at, u.expires_at), (at, at));
            assert_eq!(u.sha256, before.10);
            assert_eq!(u.metadata_header, None);
            assert_eq!(u.workspace_id, None);
            assert_eq!(read.lease, lease);
            assert!(decode_rec(&old[..old.len() - 1]).is_err(), "cut short");

            // Saved again, it is written as this version writes it, header and all.
            let mut upload = read.upload.clone();
            upload.metadata_header = Some("filename YS5wZGY=,filetype eA==".to_owned());
            let rec = UploadRec { upload, lease };
            let again = decode_rec(&encode("upload", &rec).unwrap()).unwrap();
            assert_eq!(again.upload, rec.upload);
            assert_eq!(again.lease, lease);

            // A record of the version before this one: the header, then no workspace.
            let full = encode("upload", &rec).unwrap();
            let lease_bytes = encode("lease", &lease).unwrap();
            let fields = &full[..full.len() - lease_bytes.len() - 1];
            let previous = [fields, &lease_bytes[..]].concat();
            let read = decode_rec(&previous).expect("a record without a workspace");
            assert_eq!(
                (read.upload.clone(), read.lease),
                (rec.upload.clone(), lease)
            );

            // And this version's, with a workspace.
            let mut upload = rec.upload.clone();
            upload.workspace_id = Some("acme".to_owned());
            let rec = UploadRec { upload, lease };
            let again = decode_rec(&encode("upload", &rec).unwrap()).unwrap();
            assert_eq!(again.upload.workspace_id.as_deref(), Some("acme"));
        }
    }
}
