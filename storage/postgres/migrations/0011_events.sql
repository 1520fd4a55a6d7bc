-- assetlib-postgres schema, version 11: the event log.
--
-- Every write inserts its event in its own statement or transaction. The log's order is the
-- writing transaction's id, then the row's sequence number: the feed shows only rows of
-- transactions older than every one still running (`xid < pg_snapshot_xmin(...)`), so a
-- transaction that commits after a later-started one never lands behind a reader.
CREATE TABLE __SCHEMA__.events (
    xid            xid8 NOT NULL DEFAULT pg_current_xact_id(),
    seq            bigint GENERATED ALWAYS AS IDENTITY,
    id             uuid NOT NULL,
    type           text NOT NULL,
    occurred_at    timestamptz NOT NULL,
    actor_key_id   uuid,
    actor_key_name text,
    resource_type  text NOT NULL,
    resource_id    uuid NOT NULL,
    changed        text[] NOT NULL,
    CONSTRAINT events_pkey PRIMARY KEY (xid, seq)
);

-- One resource's history (the audit trail), in log order.
CREATE INDEX events_resource_idx ON __SCHEMA__.events (resource_type, resource_id, xid, seq);

-- Retention: the events older than a time.
CREATE INDEX events_occurred_idx ON __SCHEMA__.events (occurred_at);
