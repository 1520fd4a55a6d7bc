-- assetlib-postgres schema, version 6: each library entry keeps a copy of the fields of its
-- asset that a library page shows, so a library load reads its entries alone, with no lookup
-- of their assets.
--
-- `a_title`, `a_description`, `a_type`, `a_thumbnail` and `a_published` are the asset's
-- `title`, `description`, `asset_type`, `thumbnail_path` and `published`. `put_library` fills
-- them from the assets it places (locked `FOR KEY SHARE`, so no change of those assets commits
-- in between); the trigger below rewrites them in the transaction of every change of those
-- fields. Entries whose asset is gone (which version 1 let a library keep, and which loads
-- left out) are removed here; a delete of an asset removes its entries.

-- No asset or library is written while the copies are made: the locks wait for writers in
-- flight and hold new ones until this migration commits.
LOCK TABLE __SCHEMA__.assets IN SHARE MODE;
LOCK TABLE __SCHEMA__.library_entries IN SHARE ROW EXCLUSIVE MODE;

DELETE FROM __SCHEMA__.library_entries e
WHERE NOT EXISTS (SELECT 1 FROM __SCHEMA__.assets a WHERE a.id = e.asset_id);

ALTER TABLE __SCHEMA__.library_entries
    ADD COLUMN a_title       text,
    ADD COLUMN a_description text,
    ADD COLUMN a_type        text,
    ADD COLUMN a_thumbnail   text,
    ADD COLUMN a_published   boolean;

UPDATE __SCHEMA__.library_entries e
SET a_title = a.title, a_description = a.description, a_type = a.asset_type,
    a_thumbnail = a.thumbnail_path, a_published = a.published
FROM __SCHEMA__.assets a
WHERE a.id = e.asset_id;

ALTER TABLE __SCHEMA__.library_entries
    ALTER COLUMN a_title SET NOT NULL,
    ALTER COLUMN a_type SET NOT NULL,
    ALTER COLUMN a_published SET NOT NULL;

-- The copies follow the asset, in the transaction that changes it. The change of an asset
-- locks it `FOR UPDATE` first, which waits for a library write placing it (`FOR KEY SHARE`)
-- to commit, so the entries this updates include every one written before.
CREATE FUNCTION __SCHEMA__.copy_asset_to_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE __SCHEMA__.library_entries
    SET a_title = NEW.title, a_description = NEW.description, a_type = NEW.asset_type,
        a_thumbnail = NEW.thumbnail_path, a_published = NEW.published
    WHERE asset_id = NEW.id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER assets_copy_to_entries
    AFTER UPDATE OF title, description, asset_type, thumbnail_path, published
    ON __SCHEMA__.assets
    FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title
          OR OLD.description IS DISTINCT FROM NEW.description
          OR OLD.asset_type IS DISTINCT FROM NEW.asset_type
          OR OLD.thumbnail_path IS DISTINCT FROM NEW.thumbnail_path
          OR OLD.published IS DISTINCT FROM NEW.published)
    EXECUTE FUNCTION __SCHEMA__.copy_asset_to_entries();
