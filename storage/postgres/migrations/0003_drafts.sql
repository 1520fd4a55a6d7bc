-- assetlib-postgres schema, version 3: drafts in the lists.
--
-- Lists now show published assets, drafts, or both. Drafts get the indexes published assets
-- have, partial on `NOT published`; both together get the same btree indexes over every asset,
-- so a page of either kind is read from an index in order. A search of both reads the
-- published and the draft trigram indexes, one `UNION ALL` leg each, so no trigram index over
-- every asset is needed.
--
-- Drafts are counted in `asset_draft_counts`, a table of the same shape as `asset_counts`
-- (scopes '' and each type, 16 shards), kept by the same trigger in the same transaction;
-- `asset_counts` keeps counting published assets only, as before. The total of both kinds
-- is the sum of the two.

-- No asset is written while the drafts are counted and the trigger changes: the lock waits
-- for writers in flight and holds new ones until this migration commits.
LOCK TABLE __SCHEMA__.assets IN SHARE MODE;

-- Drafts: one index per sort key, and the same with the type first.
CREATE INDEX assets_draft_created_idx ON __SCHEMA__.assets (created_at, id) WHERE NOT published;
CREATE INDEX assets_draft_updated_idx ON __SCHEMA__.assets (updated_at, id) WHERE NOT published;
CREATE INDEX assets_draft_title_idx ON __SCHEMA__.assets (title_lower, id) WHERE NOT published;
CREATE INDEX assets_draft_type_created_idx ON __SCHEMA__.assets (asset_type, created_at, id)
    WHERE NOT published;
CREATE INDEX assets_draft_type_updated_idx ON __SCHEMA__.assets (asset_type, updated_at, id)
    WHERE NOT published;
CREATE INDEX assets_draft_type_title_idx ON __SCHEMA__.assets (asset_type, title_lower, id)
    WHERE NOT published;
CREATE INDEX assets_draft_title_trgm_idx ON __SCHEMA__.assets
    USING gin (title_lower __TRGM__.gin_trgm_ops) WHERE NOT published;
CREATE INDEX assets_draft_description_trgm_idx ON __SCHEMA__.assets
    USING gin (description_lower __TRGM__.gin_trgm_ops) WHERE NOT published;

-- Every asset, published or not. (PostgreSQL does not merge ordered scans of the two partial
-- indexes into one order, so the list of both kinds needs indexes of its own.)
CREATE INDEX assets_all_created_idx ON __SCHEMA__.assets (created_at, id);
CREATE INDEX assets_all_updated_idx ON __SCHEMA__.assets (updated_at, id);
CREATE INDEX assets_all_title_idx ON __SCHEMA__.assets (title_lower, id);
CREATE INDEX assets_all_type_created_idx ON __SCHEMA__.assets (asset_type, created_at, id);
CREATE INDEX assets_all_type_updated_idx ON __SCHEMA__.assets (asset_type, updated_at, id);
CREATE INDEX assets_all_type_title_idx ON __SCHEMA__.assets (asset_type, title_lower, id);

-- The number of drafts in all (scope '') and of each type, in shards as `asset_counts`.
CREATE TABLE __SCHEMA__.asset_draft_counts (
    scope text COLLATE "C" NOT NULL,
    shard integer NOT NULL,
    n     bigint NOT NULL,
    PRIMARY KEY (scope, shard)
);

INSERT INTO __SCHEMA__.asset_draft_counts (scope, shard, n)
    SELECT '', 0, count(*) FROM __SCHEMA__.assets WHERE NOT published
    UNION ALL
    SELECT asset_type, 0, count(*) FROM __SCHEMA__.assets WHERE NOT published
    GROUP BY asset_type;

-- A change adds its deltas to the rows of its transaction's shard: first those of
-- `asset_counts`, then those of `asset_draft_counts`, each in scope order ('' first, then the
-- types in byte order), skipping a scope whose delta is zero. Every transaction takes these
-- row locks in that one order, so two changes never wait on each other in opposite orders
-- (a transaction changes at most one asset).
CREATE OR REPLACE FUNCTION __SCHEMA__.count_assets() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k        integer := (txid_current() % 16)::integer;
    old_pub  boolean;
    old_type text;
    new_pub  boolean;
    new_type text;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        old_pub := OLD.published;
        old_type := OLD.asset_type;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        new_pub := NEW.published;
        new_type := NEW.asset_type;
    END IF;
    INSERT INTO __SCHEMA__.asset_counts AS c (scope, shard, n)
        SELECT d.scope, k, sum(d.n)
        FROM (VALUES (old_pub, ''::text, -1), (old_pub, old_type, -1),
                     (new_pub, ''::text, 1), (new_pub, new_type, 1)) AS d (published, scope, n)
        WHERE d.published
        GROUP BY d.scope HAVING sum(d.n) <> 0
        ORDER BY d.scope COLLATE "C"
        ON CONFLICT (scope, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
    INSERT INTO __SCHEMA__.asset_draft_counts AS c (scope, shard, n)
        SELECT d.scope, k, sum(d.n)
        FROM (VALUES (old_pub, ''::text, -1), (old_pub, old_type, -1),
                     (new_pub, ''::text, 1), (new_pub, new_type, 1)) AS d (published, scope, n)
        WHERE NOT d.published
        GROUP BY d.scope HAVING sum(d.n) <> 0
        ORDER BY d.scope COLLATE "C"
        ON CONFLICT (scope, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
    RETURN NULL;
END
$$;
