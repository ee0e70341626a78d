-- kbench result store, schema version 10, PostgreSQL dialect: samples
-- packed in blocks (../sqlite/schema_v10.sql says why and how). BYTEA for
-- BLOB, and the old rows are packed here in SQL, in parts of 128 samples
-- in row id order: int8send and float8send write the same big-endian
-- bytes as kbench.
CREATE TABLE sample_blocks (
    run_id  BIGINT NOT NULL,
    test_id BIGINT NOT NULL,
    part    BIGINT NOT NULL,
    samples BYTEA  NOT NULL,
    PRIMARY KEY (run_id, test_id, part)
);
INSERT INTO sample_blocks (run_id, test_id, part, samples)
    SELECT run_id, test_id, part,
           string_agg(int8send(round) || float8send(value) || int8send(iterations)
                          || int8send(at_ms), ''::bytea ORDER BY id)
    FROM (SELECT s.*,
                 (row_number() OVER (PARTITION BY run_id, test_id ORDER BY id) - 1) / 128
                     AS part
          FROM samples s) numbered
    GROUP BY run_id, test_id, part;
DROP TABLE samples;
CREATE INDEX sample_blocks_by_test ON sample_blocks (test_id);
