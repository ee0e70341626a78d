//! What every write path checks, once: `kbench run`'s own samples, an
//! import, a push, a live upload and a host's calibration all go through
//! the store's engine, which applies these rules before it writes (and
//! `exchange` applies the same ones to a file, only to say where in it a
//! value is wrong). A sample, run or test that passes here can be
//! exported, imported back and compared.
//!
//! Each check returns what is wrong as text, without the place: the caller
//! knows the place (a JSON path, a run, a test) and adds it.

use kbench_model::{Calibration, Sample, TestSpec};
use std::collections::HashSet;

/// A sample: a positive finite value (times, rates and sizes are > 0, and
/// ratios are differences of logs), at least one iteration, a time at or
/// after the epoch.
pub fn sample(sample: &Sample) -> Result<(), String> {
    if !sample.value.is_finite() || sample.value <= 0.0 {
        return Err(format!(
            "value {} is not a positive finite number (times, rates and sizes are > 0)",
            sample.value
        ));
    }
    if sample.iterations == 0 {
        return Err("iterations is 0; a sample times at least one iteration".to_string());
    }
    if sample.at_ms < 0 {
        return Err(format!("at_ms {} is a time before 1970", sample.at_ms));
    }
    Ok(())
}

/// A run's start and end: the start at or after the epoch, the end (once
/// ended) not before the start.
pub fn run_times(started_at_ms: i64, ended_at_ms: Option<i64>) -> Result<(), String> {
    if started_at_ms < 0 {
        return Err(format!("the run starts at {started_at_ms} ms, before 1970"));
    }
    if let Some(ended) = ended_at_ms.filter(|&ended| ended < started_at_ms) {
        return Err(format!(
            "the run ends at {ended} ms, before it starts ({started_at_ms} ms)"
        ));
    }
    Ok(())
}

/// The steal time a run measured: a percentage, when known.
pub fn steal_percent(steal: Option<f64>) -> Result<(), String> {
    match steal {
        Some(steal) if !(steal.is_finite() && (0.0..=100.0).contains(&steal)) => Err(format!(
            "steal_percent {steal} is not a percentage from 0 to 100"
        )),
        _ => Ok(()),
    }
}

/// A test: its name and unit as every part of kbench takes them
/// ([`kbench_model::check_test_spec`]: characters that read back, at most
/// 128 characters of name, a short unit).
pub fn test_spec(spec: &TestSpec) -> Result<(), String> {
    kbench_model::check_test_spec(spec)
}

