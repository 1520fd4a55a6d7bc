-- assetlib-postgres schema, version 1.
--
-- `__SCHEMA__` is the store's schema and `__TRGM__` the schema holding pg_trgm, both quoted
-- identifiers filled in by the crate. Lowercased columns (`title_lower`, `description_lower`)
-- are computed in Rust with `str::to_lowercase`, so sorting and search never depend on the
-- database's locale.

-- Content versions of libraries: one sequence, so no value is ever handed out twice, also
-- across a delete and re-creation of a library with the same id.
CREATE SEQUENCE __SCHEMA__.content_versions AS bigint;

CREATE TABLE __SCHEMA__.assets (
    id                uuid PRIMARY KEY,
    title             text NOT NULL,
    title_lower       text COLLATE "C" NOT NULL,
    slug              text COLLATE "C" NOT NULL,
    description       text,
    description_lower text COLLATE "C",
    asset_type        text NOT NULL,
    file_path         text,
    file_size         bigint,
    mime_type         text,
    thumbnail_path    text,
    page_count        bigint,
    word_count        bigint,
    width             bigint,
    height            bigint,
    external_url      text,
    video_embed       text,
    is_public         boolean NOT NULL,
    published         boolean NOT NULL,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    CONSTRAINT assets_slug_key UNIQUE (slug)
);

-- One index per sort key, over published assets only, ending with the id; and the same with
-- the type first for the type filter. A page is read from the index in either direction.
CREATE INDEX assets_created_idx ON __SCHEMA__.assets (created_at, id) WHERE published;
CREATE INDEX assets_updated_idx ON __SCHEMA__.assets (updated_at, id) WHERE published;
CREATE INDEX assets_title_idx ON __SCHEMA__.assets (title_lower, id) WHERE published;
CREATE INDEX assets_type_created_idx ON __SCHEMA__.assets (asset_type, created_at, id)
    WHERE published;
CREATE INDEX assets_type_updated_idx ON __SCHEMA__.assets (asset_type, updated_at, id)
    WHERE published;
CREATE INDEX assets_type_title_idx ON __SCHEMA__.assets (asset_type, title_lower, id)
    WHERE published;
-- Search: trigram indexes for `LIKE '%needle%'` on the lowercased texts.
CREATE INDEX assets_title_trgm_idx ON __SCHEMA__.assets
    USING gin (title_lower __TRGM__.gin_trgm_ops) WHERE published;
CREATE INDEX assets_description_trgm_idx ON __SCHEMA__.assets
    USING gin (description_lower __TRGM__.gin_trgm_ops) WHERE published;

-- The number of published assets in all (scope '') and of each type (scope = the type), kept
-- by triggers in the same transaction as the change, so that a list's total costs one lookup.
-- Every change of a count locks the '' row first, so two changes never wait on each other in
-- opposite orders.
CREATE TABLE __SCHEMA__.asset_counts (
    scope text COLLATE "C" PRIMARY KEY,
    n     bigint NOT NULL
);

CREATE FUNCTION __SCHEMA__.count_assets() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.published THEN
        UPDATE __SCHEMA__.asset_counts SET n = n - 1 WHERE scope = '';
        UPDATE __SCHEMA__.asset_counts SET n = n - 1 WHERE scope = OLD.asset_type;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.published THEN
        INSERT INTO __SCHEMA__.asset_counts AS c (scope, n) VALUES ('', 1)
            ON CONFLICT (scope) DO UPDATE SET n = c.n + 1;
        INSERT INTO __SCHEMA__.asset_counts AS c (scope, n) VALUES (NEW.asset_type, 1)
            ON CONFLICT (scope) DO UPDATE SET n = c.n + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER assets_count_insert_delete AFTER INSERT OR DELETE ON __SCHEMA__.assets
    FOR EACH ROW EXECUTE FUNCTION __SCHEMA__.count_assets();
CREATE TRIGGER assets_count_update AFTER UPDATE OF published, asset_type ON __SCHEMA__.assets
    FOR EACH ROW
    WHEN (OLD.published IS DISTINCT FROM NEW.published
          OR OLD.asset_type IS DISTINCT FROM NEW.asset_type)
    EXECUTE FUNCTION __SCHEMA__.count_assets();

-- Downloads live in a narrow table of their own: a download rewrites one small row.
CREATE TABLE __SCHEMA__.asset_counters (
    asset_id       uuid PRIMARY KEY REFERENCES __SCHEMA__.assets (id) ON DELETE CASCADE,
    download_count bigint NOT NULL DEFAULT 0
);

CREATE TABLE __SCHEMA__.libraries (
    id                         uuid PRIMARY KEY,
    title                      text NOT NULL,
    slug                       text COLLATE "C" NOT NULL,
    description                text,
    workspace_id               text,
    cover_image_path           text,
    cover_overlay_color        text,
    cover_overlay_opacity      double precision,
    show_asset_count           boolean NOT NULL,
    allow_individual_downloads boolean NOT NULL,
    allow_bulk_download        boolean NOT NULL,
    is_paid                    boolean NOT NULL,
    price                      double precision,
    currency                   text NOT NULL,
    published                  boolean NOT NULL,
    published_at               timestamptz,
    created_at                 timestamptz NOT NULL,
    updated_at                 timestamptz NOT NULL,
    CONSTRAINT libraries_slug_key UNIQUE (slug)
);

CREATE INDEX libraries_published_idx ON __SCHEMA__.libraries (published_at, id) WHERE published;
CREATE INDEX libraries_workspace_idx ON __SCHEMA__.libraries (workspace_id, published_at, id)
    WHERE published;

-- Views and the content version, with a copy of `published`: a view is one narrow update.
CREATE TABLE __SCHEMA__.library_counters (
    library_id      uuid PRIMARY KEY REFERENCES __SCHEMA__.libraries (id) ON DELETE CASCADE,
    view_count      bigint NOT NULL DEFAULT 0,
    content_version bigint NOT NULL,
    published       boolean NOT NULL
);

CREATE TABLE __SCHEMA__.library_sections (
    library_id           uuid NOT NULL REFERENCES __SCHEMA__.libraries (id) ON DELETE CASCADE,
    id                   uuid NOT NULL,
    title                text NOT NULL,
    description          text,
    display_order        bigint NOT NULL,
    collapsed_by_default boolean NOT NULL,
    PRIMARY KEY (library_id, id)
);

-- Entries refer to assets without a foreign key: an entry whose asset is gone is left out
-- when the library is read.
CREATE TABLE __SCHEMA__.library_entries (
    library_id    uuid NOT NULL REFERENCES __SCHEMA__.libraries (id) ON DELETE CASCADE,
    asset_id      uuid NOT NULL,
    section_id    uuid,
    display_order bigint NOT NULL,
    title         text,
    description   text,
    PRIMARY KEY (library_id, asset_id)
);

-- The libraries holding an asset, for the content versions an asset change bumps.
CREATE INDEX library_entries_asset_idx ON __SCHEMA__.library_entries (asset_id);

CREATE TABLE __SCHEMA__.api_keys (
    id         uuid PRIMARY KEY,
    name       text NOT NULL,
    key_hash   bytea NOT NULL,
    scopes     text[] NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash)
);

CREATE INDEX api_keys_created_idx ON __SCHEMA__.api_keys (created_at, id);
