//! The search index of a sled store beyond core's conformance cases (feature `search`): a
//! database whose index is missing or was not kept (opened by a build without the feature),
//! or holds the words of another language, gets it built again when it is opened, and an
//! asset's delete takes its text and words.

use assetlib_core::search::{Language, parse_query, parse_query_in};
use assetlib_core::store::prelude::*;
use assetlib_core::store::{AssetText, SearchRequest, SearchStore as _};
use assetlib_core::{AssetDeletion, AssetType};
use assetlib_sled::{SledConfig, SledStore};
use uuid::Uuid;

use crate::common::{asset, store};

/// The ids `q` finds, drafts and paid text included.
async fn found(store: &SledStore, q: &str) -> Vec<Uuid> {
    let request = SearchRequest {
        limit: 50,
        ..SearchRequest::new(parse_query(q).expect("query"))
    };
    let page = store.search(&request).await.expect("search");
    page.items.into_iter().map(|h| h.asset.id).collect()
}

#[tokio::test]
async fn an_index_that_was_not_kept_is_built_again_at_open() {
    let (store, dir) = store();
    let a = store
        .insert_asset(asset("Harbour map", AssetType::Image, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    let b = store
        .insert_asset(asset("Annual report", AssetType::Pdf, 2), Log::ANONYMOUS)
        .await
        .expect("insert");
    let text = AssetText {
        pages: vec!["Tide tables".into(), "Lighthouse keepers".into()],
        paged: true,
    };
    assert!(store.set_asset_text(b.id, text).await.expect("text"));
    let path = store.path().to_path_buf();
    drop(store);
    let ghost = Uuid::new_v4();

    // What a build without the feature leaves: the mark gone, and (after writes it did not
    // index) words that no longer agree with the records. The mark and the trees of an older
    // layout (which kept the words of the fields and the facets in sled) are there, as in a
    // database written by an older build: they do not count, and the trees go.
    {
        let db = sled::open(&path).expect("open raw");
        let meta = db.open_tree("meta").expect("meta");
        meta.remove("search_indexed_3").expect("remove the mark");
        meta.insert("search_indexed_2", &[][..])
            .expect("the older layout's mark");
        db.open_tree("search_text_words")
            .and_then(|t| t.clear())
            .expect("clear");
        for tree in ["search_words", "search_text_words"] {
            db.open_tree(tree)
                .and_then(|t| t.insert(b"stale\x00aaaaaaaaaaaaaaaa", &[][..]))
                .expect("a stale word");
        }
        db.open_tree("search_facets")
            .and_then(|t| t.insert(b"aaaaaaaaaaaaaaaa", &[][..]))
            .expect("a stale facet");
        // The text of an asset such a build deleted: one page, "ghost words", not paged.
        let mut ghost_text = vec![1u8, 11];
        ghost_text.extend_from_slice(b"ghost words");
        ghost_text.push(0);
        db.open_tree("asset_texts")
            .and_then(|t| t.insert(ghost.as_bytes(), ghost_text))
            .expect("a text left behind");
        db.flush().expect("flush");
    }

    let store = SledStore::open(&path).expect("reopen");
    assert_eq!(found(&store, "harbour").await, vec![a.id]);
    assert_eq!(found(&store, "lighthouse").await, vec![b.id]);
    assert_eq!(found(&store, "stale").await, Vec::<Uuid>::new());
    assert_eq!(found(&store, "ghost").await, Vec::<Uuid>::new());
    assert_eq!(store.asset_text(ghost).await.expect("text"), None);
    // The filters read the facets built again.
    let pdfs = |q: &str| SearchRequest {
        drafts: false,
        asset_type: Some(AssetType::Pdf),
        ..SearchRequest::new(parse_query(q).expect("query"))
    };
    assert_eq!(
        store.search(&pdfs("harbour")).await.expect("search").total,
        0
    );
    assert_eq!(
        store
            .search(&pdfs("lighthouse"))
            .await
            .expect("search")
            .total,
        1
    );
    drop(store);
    let db = sled::open(&path).expect("open raw");
    let meta = db.open_tree("meta").expect("meta");
    assert!(meta.get("search_indexed_3").expect("get").is_some());
    assert!(meta.get("search_indexed_2").expect("get").is_none());
    let names = db.tree_names();
    for older in ["search_words", "search_facets"] {
        assert!(
            !names.iter().any(|n| n.as_ref() == older.as_bytes()),
            "{older} was dropped"
        );
    }
    drop(dir);
}

#[tokio::test]
async fn a_deleted_asset_takes_its_text_and_words() {
    let (store, _dir) = store();
    let a = store
        .insert_asset(asset("Field notes", AssetType::Document, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    let text = AssetText {
        pages: vec!["Migrating cranes".into()],
        paged: false,
    };
    assert!(store.set_asset_text(a.id, text).await.expect("text"));
    assert_eq!(found(&store, "cranes").await, vec![a.id]);
    let deleted = store
        .delete_asset(a.id, false, Log::ANONYMOUS)
        .await
        .expect("delete");
    assert!(matches!(deleted, AssetDeletion::Deleted(_)));
    assert_eq!(found(&store, "cranes").await, Vec::<Uuid>::new());
    assert_eq!(store.asset_text(a.id).await.expect("text"), None);
    // No word of it is left behind: the trees hold only what a rebuild would make.
    let path = store.path().to_path_buf();
    drop(store);
    let db = sled::open(&path).expect("open raw");
    for tree in ["search_text_words", "asset_texts"] {
        let left = db.open_tree(tree).expect("tree").len();
        assert_eq!(left, 0, "{tree}");
    }
}

/// The titles of the asset list's `search=` for `needle`, newest first.
async fn listed(store: &SledStore, needle: &str) -> Vec<String> {
    let query = assetlib_core::AssetQuery {
        search: Some(needle.into()),
        status: assetlib_core::AssetStatus::Any,
        ..assetlib_core::AssetQuery::default()
    };
    let page = store.list_assets(&query).await.expect("list");
    assert_eq!(page.total, page.items.len() as u64);
    page.items.into_iter().map(|a| a.title).collect()
}

#[tokio::test]
async fn the_lists_search_follows_every_write_after_its_texts_are_read() {
    let (store, _dir) = store();
    let a = store
        .insert_asset(asset("Harbour MAP", AssetType::Image, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    // The first search reads the texts; the writes after it move them.
    assert_eq!(listed(&store, "map").await, ["Harbour MAP"]);
    let b = store
        .insert_asset(asset("Bay maps", AssetType::Pdf, 2), Log::ANONYMOUS)
        .await
        .expect("insert");
    assert_eq!(listed(&store, "MAP").await, ["Bay maps", "Harbour MAP"]);
    let mut change = assetlib_core::AssetChange::at(b.created_at);
    change.title = Some("Bay charts".into());
    change.description = Some(Some("Soundings and a road map".into()));
    store
        .update_asset(b.id, &change, Log::ANONYMOUS)
        .await
        .expect("update");
    assert_eq!(listed(&store, "charts").await, ["Bay charts"]);
    assert_eq!(listed(&store, "road map").await, ["Bay charts"]);
    assert_eq!(listed(&store, "maps").await, Vec::<String>::new());
    store
        .delete_asset(a.id, true, Log::ANONYMOUS)
        .await
        .expect("delete");
    assert_eq!(listed(&store, "map").await, ["Bay charts"]);
    // Read again from the records when the database opens again.
    let path = store.path().to_path_buf();
    drop(store);
    let store = SledStore::open(&path).expect("reopen");
    assert_eq!(listed(&store, "harbour").await, Vec::<String>::new());
    assert_eq!(listed(&store, "sounding").await, ["Bay charts"]);
}

/// The ids `q` finds read in the store's own language, drafts and paid text included.
async fn found_in_its_language(store: &SledStore, q: &str) -> Vec<Uuid> {
    let query = parse_query_in(q, store.language()).expect("query");
    let request = SearchRequest {
        limit: 50,
        ..SearchRequest::new(query)
    };
    let page = store.search(&request).await.expect("search");
    page.items.into_iter().map(|h| h.asset.id).collect()
}

/// The language `meta` says the index of the database at `path` holds, and whether it is
/// marked whole.
fn index_marks(path: &std::path::Path) -> (Option<String>, bool) {
    let db = sled::open(path).expect("open raw");
    let meta = db.open_tree("meta").expect("meta");
    let language = meta
        .get("search_language")
        .expect("get")
        .map(|v| String::from_utf8(v.to_vec()).expect("a name"));
    (
        language,
        meta.get("search_indexed_3").expect("get").is_some(),
    )
}

#[tokio::test]
async fn a_change_of_language_indexes_again_at_open() {
    let (store, dir) = store();
    assert_eq!(store.language(), None);
    let runs = store
        .insert_asset(asset("Runs and runners", AssetType::Pdf, 1), Log::ANONYMOUS)
        .await
        .expect("insert");
    let minutes = store
        .insert_asset(asset("Minutes", AssetType::Pdf, 2), Log::ANONYMOUS)
        .await
        .expect("insert");
    let text = AssetText {
        pages: vec!["Agenda".into(), "The committee approved budgets".into()],
        paged: true,
    };
    assert!(store.set_asset_text(minutes.id, text).await.expect("text"));
    assert_eq!(
        found_in_its_language(&store, "running").await,
        Vec::<Uuid>::new()
    );
    assert_eq!(
        found_in_its_language(&store, "approving").await,
        Vec::<Uuid>::new()
    );
    let path = store.path().to_path_buf();
    drop(store);
    assert_eq!(index_marks(&path), (None, true));

    // Opened in English: the words of the records and of the kept texts are stemmed now.
    let english = SledConfig::default().search_language(Some(Language::English));
    let store = SledStore::open_with(&path, english.clone()).expect("reopen in English");
    assert_eq!(store.language(), Some(Language::English));
    assert_eq!(
        found_in_its_language(&store, "running").await,
        vec![runs.id]
    );
    assert_eq!(
        found_in_its_language(&store, "approving budget").await,
        vec![minutes.id]
    );
    assert_eq!(
        found_in_its_language(&store, "\"approve budgets\"").await,
        vec![minutes.id],
        "a phrase reads the kept text, stem by stem"
    );
    // The list's `search=` is a substring of the title, never stemmed.
    assert_eq!(listed(&store, "running").await, Vec::<String>::new());
    assert_eq!(listed(&store, "runs").await, ["Runs and runners"]);
    drop(store);
    assert_eq!(index_marks(&path), (Some("english".into()), true));
    // Opened again in English: nothing to do, and the hits stay.
    let store = SledStore::open_with(&path, english).expect("reopen");
    assert_eq!(
        found_in_its_language(&store, "approves").await,
        vec![minutes.id]
    );
    drop(store);

    // And back: whole folded words again.
    let store = SledStore::open(&path).expect("reopen without a language");
    assert_eq!(store.language(), None);
    assert_eq!(
        found_in_its_language(&store, "running").await,
        Vec::<Uuid>::new()
    );
    assert_eq!(found_in_its_language(&store, "runs").await, vec![runs.id]);
    assert_eq!(
        found_in_its_language(&store, "approving").await,
        Vec::<Uuid>::new()
    );
    assert_eq!(
        found_in_its_language(&store, "approved").await,
        vec![minutes.id]
    );
    drop(store);
    assert_eq!(index_marks(&path), (None, true));
    drop(dir);
}

#[tokio::test]
async fn a_stemmed_index_keeps_no_word_of_what_is_deleted() {
    let english = SledConfig::default().search_language(Some(Language::English));
    let (store, _dir) = crate::common::store_with(english);
    let a = store
        .insert_asset(
            asset("Sailing boats", AssetType::Document, 1),
            Log::ANONYMOUS,
        )
        .await
        .expect("insert");
    let text = AssetText {
        pages: vec!["Warnings of storms".into()],
        paged: false,
    };
    assert!(store.set_asset_text(a.id, text).await.expect("text"));
    let calmer = AssetText {
        pages: vec!["Calm seas".into()],
        paged: false,
    };
    assert!(store.set_asset_text(a.id, calmer).await.expect("text"));
    assert_eq!(
        found_in_its_language(&store, "warned").await,
        Vec::<Uuid>::new()
    );
    assert_eq!(found_in_its_language(&store, "sea sails").await, vec![a.id]);
    store
        .delete_asset(a.id, true, Log::ANONYMOUS)
        .await
        .expect("delete");
    let path = store.path().to_path_buf();
    drop(store);
    let db = sled::open(&path).expect("open raw");
    for tree in ["search_text_words", "asset_texts"] {
        let left = db.open_tree(tree).expect("tree").len();
        assert_eq!(left, 0, "{tree}");
    }
}

/// Writers racing on the same assets: each rename's words are made while the others commit,
/// and after them all a search finds each asset by its last committed title only.
#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn racing_renames_leave_the_words_of_the_last_committed_title() {
    const WRITERS: usize = 16;
    let (store, _dir) = store();
    let mut ids = Vec::new();
    for n in 0..4 {
        let a = store
            .insert_asset(
                asset(&format!("Start{n}"), AssetType::Pdf, n),
                Log::ANONYMOUS,
            )
            .await
            .expect("insert");
        ids.push(a.id);
    }
    // The words of the fields are kept from the first search on.
    assert_eq!(found(&store, "start0").await, vec![ids[0]]);
    const ROUNDS: usize = 150;
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (store, ids) = (store.clone(), ids.clone());
            tokio::spawn(async move {
                for round in 0..ROUNDS {
                    let id = ids[(w + round) % ids.len()];
                    let mut change = assetlib_core::AssetChange::at(chrono::Utc::now());
                    change.title = Some(format!("Renamed w{w}r{round}"));
                    store
                        .update_asset(id, &change, Log::ANONYMOUS)
                        .await
                        .expect("update");
                }
            })
        })
        .collect();
    for w in writers {
        w.await.expect("writer");
    }
    let mut all = found(&store, "renamed").await;
    all.sort();
    let mut expected = ids.clone();
    expected.sort();
    assert_eq!(all, expected, "each asset once, under its last title");
    // Every title word ever written finds only the asset whose title holds it now.
    let mut titles = std::collections::HashMap::new();
    for &id in &ids {
        let title = store
            .get_asset(id)
            .await
            .expect("get")
            .expect("there")
            .title;
        titles.insert(id, title.to_lowercase());
        for start in 0..2 {
            assert!(!found(&store, &format!("start{start}")).await.contains(&id));
        }
    }
    let mut hits = 0;
    for w in 0..WRITERS {
        for round in 0..ROUNDS {
            let word = format!("w{w}r{round}");
            for id in found(&store, &format!("\"{word}\"")).await {
                assert!(
                    titles[&id].ends_with(&format!(" {word}")),
                    "{word}: {}",
                    titles[&id]
                );
                hits += 1;
            }
        }
    }
    assert_eq!(hits, ids.len(), "one title word an asset");
}
