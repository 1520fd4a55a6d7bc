//! Tags on PostgreSQL beyond core's conformance cases: a list of one tag reads its first page
//! from the tag's index (rows filled set-based with the triggers off, as the benches fill
//! them), and the tag rows and counts stay exact under concurrent bulk changes from two
//! stores, which neither deadlock nor fail.

use std::sync::Arc;

use assetlib_core::store::prelude::*;
use assetlib_core::testing::sample_asset;
use assetlib_core::{
    AssetChange, AssetQuery, AssetSort, AssetStatus, AssetType, BulkOutcome, SortOrder, TagChange,
};
use assetlib_postgres::{PgConfig, PgStore};
use assetlib_testkit::postgres::TestCluster;
use chrono::Duration;
use tokio_postgres::Client;
use uuid::Uuid;

/// The number of differences between what the triggers keep and what the assets say: rows of
/// `asset_tags` (each key of each asset, with its copies) and the sums of `tag_counts` (by
/// tag, kind, and type or '').
async fn drift(client: &Client) -> i64 {
    let sql = "WITH want AS ( \
                   SELECT k AS tag_key, a.id AS asset_id, a.published, a.asset_type, \
                       a.created_at, a.updated_at, a.title_lower \
                   FROM assetlib.assets a CROSS JOIN LATERAL unnest(a.tag_keys) AS k), \
               have AS ( \
                   SELECT tag_key, asset_id, published, asset_type, created_at, updated_at, \
                       title_lower \
                   FROM assetlib.asset_tags), \
               rows AS ( \
                   (SELECT * FROM want EXCEPT ALL SELECT * FROM have) \
                   UNION ALL (SELECT * FROM have EXCEPT ALL SELECT * FROM want)), \
               counted AS ( \
                   SELECT w.tag_key, w.published, s.scope, count(*) AS n FROM want w \
                   CROSS JOIN LATERAL (VALUES (''), (w.asset_type)) AS s (scope) \
                   GROUP BY 1, 2, 3), \
               kept AS ( \
                   SELECT tag_key, published, asset_type AS scope, sum(n) AS n \
                   FROM assetlib.tag_counts GROUP BY 1, 2, 3 HAVING sum(n) <> 0), \
               counts AS ( \
                   SELECT 1 FROM counted c FULL JOIN kept k \
                       ON k.tag_key = c.tag_key AND k.published = c.published \
                          AND k.scope = c.scope \
                   WHERE c.n IS DISTINCT FROM k.n) \
               SELECT (SELECT count(*) FROM rows) + (SELECT count(*) FROM counts)";
    client.query_one(sql, &[]).await.expect("drift").get(0)
}

/// Fills `n` published assets the way the benches do: set-based, with the triggers off, then
/// `asset_tags` and `tag_counts` from the assets' keys (every asset one of `q1`..`q4`, every
/// 10th `featured` too). `created_at` is the asset's number in seconds, so newest first is
/// the highest number first.
async fn bench_fill(client: &Client, n: i64) {
    client
        .batch_execute(&format!(
            "BEGIN;
             SET LOCAL session_replication_role = replica;
             INSERT INTO assetlib.assets (id, title, title_lower, slug, asset_type, is_public,
                 published, created_at, updated_at, tags, tag_keys)
             SELECT gen_random_uuid(), 'Asset ' || i, 'asset ' || i, 'asset-' || i,
                 (ARRAY['pdf', 'image', 'video'])[i % 3 + 1], false, true, t, t, k, k
             FROM (SELECT i, timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second' AS t,
                       CASE WHEN i % 10 = 0 THEN ARRAY['featured', 'q' || (i % 4 + 1)]
                            ELSE ARRAY['q' || (i % 4 + 1)] END AS k
                   FROM generate_series(0::bigint, {n} - 1) AS i) g
             ORDER BY random();
             INSERT INTO assetlib.asset_counters (asset_id, download_count)
                 SELECT id, 0 FROM assetlib.assets;
             INSERT INTO assetlib.asset_counts (scope, n)
                 SELECT '', count(*) FROM assetlib.assets WHERE published
                 UNION ALL
                 SELECT asset_type, count(*) FROM assetlib.assets WHERE published
                 GROUP BY asset_type;
             INSERT INTO assetlib.asset_tags (tag_key, asset_id, published, asset_type,
                 created_at, updated_at, title_lower)
                 SELECT k, a.id, a.published, a.asset_type, a.created_at, a.updated_at,
                     a.title_lower
                 FROM assetlib.assets a CROSS JOIN LATERAL unnest(a.tag_keys) AS k;
             INSERT INTO assetlib.tag_counts (tag_key, published, asset_type, shard, n)
                 SELECT tag_key, published, '', 0, count(*) FROM assetlib.asset_tags
                 GROUP BY tag_key, published
                 UNION ALL
                 SELECT tag_key, published, asset_type, 0, count(*) FROM assetlib.asset_tags
                 GROUP BY tag_key, published, asset_type;
             COMMIT;
             ANALYZE assetlib.assets;
             ANALYZE assetlib.asset_tags;"
        ))
        .await
        .expect("fill");
}

