//! [`Results`]: what was stored, read back in one read transaction each.

use super::blocks::unpack;
use super::convert::{from_json, narrow};
use super::outline::{read_outline, read_overviews};
use super::records::{
    RUN_COLUMN_COUNT, add_outcomes, identifier_runs, no_run, read_run, read_tests, run_columns,
    set_header,
};
use super::{Fail, Res, Row, Sql, args, transaction, with};
use crate::outline::{OutlinePages, SetOutline, SetOverview};
use crate::{
    IdentifierData, Result, ResultSetData, ResultSetSummary, Results, RunContents, RunId, SetPart,
};
use kbench_model::results::test_matches;
use kbench_model::{Sample, TestKey};
use std::collections::{BTreeMap, HashMap};

/// The blocks of samples of one identifier, then of one test, each row as
/// [`Grouper::add`] reads it, aborted runs' left out as their runs are.
/// Unordered: each group is put in measurement order (run by run)
/// afterwards.
const SAMPLES_OF_IDENTIFIER: &str = "SELECT r.identifier_id, b.run_id, b.test_id, b.part, \
     b.samples FROM sample_blocks b JOIN runs r ON r.id = b.run_id \
     WHERE r.identifier_id = ?1 AND r.aborted_at_ms IS NULL";
const SAMPLES_OF_TEST: &str = "SELECT r.identifier_id, b.run_id, b.test_id, b.part, \
     b.samples FROM sample_blocks b JOIN runs r ON r.id = b.run_id \
     WHERE b.test_id = ?1 AND r.aborted_at_ms IS NULL";

/// Reads the `part` of a result set ([`SetPart`]); inside a read
/// transaction. Samples are read one statement per identifier read, or,
/// with a metric filter, one per matching test: each goes through an index
/// (`runs_by_identifier` and `sample_blocks`' key; `sample_blocks_by_test`),
/// so what is not asked for is not read.
fn load_set(db: &mut dyn Sql, set: &str, part: &SetPart) -> Res<ResultSetData> {
    let (set_id, title, description) = set_header(db, set)?;

    let (mut tests, mut keys) = read_tests(
        db,
        "SELECT id, benchmark, options, metric, unit, direction FROM tests \
         WHERE set_id = ?1 ORDER BY position, id",
        args![set_id],
    )?;
    let filter = part.metric_filter.as_deref();
    tests.retain(|spec| test_matches(&spec.key, filter));
    keys.retain(|_, key| test_matches(key, filter));

    let mut identifiers = Vec::new();
    // Row id -> index in `identifiers`, of the identifiers read whole.
    let mut index = HashMap::new();
    db.query(
        "SELECT id, name, factors_json FROM identifiers WHERE set_id = ?1 \
         ORDER BY position, id",
        args![set_id],
        &mut |row| {
            let name = row.req_text(1)?;
            if part.reads(&name, identifiers.len()) {
                index.insert(row.req_int(0)?, identifiers.len());
            }
            identifiers.push(IdentifierData {
                name,
                runs: Vec::new(),
                samples: BTreeMap::new(),
                sample_runs: BTreeMap::new(),
                factors: from_json("an identifier's factors", &row.req_text(2)?)?,
            });
            Ok(())
        },
    )?;
    let mut read: Vec<(i64, usize)> = index.iter().map(|(&id, &at)| (id, at)).collect();
    read.sort_unstable_by_key(|&(_, at)| at);

    // Each run's position among its identifier's runs.
    let mut run_position = HashMap::new();
    for &(id, at) in &read {
        let runs = identifier_runs(db, id)?;
        for (position, run) in runs.iter().enumerate() {
            run_position.insert(run.id.0, position);
        }
        identifiers[at].runs = runs;
    }

    let mut grouper = Grouper {
        set,
        index: &index,
        run_position: &run_position,
        groups: Vec::new(),
        group_of: HashMap::new(),
    };
    if filter.is_some() {
        let mut wanted: Vec<i64> = keys.keys().copied().collect();
        wanted.sort_unstable();
        for test in wanted {
            db.query(SAMPLES_OF_TEST, args![test], &mut |row| grouper.add(row))?;
        }
    } else {
        for &(id, _) in &read {
            db.query(SAMPLES_OF_IDENTIFIER, args![id], &mut |row| {
                grouper.add(row)
            })?;
        }
    }
    for group in grouper.into_groups() {
        let test = group.test;
        let key = keys.get(&test).ok_or_else(|| {
            Fail::Damaged(format!(
                "samples refer to test {test} of another result set"
            ))
        })?;
        let owner = group.owner;
        let (samples, runs) = group.in_order();
        identifiers[owner].samples.insert(key.clone(), samples);
        identifiers[owner].sample_runs.insert(key.clone(), runs);
    }

    Ok(ResultSetData {
        name: set.to_string(),
        title,
        description,
        tests,
        identifiers,
    })
}

