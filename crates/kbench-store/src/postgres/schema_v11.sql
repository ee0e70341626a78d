-- kbench result store, schema version 11, PostgreSQL dialect: host
-- calibrations (../sqlite/schema_v11.sql says what each table holds). The
-- same tables, columns and constraints, with the edits of schema_v1.sql:
-- the calibration id `BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY`,
-- every integer BIGINT.
CREATE TABLE calibrations (
    id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    cpu_model      TEXT   NOT NULL,
    memory_gib     BIGINT NOT NULL,
    machine_id     TEXT   NOT NULL,
    unit           TEXT   NOT NULL CHECK (unit IN ('run', 'boot')),
    at_ms          BIGINT NOT NULL,
    pairs          BIGINT NOT NULL,
    kernel_release TEXT   NOT NULL
);

CREATE TABLE calibration_drifts (
    calibration_id BIGINT           NOT NULL REFERENCES calibrations (id),
    position       BIGINT           NOT NULL,
    test           TEXT             NOT NULL,
    sd             DOUBLE PRECISION NOT NULL,
    df             DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (calibration_id, position)
);
