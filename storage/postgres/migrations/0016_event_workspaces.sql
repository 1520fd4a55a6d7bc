-- assetlib-postgres schema, version 16: events and webhooks carry a workspace.
--
-- An event names the workspace of the record it is about (of its library, for a pass); a
-- webhook, the workspace whose events it receives. NULL for none: every existing event and
-- webhook. A workspace's feed reads the log in order, filtered by `workspace_id`; the index
-- keeps that read to the workspace's own rows.

ALTER TABLE __SCHEMA__.events ADD COLUMN workspace_id text COLLATE "C";
CREATE INDEX events_workspace_idx ON __SCHEMA__.events (workspace_id, xid, seq)
    WHERE workspace_id IS NOT NULL;

ALTER TABLE __SCHEMA__.webhooks ADD COLUMN workspace_id text COLLATE "C";