/// Blocks of samples grouped by (identifier, test) as the rows of the
/// sample queries come, each with the position of its run among its
/// identifier's runs; blocks of identifiers not read are passed over.
struct Grouper<'a> {
    set: &'a str,
    /// Identifier row id -> index in the set's identifiers.
    index: &'a HashMap<i64, usize>,
    /// Run id -> position among its identifier's runs.
    run_position: &'a HashMap<i64, usize>,
    groups: Vec<Group>,
    group_of: HashMap<(usize, i64), usize>,
}

/// One identifier's samples of one test: its blocks, each with its run's
/// position and its part.
struct Group {
    /// Index in the set's identifiers.
    owner: usize,
    test: i64,
    blocks: Vec<((usize, i64), Vec<Sample>)>,
}

impl Group {
    /// The samples and their runs in measurement order: run by run, part
    /// by part, each block in its order.
    fn in_order(mut self) -> (Vec<Sample>, Vec<usize>) {
        self.blocks.sort_by_key(|&(at, _)| at);
        let mut samples = Vec::new();
        let mut runs = Vec::new();
        for ((position, _), block) in self.blocks {
            runs.extend(std::iter::repeat_n(position, block.len()));
            samples.extend(block);
        }
        (samples, runs)
    }
}

impl Grouper<'_> {
    fn add(&mut self, row: &dyn Row) -> Res<()> {
        let (identifier, run, test) = (row.req_int(0)?, row.req_int(1)?, row.req_int(2)?);
        let Some(&owner) = self.index.get(&identifier) else {
            return Ok(());
        };
        let position = *self.run_position.get(&run).ok_or_else(|| {
            Fail::Damaged(format!(
                "a sample's run {run} is not in result set \"{}\"",
                self.set
            ))
        })?;
        let groups = &mut self.groups;
        let group = *self.group_of.entry((owner, test)).or_insert_with(|| {
            groups.push(Group {
                owner,
                test,
                blocks: Vec::new(),
            });
            groups.len() - 1
        });
        let block = unpack(&row.req_blob(4)?)?;
        self.groups[group]
            .blocks
            .push(((position, row.req_int(3)?), block));
        Ok(())
    }

    fn into_groups(self) -> Vec<Group> {
        self.groups
    }
}

/// One run with its set, identifier, tests and samples; inside a read
/// transaction.
fn read_run_contents(db: &mut dyn Sql, run: RunId) -> Res<RunContents> {
    let mut found = None;
    db.query(
        concat!(
            "SELECT ",
            run_columns!(),
            ", s.name, i.name FROM runs r \
             JOIN identifiers i ON i.id = r.identifier_id \
             JOIN result_sets s ON s.id = i.set_id WHERE r.id = ?1"
        ),
        args![run.0],
        &mut |row| {
            found = Some((
                read_run(row)?,
                row.req_text(RUN_COLUMN_COUNT)?,
                row.req_text(RUN_COLUMN_COUNT + 1)?,
            ));
            Ok(())
        },
    )?;
    let Some((record, set, identifier)) = found else {
        return Err(no_run(db, run));
    };
    let mut runs = [record];
    add_outcomes(db, &mut runs)?;
    let [record] = runs;
    let (tests, keys) = read_tests(
        db,
        "SELECT id, benchmark, options, metric, unit, direction FROM tests \
         WHERE id IN (SELECT test_id FROM sample_blocks WHERE run_id = ?1) \
            OR id IN (SELECT test_id FROM test_outcomes WHERE run_id = ?1) \
         ORDER BY position, id",
        args![run.0],
    )?;
    let mut samples: BTreeMap<TestKey, Vec<Sample>> = BTreeMap::new();
    db.query(
        "SELECT test_id, samples FROM sample_blocks WHERE run_id = ?1 ORDER BY test_id, part",
        args![run.0],
        &mut |row| {
            let test = row.req_int(0)?;
            let key = keys.get(&test).ok_or_else(|| {
                Fail::Damaged(format!("a sample of run {} has no test {test}", run.0))
            })?;
            let block = unpack(&row.req_blob(1)?)?;
            match samples.get_mut(key) {
                Some(list) => list.extend(block),
                None => {
                    samples.insert(key.clone(), block);
                }
            }
            Ok(())
        },
    )?;
    Ok(RunContents {
        set,
        identifier,
        record,
        tests,
        samples,
    })
}

