-- kbench result store, schema version 8: samples without foreign keys.
--
-- samples.run_id and samples.test_id no longer reference runs and tests.
-- PostgreSQL checks a foreign key row by row, each check a query that
-- locks the referenced row: on an import of 2 M samples they took two
-- thirds of the time. The store's code keeps what they promised, on both
-- stores alike:
--   * samples are written only in the transaction that wrote their run
--     (import, push), or that holds the run's row (a run's own samples,
--     live uploads; PostgreSQL locks it FOR KEY SHARE or by updating it);
--   * removing an identifier deletes its runs, then their samples, and
--     deleting a run waits for a transaction holding its row;
--   * tests are never deleted.
--
-- SQLite cannot drop a constraint: the table is made again without them,
-- keeping every row and its id (measurement order), and its indexes.
CREATE TABLE samples_v8 (
    id         INTEGER PRIMARY KEY,
    run_id     BIGINT           NOT NULL,
    test_id    BIGINT           NOT NULL,
    round      INTEGER          NOT NULL,
    value      DOUBLE PRECISION NOT NULL,
    iterations BIGINT           NOT NULL,
    at_ms      BIGINT           NOT NULL
);
INSERT INTO samples_v8 (id, run_id, test_id, round, value, iterations, at_ms)
    SELECT id, run_id, test_id, round, value, iterations, at_ms FROM samples ORDER BY id;
DROP TABLE samples;
ALTER TABLE samples_v8 RENAME TO samples;
CREATE INDEX samples_by_test_run ON samples (test_id, run_id);
CREATE INDEX samples_by_run_round ON samples (run_id, round);
