-- kbench result store, schema version 9, PostgreSQL dialect: each run's
-- count of samples (../sqlite/schema_v9.sql says why and what keeps it
-- exact). Existing runs are counted once, in one pass over the samples.
ALTER TABLE runs ADD COLUMN sample_count BIGINT NOT NULL DEFAULT 0;
UPDATE runs r SET sample_count = c.n
    FROM (SELECT run_id, COUNT(*) AS n FROM samples GROUP BY run_id) c
    WHERE c.run_id = r.id;
