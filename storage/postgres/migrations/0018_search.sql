-- assetlib-postgres schema, version 18: search (feature `search` of the crate; see
-- src/search.rs).
--
-- The words of an asset's title, tags and description, folded in Rust by the rules every
-- store shares (assetlib_core::search::words), as a tsvector of bare lexemes written with
-- the row by every insert and update. NULL when a build without the feature wrote the row
-- (or for rows from before this version): such rows are candidates of every search, so hits
-- stay right until `search reindex` (PgStore::reindex_search) fills them in.
ALTER TABLE __SCHEMA__.assets ADD COLUMN search_words tsvector;
CREATE INDEX assets_search_words_idx ON __SCHEMA__.assets USING gin (search_words);
CREATE INDEX assets_search_unindexed_idx ON __SCHEMA__.assets (id) WHERE search_words IS NULL;

-- The text inside an asset's file, one array item per page (or one for the whole text), and
-- its folded words in chunks of at most 20,000 (a tsvector holds at most 1 MB). Both go with
-- the asset.
CREATE TABLE __SCHEMA__.asset_texts (
    asset_id uuid PRIMARY KEY REFERENCES __SCHEMA__.assets (id) ON DELETE CASCADE,
    paged    boolean NOT NULL,
    pages    text[] NOT NULL
);
CREATE TABLE __SCHEMA__.asset_text_words (
    asset_id uuid NOT NULL REFERENCES __SCHEMA__.asset_texts (asset_id) ON DELETE CASCADE,
    chunk    integer NOT NULL,
    words    tsvector NOT NULL,
    PRIMARY KEY (asset_id, chunk)
);
CREATE INDEX asset_text_words_idx ON __SCHEMA__.asset_text_words USING gin (words);
