//! `--until-decided`: after the planned boots, the comparison's own plan
//! (units per side that would decide each inconclusive metric, from the
//! levelled analysis of boots) says how many more rounds of boots to add,
//! up to the cap.

use crate::error::{CampaignError, Result};
use kbench_analysis::comparison::{self, CompareRequest};
use kbench_analysis::thresholds::Thresholds;
use kbench_model::campaign::Campaign;
use kbench_model::is_result_metric;
use kbench_stats::compare::Verdict;
use kbench_store::Database;

/// Rounds of boots to add, and why (for the log); 0 when every metric is
/// decided, when no plan reaches it, or at the cap.
pub fn more_rounds(store: &mut dyn Database, campaign: &Campaign) -> Result<(u32, String)> {
    let Some(cap) = campaign.until_decided else {
        return Ok((0, String::new()));
    };
    let data = store.load(&campaign.name)?;
    let request = CompareRequest {
        baseline: Some(campaign.kernels[0].name.clone()),
        identifiers: Vec::new(),
        threshold: Thresholds::default(),
        metric_filter: None,
        calibrations: store.calibrations()?,
    };
    let report = comparison::build(&data, &request)
        .map_err(|e| CampaignError::Invalid(format!("comparing the campaign's boots: {e}")))?;
    let mut wanted = 0usize;
    let mut undecided = Vec::new();
    for metric in report
        .metrics
        .iter()
        .filter(|m| is_result_metric(&m.key.metric))
    {
        for result in &metric.results {
            let Some(comparison) = &result.comparison else {
                continue;
            };
            if comparison.verdict != Verdict::Inconclusive {
                continue;
            }
            undecided.push(metric.test.clone());
            if let Some(units) = comparison.plan.and_then(|plan| plan.units_per_side) {
                wanted = wanted.max(units);
            }
        }
    }
    let done = (0..campaign.kernels.len())
        .map(|k| campaign.done_of(k))
        .min()
        .unwrap_or(0);
    let target = wanted.min(cap as usize);
    let more = target.saturating_sub(done) as u32;
    let why = match (undecided.is_empty(), more) {
        (true, _) => "every metric is decided".to_string(),
        (false, 0) if wanted > cap as usize => format!(
            "{} still inconclusive; deciding would take {wanted} boots per kernel, past the cap of {cap}",
            undecided.join(", ")
        ),
        (false, 0) => format!(
            "{} still inconclusive, and no number of boots within reach decides it",
            undecided.join(", ")
        ),
        (false, more) => format!(
            "{} inconclusive after {done} boots per kernel; the analysis plans {wanted}: adding {more} per kernel",
            undecided.join(", ")
        ),
    };
    Ok((more, why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::campaign;
    use kbench_model::campaign::BootStatus;
    use kbench_model::results::{RunInfo, RunStatus};
    use kbench_model::{Direction, Sample, SystemSnapshot, TestKey, TestSpec};
    use kbench_store::{RunSink, SqliteStore};

    /// Kernels A and B, `boots` boots each, 3 rounds of 8 samples a boot:
    /// each boot's level wanders by ±`wander` around A's 100 ns or B's
    /// `100 * ratio`, deterministically, the two kernels' boots of a pair
    /// in opposite directions.
    fn measured(store: &mut SqliteStore, boots: usize, ratio: f64, wander: f64) {
        let spec = TestSpec {
            key: TestKey::new("syscall-null"),
            unit: "ns".into(),
            direction: Direction::Lower,
        };
        let mut at_ms = 1_000_000;
        for boot in 0..boots {
            for (side, (kernel, level)) in
                [("A", 100.0), ("B", 100.0 * ratio)].into_iter().enumerate()
            {
                let shift = match (boot + side) % 2 {
                    0 => 1.0 + wander,
                    _ => 1.0 - wander,
                };
                for round in 0..3u32 {
                    let info = RunInfo {
                        snapshot: SystemSnapshot {
                            boot_id: format!("{kernel}-{boot}"),
                            kernel_release: kernel.into(),
                            ..SystemSnapshot::default()
                        },
                        pid: 100 + boot as u32,
                        started_at_ms: at_ms,
                        ..RunInfo::default()
                    };
                    let run = store.begin_run("c", kernel, &info).unwrap();
                    let test = store.test_id("c", &spec).unwrap();
                    for i in 0..8 {
                        at_ms += 10;
                        let jitter = 1.0 + 0.002 * f64::from((i * 7 + round * 3) % 5) - 0.004;
                        let sample = Sample {
                            value: level * shift * jitter,
                            iterations: 1000,
                            at_ms,
                            round,
                        };
                        store.add_sample(run, test, &sample).unwrap();
                    }
                    store.end_run(run, RunStatus::Complete, None).unwrap();
                }
            }
        }
    }

    fn planned(boots: usize, until_decided: Option<u32>) -> kbench_model::campaign::Campaign {
        let mut c = campaign(&[0, 1].repeat(boots));
        for boot in &mut c.boots {
            boot.status = BootStatus::Done;
        }
        c.until_decided = until_decided;
        c
    }

    #[test]
    fn an_inconclusive_change_adds_boots_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        // 2 % apart, boots wandering by 3 %: two boots each cannot tell.
        measured(&mut store, 2, 1.02, 0.03);
        let (more, why) = more_rounds(&mut store, &planned(2, Some(6))).unwrap();
        assert_eq!(more, 4, "{why}");
        assert!(
            why.contains("syscall-null inconclusive after 2 boots per kernel"),
            "{why}"
        );
        let (none, why) = more_rounds(&mut store, &planned(2, None)).unwrap();
        assert_eq!(none, 0, "{why}");
    }

    #[test]
    fn a_decided_comparison_adds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        measured(&mut store, 3, 1.5, 0.005);
        let (more, why) = more_rounds(&mut store, &planned(3, Some(12))).unwrap();
        assert_eq!((more, why.as_str()), (0, "every metric is decided"));
    }
}
