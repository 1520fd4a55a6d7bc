-- assetlib-postgres schema, version 13: resumable and direct uploads in progress.
--
-- One row per upload, from its creation until it expires: the record itself (`record`, JSON,
-- read and written whole), when it expires, and who holds its lease until when. Every
-- change is one statement on one row whose WHERE checks the lease, so of two requests at
-- once only one holds an upload.
CREATE TABLE __SCHEMA__.uploads (
    id         uuid PRIMARY KEY,
    expires_at timestamptz NOT NULL,
    holder     uuid,
    held_until timestamptz,
    record     text NOT NULL
);

CREATE INDEX uploads_expires_idx ON __SCHEMA__.uploads (expires_at, id);
