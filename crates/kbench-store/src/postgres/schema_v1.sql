-- kbench result store, schema version 1, PostgreSQL dialect.
--
-- The same tables, columns, constraints and indexes as
-- ../sqlite/schema_v1.sql, with the edits its header lists:
--   * ids are `BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY` where SQLite
--     has `INTEGER PRIMARY KEY` (its auto-assigned rowid);
--   * every integer is BIGINT: SQLite's INTEGER is 64-bit, so `position`
--     and `round` keep the same range here;
--   * DOUBLE PRECISION, TEXT and the CHECK lists are unchanged.
-- Applied by postgres.rs in one transaction with the row of
-- kbench_schema_version that records it. Never edit once shipped.

-- A named collection of identifiers measured with the same tests.
CREATE TABLE result_sets (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          TEXT   NOT NULL UNIQUE,
    created_at_ms BIGINT NOT NULL
);

-- One system configuration under test (e.g. "6.18 stock"); `position`
-- keeps the order identifiers were first stored in.
CREATE TABLE identifiers (
    id       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    set_id   BIGINT NOT NULL REFERENCES result_sets (id),
    name     TEXT   NOT NULL,
    position BIGINT NOT NULL,
    UNIQUE (set_id, name)
);

-- One invocation of `kbench run` (or a resumed one) for an identifier.
-- A run that never ended keeps status 'running' and no end time.
CREATE TABLE runs (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    identifier_id BIGINT NOT NULL REFERENCES identifiers (id),
    status        TEXT   NOT NULL
        CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    started_at_ms BIGINT NOT NULL,
    ended_at_ms   BIGINT,
    pid           BIGINT NOT NULL,
    wrapper       TEXT,
    tool_version  TEXT   NOT NULL,
    snapshot_json TEXT   NOT NULL,
    host_json     TEXT,
    notes_json    TEXT   NOT NULL,
    -- Steal time while the run went on, in percent; known at its end.
    steal_percent DOUBLE PRECISION
);
CREATE INDEX runs_by_identifier ON runs (identifier_id, id);

-- What is measured: benchmark, canonical options text `k=v,k=v` (sorted by
-- key, empty when none) and metric, with the unit and the better direction.
CREATE TABLE tests (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    set_id    BIGINT NOT NULL REFERENCES result_sets (id),
    benchmark TEXT   NOT NULL,
    options   TEXT   NOT NULL,
    metric    TEXT   NOT NULL,
    unit      TEXT   NOT NULL,
    direction TEXT   NOT NULL CHECK (direction IN ('lower', 'higher')),
    position  BIGINT NOT NULL,
    UNIQUE (set_id, benchmark, options, metric)
);

-- Every raw sample, in the unit of its test; `id` order is measurement order.
CREATE TABLE samples (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id     BIGINT           NOT NULL REFERENCES runs (id),
    test_id    BIGINT           NOT NULL REFERENCES tests (id),
    round      BIGINT           NOT NULL,
    value      DOUBLE PRECISION NOT NULL,
    iterations BIGINT           NOT NULL,
    at_ms      BIGINT           NOT NULL
);
CREATE INDEX samples_by_test_run ON samples (test_id, run_id);
-- Serves loading a set run by run and `last_round` (max round of a run).
CREATE INDEX samples_by_run_round ON samples (run_id, round);

-- How a test ended in a run (target met, budget hit, skipped, failed).
CREATE TABLE test_outcomes (
    run_id  BIGINT NOT NULL REFERENCES runs (id),
    test_id BIGINT NOT NULL REFERENCES tests (id),
    kind    TEXT   NOT NULL
        CHECK (kind IN ('target_met', 'budget_hit', 'skipped', 'failed')),
    detail  TEXT   NOT NULL,
    PRIMARY KEY (run_id, test_id)
);
