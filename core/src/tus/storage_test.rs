//! Tests of [`super`]: tails across a request that could not record them, and an upload
//! begun with the earlier single tail object.

use super::*;
use crate::tus::{Metadata, RunningSha256};
use chrono::Utc;
use uuid::Uuid;

/// Saves into `saved` as a store would; with `refuse`, every save fails as one whose
/// lease ran out.
struct Record {
    saved: Option<Upload>,
    refuse: bool,
}

impl Progress for Record {
    async fn save(&mut self, upload: &Upload) -> Result<(), ApiError> {
        if self.refuse {
            return Err(ApiError::Locked { retry_after: 1 });
        }
        self.saved = Some(upload.clone());
        Ok(())
    }

    async fn keep(&mut self, _: &Upload) -> Result<(), ApiError> {
        Ok(())
    }
}

fn body(bytes: &[u8]) -> BodyStream {
    let chunks: Vec<Result<Bytes, crate::error::BoxError>> = bytes
        .chunks(64 * 1024)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    Box::pin(futures_util::stream::iter(chunks))
}

fn checksum(bytes: &[u8]) -> Option<Checksum> {
    Some(Checksum(Sha256::digest(bytes).into()))
}

/// Appends `bytes` to `upload` as a request would, saving into `record`.
async fn send(
    files: &Files,
    upload: &mut Upload,
    bytes: &[u8],
    with_checksum: bool,
    record: &mut Record,
) -> Result<(), ApiError> {
    let patch = Patch {
        body: body(bytes),
        checksum: if with_checksum { checksum(bytes) } else { None },
    };
    append(files, upload, patch, record).await
}

async fn tails_kept(files: &Files, path: &str) -> Vec<String> {
    use futures_util::TryStreamExt as _;
    let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
    let prefix = object_store::path::Path::from(folder);
    let mut names: Vec<String> = files
        .object_store()
        .list(Some(&prefix))
        .map_ok(|meta| meta.location.to_string())
        .try_collect()
        .await
        .unwrap();
    names.retain(|n| n.contains(".tail"));
    names
}

/// A request that kept its bytes but could not record them (its lease ran out after it
/// wrote its tail) leaves the tail the record names whole: the next request goes on from
/// the record, and the finished file is the file sent.
#[tokio::test]
async fn a_tail_no_record_names_never_replaces_the_one_recorded() {
    let files = Files::memory();
    let file: Vec<u8> = (0..3 * PART as u32 + 123)
        .map(|i| (i * 31 + i / 7) as u8)
        .collect();
    let path = "uploads/0/clip.mp4".to_owned();
    let mut upload = Upload {
        id: Uuid::new_v4(),
        length: file.len() as u64,
        offset: 0,
        metadata: Metadata::default(),
        path: path.clone(),
        stored: begin(&files, &path).await.unwrap(),
        asset_id: Uuid::new_v4(),
        finished: false,
        created_at: Utc::now(),
        expires_at: Utc::now(),
        sha256: Some(RunningSha256::default()),
        metadata_header: None,
        workspace_id: None,
    };
    let mut ok = Record {
        saved: None,
        refuse: false,
    };
    // A part and 100 bytes: the tail at PART + 100.
    let first = PART + 100;
    send(&files, &mut upload, &file[..first], false, &mut ok)
        .await
        .unwrap();
    let recorded = ok.saved.clone().unwrap();
    assert_eq!(recorded.offset, first as u64);

    // With a checksum, a part more and 150 bytes, kept but never recorded.
    let second = first + PART + 50;
    let mut lost = Record {
        saved: None,
        refuse: true,
    };
    let mut stale = recorded.clone();
    let refused = send(&files, &mut stale, &file[first..second], true, &mut lost).await;
    assert!(
        matches!(refused, Err(ApiError::Locked { .. })),
        "{refused:?}"
    );
    assert_eq!(tails_kept(&files, &path).await.len(), 2);

    // The next request goes on from the record, to the end.
    let mut upload = recorded;
    send(&files, &mut upload, &file[first..], true, &mut ok)
        .await
        .unwrap();
    assert!(upload.is_complete());
    assert_eq!(
        upload.checksum(),
        Some(<[u8; 32]>::from(Sha256::digest(&file)))
    );
    finish(&files, &upload).await.unwrap();
    let made = files.read(&path, file.len() as u64 + 1).await.unwrap();
    assert!(made == file, "the finished file is the file sent");
    assert_eq!(tails_kept(&files, &path).await, Vec::<String>::new());
}

/// An upload begun by an earlier version, whose tail is the one object `{path}.tail`,
/// goes on from it.
#[tokio::test]
async fn an_upload_begun_with_the_old_tail_goes_on() {
    let files = Files::memory();
    let file: Vec<u8> = (0..PART as u32 + 4000).map(|i| (i % 251) as u8).collect();
    let path = "uploads/1/deck.pdf".to_owned();
    let Stored::Multipart { upload_id, .. } = begin(&files, &path).await.unwrap() else {
        panic!("a memory store has multipart uploads");
    };
    let kept = 1000;
    files
        .put(&old_tail(&path), Bytes::copy_from_slice(&file[..kept]))
        .await
        .unwrap();
    let mut upload = Upload {
        id: Uuid::new_v4(),
        length: file.len() as u64,
        offset: kept as u64,
        metadata: Metadata::default(),
        path: path.clone(),
        stored: Stored::Multipart {
            upload_id,
            parts: Vec::new(),
        },
        asset_id: Uuid::new_v4(),
        finished: false,
        created_at: Utc::now(),
        expires_at: Utc::now(),
        sha256: None,
        metadata_header: None,
        workspace_id: None,
    };
    let mut ok = Record {
        saved: None,
        refuse: false,
    };
    send(&files, &mut upload, &file[kept..], false, &mut ok)
        .await
        .unwrap();
    finish(&files, &upload).await.unwrap();
    let made = files.read(&path, file.len() as u64 + 1).await.unwrap();
    assert!(made == file);
    assert_eq!(tails_kept(&files, &path).await, Vec::<String>::new());
}
