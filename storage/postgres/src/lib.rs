//! # assetlib-postgres
//!
//! [`PgStore`]: a [`Store`] for assetlib in PostgreSQL, for apps that already run one and for
//! several API replicas over one database. Its tables live in a schema of their own (default
//! `assetlib`, see [`PgConfig::schema`]), so it can share an app's database; every name in its
//! SQL is qualified with that schema, whatever the connection's `search_path`.
//!
//! ```no_run
//! use assetlib_core::store::prelude::*;
//! use assetlib_core::{AssetQuery, Config, Files, Service};
//! use assetlib_postgres::PgStore;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let store = PgStore::connect("postgres://app@127.0.0.1/app").await?;
//! let page = store.list_assets(&AssetQuery::default()).await?;
//! println!("{} assets", page.total);
//! let service = Service::new(store, Files::local("data/files")?, Config::default());
//! # let _ = service;
//! # Ok(())
//! # }
//! ```
//!
//! An app with a pool of its own (for example one that connects over TLS) hands it over with
//! [`PgStore::from_pool`]; [`PgStore::connect`] builds one without TLS.
//!
//! ## Migrations
//!
//! The schema is created and upgraded at connect by SQL files embedded in the crate, in one
//! transaction under a fixed advisory lock (`pg_advisory_xact_lock`), so several replicas may
//! start at once: one migrates, the others wait and find the work done. The schema's
//! `schema_migrations` table records the versions applied. A database migrated by a newer
//! version of this crate is refused with [`Error::SchemaTooNew`]. The first migration runs
//! `CREATE EXTENSION IF NOT EXISTS pg_trgm` (a trusted extension: a role with `CREATE` on the
//! database may install it). Version 7 (library passes) also gives every API key that has the
//! scope `write:assets` the scope `read:paid`, under a lock that holds key writes until it
//! commits; keys that have it already are left as they are. Version 14 (tags and checksums)
//! gives every existing asset no tags and no checksum. Version 18 (search) adds the words
//! index and the text tables whatever the features; existing rows have no words, and are
//! candidates of every search until `PgStore::reindex_search` fills them in (feature
//! `search`; see `search.rs`).
//!
//! ## Group commit of inserts
//!
//! Every durable commit waits for the WAL to reach the disk. Asset inserts that arrive while
//! others are running wait for the next transaction of inserts and share it: at most 4 such
//! transactions run at once, each with at most 32 inserts whose statements are pipelined on
//! one connection, and every insert is answered only after its transaction's `COMMIT`. An
//! insert that arrives alone runs alone, as a statement of its own. A statement that fails
//! rolls its transaction back, and each insert of it runs again alone, so an insert's failure
//! (its id taken) is its own and the others land. The transaction runs on a task of its own:
//! an insert whose caller stops waiting is still written and the others still answered. With
//! the feature `stats`, `PgStore::insert_commits` says how many inserts shared how many
//! commits.
//!
//! ## Why tokio-postgres
//!
//! A library crate should need no database and no offline query files when it is built, and
//! most of this store's SQL is put together at run time (one statement per sort, direction and
//! filter). sqlx's checked macros need one of those, so this crate uses `tokio-postgres` with a
//! `deadpool-postgres` pool, and prepares each statement once per connection.
//!
//! ## Statements per call
//!
//! | call | SQL |
//! |---|---|
//! | `list_assets` | one statement: a CTE counts the matches and the page is left-joined to the count, so the total is right even for a page past the end; a list of tags reads the rows of its first tag in `asset_tags` (see "Tags") |
//! | `get_asset`, `get_assets` | one `SELECT` (`= ANY($1)` for many) |
//! | `insert_asset` | one statement inserting the asset with its wanted slug and its counter row (a slug found taken inserts no row, and so writes nothing: no commit to the disk, no notice, since migration 9 moves the assets version per row written); when the slug is taken, the base's next number from `slug_counters` (one short statement committed with `synchronous_commit = off`, so inserts of one title never wait for each other's commit) and the insert with `slug-N`; a number found taken (an asset older than the counter) falls back to the first free one, and the counter moves past it; each insert statement runs in the next shared transaction of inserts (group commit, below) |
//! | `update_asset` | one transaction: `SELECT ... FOR UPDATE` of the asset, core's `AssetChange::apply` in Rust (a change that changes nothing writes nothing and rolls back), then, pipelined, a new content version for every library holding it (returning their ids: this store then asks the database again about those libraries only) and the `UPDATE` of the asset (whose trigger rewrites the copies of its page fields in its entries when one of them changes) |
//! | `delete_asset` | one transaction: `SELECT ... FOR UPDATE` of the asset pipelined with the libraries holding it (unless forced); refused or missing, it rolls back; else, pipelined, a new content version for every library holding it, and one statement deleting its entries, its counter row and the asset |
//! | `update_assets` | one transaction: `SELECT ... ORDER BY id FOR UPDATE` of every asset, `AssetChange::apply` of each in Rust (one missing or refused rolls back and answers which), then, pipelined, one statement giving every library holding a changed asset a new content version, and each changed asset's `UPDATE` and event, in the order of the ids |
//! | `delete_assets` | one transaction: `SELECT ... ORDER BY id FOR UPDATE` of every asset pipelined with the libraries holding them (unless forced); one missing or held rolls back and answers which; else, pipelined, the holders' new content versions, the assets' counter rows locked in id order, and each asset's delete (as `delete_asset`'s) and event, in the order of the ids |
//! | `list_tags` | one `SELECT` summing the published rows of `tag_counts` over every type, by tag |
//! | `asset_usage` | one `SELECT` of the asset's entries (index `library_entries_asset_idx`) joined to their libraries |
//! | `list_libraries` | one statement, like `list_assets`, with each library's count of published assets (from its entries' copies of `published`) |
//! | `load_library` | one statement: the library with its sections and its entries, as arrays; each entry holds a copy of its asset's title, description, type, thumbnail and `published`, so no asset is read |
//! | `put_library` | one transaction (slug check pipelined with the placed assets' lock; then the writes pipelined, the entries with copies of their assets' page fields; only the section and entry rows that differ from the stored ones are written, and those the document no longer has removed); a write that meets another over a slug (the unique index of slugs refuses its insert) runs again whole under the library write lock of its workspace and slug family, which makes its slug check and its insert one step |
//! | `delete_library` | one `DELETE` (sections, entries, counters and passes cascade) |
//! | `libraries_by_slug` | none for a slug read lately while the store listens for notices (the holders are kept until this store writes a library holding the slug or takes it for one, or another store's library notice comes, which drops them all); else one `SELECT` by the slug's index |
//! | `record_library_view` | none for a library this process knows while it listens for notices (the view is counted in memory); else one `SELECT` of its stored count and content version, after which it knows the library unless a change of that library (a notice, or a write of this store's) came while the `SELECT` ran |
//! | `record_download` | none: counted in memory |
//! | counters (every 100 ms, in the background) | one transaction with `synchronous_commit = off`: the views and downloads counted since, each table's rows locked in id order, and the stored counts of the libraries shown here that were not read for 500 ms |
//! | `assets_version` | none while listening for notices; else one `SELECT` of the sum of the 16 `asset_versions` rows, which a row trigger on `assets` (a statement trigger until migration 9) and a statement trigger on the download counters move in the writing transaction (migration 5) |
//! | `asset_version` | as `assets_version`: none while listening (this store's writes move the versions of the assets they name, another store's notice `a<id>` that asset's, `a` every asset's), else the same `SELECT`, whose move moves every asset's version |
//! | keys | one statement each; `find_key` by a unique index on the hash |
//! | `insert_pass`, `find_pass`, `get_pass`, `revoke_pass` | one statement each; `find_pass` by a unique index on the hash; the pass's foreign key to its library (`ON DELETE CASCADE`) makes an insert racing the library's delete fail or go with it |
//! | `list_passes` | one statement, like `list_assets`: the library's count and page through `passes_library_created_idx` |
//! | `spend_pass` | one statement: an `UPDATE ... RETURNING` that adds the download only while the pass is live and below its limit, and, when it adds none, the pass as the statement's snapshot holds it, to answer `Exhausted` or `Dead`; run a second time only when a concurrent change overtook that snapshot |
//! | `published_holders` | one `SELECT` of the assets' entries (index `library_entries_asset_idx`) joined to their published libraries, `bool_or` of `is_paid` and of `NOT is_paid` per asset |
//!
//! ## Changes, deletes and locks
//!
//! Transactions run at PostgreSQL's default isolation, READ COMMITTED. A change locks its
//! asset `FOR UPDATE` before it reads it, so concurrent changes of one asset (from any number
//! of connections, pools or replicas) run one after the other, each applied to the result of
//! the one before, and none is lost. `put_library` locks the assets it places `FOR KEY SHARE`
//! (in id order) and answers [`StoreError::UnknownAsset`](assetlib_core::StoreError::UnknownAsset) for the first entry whose asset is
//! missing, changing nothing; `delete_asset` locks its asset `FOR UPDATE` and reads the
//! libraries holding it in a later statement, whose snapshot is taken once the lock is granted.
//! So a library write racing a delete of an asset it places either commits first, and the
//! delete sees the library (refused unless forced, and a forced delete removes the new entry),
//! or waits for the delete and finds the asset gone. In the same way, a library write racing a
//! change of an asset it places either commits first, and the change's trigger rewrites the
//! new entry's copy of the asset's fields, or waits for the change and copies the new fields.
//!
//! Every transaction takes its row locks in one order, so none waits for another that waits
//! for it: the library write lock (advisory, taken only by a library write run again after a slug conflict), then assets in id order,
//! then libraries rows, library counters (the content versions) and entries, each in id order,
//! then the list and tag counts (changed by triggers as a statement ends, after their shard's
//! gate; see `lifecycle` and migration 14).
//!
//! ## Indexes and search
//!
//! Lists read assets through indexes of `(created_at, id)`, `(updated_at, id)` and
//! `(title_lower, id)`, and of the same with the asset type first for the type filter, in
//! three sets: partial on `published` (the public lists), partial on `NOT published` (drafts),
//! and over every asset (both); PostgreSQL reads them forwards or backwards, so the first page
//! costs the same at any size (a page deep into the list costs its offset). The total without a
//! search is the sum of at most 16 rows of `asset_counts` (published assets) or of
//! `asset_draft_counts` (drafts), or of both, which triggers on `assets` keep in the same
//! transaction as each change, a change of `published` included; a transaction changes the rows
//! of one shard (its transaction id modulo 16), so concurrent creates seldom wait for each
//! other's commit and share WAL flushes. A library load looks each entry's asset up by its
//! primary key, so it costs its entries at any size. The libraries list counts its published
//! libraries with an index-only scan, and each listed library's published assets through its
//! entries, so the count follows every change of an asset's publication and every delete.
//! `title_lower` is the title lowercased in Rust by `str::to_lowercase` and compared with
//! `COLLATE "C"` (byte order), exactly as the other stores sort, whatever the database's
//! locale. A library's passes are listed through `(library_id, created_at DESC, id DESC)`, so
//! a page costs the same whatever the number of passes.
//!
//! Search keeps assets whose lowercased title or description (`title_lower`,
//! `description_lower`, lowercased in Rust) contains the lowercased needle, as a `LIKE
//! '%needle%'` with `%`, `_` and `\` escaped. Both columns carry `pg_trgm` GIN indexes,
//! partial on `published` and on `NOT published`; a search of both kinds is a `UNION ALL` of a
//! published and a draft part, each read through its own indexes. A needle of three or more
//! characters is looked up by its trigrams (the cost grows with the assets that share them); a
//! needle of one or two characters has no trigram and scans the assets of the kinds listed, as
//! does the count of its matches.
//!
//! ## Tags
//!
//! An asset keeps its tags as given and their keys (`tag_keys`, computed in Rust by core's
//! `rules::tag_keys`); a trigger keeps one row per key of each asset in `asset_tags`, with
//! copies of `published`, the type and the three sort keys, indexed by `(tag_key, published,
//! <sort key>, asset_id)`. A list of one tag reads the page from that index in order (both
//! kinds: one leg per kind, each reading its range up to the page's end, merged), joined to
//! the assets by primary key, so page 1 costs the same at any size; its total is the sum of
//! that tag's rows of `tag_counts` (by kind, and type or all types, in 16 shards like
//! `asset_counts`), which triggers on `asset_tags` keep in the same transaction. A list of
//! several tags reads the first tag's rows and keeps the assets whose keys hold every one
//! (`tag_keys @> ...`); `any_tags` keeps those whose keys share one (`tag_keys && ...`); a
//! checksum filter looks the checksum up in a partial index; their totals are counts of the
//! matches, as a search's are. `list_tags` sums the published rows of `tag_counts`.
//!
//! ## Workspaces
//!
//! Assets, libraries and keys have a `workspace_id` (NULL: none). Slugs are unique per
//! workspace: unique indexes on `(coalesce(workspace_id, ''), slug)` (a workspace id is never
//! empty). The assets of a workspace are listed as a tag's are: an asset of a workspace keeps
//! the key of its workspace (`\x01` and the id; no tag key starts with a control character)
//! after its tags' keys in `tag_keys`, so it has rows in `asset_tags` and counts in
//! `tag_counts` under that key, and a workspace's page 1 reads its range of the tag index in
//! order with its total from the count rows, whatever the number of workspaces. `list_tags`
//! leaves those keys out. Slug numbers are counted per workspace (`slug_counters` base
//! `workspace/slug`).
//!
//! ## Replicas: change notices and counters
//!
//! Core keeps rendered answers under the versions a store hands out
//! ([`AssetStore::assets_version`](assetlib_core::AssetStore::assets_version), a library's
//! in [`ViewCount`](assetlib_core::ViewCount), [`KeyStore::keys_version`](assetlib_core::KeyStore::keys_version)).
//! With [`ReplicaSync::Notify`](assetlib_core::ReplicaSync::Notify) (the default) each store
//! keeps one connection of its own that `LISTEN`s on the channel named like the schema
//! (`application_name` `assetlib-notices`), and every write transaction sends a notice at
//! commit (migration 8's triggers: `a<id>` for an asset (migration 17), `a` for download
//! counts, `l<id>` for a library, `k<id>` for a
//! key, each with the writing store's origin, which every connection of a store sets as
//! `assetlib.origin`). A store answers versions from memory, moves them for each notice of
//! another store's write, and for its own writes as they return: another replica's write is
//! seen as soon as its notice arrives, well within 100 ms. A notice it cannot read moves
//! every version. While the listening connection is down (it is checked every second, and
//! reconnected with a backoff of at most 2 s) every version read asks the database, so the
//! bound holds through outages, and every version moves when it listens again.
//! [`ReplicaSync::Strict`](assetlib_core::ReplicaSync::Strict) asks the database on every
//! read. A store made by [`PgStore::from_pool`] cannot open a connection of its own and asks
//! on every read too.
//!
//! Views and downloads are added in memory and written every 100 ms in one transaction; reads
//! add this process's unwritten counts (a read and the batch being written are kept apart by
//! a lock, so a read sees a batch once), so counts are exact within the process at once and
//! reach other replicas within a second (a library's stored count is read again with the
//! batch when it is older than 500 ms). [`MetaStore::flush`](assetlib_core::MetaStore::flush)
//! writes them at once; the ready server calls it on shutdown.
//!
//! A database that cannot be reached (no connection, a broken one, a server shutting down or
//! starting) is [`StoreError::Unavailable`](assetlib_core::StoreError::Unavailable): 503 with
//! `Retry-After`, and the pool connects again by itself once the server is back.
//!
//! ## Durability
//!
//! Every write is committed with the connection's normal `synchronous_commit` before the call
//! returns. Views and downloads are the exception: they are kept in memory for up to 100 ms,
//! then written in a transaction that commits with `synchronous_commit = off`, so a count
//! reaches the disk in the background (at most three times `wal_writer_delay` later, 600 ms by
//! default). A kill -9 of the process loses at most the counts of its last 100 ms, a crash of
//! the database server the counts of that moment, never anything else. Counts are exact under
//! any concurrency. A pass's `downloads_used` is not such a counter but a limit: a spend commits
//! with the normal `synchronous_commit`, so every download answered stays counted.
//!
//! Timestamps are kept as `timestamptz`, to the microsecond; every call returns what is
//! stored.
//!
//! ## Tests
//!
//! The tests run on a throwaway PostgreSQL cluster they start themselves on 127.0.0.1 (the
//! workspace's test kit, `tests/kit`); nothing is skipped when PostgreSQL is missing: they fail
//! saying what to install (`cargo xtask setup` installs it).

