//! The cases of [`SearchStore`]: kept text, ranked hits by the rules of [`crate::search`],
//! filters, who sees drafts and paid text, paging, and hits that follow every write.

use super::*;
use crate::events::Log;
use crate::search::parse_query;
use crate::store::{AssetText, SearchRequest, SearchStore};

/// The store's [`SearchStore`].
pub(super) fn search_store(store: &Arc<dyn Store>) -> &dyn SearchStore {
    store
        .search_store()
        .expect("the store hands out its SearchStore")
}

/// A request for `q` with no filter, drafts and paid text counted, the first 20 hits.
fn request(q: &str) -> SearchRequest {
    SearchRequest::new(parse_query(q).expect("a valid query"))
}

/// The titles and scores of the hits of `request`, and the total.
pub(super) async fn hits(
    store: &Arc<dyn Store>,
    request: &SearchRequest,
) -> (Vec<(String, u32)>, u64) {
    let page = search_store(store).search(request).await.expect("search");
    let titles = page
        .items
        .iter()
        .map(|f| (f.asset.title.clone(), f.score))
        .collect();
    (titles, page.total)
}

/// The titles of `found`'s hits.
pub(super) fn titles(found: &(Vec<(String, u32)>, u64)) -> Vec<&str> {
    found.0.iter().map(|(t, _)| t.as_str()).collect()
}

/// A text of `pages`.
pub(super) fn text(pages: &[&str], paged: bool) -> AssetText {
    AssetText {
        pages: pages.iter().map(|p| (*p).to_owned()).collect(),
        paged,
    }
}

pub(super) async fn text_is_kept_per_asset_and_replaced(store: Arc<dyn Store>) {
    let s = search_store(&store);
    let a = insert(&store, sample_asset("Handbook", AssetType::Pdf, 1)).await;
    assert_eq!(s.asset_text(a.id).await.unwrap(), None);
    let first = text(&["Welcome", "Holidays and leave"], true);
    assert!(s.set_asset_text(a.id, first.clone()).await.unwrap());
    assert_eq!(s.asset_text(a.id).await.unwrap(), Some(first));
    let second = text(&["One text, no pages"], false);
    assert!(s.set_asset_text(a.id, second.clone()).await.unwrap());
    assert_eq!(s.asset_text(a.id).await.unwrap(), Some(second));
    let ghost = Uuid::new_v4();
    assert!(!s.set_asset_text(ghost, text(&["x"], false)).await.unwrap());
    assert_eq!(
        s.asset_text(ghost).await.unwrap(),
        None,
        "kept for no asset"
    );
}

pub(super) async fn hits_rank_by_their_best_fields_then_newest(store: Arc<dyn Store>) {
    let s = search_store(&store);
    let mut titled = sample_asset("Budget 2026", AssetType::Pdf, 1);
    titled.description = Some("Numbers".into());
    let mut tagged = sample_asset("Numbers", AssetType::Document, 2);
    tagged.tags = vec!["Budget".into()];
    let mut described = sample_asset("Plan", AssetType::Document, 3);
    described.description = Some("The budget, explained".into());
    let inside = sample_asset("Minutes", AssetType::Pdf, 4);
    let newer_inside = sample_asset("Minutes, again", AssetType::Pdf, 5);
    let unrelated = sample_asset("Holidays", AssetType::Pdf, 6);
    for a in [
        &titled,
        &tagged,
        &described,
        &inside,
        &newer_inside,
        &unrelated,
    ] {
        insert(&store, a.clone()).await;
    }
    for a in [&inside, &newer_inside] {
        let pages = text(
            &["Agenda", "The budget was approved", "Budget, again"],
            true,
        );
        assert!(s.set_asset_text(a.id, pages).await.unwrap());
    }
    let found = hits(&store, &request("budget")).await;
    assert_eq!(
        found.0,
        vec![
            ("Budget 2026".to_owned(), 8),
            ("Numbers".to_owned(), 4),
            ("Plan".to_owned(), 2),
            ("Minutes, again".to_owned(), 1),
            ("Minutes".to_owned(), 1),
        ],
        "title, tags, description, then text; ties newest first"
    );
    assert_eq!(found.1, 5);

    // The pages that match come with a hit, lowest first; the others stay out.
    let page = s.search(&request("approved")).await.unwrap();
    let minutes = page
        .items
        .iter()
        .find(|f| f.asset.id == inside.id)
        .expect("a hit by its text");
    assert_eq!(
        minutes.pages,
        vec![(1, "The budget was approved".to_owned())]
    );
    assert!(minutes.paged);

    // Every clause must match somewhere; an excluded term anywhere leaves it out.
    assert_eq!(
        titles(&hits(&store, &request("numbers budget")).await),
        ["Numbers", "Budget 2026"]
    );
    assert_eq!(
        titles(&hits(&store, &request("budget -approved")).await),
        ["Budget 2026", "Numbers", "Plan"]
    );
    assert_eq!(
        titles(&hits(&store, &request("\"was approved\" OR holidays")).await),
        ["Holidays", "Minutes, again", "Minutes"]
    );
    assert_eq!(hits(&store, &request("\"approved was\"")).await.1, 0);
}

