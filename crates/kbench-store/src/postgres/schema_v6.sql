-- kbench result store, schema version 6, PostgreSQL dialect: set titles,
-- descriptions and identifier factors (see ../sqlite/schema_v6.sql for
-- what each holds).
ALTER TABLE result_sets ADD COLUMN title TEXT;
ALTER TABLE result_sets ADD COLUMN description TEXT;
ALTER TABLE identifiers ADD COLUMN factors_json TEXT NOT NULL DEFAULT '{}';
