//! The cases of a [`SearchStore`](crate::store::SearchStore) that stems words in English
//! ([`SearchStore::language`](crate::store::SearchStore::language)): every form of a word
//! finds the others in titles, descriptions, tags and texts; phrases match stem by stem; the
//! last word is the beginning of a stem; an excluded word leaves out every form of it; the
//! pages of text a hit carries are the ones its forms are on; and hits follow every write.

use super::search::{hits, search_store, text, titles};
use super::*;
use crate::search::{Language, parse_query_in};
use crate::store::SearchRequest;

/// A request for `q` read in the store's language, with no filter, the first 20 hits.
fn stemmed(store: &Arc<dyn Store>, q: &str) -> SearchRequest {
    let language = search_store(store).language();
    SearchRequest::new(parse_query_in(q, language).expect("a valid query"))
}

/// The titles and scores of the hits of `q`, read in the store's language.
async fn found(store: &Arc<dyn Store>, q: &str) -> Vec<(String, u32)> {
    hits(store, &stemmed(store, q)).await.0
}

/// The titles of the hits of `q`, read in the store's language.
async fn found_titles(store: &Arc<dyn Store>, q: &str) -> Vec<String> {
    let found = hits(store, &stemmed(store, q)).await;
    titles(&found).into_iter().map(str::to_owned).collect()
}

fn scored(hits: &[(&str, u32)]) -> Vec<(String, u32)> {
    hits.iter().map(|(t, s)| ((*t).to_owned(), *s)).collect()
}

/// Four assets, each holding its words in one field: a title, a description, a tag and the
/// second page of a text. Answers the one with the text.
async fn four_fields(store: &Arc<dyn Store>) -> Asset {
    let s = search_store(store);
    assert_eq!(
        s.language(),
        Some(Language::English),
        "the stemming cases run on a store set to English"
    );
    insert(store, sample_asset("Runs and runners", AssetType::Pdf, 1)).await;
    let mut plan = sample_asset("Quarterly plan", AssetType::Document, 2);
    plan.description = Some("Reporting on the budgets".into());
    insert(store, plan).await;
    let mut guide = sample_asset("Guide", AssetType::Pdf, 3);
    guide.tags = vec!["Libraries".into()];
    insert(store, guide).await;
    let minutes = insert(store, sample_asset("Minutes", AssetType::Pdf, 4)).await;
    let pages = text(
        &["Opening words", "The committee approved budgets for 2027"],
        true,
    );
    assert!(s.set_asset_text(minutes.id, pages).await.unwrap());
    minutes
}

pub(super) async fn every_form_of_a_word_finds_the_others(store: Arc<dyn Store>) {
    let minutes = four_fields(&store).await;
    assert_eq!(
        found(&store, "running").await,
        scored(&[("Runs and runners", 8)]),
        "a title"
    );
    assert_eq!(
        found(&store, "reported").await,
        scored(&[("Quarterly plan", 2)]),
        "a description"
    );
    assert_eq!(
        found(&store, "library").await,
        scored(&[("Guide", 4)]),
        "a tag"
    );
    assert_eq!(
        found(&store, "approves").await,
        scored(&[("Minutes", 1)]),
        "a text"
    );
    assert_eq!(
        found(&store, "budget").await,
        scored(&[("Quarterly plan", 2), ("Minutes", 1)])
    );
    assert_eq!(
        found(&store, "libraries OR runs").await,
        scored(&[("Runs and runners", 8), ("Guide", 4)])
    );
    // The page a form is on comes with the hit; its snippet marks the text as written.
    let request = stemmed(&store, "approving");
    let page = search_store(&store).search(&request).await.unwrap();
    let hit = page
        .items
        .iter()
        .find(|f| f.asset.id == minutes.id)
        .expect("a hit by its text");
    let approved = "The committee approved budgets for 2027";
    assert_eq!(hit.pages, vec![(1, approved.to_owned())]);
    assert_eq!(
        request.query.words_of(approved).snippet(&request.query),
        Some("The committee <mark>approved</mark> budgets for 2027".into())
    );
    let request = stemmed(&store, "running");
    assert_eq!(
        request
            .query
            .words_of("Runs and runners")
            .snippet(&request.query),
        Some("<mark>Runs</mark> and <mark>runners</mark>".into()),
        "the last word is the beginning of a stem: run, runner"
    );
}

pub(super) async fn phrases_prefixes_and_exclusions_match_stem_by_stem(store: Arc<dyn Store>) {
    four_fields(&store).await;
    assert_eq!(
        found_titles(&store, "\"approving budget\"").await,
        ["Minutes"],
        "a phrase matches stem by stem"
    );
    assert_eq!(
        found_titles(&store, "\"reported on the budget\"").await,
        ["Quarterly plan"]
    );
    assert!(
        found(&store, "\"budget approving\"").await.is_empty(),
        "in order"
    );
    assert_eq!(
        found_titles(&store, "quart").await,
        ["Quarterly plan"],
        "the beginning of a stem (quarter)"
    );
    assert_eq!(found_titles(&store, "committ").await, ["Minutes"]);
    assert!(
        found(&store, "runni").await.is_empty(),
        "a word typed halfway is its own stem, which begins no stem here"
    );
    for q in ["plans quarterly", "quarterly plans"] {
        assert_eq!(
            found_titles(&store, q).await,
            ["Quarterly plan"],
            "{q}: every word is stemmed, the last one too"
        );
    }
    assert_eq!(
        found_titles(&store, "budgets -approval").await,
        ["Quarterly plan"],
        "an excluded word leaves out every form of it"
    );
    assert!(found(&store, "running -run").await.is_empty());
    assert!(found(&store, "guide -library").await.is_empty());
}

pub(super) async fn stemmed_hits_follow_every_write(store: Arc<dyn Store>) {
    let s = search_store(&store);
    assert_eq!(s.language(), Some(Language::English));
    let a = insert(&store, sample_asset("Old name", AssetType::Pdf, 1)).await;
    let mut change = crate::change::AssetChange::at(t0() + Duration::seconds(5));
    change.title = Some("Sailing boats".into());
    change.tags = Some(crate::change::TagChange::Set(vec!["Harbours".into()]));
    store
        .update_asset(a.id, &change, Log::ANONYMOUS)
        .await
        .unwrap()
        .unwrap();
    assert!(found(&store, "old").await.is_empty());
    assert_eq!(
        found(&store, "sails boat").await,
        scored(&[("Sailing boats", 16)])
    );
    assert_eq!(
        found(&store, "harbour").await,
        scored(&[("Sailing boats", 4)])
    );
    let warnings = text(&["Warnings of storms"], false);
    assert!(s.set_asset_text(a.id, warnings).await.unwrap());
    assert_eq!(
        found(&store, "storm warned").await,
        scored(&[("Sailing boats", 2)])
    );
    assert!(
        s.set_asset_text(a.id, text(&["Calm seas"], false))
            .await
            .unwrap()
    );
    assert!(found(&store, "storm").await.is_empty());
    assert_eq!(found_titles(&store, "sea").await, ["Sailing boats"]);
    force_delete(&store, a.id).await;
    assert!(found(&store, "sea").await.is_empty());
    assert!(found(&store, "sailed").await.is_empty());
}
