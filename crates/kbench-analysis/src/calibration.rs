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
