-- kbench result store, schema version 2: the state of `kbench bisect`, so
-- that an interrupted bisection continues where it stopped. One row per
-- bisection, named after the result set its samples go to; the state is
-- the driver's own JSON document (kbench-lab `bisect::state`), replaced
-- after every step. Samples stay in `samples`; the state only says which
-- commits were skipped and what was decided.
CREATE TABLE bisects (
    name          TEXT   NOT NULL PRIMARY KEY,
    state_json    TEXT   NOT NULL,
    updated_at_ms BIGINT NOT NULL
);
