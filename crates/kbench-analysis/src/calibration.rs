//! The host's drift: a calibration measured from A/A units (`kbench
//! calibrate` runs or boots one system in turn), and the choice of the
//! calibration a comparison of identifiers measured apart uses, with what
//! the report says of it.

use crate::number::date;
use crate::sides::filtered_specs;
use crate::units::units_of;
use kbench_model::results::{IdentifierData, ResultSetData};
use kbench_model::{CalibratedUnit, Calibration, Hardware, TestDrift, TestKey};
use kbench_stats::compare::{DEFAULT_DRIFT, Drift, DriftSource, UnitKind};

/// Why a calibration could not be measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error("the calibration measured nothing: result set '{set}' has no identifier")]
    Empty { set: String },
    #[error(
        "the calibration's runs ran on different hardware ({first}; {other}): calibrate on one \
         machine"
    )]
    MixedHardware { first: String, other: String },
    #[error(
        "no test gave two pairs of {unit}s ({pairs} asked): the runs failed or left tests \
         out; see their errors above, or calibrate other tests"
    )]
    NoTest { unit: &'static str, pairs: u32 },
}

/// The calibration of the set's first identifier, whose runs are the A/A
/// units in the order measured: per result test, the drift of its
/// consecutive pairs of `unit`s ([`Drift::calibrated`]). Tests that
/// measured fewer than two pairs are left out.
pub fn measure(
    data: &ResultSetData,
    unit: CalibratedUnit,
    pairs: u32,
    at_ms: i64,
) -> Result<Calibration, CalibrationError> {
    let identifier = data
        .identifiers
        .first()
        .ok_or_else(|| CalibrationError::Empty {
            set: data.name.clone(),
        })?;
    let hardware = one_hardware(identifier)?;
    let kind = level(unit);
    let tests: Vec<TestDrift> = filtered_specs(data, None)
        .iter()
        .filter_map(|spec| {
            let units = units_of(identifier, &spec.key, kind)?;
            let drift = Drift::calibrated(&units, at_ms).ok()?;
            Some(TestDrift {
                test: spec.key.clone(),
                sd: drift.variance.sqrt(),
                df: drift.df,
            })
        })
        .collect();
    if tests.is_empty() {
        return Err(CalibrationError::NoTest {
            unit: unit.as_str(),
            pairs,
        });
    }
    let kernel_release = identifier
        .runs
        .first()
        .map(|run| run.info.snapshot.kernel_release.clone())
        .unwrap_or_default();
    Ok(Calibration {
        hardware,
        unit,
        at_ms,
        pairs,
        kernel_release,
        tests,
    })
}

/// The hardware every run of the identifier measured on.
fn one_hardware(identifier: &IdentifierData) -> Result<Hardware, CalibrationError> {
    let mut all = hardware_of(identifier).into_iter();
    let first = all.next().ok_or_else(|| CalibrationError::Empty {
        set: identifier.name.clone(),
    })?;
    match all.next() {
        Some(other) => Err(CalibrationError::MixedHardware {
            first: first.to_string(),
            other: other.to_string(),
        }),
        None => Ok(first),
    }
}

/// The distinct hardware of an identifier's runs.
fn hardware_of(identifier: &IdentifierData) -> Vec<Hardware> {
    let mut all: Vec<Hardware> = vec![];
    for run in &identifier.runs {
        let hardware = Hardware::of(&run.info.snapshot, run.info.host.as_ref());
        if !all.contains(&hardware) {
            all.push(hardware);
        }
    }
    all
}

fn level(unit: CalibratedUnit) -> UnitKind {
    match unit {
        CalibratedUnit::Run => UnitKind::Run,
        CalibratedUnit::Boot => UnitKind::Boot,
    }
}

/// The calibration a comparison measured apart at `level` uses: the
/// newest of the hardware both sides ran on, of that unit, with a note
/// when calibrations exist but none fits. Without one, each test's drift
/// is [`DEFAULT_DRIFT`].
#[derive(Debug, Clone, PartialEq)]
pub struct Prior<'a> {
    calibration: Option<&'a Calibration>,
    /// Said once in the report when a calibration was not used.
    pub note: Option<String>,
}