pub(super) async fn matching_ignores_case_and_accents_and_the_last_word_is_a_prefix(
    store: Arc<dyn Store>,
) {
    let s = search_store(&store);
    insert(&store, sample_asset("Café menu", AssetType::Pdf, 1)).await;
    let menu = insert(&store, sample_asset("Spring", AssetType::Pdf, 2)).await;
    assert!(
        s.set_asset_text(menu.id, text(&["CRÈME BRÛLÉE, Straße"], false))
            .await
            .unwrap()
    );
    assert_eq!(titles(&hits(&store, &request("CAFE")).await), ["Café menu"]);
    assert_eq!(
        titles(&hits(&store, &request("cafe men")).await),
        ["Café menu"]
    );
    assert_eq!(
        hits(&store, &request("caf menu")).await.1,
        0,
        "only the last word is a prefix"
    );
    assert_eq!(
        titles(&hits(&store, &request("creme brulee")).await),
        ["Spring"]
    );
    assert_eq!(titles(&hits(&store, &request("strasse")).await), ["Spring"]);
}

pub(super) async fn words_are_not_stemmed_without_a_language(store: Arc<dyn Store>) {
    let s = search_store(&store);
    assert_eq!(
        s.language(),
        None,
        "a store stems only when its config names a language"
    );
    insert(&store, sample_asset("Runs and runners", AssetType::Pdf, 1)).await;
    let minutes = insert(&store, sample_asset("Minutes", AssetType::Pdf, 2)).await;
    let approved = text(&["The committee approved budgets"], false);
    assert!(s.set_asset_text(minutes.id, approved).await.unwrap());
    for q in ["running", "approve budgets", "\"approve budgets\""] {
        assert_eq!(
            hits(&store, &request(q)).await.1,
            0,
            "{q}: another form is another word"
        );
    }
    assert_eq!(
        titles(&hits(&store, &request("budgets -approve")).await),
        ["Minutes"],
        "an excluded word leaves out that word only"
    );
    assert_eq!(
        titles(&hits(&store, &request("run")).await),
        ["Runs and runners"],
        "the last word is the beginning of a word"
    );
    assert_eq!(
        titles(&hits(&store, &request("budgets approved")).await),
        ["Minutes"]
    );
}

