-- kbench result store, schema version 4, PostgreSQL dialect: run uids and
-- the lab's job queue (see ../sqlite/schema_v4.sql for what each holds).
-- The same tables, columns, constraints and indexes, with the job id
-- `BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY` as in schema_v1.sql.
ALTER TABLE runs ADD COLUMN uid TEXT;
CREATE UNIQUE INDEX runs_by_uid ON runs (uid);

CREATE TABLE jobs (
    id                  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    spec_json           TEXT   NOT NULL,
    tags                TEXT   NOT NULL,
    set_name            TEXT   NOT NULL,
    identifier          TEXT   NOT NULL,
    state               TEXT   NOT NULL
        CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts            BIGINT NOT NULL,
    worker              TEXT,
    lease_expires_at_ms BIGINT,
    submitted_at_ms     BIGINT NOT NULL,
    started_at_ms       BIGINT,
    finished_at_ms      BIGINT,
    message             TEXT
);
CREATE INDEX jobs_by_state ON jobs (state, id);

CREATE TABLE workers (
    name         TEXT   NOT NULL PRIMARY KEY,
    tags         TEXT   NOT NULL,
    last_seen_ms BIGINT NOT NULL,
    job_id       BIGINT REFERENCES jobs (id)
);
