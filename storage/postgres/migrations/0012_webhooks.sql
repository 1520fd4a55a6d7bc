-- assetlib-postgres schema, version 12: webhooks, their deliveries, and the dispatch cursor.
--
-- A webhook's writes log their event in the same statement or transaction, as every write
-- does. Its deliveries go with it (the foreign key cascades). Its stream (`stream_xid`,
-- `stream_seq`: the place of the event log, as the feed orders it, up to which it has had
-- its events) is leased to one replica at a time (`stream_holder` until `stream_until`,
-- taken with `FOR UPDATE SKIP LOCKED`), which sends the events after it and moves it, in the
-- statement that inserts their deliveries, only from the place it read. A replica claims due
-- retries with `FOR UPDATE SKIP LOCKED` and leases them (`next_attempt_at` moves to the
-- lease's end), so no two replicas send one delivery at once. Delivery bookkeeping commits
-- with `synchronous_commit = off`: a crash can only make a delivery go out again.
CREATE TABLE __SCHEMA__.webhooks (
    id            uuid PRIMARY KEY,
    url           text NOT NULL,
    event_types   text[] NOT NULL,
    enabled       boolean NOT NULL,
    secret        text NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    failing_since timestamptz,
    stream_xid    bigint NOT NULL,
    stream_seq    bigint NOT NULL,
    stream_holder uuid,
    stream_until  timestamptz
);

CREATE INDEX webhooks_created_idx ON __SCHEMA__.webhooks (created_at DESC, id DESC);

CREATE TABLE __SCHEMA__.webhook_deliveries (
    id                   uuid PRIMARY KEY,
    webhook_id           uuid NOT NULL,
    event_id             uuid NOT NULL,
    event_type           text NOT NULL,
    -- Where the event is in the log (its body is made from it when it is sent).
    event_xid            bigint NOT NULL,
    event_seq            bigint NOT NULL,
    status               text NOT NULL,
    attempts             integer NOT NULL,
    created_at           timestamptz NOT NULL,
    last_attempt_at      timestamptz,
    last_response_status integer,
    last_error           text,
    next_attempt_at      timestamptz,
    CONSTRAINT webhook_deliveries_webhook_id_fkey FOREIGN KEY (webhook_id)
        REFERENCES __SCHEMA__.webhooks (id) ON DELETE CASCADE
);

-- A webhook's deliveries, newest first (the list, and the cascade of a webhook's delete).
CREATE INDEX webhook_deliveries_list_idx
    ON __SCHEMA__.webhook_deliveries (webhook_id, created_at DESC, id DESC);
-- The pending ones by when they are due (claims).
CREATE INDEX webhook_deliveries_due_idx
    ON __SCHEMA__.webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
-- Retention.
CREATE INDEX webhook_deliveries_created_idx ON __SCHEMA__.webhook_deliveries (created_at);