/// The plan of the last run of the store's list statement on its one connection (found by
/// its text among the connection's prepared statements), run again with `args`.
async fn plan_of_list(store: &PgStore, args: &str) -> String {
    let client = store.pool().get().await.expect("the store's connection");
    let name: String = client
        .query_one(
            "SELECT name FROM pg_prepared_statements \
             WHERE statement LIKE '%FROM \"assetlib\".asset_tags t JOIN%' \
                 AND statement NOT LIKE '%pg_prepared_statements%' \
             ORDER BY prepare_time DESC LIMIT 1",
            &[],
        )
        .await
        .expect("the list statement")
        .get(0);
    client
        .query(
            &format!("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE {name}({args})"),
            &[],
        )
        .await
        .expect("explain")
        .iter()
        .map(|r| r.get::<_, String>(0))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rows each node of `plan` whose line names `index` read (`actual rows=N`), summed.
fn rows_read(plan: &str, index: &str) -> u64 {
    plan.lines()
        .filter(|l| l.contains(index))
        .filter_map(|l| l.split("rows=").nth(1))
        .filter_map(|r| r.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// At 20,000 assets a list of one tag reads page 1 from the tag's index (backwards for newest
/// first; one range per kind, merged, for both kinds) and takes its total from the counts;
/// rows filled with the triggers off, as the benches fill them, are what the triggers keep,
/// and writes through the store keep them so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tag_list_reads_its_first_page_from_the_tag_index() {
    const N: i64 = 20_000;
    let db = TestCluster::shared().database().await;
    // One connection, so the statement the list prepared is there to explain.
    let store = PgStore::connect_with(db.url(), PgConfig::new().pool_size(1))
        .await
        .expect("connect");
    {
        let client = store.pool().get().await.expect("connection");
        bench_fill(&client, N).await;
        assert_eq!(
            drift(&client).await,
            0,
            "the fill matches what triggers keep"
        );
    }
    let featured = |sort, order, status| AssetQuery {
        sort,
        order,
        status,
        tags: vec!["featured".into()],
        ..AssetQuery::default()
    };

    // Newest first: assets N-10, N-20, ... (every 10th is featured); the total from the counts.
    let page = store
        .list_assets(&featured(
            AssetSort::CreatedAt,
            SortOrder::Desc,
            AssetStatus::Published,
        ))
        .await
        .expect("list");
    assert_eq!(page.total, (N / 10) as u64);
    let want: Vec<String> = (1..=20).map(|k| format!("Asset {}", N - 10 * k)).collect();
    let got: Vec<String> = page.items.iter().map(|a| a.title.clone()).collect();
    assert_eq!(got, want);
    let plan = plan_of_list(&store, "20, 0, 'featured', ''").await;
    println!("{plan}");
    assert!(
        plan.contains("Scan Backward using asset_tags_created_idx"),
        "{plan}"
    );
    assert!(
        rows_read(&plan, "asset_tags_created_idx") <= 20,
        "page 1 reads a page of the index: {plan}"
    );

    // Titles ascending, both kinds: each kind's range of the title index, read in order.
    let page = store
        .list_assets(&featured(
            AssetSort::Title,
            SortOrder::Asc,
            AssetStatus::Any,
        ))
        .await
        .expect("list");
    assert_eq!(page.total, (N / 10) as u64);
    let mut titles: Vec<String> = (0..N / 10).map(|k| format!("asset {}", 10 * k)).collect();
    titles.sort();
    let got: Vec<String> = page.items.iter().map(|a| a.title.to_lowercase()).collect();
    assert_eq!(got, titles[..20]);
    let plan = plan_of_list(&store, "20, 0, 'featured', 20, ''").await;
    println!("{plan}");
    assert!(
        rows_read(&plan, "asset_tags_title_idx") <= 21,
        "page 1 reads a page of each kind's range: {plan}"
    );

    // The counts follow writes through the store from the filled rows on.
    let q1 = store
        .list_assets(&AssetQuery {
            tags: vec!["featured".into(), "q1".into()],
            per_page: 100,
            ..AssetQuery::default()
        })
        .await
        .expect("list");
    let ids: Vec<Uuid> = q1.items.iter().map(|a| a.id).collect();
    let mut change = AssetChange::at(chrono::Utc::now());
    change.tags = Some(TagChange::Remove(vec!["Featured".into()]));
    change.published = Some(false);
    let done = store
        .update_assets(&ids, &change, Log::ANONYMOUS)
        .await
        .expect("bulk");
    assert!(matches!(done, BulkOutcome::Done(d) if d.len() == ids.len()));
    let client = store.pool().get().await.expect("connection");
    assert_eq!(drift(&client).await, 0);
    drop(client);
    let tags = store.list_tags(10).await.expect("tags");
    let count = |tag: &str| tags.iter().find(|t| t.tag == tag).map(|t| t.count);
    assert_eq!(count("featured"), Some((N / 10) as u64 - ids.len() as u64));
    assert_eq!(count("q1"), Some((N / 4) as u64 - ids.len() as u64));
}

/// Writers on two stores change tags and publication of overlapping sets of assets, in bulk
/// and one by one, then delete them all at once: nothing deadlocks or fails (two transactions
/// of one shard meet at its gate first; migration 14), and the tag rows and counts are exact
/// throughout and back at zero at the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tag_rows_and_counts_stay_exact_under_concurrent_bulk_changes() {
    const WRITERS: usize = 6;
    const OWN: usize = 6;
    const ASSETS: usize = WRITERS * OWN;
    const ROUNDS: usize = 150;
    const KEYS: [&str; 5] = ["Red", "green", "BLUE", "cyan", "magenta"];
    let db = TestCluster::shared().database().await;
    let connect = || PgStore::connect_with(db.url(), PgConfig::new().pool_size(WRITERS));
    let (one, two) = (connect().await.expect("one"), connect().await.expect("two"));
    let mut ids = Vec::new();
    for i in 0..ASSETS {
        let mut a = sample_asset(
            &format!("Asset {i}"),
            [AssetType::Pdf, AssetType::Image][i % 2],
            i as i64,
        );
        a.tags = vec![KEYS[i % KEYS.len()].to_owned()];
        ids.push(
            one.insert_asset(a, Log::ANONYMOUS)
                .await
                .expect("insert")
                .id,
        );
    }
    let ids = Arc::new(ids);
    // Each writer mostly changes assets of its own, so the writers' transactions run at once
    // (and meet at the count rows of their shards), and sometimes any assets.
    let writers: Vec<_> = (0..WRITERS as u64)
        .map(|w| {
            let store = if w % 2 == 0 { one.clone() } else { two.clone() };
            let ids = Arc::clone(&ids);
            tokio::spawn(async move {
                let mut seed = w.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
                let mut below = |n: usize| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    (seed % n as u64) as usize
                };
                for round in 0..ROUNDS {
                    let at = assetlib_core::testing::sample_asset("x", AssetType::Pdf, 0)
                        .created_at
                        + Duration::seconds((round * WRITERS + w as usize) as i64 + 100);
                    let mut change = AssetChange::at(at);
                    let k1 = KEYS[below(KEYS.len())].to_owned();
                    let k2 = KEYS[below(KEYS.len())].to_owned();
                    change.tags = Some(match below(3) {
                        0 => TagChange::Set(if k1.to_lowercase() == k2.to_lowercase() {
                            vec![k1]
                        } else {
                            vec![k1, k2]
                        }),
                        1 => TagChange::Add(vec![k1]),
                        _ => TagChange::Remove(vec![k1]),
                    });
                    if below(2) == 0 {
                        change.published = Some(below(2) == 0);
                    }
                    let own = &ids[w as usize * OWN..(w as usize + 1) * OWN];
                    let from = if below(4) == 0 { &ids[..] } else { own };
                    let mut some: Vec<Uuid> = (0..1 + below(OWN))
                        .map(|_| from[below(from.len())])
                        .collect();
                    some.sort_unstable();
                    some.dedup();
                    // Mixed orders: the store locks in id order whatever the order given.
                    if below(2) == 0 {
                        some.reverse();
                    }
                    if some.len() == 1 {
                        store
                            .update_asset(some[0], &change, Log::ANONYMOUS)
                            .await
                            .expect("update")
                            .expect("exists");
                    } else {
                        match store
                            .update_assets(&some, &change, Log::ANONYMOUS)
                            .await
                            .expect("bulk")
                        {
                            BulkOutcome::Done(done) => assert_eq!(done.len(), some.len()),
                            BulkOutcome::Refused(why) => panic!("refused: {why:?}"),
                        }
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.await.expect("writer");
    }
    let client = one.pool().get().await.expect("connection");
    assert_eq!(drift(&client).await, 0);
    // The tag counts are the published assets' keys.
    let all = one.get_assets(&ids).await.expect("get");
    let mut want: std::collections::HashMap<String, u64> = Default::default();
    for a in all.iter().filter(|a| a.published) {
        for k in assetlib_core::store::rules::tag_keys(&a.tags) {
            *want.entry(k).or_default() += 1;
        }
    }
    assert_eq!(
        one.list_tags(10).await.expect("tags"),
        assetlib_core::store::rules::top_tags(want, 10)
    );
    // Every writer deletes its own assets at once: some in one bulk delete, some one by one.
    let deleters: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = if w % 2 == 0 { one.clone() } else { two.clone() };
            let own = ids[w * OWN..(w + 1) * OWN].to_vec();
            tokio::spawn(async move {
                if w % 3 == 2 {
                    for id in own {
                        let gone = store
                            .delete_asset(id, false, Log::ANONYMOUS)
                            .await
                            .expect("delete");
                        assert!(matches!(gone, assetlib_core::AssetDeletion::Deleted(_)));
                    }
                } else {
                    let gone = store
                        .delete_assets(&own, false, Log::ANONYMOUS)
                        .await
                        .expect("delete");
                    assert!(matches!(gone, BulkOutcome::Done(g) if g.len() == own.len()));
                }
            })
        })
        .collect();
    for d in deleters {
        d.await.expect("deleter");
    }
    assert_eq!(drift(&client).await, 0);
    let sums: i64 = client
        .query_one(
            "SELECT coalesce(sum(n), 0)::bigint FROM assetlib.tag_counts",
            &[],
        )
        .await
        .expect("sums")
        .get(0);
    assert_eq!(sums, 0, "every count back at zero");
}
