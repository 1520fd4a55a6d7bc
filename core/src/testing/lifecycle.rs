//! Conformance cases of the asset lifecycle: changes, drafts, deletes and usage.

use std::sync::Arc;

use chrono::Duration;
use uuid::Uuid;

use super::{entry, entry_copies, insert, list, query, sample_asset, sample_library, t0, write};
use crate::change::{AssetChange, FileFields, LibraryUse};
use crate::events::Log;
use crate::model::{Asset, AssetType, EntryAsset, Library, Media};
use crate::query::{AssetQuery, AssetSort, AssetStatus, LibraryQuery, SortOrder};
use crate::store::Store;

pub(super) fn change(secs: i64) -> AssetChange {
    AssetChange::at(t0() + Duration::seconds(secs))
}

pub(super) async fn update(
    store: &Arc<dyn Store>,
    id: Uuid,
    change: &AssetChange,
) -> (Asset, Asset) {
    let done = store
        .update_asset(id, change, Log::ANONYMOUS)
        .await
        .expect("update_asset")
        .expect("asset exists");
    (done.before, done.after)
}

pub(super) fn with_status(status: AssetStatus) -> AssetQuery {
    AssetQuery {
        status,
        ..query(AssetSort::CreatedAt, SortOrder::Asc, 50)
    }
}

pub(super) async fn ids_of(store: &Arc<dyn Store>, q: AssetQuery) -> (Vec<Uuid>, u64) {
    let (items, total) = list(store, q).await;
    (items.into_iter().map(|a| a.id).collect(), total)
}

pub(super) async fn asset_count_of(store: &Arc<dyn Store>, library: Uuid) -> u64 {
    let page = store
        .list_libraries(&LibraryQuery {
            limit: 100,
            ..LibraryQuery::default()
        })
        .await
        .expect("list_libraries");
    page.items
        .into_iter()
        .find(|s| s.library.id == library)
        .map(|s| s.asset_count)
        .expect("library listed")
}

pub(super) async fn put(store: &Arc<dyn Store>, library: &Library, assets: &[&Asset]) {
    let entries = assets
        .iter()
        .enumerate()
        .map(|(i, a)| entry(a, None, i as u32))
        .collect();
    store
        .put_library(write(library.clone(), vec![], entries), Log::ANONYMOUS)
        .await
        .expect("put_library");
}

pub(super) async fn version(store: &Arc<dyn Store>, library: Uuid) -> u64 {
    store
        .record_library_view(library)
        .await
        .expect("view")
        .expect("published library")
        .version
}

pub(super) fn use_of(library: &Library) -> LibraryUse {
    LibraryUse {
        id: library.id,
        title: library.settings.title.clone(),
        slug: library.slug.clone(),
        published: library.settings.published,
    }
}

pub(super) async fn update_asset_merges_and_keeps_identity(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("Alpha", AssetType::Pdf, 1)).await;
    let b = insert(&store, sample_asset("Mike", AssetType::Pdf, 2)).await;
    store.record_download(a.id).await.unwrap();

    let mut rename = change(50);
    rename.title = Some("Zulu".into());
    rename.description = Some(Some("now with a description".into()));
    rename.is_public = Some(true);
    let (before, after) = update(&store, a.id, &rename).await;
    assert_eq!(before.title, "Alpha", "before is the stored asset");
    assert_eq!(before.download_count, 1);
    assert_eq!(after.slug, a.slug, "slug kept");
    assert_eq!(after.created_at, a.created_at, "created_at kept");
    assert_eq!(after.download_count, 1, "downloads kept");
    assert_eq!(after.asset_type, AssetType::Pdf);
    assert_eq!(after.title, "Zulu");
    assert_eq!(after.description.as_deref(), Some("now with a description"));
    assert!(after.is_public);
    assert_eq!(after.updated_at, t0() + Duration::seconds(50));
    assert_eq!(store.get_asset(a.id).await.unwrap(), Some(after.clone()));

    // The indexes follow the new title and time.
    let titles = |items: Vec<Asset>| items.into_iter().map(|x| x.title).collect::<Vec<_>>();
    let (items, total) = list(&store, query(AssetSort::Title, SortOrder::Asc, 10)).await;
    assert_eq!(
        (titles(items), total),
        (vec!["Mike".into(), "Zulu".into()], 2)
    );
    let (items, _) = list(&store, query(AssetSort::UpdatedAt, SortOrder::Desc, 10)).await;
    assert_eq!(titles(items), vec!["Zulu", "Mike"]);
    let mut search = query(AssetSort::CreatedAt, SortOrder::Asc, 10);
    search.search = Some("alpha".into());
    assert_eq!(list(&store, search.clone()).await.1, 0);
    search.search = Some("DESCRIPTION".into());
    assert_eq!(list(&store, search).await.1, 1);

    // A change that changes nothing writes nothing, and the time stays.
    let mut same = change(90);
    same.title = Some("Zulu".into());
    let (before, after) = update(&store, a.id, &same).await;
    assert_eq!(before, after);
    assert_eq!(after.updated_at, t0() + Duration::seconds(50));

    // Clearing a description; the other asset is untouched.
    let mut clear = change(60);
    clear.description = Some(None);
    let (_, after) = update(&store, a.id, &clear).await;
    assert_eq!(after.description, None);
    assert_eq!(store.get_asset(b.id).await.unwrap(), Some(b));

    assert_eq!(
        store
            .update_asset(Uuid::new_v4(), &rename, Log::ANONYMOUS)
            .await
            .unwrap(),
        None
    );
}

