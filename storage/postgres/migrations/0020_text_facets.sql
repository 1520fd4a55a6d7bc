-- assetlib-postgres schema, version 20: the words of an asset's text carry what a search
-- filters and orders by (feature `search`; see src/search.rs).
--
-- A search for a word found in the text of a tenth of the assets used to join each of those
-- texts with its asset row to filter, order and count them: 100,000 index probes at a
-- million assets. Each `asset_text_words` row now keeps a copy of its asset's created time,
-- publication, visibility, type, workspace and tag keys, so the text's hits are filtered and
-- ordered from the text words alone, and only the hits found by title, tags or description
-- (and the page shown) read the asset rows. The copy is written with the words
-- (`PgStore::set_text`, which holds the asset row against a concurrent update meanwhile) and
-- kept by the trigger below in the transaction of every write of those fields.
ALTER TABLE __SCHEMA__.asset_text_words
    ADD COLUMN created_at   timestamptz,
    ADD COLUMN published    boolean,
    ADD COLUMN is_public    boolean,
    ADD COLUMN asset_type   text,
    ADD COLUMN workspace_id text COLLATE "C",
    ADD COLUMN tag_keys     text[];

UPDATE __SCHEMA__.asset_text_words w
    SET created_at = a.created_at, published = a.published, is_public = a.is_public,
        asset_type = a.asset_type, workspace_id = a.workspace_id, tag_keys = a.tag_keys
    FROM __SCHEMA__.assets a WHERE a.id = w.asset_id;

ALTER TABLE __SCHEMA__.asset_text_words
    ALTER COLUMN created_at SET NOT NULL,
    ALTER COLUMN published SET NOT NULL,
    ALTER COLUMN is_public SET NOT NULL,
    ALTER COLUMN asset_type SET NOT NULL,
    ALTER COLUMN tag_keys SET NOT NULL;

CREATE FUNCTION __SCHEMA__.copy_text_facets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE __SCHEMA__.asset_text_words
        SET created_at = NEW.created_at, published = NEW.published, is_public = NEW.is_public,
            asset_type = NEW.asset_type, workspace_id = NEW.workspace_id,
            tag_keys = NEW.tag_keys
        WHERE asset_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER assets_text_facets AFTER UPDATE ON __SCHEMA__.assets FOR EACH ROW
    WHEN (OLD.created_at IS DISTINCT FROM NEW.created_at
          OR OLD.published IS DISTINCT FROM NEW.published
          OR OLD.is_public IS DISTINCT FROM NEW.is_public
          OR OLD.asset_type IS DISTINCT FROM NEW.asset_type
          OR OLD.workspace_id IS DISTINCT FROM NEW.workspace_id
          OR OLD.tag_keys IS DISTINCT FROM NEW.tag_keys)
    EXECUTE FUNCTION __SCHEMA__.copy_text_facets();
