-- assetlib-postgres schema, version 9: the assets version moves once per asset row written.
--
-- Until version 8 the version moved (and the `a` notice went out) after every statement on
-- `assets`, even one that wrote no row. An insert whose wanted slug is taken is such a
-- statement (`ON CONFLICT (slug) DO NOTHING`): it made the transaction a write, so a create
-- of a taken title committed twice to the disk (the empty attempt, then the numbered slug) and
-- told every replica that the assets changed when they had not. As a row trigger the bump
-- runs only for a row written; a statement that writes none writes nothing, commits without a
-- flush and sends no notice. A transaction writes at most one asset, so it still moves the
-- version once, after its row triggers on `asset_counts` as before (row triggers fire in name
-- order: `assets_count_insert_delete` and `assets_count_update` before `assets_version`), and
-- takes its row locks in the same order. Download counts stay a statement trigger on
-- `asset_counters`: a counter flush updates many rows in one statement and moves it once.
DROP TRIGGER assets_version ON __SCHEMA__.assets;
CREATE TRIGGER assets_version AFTER INSERT OR UPDATE OR DELETE ON __SCHEMA__.assets
    FOR EACH ROW EXECUTE FUNCTION __SCHEMA__.bump_assets_version();
