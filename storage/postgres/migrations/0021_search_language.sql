-- assetlib-postgres schema, version 21: the language the search index was made in (feature
-- `search`; see src/search_index.rs).
--
-- NULL: words folded, not stemmed (every index before this version). A store that connects
-- naming another language (`PgConfig::search_language`) clears the words of the index and
-- records its own, in one transaction; `search reindex` makes the words again.
CREATE TABLE __SCHEMA__.search_index (
    one      boolean PRIMARY KEY DEFAULT true CHECK (one),
    language text
);
INSERT INTO __SCHEMA__.search_index (one, language) VALUES (true, NULL);