pub(super) async fn update_asset_replaces_file_fields(store: Arc<dyn Store>) {
    let mut a = sample_asset("Photo", AssetType::Image, 1);
    a.file_path = Some("uploads/1/old.png".into());
    a.file_size = Some(10);
    a.mime_type = Some("image/png".into());
    a.thumbnail_path = Some("thumbnails/old.png".into());
    a.width = Some(4);
    a.height = Some(3);
    let a = insert(&store, a).await;
    let file = FileFields {
        file_path: Some("uploads/2/new.jpg".into()),
        file_size: Some(20),
        mime_type: Some("image/jpeg".into()),
        thumbnail_path: Some("thumbnails/new.jpg".into()),
        thumbnail_placeholder: Some("3OcRJYB4d3h/iIeHeEh3eIhw+j3A".into()),
        page_count: None,
        word_count: None,
        width: Some(40),
        height: Some(30),
        media: Media {
            duration_ms: Some(12_345),
            sample_rate: Some(48_000),
            channels: Some(2),
            bitrate: Some(128_000),
            video_codec: Some("h264".into()),
        },
        checksum_sha256: Some([9; 32]),
    };
    let mut replace = change(5);
    replace.file = Some(file.clone());
    let (before, after) = update(&store, a.id, &replace).await;
    assert_eq!(before, a);
    assert_eq!(FileFields::of(&after), file);
    assert_eq!(after.title, a.title);
    assert_eq!(store.get_asset(a.id).await.unwrap(), Some(after));
}

/// What a library page shows of `asset`.
fn shown(asset: &Asset) -> EntryAsset {
    EntryAsset::from(asset)
}

