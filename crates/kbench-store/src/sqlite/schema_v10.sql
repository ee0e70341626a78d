-- kbench result store, schema version 10: samples packed in blocks.
--
-- Up to version 9 every sample was a row of `samples`, with a row id and
-- two indexes: 2 M samples were 2 M rows and 6 M index entries to write.
-- PostgreSQL alone needed 4.7 s to insert 2 M such rows with no index at
-- all, so an import could not take the 3 s issue 17 asks. Now the samples
-- of one test in one run are packed into `samples`: 32 bytes a sample in
-- measurement order, each field a big-endian 64-bit value (round, value
-- as IEEE 754 bits, iterations, at_ms), as PostgreSQL's int8send and
-- float8send write them. engine/blocks.rs packs and reads them.
--
-- A run and test's samples are split in parts of at most 128 samples
-- (4 KB), numbered from 0 in `part`: a new sample of a run rewrites only
-- its last part, in the transaction that checks its run and test
-- (engine/run_sink.rs).
--
-- Measurement order within a run and test is the order of its parts and
-- of the samples in each; across runs, the order of the runs (their ids).
--
-- The old rows are packed by kbench itself (sqlite/open.rs, after this
-- script; SQLite has no function that writes a double's bytes), then
-- `samples` is dropped, all in the migration's one transaction.
CREATE TABLE sample_blocks (
    run_id  BIGINT  NOT NULL,
    test_id BIGINT  NOT NULL,
    part    INTEGER NOT NULL,
    samples BLOB    NOT NULL,
    PRIMARY KEY (run_id, test_id, part)
);
CREATE INDEX sample_blocks_by_test ON sample_blocks (test_id);