pub(super) async fn filters_drafts_and_paid_text(store: Arc<dyn Store>) {
    let s = search_store(&store);
    let mut draft = sample_asset("Atlas draft", AssetType::Pdf, 1);
    draft.published = false;
    let mut doc = sample_asset("Atlas notes", AssetType::Document, 2);
    doc.tags = vec!["Maps".into()];
    let mut elsewhere = sample_asset("Atlas abroad", AssetType::Pdf, 3);
    elsewhere.workspace_id = Some("acme".into());
    let sold = sample_asset("Secrets", AssetType::Pdf, 4);
    let mut public_sold = sample_asset("Leaflet", AssetType::Pdf, 5);
    public_sold.is_public = true;
    for a in [&draft, &doc, &elsewhere, &sold, &public_sold] {
        insert(&store, a.clone()).await;
    }
    for a in [&sold, &public_sold] {
        assert!(
            s.set_asset_text(a.id, text(&["The atlas inside"], true))
                .await
                .unwrap()
        );
    }
    let mut paid = sample_library("Shop", 1);
    paid.settings.is_paid = true;
    let paid_id = paid.id;
    store
        .put_library(
            write(
                paid,
                vec![],
                vec![entry(&sold, None, 0), entry(&public_sold, None, 1)],
            ),
            Log::ANONYMOUS,
        )
        .await
        .unwrap();

    let all = hits(&store, &request("atlas")).await;
    assert_eq!(
        titles(&all),
        [
            "Atlas abroad",
            "Atlas notes",
            "Atlas draft",
            "Leaflet",
            "Secrets"
        ],
        "title hits first, then text hits, each newest first"
    );
    let mut published = request("atlas");
    published.drafts = false;
    assert!(!titles(&hits(&store, &published).await).contains(&"Atlas draft"));

    let mut no_paid = request("atlas");
    no_paid.paid_content = false;
    let found = hits(&store, &no_paid).await;
    assert!(
        !titles(&found).contains(&"Secrets"),
        "a paid file's text does not count without read:paid"
    );
    assert!(
        titles(&found).contains(&"Leaflet"),
        "a public file is no paid file"
    );
    let mut by_title = request("secrets");
    by_title.paid_content = false;
    let page = s.search(&by_title).await.unwrap();
    assert_eq!(page.total, 1, "its title still finds it");
    assert!(page.items[0].pages.is_empty(), "with no text shown");

    let mut typed = request("atlas");
    typed.asset_type = Some(AssetType::Document);
    assert_eq!(titles(&hits(&store, &typed).await), ["Atlas notes"]);
    let mut tagged = request("atlas");
    tagged.tag = Some("maps".into());
    assert_eq!(titles(&hits(&store, &tagged).await), ["Atlas notes"]);
    let mut in_ws = request("atlas");
    in_ws.workspace_id = Some("acme".into());
    assert_eq!(titles(&hits(&store, &in_ws).await), ["Atlas abroad"]);
    let mut in_library = request("atlas");
    in_library.library_id = Some(paid_id);
    assert_eq!(
        titles(&hits(&store, &in_library).await),
        ["Leaflet", "Secrets"]
    );
}

pub(super) async fn pages_of_hits_never_repeat_or_skip(store: Arc<dyn Store>) {
    let mut expected = Vec::new();
    for n in 0..7 {
        // Ties on score and on created_at: the id decides.
        let a = insert(
            &store,
            sample_asset(&format!("Tied report {n}"), AssetType::Pdf, 1),
        )
        .await;
        expected.push(a.id);
    }
    expected.sort_unstable_by(|a, b| b.cmp(a));
    let mut seen = Vec::new();
    for offset in (0..9).step_by(3) {
        let mut r = request("report");
        r.offset = offset;
        r.limit = 3;
        let page = search_store(&store).search(&r).await.unwrap();
        assert_eq!(page.total, 7);
        seen.extend(page.items.iter().map(|f| f.asset.id));
    }
    assert_eq!(seen, expected, "newest first, then by id descending");
}

pub(super) async fn hits_follow_every_write(store: Arc<dyn Store>) {
    let s = search_store(&store);
    let a = insert(&store, sample_asset("Old name", AssetType::Pdf, 1)).await;
    assert!(
        s.set_asset_text(a.id, text(&["inside words"], false))
            .await
            .unwrap()
    );
    let mut change = crate::change::AssetChange::at(t0() + Duration::seconds(5));
    change.title = Some("New name".into());
    change.tags = Some(crate::change::TagChange::Set(vec!["Fresh".into()]));
    store
        .update_asset(a.id, &change, Log::ANONYMOUS)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(hits(&store, &request("old")).await.1, 0);
    assert_eq!(titles(&hits(&store, &request("new")).await), ["New name"]);
    assert_eq!(titles(&hits(&store, &request("fresh")).await), ["New name"]);
    // Unpublished, it leaves the hits of a caller who sees no drafts, at once; its text too.
    let mut unpublish = crate::change::AssetChange::at(t0() + Duration::seconds(6));
    unpublish.published = Some(false);
    store
        .update_asset(a.id, &unpublish, Log::ANONYMOUS)
        .await
        .unwrap()
        .unwrap();
    for q in ["new", "inside"] {
        let mut published = request(q);
        published.drafts = false;
        assert_eq!(hits(&store, &published).await.1, 0, "{q}");
        assert_eq!(hits(&store, &request(q)).await.1, 1, "{q}");
    }
    assert!(
        s.set_asset_text(a.id, text(&["other words"], false))
            .await
            .unwrap()
    );
    assert_eq!(hits(&store, &request("inside")).await.1, 0);
    assert_eq!(hits(&store, &request("other")).await.1, 1);
    force_delete(&store, a.id).await;
    assert_eq!(hits(&store, &request("other")).await.1, 0);
    assert_eq!(
        s.asset_text(a.id).await.unwrap(),
        None,
        "its text went with it"
    );
}

