-- assetlib-postgres schema, version 2: the counts behind list totals in shards.
--
-- In version 1 each scope had one row in `asset_counts`, so every insert or delete of a
-- published asset updated the row of scope '' and held its lock until it committed: concurrent
-- creates ran one at a time, each waiting for the previous one's commit to reach the disk, and
-- never shared a WAL flush. Now a scope has up to 16 rows (`shard`); a transaction changes the
-- rows of one shard only (its transaction id modulo 16), so concurrent creates mostly touch
-- different rows and commit together. A count is the sum of its scope's rows: still exact and
-- in the same transaction as the change. A shard's row may go below zero (a delete counted in
-- another shard than its insert); only the sum means anything.

-- The version 1 counts become shard 0.
ALTER TABLE __SCHEMA__.asset_counts ADD COLUMN shard integer NOT NULL DEFAULT 0;
ALTER TABLE __SCHEMA__.asset_counts DROP CONSTRAINT asset_counts_pkey;
ALTER TABLE __SCHEMA__.asset_counts ADD PRIMARY KEY (scope, shard);

-- Within its shard a change still locks the '' row first, and a transaction keeps to one
-- shard, so two changes never wait on each other in opposite orders.
CREATE OR REPLACE FUNCTION __SCHEMA__.count_assets() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k integer := (txid_current() % 16)::integer;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.published THEN
        INSERT INTO __SCHEMA__.asset_counts AS c (scope, shard, n) VALUES ('', k, -1)
            ON CONFLICT (scope, shard) DO UPDATE SET n = c.n - 1;
        INSERT INTO __SCHEMA__.asset_counts AS c (scope, shard, n) VALUES (OLD.asset_type, k, -1)
            ON CONFLICT (scope, shard) DO UPDATE SET n = c.n - 1;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.published THEN
        INSERT INTO __SCHEMA__.asset_counts AS c (scope, shard, n) VALUES ('', k, 1)
            ON CONFLICT (scope, shard) DO UPDATE SET n = c.n + 1;
        INSERT INTO __SCHEMA__.asset_counts AS c (scope, shard, n) VALUES (NEW.asset_type, k, 1)
            ON CONFLICT (scope, shard) DO UPDATE SET n = c.n + 1;
    END IF;
    RETURN NULL;
END
$$;
