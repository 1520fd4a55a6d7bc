-- assetlib-postgres schema, version 14: tags and checksums.
--
-- An asset keeps its tags as given (`tags`) and their keys (`tag_keys`: trimmed, in Unicode
-- lower case, each once, in the order of the tags), both computed in Rust like
-- `title_lower`; and the SHA-256 of its file (`checksum_sha256`, 32 bytes, NULL while
-- unknown), looked up through a partial index. A library entry's copy of its asset gains the
-- tags (`a_tags`), kept by the copy trigger as the other fields are.
--
-- `asset_tags` holds one row per tag key of each asset, with copies of what a list filters
-- and sorts by (`published`, `asset_type`, the three sort keys), so a list of one tag reads
-- a page from its `(tag_key, published, <sort key>, asset_id)` index in order, in either
-- direction, whatever the number of assets. A trigger on `assets` keeps it in the
-- transaction of every write; its rows go with their asset (the foreign key cascades).
--
-- `tag_counts` counts them: the assets having a tag key, by `published`, over every type
-- (`asset_type` '') and of each type, in shards as `asset_counts` (the transaction id modulo
-- 16; a count is the sum of its rows, and a shard's row may go below zero). Triggers on
-- `asset_tags` keep it in the same transaction, so a tag list's total and the tag cloud
-- (`list_tags`) cost a few rows.
--
-- Existing assets get no tags and no checksum: nothing to count.
--
-- Locks: a transaction may now write several assets (bulk changes and deletes), so the rows
-- of a shard (`asset_versions`, `asset_counts`, `asset_draft_counts`, `tag_counts`) would be
-- locked in the order of its assets' writes. The shard's `asset_versions` row is their gate:
-- every trigger locks it before any count row of its shard (the version trigger now fires
-- first of the row triggers on `assets`, and the tag count trigger locks it itself, as the
-- cascade of a delete fires before any trigger on `assets`), so two transactions of one
-- shard meet at the gate first and never wait on each other's count rows in opposite
-- orders.

ALTER TABLE __SCHEMA__.assets
    ADD COLUMN tags            text[] NOT NULL DEFAULT '{}',
    ADD COLUMN tag_keys        text[] NOT NULL DEFAULT '{}',
    ADD COLUMN checksum_sha256 bytea;

-- The assets whose file has a checksum: the duplicates of a file are an index lookup.
CREATE INDEX assets_checksum_idx ON __SCHEMA__.assets (checksum_sha256)
    WHERE checksum_sha256 IS NOT NULL;

ALTER TABLE __SCHEMA__.library_entries
    ADD COLUMN a_tags text[] NOT NULL DEFAULT '{}';

-- The version moves first of an asset's row triggers: it is the gate of the shard's rows.
DROP TRIGGER assets_version ON __SCHEMA__.assets;
CREATE TRIGGER assets_bump_version AFTER INSERT OR UPDATE OR DELETE ON __SCHEMA__.assets
    FOR EACH ROW EXECUTE FUNCTION __SCHEMA__.bump_assets_version();

-- The entries' copies follow the tags too.
CREATE OR REPLACE FUNCTION __SCHEMA__.copy_asset_to_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE __SCHEMA__.library_entries
    SET a_title = NEW.title, a_description = NEW.description, a_type = NEW.asset_type,
        a_thumbnail = NEW.thumbnail_path, a_published = NEW.published,
        a_placeholder = NEW.thumbnail_placeholder, a_duration_ms = NEW.duration_ms,
        a_tags = NEW.tags
    WHERE asset_id = NEW.id;
    RETURN NULL;
END;
$$;

DROP TRIGGER assets_copy_to_entries ON __SCHEMA__.assets;

CREATE TRIGGER assets_copy_to_entries
    AFTER UPDATE OF title, description, asset_type, thumbnail_path, published,
        thumbnail_placeholder, duration_ms, tags
    ON __SCHEMA__.assets
    FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title
          OR OLD.description IS DISTINCT FROM NEW.description
          OR OLD.asset_type IS DISTINCT FROM NEW.asset_type
          OR OLD.thumbnail_path IS DISTINCT FROM NEW.thumbnail_path
          OR OLD.published IS DISTINCT FROM NEW.published
          OR OLD.thumbnail_placeholder IS DISTINCT FROM NEW.thumbnail_placeholder
          OR OLD.duration_ms IS DISTINCT FROM NEW.duration_ms
          OR OLD.tags IS DISTINCT FROM NEW.tags)
    EXECUTE FUNCTION __SCHEMA__.copy_asset_to_entries();

CREATE TABLE __SCHEMA__.asset_tags (
    tag_key     text COLLATE "C" NOT NULL,
    asset_id    uuid NOT NULL REFERENCES __SCHEMA__.assets (id) ON DELETE CASCADE,
    published   boolean NOT NULL,
    asset_type  text NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    title_lower text COLLATE "C" NOT NULL,
    PRIMARY KEY (tag_key, asset_id)
);

-- One index per sort key, as the assets' lists have, after the tag and the kind; a type
-- filter is checked on the rows read.
CREATE INDEX asset_tags_created_idx
    ON __SCHEMA__.asset_tags (tag_key, published, created_at, asset_id);
CREATE INDEX asset_tags_updated_idx
    ON __SCHEMA__.asset_tags (tag_key, published, updated_at, asset_id);
CREATE INDEX asset_tags_title_idx
    ON __SCHEMA__.asset_tags (tag_key, published, title_lower, asset_id);
