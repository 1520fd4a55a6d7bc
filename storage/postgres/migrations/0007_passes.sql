-- assetlib-postgres schema, version 7: library passes, what buyers of a paid library get; and
-- the scope `read:paid` for every key that may write assets.
--
-- A pass is found by the SHA-256 of its token (`token_hash`, unique) or by its id, and goes
-- with its library: the foreign key cascades, so the `DELETE` of a library removes its passes
-- in the same statement, and an insert of a pass whose library is gone (or is being deleted)
-- fails. `downloads_used` is a limit, not an analytics counter: it is written with the
-- connection's normal `synchronous_commit`. `asset_ids` is NULL when the pass opens every
-- asset of its library.
CREATE TABLE __SCHEMA__.passes (
    id             uuid PRIMARY KEY,
    library_id     uuid NOT NULL,
    token_hash     bytea NOT NULL,
    label          text NOT NULL,
    expires_at     timestamptz NOT NULL,
    max_downloads  bigint,
    downloads_used bigint NOT NULL DEFAULT 0,
    asset_ids      uuid[],
    created_at     timestamptz NOT NULL,
    revoked_at     timestamptz,
    CONSTRAINT passes_token_hash_key UNIQUE (token_hash),
    CONSTRAINT passes_library_id_fkey FOREIGN KEY (library_id)
        REFERENCES __SCHEMA__.libraries (id) ON DELETE CASCADE
);

-- One library's passes, newest first: a list page reads the index in order, and the cascade
-- of a library's delete finds its passes by the index's prefix.
CREATE INDEX passes_library_created_idx
    ON __SCHEMA__.passes (library_id, created_at DESC, id DESC);

-- Keys that may write assets may download paid files too. No key is written while they are
-- upgraded: the lock waits for writers in flight and holds new ones until this commits. A key
-- that has `read:paid` already is left as it is.
LOCK TABLE __SCHEMA__.api_keys IN SHARE ROW EXCLUSIVE MODE;

UPDATE __SCHEMA__.api_keys
SET scopes = array_append(scopes, 'read:paid')
WHERE 'write:assets' = ANY (scopes) AND NOT ('read:paid' = ANY (scopes));
