-- assetlib-postgres schema, version 16: events and webhooks carry a workspace, and a
-- workspace's assets have indexes of their own.
--
-- An event names the workspace of the record it is about (of its library, for a pass); a
-- webhook, the workspace whose events it receives. NULL for none: every existing event and
-- webhook. A workspace's feed reads the log in order, filtered by `workspace_id`; the index
-- keeps that read to the workspace's own rows.

ALTER TABLE __SCHEMA__.events ADD COLUMN workspace_id text COLLATE "C";
CREATE INDEX events_workspace_idx ON __SCHEMA__.events (workspace_id, xid, seq)
    WHERE workspace_id IS NOT NULL;

ALTER TABLE __SCHEMA__.webhooks ADD COLUMN workspace_id text COLLATE "C";

-- A workspace's asset list (without tags) reads the assets through these, in the order of
-- each sort, as the list of every asset reads `assets_all_*_idx`: no join to a list's rows.
-- Its total still comes from the workspace's count rows (`tag_counts`, version 15). Partial:
-- an asset of no workspace is in none of them.
CREATE INDEX assets_workspace_created_idx ON __SCHEMA__.assets (workspace_id, created_at, id)
    WHERE workspace_id IS NOT NULL;
CREATE INDEX assets_workspace_updated_idx ON __SCHEMA__.assets (workspace_id, updated_at, id)
    WHERE workspace_id IS NOT NULL;
CREATE INDEX assets_workspace_title_idx ON __SCHEMA__.assets (workspace_id, title_lower, id)
    WHERE workspace_id IS NOT NULL;
