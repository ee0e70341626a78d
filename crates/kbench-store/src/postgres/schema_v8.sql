-- kbench result store, schema version 8, PostgreSQL dialect: samples
-- without foreign keys (../sqlite/schema_v8.sql says why, and what keeps
-- samples and their runs together instead). The constraints' names are
-- those PostgreSQL gave them in version 1.
ALTER TABLE samples
    DROP CONSTRAINT samples_run_id_fkey,
    DROP CONSTRAINT samples_test_id_fkey;
