//! [`Calibrations`]: a host's calibrations, a row of `calibrations` each
//! with its tests' drifts in `calibration_drifts` (schema version 11),
//! written together in one transaction and read back in one snapshot.

use super::check::valid;
use super::convert::{narrow, to_i64};
use super::{Fail, Res, Row, Sql, args, first_int, rows, transaction, with};
use crate::{Calibrations, Result, validate};
use kbench_model::{CalibratedUnit, Calibration, Hardware, TestDrift, TestKey};
use std::collections::HashMap;

/// Writes the calibration's row, then its drifts in order; its id.
fn insert(db: &mut dyn Sql, calibration: &Calibration) -> Res<i64> {
    let hardware = &calibration.hardware;
    let id = first_int(
        db,
        "INSERT INTO calibrations (cpu_model, memory_gib, machine_id, unit, at_ms, pairs, \
                                   kernel_release) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
        args![
            &hardware.cpu_model,
            to_i64("the memory in GiB", hardware.memory_gib)?,
            &hardware.machine_id,
            calibration.unit.as_str(),
            calibration.at_ms,
            calibration.pairs,
            &calibration.kernel_release
        ],
    )?
    .ok_or_else(|| Fail::Damaged("a calibration was inserted without an id".into()))?;
    for (position, drift) in (0_i64..).zip(&calibration.tests) {
        db.execute(
            "INSERT INTO calibration_drifts (calibration_id, position, test, sd, df) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            args![id, position, &drift.test.to_string(), drift.sd, drift.df],
        )?;
    }
    Ok(id)
}

/// A row of `calibrations` (id first), without its tests.
fn read_calibration(row: &dyn Row) -> Res<(i64, Calibration)> {
    let id = row.req_int(0)?;
    let unit = row.req_text(4)?;
    let calibration = Calibration {
        hardware: Hardware {
            cpu_model: row.req_text(1)?,
            memory_gib: narrow("the memory in GiB", row.req_int(2)?)?,
            machine_id: row.req_text(3)?,
        },
        unit: CalibratedUnit::parse(&unit).ok_or_else(|| {
            Fail::Damaged(format!("calibration {id} has an unknown unit {unit:?}"))
        })?,
        at_ms: row.req_int(5)?,
        pairs: narrow("the pairs of a calibration", row.req_int(6)?)?,
        kernel_release: row.req_text(7)?,
        tests: Vec::new(),
    };
    Ok((id, calibration))
}

/// A row of `calibration_drifts`: its calibration's id and the drift.
fn read_drift(row: &dyn Row) -> Res<(i64, TestDrift)> {
    let id = row.req_int(0)?;
    let text = row.req_text(1)?;
    let test = TestKey::parse(&text).map_err(|err| {
        Fail::Damaged(format!("a test of calibration {id} is not readable: {err}"))
    })?;
    Ok((
        id,
        TestDrift {
            test,
            sd: row.req_real(2)?,
            df: row.req_real(3)?,
        },
    ))
}

/// Every calibration, newest first, with its drifts in stored order.
fn read_all(db: &mut dyn Sql) -> Res<Vec<Calibration>> {
    let listed = rows(
        db,
        "SELECT id, cpu_model, memory_gib, machine_id, unit, at_ms, pairs, kernel_release \
         FROM calibrations ORDER BY at_ms DESC, id DESC",
        args![],
        read_calibration,
    )?;
    let mut drifts: HashMap<i64, Vec<TestDrift>> = HashMap::new();
    for (id, drift) in rows(
        db,
        "SELECT calibration_id, test, sd, df FROM calibration_drifts \
         ORDER BY calibration_id, position",
        args![],
        read_drift,
    )? {
        drifts.entry(id).or_default().push(drift);
    }
    listed
        .into_iter()
        .map(|(id, mut calibration)| {
            calibration.tests = drifts
                .remove(&id)
                .ok_or_else(|| Fail::Damaged(format!("calibration {id} has no test")))?;
            Ok(calibration)
        })
        .collect()
}

impl<S: Sql> Calibrations for S {
    fn record_calibration(&mut self, calibration: &Calibration) -> Result<i64> {
        with(self, "storing a calibration", |db| {
            valid(validate::calibration(calibration), || {
                format!(
                    "the {} calibration of {:?} ({} GiB)",
                    calibration.unit.as_str(),
                    calibration.hardware.cpu_model,
                    calibration.hardware.memory_gib
                )
            })?;
            transaction(db, true, |db| insert(db, calibration))
        })
    }

    fn calibrations(&mut self) -> Result<Vec<Calibration>> {
        with(self, "listing calibrations", |db| {
            transaction(db, false, read_all)
        })
    }
}
