-- kbench result store, schema version 12, PostgreSQL dialect: campaigns,
-- and aborted runs (../sqlite/schema_v12.sql says what they hold). The
-- same table and column.
CREATE TABLE campaigns (
    name          TEXT   NOT NULL PRIMARY KEY,
    state_json    TEXT   NOT NULL,
    updated_at_ms BIGINT NOT NULL
);

ALTER TABLE runs ADD COLUMN aborted_at_ms BIGINT;
