-- kbench result store, schema version 4: runs uploaded while they go on,
-- and the lab's job queue (`kbench serve` with workers).
--
-- runs.uid: a run's id across stores, random, given by the process that
-- measures it (`kbench run --upload`). The server finds a live-uploaded or
-- resumed run by it, and an import or push of a run already stored is
-- refused by it. Runs stored before version 4 have none (NULL; a UNIQUE
-- index allows any number of NULLs).
ALTER TABLE runs ADD COLUMN uid TEXT;
CREATE UNIQUE INDEX runs_by_uid ON runs (uid);

-- jobs: what the lab's workers are asked to run (`kbench job submit`).
-- `spec_json` is the whole request (kbench_store::JobSpec); the columns
-- beside it repeat what is searched or shown without reading the JSON:
-- `tags` (comma-separated; tags are letters, digits, '-', '_' and '.'),
-- the result set and identifier. A worker leases a job until
-- `lease_expires_at_ms` and renews the lease while it works; a lease that
-- expires means the worker died, and the job is leased again (`attempts`
-- counts the leases) until it has lost kbench_store::MAX_JOB_ATTEMPTS
-- workers, when it is failed. `worker` is the one holding or last holding
-- the lease; `lease_expires_at_ms` is NULL again once the job is done or
-- failed, and `message` says how it ended.
CREATE TABLE jobs (
    id                  INTEGER PRIMARY KEY,
    spec_json           TEXT    NOT NULL,
    tags                TEXT    NOT NULL,
    set_name            TEXT    NOT NULL,
    identifier          TEXT    NOT NULL,
    state               TEXT    NOT NULL
        CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts            BIGINT  NOT NULL,
    worker              TEXT,
    lease_expires_at_ms BIGINT,
    submitted_at_ms     BIGINT  NOT NULL,
    started_at_ms       BIGINT,
    finished_at_ms      BIGINT,
    message             TEXT
);
-- Serves leasing: the oldest queued or running job, past the done ones.
CREATE INDEX jobs_by_state ON jobs (state, id);

-- workers: every worker as last seen (when it asked for a job or renewed
-- a lease), with its tags (comma-separated) and the job it holds, if any.
CREATE TABLE workers (
    name         TEXT   NOT NULL PRIMARY KEY,
    tags         TEXT   NOT NULL,
    last_seen_ms BIGINT NOT NULL,
    job_id       BIGINT REFERENCES jobs (id)
);
