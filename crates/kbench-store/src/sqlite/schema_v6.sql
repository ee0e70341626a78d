-- kbench result store, schema version 6: results as their authors arrange
-- them.
--
-- result_sets.title, result_sets.description: the author's title and
-- description of the set (`kbench set edit`), NULL when none was given.
ALTER TABLE result_sets ADD COLUMN title TEXT;
ALTER TABLE result_sets ADD COLUMN description TEXT;

-- identifiers.factors_json: the identifier's factors of a designed
-- experiment as a JSON object of name -> level ({"kernel": "patched"});
-- '{}' for identifiers stored before version 6 and those without any.
ALTER TABLE identifiers ADD COLUMN factors_json TEXT NOT NULL DEFAULT '{}';
