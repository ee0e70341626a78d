-- kbench result store, schema version 7, PostgreSQL dialect: a set's
-- identifiers and tests in stored order (see ../sqlite/schema_v7.sql).
-- The same statements.
CREATE INDEX identifiers_by_set ON identifiers (set_id, position, id);
CREATE INDEX tests_by_set ON tests (set_id, position, id);