fn list_sets(db: &mut dyn Sql) -> Res<Vec<ResultSetSummary>> {
    let mut sets = Vec::new();
    let mut ids = HashMap::new();
    db.query(
        "SELECT id, name, created_at_ms, title, \
           (SELECT COUNT(*) FROM tests t WHERE t.set_id = s.id), \
           (SELECT CAST(COALESCE(SUM(r.sample_count), 0) AS BIGINT) FROM runs r \
              JOIN identifiers i ON i.id = r.identifier_id WHERE i.set_id = s.id) \
         FROM result_sets s ORDER BY created_at_ms, id",
        args![],
        &mut |row| {
            ids.insert(row.req_int(0)?, sets.len());
            sets.push(ResultSetSummary {
                name: row.req_text(1)?,
                title: row.text(3)?,
                identifiers: Vec::new(),
                tests: narrow("test count", row.req_int(4)?)?,
                samples: narrow("sample count", row.req_int(5)?)?,
                created_at_ms: row.req_int(2)?,
            });
            Ok(())
        },
    )?;
    db.query(
        "SELECT set_id, name FROM identifiers ORDER BY set_id, position, id",
        args![],
        &mut |row| {
            if let Some(&set) = ids.get(&row.req_int(0)?) {
                sets[set].identifiers.push(row.req_text(1)?);
            }
            Ok(())
        },
    )?;
    Ok(sets)
}

impl<S: Sql> Results for S {
    fn result_sets(&mut self) -> Result<Vec<ResultSetSummary>> {
        with(self, "listing result sets", |db| {
            transaction(db, false, list_sets)
        })
    }

    fn load_part(&mut self, set: &str, part: &SetPart) -> Result<ResultSetData> {
        with(self, "loading a result set", |db| {
            transaction(db, false, |db| load_set(db, set, part))
        })
    }

    fn set_overviews(&mut self) -> Result<Vec<SetOverview>> {
        with(self, "listing result sets", |db| {
            transaction(db, false, read_overviews)
        })
    }

    fn outline(&mut self, set: &str, pages: OutlinePages) -> Result<SetOutline> {
        with(self, "outlining a result set", |db| {
            transaction(db, false, |db| read_outline(db, set, pages))
        })
    }

