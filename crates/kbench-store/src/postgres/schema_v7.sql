-- kbench result store, schema version 7, PostgreSQL dialect: the indexes
-- of reads that fit the question (see ../sqlite/schema_v7.sql for what
-- each serves). The same statements.
CREATE INDEX identifiers_by_set ON identifiers (set_id, position, id);
CREATE INDEX tests_by_set ON tests (set_id, position, id);
CREATE INDEX samples_by_run ON samples (run_id, id);
