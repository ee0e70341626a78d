//! What every write path checks, once: `kbench run`'s own samples, an
//! import, a push and a live upload all go through the store's engine,
//! which applies these rules before it writes (and `exchange` applies the
//! same ones to a file, only to say where in it a value is wrong). A
//! sample, run or test that passes here can be exported, imported back
//! and compared.
//!
//! Each check returns what is wrong as text, without the place: the caller
//! knows the place (a JSON path, a run, a test) and adds it.

use kbench_model::{Sample, TestKey, TestSpec};

/// The longest test name (`bench[k=v,...]:metric`), in characters.
pub const MAX_TEST_NAME_CHARS: usize = 128;

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

/// A test: a name of at most [`MAX_TEST_NAME_CHARS`] with options the
/// stored form `k=v,k=v` can keep, and a unit.
pub fn test_spec(spec: &TestSpec) -> Result<(), String> {
    test_key(&spec.key)?;
    if spec.unit.trim().is_empty() {
        return Err(format!("test {} has an empty unit", spec.key));
    }
    Ok(())
}

/// A test's key: its name's length and its options.
pub fn test_key(key: &TestKey) -> Result<(), String> {
    let name = key.to_string();
    let chars = name.chars().count();
    if chars > MAX_TEST_NAME_CHARS {
        let start: String = name.chars().take(40).collect();
        return Err(format!(
            "the test name {start:?}... is {chars} characters long; the limit is \
             {MAX_TEST_NAME_CHARS}"
        ));
    }
    for (k, v) in &key.options {
        if k.contains([',', '=']) || v.contains(',') {
            return Err(format!(
                "option {k:?}={v:?} of benchmark {} holds ',' or '=' where the stored form \
                 k=v,k=v cannot keep it; rename the option or its value",
                key.benchmark
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kbench_model::Direction;

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
        assert!(
            test_spec(&spec("pipe-lat", " "))
                .unwrap_err()
                .contains("empty unit")
        );
        let long = "b".repeat(MAX_TEST_NAME_CHARS + 1);
        assert!(
            test_spec(&spec(&long, "us"))
                .unwrap_err()
                .contains("limit is 128")
        );
        let mut key = TestKey::new("b");
        key.options.insert("cpus".into(), "0,1".into());
        assert!(test_key(&key).is_err());
    }
}