#[cfg(test)]
mod tests {
    use super::super::sample_asset;
    use crate::model::Asset;
    use crate::search::{Language, SearchQuery, Words, parse_query, parse_query_in};
    use crate::store::{AssetText, IndexMatch, asset_field_words, search_hit};

    /// What an exact word index of `asset`'s fields ([`asset_field_words`]) and of `text`
    /// ([`AssetText::words`]), both in the query's language, would say of them for `query`.
    fn index_says(query: &SearchQuery, asset: &Asset, text: &AssetText) -> IndexMatch {
        let language = query.language;
        let text_words = text.words(language);
        let pages: Vec<Words<'_>> = text.pages.iter().map(|p| query.words_of(p)).collect();
        let in_text = |t: &crate::search::Term| {
            let indexed = match t {
                crate::search::Term::Word(x) => text_words.contains(x),
                crate::search::Term::Prefix(x) => {
                    text_words.iter().any(|w| w.starts_with(x.as_str()))
                }
                crate::search::Term::Phrase(_) => false,
            };
            let read = pages.iter().any(|w| w.has(t));
            assert_eq!(
                indexed, read,
                "the index of the text and its words agree on {t:?}"
            );
            read
        };
        let words = asset_field_words(asset, language);
        let fields_of = |t: &crate::search::Term| {
            words
                .iter()
                .filter(|(w, _)| match t {
                    crate::search::Term::Word(x) => *w == x,
                    crate::search::Term::Prefix(x) => w.starts_with(x.as_str()),
                    crate::search::Term::Phrase(_) => false,
                })
                .fold(crate::store::FieldSet::default(), |acc, (_, f)| acc | *f)
        };
        IndexMatch {
            fields: query
                .clauses
                .iter()
                .map(|c| {
                    c.iter()
                        .fold(Default::default(), |acc, t| acc | fields_of(t))
                })
                .collect(),
            text: query
                .clauses
                .iter()
                .map(|c| c.iter().any(in_text))
                .collect(),
            excluded: query
                .excluded
                .iter()
                .any(|t| in_text(t) || !fields_of(t).is_empty()),
        }
    }

    #[test]
    fn the_index_ranks_a_word_level_query_as_the_texts_do() {
        let mut asset = sample_asset("Harbour map", crate::model::AssetType::Pdf, 1);
        asset.description = Some("Tide tables and charts".into());
        asset.tags = vec!["Coast".into(), "maps".into()];
        let texts = [
            AssetText::default(),
            AssetText {
                pages: vec!["Lighthouse keepers".into(), "the harbour at dawn".into()],
                paged: true,
            },
            AssetText {
                pages: vec!["Storm tide warnings, coast guard".into()],
                paged: false,
            },
        ];
        let queries = [
            "harbour",
            "harb",
            "tide OR storm",
            "coast light",
            "map -storm",
            "maps -lighthouse",
            "dawn keepers",
            "CHARTS guard",
            "nothing",
            "harbour -tables",
            "harbours",
            "tided",
            "warning coast",
            "map -warned",
            "chart",
        ];
        let mut compared = [0, 0];
        for (n, language) in [None, Some(Language::English)].into_iter().enumerate() {
            for q in queries {
                let query = parse_query_in(q, language).expect("query");
                assert!(query.is_word_level(), "{q}");
                for text in &texts {
                    let want =
                        search_hit(&query, asset.clone(), Some(text.clone())).map(|h| h.score);
                    let got = index_says(&query, &asset, text).score();
                    assert_eq!(got, want, "{q} in {language:?} over {text:?}");
                    compared[n] += usize::from(want.is_some());
                }
            }
        }
        assert!(compared[0] >= 15, "most cases are hits: {compared:?}");
        assert!(
            compared[1] > compared[0],
            "stemmed, more forms find one another: {compared:?}"
        );
        assert!(!parse_query("\"cash flow\"").expect("query").is_word_level());
    }
}