    fn run_contents(&mut self, run: RunId) -> Result<RunContents> {
        with(self, "reading a run", |db| {
            transaction(db, false, |db| read_run_contents(db, run))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::first_int;
    use super::super::recording::{Query, Recording};
    use super::*;
    use crate::{RunInfo, RunSink, RunStatus, SqliteStore};
    use kbench_model::{Direction, TestSpec};

    /// Set "lab" of `count` identifiers v0, v1..., each one run of two
    /// samples of tests "a" and "b".
    fn lab(count: usize) -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("results.db")).unwrap();
        let specs = ["a", "b"].map(|name| TestSpec {
            key: TestKey::new(name),
            unit: "ns".into(),
            direction: Direction::Lower,
        });
        for v in 0..count {
            let run = store
                .begin_run("lab", &format!("v{v}"), &RunInfo::default())
                .unwrap();
            for spec in &specs {
                let test = store.test_id("lab", spec).unwrap();
                for i in 0..2 {
                    let sample = Sample {
                        value: 10.0 + v as f64 + i as f64,
                        iterations: 1,
                        at_ms: i,
                        round: 0,
                    };
                    store.add_sample(run, test, &sample).unwrap();
                }
            }
            store.end_run(run, RunStatus::Complete, None).unwrap();
        }
        (dir, store)
    }

    fn identifier_id(store: &mut SqliteStore, name: &str) -> i64 {
        first_int(
            store,
            "SELECT id FROM identifiers WHERE name = ?1",
            args![name],
        )
        .ok()
        .flatten()
        .unwrap()
    }

    /// What `load_part` of the first and the last identifier of `lab(count)`
    /// asked the database, with the row ids of those two.
    fn first_and_last(count: usize) -> (ResultSetData, Vec<Query>, [i64; 2]) {
        let (_dir, mut store) = lab(count);
        let last = format!("v{}", count - 1);
        let wanted = [
            identifier_id(&mut store, "v0"),
            identifier_id(&mut store, &last),
        ];
        let mut recording = Recording {
            inner: store,
            queries: Vec::new(),
        };
        let part = SetPart {
            identifiers: Some(vec![last]),
            first: true,
            metric_filter: None,
        };
        let data = recording.load_part("lab", &part).unwrap();
        (data, recording.queries, wanted)
    }

    /// A comparison of 2 identifiers of 100 reads those 2: one statement
    /// each for their runs and their samples, naming only them, and only
    /// their samples come back; besides the listing of the names, the
    /// statements and their rows are those of the same read in a set of 3.
    #[test]
    fn two_of_a_hundred_identifiers_are_read_alone() {
        let (data, queries, wanted) = first_and_last(100);
        let read: Vec<&str> = data
            .identifiers
            .iter()
            .filter(|i| !i.runs.is_empty())
            .map(|i| i.name.as_str())
            .collect();
        assert_eq!(read, ["v0", "v99"]);
        assert_eq!(data.identifiers.len(), 100, "every name is listed");
        assert_eq!(data.sample_count(), 2 * 2 * 2);

        let of = |table: &str| -> Vec<&Query> {
            queries.iter().filter(|q| q.sql.contains(table)).collect()
        };
        for table in ["FROM sample_blocks", "FROM runs r WHERE"] {
            let reads = of(table);
            let named: Vec<i64> = reads.iter().flat_map(|q| q.ints.clone()).collect();
            assert_eq!(named, wanted, "{reads:#?}");
        }
        // A block per identifier and test: 2 x 2.
        assert_eq!(
            of("FROM sample_blocks")
                .iter()
                .map(|q| q.rows)
                .sum::<usize>(),
            4
        );

        let shape = |queries: &[Query]| -> Vec<(String, usize)> {
            queries
                .iter()
                .filter(|q| !q.sql.contains("FROM identifiers"))
                .map(|q| (q.sql.clone(), q.rows))
                .collect()
        };
        let (_, small, _) = first_and_last(3);
        assert_eq!(shape(&queries), shape(&small));
    }

    /// Blocks that come out of run and part order are put back in it.
    #[test]
    fn groups_are_put_in_measurement_order() {
        let sample = |value| Sample {
            value,
            iterations: 1,
            at_ms: 0,
            round: 0,
        };
        let group = Group {
            owner: 0,
            test: 1,
            blocks: vec![
                ((2, 0), vec![sample(7.0)]),
                ((1, 1), vec![sample(6.5)]),
                ((0, 0), vec![sample(3.0), sample(5.0)]),
                ((1, 0), vec![sample(6.0)]),
            ],
        };
        let (samples, runs) = group.in_order();
        let values: Vec<f64> = samples.iter().map(|s| s.value).collect();
        assert_eq!(values, [3.0, 5.0, 6.0, 6.5, 7.0]);
        assert_eq!(runs, [0, 0, 1, 1, 2]);
    }

    /// With a metric filter the samples are read test by test: only the
    /// tests it matches, for every identifier.
    #[test]
    fn a_metric_filter_reads_only_its_tests() {
        let (_dir, store) = lab(3);
        let mut recording = Recording {
            inner: store,
            queries: Vec::new(),
        };
        let part = SetPart {
            metric_filter: Some("b".into()),
            ..SetPart::all()
        };
        let data = recording.load_part("lab", &part).unwrap();
        let tests: Vec<String> = data.tests.iter().map(|t| t.key.to_string()).collect();
        assert_eq!(tests, ["b"]);
        assert_eq!(data.sample_count(), 3 * 2);
        let samples: Vec<_> = recording
            .queries
            .iter()
            .filter(|q| q.sql.contains("FROM sample_blocks"))
            .collect();
        assert_eq!(samples.len(), 1, "{samples:#?}");
        // A block of test "b" per identifier.
        assert_eq!(samples[0].rows, 3);
    }
}
