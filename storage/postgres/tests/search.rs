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

/// A document asset titled `title` inserted into `store`, with `pages` of text kept for it.
async fn document(store: &PgStore, title: &str, pages: &[&str]) -> assetlib_core::Asset {
    let a = store
        .insert_asset(sample_asset(title, AssetType::Document, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    let text = AssetText {
        pages: pages.iter().map(|p| (*p).to_owned()).collect(),
        paged: true,
    };
    assert!(store.set_asset_text(a.id, text).await.expect("text"));
    a
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

/// How many rows of `asset_text_words` hold a copy of their asset's fields that differs from
/// the asset row (migration 20).
async fn stale_copies(client: &tokio_postgres::Client) -> i64 {
    count(
        client,
        "asset_text_words w JOIN assetlib.assets a ON a.id = w.asset_id",
        "(w.created_at, w.published, w.is_public, w.asset_type, w.workspace_id, w.tag_keys) \
         IS DISTINCT FROM \
         (a.created_at, a.published, a.is_public, a.asset_type, a.workspace_id, a.tag_keys)",
    )
    .await
}

/// The ids `q` finds with the filters of `request` (a request's query is replaced).
async fn found_with(store: &PgStore, q: &str, request: SearchRequest) -> Vec<Uuid> {
    let request = SearchRequest {
        query: parse_query(q).expect("query"),
        ..request
    };
    let page = store.search(&request).await.expect("search");
    page.items.into_iter().map(|h| h.asset.id).collect()
}

/// A search by the words of a text filters by its asset's fields as they are now: the copy of
/// them beside the words follows every write of the asset (the trigger of migration 20).
#[tokio::test]
async fn a_texts_hits_follow_every_change_of_their_assets_fields() {
    let (store, db) = store().await;
    let (client, _conn) = raw_client(db.url()).await;
    let a = document(&store, "Field notes", &["Migrating cranes"]).await;
    let any = || SearchRequest::new(parse_query("x").expect("query"));
    let tagged = || SearchRequest {
        tag: Some("birds".into()),
        ..any()
    };
    let public = || SearchRequest {
        drafts: false,
        ..any()
    };
    let acme = || SearchRequest {
        workspace_id: Some("acme".into()),
        ..any()
    };
    assert_eq!(found_with(&store, "cranes", any()).await, vec![a.id]);
    assert!(found_with(&store, "cranes", tagged()).await.is_empty());
    assert!(found_with(&store, "cranes", acme()).await.is_empty());
    let published = a.published;
    assert_eq!(
        found_with(&store, "cranes", public()).await.is_empty(),
        !published
    );

    let mut change = AssetChange::at(a.created_at);
    change.tags = Some(assetlib_core::TagChange::Set(vec!["Birds".into()]));
    change.published = Some(!published);
    change.workspace = Some(Some("acme".into()));
    store
        .update_asset(a.id, &change, Log::ANONYMOUS)
        .await
        .expect("update");
    assert_eq!(stale_copies(&client).await, 0);
    assert_eq!(found_with(&store, "cranes", tagged()).await, vec![a.id]);
    assert_eq!(found_with(&store, "cranes", acme()).await, vec![a.id]);
    assert_eq!(
        found_with(&store, "cranes", public()).await.is_empty(),
        published
    );
    let other_type = SearchRequest {
        asset_type: Some(AssetType::Pdf),
        ..any()
    };
    assert!(found_with(&store, "cranes", other_type).await.is_empty());
}

/// Texts kept while their assets are published and unpublished, side by side, many times:
/// every copy of the fields ends equal to its asset row, whichever write came first.
#[tokio::test]
async fn texts_kept_during_updates_keep_the_fields_of_the_last_update() {
    let (store, db) = store().await;
    let (client, _conn) = raw_client(db.url()).await;
    let mut ids = Vec::new();
    for i in 0..40 {
        let a = store
            .insert_asset(
                sample_asset(&format!("Race {i}"), AssetType::Document, i),
                Log::ANONYMOUS,
            )
            .await
            .expect("insert");
        ids.push(a);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (i, a) in ids.iter().enumerate() {
        for round in 0..3 {
            let keeper = store.clone();
            let (id, at, published) = (a.id, a.created_at, a.published);
            tasks.spawn(async move {
                let text = AssetText {
                    pages: vec![format!("page of round {round} of asset {i}")],
                    paged: false,
                };
                assert!(keeper.set_asset_text(id, text).await.expect("text"));
            });
            let updater = store.clone();
            tasks.spawn(async move {
                let mut change = AssetChange::at(at);
                change.published = Some((round % 2 == 0) != published);
                change.tags = Some(assetlib_core::TagChange::Set(vec![format!("r{round}")]));
                updater
                    .update_asset(id, &change, Log::ANONYMOUS)
                    .await
                    .expect("update");
            });
        }
    }
    let mut done = 0;
    while let Some(task) = tasks.join_next().await {
        task.expect("task");
        done += 1;
    }
    assert_eq!(done, 40 * 3 * 2);
    assert_eq!(count(&client, "asset_text_words", "true").await, 40);
    assert_eq!(stale_copies(&client).await, 0);
}

#[tokio::test]
async fn an_upgrade_from_version_19_copies_each_texts_asset_fields() {
    let db = assetlib_testkit::postgres::TestCluster::shared()
        .empty_database()
        .await;
    let (client, conn) = raw_client(db.url()).await;
    crate::migrations::at_version(&client, 19).await;
    // An asset with a text, as version 19 wrote them: the words without the copy.
    let id = Uuid::new_v4();
    for sql in [
        "INSERT INTO assetlib.assets (id, title, title_lower, slug, asset_type, is_public, \
             published, created_at, updated_at, tag_keys, workspace_id, search_words) \
         VALUES ($1, 'Field notes', 'field notes', 'field-notes', 'document', false, true, \
                 '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z', '{birds}', 'acme', \
                 '''field'':1A ''notes'':1A'::tsvector)",
        "INSERT INTO assetlib.asset_counters (asset_id, download_count) VALUES ($1, 0)",
        "INSERT INTO assetlib.asset_texts (asset_id, paged, pages) \
         VALUES ($1, false, '{Migrating cranes}')",
        "INSERT INTO assetlib.asset_text_words (asset_id, chunk, words) \
         VALUES ($1, 0, array_to_tsvector('{cranes,migrating}'::text[]))",
    ] {
        client.execute(sql, &[&id]).await.expect("version 19 rows");
    }
    drop(client);
    let _ = conn.await;

    let store = PgStore::connect(db.url()).await.expect("upgrade");
    let (client, _conn) = raw_client(db.url()).await;
    assert_eq!(stale_copies(&client).await, 0);
    assert_eq!(count(&client, "asset_text_words", "published").await, 1);
    let acme = SearchRequest {
        workspace_id: Some("acme".into()),
        tag: Some("birds".into()),
        drafts: false,
        ..SearchRequest::new(parse_query("x").expect("query"))
    };
    assert_eq!(found_with(&store, "cranes", acme).await, vec![id]);
}

/// A store connecting in another language clears the index's words (searches stay right,
/// read from the candidates), and `reindex_search` makes them again in that language, the
/// text's too; connecting again in the same language keeps them.
#[tokio::test]
async fn a_change_of_language_clears_the_words_until_reindexed() {
    use assetlib_core::search::{Language, parse_query_in};
    use assetlib_postgres::PgConfig;
    let (plain, db) = store().await;
    let (client, _conn) = raw_client(db.url()).await;
    let a = document(
        &plain,
        "Runs and runners",
        &["Still water", "Running water"],
    )
    .await;
    // No language: whole folded words.
    assert_eq!(found(&plain, "\"running water\"").await, vec![a.id]);
    assert!(found(&plain, "\"runs water\"").await.is_empty());

    let english = || PgConfig::new().search_language(Some(Language::English));
    let store = PgStore::connect_with(db.url(), english())
        .await
        .expect("connect in English");
    assert_eq!(store.language(), Some(Language::English));
    let language: Option<String> = client
        .query_one("SELECT language FROM assetlib.search_index", &[])
        .await
        .expect("language")
        .get(0);
    assert_eq!(language.as_deref(), Some("english"));
    assert_eq!(
        count(&client, "assets", "search_words IS NOT NULL").await,
        0
    );
    assert_eq!(count(&client, "asset_text_words", "true").await, 0);
    let hits = |q: &'static str| {
        let store = &store;
        async move {
            let query = parse_query_in(q, store.language()).expect("query");
            let page = store
                .search(&SearchRequest::new(query))
                .await
                .expect("search");
            page.items
                .iter()
                .map(|h| {
                    let pages: Vec<u32> = h.pages.iter().map(|(page, _)| *page).collect();
                    (h.asset.id, h.score, pages)
                })
                .collect::<Vec<_>>()
        }
    };
    // Right while unindexed (read from the candidates): every form of the word, on the
    // second page (index 1).
    let stemmed = hits("running").await;
    assert_eq!(stemmed, vec![(a.id, 8, vec![1])]);
    assert_eq!(hits("\"runs water\"").await.len(), 1);

    let mut seen = Vec::new();
    let done = store
        .reindex_search(10, |n| seen.push(n))
        .await
        .expect("reindex");
    assert_eq!((done, seen), (1, vec![1]));
    assert_eq!(count(&client, "assets", "search_words IS NULL").await, 0);
    assert_eq!(
        count(&client, "asset_text_words", "words @@ 'run'::tsquery").await,
        1
    );
    assert_eq!(
        count(&client, "asset_text_words", "words @@ 'running'::tsquery").await,
        0
    );
    // The same hits, now from the index.
    assert_eq!(hits("running").await, stemmed);
    assert_eq!(hits("water -runner").await, vec![]);

    // Connecting again in English keeps the words.
    let again = PgStore::connect_with(db.url(), english())
        .await
        .expect("connect again");
    assert_eq!(count(&client, "assets", "search_words IS NULL").await, 0);
    drop(again);
    // And without a language clears them again.
    let _plain_again = PgStore::connect(db.url()).await.expect("connect plain");
    assert_eq!(
        count(&client, "assets", "search_words IS NOT NULL").await,
        0
    );
}
