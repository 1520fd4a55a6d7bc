-- assetlib-postgres schema, version 23: an asset's notice names the list orders its write moved.
--
-- Until version 22 the asset row trigger sent `a<id>`, and every other replica moved the
-- version of every list order for it, although most writes (a new title or description)
-- leave the lists by creation time as they were. Now an update sends `a<id>/<orders>`, the
-- orders as bits (creation 1, title 2, last change 4, as `assetlib_core::store::ListOrders`
-- numbers them), computed from the old and new rows as core computes them for this
-- process's own writes: a change of what the lists filter on (publication, type, tags,
-- workspace) or of the creation time moves every order; a new title the title order; a new
-- `updated_at` the order by last change. An insert or a delete still sends `a<id>`, which
-- moves every order. A replica of version 17-22 reads `a<id>/<orders>` as a notice it cannot
-- read, which moves every version: a rolling upgrade stays correct.
CREATE OR REPLACE FUNCTION __SCHEMA__.bump_asset_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    orders integer := 0;
BEGIN
    UPDATE __SCHEMA__.asset_versions SET version = version + 1
        WHERE shard = (txid_current() % 16)::integer;
    IF TG_OP = 'DELETE' THEN
        PERFORM __SCHEMA__.notice('a' || OLD.id::text, TG_TABLE_SCHEMA);
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM __SCHEMA__.notice('a' || NEW.id::text, TG_TABLE_SCHEMA);
    ELSE
        IF OLD.published IS DISTINCT FROM NEW.published
            OR OLD.asset_type IS DISTINCT FROM NEW.asset_type
            OR OLD.tags IS DISTINCT FROM NEW.tags
            OR OLD.workspace_id IS DISTINCT FROM NEW.workspace_id
            OR OLD.created_at IS DISTINCT FROM NEW.created_at
            OR OLD.id IS DISTINCT FROM NEW.id
        THEN
            orders := 7;
        ELSE
            IF OLD.title IS DISTINCT FROM NEW.title THEN
                orders := orders | 2;
            END IF;
            IF OLD.updated_at IS DISTINCT FROM NEW.updated_at THEN
                orders := orders | 4;
            END IF;
        END IF;
        PERFORM __SCHEMA__.notice('a' || NEW.id::text || '/' || orders::text, TG_TABLE_SCHEMA);
    END IF;
    RETURN NULL;
END
$$;
