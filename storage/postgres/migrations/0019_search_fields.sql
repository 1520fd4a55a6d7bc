-- assetlib-postgres schema, version 19: the words of an asset's title, tags and description
-- keep the fields they are in (feature `search`; see src/search.rs).
--
-- `search_words` now holds each folded word once, at position 1 with weight A when it is in
-- the title, 2 B in the tags, 3 C in the description (`'harbour':1A,3C`), so a search scores
-- and orders its hits in the statement, from the index, without sending every candidate to
-- Rust. The words of version 18 carry no field: they are cleared, and the rows are
-- candidates of every search (answered right, but slowly) until `search reindex`
-- (PgStore::reindex_search) fills them in again.
-- The words are no content of the asset: the row trigger that announces a write is off for
-- the clearing (the migration holds the schema's lock; nothing else writes meanwhile).
ALTER TABLE __SCHEMA__.assets DISABLE TRIGGER assets_bump_version;
UPDATE __SCHEMA__.assets SET search_words = NULL WHERE search_words IS NOT NULL;
ALTER TABLE __SCHEMA__.assets ENABLE TRIGGER assets_bump_version;
