-- assetlib-postgres schema, version 8: change notices, and slug numbers that need no scan.
--
-- Every write transaction sends a notice at commit on the channel named like the schema, so
-- that each replica's listening connection learns what changed (crate::notices): `a` when
-- the assets or their download counts change (from the statement triggers that move the
-- assets version), `l<id>` when a library's content version or publication changes or it is
-- deleted, `k<id>` when an API key is changed or deleted; each followed by a space and the
-- writing store's origin (the session setting `assetlib.origin` its connections set), so a
-- store skips the notices of its own writes, which it applied when they returned. PostgreSQL
-- sends a notice only if the transaction commits, once per distinct payload.
CREATE FUNCTION __SCHEMA__.notice(what text, channel text) RETURNS void LANGUAGE sql AS $$
    SELECT pg_notify(channel,
        what || coalesce(' ' || nullif(current_setting('assetlib.origin', true), ''), ''));
$$;

CREATE OR REPLACE FUNCTION __SCHEMA__.bump_assets_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE __SCHEMA__.asset_versions SET version = version + 1
        WHERE shard = (txid_current() % 16)::integer;
    PERFORM __SCHEMA__.notice('a', TG_TABLE_SCHEMA);
    RETURN NULL;
END
$$;

CREATE FUNCTION __SCHEMA__.notify_library() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM __SCHEMA__.notice('l' || OLD.library_id::text, TG_TABLE_SCHEMA);
    ELSE
        PERFORM __SCHEMA__.notice('l' || NEW.library_id::text, TG_TABLE_SCHEMA);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER library_counters_notify AFTER INSERT OR DELETE ON __SCHEMA__.library_counters
    FOR EACH ROW EXECUTE FUNCTION __SCHEMA__.notify_library();
-- A view count alone is not a change of content: views are not announced.
CREATE TRIGGER library_counters_notify_change
    AFTER UPDATE OF content_version, published ON __SCHEMA__.library_counters
    FOR EACH ROW
    WHEN (OLD.content_version IS DISTINCT FROM NEW.content_version
          OR OLD.published IS DISTINCT FROM NEW.published)
    EXECUTE FUNCTION __SCHEMA__.notify_library();

CREATE FUNCTION __SCHEMA__.notify_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM __SCHEMA__.notice('k' || OLD.id::text, TG_TABLE_SCHEMA);
    RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_notify AFTER UPDATE OR DELETE ON __SCHEMA__.api_keys
    FOR EACH ROW EXECUTE FUNCTION __SCHEMA__.notify_key();

-- The last number handed out for each wanted asset slug taken already: an insert of a taken
-- slug takes the next number in a short statement of its own instead of scanning the taken
-- `-N` slugs and waiting for concurrent inserts of the same slug to commit. Numbers may be
-- left out (a crash, a failed insert); slugs stay unique by the assets' unique index.
CREATE TABLE __SCHEMA__.slug_counters (
    base text COLLATE "C" PRIMARY KEY,
    last bigint NOT NULL
);
