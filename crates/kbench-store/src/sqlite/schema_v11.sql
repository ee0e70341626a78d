-- kbench result store, schema version 11: host calibrations.
--
-- `kbench calibrate` measures how far identical units of an unchanged
-- system (runs or boots) differ on one hardware, per test; a comparison
-- with one unit on a side takes its drift from there (docs/statistics.md,
-- "Measured apart"). A calibration is a row of `calibrations`, keyed by
-- the hardware (CPU model, memory in GiB, hashed machine id, empty when
-- the system has none) and the unit ('run' or 'boot'), never by the
-- kernel: `kernel_release` is what it ran on, for the reader. A host may
-- calibrate again: every calibration is kept, and they are listed newest
-- first (at_ms, then id).
--
-- calibration_drifts: its tests' drifts, written in the same transaction
-- as its row (engine/calibrations.rs), `position` keeping the order they
-- were measured in. `test` is the test's text form `bench[k=v,...]:metric`
-- (kbench_model::TestKey); `sd` is the SD of one unit's level on logs and
-- `df` its degrees of freedom.
--
-- A host keeps few calibrations, so they are read whole, without an index
-- beyond the drifts' key.
CREATE TABLE calibrations (
    id             INTEGER PRIMARY KEY,
    cpu_model      TEXT    NOT NULL,
    memory_gib     BIGINT  NOT NULL,
    machine_id     TEXT    NOT NULL,
    unit           TEXT    NOT NULL CHECK (unit IN ('run', 'boot')),
    at_ms          BIGINT  NOT NULL,
    pairs          BIGINT  NOT NULL,
    kernel_release TEXT    NOT NULL
);

CREATE TABLE calibration_drifts (
    calibration_id BIGINT           NOT NULL REFERENCES calibrations (id),
    position       INTEGER          NOT NULL,
    test           TEXT             NOT NULL,
    sd             DOUBLE PRECISION NOT NULL,
    df             DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (calibration_id, position)
);