-- The cascade of an asset's delete, and the trigger below, find its rows by the asset.
CREATE INDEX asset_tags_asset_idx ON __SCHEMA__.asset_tags (asset_id);

-- The rows follow the asset's keys and copied fields: keys gone are deleted, then every key
-- is upserted in key order (a row whose copies are current is left alone).
CREATE FUNCTION __SCHEMA__.copy_asset_to_tags() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        DELETE FROM __SCHEMA__.asset_tags
        WHERE asset_id = NEW.id AND tag_key <> ALL (NEW.tag_keys);
    END IF;
    INSERT INTO __SCHEMA__.asset_tags AS t (tag_key, asset_id, published, asset_type,
        created_at, updated_at, title_lower)
        SELECT k.key, NEW.id, NEW.published, NEW.asset_type, NEW.created_at,
            NEW.updated_at, NEW.title_lower
        FROM (SELECT DISTINCT key FROM unnest(NEW.tag_keys) AS key) k
        ORDER BY k.key COLLATE "C"
        ON CONFLICT (tag_key, asset_id) DO UPDATE
        SET published = EXCLUDED.published, asset_type = EXCLUDED.asset_type,
            created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
            title_lower = EXCLUDED.title_lower
        WHERE (t.published, t.asset_type, t.created_at, t.updated_at, t.title_lower)
            IS DISTINCT FROM (EXCLUDED.published, EXCLUDED.asset_type, EXCLUDED.created_at,
                              EXCLUDED.updated_at, EXCLUDED.title_lower);
    RETURN NULL;
END;
$$;

CREATE TRIGGER assets_copy_to_tags_insert AFTER INSERT ON __SCHEMA__.assets
    FOR EACH ROW
    WHEN (cardinality(NEW.tag_keys) > 0)
    EXECUTE FUNCTION __SCHEMA__.copy_asset_to_tags();

CREATE TRIGGER assets_copy_to_tags
    AFTER UPDATE OF tag_keys, published, asset_type, created_at, updated_at, title_lower
    ON __SCHEMA__.assets
    FOR EACH ROW
    WHEN ((cardinality(OLD.tag_keys) > 0 OR cardinality(NEW.tag_keys) > 0)
          AND (OLD.tag_keys IS DISTINCT FROM NEW.tag_keys
               OR OLD.published IS DISTINCT FROM NEW.published
               OR OLD.asset_type IS DISTINCT FROM NEW.asset_type
               OR OLD.created_at IS DISTINCT FROM NEW.created_at
               OR OLD.updated_at IS DISTINCT FROM NEW.updated_at
               OR OLD.title_lower IS DISTINCT FROM NEW.title_lower))
    EXECUTE FUNCTION __SCHEMA__.copy_asset_to_tags();

-- The assets having a tag key, by kind, over every type ('') and of each type, in shards.
CREATE TABLE __SCHEMA__.tag_counts (
    tag_key    text COLLATE "C" NOT NULL,
    published  boolean NOT NULL,
    asset_type text COLLATE "C" NOT NULL,
    shard      integer NOT NULL,
    n          bigint NOT NULL,
    PRIMARY KEY (tag_key, published, asset_type, shard)
);

-- A row of `asset_tags` inserted, deleted (a cascade included) or moved to another kind or
-- type adds its deltas to the rows of the transaction's shard, after the shard's gate, in
-- one statement, in key order, skipping those that sum to zero.
CREATE FUNCTION __SCHEMA__.count_tags() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k        integer := (txid_current() % 16)::integer;
    old_key  text;
    old_pub  boolean;
    old_type text;
    new_key  text;
    new_pub  boolean;
    new_type text;
BEGIN
    PERFORM 1 FROM __SCHEMA__.asset_versions WHERE shard = k FOR UPDATE;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        old_key := OLD.tag_key;
        old_pub := OLD.published;
        old_type := OLD.asset_type;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        new_key := NEW.tag_key;
        new_pub := NEW.published;
        new_type := NEW.asset_type;
    END IF;
    INSERT INTO __SCHEMA__.tag_counts AS c (tag_key, published, asset_type, shard, n)
        SELECT d.tag_key, d.published, d.asset_type, k, sum(d.n)
        FROM (VALUES (old_key, old_pub, ''::text, -1), (old_key, old_pub, old_type, -1),
                     (new_key, new_pub, ''::text, 1), (new_key, new_pub, new_type, 1))
            AS d (tag_key, published, asset_type, n)
        WHERE d.tag_key IS NOT NULL
        GROUP BY d.tag_key, d.published, d.asset_type HAVING sum(d.n) <> 0
        ORDER BY d.tag_key COLLATE "C", d.published, d.asset_type COLLATE "C"
        ON CONFLICT (tag_key, published, asset_type, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
    RETURN NULL;
END
$$;

CREATE TRIGGER asset_tags_count_insert_delete AFTER INSERT OR DELETE ON __SCHEMA__.asset_tags
    FOR EACH ROW EXECUTE FUNCTION __SCHEMA__.count_tags();
CREATE TRIGGER asset_tags_count_update AFTER UPDATE OF published, asset_type
    ON __SCHEMA__.asset_tags
    FOR EACH ROW
    WHEN (OLD.published IS DISTINCT FROM NEW.published
          OR OLD.asset_type IS DISTINCT FROM NEW.asset_type)
    EXECUTE FUNCTION __SCHEMA__.count_tags();
