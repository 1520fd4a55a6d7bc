-- assetlib-postgres schema, version 22: moving data (feature `transfer` of the crate; see
-- src/transfer.rs).
--
-- `transfer_mark` holds the mark a move (`migrate`, `restore`) leaves while it imports into
-- this store: at most one row, written before the move's first record and deleted after its
-- check, so a move cut short finds it and goes on.
CREATE TABLE __SCHEMA__.transfer_mark (
    one  boolean PRIMARY KEY DEFAULT true CHECK (one),
    mark text NOT NULL
);

-- Events by id: an import skips the events it holds already (an import cut short runs
-- again), and places a webhook's stream and each delivery at the event it names, in the
-- target's own log.
CREATE INDEX events_id_idx ON __SCHEMA__.events (id);
