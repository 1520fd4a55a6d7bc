-- assetlib-postgres schema, version 5: the content version of the assets, which readers keep
-- rendered list pages and assets under (`Store::assets_version`).
--
-- Every statement that writes `assets`, and every download count, adds one to a row of
-- `asset_versions` in its own transaction; the version is the sum of the rows. A row only
-- grows, so the sum grows with every committed write and no version repeats, and a reader
-- that reads the sum and then the assets (later snapshots) reads content at least as new.
-- The rows are shards as in `asset_counts` (the transaction id modulo 16, the same shard the
-- counts take, and after them: row triggers fire before statement triggers), so concurrent
-- writes mostly touch different rows and still share WAL flushes.
CREATE TABLE __SCHEMA__.asset_versions (
    shard   integer PRIMARY KEY,
    version bigint  NOT NULL
);
INSERT INTO __SCHEMA__.asset_versions (shard, version)
    SELECT s, 0 FROM generate_series(0, 15) AS s;

CREATE FUNCTION __SCHEMA__.bump_assets_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE __SCHEMA__.asset_versions SET version = version + 1
        WHERE shard = (txid_current() % 16)::integer;
    RETURN NULL;
END
$$;

CREATE TRIGGER assets_version AFTER INSERT OR UPDATE OR DELETE ON __SCHEMA__.assets
    FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.bump_assets_version();
CREATE TRIGGER downloads_version AFTER UPDATE ON __SCHEMA__.asset_counters
    FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.bump_assets_version();
