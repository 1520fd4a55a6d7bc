-- assetlib-postgres schema, version 10: previews. An asset keeps its thumbnail's placeholder
-- (a ThumbHash, base64) and what an audio or video file plays; a library entry's copy of its
-- asset gains the placeholder and the playing time, which a library page shows.
--
-- Existing rows get nulls: no placeholder and nothing known of what they play, until their
-- thumbnails are made again (`POST /api/v1/assets/{id}/thumbnail`).

ALTER TABLE __SCHEMA__.assets
    ADD COLUMN thumbnail_placeholder text,
    ADD COLUMN duration_ms           bigint,
    ADD COLUMN sample_rate           bigint,
    ADD COLUMN channels              bigint,
    ADD COLUMN bitrate               bigint,
    ADD COLUMN video_codec           text;

ALTER TABLE __SCHEMA__.library_entries
    ADD COLUMN a_placeholder text,
    ADD COLUMN a_duration_ms bigint;

-- The copies follow the two new fields too.
CREATE OR REPLACE FUNCTION __SCHEMA__.copy_asset_to_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE __SCHEMA__.library_entries
    SET a_title = NEW.title, a_description = NEW.description, a_type = NEW.asset_type,
        a_thumbnail = NEW.thumbnail_path, a_published = NEW.published,
        a_placeholder = NEW.thumbnail_placeholder, a_duration_ms = NEW.duration_ms
    WHERE asset_id = NEW.id;
    RETURN NULL;
END;
$$;

DROP TRIGGER assets_copy_to_entries ON __SCHEMA__.assets;

CREATE TRIGGER assets_copy_to_entries
    AFTER UPDATE OF title, description, asset_type, thumbnail_path, published,
        thumbnail_placeholder, duration_ms
    ON __SCHEMA__.assets
    FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title
          OR OLD.description IS DISTINCT FROM NEW.description
          OR OLD.asset_type IS DISTINCT FROM NEW.asset_type
          OR OLD.thumbnail_path IS DISTINCT FROM NEW.thumbnail_path
          OR OLD.published IS DISTINCT FROM NEW.published
          OR OLD.thumbnail_placeholder IS DISTINCT FROM NEW.thumbnail_placeholder
          OR OLD.duration_ms IS DISTINCT FROM NEW.duration_ms)
    EXECUTE FUNCTION __SCHEMA__.copy_asset_to_entries();
