-- assetlib-postgres schema, version 17: a write of an asset names it in its notice.
--
-- Until version 16 every asset row written sent the notice `a`, and each replica then moved
-- the version of every asset it keeps a rendered answer of. Now the asset row trigger sends
-- `a<id>`, and a replica moves that asset's version alone (crate::notices): on a site where
-- edits land while people read, the other assets stay kept on every replica, as they do on
-- the replica that wrote. A download count flush (the statement trigger on `asset_counters`)
-- still sends `a`, which moves every asset's. A replica of an earlier version reads `a<id>`
-- as a notice it cannot read, which moves every version: a rolling upgrade stays correct.
-- The trigger keeps its name, so it still runs first of an asset's row triggers.
CREATE FUNCTION __SCHEMA__.bump_asset_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE __SCHEMA__.asset_versions SET version = version + 1
        WHERE shard = (txid_current() % 16)::integer;
    IF TG_OP = 'DELETE' THEN
        PERFORM __SCHEMA__.notice('a' || OLD.id::text, TG_TABLE_SCHEMA);
    ELSE
        PERFORM __SCHEMA__.notice('a' || NEW.id::text, TG_TABLE_SCHEMA);
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER assets_bump_version ON __SCHEMA__.assets;
CREATE TRIGGER assets_bump_version AFTER INSERT OR UPDATE OR DELETE ON __SCHEMA__.assets
    FOR EACH ROW EXECUTE FUNCTION __SCHEMA__.bump_asset_version();
