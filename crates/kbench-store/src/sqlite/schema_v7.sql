-- kbench result store, schema version 7: reads that fit the question.
--
-- A report reads only the part of a result set it needs (Results::load_part):
-- the identifiers it compares, the tests its --metric matches. An
-- identifier's samples are reached through runs_by_identifier and
-- samples_by_run_round, a test's through samples_by_test_run (all of
-- version 1), and put in measurement order by the reader, so the
-- database sorts nothing large. What version 1 lacked is the stored order
-- of a set's identifiers and tests (position, id): these indexes give it,
-- so listing them sorts nothing either.
CREATE INDEX identifiers_by_set ON identifiers (set_id, position, id);
CREATE INDEX tests_by_set ON tests (set_id, position, id);