// Unit tests share the dev-dependencies of the crate's other test targets.
#![cfg_attr(test, allow(unused_crate_dependencies))]

mod asset_params;
mod assets;
mod batch;
mod bulk;
mod counters;
mod deliveries;
mod document_sql;
mod error;
mod events;
mod keys;
mod libraries;
mod library_put;
mod lifecycle;
mod lists;
mod migrate;
mod notices;
mod passes;
mod schema;
#[cfg(feature = "search")]
mod search;
#[cfg(feature = "search")]
mod search_index;
#[cfg(feature = "search")]
mod search_language;
mod slug_holders;
mod slugs;
mod store;
#[cfg(feature = "transfer")]
mod transfer;
#[cfg(feature = "transfer")]
mod transfer_export;
#[cfg(feature = "transfer")]
mod transfer_import;
#[cfg(feature = "transfer")]
mod transfer_import_library;
#[cfg(feature = "transfer")]
mod transfer_import_log;
mod uploads;
mod webhooks;
mod websites;

pub use error::Error;
pub use migrate::SCHEMA_VERSION;
pub use store::{PgConfig, PgStore};

#[doc(no_inline)]
pub use assetlib_core::Store;
/// The pool crate, for an app that builds its own [`Pool`] for [`PgStore::from_pool`] (with
/// the same version this crate uses).
pub use deadpool_postgres;
#[doc(no_inline)]
pub use deadpool_postgres::Pool;
