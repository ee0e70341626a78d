-- kbench result store, schema version 7: reads that fit the question.
--
-- A report reads only the part of a result set it needs (Results::load_part):
-- the identifiers it compares, the tests its --metric matches. The samples
-- of an identifier are reached through runs_by_identifier and
-- samples_by_run_round, those of a test through samples_by_test_run (all
-- of version 1). What version 1 lacked is the order: a set's identifiers
-- and tests are read in stored order (position, id), and a run's samples
-- in measurement order (id); these indexes give each in that order, so no
-- query sorts what it reads beyond merging an identifier's runs.
CREATE INDEX identifiers_by_set ON identifiers (set_id, position, id);
CREATE INDEX tests_by_set ON tests (set_id, position, id);
CREATE INDEX samples_by_run ON samples (run_id, id);
