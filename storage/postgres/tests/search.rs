//! The search index on PostgreSQL beyond core's conformance cases (feature `search`): every
//! row written carries its words; a row written without them (by a build without the
//! feature, or before schema 18) is still found, and `reindex_search` fills it in; a delete
//! takes the asset's text and words.

use assetlib_core::search::parse_query;
use assetlib_core::store::prelude::*;
use assetlib_core::store::{AssetText, SearchRequest, SearchStore as _};
use assetlib_core::testing::sample_asset;
use assetlib_core::{AssetChange, AssetDeletion, AssetType};
use assetlib_postgres::PgStore;
use uuid::Uuid;

use crate::common::{raw_client, store};

/// The ids `q` finds, drafts and paid text included.
async fn found(store: &PgStore, q: &str) -> Vec<Uuid> {
    let request = SearchRequest {
        limit: 50,
        ..SearchRequest::new(parse_query(q).expect("query"))
    };
    let page = store.search(&request).await.expect("search");
    page.items.into_iter().map(|h| h.asset.id).collect()
}

/// How many rows of `table` in the store's schema match `filter`.
async fn count(client: &tokio_postgres::Client, table: &str, filter: &str) -> i64 {
    let sql = format!("SELECT count(*) FROM assetlib.{table} WHERE {filter}");
    client.query_one(&sql, &[]).await.expect("count").get(0)
}

#[tokio::test]
async fn rows_without_words_are_found_and_reindexed() {
    let (store, db) = store().await;
    let (client, _conn) = raw_client(db.url()).await;
    let a = store
        .insert_asset(
            sample_asset("Harbour map", AssetType::Image, 1),
            Log::ANONYMOUS,
        )
        .await
        .expect("insert");
    let b = store
        .insert_asset(
            sample_asset("Annual report", AssetType::Pdf, 2),
            Log::ANONYMOUS,
        )
        .await
        .expect("insert");
    let mut change = AssetChange::at(b.created_at);
    change.description = Some(Some("Tide tables for the bay".into()));
    store
        .update_asset(b.id, &change, Log::ANONYMOUS)
        .await
        .expect("update");
    assert_eq!(count(&client, "assets", "search_words IS NULL").await, 0);
    assert_eq!(found(&store, "tide").await, vec![b.id]);

    // What a build without the feature writes.
    client
        .execute("UPDATE assetlib.assets SET search_words = NULL", &[])
        .await
        .expect("forget the words");
    assert_eq!(found(&store, "harbour").await, vec![a.id]);
    assert_eq!(found(&store, "tide").await, vec![b.id]);
    assert_eq!(found(&store, "lighthouse").await, Vec::<Uuid>::new());

    let mut seen = Vec::new();
    let done = store
        .reindex_search(1, |n| seen.push(n))
        .await
        .expect("reindex");
    assert_eq!((done, seen), (2, vec![1, 2]));
    assert_eq!(count(&client, "assets", "search_words IS NULL").await, 0);
    assert_eq!(found(&store, "harbour").await, vec![a.id]);
    assert_eq!(found(&store, "tide").await, vec![b.id]);
    assert_eq!(store.reindex_search(100, |_| {}).await.expect("again"), 0);
}

#[tokio::test]
async fn a_deleted_asset_takes_its_text_and_words() {
    let (store, db) = store().await;
    let (client, _conn) = raw_client(db.url()).await;
    let a = store
        .insert_asset(
            sample_asset("Field notes", AssetType::Document, 1),
            Log::ANONYMOUS,
        )
        .await
        .expect("insert");
    let text = AssetText {
        pages: vec!["Migrating cranes".into(), "Nesting terns".into()],
        paged: true,
    };
    assert!(
        store
            .set_asset_text(a.id, text.clone())
            .await
            .expect("text")
    );
    assert_eq!(store.asset_text(a.id).await.expect("read"), Some(text));
    assert_eq!(found(&store, "terns").await, vec![a.id]);
    let deleted = store
        .delete_asset(a.id, false, Log::ANONYMOUS)
        .await
        .expect("delete");
    assert!(matches!(deleted, AssetDeletion::Deleted(_)));
    assert_eq!(found(&store, "terns").await, Vec::<Uuid>::new());
    assert_eq!(count(&client, "asset_texts", "true").await, 0);
    assert_eq!(count(&client, "asset_text_words", "true").await, 0);
    assert!(
        !store
            .set_asset_text(a.id, AssetText::default())
            .await
            .expect("text of a missing asset")
    );
}

#[tokio::test]
async fn an_upgrade_from_version_18_clears_the_words_without_fields_and_reindexes_them() {
    let db = assetlib_testkit::postgres::TestCluster::shared()
        .empty_database()
        .await;
    let (client, conn) = raw_client(db.url()).await;
    crate::migrations::at_version(&client, 18).await;
    // An asset as version 18 wrote it: its words in one tsvector, no field named.
    let id = Uuid::new_v4();
    client
        .execute(
            "INSERT INTO assetlib.assets (id, title, title_lower, slug, description, \
                 description_lower, asset_type, is_public, published, created_at, updated_at, \
                 search_words) \
             VALUES ($1, 'Harbour map', 'harbour map', 'harbour-map', 'Charts of the bay', \
                     'charts of the bay', 'image', true, true, '2026-01-01T00:00:01Z', \
                     '2026-01-01T00:00:01Z', \
                     array_to_tsvector('{bay,charts,harbour,map,of,the}'::text[]))",
            &[&id],
        )
        .await
        .expect("asset");
    client
        .execute(
            "INSERT INTO assetlib.asset_counters (asset_id, download_count) VALUES ($1, 0)",
            &[&id],
        )
        .await
        .expect("counter");
    drop(client);
    let _ = conn.await;

    let store = PgStore::connect(db.url()).await.expect("upgrade");
    let (client, _conn) = raw_client(db.url()).await;
    assert_eq!(count(&client, "assets", "search_words IS NULL").await, 1);
    let score = |q: &'static str| {
        let store = &store;
        async move {
            let page = store
                .search(&SearchRequest::new(parse_query(q).expect("query")))
                .await
                .expect("search");
            page.items
                .iter()
                .map(|h| (h.asset.id, h.score))
                .collect::<Vec<_>>()
        }
    };
    // Found while unindexed, by the rules: the title weighs 8, the description 2.
    assert_eq!(score("harbour").await, vec![(id, 8)]);
    assert_eq!(score("charts").await, vec![(id, 2)]);
    assert_eq!(store.reindex_search(10, |_| {}).await.expect("reindex"), 1);
    let weighted: String = client
        .query_one(
            "SELECT search_words::text FROM assetlib.assets WHERE id = $1",
            &[&id],
        )
        .await
        .expect("words")
        .get(0);
    assert_eq!(
        weighted,
        "'bay':3C 'charts':3C 'harbour':1A 'map':1A 'of':3C 'the':3C"
    );
    // The same scores, now from the index.
    assert_eq!(score("harbour").await, vec![(id, 8)]);
    assert_eq!(score("charts").await, vec![(id, 2)]);
    assert_eq!(score("harbour -bay").await, vec![]);
    assert_eq!(score("ma").await, vec![(id, 8)]);
}
