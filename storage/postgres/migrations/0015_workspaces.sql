-- assetlib-postgres schema, version 15: workspaces.
--
-- Assets and API keys get a workspace (`workspace_id`, NULL for none: every existing record);
-- libraries had one already. Slugs are unique per workspace: the unique indexes on
-- `(coalesce(workspace_id, ''), slug)` replace the ones on `slug` (a workspace id is never
-- empty, so '' stands for none), and answer a slug lookup of one workspace, or of all of them
-- through the slug alone.
--
-- The assets of a workspace are listed as the assets of a tag are: an asset of a workspace
-- keeps, after the keys of its tags in `tag_keys`, the key of its workspace (`E'\x01'` and
-- the workspace id; no tag key starts with a control character), so the trigger of version
-- 14 gives it rows in `asset_tags` and counts in `tag_counts`, and a workspace's list page
-- reads its range of the `(tag_key, published, <sort key>, asset_id)` index in order with its
-- total from a few count rows. The tag list leaves these keys out.
--
-- Slug numbers (`slug_counters`) are kept per workspace: the base of a slug of a workspace is
-- the workspace id, `/` and the slug (neither holds a `/`).

ALTER TABLE __SCHEMA__.assets ADD COLUMN workspace_id text COLLATE "C";
ALTER TABLE __SCHEMA__.assets DROP CONSTRAINT assets_slug_key;
CREATE UNIQUE INDEX assets_slug_key ON __SCHEMA__.assets ((coalesce(workspace_id, '')), slug);

ALTER TABLE __SCHEMA__.libraries DROP CONSTRAINT libraries_slug_key;
CREATE UNIQUE INDEX libraries_slug_key
    ON __SCHEMA__.libraries ((coalesce(workspace_id, '')), slug);
CREATE INDEX libraries_slug_idx ON __SCHEMA__.libraries (slug);

ALTER TABLE __SCHEMA__.api_keys ADD COLUMN workspace_id text COLLATE "C";
