-- kbench result store, schema version 12: campaigns, and aborted runs.
--
-- `kbench campaign` measures kernels one boot at a time, resuming itself
-- after each boot. Its state (the plan of boots, each boot's status, how
-- to switch kernels) is the campaign's own JSON document
-- (kbench_model::campaign), one row per campaign, replaced after every
-- step, as `bisects` holds a bisection's.
--
-- runs.aborted_at_ms: when a run was found cut short by the machine going
-- down (a crash or power loss mid-invocation) and marked aborted. Its
-- samples are kept, its status stays 'failed' (what a reader that does
-- not know the column sees), and the reason is among its notes; reports
-- leave aborted runs out, since the boot is measured again. NULL for
-- every other run.
CREATE TABLE campaigns (
    name          TEXT   NOT NULL PRIMARY KEY,
    state_json    TEXT   NOT NULL,
    updated_at_ms BIGINT NOT NULL
);

ALTER TABLE runs ADD COLUMN aborted_at_ms BIGINT;