pub(super) async fn library_loads_follow_asset_changes(store: Arc<dyn Store>) {
    let mut a = sample_asset("Alpha", AssetType::Image, 1);
    a.thumbnail_path = Some("thumbnails/alpha.png".into());
    let a = insert(&store, a).await;
    let b = insert(&store, sample_asset("Bravo", AssetType::Pdf, 2)).await;
    let first = sample_library("First", 3);
    let second = sample_library("Second", 4);
    // Both libraries hold both assets (an asset is placed at most once per library).
    put(&store, &first, &[&a, &b]).await;
    put(&store, &second, &[&b, &a]).await;
    let expect = |a: &Asset, b: &Asset| {
        (
            vec![(a.id, shown(a)), (b.id, shown(b))],
            vec![(b.id, shown(b)), (a.id, shown(a))],
        )
    };
    let pages = || async {
        (
            entry_copies(&*store, first.id).await,
            entry_copies(&*store, second.id).await,
        )
    };
    assert_eq!(pages().await, expect(&a, &b));

    // Title and description.
    let mut rename = change(10);
    rename.title = Some("Alpha renamed".into());
    rename.description = Some(Some("described".into()));
    let (_, a) = update(&store, a.id, &rename).await;
    assert_eq!(pages().await, expect(&a, &b));

    // A new file brings a new thumbnail.
    let mut replace = change(20);
    replace.file = Some(FileFields {
        file_path: Some("uploads/2/new.png".into()),
        file_size: Some(20),
        mime_type: Some("image/png".into()),
        thumbnail_path: Some("thumbnails/new.png".into()),
        thumbnail_placeholder: Some("1QcSHQRnh493V4dIh4eXh1h4kJUI".into()),
        page_count: None,
        word_count: None,
        width: Some(4),
        height: Some(3),
        media: Media {
            duration_ms: Some(61_000),
            ..Media::default()
        },
        checksum_sha256: None,
    });
    let (_, a) = update(&store, a.id, &replace).await;
    assert_eq!(a.thumbnail_path.as_deref(), Some("thumbnails/new.png"));
    assert_eq!(pages().await, expect(&a, &b));

    // Unpublishing and publishing again; the other asset's change leaves this one's rows.
    let mut hide = change(30);
    hide.published = Some(false);
    let (_, a) = update(&store, a.id, &hide).await;
    assert!(!a.published);
    assert_eq!(pages().await, expect(&a, &b));
    let mut describe = change(40);
    describe.description = Some(None);
    let (_, b) = update(&store, b.id, &describe).await;
    assert_eq!(pages().await, expect(&a, &b));
    let mut show = change(50);
    show.published = Some(true);
    let (_, a) = update(&store, a.id, &show).await;
    assert_eq!(pages().await, expect(&a, &b));

    // A change of what a page does not show leaves the rows as they were.
    let mut share = change(60);
    share.is_public = Some(!a.is_public);
    let (_, a) = update(&store, a.id, &share).await;
    assert_eq!(pages().await, expect(&a, &b));

    // A forced delete takes the asset's rows from both pages.
    store
        .delete_asset(a.id, true, Log::ANONYMOUS)
        .await
        .expect("delete_asset");
    assert_eq!(
        pages().await,
        (vec![(b.id, shown(&b))], vec![(b.id, shown(&b))])
    );
    // The libraries written again hold what they are given, with the assets as they are now.
    put(&store, &first, &[&b]).await;
    assert_eq!(
        entry_copies(&*store, first.id).await,
        vec![(b.id, shown(&b))]
    );
}

pub(super) async fn drafts_are_listed_by_status(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("A", AssetType::Pdf, 1)).await;
    let b = insert(&store, sample_asset("B", AssetType::Image, 2)).await;
    let mut c = sample_asset("C draft", AssetType::Pdf, 3);
    c.published = false;
    let c = insert(&store, c).await;

    assert_eq!(
        ids_of(&store, with_status(AssetStatus::Published)).await,
        (vec![a.id, b.id], 2)
    );
    assert_eq!(
        ids_of(&store, with_status(AssetStatus::Draft)).await,
        (vec![c.id], 1)
    );
    assert_eq!(
        ids_of(&store, with_status(AssetStatus::Any)).await,
        (vec![a.id, b.id, c.id], 3)
    );

    // Unpublishing and publishing move assets between the lists, with every filter.
    let mut hide = change(10);
    hide.published = Some(false);
    let (_, hidden) = update(&store, b.id, &hide).await;
    assert!(!hidden.published);
    let mut publish = change(11);
    publish.published = Some(true);
    update(&store, c.id, &publish).await;
    assert_eq!(
        ids_of(&store, with_status(AssetStatus::Published)).await,
        (vec![a.id, c.id], 2)
    );
    assert_eq!(
        ids_of(&store, with_status(AssetStatus::Draft)).await,
        (vec![b.id], 1)
    );
    let mut images = with_status(AssetStatus::Draft);
    images.asset_type = Some(AssetType::Image);
    assert_eq!(ids_of(&store, images.clone()).await, (vec![b.id], 1));
    images.status = AssetStatus::Published;
    assert_eq!(ids_of(&store, images).await, (vec![], 0));
    let mut pdfs = with_status(AssetStatus::Any);
    pdfs.asset_type = Some(AssetType::Pdf);
    assert_eq!(ids_of(&store, pdfs).await, (vec![a.id, c.id], 2));
    let mut search = with_status(AssetStatus::Draft);
    search.search = Some("b".into());
    assert_eq!(ids_of(&store, search.clone()).await, (vec![b.id], 1));
    search.status = AssetStatus::Any;
    search.search = Some("draft".into());
    assert_eq!(ids_of(&store, search).await, (vec![c.id], 1));
    let mut by_update = with_status(AssetStatus::Any);
    by_update.sort = AssetSort::UpdatedAt;
    by_update.order = SortOrder::Desc;
    by_update.per_page = 2;
    by_update.page = 1;
    assert_eq!(ids_of(&store, by_update).await, (vec![c.id, b.id], 3));
}