/// A host's calibration: a CPU model to key it by, its texts one line each
/// ([`kbench_model::validate_text`]), a time at or after the epoch, at
/// least two pairs of units, and at least one test, each once, named as
/// every stored test is ([`kbench_model::TestKey::check`]), with a finite
/// SD >= 0 and degrees of freedom above 0. What is wrong names the test.
pub fn calibration(calibration: &Calibration) -> Result<(), String> {
    let hardware = &calibration.hardware;
    if hardware.cpu_model.trim().is_empty() {
        return Err(
            "the CPU model is empty; a calibration is found by the hardware it names, \
             so give the model /proc/cpuinfo reports"
                .to_string(),
        );
    }
    for (what, text) in [
        ("CPU model", &hardware.cpu_model),
        ("machine id", &hardware.machine_id),
        ("kernel release", &calibration.kernel_release),
    ] {
        kbench_model::validate_text(what, text, false)?;
    }
    if calibration.at_ms < 0 {
        return Err(format!("at_ms {} is a time before 1970", calibration.at_ms));
    }
    if calibration.pairs < 2 {
        return Err(format!(
            "it measured {} pair(s) of units; a drift needs at least 2: calibrate with more pairs",
            calibration.pairs
        ));
    }
    if calibration.tests.is_empty() {
        return Err("it has no test; a calibration gives at least one test's drift".to_string());
    }
    let mut seen = HashSet::new();
    for drift in &calibration.tests {
        drift.test.check()?;
        let test = &drift.test;
        if !seen.insert(test) {
            return Err(format!(
                "test {test} is given twice; give each test's drift once"
            ));
        }
        if !(drift.sd.is_finite() && drift.sd >= 0.0) {
            return Err(format!(
                "the SD of test {test} is {}; an SD on logs is a finite number >= 0 \
                 (leave the test out, or calibrate it again)",
                drift.sd
            ));
        }
        if !(drift.df.is_finite() && drift.df > 0.0) {
            return Err(format!(
                "the degrees of freedom of test {test} are {}; they are the pairs measured \
                 less one, a finite number above 0",
                drift.df
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::{CalibratedUnit, Direction, Hardware, TestDrift, TestKey};

    fn at(value: f64, iterations: u64, at_ms: i64) -> Sample {
        Sample {
            value,
            iterations,
            at_ms,
            round: 0,
        }
    }

    #[test]
    fn samples_must_be_positive_finite_timed_and_counted() {
        assert!(sample(&at(1.5, 1, 0)).is_ok());
        for bad in [
            at(-5.0, 1, 0),
            at(0.0, 1, 0),
            at(-1e308, 1, 0),
            at(f64::NAN, 1, 0),
            at(f64::INFINITY, 1, 0),
            at(1.0, 0, 0),
            at(1.0, 1, -7),
        ] {
            assert!(sample(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn runs_end_after_they_start_and_steal_is_a_percentage() {
        assert!(run_times(10, Some(10)).is_ok());
        assert!(run_times(10, None).is_ok());
        assert!(
            run_times(10, Some(9))
                .unwrap_err()
                .contains("before it starts")
        );
        assert!(run_times(-1, None).is_err());
        assert!(steal_percent(Some(3.5)).is_ok() && steal_percent(None).is_ok());
        assert!(steal_percent(Some(-1.0)).is_err() && steal_percent(Some(f64::NAN)).is_err());
    }

    #[test]
    fn test_names_are_bounded_and_storable() {
        let spec = |name: &str, unit: &str| TestSpec {
            key: TestKey::parse(name).unwrap(),
            unit: unit.to_string(),
            direction: Direction::Lower,
        };
        assert!(test_spec(&spec("pipe-lat[placement=same]", "us")).is_ok());
        assert!(test_spec(&spec("pipe-lat", " ")).is_err());
        let long = "b".repeat(129);
        assert!(
            test_spec(&spec(&long, "us"))
                .unwrap_err()
                .contains("limit is 128")
        );
        let mut key = TestKey::new("b");
        key.options.insert("cpus".into(), "0,1".into());
        let stored = TestSpec {
            key,
            unit: "us".into(),
            direction: Direction::Lower,
        };
        assert!(test_spec(&stored).is_err());
    }

    fn calibrated(tests: &[(&str, f64, f64)]) -> Calibration {
        Calibration {
            hardware: Hardware {
                cpu_model: "AMD EPYC 7B13".into(),
                memory_gib: 24,
                machine_id: "5e1f".into(),
            },
            unit: CalibratedUnit::Run,
            at_ms: 1_700_000_000_000,
            pairs: 6,
            kernel_release: "6.12.0".into(),
            tests: tests
                .iter()
                .map(|&(test, sd, df)| TestDrift {
                    test: TestKey::parse(test).unwrap(),
                    sd,
                    df,
                })
                .collect(),
        }
    }

    #[test]
    fn calibrations_need_hardware_pairs_and_sound_drifts() {
        let good = calibrated(&[("a", 0.03, 5.0), ("b[x=1]:lat", 0.0, 5.0)]);
        assert_eq!(calibration(&good), Ok(()));
        let with = |change: fn(&mut Calibration)| {
            let mut c = good.clone();
            change(&mut c);
            calibration(&c).unwrap_err()
        };
        assert!(with(|c| c.hardware.cpu_model = " ".into()).contains("CPU model is empty"));
        assert!(with(|c| c.kernel_release = "6.1\u{1b}[2J".into()).contains("kernel release"));
        assert!(with(|c| c.at_ms = -1).contains("before 1970"));
        assert!(with(|c| c.pairs = 1).contains("at least 2"));
        assert!(with(|c| c.tests.clear()).contains("no test"));
        assert!(with(|c| c.tests[1].test = c.tests[0].test.clone()).contains("given twice"));
        assert!(with(|c| c.tests[1].test.metric = "a:b".into()).contains("read back"));
        for sd in [f64::NAN, f64::INFINITY, -0.01] {
            let mut c = good.clone();
            c.tests[1].sd = sd;
            let err = calibration(&c).unwrap_err();
            assert!(err.contains("the SD of test b[x=1]:lat"), "{err}");
        }
        for df in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let mut c = good.clone();
            c.tests[0].df = df;
            let err = calibration(&c).unwrap_err();
            assert!(err.contains("degrees of freedom of test a"), "{err}");
        }
    }
}
