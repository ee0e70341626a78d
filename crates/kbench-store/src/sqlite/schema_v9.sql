-- kbench result store, schema version 9: each run's count of samples.
--
-- The listing of result sets (`kbench show`, GET /api/v1/result-sets)
-- says how many samples each set holds. Counting them joined every sample
-- of every set on each call: 3.6 s for 10 M samples in PostgreSQL. Each
-- run now keeps its own count, and a set's is the sum over its runs (a
-- few hundred rows, through runs_by_identifier).
--
-- The store's code keeps it exact: every statement that adds samples to
-- a run adds their number to runs.sample_count in the same transaction
-- (a run's own samples, live batches, import, push); samples are never
-- deleted but with their run (removing an identifier).
--
-- Existing runs are counted once here.
ALTER TABLE runs ADD COLUMN sample_count BIGINT NOT NULL DEFAULT 0;
UPDATE runs SET sample_count = (SELECT COUNT(*) FROM samples x WHERE x.run_id = runs.id);
