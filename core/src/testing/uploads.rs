//! The cases of `UploadStore`: records that round-trip, leases held by one holder at a time
//! (also under concurrency), saves only by the holder, and expiry.

use super::*;
use crate::store::UploadLease;
use crate::tus::{Metadata, Stored, Upload};

/// An upload of `length` bytes made at `t0`, expiring `expires` seconds later, kept in a
/// multipart upload with two parts so far (a record with every kind of field).
fn sample_upload(length: u64, expires: i64) -> Upload {
    let metadata = Metadata {
        filename: Some("talk.mp4".to_owned()),
        title: Some("Keynote, day 2".to_owned()),
        is_public: Some("true".to_owned()),
        ..Metadata::default()
    };
    Upload {
        id: Uuid::new_v4(),
        length,
        offset: 0,
        metadata,
        path: "uploads/x/talk.mp4".to_owned(),
        stored: Stored::Multipart {
            upload_id: "mp-1".to_owned(),
            parts: vec!["\"etag-1\"".to_owned(), "\"etag-2\"".to_owned()],
        },
        asset_id: Uuid::new_v4(),
        finished: false,
        created_at: t0(),
        expires_at: t0() + Duration::seconds(expires),
        sha256: Some({
            let mut hash = crate::tus::RunningSha256::default();
            hash.update(b"the bytes so far");
            hash
        }),
        metadata_header: Some("filename dGFsay5tcDQ=,filetype dmlkZW8vbXA0,title S2V5bm90ZSwgZGF5IDI=,is_public dHJ1ZQ==".to_owned()),
        workspace_id: Some("acme".to_owned()),
    }
}

pub(super) async fn uploads_round_trip_and_only_their_holder_saves(store: Arc<dyn Store>) {
    let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
    let now = t0();
    let until = now + Duration::seconds(60);
    let mut upload = sample_upload(1 << 40, 3600);
    upload_store(&store)
        .insert_upload(&upload, a, until)
        .await
        .unwrap();
    assert!(matches!(
        upload_store(&store).insert_upload(&upload, b, until).await,
        Err(StoreError::DuplicateId { id }) if id == upload.id
    ));
    assert_eq!(
        upload_store(&store).get_upload(upload.id).await.unwrap(),
        Some(upload.clone())
    );
    assert_eq!(
        upload_store(&store)
            .get_upload(Uuid::new_v4())
            .await
            .unwrap(),
        None
    );

    // The creator holds it: another is told until when; the holder renews its own.
    match upload_store(&store)
        .lease_upload(upload.id, b, now, until)
        .await
        .unwrap()
    {
        UploadLease::Busy(held) => assert_eq!(held, until),
        other => panic!("a held upload was leased again: {other:?}"),
    }
    let renewed = until + Duration::seconds(30);
    assert_eq!(
        upload_store(&store)
            .lease_upload(upload.id, a, now, renewed)
            .await
            .unwrap(),
        UploadLease::Taken(Box::new(upload.clone()))
    );
    assert_eq!(
        upload_store(&store)
            .lease_upload(Uuid::new_v4(), a, now, until)
            .await
            .unwrap(),
        UploadLease::Missing
    );

    // Only the holder saves; a save with no end releases the lease.
    upload.offset = 5 << 20;
    upload.finished = true;
    assert!(
        !upload_store(&store)
            .save_upload(&upload, b, Some(until))
            .await
            .unwrap()
    );
    assert_eq!(
        upload_store(&store)
            .get_upload(upload.id)
            .await
            .unwrap()
            .unwrap()
            .offset,
        0
    );
    assert!(
        upload_store(&store)
            .save_upload(&upload, a, Some(renewed))
            .await
            .unwrap()
    );
    assert_eq!(
        upload_store(&store).get_upload(upload.id).await.unwrap(),
        Some(upload.clone())
    );
    assert!(
        upload_store(&store)
            .save_upload(&upload, a, None)
            .await
            .unwrap()
    );
    assert!(
        !upload_store(&store)
            .save_upload(&upload, a, None)
            .await
            .unwrap(),
        "released"
    );
    assert_eq!(
        upload_store(&store)
            .lease_upload(upload.id, b, now, until)
            .await
            .unwrap(),
        UploadLease::Taken(Box::new(upload.clone()))
    );

    // A lease that ran out is taken over, and its old holder saves no more.
    let later = until + Duration::seconds(1);
    assert_eq!(
        upload_store(&store)
            .lease_upload(upload.id, a, later, later + Duration::seconds(60))
            .await
            .unwrap(),
        UploadLease::Taken(Box::new(upload.clone()))
    );
    assert!(
        !upload_store(&store)
            .save_upload(&upload, b, None)
            .await
            .unwrap()
    );

    assert!(upload_store(&store).delete_upload(upload.id).await.unwrap());
    assert!(!upload_store(&store).delete_upload(upload.id).await.unwrap());
    assert_eq!(
        upload_store(&store).get_upload(upload.id).await.unwrap(),
        None
    );
    assert!(
        !upload_store(&store)
            .save_upload(&upload, a, None)
            .await
            .unwrap()
    );
}

pub(super) async fn one_of_many_concurrent_leases_is_taken(store: Arc<dyn Store>) {
    let upload = sample_upload(100, 3600);
    let now = t0();
    upload_store(&store)
        .insert_upload(&upload, Uuid::new_v4(), now)
        .await
        .unwrap();
    let tries = (0..16).map(|_| {
        let store = Arc::clone(&store);
        let id = upload.id;
        tokio::spawn(async move {
            upload_store(&store)
                .lease_upload(id, Uuid::new_v4(), now, now + Duration::seconds(60))
                .await
                .unwrap()
        })
    });
    let mut taken = 0;
    for outcome in futures_util::future::join_all(tries).await {
        match outcome.unwrap() {
            UploadLease::Taken(_) => taken += 1,
            UploadLease::Busy(_) => {}
            UploadLease::Missing => panic!("the upload went missing"),
        }
    }
    assert_eq!(taken, 1, "one lease of sixteen at once");
}

pub(super) async fn expired_uploads_are_listed_unless_held(store: Arc<dyn Store>) {
    let now = t0() + Duration::seconds(100);
    let (soon, late, held, free) = (
        sample_upload(1, 10),
        sample_upload(1, 1000),
        sample_upload(1, 20),
        sample_upload(1, 30),
    );
    let holder = Uuid::new_v4();
    let over = t0();
    for u in [&soon, &late, &free] {
        upload_store(&store)
            .insert_upload(u, holder, over)
            .await
            .unwrap();
    }
    upload_store(&store)
        .insert_upload(&held, holder, now + Duration::seconds(60))
        .await
        .unwrap();
    let ids = |list: Vec<Upload>| list.into_iter().map(|u| u.id).collect::<Vec<_>>();
    assert_eq!(
        ids(upload_store(&store).expired_uploads(now, 10).await.unwrap()),
        vec![soon.id, free.id],
        "expired, not held, earliest first"
    );
    assert_eq!(
        ids(upload_store(&store).expired_uploads(now, 1).await.unwrap()),
        vec![soon.id]
    );
    assert!(
        upload_store(&store)
            .expired_uploads(t0(), 10)
            .await
            .unwrap()
            .is_empty()
    );
}