pub(super) async fn publication_changes_library_counts_and_versions(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("A", AssetType::Pdf, 1)).await;
    let b = insert(&store, sample_asset("B", AssetType::Pdf, 2)).await;
    let lib = sample_library("Holder", 3);
    put(&store, &lib, &[&a, &b]).await;
    assert_eq!(asset_count_of(&store, lib.id).await, 2);
    let v1 = version(&store, lib.id).await;

    let mut hide = change(10);
    hide.published = Some(false);
    update(&store, b.id, &hide).await;
    assert_eq!(asset_count_of(&store, lib.id).await, 1);
    let v2 = version(&store, lib.id).await;
    assert_ne!(v1, v2, "unpublishing a held asset changes the page");
    let rows = store.load_library(lib.id).await.unwrap().unwrap();
    let row = rows.entries.iter().find(|r| r.entry.asset_id == b.id);
    assert!(!row.expect("the draft's entry stays").asset.published);

    let mut show = change(11);
    show.published = Some(true);
    update(&store, b.id, &show).await;
    assert_eq!(asset_count_of(&store, lib.id).await, 2);
    assert_ne!(version(&store, lib.id).await, v2);

    // A library written while an asset is a draft counts it once it is published.
    let mut c = sample_asset("C", AssetType::Pdf, 4);
    c.published = false;
    let c = insert(&store, c).await;
    let second = sample_library("Second", 5);
    put(&store, &second, &[&a, &c]).await;
    assert_eq!(asset_count_of(&store, second.id).await, 1);
    update(&store, c.id, &show).await;
    assert_eq!(asset_count_of(&store, second.id).await, 2);
}

pub(super) async fn concurrent_changes_never_mix(store: Arc<dyn Store>) {
    let a = insert(&store, sample_asset("Start", AssetType::Pdf, 1)).await;
    const ROUNDS: i64 = 40;
    // One writer renames, the other describes: neither change is ever lost.
    let rename = {
        let store = store.clone();
        tokio::spawn(async move {
            for i in 0..ROUNDS {
                let mut c = change(10 + i);
                c.title = Some(format!("T{i}"));
                store
                    .update_asset(a.id, &c, Log::ANONYMOUS)
                    .await
                    .unwrap()
                    .unwrap();
            }
        })
    };
    let describe = {
        let store = store.clone();
        tokio::spawn(async move {
            for i in 0..ROUNDS {
                let mut c = change(10 + i);
                c.description = Some(Some(format!("D{i}")));
                store
                    .update_asset(a.id, &c, Log::ANONYMOUS)
                    .await
                    .unwrap()
                    .unwrap();
            }
        })
    };
    rename.await.unwrap();
    describe.await.unwrap();
    let last = ROUNDS - 1;
    let got = store.get_asset(a.id).await.unwrap().unwrap();
    assert_eq!(got.title, format!("T{last}"), "a rename was lost");
    assert_eq!(
        got.description,
        Some(format!("D{last}")),
        "a describe was lost"
    );

    // Two writers that each set both fields: the result is one writer's pair.
    let tasks: Vec<_> = ["X", "Y"]
        .into_iter()
        .map(|who| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0..ROUNDS {
                    let mut c = change(100 + i);
                    c.title = Some(format!("{who}{i}"));
                    c.description = Some(Some(format!("{who}{i}")));
                    let done = store
                        .update_asset(a.id, &c, Log::ANONYMOUS)
                        .await
                        .unwrap()
                        .unwrap();
                    assert_eq!(Some(done.after.title), done.after.description);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let got = store.get_asset(a.id).await.unwrap().unwrap();
    assert_eq!(
        Some(got.title),
        got.description,
        "fields of two changes mixed"
    );
}