impl<'a> Prior<'a> {
    pub fn choose(
        calibrations: &'a [Calibration],
        baseline: &IdentifierData,
        current: &IdentifierData,
        level: UnitKind,
    ) -> Prior<'a> {
        if calibrations.is_empty() {
            return Prior {
                calibration: None,
                note: None,
            };
        }
        let mut hardware = hardware_of(baseline);
        for h in hardware_of(current) {
            if !hardware.contains(&h) {
                hardware.push(h);
            }
        }
        let unit = match level {
            UnitKind::Run => CalibratedUnit::Run,
            UnitKind::Boot => CalibratedUnit::Boot,
        };
        let [ran_on] = hardware.as_slice() else {
            return Prior {
                calibration: None,
                note: Some(format!(
                    "'{}' and '{}' ran on {} different machines: no calibration of this host's \
                     drift applies, the default is used.",
                    baseline.name,
                    current.name,
                    hardware.len()
                )),
            };
        };
        let of_hardware = || calibrations.iter().filter(|c| &c.hardware == ran_on);
        // Newest first, as the store returns them.
        if let Some(calibration) = of_hardware().find(|c| c.unit == unit) {
            return Prior {
                calibration: Some(calibration),
                note: None,
            };
        }
        let note = match of_hardware().next() {
            Some(other) => format!(
                "This host's calibration is of {}s ({}), and '{}' against '{}' was decided on \
                 {}s: it is not used (`kbench calibrate{}` measures {}s).",
                other.unit.as_str(),
                date(other.at_ms),
                current.name,
                baseline.name,
                unit.as_str(),
                if unit == CalibratedUnit::Boot {
                    " --kernel K"
                } else {
                    ""
                },
                unit.as_str(),
            ),
            None => format!(
                "The stored calibrations are of other hardware ({}), not of the one '{}' \
                 and '{}' ran on ({ran_on}): they are not used.",
                calibrations[0].hardware, baseline.name, current.name
            ),
        };
        Prior {
            calibration: None,
            note: Some(note),
        }
    }

    /// The drift prior of `test`: the calibration's, or the default.
    pub fn drift(&self, test: &TestKey) -> Drift {
        self.calibration
            .and_then(|c| {
                let drift = c.drift_of(test)?;
                Some(Drift {
                    variance: drift.sd * drift.sd,
                    df: drift.df,
                    source: DriftSource::Calibrated {
                        pairs: c.pairs as usize,
                        at_ms: c.at_ms,
                    },
                })
            })
            .unwrap_or(DEFAULT_DRIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::results::{RunId, RunInfo, RunRecord, RunStatus};
    use kbench_model::{SystemSnapshot, TestSpec};

    fn key() -> TestKey {
        TestKey::new("syscall-null")
    }

    fn snapshot(cpu: &str) -> SystemSnapshot {
        SystemSnapshot {
            cpu_model: cpu.into(),
            memory_total_kib: 24 * 1024 * 1024,
            machine_id: "m1".into(),
            boot_id: "b1".into(),
            ..SystemSnapshot::default()
        }
    }

    /// An identifier of one run per value, each its own invocation on
    /// `cpu`, measuring syscall-null at about `values[i]`.
    fn identifier(name: &str, cpu: &str, values: &[f64]) -> IdentifierData {
        let runs = (0..values.len())
            .map(|i| RunRecord {
                id: RunId(i as i64 + 1),
                status: RunStatus::Complete,
                info: RunInfo {
                    snapshot: snapshot(cpu),
                    pid: 100 + i as u32,
                    started_at_ms: 1000 * i as i64,
                    ..RunInfo::default()
                },
                ended_at_ms: None,
                outcomes: vec![],
            })
            .collect();
        let samples: Vec<[f64; 2]> = values.iter().map(|&v| [v * 0.99, v * 1.01]).collect();
        crate::fixtures::of_runs(name, runs, key(), &samples)
    }

    fn set(identifier: IdentifierData) -> ResultSetData {
        ResultSetData {
            name: "calibration".into(),
            title: None,
            description: None,
            tests: vec![TestSpec {
                key: key(),
                unit: "ns".into(),
                direction: kbench_model::Direction::Lower,
            }],
            identifiers: vec![identifier],
        }
    }

    /// Pairs (100, 102), (101, 99): d = ln 1.02, ln(99/101); the drift is
    /// half their sample variance, on 1 df.
    #[test]
    fn measured_from_consecutive_pairs_of_runs() {
        let data = set(identifier(
            "calibration",
            "EPYC",
            &[100.0, 102.0, 101.0, 99.0],
        ));
        let c = measure(&data, CalibratedUnit::Run, 2, 7).unwrap();
        assert_eq!(c.hardware.cpu_model, "EPYC");
        assert_eq!(c.hardware.memory_gib, 24);
        assert_eq!((c.unit, c.pairs, c.at_ms), (CalibratedUnit::Run, 2, 7));
        let d = [(102.0f64 / 100.0).ln(), (99.0f64 / 101.0).ln()];
        let variance = (d[0] - d[1]).powi(2) / 2.0;
        let drift = c.drift_of(&key()).unwrap();
        assert!(
            (drift.sd - (variance / 2.0).sqrt()).abs() < 1e-12,
            "{drift:?}"
        );
        assert_eq!(drift.df, 1.0);
        // One pair only: no test gives a drift.
        let short = set(identifier("calibration", "EPYC", &[100.0, 102.0]));
        assert_eq!(
            measure(&short, CalibratedUnit::Run, 1, 7),
            Err(CalibrationError::NoTest {
                unit: "run",
                pairs: 1
            })
        );
    }

    #[test]
    fn runs_on_two_machines_are_no_calibration() {
        let mut id = identifier("calibration", "EPYC", &[100.0, 102.0, 101.0, 99.0]);
        id.runs[3].info.snapshot.cpu_model = "Xeon".into();
        let err = measure(&set(id), CalibratedUnit::Run, 2, 7).unwrap_err();
        assert!(
            matches!(err, CalibrationError::MixedHardware { .. }),
            "{err}"
        );
    }

    /// The newest calibration of the sides' hardware and unit is used;
    /// one of other hardware or of boots is named in a note, not used.
    #[test]
    fn the_prior_is_of_the_same_hardware_and_unit() {
        let data = set(identifier(
            "calibration",
            "EPYC",
            &[100.0, 102.0, 101.0, 99.0],
        ));
        let runs = measure(&data, CalibratedUnit::Run, 2, 7).unwrap();
        let a = identifier("a", "EPYC", &[100.0]);
        let b = identifier("b", "EPYC", &[100.0]);
        let used = Prior::choose(std::slice::from_ref(&runs), &a, &b, UnitKind::Run);
        assert_eq!(used.note, None);
        let drift = used.drift(&key());
        assert_eq!(drift.source, DriftSource::Calibrated { pairs: 2, at_ms: 7 });
        assert_eq!(used.drift(&TestKey::new("other")), DEFAULT_DRIFT);

        let boots = Prior::choose(std::slice::from_ref(&runs), &a, &b, UnitKind::Boot);
        assert_eq!(boots.drift(&key()), DEFAULT_DRIFT);
        assert!(boots.note.unwrap().contains("calibration is of runs"));

        let xeon = identifier("x", "Xeon", &[100.0]);
        let xeon2 = identifier("y", "Xeon", &[100.0]);
        let other = Prior::choose(std::slice::from_ref(&runs), &xeon, &xeon2, UnitKind::Run);
        assert_eq!(other.drift(&key()), DEFAULT_DRIFT);
        assert!(other.note.unwrap().contains("other hardware"));

        let mixed = Prior::choose(std::slice::from_ref(&runs), &a, &xeon, UnitKind::Run);
        assert_eq!(mixed.drift(&key()), DEFAULT_DRIFT);
        assert!(mixed.note.unwrap().contains("2 different machines"));
        // Nothing calibrated: the default, silently.
        let none = Prior::choose(&[], &a, &b, UnitKind::Run);
        assert_eq!((none.drift(&key()), none.note), (DEFAULT_DRIFT, None));
    }
}
