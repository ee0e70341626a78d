-- kbench result store, schema version 2, PostgreSQL dialect: the state of
-- `kbench bisect` (see ../sqlite/schema_v2.sql; the same table, unchanged:
-- it has no id column and no INTEGER).
CREATE TABLE bisects (
    name          TEXT   NOT NULL PRIMARY KEY,
    state_json    TEXT   NOT NULL,
    updated_at_ms BIGINT NOT NULL
);
